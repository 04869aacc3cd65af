//! What the kernel's roles share, built once by the kernel ([`super::program`]): the walk over
//! the tiles ([`Walk`], and the unit it is on: [`Unit`]), the shared-memory ring ([`Ring`]) and
//! where the output goes ([`Output`]).

use dsl_core::kernel::*;
use dsl_core::pipeline::{Barriers, StreamKRegion, StreamKScheduler, TileQueue, TmaBarriers};

use super::fixup::Partials;
use super::plan::HopperPlan;
use super::staged_residual::StagedResidual;
use crate::gemm::fused::FormParams;
use crate::gemm::GemmElem;

/// What both roles walk: the stream-K walk ([`StreamKScheduler`]) over the grid of cluster
/// tiles, the first `sk_tiles` of them (in the order's) shared out by k-tiles between the first
/// `sk_blocks` clusters, the rest whole.
///
/// With the last wave's rows shared out (`_b`), `rows` is `(full, piece)`: the whole tiles
/// along M, then pieces of `piece` rows ([`super::row_split`]); the walk's tiles along M are
/// its units then. With tiles from a queue (`_q`), each block's units past its first come from
/// `queue` instead of every grid-th ([`TileQueue`]). Of a strided batch, the walk's cluster
/// tiles along M are every GEMM's, one GEMM after the other ([`BatchWalk`]).
#[derive(Clone, Copy)]
pub(super) struct Walk {
    pub(super) cluster_tiles: (Var<u32>, Var<u32>),
    pub(super) k_tiles: Var<u32>,
    pub(super) sk_tiles: Var<u32>,
    pub(super) sk_blocks: Var<u32>,
    pub(super) order: GlobalPtr<u32>,
    pub(super) m: Var<u32>,
    pub(super) rows: Option<(Var<u32>, Var<u32>)>,
    pub(super) queue: Option<TileQueue>,
    pub(super) batch: Option<BatchWalk>,
}

/// The walk over a strided batch ([`super::batch`]): its tile row `r` is row `r % rows` of GEMM
/// `r / rows`, `rows` one GEMM's cluster tiles along M ([`Walk::gemm_rows`]); the kernel's A and
/// B loads ask their maps for that GEMM, or for matrix 0 where the batch shares the operand (its
/// batch stride, `strides`, is 0: the map is one deep).
#[derive(Clone, Copy)]
pub(super) struct BatchWalk {
    /// The batch strides of the kernel's A and B (the kernel's parameters).
    pub(super) strides: (Var<u64>, Var<u64>),
}

/// The shared-memory ring both roles meet at: the stages of A and of B, the barrier each
/// stage's loads complete (`full`) and the one its consumers free it on (`empty`). With B
/// resident (`_r`), `b` holds B's k-tiles instead of stages, loaded once on `b_full`.
pub(super) struct Ring<'a, T> {
    pub(super) a: SharedPtr<T>,
    pub(super) b: SharedPtr<T>,
    pub(super) full: &'a TmaBarriers,
    pub(super) empty: &'a Barriers,
    pub(super) b_full: Option<&'a TmaBarriers>,
}

/// Where a consumer's output goes: its staging tile in shared memory and D's tensor map (or,
/// stored from the registers, D itself and its row length `n`); the stream-K partials on the
/// way.
pub(super) struct Output<'a, T> {
    pub(super) staging: SharedPtr<T>,
    pub(super) d_map: &'a TensorMap,
    pub(super) d: GlobalPtr<T>,
    pub(super) n: Var<u32>,
    /// D's row stride for stores from the registers: `n`, or a form's `ldd`.
    pub(super) ldd: Var<u32>,
    pub(super) partials: Partials,
    /// A form's parameters (its epilogue's operands, `ldd`), where the plan has a form.
    pub(super) form: Option<FormParams>,
    /// D's batch stride, where the kernel runs a strided batch.
    pub(super) batch_d: Option<Var<u64>>,
    /// R's map and barrier, where the consumers take the residual through the staging
    /// ([`super::staged_residual`]).
    pub(super) residual: Option<StagedResidual<'a>>,
}

impl<T: GemmElem> Output<'_, T> {
    /// D of GEMM `z` of the batch (`z` is 0 for one GEMM): where stores from the registers
    /// write it.
    pub(super) fn d_at(&self, z: Var<u32>) -> GlobalPtr<T> {
        match self.batch_d {
            None => self.d,
            Some(stride) => self.d + z.cast::<u64>() * stride,
        }
    }
}

/// Where the scheduler's current work unit is: the block's output tile origin `(m0, n0)` in
/// GEMM `z` of the batch (0 for one GEMM), the row its output ends before (M, or a piece's
/// end), and the unit's k-tiles.
pub(super) struct Unit {
    pub(super) m0: Var<u32>,
    pub(super) n0: Var<u32>,
    pub(super) z: Var<u32>,
    pub(super) m_end: Var<u32>,
    pub(super) k_tiles: (Var<u32>, Var<u32>),
}

impl Walk {
    /// This role's own walk (its own registers) over the cluster tiles.
    pub(super) fn scheduler(&self, plan: &HopperPlan) -> StreamKScheduler {
        let s = &plan.schedule;
        StreamKScheduler::new(
            self.cluster_tiles.0,
            self.cluster_tiles.1,
            self.k_tiles,
            self.sk_tiles,
            self.sk_blocks,
            s.order,
            s.cluster_shape(),
            Some(self.order),
            // Ping-pong consumers walk whole tiles: the region is never walked.
            s.stream_k_region().unwrap_or(StreamKRegion::First),
        )
    }

    /// The work unit the scheduler is on.
    pub(super) fn unit(&self, plan: &HopperPlan, tiles: &StreamKScheduler) -> Unit {
        let (bm, bn, _) = plan.schedule.tile.mnk();
        let cluster = plan.schedule.cluster_shape();
        let (rx, ry) = cluster.coords();
        let n0 = (tiles.n() * cluster.y + ry) * bn;
        let k_tiles = tiles.k_tiles();
        // The GEMM of the batch and its own tile row.
        let (z, tile_m) = match &self.batch {
            None => (Var::konst(0u32), tiles.m()),
            Some(_) => {
                let rows = self.gemm_rows(plan);
                let z = tiles.m() / rows;
                (z, tiles.m() - z * rows)
            }
        };
        match self.rows {
            // One block per cluster (the schedule's check): unit i is tile i, or past the
            // whole tiles piece i - full.
            Some((full, piece)) => {
                let i = tile_m;
                let whole = i.lt(full);
                let m0 = select(whole, i * bm, full * bm + (i - full) * piece);
                let end = m0 + select(whole, Var::konst(bm), piece);
                Unit {
                    m0,
                    n0,
                    z,
                    m_end: end.min(self.m),
                    k_tiles,
                }
            }
            None => Unit {
                m0: (tile_m * cluster.x + rx) * bm,
                n0,
                z,
                m_end: self.m,
                k_tiles,
            },
        }
    }

    /// One GEMM's cluster tiles along M, from M where it is needed (a few shifts: the tile and
    /// the cluster are powers of two along M), rather than held in a register through the walk
    /// beside the consumers' sums.
    pub(super) fn gemm_rows(&self, plan: &HopperPlan) -> Var<u32> {
        let (bm, cx) = (plan.schedule.tile.m(), plan.schedule.cluster_shape().x);
        ((self.m + (bm - 1)) / bm + (cx - 1)) / cx
    }

    /// The batch coordinates of `unit`'s loads of the kernel's A and B: its GEMM, or 0 for an
    /// operand the batch shares (and for one GEMM, whose maps have no batch). Tested where they
    /// are used, on the parameters: nothing is held in the producer's few registers.
    pub(super) fn load_batch(&self, unit: &Unit) -> (Var<u32>, Var<u32>) {
        match &self.batch {
            None => (unit.z, unit.z),
            Some(b) => {
                let of = |stride: Var<u64>| select(stride.eq_(0u64), 0u32, unit.z);
                (of(b.strides.0), of(b.strides.1))
            }
        }
    }
}
