//! Integer and floating-point arithmetic, bit manipulation and the fast approximate functions.
//!
//! Ops of this family run on every rute target, except bf16 `add/sub/mul` and the bf16
//! approximations, which the PTX ISA added with sm_90 (they need [`Target::Sm90a`] or later).

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// A two-input operation `dst = a op b` of type `ty` on both inputs and the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `mul.lo` on integers (the low half, wrapping), `mul` on floats.
    Mul,
    /// `div`: integer division truncating toward zero; IEEE `div.rn` on f32/f64.
    Div,
    /// `rem`: integer remainder with the sign of `a` (Rust's `%`).
    Rem,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `and` (also on predicates)
    And,
    /// `or` (also on predicates)
    Or,
    /// `xor` (also on predicates)
    Xor,
    /// `shl`: shift left by `b` (a u32), zero fill; shifts of the width or more give 0.
    Shl,
    /// `shr`: arithmetic on signed types, logical on unsigned and bits.
    Shr,
}

impl BinOp {
    /// Every op, in declaration order.
    pub const ALL: [BinOp; 12] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Min,
        BinOp::Max,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
    ];

    /// The PTX opcode.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Shl => "shl",
            BinOp::Shr => "shr",
        }
    }
}

/// A one-input operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `neg` (signed ints and floats)
    Neg,
    /// `abs` (signed ints and floats)
    Abs,
    /// `not` (bits, ints, predicates)
    Not,
    /// `popc`: number of set bits; the result is u32.
    Popc,
    /// `clz`: leading zeros; the result is u32.
    Clz,
    /// `brev`: bit reverse.
    Brev,
}

impl UnOp {
    /// Every op, in declaration order.
    pub const ALL: [UnOp; 6] = [
        UnOp::Neg,
        UnOp::Abs,
        UnOp::Not,
        UnOp::Popc,
        UnOp::Clz,
        UnOp::Brev,
    ];

    /// The PTX opcode.
    pub fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "neg",
            UnOp::Abs => "abs",
            UnOp::Not => "not",
            UnOp::Popc => "popc",
            UnOp::Clz => "clz",
            UnOp::Brev => "brev",
        }
    }
}

/// Hardware approximations (`.approx`), f32 unless stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApproxOp {
    /// `ex2.approx`: 2^x (also f16/f16x2/bf16/bf16x2).
    Ex2,
    /// `lg2.approx`: log2 x.
    Lg2,
    /// `rcp.approx`: 1/x.
    Rcp,
    /// `sqrt.approx`
    Sqrt,
    /// `rsqrt.approx`: 1/sqrt x.
    Rsqrt,
    /// `sin.approx`
    Sin,
    /// `cos.approx`
    Cos,
    /// `tanh.approx` (f32, f16, f16x2, bf16, bf16x2).
    Tanh,
}

impl ApproxOp {
    /// Every op, in declaration order.
    pub const ALL: [ApproxOp; 8] = [
        ApproxOp::Ex2,
        ApproxOp::Lg2,
        ApproxOp::Rcp,
        ApproxOp::Sqrt,
        ApproxOp::Rsqrt,
        ApproxOp::Sin,
        ApproxOp::Cos,
        ApproxOp::Tanh,
    ];

    /// The PTX opcode.
    pub fn name(self) -> &'static str {
        match self {
            ApproxOp::Ex2 => "ex2",
            ApproxOp::Lg2 => "lg2",
            ApproxOp::Rcp => "rcp",
            ApproxOp::Sqrt => "sqrt",
            ApproxOp::Rsqrt => "rsqrt",
            ApproxOp::Sin => "sin",
            ApproxOp::Cos => "cos",
            ApproxOp::Tanh => "tanh",
        }
    }
}

/// What an `.approx` instruction does with subnormal numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subnormals {
    /// Kept: inputs and results as IEEE 754 has them (the PTX forms without `.ftz`).
    Kept,
    /// Flushed to zero of the same sign, inputs and results (`.ftz`, f32 only; `tanh.approx` has
    /// no such form): on the GPU one function-unit instruction, where the kept form adds a few
    /// to scale subnormals in and out.
    FlushedToZero,
}

/// Correctly rounded one-input IEEE operations (the `.rn`/`.rz`/`.rm`/`.rp` forms), f32 and f64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundedOp {
    /// `sqrt.rnd`: the square root of `a`, rounded once in mode `rnd` as IEEE 754 specifies:
    /// `sqrt(+-0) = +-0`, `sqrt(+inf) = +inf`, `sqrt(x < 0) = NaN`, subnormal inputs and results
    /// kept (no flush to zero).
    Sqrt,
    /// `rcp.rnd`: `1 / a` rounded once in mode `rnd` (the same result as `div.rnd 1, a`):
    /// `1/+-0 = +-inf`, `1/+-inf = +-0`, subnormals kept.
    Rcp,
}

impl RoundedOp {
    /// Every op, in declaration order.
    pub const ALL: [RoundedOp; 2] = [RoundedOp::Sqrt, RoundedOp::Rcp];

    /// The PTX opcode.
    pub fn name(self) -> &'static str {
        match self {
            RoundedOp::Sqrt => "sqrt",
            RoundedOp::Rcp => "rcp",
        }
    }
}

/// Which part of a double-width integer product an op keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MulMode {
    /// `.lo`: the low `ty` bits.
    Lo,
    /// `.hi`: the high `ty` bits.
    Hi,
    /// `.wide`: the whole product, twice as wide as `ty` (16->32 or 32->64 bits).
    Wide,
}

/// Floating-point rounding modes of `fma` and IEEE arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatRound {
    /// to nearest even
    Rn,
    /// toward zero
    Rz,
    /// toward -inf
    Rm,
    /// toward +inf
    Rp,
}

impl FloatRound {
    /// `rn`, `rz`, `rm` or `rp`.
    pub fn name(self) -> &'static str {
        match self {
            FloatRound::Rn => "rn",
            FloatRound::Rz => "rz",
            FloatRound::Rm => "rm",
            FloatRound::Rp => "rp",
        }
    }
}

/// Arithmetic ops. `ty` is the type of the inputs; the result has the same type except where a
/// variant says otherwise.
#[derive(Debug, Clone, PartialEq)]
pub enum Arith {
    /// `dst = a op b`.
    Bin {
        /// The operation.
        op: BinOp,
        /// Input and result type (shift amounts are u32 whatever `ty` is).
        ty: Type,
        /// Result.
        dst: Reg,
        /// Left input.
        a: Operand,
        /// Right input.
        b: Operand,
    },
    /// `mul.hi` / `mul.wide` on integers (`mul.lo` is [`BinOp::Mul`]). With `Wide`, `dst` is
    /// twice as wide as `ty`.
    MulPart {
        /// `Hi` or `Wide` (`Lo` is accepted and means `BinOp::Mul`).
        mode: MulMode,
        /// Input type.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Left input.
        a: Operand,
        /// Right input.
        b: Operand,
    },
    /// Integer multiply-add `dst = (a * b).mode + c` (`mad.lo`, `mad.hi`, `mad.wide`).
    Mad {
        /// Part of the product kept; with `Wide`, `c` and `dst` are twice as wide as `ty`.
        mode: MulMode,
        /// Input type of `a` and `b`.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Multiplicand.
        a: Operand,
        /// Multiplier.
        b: Operand,
        /// Addend.
        c: Operand,
    },
    /// Fused multiply-add with one rounding, `dst = a * b + c` (`fma.rn.f32`, `fma.rn.f16x2`...).
    Fma {
        /// Rounding mode.
        rnd: FloatRound,
        /// Float type (f16, f16x2, bf16, bf16x2, f32, f64).
        ty: Type,
        /// Result.
        dst: Reg,
        /// Multiplicand.
        a: Operand,
        /// Multiplier.
        b: Operand,
        /// Addend.
        c: Operand,
    },
    /// `dst = op a`. `Popc` and `Clz` write a u32 whatever `ty` is.
    Unary {
        /// The operation.
        op: UnOp,
        /// Input type.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Input.
        a: Operand,
    },
    /// `op.approx{.ftz}.ty dst, a` (`.ftz` where PTX has no other form, for `rcp.approx.f64` and
    /// `ex2.approx` of bf16, is codegen's choice whatever `subnormals` says).
    Approx {
        /// The function.
        op: ApproxOp,
        /// Type.
        ty: Type,
        /// Whether subnormals are flushed.
        subnormals: Subnormals,
        /// Result.
        dst: Reg,
        /// Input.
        a: Operand,
    },
    /// `op.rnd.ty dst, a` (`sqrt.rn.f32`, `rcp.rn.f64`, ...): the IEEE 754 result of `op` on
    /// `a` rounded once in mode `rnd`, on f32 or f64, subnormals kept (PTX's forms without
    /// `.ftz`). Available on every target.
    Rounded {
        /// The function.
        op: RoundedOp,
        /// Rounding mode.
        rnd: FloatRound,
        /// f32 or f64.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Input.
        a: Operand,
    },
    /// `bfe.ty dst, a, pos, len`: extract `len` bits starting at `pos` (sign-extended for signed).
    Bfe {
        /// u32, s32, u64 or s64.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Source.
        a: Operand,
        /// Start bit (u32).
        pos: Operand,
        /// Bit count (u32).
        len: Operand,
    },
    /// `bfi.ty dst, f, b, pos, len`: `b` with `len` bits at `pos` replaced by `f`'s low bits.
    Bfi {
        /// b32 or b64.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Bits to insert.
        f: Operand,
        /// Base value.
        b: Operand,
        /// Start bit (u32).
        pos: Operand,
        /// Bit count (u32).
        len: Operand,
    },
}

impl OpInfo for Arith {
    fn mnemonic(&self) -> &'static str {
        match self {
            Arith::Bin { op, .. } => op.name(),
            Arith::MulPart {
                mode: MulMode::Wide,
                ..
            } => "mul.wide",
            Arith::MulPart {
                mode: MulMode::Hi, ..
            } => "mul.hi",
            Arith::MulPart { .. } => "mul.lo",
            Arith::Mad { .. } => "mad",
            Arith::Fma { .. } => "fma",
            Arith::Unary { op, .. } => op.name(),
            Arith::Approx { op, .. } => op.name(),
            Arith::Rounded { op, .. } => op.name(),
            Arith::Bfe { .. } => "bfe",
            Arith::Bfi { .. } => "bfi",
        }
    }

    fn requires(&self) -> Requirement {
        // bf16 add/sub/mul and the bf16 approximations arrived with sm_90; bf16 fma, min, max,
        // neg and abs exist on sm_80 (checked with ptxas).
        let bf16_sm90 = match self {
            Arith::Bin { op, ty, .. } => {
                ty.is_bf16() && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul)
            }
            Arith::Approx { ty, .. } => ty.is_bf16(),
            _ => false,
        };
        if bf16_sm90 {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::ANY
        }
    }

    fn ptx_version(&self) -> PtxVersion {
        match self {
            Arith::Bin { op, ty, .. }
                if ty.is_bf16() && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) =>
            {
                PtxVersion::new(7, 8)
            }
            Arith::Approx {
                op: ApproxOp::Tanh, ..
            } => PtxVersion::new(7, 0),
            Arith::Approx { ty, .. } if ty.is_bf16() => PtxVersion::new(7, 8),
            _ if self.ty().is_bf16() => PtxVersion::new(7, 0),
            _ => PtxVersion::new(6, 0),
        }
    }

    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let ty = self.ty();
        if !ty.is_register_type() {
            return Err(IrError::bad(
                m,
                format!("type {ty} cannot live in a register"),
            ));
        }
        match self {
            Arith::Bin { op, dst, .. } => {
                let float_ok = matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max
                );
                let logic = matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
                if ty.is_float() && !float_ok {
                    return Err(IrError::bad(m, format!("not defined on {ty}")));
                }
                if ty == Type::Pred && !logic {
                    return Err(IrError::bad(m, "predicates take only and/or/xor"));
                }
                if *op == BinOp::Div && ty.is_float() && !matches!(ty, Type::F32 | Type::F64) {
                    return Err(IrError::bad(
                        m,
                        format!("IEEE division is f32/f64 only, not {ty}"),
                    ));
                }
                if dst.ty.bits() != ty.bits() {
                    return Err(IrError::bad(m, format!("result {} is not {ty}", dst.ty)));
                }
            }
            Arith::MulPart { mode, dst, .. } | Arith::Mad { mode, dst, .. } => {
                if !ty.is_int() {
                    return Err(IrError::bad(m, format!("integer op on {ty}")));
                }
                let want = if *mode == MulMode::Wide {
                    ty.bits() * 2
                } else {
                    ty.bits()
                };
                if *mode == MulMode::Wide && ty.bits() == 64 {
                    return Err(IrError::bad(m, "mul.wide of 64-bit inputs does not exist"));
                }
                if dst.ty.bits() != want {
                    return Err(IrError::bad(m, format!("result must be {want} bits")));
                }
            }
            Arith::Fma { .. } => {
                if !ty.is_float() {
                    return Err(IrError::bad(m, format!("fma is float only, not {ty}")));
                }
            }
            Arith::Unary { op, .. } => {
                let ok = match op {
                    UnOp::Neg | UnOp::Abs => ty.is_signed() || ty.is_float(),
                    UnOp::Not => !ty.is_float(),
                    UnOp::Popc | UnOp::Clz | UnOp::Brev => {
                        !ty.is_float() && ty != Type::Pred && ty.bits() >= 32
                    }
                };
                if !ok {
                    return Err(IrError::bad(m, format!("not defined on {ty}")));
                }
            }
            Arith::Approx { op, subnormals, .. } => {
                if *subnormals == Subnormals::FlushedToZero
                    && (ty != Type::F32 || *op == ApproxOp::Tanh)
                {
                    return Err(IrError::bad(
                        m,
                        format!("{}.approx has no .ftz form on {ty}", op.name()),
                    ));
                }
                let ok = match op {
                    ApproxOp::Ex2 | ApproxOp::Tanh => {
                        matches!(
                            ty,
                            Type::F32 | Type::F16 | Type::F16x2 | Type::BF16 | Type::BF16x2
                        )
                    }
                    ApproxOp::Rcp | ApproxOp::Sqrt | ApproxOp::Rsqrt => {
                        matches!(ty, Type::F32 | Type::F64)
                    }
                    _ => ty == Type::F32,
                };
                if !ok {
                    return Err(IrError::bad(m, format!("no .approx form on {ty}")));
                }
            }
            Arith::Rounded { .. } => {
                if !matches!(ty, Type::F32 | Type::F64) {
                    return Err(IrError::bad(
                        m,
                        format!("the rounded forms are f32/f64 only, not {ty}"),
                    ));
                }
            }
            Arith::Bfe { .. } => {
                if !(ty.is_int() && ty.bits() >= 32) {
                    return Err(IrError::bad(
                        m,
                        format!("bfe takes u32/s32/u64/s64, not {ty}"),
                    ));
                }
            }
            Arith::Bfi { .. } => {
                if !matches!(ty, Type::B32 | Type::B64) {
                    return Err(IrError::bad(m, format!("bfi takes b32/b64, not {ty}")));
                }
            }
        }
        Ok(())
    }
}

impl Arith {
    /// The op's type (of its inputs).
    pub fn ty(&self) -> Type {
        match self {
            Arith::Bin { ty, .. }
            | Arith::MulPart { ty, .. }
            | Arith::Mad { ty, .. }
            | Arith::Fma { ty, .. }
            | Arith::Unary { ty, .. }
            | Arith::Approx { ty, .. }
            | Arith::Rounded { ty, .. }
            | Arith::Bfe { ty, .. }
            | Arith::Bfi { ty, .. } => *ty,
        }
    }
}
