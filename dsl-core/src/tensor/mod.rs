//! Device tensors: an engine (a global or shared base pointer, or a register fragment) seen
//! through a [`crate::tiled::View`], and the operations CuTe performs on them inside a kernel:
//! slicing with host and device coordinates, `copy` with a tiled copy's atom per value group,
//! `gemm` with `mma.sync`, `clear`, `cp_async_fence` and `cp_async_wait`.
//!
//! Offsets split into a static part (a host integer folded into the instruction's immediate
//! offset) and a dynamic part (registers computed once, where the tensor is partitioned or
//! sliced). For a swizzled shared tensor the swizzle applies to the *sum*; a dynamic index whose
//! strides are multiples of the swizzle's period `2^(M+S+B)` (a pipeline stage, say) commutes with
//! it and is added after, and so is the static part above the period. What is left inside the
//! swizzle, the thread's offset plus the static part below the period, costs one `add`, `and`,
//! `shr` and `xor` per distinct static remainder and copy.
//!
//! Global tensors have a row stride known only on the device (`K` of a GEMM): their views encode
//! an element `(row, col)` of the tile as `row * ROW + col` ([`ROW`]), which every layout
//! operation carries through linearly (CuTe's arithmetic-tuple strides), and the address is
//! computed with the runtime row stride. Bounds are checked per row and column for predication.

mod copy;
mod dyn_eval;
mod fragment;
mod global;
mod shared;

pub use copy::{
    clear, copy_g2s, copy_s2r, cp_async_fence, cp_async_wait, cp_async_wait_n, gemm, store_fragment,
};
pub use dyn_eval::{eval_dyn, split_rows};
pub use fragment::Fragment;
pub use global::{GTensor, ROW};
pub use shared::STensor;

use crate::kernel::Var;

/// One item of a device slicing coordinate.
#[derive(Clone, Copy, Debug)]
pub enum Idx {
    /// A host coordinate, folded into the static offset.
    At(i64),
    /// A coordinate in a register (a k-tile, a pipeline stage), `< extent` of its mode.
    Dyn(Var<u32>),
    /// CuTe's `_`: the mode is kept.
    All,
}

#[cfg(test)]
mod tests;
