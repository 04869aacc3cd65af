//! The builder API: write a kernel as a Rust closure, get a [`crate::ir::Kernel`].
//!
//! [`build_kernel`] keeps the kernel under construction in a thread-local context, so that device
//! values ([`Var`]) can use ordinary operators. Host values stay Rust values: a `bool`
//! condition picks a branch now, a host range unrolls, a host constant folds. Device values
//! emit IR: a `Var<bool>` condition emits [`crate::ir::Stmt::If`], a range with a `Var` bound
//! emits [`crate::ir::Stmt::For`]. The control-flow entry points ([`Cond`], [`if_value`],
//! [`range`], [`while_`], [`Assign`]) are what the `#[kernel]` macro writes; a user can write them
//! by hand.
//!
//! ```
//! use dsl_core::kernel::*;
//!
//! let k = build_kernel("vadd", |k| {
//!     let a = k.param_ptr::<f32>("a");
//!     let b = k.param_ptr::<f32>("b");
//!     let c = k.param_ptr::<f32>("c");
//!     let n = k.param::<u32>("n");
//!     let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!     i.lt(n).if_(|_| {
//!         let s = a.load_at(i) + b.load_at(i);
//!         c.store_at(i, s);
//!     });
//! })
//! .unwrap();
//! assert_eq!(k.params.len(), 4);
//! ```

pub mod context;
pub mod control;
pub mod error;
mod fold;
pub mod half2;
mod half_words;
pub mod intrinsics;
pub mod location;
pub mod macro_support;
mod masked;
pub mod math;
pub mod memory;
pub mod operators;
pub mod ops;
mod readonly;
pub mod reduce;
pub mod signature;
pub mod value;

pub use context::{build_kernel, emit, KernelBuilder};
pub use control::{
    if_value, pred_register, range, while_, Arm, Assign, Cond, DeviceRange, Fresh, HostRange,
    HostValue, Iterate, LoopCond, LoopPart, MakeRange, Merge, RangeInt, ValueCond,
};
pub use error::BuildError;
pub use half2::Pair;
pub use intrinsics::*;
pub use location::{current_location, location_scope, set_location, LocationScope};
pub use math::Float;
pub use memory::{CacheLevel, GlobalPtr, Offset, SharedPtr, TensorMap};
pub use ops::{select, Divisible, Int, Logic, Num, Signed};
pub use readonly::{ConstPtr, ConstTensorMap};
pub use reduce::{warp_max, warp_min, warp_sum, BlockReduce, Reduce, Reduction};
pub use signature::{KernelSignature, TrustedKernel, TypedKernel};
pub use value::{BF16x2, Const, DeviceType, F16x2, IntoVar, Var};

#[cfg(test)]
mod tests;
