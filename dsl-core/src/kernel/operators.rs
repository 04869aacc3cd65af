//! The comparison and boolean operators of `#[kernel]` and `#[device]` bodies: what the macro
//! rewrites `<`, `<=`, `>`, `>=`, `==`, `!=`, `&&` and `||` into, so that one spelling works for
//! host and device values, as the rewritten `if` and `for` do.
//!
//! - A comparison `a < b` becomes `(&&Cmp(&a, &b)).op_lt()`. Method lookup tries three traits in
//!   turn (autoref specialization): [`DeviceLeft`] when `a` is a `Var<T>` and `b` becomes one
//!   ([`IntoVar<T>`]: a `Var<T>`, a `T`, or an unsuffixed literal, whose type it then decides);
//!   [`DeviceRight`] when `b` is a `Var<T>` and `a` becomes one; and [`HostCompare`] otherwise,
//!   Rust's own operator on host values (a `bool`). A device comparison emits `setp` (folded for
//!   constants) and is a `Var<bool>`. Operands are borrowed, as Rust's operators borrow them.
//! - `a && b` becomes `and(a, || b)` and `a || b` becomes `or(a, || b)`: on `bool`s Rust's short
//!   circuit; with a device predicate on either side the right side still runs only when it
//!   decides the result: on the device a branch around it, so a load that `a` guards is never
//!   made out of bounds. Write `p & q` for both sides evaluated without a branch.
//!
//! Everything here is public so that what the macro writes can be written by hand; the methods
//! of [`Var`] ([`Var::lt`], [`Var::eq_`], ...) are the same comparisons.
//!
//! ```
//! use dsl_core::kernel::operators::{and, Cmp, DeviceLeft as _, DeviceRight as _, HostCompare as _};
//! use dsl_core::kernel::*;
//!
//! let k = build_kernel("k", |k| {
//!     let n = k.param::<u32>("n");
//!     let i = thread_idx_x();
//!     // `i < n && i != 3`, as #[kernel] writes it:
//!     let inside: Var<bool> = and((&&Cmp(&i, &n)).op_lt(), || (&&Cmp(&i, &3)).op_ne());
//!     // On host values the same spelling is Rust's: `2 < 3` is a `bool`.
//!     let host: bool = (&&Cmp(&2, &3)).op_lt();
//!     assert!(host);
//!     let _ = inside;
//! })
//! .unwrap();
//! assert_eq!(k.params.len(), 1);
//! ```

use super::control::{if_value, Arm};
use super::value::{DeviceType, IntoVar, Var};

/// The two operands of a comparison, borrowed (`Cmp(&a, &b)`): the receiver of the comparison
/// methods of [`DeviceLeft`], [`DeviceRight`] and [`HostCompare`].
#[derive(Clone, Copy)]
pub struct Cmp<A, B>(pub A, pub B);

/// Comparisons with a device value on the left: `Var<T>` against anything that becomes a
/// `Var<T>` (a `Var<T>`, a `T`, an unsuffixed literal). Implemented for `&&Cmp<..>`, the first
/// receiver method lookup tries.
pub trait DeviceLeft {
    /// `a < b` (ordered on floats: false when either is NaN).
    fn op_lt(self) -> Var<bool>;
    /// `a <= b`.
    fn op_le(self) -> Var<bool>;
    /// `a > b`.
    fn op_gt(self) -> Var<bool>;
    /// `a >= b`.
    fn op_ge(self) -> Var<bool>;
    /// `a == b`.
    fn op_eq(self) -> Var<bool>;
    /// `a != b` (true when either float is NaN).
    fn op_ne(self) -> Var<bool>;
}

impl<T: DeviceType, R: IntoVar<T> + Copy> DeviceLeft for &&Cmp<&Var<T>, &R> {
    fn op_lt(self) -> Var<bool> {
        self.0.lt(*self.1)
    }
    fn op_le(self) -> Var<bool> {
        self.0.le(*self.1)
    }
    fn op_gt(self) -> Var<bool> {
        self.0.gt(*self.1)
    }
    fn op_ge(self) -> Var<bool> {
        self.0.ge(*self.1)
    }
    fn op_eq(self) -> Var<bool> {
        self.0.eq_(*self.1)
    }
    fn op_ne(self) -> Var<bool> {
        self.0.ne_(*self.1)
    }
}

/// Comparisons with a device value on the right only: a host value of a device type (or an
/// unsuffixed literal) against a `Var<T>`. Implemented for `&Cmp<..>`, the second receiver method
/// lookup tries.
pub trait DeviceRight {
    /// `a < b`.
    fn op_lt(self) -> Var<bool>;
    /// `a <= b`.
    fn op_le(self) -> Var<bool>;
    /// `a > b`.
    fn op_gt(self) -> Var<bool>;
    /// `a >= b`.
    fn op_ge(self) -> Var<bool>;
    /// `a == b`.
    fn op_eq(self) -> Var<bool>;
    /// `a != b`.
    fn op_ne(self) -> Var<bool>;
}

impl<T: DeviceType, L: IntoVar<T> + Copy> DeviceRight for &Cmp<&L, &Var<T>> {
    fn op_lt(self) -> Var<bool> {
        self.1.gt(*self.0)
    }
    fn op_le(self) -> Var<bool> {
        self.1.ge(*self.0)
    }
    fn op_gt(self) -> Var<bool> {
        self.1.lt(*self.0)
    }
    fn op_ge(self) -> Var<bool> {
        self.1.le(*self.0)
    }
    fn op_eq(self) -> Var<bool> {
        self.1.eq_(*self.0)
    }
    fn op_ne(self) -> Var<bool> {
        self.1.ne_(*self.0)
    }
}

/// Host operands that `<`, `<=`, `>`, `>=` compare: Rust's `PartialOrd`. Its message is what a
/// comparison that is neither host nor device reports, such as device values of two types.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with `{B}`",
    label = "no comparison of these two types",
    note = "device values compare as `Var<T>` against a `Var<T>` or a `T` of the same `T` (an unsuffixed literal takes that type); convert one side with `.cast::<T>()`; the methods are `Var::lt`, `le`, `gt`, `ge`, `eq_` and `ne_`"
)]
pub trait HostOrd<B: ?Sized>: PartialOrd<B> {}
impl<A: ?Sized + PartialOrd<B>, B: ?Sized> HostOrd<B> for A {}

/// Host operands that `==` and `!=` compare: Rust's `PartialEq`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with `{B}`",
    label = "no comparison of these two types",
    note = "device values compare as `Var<T>` against a `Var<T>` or a `T` of the same `T` (an unsuffixed literal takes that type); convert one side with `.cast::<T>()`; the methods are `Var::eq_` and `Var::ne_`"
)]
pub trait HostEq<B: ?Sized>: PartialEq<B> {}
impl<A: ?Sized + PartialEq<B>, B: ?Sized> HostEq<B> for A {}

/// Comparisons of host values: Rust's operators, a `bool`. Implemented for `Cmp<..>`, the last
/// receiver method lookup tries; each method's bound reports operands that compare neither way.
pub trait HostCompare<A: ?Sized, B: ?Sized> {
    /// `a < b`.
    fn op_lt(self) -> bool
    where
        A: HostOrd<B>;
    /// `a <= b`.
    fn op_le(self) -> bool
    where
        A: HostOrd<B>;
    /// `a > b`.
    fn op_gt(self) -> bool
    where
        A: HostOrd<B>;
    /// `a >= b`.
    fn op_ge(self) -> bool
    where
        A: HostOrd<B>;
    /// `a == b`.
    fn op_eq(self) -> bool
    where
        A: HostEq<B>;
    /// `a != b`.
    fn op_ne(self) -> bool
    where
        A: HostEq<B>;
}

impl<A: ?Sized, B: ?Sized> HostCompare<A, B> for Cmp<&A, &B> {
    fn op_lt(self) -> bool
    where
        A: HostOrd<B>,
    {
        self.0 < self.1
    }
    fn op_le(self) -> bool
    where
        A: HostOrd<B>,
    {
        self.0 <= self.1
    }
    fn op_gt(self) -> bool
    where
        A: HostOrd<B>,
    {
        self.0 > self.1
    }
    fn op_ge(self) -> bool
    where
        A: HostOrd<B>,
    {
        self.0 >= self.1
    }
    fn op_eq(self) -> bool
    where
        A: HostEq<B>,
    {
        self.0 == self.1
    }
    fn op_ne(self) -> bool
    where
        A: HostEq<B>,
    {
        self.0 != self.1
    }
}

/// The operands of `&&` and `||`: a `bool` or a device predicate (`Var<bool>`) on each side.
/// Two `bool`s give a `bool`, as in Rust; a device predicate on either side gives a `Var<bool>`.
/// The right side is a closure, run only when it decides the result: a host `bool` on the left
/// decides now, a device predicate branches around it.
#[diagnostic::on_unimplemented(
    message = "`&&` and `||` take a `bool` or a device predicate `Var<bool>` on each side; this one has `{Self}` on the left and `{B}` on the right",
    label = "not a `bool` or a `Var<bool>`",
    note = "compare a number to make a predicate (`x != 0`); `&` and `|` combine device predicates without a branch, both sides evaluated"
)]
pub trait ShortCircuit<B> {
    /// `bool`, or `Var<bool>` when either side is a device predicate.
    type Output;
    /// `self && b()`.
    fn and(self, b: impl FnOnce() -> B) -> Self::Output;
    /// `self || b()`.
    fn or(self, b: impl FnOnce() -> B) -> Self::Output;
}

impl ShortCircuit<bool> for bool {
    type Output = bool;
    fn and(self, b: impl FnOnce() -> bool) -> bool {
        self && b()
    }
    fn or(self, b: impl FnOnce() -> bool) -> bool {
        self || b()
    }
}

impl ShortCircuit<Var<bool>> for bool {
    type Output = Var<bool>;
    fn and(self, b: impl FnOnce() -> Var<bool>) -> Var<bool> {
        if self {
            b()
        } else {
            Var::konst(false)
        }
    }
    fn or(self, b: impl FnOnce() -> Var<bool>) -> Var<bool> {
        if self {
            Var::konst(true)
        } else {
            b()
        }
    }
}

macro_rules! device_short_circuit {
    ($($b:ty),*) => {$(
        impl ShortCircuit<$b> for Var<bool> {
            type Output = Var<bool>;
            fn and(self, b: impl FnOnce() -> $b) -> Var<bool> {
                branch(self, Arm::Then, b)
            }
            fn or(self, b: impl FnOnce() -> $b) -> Var<bool> {
                branch(self, Arm::Else, b)
            }
        }
    )*};
}
device_short_circuit!(bool, Var<bool>);

/// `if a { b() } else { false }` (`runs` = `Then`) or `if a { true } else { b() }` (`Else`) as an
/// `if` expression: on a device predicate `b` runs inside the arm's block, and the two arms meet in
/// one predicate register.
fn branch<B: IntoVar<bool>>(a: Var<bool>, runs: Arm, b: impl FnOnce() -> B) -> Var<bool> {
    let mut b = Some(b);
    if_value(a, |arm| match (arm == runs, b.take()) {
        (true, Some(b)) => b().into_var(),
        _ => Var::konst(runs == Arm::Else),
    })
}

/// `a && b()`: Rust's short circuit on `bool`s; on a device predicate `b` runs only where `a` holds.
pub fn and<A: ShortCircuit<B>, B>(a: A, b: impl FnOnce() -> B) -> A::Output {
    a.and(b)
}

/// `a || b()`: Rust's short circuit on `bool`s; on a device predicate `b` runs only where `a` does
/// not hold.
pub fn or<A: ShortCircuit<B>, B>(a: A, b: impl FnOnce() -> B) -> A::Output {
    a.or(b)
}

// The receivers are written as `#[kernel]` writes them, `&&Cmp(..)`, whatever the operands.
#[allow(clippy::needless_borrow)]
#[cfg(test)]
mod tests {
    use super::{and, or, Cmp, DeviceLeft as _, DeviceRight as _, HostCompare as _};
    use crate::ir::Stmt;
    use crate::kernel::{build_kernel, thread_idx_x, GlobalPtr, Var};

    #[test]
    fn host_operands_keep_rusts_meaning() {
        assert!((&&Cmp(&2u32, &3u32)).op_lt());
        assert!(!(&&Cmp(&2.5f64, &2.5f64)).op_ne());
        assert!((&&Cmp(&String::from("a"), &"a")).op_eq());
        let v = [1, 2];
        assert!((&&Cmp(&v[..], &[1, 2][..])).op_eq());
        let mut ran = false;
        assert!(!and(false, || {
            ran = true;
            true
        }));
        assert!(or(true, || false) && !ran, "the right side did not run");
    }

    #[test]
    fn device_comparisons_emit_setp_and_fold_constants() {
        build_kernel("k", |k| {
            let n = k.param::<u32>("n");
            let i = thread_idx_x();
            assert!((&&Cmp(&i, &n)).op_lt().reg().is_some());
            // A literal on either side takes the device value's type.
            assert!((&&Cmp(&i, &7)).op_ge().reg().is_some());
            assert!((&&Cmp(&7, &i)).op_le().reg().is_some());
            let c = Var::konst(3u32);
            assert_eq!((&&Cmp(&c, &4)).op_lt().as_const(), Some(true));
            assert_eq!((&&Cmp(&4, &c)).op_lt().as_const(), Some(false));
            assert_eq!((&&Cmp(&c, &c)).op_ne().as_const(), Some(false));
        })
        .unwrap();
    }

    /// The right side of a device `&&` is generated inside the branch on the left side, so a load
    /// it guards is made only in bounds.
    #[test]
    fn a_device_short_circuit_branches_around_its_right_side() {
        let k = build_kernel("k", |k| {
            let a: GlobalPtr<u32> = k.param_ptr("a");
            let n = k.param::<u32>("n");
            let i = thread_idx_x();
            let ok = and((&&Cmp(&i, &n)).op_lt(), || {
                (&&Cmp(&a.load_at(i), &0)).op_gt()
            });
            a.store_at(0u32, crate::kernel::select(ok, 1u32, 0u32));
        })
        .unwrap();
        let ifs: Vec<_> = k
            .body
            .iter()
            .filter_map(|s| match s {
                Stmt::If { then, else_, .. } => Some((then.len(), else_.len())),
                _ => None,
            })
            .collect();
        assert_eq!(ifs.len(), 1);
        let (then, else_) = ifs[0];
        assert!(
            then >= 2 && else_ >= 1,
            "the load and compare run in the then-arm"
        );
    }

    #[test]
    fn constant_predicates_decide_on_the_host() {
        build_kernel("k", |_| {
            let t = Var::konst(true);
            let mut ran = false;
            let r = or(t, || {
                ran = true;
                Var::konst(false)
            });
            assert_eq!(r.as_const(), Some(true));
            assert!(!ran);
            assert_eq!(and(true, || t).as_const(), Some(true));
        })
        .unwrap();
    }
}
