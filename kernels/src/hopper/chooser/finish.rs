//! Whether a fused epilogue goes to the epilogue warps (`_x`): where the warps finish a tile in
//! well under the time the consumers take over the next tile's main loop, so that the
//! epilogue's math and loads run under the tensor cores' work instead of between tiles. (Which
//! forms may go to them at all is the program's: an elementwise epilogue of a 16-bit D that
//! reads no C.)
//!
//! The estimate is made from the kernels' instruction counts, not yet from timings: per pass
//! of the warps' 96 threads over 8-column chunks, about [`PASS_CYCLES`] cycles of issue (an
//! activation of a few instructions per value on 8 values, read and written back in shared
//! memory), and where a pass reads C or the residual, about [`LOAD_CYCLES`] more for the loads
//! it waits on (one chunk in flight per thread; their lines were asked into L2 while the
//! tile's main loop ran, so the wait is on L2, not on memory). A k-tile's
//! `wgmma` at the tensor cores' peak takes `2 M N K / 4096` cycles of the tile's SM. The warps
//! take the tile when their estimate is at most half the main loop's, and where the blocks walk
//! two tiles or more: a block's last tile has no main loop after it to hide under (the
//! consumers help the warps finish it), so a walk of one tile a block gains nothing and pays
//! the staging's round trip. (Measured on an H100, 2026-12-05, before the consumers helped: at
//! one tile a block, bias + GELU cost +6% to +14% over plain under the warps against +2% to
//! +9% on the consumers; at 2048 x 28672 x 4096, 4 tiles a block, +0.9% against +11.2%.)
//!
//! ```
//! use kernels::gemm::epilogue::{Activation, Elementwise, Epilogue, Map, Residual};
//! use kernels::hopper::chooser::finish::epilogue_warps_pay;
//! use kernels::hopper::schedule::HopperSchedule;
//! let tile: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
//! let gelu = Epilogue::bias_act(Activation::GeluTanh);
//! let sms = 132;
//! assert!(epilogue_warps_pay(&tile, (4096, 4096, 4096), &gelu, sms));
//! // Two k-tiles: the warps would take longer than the main loop they hide under.
//! assert!(!epilogue_warps_pay(&tile, (4096, 4096, 128), &gelu, sms));
//! // 112 tiles, one a block: nothing to hide under.
//! assert!(!epilogue_warps_pay(&tile, (128, 28672, 4096), &gelu, sms));
//! // A residual after an activation is the warps' to read: a longer K pays for its loads.
//! let relu_r = Epilogue::Elementwise(Elementwise {
//!     map: Map::Activation(Activation::Relu),
//!     residual: Residual::Add,
//!     ..Elementwise::IDENTITY
//! });
//! assert!(!epilogue_warps_pay(&tile, (4096, 4096, 1024), &relu_r, sms));
//! assert!(epilogue_warps_pay(&tile, (4096, 4096, 8192), &relu_r, sms));
//! // The residual alone comes by TMA into the staging under the warps: always.
//! assert!(epilogue_warps_pay(&tile, (128, 28672, 1024), &Epilogue::RESIDUAL, sms));
//! ```

use crate::gemm::epilogue::Epilogue;
use crate::hopper::schedule::{HopperSchedule, EPILOGUE_CHUNK_COLS, EPILOGUE_THREADS};
use crate::hopper::staged_residual::stages_its_residual;

/// Cycles of one pass of the epilogue warps over their chunks, issue only (the SASS of
/// bias + GELU: about 90 instructions per pass, one warp per scheduler).
pub const PASS_CYCLES: u64 = 120;

/// Cycles a pass waits for its 16-byte loads of C or the residual: an L2 hit while the SM's
/// loads stream the operands. Kept since the chunks are loaded four passes ahead: on the H100
/// that changed the residual's cost by nothing measurable (results/blas.md, 2026-12-06, fourth
/// session), so the wait this prices was not what the residual paid.
pub const LOAD_CYCLES: u64 = 350;

/// Tensor-core flops per SM per cycle (16-bit inputs, f32 sums, dense `wgmma`).
const FLOPS_PER_CYCLE: u64 = 4096;

/// Whether the epilogue warps pay for `schedule` over `m x n x k` on `sms` SMs: its blocks walk
/// two tiles or more, each tile's main loop long enough that the warps finish a tile of
/// `epilogue` in at most half of it (the module's estimate).
pub fn epilogue_warps_pay(
    schedule: &HopperSchedule,
    (m, n, k): (usize, usize, usize),
    epilogue: &Epilogue,
    sms: u32,
) -> bool {
    // Under the warps the residual alone comes by TMA into the staging under the tile's own
    // main loop, and the consumers add it: the warps only store, and even a block's one tile
    // gains.
    if stages_its_residual(epilogue) {
        return true;
    }
    let (bm, bn, bk) = schedule.tile.mnk();
    let (bm, bn, bk) = (u64::from(bm), u64::from(bn), u64::from(bk));
    let tiles = (m as u64).div_ceil(bm) * (n as u64).div_ceil(bn);
    if tiles.div_ceil(u64::from(sms.max(1))) < 2 {
        return false;
    }
    let passes = (bm * bn / u64::from(EPILOGUE_CHUNK_COLS)).div_ceil(u64::from(EPILOGUE_THREADS));
    let loads = epilogue.reads_c() || epilogue.adds_residual();
    let finish = passes * (PASS_CYCLES + if loads { LOAD_CYCLES } else { 0 });
    let k_tiles = (k as u64).div_ceil(bk);
    let main_loop = k_tiles * 2 * bm * bn * bk / FLOPS_PER_CYCLE;
    2 * finish <= main_loop
}
