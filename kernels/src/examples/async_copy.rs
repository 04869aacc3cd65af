//! `dst = src` through shared memory, double-buffered with `cp.async`.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("async_copy.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The default block size.
pub const THREADS: u32 = 128;

/// Floats one thread moves per chunk: one 16-byte `cp.async`.
pub const PER_THREAD: u32 = 4;

/// The targets [`async_copy`] runs on: `cp.async` exists from sm_80.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// `dst[i] = src[i]` for every `i < n`, any `n`, staged through shared memory.
///
/// The array is cut in chunks of `4 * threads` floats; block `b` copies chunks `b, b + G, ...`
/// (`G` blocks in the grid) through two shared buffers. Before it stores chunk `c` from one
/// buffer, it has already issued the `cp.async` of its next chunk into the other
/// (`commit_group`, then `wait_group 1`: the current chunk has landed, the next may still be in
/// flight), so loads overlap stores. Each thread copies 16 bytes per chunk in (a 16-byte `cp.async`
/// whose source size is cut at `n`: the tail of the buffer is zero-filled, nothing past `n` is
/// read), and stores 4 floats out at stride `threads` (a warp stores 32 consecutive floats), so
/// every element goes through another thread's copy: `bar.sync` separates the two, and a second
/// `bar.sync` ends the iteration before a buffer is refilled.
///
/// `src` must be 16-byte aligned (the `cp.async` width); indices are `u32`. Launch with exactly
/// `threads` threads per block (`.reqntid`) and any number of blocks.
#[kernel]
pub fn async_copy(
    #[host] threads: u32,
    k: &KernelBuilder,
    #[len(n)] src: ConstPtr<f32>,
    #[len(n)] dst: GlobalPtr<f32>,
    n: Var<u32>,
) {
    k.require_threads(threads, 1, 1);
    let chunk = threads * PER_THREAD;
    let buf = k.shared_array::<f32>("buf", u64::from(2 * chunk), 16);
    let t = thread_idx_x();
    let chunks = (n + (chunk - 1)) / chunk;
    let stride = grid_dim_x();

    // Starts the copy of chunk `c` into buffer `stage` (0 or 1) and closes its group.
    let issue = |c: Var<u32>, stage: Var<u32>| {
        let base = c * chunk + t * PER_THREAD;
        let inside = base.lt(n);
        let bytes = select(inside, (n - base).min(PER_THREAD), 0u32) * 4;
        // A copy of 0 bytes reads nothing; point it at element 0 anyway.
        let from = select(inside, base, 0u32);
        cp_async(
            buf + (stage * chunk + t * PER_THREAD),
            (src + from).cast_mut(),
            16,
            Some(bytes),
        );
        cp_async_commit();
    };

    let first = block_idx_x();
    let mut stage = Var::konst(0u32).fresh();
    if first.lt(chunks) {
        issue(first, stage);
    }
    for c in (first..chunks).step_by(stride) {
        let next = c + stride;
        if next.lt(chunks) {
            issue(next, stage ^ 1u32);
            cp_async_wait_group(1);
        } else {
            cp_async_wait_group(0);
        }
        sync_threads();
        for e in 0..PER_THREAD {
            let i = c * chunk + e * threads + t;
            if i.lt(n) {
                dst.store_at(i, buf.load_at(stage * chunk + e * threads + t));
            }
        }
        sync_threads();
        stage = stage ^ 1u32;
    }
}

// SAFETY: each `cp.async` reads the elements of `src` below `n` (its source size is cut there,
// 0 bytes past it) and each store writes `dst` below `n`; the typed launch checks `n` against
// both buffers (`#[len(n)]`); only `dst` is written.
unsafe impl TrustedKernel for AsyncCopyKernel {}

/// The registry's configuration: [`THREADS`] threads per block.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    async_copy(THREADS)
}
