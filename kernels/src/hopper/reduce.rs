//! The split-K reduction: `D = sum_s partials[s]`, f32 sums rounded once to the output type.
//!
//! A split of [`hopper_ws`](super::program::hopper_ws) writes its f32 partial tile to its own
//! slice of the workspace rather than adding into D, so the reduction adds the slices in a fixed
//! order (the result is deterministic, the same for every run) and rounds to 16 bits once, as
//! the unsplit kernel does.

use dsl_core::kernel::*;
use dsl_macros::kernel;

use crate::gemm::{GemmDtype, GemmElem};

/// Threads per block of [`splitk_reduce`].
pub const REDUCE_THREADS: u32 = 256;

/// Elements each thread reduces (one 16-byte load per slice).
pub const REDUCE_VEC: u32 = 4;

/// `d[i] = sum_{s < splits} partials[s * elems + i]` for `i < elems`, rounded to `T`.
///
/// `elems` is a multiple of [`REDUCE_VEC`] (an `m x n` output with TMA's 16-byte rows has
/// `n % 8 == 0`), `partials` is 16-byte and `d` 8-byte aligned, and `splits * elems < 2^32`.
/// Launch `ceil(elems / (REDUCE_VEC * REDUCE_THREADS))` blocks of [`REDUCE_THREADS`].
#[kernel]
pub fn splitk_reduce<T: GemmElem>(
    kb: &KernelBuilder,
    partials: GlobalPtr<f32>,
    d: GlobalPtr<T>,
    elems: Var<u32>,
    splits: Var<u32>,
) {
    kb.max_threads(REDUCE_THREADS, 1, 1);
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) * REDUCE_VEC;
    if i.lt(elems) {
        let mut sum = (partials + i).load_vec::<4>();
        for s in 1u32..splits {
            let x = (partials + (s * elems + i)).load_vec::<4>();
            for j in 0..4 {
                sum[j].set(sum[j] + x[j]);
            }
        }
        match T::DTYPE {
            GemmDtype::Bf16 => (d.cast::<BF16x2>() + i / 2)
                .store_vec::<2>([pack_bf16x2(sum[0], sum[1]), pack_bf16x2(sum[2], sum[3])]),
            GemmDtype::F16 => (d.cast::<F16x2>() + i / 2)
                .store_vec::<2>([pack_f16x2(sum[0], sum[1]), pack_f16x2(sum[2], sum[3])]),
        }
    }
}

/// Blocks of [`REDUCE_THREADS`] that cover `elems` outputs.
pub fn reduce_blocks(elems: u32) -> u32 {
    elems.div_ceil(REDUCE_VEC * REDUCE_THREADS).max(1)
}
