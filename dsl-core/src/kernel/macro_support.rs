//! The few helpers `#[kernel]` writes besides the builder's own entry points: kernel parameters
//! declared by type, `let` that copies device values and moves everything else, a `while` whose
//! condition and body share one closure, and inclusive ranges. Each is public so that what the
//! macro writes can be written by hand.

use std::cell::{Cell, RefCell};

use super::context::{with, KernelBuilder};
use super::control::{range, DeviceRange, Fresh, HostRange, Iterate, LoopCond, MakeRange, RangeInt};
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

/// Which part of a `while` loop the closure given to [`while_arms`] is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WhilePart {
    /// Evaluate the condition and return it (`Some`).
    Cond,
    /// Run the body (and return `None`).
    Body,
}

/// [`super::while_`] with one closure for condition and body, so that both may use the same
/// outer variables mutably (`while i < n { i = i + 1 }` borrows `i` in both). `#[kernel]` writes
/// `while c { b }` as `while_arms(|part| match part { Cond => Some(c), Body => { b; None } })`.
///
/// The closure must return `Some` for [`WhilePart::Cond`]; a `None` there ends the loop (and, on
/// a device predicate, is recorded as a build error).
pub fn while_arms<C: LoopCond + WhileStop>(arms: impl FnMut(WhilePart) -> Option<C>) {
    let arms = RefCell::new(arms);
    // The builder calls the condition and the body one after the other, never inside each other,
    // so the borrows below never overlap.
    super::control::while_(
        || match (arms.borrow_mut())(WhilePart::Cond) {
            Some(c) => c,
            None => C::stop(),
        },
        || {
            let _ = (arms.borrow_mut())(WhilePart::Body);
        },
    )
}

/// The condition that ends a loop, for a [`while_arms`] closure that gave none.
pub trait WhileStop {
    /// A false condition.
    fn stop() -> Self;
}

impl WhileStop for bool {
    fn stop() -> bool {
        false
    }
}

impl WhileStop for Var<bool> {
    fn stop() -> Var<bool> {
        with(|b| {
            b.error(|kernel| BuildError::BadArgument {
                kernel,
                message: "a `while_arms` closure returned no condition".to_string(),
            })
        });
        Var::konst(false)
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

/// A condition of an `if` whose value is used, with the values it can produce: a `bool` picks
/// the taken arm's value whatever its type (a host `let n = if flag { 4 } else { 8 };`); a
/// `Var<bool>` needs [`IfMerge`] values, merged through registers ([`super::if_value`]).
pub trait IfValue<V> {
    /// Evaluates `arms` as an `if` expression on `self`.
    fn if_value_(self, arms: impl FnMut(super::Arm) -> V) -> V;
}

impl<V> IfValue<V> for bool {
    fn if_value_(self, mut arms: impl FnMut(super::Arm) -> V) -> V {
        arms(if self {
            super::Arm::Then
        } else {
            super::Arm::Else
        })
    }
}

impl<V: IfMerge> IfValue<V> for Var<bool> {
    fn if_value_(self, arms: impl FnMut(super::Arm) -> V) -> V {
        super::if_value(self, arms)
    }
}

/// The values an `if` on a device predicate can produce: the [`super::Merge`] types (`Var`s,
/// `()`, and tuples and arrays of them), listed again here so that any other type is refused with
/// a sentence that says what to write.
#[diagnostic::on_unimplemented(
    message = "an `if` used as a value on a device predicate needs both arms to produce device values of one type, merged through a register; `{Self}` is not one",
    label = "both arms must give a `Var`, or a tuple or array of `Var`s",
    note = "make both arms produce `Var`s of one type, or write the `if` as a statement that assigns to a variable declared before it"
)]
pub trait IfMerge: super::Merge {}

impl<T: DeviceType> IfMerge for Var<T> {}
impl IfMerge for () {}
impl<A: IfMerge> IfMerge for (A,) {}
impl<A: IfMerge, B: IfMerge> IfMerge for (A, B) {}
impl<A: IfMerge, B: IfMerge, C: IfMerge> IfMerge for (A, B, C) {}
impl<A: IfMerge, B: IfMerge, C: IfMerge, D: IfMerge> IfMerge for (A, B, C, D) {}
impl<M: IfMerge, const N: usize> IfMerge for [M; N] {}

/// `if c { a } else { b }` as an expression, for host and device conditions (see [`IfValue`]).
/// `#[kernel]` writes `if_value(c, |arm| match arm { Arm::Then => a, Arm::Else => b })`.
pub fn if_value<C: IfValue<V>, V>(c: C, arms: impl FnMut(super::Arm) -> V) -> V {
    c.if_value_(arms)
}
