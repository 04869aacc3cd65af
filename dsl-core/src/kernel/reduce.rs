//! Warp and block reductions (Triton's `tl.sum`/`tl.max`/`tl.min`, CUDA's `__reduce_add_sync`
//! and CUB's `WarpReduce`/`BlockReduce`): sum, max and min of one value per thread, the result
//! in every thread.
//!
//! - [`warp_sum`], [`warp_max`], [`warp_min`] reduce over the 32 lanes of a warp: 32-bit
//!   integers with one `redux.sync` (sm_80), floats by a butterfly of five `shfl.sync.bfly`
//!   (16-bit floats in f32, rounded back once at the end). Every lane of the warp must call
//!   them (the mask is the whole warp).
//! - [`BlockReduce`] reduces over a block of a known thread count through shared memory: each
//!   warp reduces, lane 0 of each writes its result, and after `bar.sync` every warp reduces
//!   the warps' results. Every thread of the block must call it.
//!
//! The order of a float sum is fixed by the lanes and warps (a tree), so a result repeats bit
//! for bit from run to run, and differs from a sequential sum by rounding.
//!
//! ```
//! use dsl_core::kernel::*;
//!
//! // Each block writes the largest |x| of its 256 elements.
//! let k = build_kernel("block_absmax", |k| {
//!     let x = k.param_ptr::<f32>("x");
//!     let out = k.param_ptr::<f32>("out");
//!     let red = BlockReduce::<f32>::new(k, "absmax", 256);
//!     let i = block_idx_x() * 256u32 + thread_idx_x();
//!     let m = red.max(x.load_at(i).abs());
//!     thread_idx_x().eq_(0u32).if_(|_| out.store_at(block_idx_x(), m));
//! })
//! .unwrap();
//! ```

use half::{bf16, f16};

use super::context::{emit, KernelBuilder};
use super::control::Cond;
use super::intrinsics::{shfl_xor, sync_threads, thread_idx_x};
use super::memory::SharedPtr;
use super::ops::{select, Num};
use super::value::{DeviceType, IntoVar, Var};
use crate::ir::op::{ReduxOp, Warp};
use crate::ir::Operand;

/// What a reduction combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// The sum.
    Sum,
    /// The largest value (for floats, NaN only where every value is NaN, as `max.f32`).
    Max,
    /// The smallest value.
    Min,
}

/// The element types of the warp and block reductions: `i32`, `u32` (`redux.sync`), `f32`
/// (shuffles), and `f16`, `bf16` (in f32).
pub trait Reduce: Num {
    /// The reduction of `v` over the 32 lanes of the warp, in every lane.
    fn warp_reduce(op: Reduction, v: Var<Self>) -> Var<Self>;
}

/// `redux.sync.op.ty v, 0xffffffff` (sm_80).
fn redux<T: DeviceType>(op: Reduction, v: Var<T>) -> Var<T> {
    let src = v.operand();
    let out = Var::<T>::uninit();
    if let Some(dst) = out.reg() {
        emit(Warp::Redux {
            op: match op {
                Reduction::Sum => ReduxOp::Add,
                Reduction::Max => ReduxOp::Max,
                Reduction::Min => ReduxOp::Min,
            },
            ty: T::TY,
            dst,
            src,
            membermask: Operand::Imm(0xffff_ffff),
        });
    }
    out
}

/// `a op b` of one reduction step.
fn combine<T: Num>(op: Reduction, a: Var<T>, b: Var<T>) -> Var<T> {
    match op {
        Reduction::Sum => a + b,
        Reduction::Max => a.max(b),
        Reduction::Min => a.min(b),
    }
}

/// The butterfly: after the steps with masks 16, 8, 4, 2, 1 every lane holds the reduction
/// of all 32 (each step combines pairs of lanes that hold disjoint halves).
fn butterfly(op: Reduction, v: Var<f32>) -> Var<f32> {
    let mut acc = v;
    for mask in [16u32, 8, 4, 2, 1] {
        acc = combine(op, acc, shfl_xor(acc, mask));
    }
    acc
}

impl Reduce for i32 {
    fn warp_reduce(op: Reduction, v: Var<i32>) -> Var<i32> {
        redux(op, v)
    }
}

impl Reduce for u32 {
    fn warp_reduce(op: Reduction, v: Var<u32>) -> Var<u32> {
        redux(op, v)
    }
}

impl Reduce for f32 {
    fn warp_reduce(op: Reduction, v: Var<f32>) -> Var<f32> {
        butterfly(op, v)
    }
}

impl Reduce for f16 {
    fn warp_reduce(op: Reduction, v: Var<f16>) -> Var<f16> {
        butterfly(op, v.cast::<f32>()).cast::<f16>()
    }
}

impl Reduce for bf16 {
    fn warp_reduce(op: Reduction, v: Var<bf16>) -> Var<bf16> {
        butterfly(op, v.cast::<f32>()).cast::<bf16>()
    }
}

/// The sum of `v` over the 32 lanes of the warp, in every lane (`redux.sync.add` for 32-bit
/// integers, wrapping; five `shfl.sync.bfly` and adds for floats).
pub fn warp_sum<T: Reduce>(v: impl IntoVar<T>) -> Var<T> {
    T::warp_reduce(Reduction::Sum, v.into_var())
}

/// The largest `v` of the warp's 32 lanes, in every lane.
pub fn warp_max<T: Reduce>(v: impl IntoVar<T>) -> Var<T> {
    T::warp_reduce(Reduction::Max, v.into_var())
}

/// The smallest `v` of the warp's 32 lanes, in every lane.
pub fn warp_min<T: Reduce>(v: impl IntoVar<T>) -> Var<T> {
    T::warp_reduce(Reduction::Min, v.into_var())
}

/// A reduction over every thread of a block of `threads` threads (a multiple of 32, at most
/// 1024, laid out along x), through a shared array of one value per warp (CUB's
/// `BlockReduce`). Make it once per kernel and call it as often as needed: each call ends with
/// a `bar.sync`, so the array is free again for the next.
#[derive(Debug, Clone, Copy)]
pub struct BlockReduce<T> {
    scratch: SharedPtr<T>,
    warps: u32,
}

impl<T: Reduce> BlockReduce<T> {
    /// Allocates the shared array `name` (one `T` per warp) for blocks of `threads` threads.
    /// A thread count that is not a multiple of 32 in 32..=1024 is a build error.
    pub fn new(k: &KernelBuilder, name: &str, threads: u32) -> Self {
        if threads == 0 || !threads.is_multiple_of(32) || threads > 1024 {
            super::context::record_error(|kernel| {
                super::error::BuildError::BadArgument {
                kernel,
                message: format!(
                    "BlockReduce `{name}` over {threads} threads: a block reduction takes a multiple of 32 threads, at most 1024"
                ),
            }
            });
        }
        let warps = (threads / 32).max(1);
        let scratch = k.shared_array::<T>(name, u64::from(warps), 4.max(T::TY.bytes()));
        BlockReduce { scratch, warps }
    }

    /// The number of warps it reduces over.
    pub fn warps(&self) -> u32 {
        self.warps
    }

    /// The reduction of `v` over the block, in every thread.
    pub fn reduce(&self, op: Reduction, v: impl IntoVar<T>) -> Var<T> {
        let partial = T::warp_reduce(op, v.into_var());
        if self.warps == 1 {
            return partial;
        }
        let t = thread_idx_x();
        let (lane, warp) = (t % 32u32, t / 32u32);
        lane.eq_(0u32).if_(|_| self.scratch.store_at(warp, partial));
        sync_threads();
        // Every warp reads the warps' results (lanes past them repeat the first, which changes
        // neither a max nor a min, and a sum masks them out) and reduces them.
        let first = self.scratch.load_at(0u32);
        let mine = self
            .scratch
            .load_at(select(lane.lt(self.warps), lane, 0u32));
        let mine = match op {
            Reduction::Sum => select(lane.lt(self.warps), mine, Var::konst(zero::<T>())),
            Reduction::Max | Reduction::Min => select(lane.lt(self.warps), mine, first),
        };
        let total = T::warp_reduce(op, mine);
        // The next call may overwrite the array only once everyone has read it.
        sync_threads();
        total
    }

    /// The sum over the block, in every thread.
    pub fn sum(&self, v: impl IntoVar<T>) -> Var<T> {
        self.reduce(Reduction::Sum, v)
    }

    /// The largest value of the block, in every thread.
    pub fn max(&self, v: impl IntoVar<T>) -> Var<T> {
        self.reduce(Reduction::Max, v)
    }

    /// The smallest value of the block, in every thread.
    pub fn min(&self, v: impl IntoVar<T>) -> Var<T> {
        self.reduce(Reduction::Min, v)
    }
}

/// The zero of `T` (a sum's identity).
fn zero<T: DeviceType>() -> T {
    let c = match T::TY.is_float() {
        true => super::value::Const::Float(0.0),
        false => super::value::Const::Int(0),
    };
    T::from_const(c).unwrap_or_else(|| unreachable!("every reducible type has a zero"))
}
