//! Comparisons (`setp`) and selects (`selp`). Available on every target.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// A comparison. The ordered float forms are false when either side is NaN; the `U` forms
/// (unordered) are true then. Integer comparisons are signed or unsigned by the op's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `eq`
    Eq,
    /// `ne` (ordered on floats: NaN != x is false; Rust's `!=` is `Neu`)
    Ne,
    /// `lt`
    Lt,
    /// `le`
    Le,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `equ`: equal or unordered (floats)
    Equ,
    /// `neu`: not equal or unordered (floats)
    Neu,
    /// `ltu` (floats)
    Ltu,
    /// `leu` (floats)
    Leu,
    /// `gtu` (floats)
    Gtu,
    /// `geu` (floats)
    Geu,
    /// `num`: neither is NaN (floats)
    Num,
    /// `nan`: either is NaN (floats)
    Nan,
}

impl CmpOp {
    /// Every op, in declaration order.
    pub const ALL: [CmpOp; 14] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];

    /// The PTX comparison name.
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Equ => "equ",
            CmpOp::Neu => "neu",
            CmpOp::Ltu => "ltu",
            CmpOp::Leu => "leu",
            CmpOp::Gtu => "gtu",
            CmpOp::Geu => "geu",
            CmpOp::Num => "num",
            CmpOp::Nan => "nan",
        }
    }

    /// Whether the comparison exists only for floats.
    pub fn float_only(self) -> bool {
        !matches!(
            self,
            CmpOp::Eq | CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge
        )
    }
}

/// Comparison and select ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Compare {
    /// `setp.cmp.ty dst, a, b`: `dst` (a predicate) is `a cmp b`.
    Setp {
        /// The comparison.
        cmp: CmpOp,
        /// Type of `a` and `b`.
        ty: Type,
        /// Predicate result.
        dst: Reg,
        /// Left.
        a: Operand,
        /// Right.
        b: Operand,
    },
    /// `selp.ty dst, a, b, cond`: `dst = cond ? a : b`.
    Selp {
        /// Type of `a`, `b` and `dst` (16 bits or wider).
        ty: Type,
        /// Result.
        dst: Reg,
        /// Chosen when `cond` holds.
        a: Operand,
        /// Chosen otherwise.
        b: Operand,
        /// Predicate.
        cond: Operand,
    },
}

impl OpInfo for Compare {
    fn mnemonic(&self) -> &'static str {
        match self {
            Compare::Setp { .. } => "setp",
            Compare::Selp { .. } => "selp",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            // setp on bf16 arrived with sm_90.
            Compare::Setp { ty, .. } if ty.is_bf16() => Requirement::at_least(Target::Sm90a),
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Compare::Setp { ty, .. } if ty.is_bf16() => PtxVersion::new(7, 8),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        match self {
            Compare::Setp { cmp, ty, dst, .. } => {
                if dst.ty != Type::Pred {
                    return Err(IrError::bad("setp", "the result must be a predicate"));
                }
                if cmp.float_only() && !ty.is_float() {
                    return Err(IrError::bad(
                        "setp",
                        format!("{} compares floats, not {ty}", cmp.name()),
                    ));
                }
                if *ty == Type::Pred || ty.is_packed() || !ty.is_register_type() {
                    return Err(IrError::bad("setp", format!("cannot compare {ty}")));
                }
                Ok(())
            }
            Compare::Selp { ty, dst, .. } => {
                if *ty == Type::Pred || ty.bits() < 16 || dst.ty.bits() != ty.bits() {
                    return Err(IrError::bad(
                        "selp",
                        format!("cannot select {ty} into {}", dst.ty),
                    ));
                }
                Ok(())
            }
        }
    }
}
