//! The warp-specialized Hopper GEMM, top-down: schedule, shared memory, barriers, the tile
//! walk, then the roles, each a module of short functions: one TMA producer warp
//! ([`super::producer`]) and one or two consumer warpgroups ([`super::consumer`]) that share
//! each stage's B tile (a 64-row cooperative tile has one consumer), with the epilogue through
//! shared memory (`stmatrix`) and a TMA store that the producer does not wait for, or (`_u`)
//! from the registers ([`super::epilogue`]). The kernel is launched programmatically: its setup
//! runs while the stream's previous kernel finishes, and it touches global memory only after
//! `griddepcontrol.wait`.
//!
//! | role | warpgroup | registers | per k-tile |
//! |------|-----------|-----------|------------|
//! | producer | 0 (one elected lane) | 40 | wait `empty[ps]`; arrive on `full[ps]` expecting the stage's bytes; TMA A and B (where the cluster shares a tile, each block its slice of the rows, multicast to all of them) |
//! | consumer `c` | 1 + `c` | 232 | wait `full[cs]`; `wgmma` over the stage's 4 k-blocks (`c`'s half of A, or ping-pong the whole stage of its own tile; all of B); wait for them; arrive on `empty[cs]` of every block of the cluster |
//! | epilogue warps (`_x`) | 0 (warps 1 to 3) | 40 | none: per tile, wait for the consumers' staged tile, apply the form's epilogue to it in place, TMA-store it ([`super::epilogue_warps`]) |
//!
//! After a tile's last k-tile a consumer rounds its accumulators to 16 bits, writes them to its
//! shared output tile with `stmatrix` (once the previous tile's TMA store has read it), and one
//! lane issues the TMA store of it; the producer meanwhile is already loading the next tile.
//!
//! Ping-pong (`_p`, tiles of 64 or 128 rows): the two consumers own alternate tiles of the
//! block's walk instead of halves of each, and their main loops take turns on two named
//! barriers, so that one consumer's epilogue runs under the other's `wgmma`: for a short K,
//! where the epilogue costs as much as the main loop. With one staging tile (`_o`) their
//! epilogues also take turns on it, on two more named barriers.
//!
//! Tiles from a queue (`_q`, ping-pong): the producer takes each of its block's tiles past the
//! first from a counter as it goes and hands their indices to the consumers through a ring in
//! shared memory ([`TileQueue`]), so that blocks that run faster take more of them.
//!
//! A strided batch ([`super::batch`]): the walk's tile rows are every GEMM's, one GEMM after the
//! other; each unit's loads, stores and epilogue take its GEMM's matrices, the tensor maps'
//! third coordinate (or, stored from the registers, D's batch stride).

use dsl_core::kernel::macro_support::KernelParam;
use dsl_core::kernel::*;
use dsl_core::pipeline::{
    cluster_sync, warp_id_in_warpgroup, warpgroup_id, Barriers, TileQueue, TmaBarriers,
    WARPGROUP_THREADS,
};
use dsl_macros::kernel;

use super::batch::Batching;
use super::consumer::ConsumerCode::{self, Own};
use super::consumer::{consumer, ConsumerBarriers};
use super::epilogue_warps::epilogue_warps;
use super::fixup::Partials;
use super::params::{HopperParams, OnDevice};
use super::plan::HopperPlan;
use super::producer::producer;
use super::roles::{BatchWalk, Output, Ring, Walk};
use super::row_split::row_split_on_device;
use super::schedule::{Consumers, Store};
use super::staged_residual::StagedResidual;
use super::trace::{Phase, Trace, WORDS_PER_BLOCK};
use super::HopperError;
use crate::gemm::epilogue::Epilogue;
use crate::gemm::fused::FormParams;
use crate::gemm::GemmElem;

/// The warp-specialized GEMM of `plan` for elements `T` (f16 or bf16): `D = A * B^T`, f32
/// accumulation. Parameters: [`HopperParams`], in its order: tensor maps of A (`m x k`), B
/// (`n x k`) and D (`m x n`; swapped, D's transposed) from the plan's TMA copies, D's address
/// (the map's buffer, which only a schedule that stores D from the registers, `_u`, writes
/// through), the extents, the Hilbert tile order (read only with `Raster::Hilbert`; any buffer
/// otherwise), the stream-K split ([`dsl_core::pipeline::StreamKSplit`]: `sk_blocks` no more
/// than the grid's clusters, nor than the split's k-tiles) and its workspace ([`super::fixup`]:
/// zeroed before the first launch, [`super::workspace_elems`] f32 elements; with tiles from a
/// queue, `_q`, its [`dsl_core::pipeline::QUEUE_WORDS`] words, zeroed likewise; any buffer
/// otherwise). A form's parameters follow ([`FormParams`]), a strided batch's count
/// (`batch_count`) after them, and last, where the consumers take the residual through the
/// staging ([`super::staged_residual`]), R's tensor map (`residual_map`).
#[kernel]
pub fn hopper_ws<T: GemmElem>(
    #[host] plan: &HopperPlan,
    kb: &KernelBuilder,
    params: HopperParams<OnDevice<T>>,
) -> Result<(), HopperError> {
    // ---- Schedule ----
    let s = &plan.schedule;
    let (bm, bn, bk) = s.tile.mnk();
    let cluster = s.cluster_shape();
    let HopperParams {
        a_map,
        b_map,
        d_map,
        d,
        m,
        n,
        k,
        order,
        sk_tiles,
        sk_blocks,
        workspace,
    } = params;
    // A form's parameters, after the program's own; a strided batch's count after them.
    let form = plan.form.map(|_| FormParams::declare(kb));
    let batch_count = match plan.batching {
        Batching::Single => None,
        Batching::Strided => Some(kb.param::<u32>("batch_count")),
    };
    // The residual's map last, where the consumers take R through the staging.
    let residual_map = plan
        .tma_residual
        .as_ref()
        .map(|_| <TensorMap as KernelParam>::declare(kb, "residual_map"));
    // One block per SM with a register cap at entry: what setmaxnreg needs to take effect.
    kb.require_threads(s.threads(), 1, 1);
    kb.min_blocks_per_sm(1);
    if cluster.size() > 1 {
        kb.cluster_dims(cluster.size(), 1, 1);
    }

    // ---- Shared memory: the rings of A and B, then each consumer's output tile ----
    let (a_elems, b_elems) = plan.stage_elems();
    let ring_a = kb.dynamic_shared::<T>(1024);
    let ring_b = ring_a + a_elems * s.tile.stages();
    let out = ring_b + b_elems * s.b_slots();

    // ---- Barriers: full (the loads' bytes), empty (one arrival per consumer reading the stage,
    // per block) ----
    let full = TmaBarriers::new(kb, "full", s.tile.stages(), 1);
    let empty = Barriers::new(
        kb,
        "empty",
        s.tile.stages(),
        s.stage_consumers() * s.ring_sharers(),
    );
    let b_full = s.resident_b().map(|_| TmaBarriers::new(kb, "b_full", 1, 1));
    let residual = residual_map
        .as_ref()
        .map(|map| StagedResidual::new(kb, map));
    // The phases' timestamps, in a diagnostic build only (nothing otherwise).
    let trace = Trace::new(plan.trace, workspace);
    // Tiles from a queue: its words at the workspace's start (past the trace's records), its
    // ring read by every consumer thread.
    let queue = s.queue().map(|_| {
        let blocks = grid_dim_x();
        let words = workspace.cast::<u32>();
        let words = if plan.trace {
            words + blocks * (2 * WORDS_PER_BLOCK as u32)
        } else {
            words
        };
        TileQueue::new(kb, words, s.consumers() * WARPGROUP_THREADS, blocks)
    });
    if thread_idx_x().eq_(0u32) {
        trace.mark_here(Phase::Entry);
        prefetch_tensor_map(&a_map);
        prefetch_tensor_map(&b_map);
        if let Store::Tma(_) = s.store() {
            prefetch_tensor_map(&d_map);
        }
        full.init();
        empty.init();
        if let Some(b) = &b_full {
            b.init();
        }
        if let Some(q) = &queue {
            q.init();
        }
        if let Some(r) = &residual {
            r.init();
        }
        fence_mbarrier_init();
    }
    // Every block of the cluster sees every barrier initialized before anyone arrives.
    if cluster.size() > 1 {
        cluster_sync();
    } else {
        sync_threads();
    }
    // ---- Programmatic launch: the setup above overlapped the previous kernel's last blocks;
    // nothing touches global memory before that kernel is done. Once every block is here, the
    // next kernel may launch: its blocks take SMs as this one's leave (none fit beside one).
    wait_on_dependent_grids();
    trace.mark(|| thread_idx_x().eq_(0u32), Phase::Ready);
    launch_dependent_grids();

    // ---- The walk: cluster tiles of (cluster.x * bm, cluster.y * bn) ----
    let tiles_n = (n + (bn - 1)) / bn;
    let k_tiles = (k + (bk - 1)) / bk;
    // The last wave's rows shared out: its units along M are whole tiles and pieces.
    let (tiles_m, rows) = if s.row_split() {
        let (full, piece, units) = row_split_on_device(m, bm, grid_dim_x(), s.piece_granule());
        (units, Some((full, piece)))
    } else {
        ((m + (bm - 1)) / bm, None)
    };
    let cluster_rows = (tiles_m + (cluster.x - 1)) / cluster.x;
    // A strided batch: every GEMM's cluster tiles along M, one GEMM after the other.
    let batch = batch_count.map(|count| batch_walk(plan, form, cluster_rows, count));
    let walk = Walk {
        cluster_tiles: (
            batch.map_or(cluster_rows, |(rows, _)| rows),
            (tiles_n + (cluster.y - 1)) / cluster.y,
        ),
        k_tiles,
        sk_tiles,
        sk_blocks,
        order,
        m,
        rows,
        queue,
        batch: batch.map(|(_, b)| b),
    };

    // ---- Roles ----
    let wg = warpgroup_id();
    let ring = Ring {
        a: ring_a,
        b: ring_b,
        full: &full,
        empty: &empty,
        b_full: b_full.as_ref(),
    };
    let output = Output {
        staging: out,
        d_map: &d_map,
        d,
        n,
        ldd: form.map_or(n, |f| f.ldd),
        partials: Partials::new(workspace, s),
        form,
        batch_d: batch.and(form).map(|f| f.batch_d),
        residual,
    };
    let bars = ConsumerBarriers::allocate(plan);
    let roles = (&ring, &output);
    if wg.eq_(0u32) {
        producer(plan, (&a_map, &b_map), &ring, walk, trace);
        // With `_x`, the warps the producer leaves idle finish every staged tile.
        if let Some(handoff) = &bars.handoff {
            if warp_id_in_warpgroup().ne_(0u32) {
                epilogue_warps(plan, &output, walk, handoff)?;
            }
        }
    } else if shares_consumer_code(plan) {
        let code = ConsumerCode::Shared {
            consumers: s.consumers(),
        };
        consumer(plan, code, roles, (walk, trace), &bars)?;
    } else if s.consumers() == 1 {
        consumer(plan, Own(0), roles, (walk, trace), &bars)?;
    } else if wg.eq_(1u32) {
        consumer(plan, Own(0), roles, (walk, trace), &bars)?;
    } else if s.consumers() == 2 {
        consumer(plan, Own(1), roles, (walk, trace), &bars)?;
    } else if wg.eq_(2u32) {
        consumer(plan, Own(1), roles, (walk, trace), &bars)?;
    } else {
        consumer(plan, Own(2), roles, (walk, trace), &bars)?;
    }
    // No block leaves while another may still multicast into it or arrive on its barriers.
    if cluster.size() > 1 {
        cluster_sync();
    }
    Ok(())
}

/// Whether the block's consumers run one copy of their code ([`ConsumerCode::Shared`]):
/// cooperative consumers of a tile at least [`SHARED_CODE_MIN_COLS`] wide that finish a fused
/// epilogue themselves, whose straight-line epilogue a copy per consumer would have each SM
/// fetch once per consumer and tile. A plain kernel, or one whose epilogue warps finish the form
/// (`_x`: the consumers only stage their sums), keeps a copy per consumer: its consumers' code
/// is short, and the shared copy's main loop, under a branch on the consumer's index, keeps its
/// descriptors in ordinary registers (an `R2UR` before each `wgmma`) where a copy of its own
/// keeps them in uniform ones.
fn shares_consumer_code(plan: &HopperPlan) -> bool {
    matches!(plan.schedule.consumers, Consumers::Cooperative(_))
        && plan.schedule.consumers() > 1
        && plan.schedule.tile.n() >= SHARED_CODE_MIN_COLS
        && !plan.schedule.epilogue_warps()
        && plan.form.is_some_and(|f| f.epilogue != Epilogue::Plain)
}

/// The narrowest tile whose consumers share one copy of their code for a fused epilogue. Below
/// it the epilogue is short (a thread's values are a quarter of the tile's width) and the
/// shared main loop's extra instructions per `wgmma` weigh on `wgmma`s as narrow as the tile:
/// measured on an H100 (results/blas.md, 2026-12-06, sixth session), the fused forms' cost over
/// plain went from +2.8..+9.0% to +19% at 128 x 6144 x 4096 (128x48 tiles) and up by about 4
/// points on 128x64 and 128x80 tiles, where on tiles 160 to 224 wide bias + GELU's went down by
/// 3.5 to 5.5 points.
pub const SHARED_CODE_MIN_COLS: u32 = 160;

/// The walk over a strided batch of `count` GEMMs of `rows` cluster tiles along M each: the
/// walk's tiles along M (`rows * count`) and what its units need ([`BatchWalk`]: the batch
/// strides of the kernel's A and B; swapped, the kernel's A is the problem's B).
fn batch_walk(
    plan: &HopperPlan,
    form: Option<FormParams>,
    rows: Var<u32>,
    count: Var<u32>,
) -> (Var<u32>, BatchWalk) {
    let f = form.expect("a batch's strides are a form's parameters (HopperPlan::for_batch)");
    let strides = if plan.schedule.swapped() {
        (f.batch_b, f.batch_a)
    } else {
        (f.batch_a, f.batch_b)
    };
    (rows * count, BatchWalk { strides })
}

#[cfg(test)]
mod tests {
    use super::{shares_consumer_code, SHARED_CODE_MIN_COLS};
    use crate::gemm::epilogue::{Activation, Epilogue};
    use crate::gemm::layout::{FormParts, Major, OutType};
    use crate::gemm::GemmDtype;
    use crate::hopper::plan::HopperPlan;

    fn shares(spec: &str, epilogue: Epilogue) -> bool {
        let form = FormParts {
            a: Major::K,
            b: Major::K,
            epilogue,
            out: OutType::Bf16,
        };
        let plan = HopperPlan::with_form(spec.parse().unwrap(), GemmDtype::Bf16, Some(form));
        shares_consumer_code(&plan.unwrap())
    }

    /// One copy of the consumers' code for a fused epilogue on cooperative tiles at least
    /// `SHARED_CODE_MIN_COLS` wide only; a copy each for narrower tiles, plain sums, the epilogue
    /// warps, one consumer and ping-pong consumers.
    #[test]
    fn consumers_share_their_code_on_wide_fused_tiles() {
        let gelu = Epilogue::bias_act(Activation::GeluTanh);
        assert_eq!(SHARED_CODE_MIN_COLS, 160);
        for spec in [
            "128x160x64s4",
            "128x192x64s4_n",
            "128x256x64s3_h",
            "192x160x64s3_k",
        ] {
            assert!(shares(spec, gelu), "{spec}");
            assert!(shares(spec, Epilogue::RESIDUAL), "{spec}");
        }
        for spec in ["128x48x64s8", "128x64x64s6", "128x128x64s4", "128x144x64s4"] {
            assert!(!shares(spec, gelu), "{spec}");
        }
        assert!(!shares("128x256x64s3_h", Epilogue::Plain));
        assert!(!shares("128x256x64s3_h_x", gelu));
        assert!(!shares("64x256x64s4", gelu));
        assert!(!shares("128x128x64s5_p", gelu));
    }
}
