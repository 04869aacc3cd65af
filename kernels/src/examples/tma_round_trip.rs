//! A 2-D tile in with TMA, out with TMA, an mbarrier in between (sm_90a and up).
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("tma_round_trip.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The default box: 64 rows of 32 floats (8 KiB; a 128-byte inner row).
pub const BOX: TmaBox = TmaBox { rows: 64, cols: 32 };

/// The default block size.
pub const THREADS: u32 = 128;

/// The targets [`tma_round_trip`] runs on: TMA and `mbarrier.try_wait` need sm_90.
pub const TARGETS: &[Target] = &[Target::Sm90a, Target::Sm100a];

/// The box one block moves, in elements; the tensor maps must be encoded with the same box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaBox {
    /// Rows (the outer dimension).
    pub rows: u32,
    /// Columns (the inner, contiguous dimension).
    pub cols: u32,
}

/// Copies a 2-D f32 tensor box by box: block `(bx, by)` loads the box at column `bx * box.cols`,
/// row `by * box.rows` of `src_map` into shared memory and stores it to the same place of
/// `dst_map`; with `negate`, the block's threads negate the tile in shared memory in between.
///
/// The protocol: thread 0 initialises an mbarrier for one arrival and publishes it
/// (`fence.mbarrier_init`, `bar.sync`); it then arrives with `expect_tx` = the box's bytes and
/// issues the TMA load, whose completion counts those bytes on the barrier; every thread waits
/// for phase 0 (`mbarrier.try_wait.parity` in a loop). Threads that wrote the tile make their
/// writes visible to the TMA unit (`fence.proxy.async`), `bar.sync` gathers the block, and thread 0
/// issues the TMA store and waits until it has read shared memory (`cp.async.bulk.wait_group.read
/// 0`) before the block exits. TMA clips boxes at the tensor's edge: the load fills the outside
/// with zeros, the store writes nothing there, so any extents work.
///
/// Launch grid `(ceil(cols / box.cols), ceil(rows / box.rows))` with any block of at least one
/// thread; both maps describe f32 tensors of one shape with box `box.cols x box.rows`, no swizzle
/// or interleave.
#[kernel]
pub fn tma_round_trip(
    #[host] tile_box: TmaBox,
    #[host] negate: bool,
    k: &KernelBuilder,
    src_map: ConstTensorMap,
    dst_map: TensorMap,
) {
    let elems = tile_box.rows * tile_box.cols;
    // 128 bytes: the alignment TMA asks of a shared box without swizzle (1024 would allow one).
    let tile = k.shared_array::<f32>("tile", u64::from(elems), 128);
    let bar = k.shared_array::<u64>("bar", 1, 8);
    let t = thread_idx_x();
    let x = (block_idx_x() * tile_box.cols).cast::<i32>();
    let y = (block_idx_y() * tile_box.rows).cast::<i32>();

    if t.eq_(0u32) {
        prefetch_tensor_map(&src_map);
        mbarrier_init(bar, 1u32);
        fence_mbarrier_init();
    }
    sync_threads();
    if t.eq_(0u32) {
        mbarrier_arrive_expect_tx(bar, elems * 4);
        tma_load(tile, &src_map, &[x, y], bar);
    }
    mbarrier_wait(bar, 0u32);

    if negate {
        for i in (t..elems).step_by(block_dim_x()) {
            tile.store_at(i, -tile.load_at(i));
        }
        // Generic-proxy writes become visible to the TMA store only through this fence.
        fence_proxy_async_shared();
    }
    sync_threads();
    if t.eq_(0u32) {
        tma_store(&dst_map, &[x, y], tile);
        bulk_commit_group();
        bulk_wait_group_read(0);
    }
}

// SAFETY: the kernel reaches global memory only through its two maps, whose extents the
// encoder checked against their buffers (TMA clips boxes at them); it stores only through
// `dst_map`, whose buffer the typed launch borrows mutably.
unsafe impl TrustedKernel for TmaRoundTripKernel {}

/// The registry's configuration: box [`BOX`], a plain round trip.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    tma_round_trip(BOX, false)
}
