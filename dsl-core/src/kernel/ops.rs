//! Arithmetic on device values: operator overloading, comparisons, casts and assignment. Every
//! operation folds on the host when its inputs are constants and emits one instruction otherwise.

use std::ops::{
    Add, AddAssign, BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Div, DivAssign,
    Mul, MulAssign, Neg, Not, Rem, RemAssign, Shl, ShlAssign, Shr, ShrAssign, Sub, SubAssign,
};

use half::{bf16, f16};

use super::context::{self, with};
use super::error::BuildError;
use super::fold::{self, FoldError};
use super::value::{mov_type, BF16x2, Const, DeviceType, F16x2, IntoVar, Repr, Var};
use crate::ir::op::{default_round, Arith, BinOp, CmpOp, Compare, Convert, Data, UnOp};
use crate::ir::{Operand, Type};

/// Types with `+ - * min max` on the device.
pub trait Num: DeviceType {}
/// Types with `/` on the device (integers, f32, f64).
pub trait Divisible: Num {}
/// Integer types: `% << >>` and bitwise ops.
pub trait Int: Divisible {}
/// Types with unary `-` (signed integers and floats).
pub trait Signed: Num {}
/// Types with `& | ^ !` (integers and `bool`).
pub trait Logic: DeviceType {}

macro_rules! marks {
    ($tr:ident: $($t:ty),*) => { $(impl $tr for $t {})* };
}
marks!(Num: i32, u32, i64, u64, f32, f64, f16, bf16, F16x2, BF16x2);
marks!(Divisible: i32, u32, i64, u64, f32, f64);
marks!(Int: i32, u32, i64, u64);
marks!(Signed: i32, i64, f32, f64, f16, bf16, F16x2, BF16x2);
marks!(Logic: i32, u32, i64, u64, bool);

/// `a op b`, folded or emitted.
pub(crate) fn binary<T: DeviceType, U: DeviceType>(op: BinOp, a: Var<T>, b: Var<U>) -> Var<T> {
    if let (Repr::Const(x), Repr::Const(y)) = (a.repr, b.repr) {
        match fold::bin(op, T::TY, x, y) {
            Ok(Some(c)) => return Var::from_repr(Repr::Const(c)),
            Err(FoldError::DivisionByZero) => {
                with(|b| b.error(|kernel| BuildError::DivisionByZero { kernel }));
                return a;
            }
            Ok(None) => {}
        }
    }
    let (ao, bo) = (a.operand(), b.operand());
    let dst = Var::<T>::uninit();
    if let Some(reg) = dst.reg() {
        context::emit(Arith::Bin {
            op,
            ty: T::TY,
            dst: reg,
            a: ao,
            b: bo,
        });
    }
    dst
}

pub(crate) fn unary<T: DeviceType>(op: UnOp, a: Var<T>) -> Var<T> {
    if let Repr::Const(x) = a.repr {
        if let Some(c) = fold::unary(op, T::TY, x) {
            return Var::from_repr(Repr::Const(c));
        }
    }
    let ao = a.operand();
    let dst = Var::<T>::uninit();
    if let Some(reg) = dst.reg() {
        context::emit(Arith::Unary {
            op,
            ty: T::TY,
            dst: reg,
            a: ao,
        });
    }
    dst
}

fn compare<T: DeviceType>(cmp: CmpOp, a: Var<T>, b: Var<T>) -> Var<bool> {
    if let (Repr::Const(x), Repr::Const(y)) = (a.repr, b.repr) {
        if let Some(r) = fold::compare(cmp, T::TY, x, y) {
            return Var::konst(r);
        }
    }
    let (ao, bo) = (a.operand(), b.operand());
    let dst = Var::<bool>::uninit();
    if let Some(reg) = dst.reg() {
        context::emit(Compare::Setp {
            cmp,
            ty: T::TY,
            dst: reg,
            a: ao,
            b: bo,
        });
    }
    dst
}

macro_rules! bin_trait {
    ($tr:ident, $m:ident, $atr:ident, $am:ident, $bound:ident, $op:expr) => {
        impl<T: $bound, R: IntoVar<T>> $tr<R> for Var<T> {
            type Output = Var<T>;
            fn $m(self, rhs: R) -> Var<T> {
                binary($op, self, rhs.into_var())
            }
        }
        impl<T: $bound, R: IntoVar<T>> $atr<R> for Var<T> {
            /// Writes the result into this value's register (see [`Var::set`]).
            fn $am(&mut self, rhs: R) {
                let v = binary($op, *self, rhs.into_var());
                self.set(v);
            }
        }
    };
}
bin_trait!(Add, add, AddAssign, add_assign, Num, BinOp::Add);
bin_trait!(Sub, sub, SubAssign, sub_assign, Num, BinOp::Sub);
bin_trait!(Mul, mul, MulAssign, mul_assign, Num, BinOp::Mul);
bin_trait!(Div, div, DivAssign, div_assign, Divisible, BinOp::Div);
bin_trait!(Rem, rem, RemAssign, rem_assign, Int, BinOp::Rem);
bin_trait!(
    BitAnd,
    bitand,
    BitAndAssign,
    bitand_assign,
    Logic,
    BinOp::And
);
bin_trait!(BitOr, bitor, BitOrAssign, bitor_assign, Logic, BinOp::Or);
bin_trait!(
    BitXor,
    bitxor,
    BitXorAssign,
    bitxor_assign,
    Logic,
    BinOp::Xor
);

macro_rules! shift_trait {
    ($tr:ident, $m:ident, $atr:ident, $am:ident, $op:expr) => {
        impl<T: Int, R: IntoVar<u32>> $tr<R> for Var<T> {
            type Output = Var<T>;
            fn $m(self, rhs: R) -> Var<T> {
                binary($op, self, rhs.into_var())
            }
        }
        impl<T: Int, R: IntoVar<u32>> $atr<R> for Var<T> {
            fn $am(&mut self, rhs: R) {
                let v = binary($op, *self, rhs.into_var());
                self.set(v);
            }
        }
    };
}
shift_trait!(Shl, shl, ShlAssign, shl_assign, BinOp::Shl);
shift_trait!(Shr, shr, ShrAssign, shr_assign, BinOp::Shr);

impl<T: Signed> Neg for Var<T> {
    type Output = Var<T>;
    fn neg(self) -> Var<T> {
        unary(UnOp::Neg, self)
    }
}

impl<T: Logic> Not for Var<T> {
    type Output = Var<T>;
    fn not(self) -> Var<T> {
        unary(UnOp::Not, self)
    }
}

// Host value on the left (`1 + v`): one impl per concrete type (coherence forbids a blanket).
macro_rules! host_lhs {
    ($($t:ty),*) => {$(
        host_lhs!(@op $t, Add, add, BinOp::Add);
        host_lhs!(@op $t, Sub, sub, BinOp::Sub);
        host_lhs!(@op $t, Mul, mul, BinOp::Mul);
    )*};
    (@op $t:ty, $tr:ident, $m:ident, $op:expr) => {
        impl $tr<Var<$t>> for $t {
            type Output = Var<$t>;
            fn $m(self, rhs: Var<$t>) -> Var<$t> {
                binary($op, Var::konst(self), rhs)
            }
        }
    };
}
host_lhs!(i32, u32, i64, u64, f32, f64);

macro_rules! host_lhs_div {
    ($($t:ty),*) => {$(
        impl Div<Var<$t>> for $t {
            type Output = Var<$t>;
            fn div(self, rhs: Var<$t>) -> Var<$t> {
                binary(BinOp::Div, Var::konst(self), rhs)
            }
        }
    )*};
}
host_lhs_div!(i32, u32, i64, u64, f32, f64);

macro_rules! host_lhs_int {
    ($($t:ty),*) => {$(
        impl Rem<Var<$t>> for $t {
            type Output = Var<$t>;
            fn rem(self, rhs: Var<$t>) -> Var<$t> {
                binary(BinOp::Rem, Var::konst(self), rhs)
            }
        }
        impl BitAnd<Var<$t>> for $t {
            type Output = Var<$t>;
            fn bitand(self, rhs: Var<$t>) -> Var<$t> {
                binary(BinOp::And, Var::konst(self), rhs)
            }
        }
        impl BitOr<Var<$t>> for $t {
            type Output = Var<$t>;
            fn bitor(self, rhs: Var<$t>) -> Var<$t> {
                binary(BinOp::Or, Var::konst(self), rhs)
            }
        }
        impl BitXor<Var<$t>> for $t {
            type Output = Var<$t>;
            fn bitxor(self, rhs: Var<$t>) -> Var<$t> {
                binary(BinOp::Xor, Var::konst(self), rhs)
            }
        }
    )*};
}
host_lhs_int!(i32, u32, i64, u64);

impl<T: DeviceType> Var<T> {
    /// `self < rhs` (ordered on floats: false when either is NaN, as in Rust).
    pub fn lt(self, rhs: impl IntoVar<T>) -> Var<bool> {
        compare(CmpOp::Lt, self, rhs.into_var())
    }
    /// `self <= rhs`.
    pub fn le(self, rhs: impl IntoVar<T>) -> Var<bool> {
        compare(CmpOp::Le, self, rhs.into_var())
    }
    /// `self > rhs`.
    pub fn gt(self, rhs: impl IntoVar<T>) -> Var<bool> {
        compare(CmpOp::Gt, self, rhs.into_var())
    }
    /// `self >= rhs`.
    pub fn ge(self, rhs: impl IntoVar<T>) -> Var<bool> {
        compare(CmpOp::Ge, self, rhs.into_var())
    }
    /// `self == rhs`.
    pub fn eq_(self, rhs: impl IntoVar<T>) -> Var<bool> {
        compare(CmpOp::Eq, self, rhs.into_var())
    }
    /// `self != rhs` (true when either float is NaN, as in Rust).
    pub fn ne_(self, rhs: impl IntoVar<T>) -> Var<bool> {
        let cmp = if T::TY.is_float() {
            CmpOp::Neu
        } else {
            CmpOp::Ne
        };
        compare(cmp, self, rhs.into_var())
    }

    /// Writes `v` into this value's register (`mov`), so every copy of this `Var` sees it.
    ///
    /// A constant `Var` has no register: outside device control flow it simply becomes `v`;
    /// inside a device `if`/`for`/`while` that would change what earlier reads saw, so it is
    /// reported as [`BuildError::AssignToConstant`] (make the variable with [`Var::fresh`]).
    pub fn set(&mut self, v: impl IntoVar<T>) {
        let v = v.into_var();
        match self.repr {
            Repr::Reg { reg, .. } => {
                let _ = self.operand();
                let src = v.operand();
                context::emit(Data::Mov {
                    ty: mov_type(T::TY),
                    dst: reg,
                    src,
                });
            }
            Repr::Const(_) => {
                let inside = with(|b| {
                    let inside = b.in_device_block();
                    if inside {
                        b.error(|kernel| BuildError::AssignToConstant { kernel });
                    }
                    inside
                })
                .unwrap_or(false);
                if !inside {
                    *self = v;
                }
            }
        }
    }

    /// The same bits read as `U`, a type of the same width (`mov.bN`; no instruction of its
    /// own once ptxas allocates registers): `x.bitcast::<u32>()` is CUDA's `__float_as_uint`,
    /// `Var::<u32>::bitcast::<f32>` its `__uint_as_float`. Folded for constants of the folded
    /// types (integers, f32, f64); types of different widths, or a predicate, are a
    /// [`BuildError::BadArgument`].
    pub fn bitcast<U: DeviceType>(self) -> Var<U> {
        let (src, dst) = (T::TY, U::TY);
        if src.bits() != dst.bits() || src == Type::Pred || dst == Type::Pred {
            with(|b| {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: format!("cannot reinterpret {src} as {dst}: the widths differ"),
                })
            });
            return Var::uninit();
        }
        if let Repr::Const(c) = self.repr {
            if let Some(r) = fold::bitcast(src, dst, c) {
                return Var::from_repr(Repr::Const(r));
            }
        }
        let a = self.operand();
        let out = Var::<U>::uninit();
        if let Some(reg) = out.reg() {
            context::emit(Data::Mov {
                ty: dst.bits_type(),
                dst: reg,
                src: a,
            });
        }
        out
    }

    /// Rust's `self as U`: integer widening sign- or zero-extends by the source's signedness,
    /// narrowing truncates, float to integer truncates toward zero and saturates (NaN gives 0),
    /// integer or wider float to float rounds to nearest; `bool` converts to 0/1 and a number to
    /// `bool` is `!= 0`. Packed pairs do not cast (a [`BuildError::BadArgument`]).
    pub fn cast<U: DeviceType>(self) -> Var<U> {
        let (src, dst) = (T::TY, U::TY);
        if let Repr::Const(c) = self.repr {
            if let Some(r) = fold::cast(src, dst, c) {
                return Var::from_repr(Repr::Const(r));
            }
        }
        if src.is_packed() || dst.is_packed() {
            with(|b| {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: format!("cannot cast {src} to {dst}; pack or unpack the halves"),
                })
            });
            return Var::uninit();
        }
        if src == dst {
            return Var::from_repr(self.repr);
        }
        if dst == Type::Pred {
            let zero = if src.is_float() {
                Operand::ImmF(0.0)
            } else {
                Operand::Imm(0)
            };
            let a = self.operand();
            let out = Var::<U>::uninit();
            if let Some(reg) = out.reg() {
                let cmp = if src.is_float() {
                    CmpOp::Neu
                } else {
                    CmpOp::Ne
                };
                context::emit(Compare::Setp {
                    cmp,
                    ty: src,
                    dst: reg,
                    a,
                    b: zero,
                });
            }
            return out;
        }
        let a = self.operand();
        let out = Var::<U>::uninit();
        let Some(reg) = out.reg() else { return out };
        if src == Type::Pred {
            let (one, zero) = if dst.is_float() {
                (Operand::ImmF(1.0), Operand::ImmF(0.0))
            } else {
                (Operand::Imm(1), Operand::Imm(0))
            };
            context::emit(Compare::Selp {
                ty: dst,
                dst: reg,
                a: one,
                b: zero,
                cond: a,
            });
        } else if src.is_int() && dst.is_int() && src.bits() == dst.bits() {
            context::emit(Data::Mov {
                ty: dst,
                dst: reg,
                src: a,
            });
        } else {
            context::emit(Convert::Cvt {
                dst_ty: dst,
                src_ty: src,
                rnd: default_round(dst, src),
                sat: false,
                dst: reg,
                src: a,
            });
        }
        out
    }
}

impl<T: Num> Var<T> {
    /// The smaller of the two (for floats, the non-NaN one if one is NaN).
    pub fn min(self, rhs: impl IntoVar<T>) -> Var<T> {
        binary(BinOp::Min, self, rhs.into_var())
    }
    /// The larger of the two.
    pub fn max(self, rhs: impl IntoVar<T>) -> Var<T> {
        binary(BinOp::Max, self, rhs.into_var())
    }
}

/// `if cond { a } else { b }` without branching (`selp`); folded when `cond` is a constant.
pub fn select<T: DeviceType>(cond: Var<bool>, a: impl IntoVar<T>, b: impl IntoVar<T>) -> Var<T> {
    let (a, b) = (a.into_var(), b.into_var());
    if let Some(c) = cond.as_const() {
        return if c { a } else { b };
    }
    if T::TY == Type::Pred {
        // selp has no predicate form: (c & a) | (!c & b).
        let c = Var::<T>::from_repr(cond.repr);
        let (ca, nb) = (
            binary(BinOp::And, c, a),
            binary(BinOp::And, unary(UnOp::Not, c), b),
        );
        return binary(BinOp::Or, ca, nb);
    }
    let (ao, bo, co) = (a.operand(), b.operand(), cond.operand());
    let out = Var::<T>::uninit();
    if let Some(reg) = out.reg() {
        context::emit(Compare::Selp {
            ty: T::TY,
            dst: reg,
            a: ao,
            b: bo,
            cond: co,
        });
    }
    out
}

/// `Const` is reexported for users who build operands by hand.
pub type HostConst = Const;
