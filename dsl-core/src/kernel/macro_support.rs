//! The few helpers `#[kernel]` writes besides the builder's own entry points: kernel parameters
//! declared by type, `let` that copies device values and moves everything else, short-circuit
//! `&&`/`||` (from [`super::operators`]), and inclusive ranges. Each is public so that what the
//! macro writes can be written by hand.

use std::cell::Cell;

use super::context::{with, KernelBuilder};
use super::control::Assign;
use super::control::{range, DeviceRange, HostRange, Iterate, MakeRange, RangeInt};
use super::error::BuildError;
use super::memory::{GlobalPtr, SharedPtr, TensorMap};
use super::readonly::ConstPtr;
use super::value::{DeviceType, IntoVar, Var};

/// A type a kernel parameter can have: `Var<T>` (a scalar), `GlobalPtr<T>`, `ConstPtr<T>`,
/// `TensorMap`, `ConstTensorMap`.
/// `#[kernel]` declares each parameter of its function with [`KernelParam::declare`], in order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel parameter",
    label = "not a device type",
    note = "a kernel parameter is `Var<T>` (a scalar), `GlobalPtr<T>`, `ConstPtr<T>`, `TensorMap` or `ConstTensorMap`; mark a value that configures generation `#[host]`"
)]
pub trait KernelParam: Sized {
    /// Declares the parameter `name` of the kernel under construction and returns its value.
    fn declare(k: &KernelBuilder, name: &str) -> Self;
}

impl<T: DeviceType> KernelParam for Var<T> {
    fn declare(k: &KernelBuilder, name: &str) -> Self {
        k.param::<T>(name)
    }
}

impl<T: DeviceType> KernelParam for GlobalPtr<T> {
    fn declare(k: &KernelBuilder, name: &str) -> Self {
        k.param_ptr::<T>(name)
    }
}

impl KernelParam for TensorMap {
    fn declare(k: &KernelBuilder, name: &str) -> Self {
        k.param_tensor_map(name)
    }
}

/// The value of `let x = y;` (`y` a path) and of `let mut x = e;` in `#[kernel]`, resolved by
/// autoref specialization: the macro writes `Let::new(e).let_()` with [`LetFresh`] and
/// [`LetMove`] in scope. Method lookup tries `Let<T>` by value first, where [`LetFresh`] applies
/// to device values (`Var<T>`, arrays of them, and global and shared pointers), which are copied
/// into new registers: `y` does
/// not see later assignments to `x`, and a constant gets a register that device control flow may
/// assign. Only if it does not apply does lookup reach `&Let<T>`, where [`LetMove`] moves any
/// other value, as Rust's `let` does. The device impls name concrete types, so a host value whose
/// type is still being inferred (`let mut v = Vec::new();`) is not held up by them.
pub struct Let<T>(Cell<Option<T>>);

impl<T> Let<T> {
    /// Wraps the value being bound.
    pub fn new(value: T) -> Self {
        Let(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        match self.0.take() {
            Some(v) => v,
            None => unreachable!("a `Let` is consumed once"),
        }
    }
}

/// `let` of a device value: a copy in new registers ([`Var::fresh`]).
pub trait LetFresh {
    /// The bound value's type.
    type Value;
    /// The value to bind.
    fn let_(self) -> Self::Value;
}

impl<T: DeviceType> LetFresh for Let<Var<T>> {
    type Value = Var<T>;
    fn let_(self) -> Var<T> {
        self.take().fresh()
    }
}

impl<T: DeviceType, const N: usize> LetFresh for Let<[Var<T>; N]> {
    type Value = [Var<T>; N];
    fn let_(self) -> [Var<T>; N] {
        self.take().map(|v| v.fresh())
    }
}

macro_rules! pointer_lets {
    ($($p:ident),*) => {$(
        impl<T: DeviceType> LetFresh for Let<$p<T>> {
            type Value = $p<T>;
            /// The same address in a new register, so that assigning one pointer (`p = p + 1`)
            /// does not move the other.
            fn let_(self) -> $p<T> {
                $p::from_addr(self.take().addr().fresh())
            }
        }

        /// `p = q` for a pointer: its address register is written, like a `Var`'s, so a pointer
        /// advanced in a device loop stays one register.
        impl<T: DeviceType> Assign for $p<T> {
            fn assign_(&mut self, v: Self) {
                let mut addr = self.addr();
                addr.assign_(v.addr());
                *self = $p::from_addr(addr);
            }
        }
    )*};
}
pointer_lets!(GlobalPtr, SharedPtr, ConstPtr);

/// `let` of any other value: a move.
pub trait LetMove {
    /// The bound value's type.
    type Value;
    /// The value to bind.
    fn let_(self) -> Self::Value;
}

impl<T> LetMove for &Let<T> {
    type Value = T;
    fn let_(self) -> T {
        self.take()
    }
}

/// `&&` and `||` in `#[kernel]` bodies: see [`super::operators`].
pub use super::operators::{and, or, ShortCircuit};

/// The successor of a range's last index, for `a..=b`.
pub trait InclusiveEnd: Sized {
    /// `self + 1`, or `None` when it overflows.
    fn succ(self) -> Option<Self>;
}

macro_rules! host_inclusive {
    ($($t:ty),*) => {$(
        impl InclusiveEnd for $t {
            fn succ(self) -> Option<Self> {
                self.checked_add(1)
            }
        }
    )*};
}
host_inclusive!(i32, u32, i64, u64, usize, isize);

macro_rules! device_inclusive {
    ($($t:ty),*) => {$(
        impl InclusiveEnd for Var<$t> {
            /// `self + 1` on the device (folded for a constant; wraps like the hardware).
            fn succ(self) -> Option<Self> {
                Some(self + Var::konst(1 as $t))
            }
        }
    )*};
}
device_inclusive!(i32, u32, i64, u64);

/// `start..=end` for a `for` loop: `range(start, end + 1)`, with `.step_by(s)` like [`range`]'s.
/// A host `end` at its type's maximum has no successor: that is recorded as a build error and
/// the loop runs no body.
pub fn range_inclusive<A, B>(start: A, end: B) -> InclusiveRange<A::Range>
where
    A: MakeRange<B>,
    B: InclusiveEnd,
{
    match end.succ() {
        Some(e) => InclusiveRange(Some(range(start, e))),
        None => {
            with(|b| {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: "an inclusive range ends at its type's maximum; count with an \
                              exclusive range in a wider type"
                        .to_string(),
                })
            });
            InclusiveRange(None)
        }
    }
}

/// What [`range_inclusive`] makes: the exclusive range to the successor of the end, or nothing
/// when the end has none.
#[derive(Debug, Clone, Copy)]
pub struct InclusiveRange<R>(Option<R>);

impl<T: RangeInt> InclusiveRange<HostRange<T>> {
    /// Counts by `step` (see [`HostRange::step_by`]).
    pub fn step_by(self, step: T) -> Self {
        InclusiveRange(self.0.map(|r| r.step_by(step)))
    }
}

impl<T: DeviceType> InclusiveRange<DeviceRange<T>> {
    /// Counts by `step` (see [`DeviceRange::step_by`]).
    pub fn step_by(self, step: impl IntoVar<T>) -> Self {
        InclusiveRange(self.0.map(|r| r.step_by(step)))
    }
}

impl<R: Iterate> Iterate for InclusiveRange<R> {
    type Index = R::Index;
    fn for_each_(self, body: impl FnMut(R::Index)) {
        if let Some(r) = self.0 {
            r.for_each_(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ParamKind, Stmt, Type};
    use crate::kernel::build_kernel;

    #[test]
    fn an_inclusive_host_range_runs_its_last_index_and_refuses_a_maximal_end() {
        let mut seen = Vec::new();
        build_kernel("k", |_| {
            range_inclusive(2u32, 5u32)
                .step_by(3)
                .for_each_(|i| seen.push(i))
        })
        .unwrap();
        assert_eq!(seen, [2, 5]);
        let mut runs = 0;
        let e = build_kernel("k", |_| {
            range_inclusive(u32::MAX - 1, u32::MAX).for_each_(|_| runs += 1)
        });
        assert!(matches!(e, Err(BuildError::BadArgument { .. })), "{e:?}");
        assert_eq!(runs, 0);
    }

    #[test]
    fn an_inclusive_device_range_is_one_loop() {
        let k = build_kernel("k", |b| {
            let n = b.param::<u32>("n");
            range_inclusive(0u32, n).for_each_(|_| {});
        })
        .unwrap();
        assert_eq!(
            k.body
                .iter()
                .filter(|s| matches!(s, Stmt::For { .. }))
                .count(),
            1
        );
    }

    #[test]
    fn parameters_are_declared_by_type() {
        let k = build_kernel("k", |b| {
            let _: GlobalPtr<f32> = KernelParam::declare(b, "a");
            let _: Var<u64> = KernelParam::declare(b, "n");
            let _: TensorMap = KernelParam::declare(b, "m");
        })
        .unwrap();
        let kinds: Vec<_> = k.params.iter().map(|p| (p.name.as_str(), p.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("a", ParamKind::GlobalPtr { elem: Type::F32 }),
                ("n", ParamKind::Scalar(Type::U64)),
                ("m", ParamKind::TensorMap),
            ]
        );
    }

    #[test]
    fn let_copies_device_values_and_moves_others() {
        use super::{LetFresh as _, LetMove as _};
        build_kernel("k", |b| {
            let x = b.param::<u32>("x");
            let y = Let::new(x).let_();
            assert_ne!(x.reg(), y.reg());
            let s = Let::new(String::from("host")).let_();
            assert_eq!(s, "host");
            let r = Let::new(&s).let_();
            assert_eq!(r, "host");
            let k = Var::konst(1u32);
            assert!(
                Let::new(k).let_().reg().is_some(),
                "a constant gets a register"
            );
            let arr = Let::new([x, x]).let_();
            assert!(arr[0].reg() != x.reg() && arr[0].reg() != arr[1].reg());
        })
        .unwrap();
    }
}
