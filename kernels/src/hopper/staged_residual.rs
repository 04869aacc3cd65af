//! The residual through the staging tile. With the epilogue warps (`_x`) and the residual alone
//! (`D = alpha acc + R`), one of the warps' threads loads each tile's R by TMA into the
//! consumers' staging tiles while the consumers run the tile's main loop, and the consumers add
//! it to their sums as they stage them: `ldmatrix` of R from where their `stmatrix` writes, the
//! sum in f32, rounded once. The warps are left the TMA store alone.
//!
//! Why: read by the warps 16 bytes a thread (43 passes of a 128 x 256 tile), the residual cost
//! 6.5% over the plain GEMM at 4096^3 on the H100 where the hand-over alone cost 1%, whatever
//! the loads' depth or the adds' width; cuBLAS's `D = AB + C` cost 1.6% there. CUTLASS's
//! epilogues load their source by TMA likewise. Through the staging (results/blas.md, seventh
//! 2026-12-06 session, H100): 16384 x 6144 x 4096 +9.0% -> +3.0%, 8192^3 +4.0% -> +1.5%,
//! 4096^3 +7.1% -> +5.7%, 512 x 6144 x 4096 (one tile a block) +9.0% -> +6.2%.
//!
//! | the warps' thread 0 (each tile) | consumers (each tile) |
//! |---|---|
//! | the last store has read the staging: `arrive_expect_tx`, R's boxes into each consumer's staging | the tile's main loop |
//! | `free.arrive` | `free.sync`, then the wait on `residual_full` |
//! | | `ldmatrix` of R, the sums plus R, `stmatrix`, `staged.arrive` |
//!
//! The load overwrites the staging only after the last store has read it (the warps' thread
//! waits for that before the next tile's `free`), and the consumers read it only after the
//! barrier's phase completes; rows past M and columns past N load as zeros and are never stored.
//!
//! ```
//! use kernels::gemm::epilogue::{Activation, Epilogue};
//! use kernels::hopper::schedule::HopperSchedule;
//! use kernels::hopper::staged_residual::staged_residual;
//! let x: HopperSchedule = "128x256x64s3_h_x_n".parse().unwrap();
//! let plain: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
//! assert!(staged_residual(&x, &Epilogue::RESIDUAL));
//! // The consumers stage their sums themselves without the warps: R is read from global.
//! assert!(!staged_residual(&plain, &Epilogue::RESIDUAL));
//! // After an activation, R is the warps' to add.
//! assert!(!staged_residual(&x, &Epilogue::bias_act(Activation::Relu)));
//! ```

use dsl_core::atom::{CopyAtom, LdsmN};
use dsl_core::kernel::*;
use dsl_core::pipeline::{PipelineState, TmaBarriers};
use dsl_core::tensor::{copy, Fragment, STensor};
use dsl_macros::device;
use half::{bf16, f16};

use super::epilogue_warps::{consumer_tiles, Packed};
use super::plan::HopperPlan;
use super::roles::{Output, Unit};
use super::schedule::HopperSchedule;
use super::HopperError;
use crate::gemm::epilogue::Epilogue;
use crate::gemm::{GemmDtype, GemmElem};

/// Whether `epilogue`'s residual comes through the staging wherever the epilogue warps take
/// its tiles: the residual alone (after a bias or an activation, R is added by the warps, who
/// apply them).
pub fn stages_its_residual(epilogue: &Epilogue) -> bool {
    *epilogue == Epilogue::RESIDUAL
}

/// Whether `schedule` takes `epilogue`'s residual through the staging tile: the epilogue warps
/// store its tiles, and the epilogue's residual comes that way ([`stages_its_residual`]).
pub fn staged_residual(schedule: &HopperSchedule, epilogue: &Epilogue) -> bool {
    schedule.epilogue_warps() && stages_its_residual(epilogue)
}

/// The kernel's side: R's tensor map (a parameter after the form's), the barrier each tile's
/// loads complete, and the phase a consumer waits for next there.
#[derive(Clone, Copy)]
pub(super) struct StagedResidual<'a> {
    map: &'a TensorMap,
    full: TmaBarriers,
    /// Registers of every thread, made before the roles part; only the consumers move them on.
    phase: PipelineState,
}

impl<'a> StagedResidual<'a> {
    /// R's map and its barrier (one stage: a tile's loads, one arrival).
    pub(super) fn new(kb: &KernelBuilder, map: &'a TensorMap) -> StagedResidual<'a> {
        StagedResidual {
            map,
            full: TmaBarriers::new(kb, "residual_full", 1, 1),
            phase: PipelineState::consumer(1),
        }
    }

    /// The block's thread 0, before the roles: the barrier, and the map into the cache.
    pub(super) fn init(&self) {
        prefetch_tensor_map(self.map);
        self.full.init();
    }
}

/// The epilogue warps' thread `e`, once the staging may be overwritten: thread 0 loads `unit`'s
/// R into every consumer's staging tile, completing on `r`'s barrier.
#[device]
pub(super) fn load_residual<T: GemmElem>(
    r: &StagedResidual,
    plan: &HopperPlan,
    out: &Output<T>,
    unit: &Unit,
    e: Var<u32>,
) {
    if let Some(copy) = &plan.tma_residual {
        if e.eq_(0u32) {
            let tiles = consumer_tiles(plan, out, unit);
            mbarrier_arrive_expect_tx(r.full.at(0u32), tiles.len() as u32 * copy.bytes());
            for (origin, staging) in tiles {
                copy.load(r.map, &origin, staging, r.full.at(0u32), None);
            }
        }
    }
}

/// A consumer thread, once per tile: when the tile's R has landed on `r`'s barrier, `sums` (its
/// sub-tile's f32 values, as the `stmatrix` copy reads them) plus R's values read from `part`
/// (its `stmatrix` partition of the staging) by `ldmatrix`, the inverse copy.
#[device]
pub(super) fn plus_residual<T: GemmElem>(
    r: &StagedResidual,
    plan: &HopperPlan,
    (part, sums): (&STensor<T>, &Fragment<f32>),
    d16: GemmDtype,
) -> Result<Fragment<f32>, HopperError> {
    let mut phase = r.phase;
    r.full.wait(&phase);
    phase.advance();
    let words = Fragment::<u32>::new(sums.layout.clone(), 2)?;
    copy(
        &CopyAtom::new(LdsmN { n: 4 }, plan.dtype.val_type())?,
        part,
        &words,
    )?;
    let regs = match d16 {
        GemmDtype::F16 => plus_pairs::<f16>(&sums.regs, &words.regs),
        GemmDtype::Bf16 => plus_pairs::<bf16>(&sums.regs, &words.regs),
    };
    Ok(Fragment {
        regs,
        ..sums.clone()
    })
}

/// `sums[2i] + lo(words[i])` and `sums[2i + 1] + hi(words[i])` in f32: the order in which
/// [`Fragment::to_pairs`] packs the sums for `stmatrix`, and `ldmatrix` returns what it stored.
fn plus_pairs<O: Packed>(sums: &[Var<f32>], words: &[Var<u32>]) -> Vec<Var<f32>> {
    sums.chunks(2)
        .zip(words)
        .flat_map(|(pair, w)| {
            let [lo, hi] = w.bitcast::<O::Pair>().unpack();
            [pair[0] + lo.cast::<f32>(), pair[1] + hi.cast::<f32>()]
        })
        .collect()
}
