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
//! take the tile when their estimate is at most half the main loop's.
//!
//! ```
//! use kernels::gemm::epilogue::{Activation, Epilogue};
//! use kernels::hopper::chooser::finish::epilogue_warps_pay;
//! use kernels::hopper::schedule::HopperSchedule;
//! let tile: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
//! let gelu = Epilogue::bias_act(Activation::GeluTanh);
//! assert!(epilogue_warps_pay(&tile, 4096, &gelu));
//! // Two k-tiles: the warps would take longer than the main loop they hide under.
//! assert!(!epilogue_warps_pay(&tile, 128, &gelu));
//! // The residual's loads cost more per pass: a longer K pays for them.
//! assert!(!epilogue_warps_pay(&tile, 1024, &Epilogue::RESIDUAL));
//! assert!(epilogue_warps_pay(&tile, 8192, &Epilogue::RESIDUAL));
//! ```

use crate::gemm::epilogue::Epilogue;
use crate::hopper::schedule::{HopperSchedule, EPILOGUE_CHUNK_COLS, EPILOGUE_THREADS};

/// Cycles of one pass of the epilogue warps over their chunks, issue only (the SASS of
/// bias + GELU: about 90 instructions per pass, one warp per scheduler).
pub const PASS_CYCLES: u64 = 120;

/// Cycles a pass waits for its 16-byte loads of C or the residual: an L2 hit while the SM's
/// loads stream the operands.
pub const LOAD_CYCLES: u64 = 350;

/// Tensor-core flops per SM per cycle (16-bit inputs, f32 sums, dense `wgmma`).
const FLOPS_PER_CYCLE: u64 = 4096;

/// Whether `schedule`'s tile over `k` is long enough that the epilogue warps finish a tile
/// of `epilogue` in at most half of a main loop (the module's estimate).
pub fn epilogue_warps_pay(schedule: &HopperSchedule, k: usize, epilogue: &Epilogue) -> bool {
    let (bm, bn, bk) = schedule.tile.mnk();
    let (bm, bn, bk) = (u64::from(bm), u64::from(bn), u64::from(bk));
    let passes = (bm * bn / u64::from(EPILOGUE_CHUNK_COLS)).div_ceil(u64::from(EPILOGUE_THREADS));
    let loads = epilogue.reads_c() || epilogue.adds_residual();
    let finish = passes * (PASS_CYCLES + if loads { LOAD_CYCLES } else { 0 });
    let k_tiles = (k as u64).div_ceil(bk);
    let main_loop = k_tiles * 2 * bm * bn * bk / FLOPS_PER_CYCLE;
    2 * finish <= main_loop
}
