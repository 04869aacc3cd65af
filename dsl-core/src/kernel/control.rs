//! Control flow that works for host and device values with one spelling: the entry points the
//! `#[kernel]` macro rewrites `if`, `for`, `while`, `=` and `let` into.
//!
//! The rule everywhere: a host value (`bool`, a host integer range) decides now, while the kernel
//! is generated, and emits nothing of its own; a device value emits structured IR and runs the
//! user's code once per IR block. A `Var` that happens to be a constant counts as host for `if`.

use super::context::{self, in_block, with};
use super::error::BuildError;
use super::value::{DeviceType, IntoVar, Repr, Var};
use crate::ir::op::Data;
use crate::ir::{Operand, Reg, Stmt, Type};

/// Which arm of an `if` the closure is asked to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arm {
    /// The `then` block.
    Then,
    /// The `else` block.
    Else,
}

/// A condition of an `if` statement: `bool` or `Var<bool>`.
///
/// One closure generates both arms (`|arm| match arm { Arm::Then => .., Arm::Else => .. }`), so
/// both may borrow the same outer variables mutably.
pub trait Cond {
    /// `if self { arms(Then) }`: a host `bool` calls `arms(Then)` now when true; a device
    /// predicate emits an [`Stmt::If`] with an empty else block and calls `arms(Then)` inside it.
    fn if_(self, arms: impl FnMut(Arm));
    /// `if self { arms(Then) } else { arms(Else) }`: a host `bool` calls `arms` once with the
    /// taken arm; a device predicate calls it twice, inside the two blocks of one [`Stmt::If`].
    fn if_else(self, arms: impl FnMut(Arm));

    /// [`Cond::if_`] whose arm may fail (a `?` inside it, in `#[kernel]`): the first error is
    /// returned once the `if` is generated.
    fn try_if_<E>(self, mut arms: impl FnMut(Arm) -> Result<(), E>) -> Result<(), E>
    where
        Self: Sized,
    {
        let mut first = None;
        self.if_(|arm| keep_first(&mut first, || arms(arm)));
        first.map_or(Ok(()), Err)
    }

    /// [`Cond::if_else`] whose arms may fail: the first error is returned once both arms (of a
    /// device predicate) are generated.
    fn try_if_else<E>(self, mut arms: impl FnMut(Arm) -> Result<(), E>) -> Result<(), E>
    where
        Self: Sized,
    {
        let mut first = None;
        self.if_else(|arm| keep_first(&mut first, || arms(arm)));
        first.map_or(Ok(()), Err)
    }
}

/// Runs `f` unless an error was kept already, and keeps its error.
fn keep_first<E>(first: &mut Option<E>, f: impl FnOnce() -> Result<(), E>) {
    if first.is_none() {
        if let Err(e) = f() {
            *first = Some(e);
        }
    }
}

impl Cond for bool {
    fn if_(self, mut arms: impl FnMut(Arm)) {
        if self {
            arms(Arm::Then);
        }
    }
    fn if_else(self, mut arms: impl FnMut(Arm)) {
        arms(if self { Arm::Then } else { Arm::Else });
    }
}

/// The predicate register of `c`, moving a constant into one.
fn pred_reg(c: Var<bool>) -> Reg {
    c.to_reg()
}

impl Cond for Var<bool> {
    fn if_(self, mut arms: impl FnMut(Arm)) {
        if let Some(c) = self.as_const() {
            return c.if_(arms);
        }
        let cond = pred_reg(self);
        let ((), then) = in_block(|| arms(Arm::Then));
        with(|b| {
            b.emit(Stmt::If {
                cond,
                then,
                else_: Vec::new(),
            })
        });
    }
    fn if_else(self, mut arms: impl FnMut(Arm)) {
        if let Some(c) = self.as_const() {
            return c.if_else(arms);
        }
        let cond = pred_reg(self);
        let ((), then) = in_block(|| arms(Arm::Then));
        let ((), else_) = in_block(|| arms(Arm::Else));
        with(|b| b.emit(Stmt::If { cond, then, else_ }));
    }
}

/// Values an `if` expression on a device predicate can produce: both arms' values are written
/// into one fresh register (per component) that the `if` evaluates to.
#[diagnostic::on_unimplemented(
    message = "an `if` on a device predicate must produce device values in both arms, not `{Self}`",
    label = "this arm's value cannot be merged through a register",
    note = "convert host values with `Var::from(..)`, or decide the condition on the host"
)]
pub trait Merge: Sized {
    /// New registers shaped like `self` (no code).
    fn new_slot(&self) -> Self;
    /// Moves `self` into `slot`'s registers.
    fn write_slot(&self, slot: &Self);
}

impl<T: DeviceType> Merge for Var<T> {
    fn new_slot(&self) -> Self {
        Var::uninit()
    }
    fn write_slot(&self, slot: &Self) {
        let mut s = *slot;
        s.set(*self);
    }
}

impl Merge for () {
    fn new_slot(&self) -> Self {}
    fn write_slot(&self, _: &Self) {}
}

macro_rules! merge_tuple {
    ($($n:ident $i:tt),*) => {
        impl<$($n: Merge),*> Merge for ($($n,)*) {
            fn new_slot(&self) -> Self {
                ($(self.$i.new_slot(),)*)
            }
            fn write_slot(&self, slot: &Self) {
                $(self.$i.write_slot(&slot.$i);)*
            }
        }
    };
}
merge_tuple!(A 0);
merge_tuple!(A 0, B 1);
merge_tuple!(A 0, B 1, C 2);
merge_tuple!(A 0, B 1, C 2, D 3);

impl<M: Merge, const N: usize> Merge for [M; N] {
    fn new_slot(&self) -> Self {
        std::array::from_fn(|i| self[i].new_slot())
    }
    fn write_slot(&self, slot: &Self) {
        for (v, s) in self.iter().zip(slot) {
            v.write_slot(s);
        }
    }
}

/// A condition of an `if` expression producing `V`: a `bool` takes any `V` (host or device);
/// a `Var<bool>` needs `V: Merge` (device values). See [`if_value`].
pub trait ValueCond<V> {
    /// Evaluates `arms` as an `if` expression.
    fn select_arm(self, arms: impl FnMut(Arm) -> V) -> V;
}

impl<V> ValueCond<V> for bool {
    fn select_arm(self, mut arms: impl FnMut(Arm) -> V) -> V {
        arms(if self { Arm::Then } else { Arm::Else })
    }
}

impl<V: Merge> ValueCond<V> for Var<bool> {
    fn select_arm(self, mut arms: impl FnMut(Arm) -> V) -> V {
        if let Some(c) = self.as_const() {
            return c.select_arm(arms);
        }
        let cond = pred_reg(self);
        let (slot, then) = in_block(|| {
            let v = arms(Arm::Then);
            let slot = v.new_slot();
            v.write_slot(&slot);
            slot
        });
        let ((), else_) = in_block(|| arms(Arm::Else).write_slot(&slot));
        with(|b| b.emit(Stmt::If { cond, then, else_ }));
        slot
    }
}

/// `if c { then } else { else }` as an expression. A host `bool` evaluates the taken arm only
/// (any value type); a device predicate evaluates both arms in the two blocks of one
/// [`Stmt::If`] and merges their values through fresh registers, so the arms must produce device
/// values ([`Merge`]: `Var`s, tuples and arrays of them).
pub fn if_value<C: ValueCond<V>, V>(c: C, arms: impl FnMut(Arm) -> V) -> V {
    c.select_arm(arms)
}

/// Something a `for` loop iterates: [`HostRange`] (unrolled) or [`DeviceRange`] (a
/// [`Stmt::For`]).
pub trait Iterate {
    /// What the body receives: a host integer or a `Var`.
    type Index;
    /// Runs the loop.
    fn for_each_(self, body: impl FnMut(Self::Index));

    /// [`Iterate::for_each_`] whose body may fail (a `?` inside it, in `#[kernel]`): a host loop
    /// stops generating at the first error, which is returned.
    fn try_for_each_<E>(self, mut body: impl FnMut(Self::Index) -> Result<(), E>) -> Result<(), E>
    where
        Self: Sized,
    {
        let mut first = None;
        self.for_each_(|i| keep_first(&mut first, || body(i)));
        first.map_or(Ok(()), Err)
    }
}

/// Host integers iterate on the host; [`Iterate`] is also implemented for Rust's ranges so that
/// `for i in 0..4` keeps meaning what it means.
impl<I: Iterator> Iterate for I {
    type Index = I::Item;
    fn for_each_(self, body: impl FnMut(I::Item)) {
        self.for_each(body)
    }
}

/// A range with host bounds: the loop unrolls, calling the body once per index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostRange<T> {
    start: T,
    end: T,
    step: T,
}

/// A range with at least one device bound: one [`Stmt::For`], whose body is generated once with
/// the loop register as index.
#[derive(Debug, Clone, Copy)]
pub struct DeviceRange<T> {
    start: Var<T>,
    end: Var<T>,
    step: Var<T>,
}

/// Host integer types a range can count with.
pub trait RangeInt: Copy + PartialOrd + std::fmt::Display {
    /// One.
    const ONE: Self;
    /// `self + step`, or `None` past the type's range.
    fn checked_step(self, step: Self) -> Option<Self>;
    /// Whether the step is positive.
    fn positive(self) -> bool;
    /// The value as i128, for errors.
    fn wide(self) -> i128;
}

macro_rules! range_int {
    ($($t:ty),*) => {$(
        impl RangeInt for $t {
            const ONE: Self = 1;
            fn checked_step(self, step: Self) -> Option<Self> {
                self.checked_add(step)
            }
            fn positive(self) -> bool {
                self > 0
            }
            fn wide(self) -> i128 {
                self as i128
            }
        }
    )*};
}
range_int!(i32, u32, i64, u64, usize, isize);

impl<T: RangeInt> HostRange<T> {
    /// Counts by `step` (refused at build time when not positive; the loop then runs no body).
    pub fn step_by(self, step: T) -> Self {
        HostRange { step, ..self }
    }
}

impl<T: RangeInt> Iterate for HostRange<T> {
    type Index = T;
    fn for_each_(self, mut body: impl FnMut(T)) {
        if !self.step.positive() {
            let step = self.step.wide();
            with(|b| b.error(|kernel| BuildError::BadStep { kernel, step }));
            return;
        }
        let mut i = self.start;
        while i < self.end {
            body(i);
            match i.checked_step(self.step) {
                Some(n) => i = n,
                None => break,
            }
        }
    }
}

impl<T: DeviceType> DeviceRange<T> {
    /// Counts by `step`; a constant step must be positive, a dynamic one is the author's promise.
    pub fn step_by(self, step: impl IntoVar<T>) -> Self {
        DeviceRange {
            step: step.into_var(),
            ..self
        }
    }
}

impl<T: DeviceType> Iterate for DeviceRange<T> {
    type Index = Var<T>;
    fn for_each_(self, mut body: impl FnMut(Var<T>)) {
        // An unsigned step is positive whenever it is not 0 (its bits read as i64 may not be).
        if let Repr::Const(super::value::Const::Int(s)) = self.step.repr {
            if s == 0 || (T::TY.is_signed() && s < 0) {
                with(|b| {
                    b.error(|kernel| BuildError::BadStep {
                        kernel,
                        step: s as i128,
                    })
                });
                return;
            }
        }
        let (start, end, step) = (
            self.start.operand(),
            self.end.operand(),
            self.step.operand(),
        );
        let var = Var::<T>::uninit();
        let Some(reg) = var.reg() else { return };
        let ((), stmts) = in_block(|| body(var));
        with(|b| {
            b.emit(Stmt::For {
                var: reg,
                start,
                end,
                step,
                body: stmts,
            })
        });
    }
}

/// The pairs of bound types [`range`] accepts, and the range each makes: host with host gives a
/// [`HostRange`], anything with a `Var` gives a [`DeviceRange`].
pub trait MakeRange<B> {
    /// The range type.
    type Range: Iterate;
    /// `self..end`.
    fn make_range(self, end: B) -> Self::Range;
}

macro_rules! make_range {
    (device $($t:ty),*) => {$(
        impl MakeRange<Var<$t>> for $t {
            type Range = DeviceRange<$t>;
            fn make_range(self, end: Var<$t>) -> DeviceRange<$t> {
                DeviceRange { start: Var::konst(self), end, step: Var::konst(1) }
            }
        }
        impl MakeRange<$t> for Var<$t> {
            type Range = DeviceRange<$t>;
            fn make_range(self, end: $t) -> DeviceRange<$t> {
                DeviceRange { start: self, end: Var::konst(end), step: Var::konst(1) }
            }
        }
        impl MakeRange<Var<$t>> for Var<$t> {
            type Range = DeviceRange<$t>;
            fn make_range(self, end: Var<$t>) -> DeviceRange<$t> {
                DeviceRange { start: self, end, step: Var::konst(1) }
            }
        }
    )*};
}
// One blanket impl for host bounds, so that `range(0, 4)` has a single candidate and its literals
// fall back to i32 as in `0..4`.
impl<T: RangeInt> MakeRange<T> for T {
    type Range = HostRange<T>;
    fn make_range(self, end: T) -> HostRange<T> {
        HostRange {
            start: self,
            end,
            step: T::ONE,
        }
    }
}
make_range!(device i32, u32, i64, u64);

/// `start..end` for a `for` loop: host bounds unroll ([`HostRange`]), a `Var` bound emits one
/// [`Stmt::For`] ([`DeviceRange`]); `.step_by(s)` on either.
pub fn range<A: MakeRange<B>, B>(start: A, end: B) -> A::Range {
    start.make_range(end)
}

/// Which part of a `while` loop the loop closure is asked to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoopPart {
    /// The condition: return `Some(cond)`.
    Cond,
    /// The body: run it and return `None`.
    Body,
}

/// A `while` condition: `bool` or `Var<bool>`. See [`while_`].
pub trait LoopCond: Sized {
    /// Runs `while cond { body }` with both parts generated by one closure, so that both may
    /// borrow the same variables: `|part| match part { LoopPart::Cond => Some(cond),
    /// LoopPart::Body => { body; None } }`. A host `bool` loops on the host (a `None` condition
    /// ends it); a device predicate emits one [`Stmt::While`] from one call per part (a `None`
    /// condition is a build error).
    fn run_while(f: impl FnMut(LoopPart) -> Option<Self>);

    /// [`LoopCond::run_while`] whose parts may fail (a `?` inside the loop, in `#[kernel]`):
    /// generation stops at the first error, which is returned (a failed condition ends a host
    /// loop).
    fn try_run_while<E>(mut f: impl FnMut(LoopPart) -> Result<Option<Self>, E>) -> Result<(), E> {
        let mut first = None;
        Self::run_while(|part| {
            if first.is_some() {
                return None;
            }
            match f(part) {
                Ok(c) => c,
                Err(e) => {
                    first = Some(e);
                    None
                }
            }
        });
        first.map_or(Ok(()), Err)
    }
}

impl LoopCond for bool {
    fn run_while(mut f: impl FnMut(LoopPart) -> Option<bool>) {
        while f(LoopPart::Cond) == Some(true) {
            f(LoopPart::Body);
        }
    }
}

impl LoopCond for Var<bool> {
    fn run_while(mut f: impl FnMut(LoopPart) -> Option<Var<bool>>) {
        let (c, cond_block) = in_block(|| f(LoopPart::Cond).map(pred_reg));
        let Some(c) = c else {
            with(|b| {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: "a while loop's condition part returned no condition".into(),
                })
            });
            return;
        };
        let (_, stmts) = in_block(|| f(LoopPart::Body));
        with(|b| {
            b.emit(Stmt::While {
                cond_block,
                cond: c,
                body: stmts,
            })
        });
    }
}

/// `while cond() { body() }`: a host `bool` condition loops on the host; a device predicate
/// emits one [`Stmt::While`] whose condition block is generated by one call of `cond` and whose
/// body by one call of `body`.
///
/// When the condition reads what the body writes (`while i < n { i += 1 }`), two closures cannot
/// both borrow `i`; call [`LoopCond::run_while`] with one closure that generates either part
/// (what `#[kernel]` writes).
pub fn while_<C: LoopCond>(mut cond: impl FnMut() -> C, mut body: impl FnMut()) {
    C::run_while(|part| match part {
        LoopPart::Cond => Some(cond()),
        LoopPart::Body => {
            body();
            None
        }
    })
}

/// Marks host types for which assignment and `let` keep Rust's meaning. Implemented for
/// integers, floats, `bool`, `char`, strings, the layout types, and tuples, arrays, `Vec`s and
/// `Option`s of host values; implement it for your own host types to use them in `#[kernel]`
/// assignments.
pub trait HostValue {}

macro_rules! host_values {
    ($($t:ty),*) => { $(impl HostValue for $t {})* };
}
host_values!(
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    bool,
    char,
    String,
    &'static str,
    half::f16,
    half::bf16,
    crate::layout::Layout,
    crate::layout::IntTuple,
    crate::layout::Swizzle,
    crate::layout::ComposedLayout,
    crate::layout::Tiler
);
impl HostValue for () {}
impl<T: HostValue> HostValue for Vec<T> {}
impl<T: HostValue> HostValue for Option<T> {}
impl<T: HostValue, const N: usize> HostValue for [T; N] {}
impl<A: HostValue, B: HostValue> HostValue for (A, B) {}
impl<A: HostValue, B: HostValue, C: HostValue> HostValue for (A, B, C) {}

/// `x = v` for host and device values alike: device values write their register, host values
/// are replaced.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be assigned in a kernel",
    note = "device values are `Var<T>`; for a host type, implement `dsl_core::kernel::HostValue` for it"
)]
pub trait Assign {
    /// Assigns `v` to `self`.
    fn assign_(&mut self, v: Self);
}

impl<T: DeviceType> Assign for Var<T> {
    /// `mov` into `self`'s register (see [`Var::set`]).
    fn assign_(&mut self, v: Self) {
        self.set(v);
    }
}

impl<T: HostValue> Assign for T {
    fn assign_(&mut self, v: Self) {
        *self = v;
    }
}

/// `let y = x;` for host and device values alike: device values are copied into a new register
/// ([`Var::fresh`]), so a later assignment to `x` does not change `y`; host values move as usual.
pub trait Fresh {
    /// The independent copy.
    fn fresh_(self) -> Self;
}

impl<T: DeviceType> Fresh for Var<T> {
    fn fresh_(self) -> Self {
        self.fresh()
    }
}

impl<T: HostValue> Fresh for T {
    fn fresh_(self) -> Self {
        self
    }
}

/// Moves a host constant into a new predicate register (`mov.pred`), for code that needs a
/// register even when the value is known.
pub fn pred_register(value: bool) -> Var<bool> {
    let v = Var::<bool>::uninit();
    if let Some(reg) = v.reg() {
        context::emit(Data::Mov {
            ty: Type::Pred,
            dst: reg,
            src: Operand::Imm(value as i64),
        });
    }
    v
}
