//! The producer: one elected lane of warp 0 streams every tile's k-tiles of A and B into the
//! ring (where the cluster shares a tile, its slice multicast to every block that shares it),
//! or with B resident loads B once and A alone per stage; with tiles from a queue it takes each
//! block's next tile and hands it to the consumers.

use dsl_core::atom::tma::TmaCopy;
use dsl_core::kernel::*;
use dsl_core::pipeline::{
    elect_one, warp_id_in_warpgroup, PipelineState, RegisterBudget, QUEUE_SLOTS,
};
use dsl_macros::device;

use super::plan::HopperPlan;
use super::roles::{Ring, Unit, Walk};
use super::schedule::{ResidentB, Take};
use super::trace::{Phase, Trace};
use crate::gemm::GemmElem;

/// The producer: one elected lane of warp 0 streams every tile's k-tiles of A and B into the
/// ring. In a cluster along M the blocks share B: each loads its slice of the B tile's rows into
/// all of them (multicast); along N they share A likewise.
#[device]
pub(super) fn producer<T: GemmElem>(
    plan: &HopperPlan,
    maps: (&TensorMap, &TensorMap),
    ring: &Ring<T>,
    walk: Walk,
    trace: Trace,
) {
    let s = &plan.schedule;
    RegisterBudget::Release(s.registers().0).apply();
    let cluster = s.cluster_shape();
    let (a_elems, b_elems) = plan.stage_elems();
    if warp_id_in_warpgroup().eq_(0u32) & elect_one() {
        let (rx, ry) = cluster.coords();
        let resident = s.resident_b();
        if resident.is_some() {
            // One tile of B, or the column of tiles the walk keeps this block in: its first's.
            let n0 = if s.b_column_resident() {
                walk.unit(plan, &walk.scheduler(plan)).n0
            } else {
                Var::konst(0u32)
            };
            load_resident_b(plan, maps.1, ring, (n0, walk.k_tiles));
        }
        let mut tiles = walk.scheduler(plan);
        let mut ps = PipelineState::producer(s.tile.stages());
        // The start's prefetch (`_a`) follows the first tile's loads, not ahead of them.
        let prefetch = resident.map_or(0, ResidentB::prefetch_waves);
        let mut ahead = (prefetch > 0).then(|| Var::<u32>::konst(1).fresh());
        // Tiles from a queue: the next one is taken while this one loads, or (`_ql`) once its
        // loads are issued.
        let late = s.queue() == Some(Take::Late);
        let mut taken = walk.queue.map(|q| {
            // Taken late, the first index past the first wave is set before its use.
            let first = if late { Var::konst(0u32) } else { q.take() };
            (q, first.fresh(), PipelineState::producer(QUEUE_SLOTS))
        });
        while tiles.valid() {
            let unit = walk.unit(plan, &tiles);
            // The unit's GEMM of the batch, for each operand's map.
            let (za, zb) = walk.load_batch(&unit);
            let Unit {
                m0, n0, k_tiles, ..
            } = unit;
            for kt in k_tiles.0..k_tiles.1 {
                ring.empty.wait(&ps);
                ring.full.arrive_expect_tx(&ps, plan.stage_bytes());
                let k0 = kt * s.tile.k();
                let bar = ring.full.at(ps.stage());
                let a = ring.a + ps.stage() * a_elems;
                let b = ring.b + ps.stage() * b_elems;
                let (a_rows, b_rows) = plan.multicast_slice_rows();
                let share_a = (cluster.y > 1).then(|| (ry * a_rows, cluster.column_mask(rx)));
                let a_copies = (&plan.tma_a, &plan.tma_a_multicast);
                load_operand(plan, a_copies, maps.0, [m0, k0, za], a, bar, share_a);
                // A resident B is in shared memory already.
                if resident.is_none() {
                    let share_b = (cluster.x > 1).then(|| (rx * b_rows, cluster.row_mask(ry)));
                    let b_copies = (&plan.tma_b, &plan.tma_b_multicast);
                    load_operand(plan, b_copies, maps.1, [n0, k0, zb], b, bar, share_b);
                }
                ps.advance();
            }
            if let Some(first) = &mut ahead {
                if first.eq_(1u32) {
                    prefetch_next_waves(plan, maps.0, walk, prefetch);
                    first.set(0u32);
                }
            }
            match &mut taken {
                None => tiles.next_unit(),
                // The consumers learn the next tile (or the walk's end) when its loads begin.
                Some((queue, next, qs)) => {
                    if late {
                        next.set(queue.take());
                    }
                    queue.publish(qs, *next);
                    tiles.jump_to(*next);
                    if !late {
                        if tiles.valid() {
                            next.set(queue.take());
                        }
                    }
                }
            }
        }
        if let Some((queue, ..)) = &taken {
            queue.finish();
        }
        trace.mark_here(Phase::ProducerDone);
    }
}

/// The start's prefetch of A into L2 (`_a{N}`): the A tiles of this block's index plus `j`
/// grids for `j` in `1..=waves`, the tiles the next waves take (B resident in one-block
/// clusters: tile `i` is rows from `i * bm`), every k-tile of each.
#[device]
fn prefetch_next_waves(plan: &HopperPlan, a_map: &TensorMap, walk: Walk, waves: u32) {
    let (bm, _, bk) = plan.schedule.tile.mnk();
    for j in 1..=waves {
        let i = block_idx_x() + grid_dim_x() * j;
        if i.lt(walk.cluster_tiles.0) {
            for kt in Var::konst(0u32)..walk.k_tiles {
                plan.tma_a.prefetch(a_map, &[i * bm, kt * bk]);
            }
        }
    }
}

/// A stage's load of one operand's tile, rows from `r0` and columns from `k0` of matrix `z` of a
/// batch (a copy of one GEMM's map, of rank 2, reads no `z`), into `dst` on `bar`: the whole
/// tile (`copies.0`), or where the cluster shares it (`shared`: this block's first row of the
/// tile and the blocks sharing it) this block's slice of its rows (`copies.1`), multicast to
/// all of them.
fn load_operand<T: GemmElem>(
    plan: &HopperPlan,
    (whole, slice): (&TmaCopy, &TmaCopy),
    map: &TensorMap,
    [r0, k0, z]: [Var<u32>; 3],
    dst: SharedPtr<T>,
    bar: SharedPtr<u64>,
    shared: Option<(Var<u32>, Var<u32>)>,
) {
    match shared {
        Some((row, mask)) => slice.load(
            map,
            &[r0 + row, k0, z],
            dst + row * plan.schedule.tile.k(),
            bar,
            Some(mask),
        ),
        None => whole.load(map, &[r0, k0, z], dst, bar, None),
    }
}

/// With B resident (`_r`): the producer loads the `k_tiles` k-tiles of B's tile at row `n0`
/// once, each into its slot, on the one barrier the consumers wait for before their first tile
/// (the plan took N within one tile, or one column of tiles per block, and K within the slots:
/// `HopperSchedule::takes`). In a cluster along M, whose blocks all hold the same B, each loads
/// its slice of B's rows into all of them (multicast), so that the L2 serves B once per
/// cluster rather than once per block.
#[device]
fn load_resident_b<T: GemmElem>(
    plan: &HopperPlan,
    map: &TensorMap,
    ring: &Ring<T>,
    (n0, k_tiles): (Var<u32>, Var<u32>),
) {
    let bar = ring.b_full.expect("a resident B has its barrier").at(0u32);
    let (_, b_elems) = plan.stage_elems();
    let cluster = plan.schedule.cluster_shape();
    let (rx, ry) = cluster.coords();
    let (_, b_rows) = plan.multicast_slice_rows();
    // Every block's barrier counts all of B's bytes: its own slice and the others'.
    mbarrier_arrive_expect_tx(bar, k_tiles * plan.tma_b.bytes());
    for kt in Var::konst(0u32)..k_tiles {
        let k0 = kt * plan.schedule.tile.k();
        let share = (cluster.x > 1).then(|| (rx * b_rows, cluster.row_mask(ry)));
        let copies = (&plan.tma_b, &plan.tma_b_multicast);
        let dst = ring.b + kt * b_elems;
        // Of a batch, B is resident only where the batch shares it: its matrix 0.
        load_operand(plan, copies, map, [n0, k0, Var::konst(0)], dst, bar, share);
    }
}
