//! Typed device values: [`Var<T>`] is either a host constant (folded on the host) or a register of
//! the kernel under construction.

use std::marker::PhantomData;

use half::{bf16, f16};

use super::context::{self, with};
use super::error::BuildError;
use crate::ir::op::Data;
use crate::ir::Operand;
use crate::ir::{Reg, Type};

/// A host constant of a device type: integers as their bits sign- or zero-extended to `i64`,
/// floats as `f64` (exact for f16, bf16 and f32), packed pairs as their 32 bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Const {
    /// Integers, predicates (0/1) and packed pairs.
    Int(i64),
    /// Scalar floats.
    Float(f64),
}

/// Two f16 in one 32-bit register (`f16x2`); element 0 is the low half.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct F16x2(pub [f16; 2]);

/// Two bf16 in one 32-bit register (`bf16x2`); element 0 is the low half.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BF16x2(pub [bf16; 2]);

/// A Rust type that has a device counterpart: its IR [`Type`] and how its host values become
/// constants. Implemented for `bool` (pred), `i32`, `u32`, `i64`, `u64`, `f32`, `f64`,
/// [`half::f16`], [`half::bf16`], [`F16x2`] and [`BF16x2`].
pub trait DeviceType: Copy + 'static {
    /// The IR type of its registers.
    const TY: Type;
    /// The host value as a constant.
    fn to_const(self) -> Const;
    /// The constant as a host value (`None` for a constant of another shape).
    fn from_const(c: Const) -> Option<Self>;
}

macro_rules! int_device_type {
    ($($t:ty => $ty:ident),*) => {$(
        impl DeviceType for $t {
            const TY: Type = Type::$ty;
            fn to_const(self) -> Const {
                Const::Int(self as i64)
            }
            fn from_const(c: Const) -> Option<Self> {
                match c {
                    Const::Int(i) => Some(i as $t),
                    Const::Float(_) => None,
                }
            }
        }
    )*};
}
int_device_type!(i32 => S32, u32 => U32, i64 => S64, u64 => U64);

impl DeviceType for bool {
    const TY: Type = Type::Pred;
    fn to_const(self) -> Const {
        Const::Int(self as i64)
    }
    fn from_const(c: Const) -> Option<Self> {
        match c {
            Const::Int(i) => Some(i & 1 != 0),
            Const::Float(_) => None,
        }
    }
}

macro_rules! float_device_type {
    ($($t:ty => $ty:ident, $to:expr, $from:expr;)*) => {$(
        impl DeviceType for $t {
            const TY: Type = Type::$ty;
            fn to_const(self) -> Const {
                let f: fn($t) -> f64 = $to;
                Const::Float(f(self))
            }
            fn from_const(c: Const) -> Option<Self> {
                let f: fn(f64) -> $t = $from;
                match c {
                    Const::Float(x) => Some(f(x)),
                    Const::Int(_) => None,
                }
            }
        }
    )*};
}
float_device_type! {
    f32 => F32, |x| x as f64, |x| x as f32;
    f64 => F64, |x| x, |x| x;
    f16 => F16, |x| x.to_f64(), f16::from_f64;
    bf16 => BF16, |x| x.to_f64(), bf16::from_f64;
}

impl DeviceType for F16x2 {
    const TY: Type = Type::F16x2;
    fn to_const(self) -> Const {
        let [lo, hi] = self.0;
        Const::Int((u32::from(lo.to_bits()) | (u32::from(hi.to_bits()) << 16)) as i64)
    }
    fn from_const(c: Const) -> Option<Self> {
        match c {
            Const::Int(i) => Some(F16x2([
                f16::from_bits(i as u16),
                f16::from_bits((i >> 16) as u16),
            ])),
            Const::Float(_) => None,
        }
    }
}

impl DeviceType for BF16x2 {
    const TY: Type = Type::BF16x2;
    fn to_const(self) -> Const {
        let [lo, hi] = self.0;
        Const::Int((u32::from(lo.to_bits()) | (u32::from(hi.to_bits()) << 16)) as i64)
    }
    fn from_const(c: Const) -> Option<Self> {
        match c {
            Const::Int(i) => Some(BF16x2([
                bf16::from_bits(i as u16),
                bf16::from_bits((i >> 16) as u16),
            ])),
            Const::Float(_) => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Repr {
    Const(Const),
    Reg { reg: Reg, kernel: u32 },
}

/// A device value of Rust type `T`: a host constant or a register of the kernel under
/// construction. `Copy`: copying a `Var` copies the *name* of the register, so two copies see
/// later assignments to it; use [`Var::fresh`] for an independent copy (what `let y = x;` means
/// in `#[kernel]`).
///
/// Operators (`+ - * / % & | ^ << >> ! -`) emit instructions, or fold when both sides are
/// constants; comparisons are the methods [`Var::lt`], [`Var::le`], [`Var::gt`], [`Var::ge`],
/// [`Var::eq_`], [`Var::ne_`], which `#[kernel]` and `#[device]` bodies may also spell `<`, `<=`,
/// `>`, `>=`, `==` and `!=` (see [`crate::kernel::operators`]).
pub struct Var<T> {
    pub(crate) repr: Repr,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Var<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Var<T> {}

impl<T> std::fmt::Debug for Var<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.repr {
            Repr::Const(c) => write!(f, "Var(const {c:?})"),
            Repr::Reg { reg, .. } => write!(f, "Var(%{}:{})", reg.id, reg.ty),
        }
    }
}

impl<T: DeviceType> Var<T> {
    pub(crate) fn from_repr(repr: Repr) -> Self {
        Var {
            repr,
            _t: PhantomData,
        }
    }

    /// A host constant.
    pub fn konst(value: T) -> Self {
        Var::from_repr(Repr::Const(value.to_const()))
    }

    /// A new, uninitialized register of the kernel under construction.
    ///
    /// Outside [`crate::kernel::build_kernel`] the result belongs to no kernel, and using it in
    /// one is reported as [`BuildError::ForeignValue`].
    pub fn uninit() -> Self {
        let (reg, kernel) = context::new_reg(T::TY).unwrap_or((
            Reg {
                id: u32::MAX,
                ty: T::TY,
            },
            0,
        ));
        Var::from_repr(Repr::Reg { reg, kernel })
    }

    /// Wraps a register made by hand (for ops emitted with [`crate::kernel::emit`]).
    /// The register must have type `T::TY`; a mismatch is reported at the end of the build.
    pub fn from_reg(reg: Reg) -> Self {
        let kernel = with(|b| {
            if reg.ty != T::TY {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: format!("register of type {} wrapped as a {} value", reg.ty, T::TY),
                });
            }
            b.id
        })
        .unwrap_or(0);
        Var::from_repr(Repr::Reg { reg, kernel })
    }

    /// The host value, when this is a constant.
    pub fn as_const(&self) -> Option<T> {
        match self.repr {
            Repr::Const(c) => T::from_const(c),
            Repr::Reg { .. } => None,
        }
    }

    /// Whether the value is a host constant.
    pub fn is_const(&self) -> bool {
        matches!(self.repr, Repr::Const(_))
    }

    /// The register, when the value is one (no check of its kernel).
    pub fn reg(&self) -> Option<Reg> {
        match self.repr {
            Repr::Reg { reg, .. } => Some(reg),
            Repr::Const(_) => None,
        }
    }

    /// The value as an instruction operand of the kernel under construction. Constants of f16,
    /// bf16 and packed types are first moved into a register (PTX has no immediates of those
    /// types); a register of another kernel is reported as [`BuildError::ForeignValue`].
    pub fn operand(&self) -> Operand {
        match self.repr {
            Repr::Const(c) => match (T::TY, c) {
                (Type::F16 | Type::BF16, Const::Float(x)) => {
                    let bits = if T::TY == Type::F16 {
                        f16::from_f64(x).to_bits()
                    } else {
                        bf16::from_f64(x).to_bits()
                    };
                    Operand::Reg(materialize(T::TY, Operand::Imm(i64::from(bits)), Type::B16))
                }
                (Type::F16x2 | Type::BF16x2, Const::Int(bits)) => {
                    Operand::Reg(materialize(T::TY, Operand::Imm(bits), Type::B32))
                }
                (_, Const::Int(i)) => Operand::Imm(i),
                (_, Const::Float(x)) => Operand::ImmF(x),
            },
            Repr::Reg { reg, kernel } => {
                with(|b| {
                    if b.id != kernel {
                        b.error(|kernel| BuildError::ForeignValue { kernel });
                    }
                });
                Operand::Reg(reg)
            }
        }
    }

    /// The value in a register: constants are moved into a new one.
    pub fn to_reg(&self) -> Reg {
        match self.operand() {
            Operand::Reg(r) => r,
            imm => materialize(T::TY, imm, mov_type(T::TY)),
        }
    }

    /// A copy in a new register, independent of later assignments to `self`. `let y = x;` in
    /// `#[kernel]` means `let y = x.fresh();`.
    pub fn fresh(&self) -> Var<T> {
        let src = self.operand();
        let dst = Var::<T>::uninit();
        if let Some(reg) = dst.reg() {
            context::emit(Data::Mov {
                ty: mov_type(T::TY),
                dst: reg,
                src,
            });
        }
        dst
    }
}

/// `mov.mov_ty dst, src` into a new register of type `ty`.
fn materialize(ty: Type, src: Operand, mov_ty: Type) -> Reg {
    let (reg, _) = context::new_reg(ty).unwrap_or((Reg { id: u32::MAX, ty }, 0));
    context::emit(Data::Mov {
        ty: mov_ty,
        dst: reg,
        src,
    });
    reg
}

/// The type a `mov` of a `ty` register uses: `ty` itself, except raw bits for f16, bf16 and the
/// packed pairs (PTX moves those as `b16`/`b32`).
pub(crate) fn mov_type(ty: Type) -> Type {
    match ty {
        Type::F16 | Type::BF16 | Type::F16x2 | Type::BF16x2 => ty.bits_type(),
        _ => ty,
    }
}

impl<T: DeviceType> From<T> for Var<T> {
    fn from(value: T) -> Self {
        Var::konst(value)
    }
}

/// Values usable where a `Var<T>` is expected: the `Var` itself or a host value of `T`.
pub trait IntoVar<T> {
    /// The device value.
    fn into_var(self) -> Var<T>;
}

impl<T: DeviceType> IntoVar<T> for T {
    fn into_var(self) -> Var<T> {
        Var::konst(self)
    }
}

impl<T: DeviceType> IntoVar<T> for Var<T> {
    fn into_var(self) -> Var<T> {
        self
    }
}
