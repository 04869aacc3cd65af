//! The few helpers `#[kernel]` writes besides the builder's own entry points: kernel parameters
//! declared by type, `let` that copies device values and moves everything else, and inclusive
//! ranges. Each is public so that what the
//! macro writes can be written by hand.

use std::cell::Cell;

use super::context::{with, KernelBuilder};
use super::control::{range, DeviceRange, Fresh, HostRange, Iterate, MakeRange, RangeInt};
use super::error::BuildError;
use super::memory::{GlobalPtr, TensorMap};
use super::value::{DeviceType, IntoVar, Var};

/// A type a kernel parameter can have: `Var<T>` (a scalar), `GlobalPtr<T>`, `TensorMap`.
/// `#[kernel]` declares each parameter of its function with [`KernelParam::declare`], in order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel parameter",
    label = "not a device type",
    note = "a kernel parameter is `Var<T>` (a scalar), `GlobalPtr<T>` or `TensorMap`; mark a value that configures generation `#[host]`"
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

/// The value of a `let x = y;` in `#[kernel]`, resolved by autoref specialization: the macro
/// writes `Let::new(y).let_()` with [`LetFresh`] and [`LetMove`] in scope. Method lookup tries
/// `Let<T>` by value first, where [`LetFresh`] applies when `T:` [`Fresh`] (device values get a
/// new register, marked host values move); only if it does not apply does lookup reach `&Let<T>`,
/// where [`LetMove`] moves any other value (references, closures, your own types), as Rust's
/// `let` does.
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

/// `let` of a [`Fresh`] value: [`Fresh::fresh_`] (a new register for a device value).
pub trait LetFresh {
    /// The bound value's type.
    type Value;
    /// The value to bind.
    fn let_(self) -> Self::Value;
}

impl<T: Fresh> LetFresh for Let<T> {
    type Value = T;
    fn let_(self) -> T {
        self.take().fresh_()
    }
}

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
