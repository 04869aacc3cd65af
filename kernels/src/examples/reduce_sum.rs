//! Sum of `n` floats: per-thread sums, `shfl.down` within warps, shared memory across warps.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("reduce_sum.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The default block size.
pub const THREADS: u32 = 256;

/// The targets [`reduce_sum`] runs on: shuffles, shared memory and `bar.sync`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// `out[blockIdx.x] = ` the sum of the elements `x[i]`, `i < n`, that this block visits.
///
/// Each thread adds up the elements `i = g, g + G, g + 2G, ...` (`g` its index in the grid, `G`
/// the grid's thread count), so a grid of any size covers all `n`. A warp then folds its 32
/// partial sums with `shfl.sync.down` by 16, 8, 4, 2, 1 (lane 0 holds the warp's sum), lane 0 of
/// each warp puts it in shared memory, and after `bar.sync` warp 0 folds those `threads / 32`
/// values the same way; thread 0 writes the block's sum.
///
/// A whole sum takes two launches of this kernel: one over `x` with `B` blocks into `partial[B]`,
/// then one block over `partial` with `n = B` into `out[0]`. No output needs zeroing first, and the
/// summation order is fixed by the grid, so a launch repeats bit for bit.
///
/// Launch with exactly `threads` threads per block (`.reqntid`), a multiple of 32 up to 1024.
#[kernel]
pub fn reduce_sum(
    #[host] threads: u32,
    k: &KernelBuilder,
    #[len(n)] x: ConstPtr<f32>,
    out: GlobalPtr<f32>,
    n: Var<u32>,
) {
    k.require_threads(threads, 1, 1);
    let warps = threads / 32;
    let warp_sums = k.shared_array::<f32>("warp_sums", u64::from(warps), 4);
    let t = thread_idx_x();
    let (lane, warp) = (t % 32, t / 32);

    // A register, not a constant: the device loop below writes it.
    let mut acc = Var::konst(0.0f32).fresh();
    let stride = block_dim_x() * grid_dim_x();
    for i in (block_idx_x() * block_dim_x() + t..n).step_by(stride) {
        acc = acc + x.load_at(i);
    }
    for delta in [16u32, 8, 4, 2, 1] {
        acc = acc + shfl_down(acc, delta);
    }
    if lane.eq_(0u32) {
        warp_sums.store_at(warp, acc);
    }
    sync_threads();

    if warp.eq_(0u32) {
        let mut total = if lane.lt(warps) {
            warp_sums.load_at(lane)
        } else {
            Var::konst(0.0f32)
        };
        // Only the first `warps` lanes hold values: fold no further than needed.
        for delta in [16u32, 8, 4, 2, 1] {
            if delta < warps {
                total = total + shfl_down(total, delta);
            }
        }
        if lane.eq_(0u32) {
            out.store_at(block_idx_x(), total);
        }
    }
}

/// The registry's configuration: [`THREADS`] threads per block.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    reduce_sum(THREADS)
}
