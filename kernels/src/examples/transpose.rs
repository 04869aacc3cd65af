//! `dst = src^T` through a padded 32x32 shared-memory tile.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("transpose.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The tile edge: a block transposes one `TILE x TILE` tile.
pub const TILE: u32 = 32;

/// The default number of tile rows a block covers per pass (the block is `TILE x BLOCK_ROWS`).
pub const BLOCK_ROWS: u32 = 8;

/// The targets [`transpose`] runs on: plain loads, stores and `bar.sync`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// `dst[c * rows + r] = src[r * cols + c]`: `src` is `rows x cols` row-major, `dst` the
/// `cols x rows` transpose, for any `rows` and `cols` (`rows * cols < 2^32`).
///
/// Block `(bx, by)` moves the tile of rows `by*32..` and columns `bx*32..` of `src`. Its
/// `32 x block_rows` threads read the tile row by row (coalesced: a warp reads 32 consecutive
/// floats of one row) into shared memory, wait at `bar.sync`, and write it out row by row of `dst`,
/// reading a column of the shared tile. A shared row is 33 floats, not 32: the padding puts the 32
/// elements of a tile column in 32 different banks, so the column reads are conflict free.
/// Elements outside the matrix are neither read nor written.
///
/// Launch with grid `(ceil(cols/32), ceil(rows/32))` and block `(32, block_rows)`, exactly
/// (`.reqntid`); `block_rows` divides 32.
#[kernel]
pub fn transpose(
    #[host] block_rows: u32,
    k: &KernelBuilder,
    #[len(rows * cols)] src: ConstPtr<f32>,
    #[len(rows * cols)] dst: GlobalPtr<f32>,
    rows: Var<u32>,
    cols: Var<u32>,
) {
    k.require_threads(TILE, block_rows, 1);
    const PITCH: u32 = TILE + 1;
    let tile = k.shared_array::<f32>("tile", u64::from(TILE * PITCH), 16);
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (col0, row0) = (block_idx_x() * TILE, block_idx_y() * TILE);
    for j in (0..TILE).step_by(block_rows) {
        let (r, c) = (row0 + ty + j, col0 + tx);
        if r.lt(rows) & c.lt(cols) {
            tile.store_at((ty + j) * PITCH + tx, src.load_at(r * cols + c));
        }
    }
    sync_threads();
    // Row r of dst is column r of src: the tile's column (ty + j), read across the padded rows.
    for j in (0..TILE).step_by(block_rows) {
        let (r, c) = (col0 + ty + j, row0 + tx);
        if r.lt(cols) & c.lt(rows) {
            dst.store_at(r * rows + c, tile.load_at(tx * PITCH + ty + j));
        }
    }
}

// SAFETY: the tile is read from `src` and written to `dst` only at (row, column) below (rows,
// cols), index `row * cols + column` (or its transpose) below `rows * cols`, which the typed
// launch checks against both buffers; only `dst` is written.
unsafe impl TrustedKernel for TransposeKernel {}

/// The registry's configuration: 32 x 8 threads, four rows each.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    transpose(BLOCK_ROWS)
}
