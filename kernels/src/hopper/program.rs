//! The warp-specialized Hopper GEMM, top-down as seed 004 writes its steps 7-9: configuration,
//! shared memory, barriers, the tile walk, then the roles, each a short function: one TMA
//! producer warp and two consumer warpgroups that share each stage's B tile (the seed's "two
//! consumers share B"; a 64-row tile has one), with the epilogue through shared memory
//! (`stmatrix`) and a TMA store that the producer does not wait for, or (`_u`) from the
//! registers ([`super::direct`]). The kernel is launched
//! programmatically: its setup runs while the stream's previous kernel finishes, and it touches
//! global memory only after `griddepcontrol.wait`.
//!
//! | role | warpgroup | registers | per k-tile |
//! |------|-----------|-----------|------------|
//! | producer | 0 (one elected lane) | 40 | wait `empty[ps]`; arrive on `full[ps]` expecting the stage's bytes; TMA A and B (where the cluster shares a tile, each block its slice of the rows, multicast to all of them) |
//! | consumer `c` | 1 + `c` | 232 | wait `full[cs]`; `wgmma` over the stage's 4 k-blocks (`c`'s half of A, or ping-pong the whole stage of its own tile; all of B); wait for them; arrive on `empty[cs]` of every block of the cluster |
//!
//! After a tile's last k-tile a consumer rounds its accumulators to 16 bits, writes them to its
//! shared output tile with `stmatrix` (once the previous tile's TMA store has read it), and one
//! lane issues the TMA store of it; the producer meanwhile is already loading the next tile.
//!
//! Ping-pong (`_p`, tiles of 64 or 128 rows): the two consumers own alternate tiles of the block's walk
//! instead of halves of each, and their main loops take turns on two named barriers, so that one
//! consumer's epilogue runs under the other's `wgmma`: for a short K, where the epilogue costs
//! as much as the main loop. With one staging tile (`_o`) their epilogues also take turns on it,
//! on two more named barriers.
//!
//! Tiles from a queue (`_q`, ping-pong): the producer takes each of its block's tiles past the
//! first from a counter as it goes and hands their indices to the consumers through a ring in
//! shared memory ([`TileQueue`]), so that blocks that run faster take more of them.

use dsl_core::atom::gmma::GmmaMajor;
use dsl_core::atom::tma::TmaCopy;
use dsl_core::atom::Accumulate;
use dsl_core::kernel::*;
use dsl_core::pipeline::{
    cluster_sync, elect_one, thread_id_in_warpgroup, warp_id_in_warpgroup, warpgroup_id,
    warpgroup_sync, Barriers, NamedBarrier, PipelineState, RegisterBudget, StreamKScheduler,
    TileQueue, TmaBarriers, QUEUE_SLOTS, WARPGROUP_THREADS,
};
use dsl_core::tensor::{
    copy, gemm_accumulate, store_fragment_smem, warpgroup_arrive, warpgroup_commit_batch,
    warpgroup_wait, DescriptorFragment, Fragment, Idx, STensor,
};
use dsl_core::tiled::Side;
use dsl_macros::{device, kernel};

use super::config::{HopperPlan, REGISTERS};
use super::direct::{store_direct, DirectTile};
use super::fixup::{hand_over, Partials};
use super::row_split::row_split_on_device;
use super::trace::{Phase, Trace, WORDS_PER_BLOCK};
use super::HopperError;
use crate::gemm::GemmElem;

use Idx::{All, Dyn};

/// What both roles walk: the stream-K walk ([`StreamKScheduler`]) over the grid of cluster
/// tiles, the first `sk_tiles` of them (in the raster's order) shared out by k-tiles between
/// the first `sk_blocks` clusters, the rest whole.
///
/// With the last wave's rows shared out (`_b`), `rows` is `(full, piece)`: the whole tiles
/// along M, then pieces of `piece` rows ([`super::row_split`]); the walk's tiles along M are
/// its units then. With tiles from a queue (`_q`), each block's units past its first come from
/// `queue` instead of every grid-th ([`TileQueue`]).
#[derive(Clone, Copy)]
struct Walk {
    cluster_tiles: (Var<u32>, Var<u32>),
    k_tiles: Var<u32>,
    sk_tiles: Var<u32>,
    sk_blocks: Var<u32>,
    order: GlobalPtr<u32>,
    m: Var<u32>,
    rows: Option<(Var<u32>, Var<u32>)>,
    queue: Option<TileQueue>,
}

/// The shared-memory ring both roles meet at: the stages of A and of B, the barrier each
/// stage's loads complete (`full`) and the one its consumers free it on (`empty`). With B
/// resident (`_r`), `b` holds B's k-tiles instead of stages, loaded once on `b_full`.
struct Ring<'a, T> {
    a: SharedPtr<T>,
    b: SharedPtr<T>,
    full: &'a TmaBarriers,
    empty: &'a Barriers,
    b_full: Option<&'a TmaBarriers>,
}

/// Where a consumer's output goes: its staging tile in shared memory and D's tensor map (or,
/// stored from the registers, D itself and its row length `n`); the stream-K partials on the
/// way.
struct Output<'a, T> {
    staging: SharedPtr<T>,
    d_map: &'a TensorMap,
    d: GlobalPtr<T>,
    n: Var<u32>,
    partials: Partials,
}

/// Where the scheduler's current work unit is: the block's output tile origin `(m0, n0)`, the
/// row its output ends before (M, or a piece's end), and the unit's k-tiles.
struct Unit {
    m0: Var<u32>,
    n0: Var<u32>,
    m_end: Var<u32>,
    k_tiles: (Var<u32>, Var<u32>),
}

impl Walk {
    /// This role's own walk (its own registers) over the cluster tiles.
    fn scheduler(&self, plan: &HopperPlan) -> StreamKScheduler {
        StreamKScheduler::new(
            self.cluster_tiles.0,
            self.cluster_tiles.1,
            self.k_tiles,
            self.sk_tiles,
            self.sk_blocks,
            plan.cfg.raster,
            plan.cfg.cluster_shape(),
            Some(self.order),
            plan.cfg.stream_k_region,
        )
    }

    /// The work unit the scheduler is on.
    fn unit(&self, plan: &HopperPlan, tiles: &StreamKScheduler) -> Unit {
        let (bm, bn, _) = plan.cfg.tile;
        let cluster = plan.cfg.cluster_shape();
        let (rx, ry) = cluster.coords();
        let n0 = (tiles.n() * cluster.y + ry) * bn;
        let k_tiles = tiles.k_tiles();
        match self.rows {
            // One block per cluster (HopperConfig::check): unit i is tile i, or past the
            // whole tiles piece i - full.
            Some((full, piece)) => {
                let i = tiles.m();
                let whole = i.lt(full);
                let m0 = select(whole, i * bm, full * bm + (i - full) * piece);
                let end = m0 + select(whole, Var::konst(bm), piece);
                Unit {
                    m0,
                    n0,
                    m_end: end.min(self.m),
                    k_tiles,
                }
            }
            None => Unit {
                m0: (tiles.m() * cluster.x + rx) * bm,
                n0,
                m_end: self.m,
                k_tiles,
            },
        }
    }
}

/// The producer: one elected lane of warp 0 streams every tile's k-tiles of A and B into the
/// ring. In a cluster along M the blocks share B: each loads its slice of the B tile's rows into
/// all of them (multicast); along N they share A likewise.
#[device]
fn producer<T: GemmElem>(
    plan: &HopperPlan,
    maps: (&TensorMap, &TensorMap),
    ring: &Ring<T>,
    walk: Walk,
    trace: Trace,
) {
    RegisterBudget::Release(REGISTERS.0).apply();
    let cfg = &plan.cfg;
    let cluster = cfg.cluster_shape();
    let (a_elems, b_elems) = plan.stage_elems();
    if warp_id_in_warpgroup().eq_(0u32) & elect_one() {
        let (rx, ry) = cluster.coords();
        if cfg.b_resident > 0 {
            // One tile of B, or the column of tiles the walk keeps this block in: its first's.
            let n0 = if cfg.b_column_resident() {
                walk.unit(plan, &walk.scheduler(plan)).n0
            } else {
                Var::konst(0u32)
            };
            load_resident_b(plan, maps.1, ring, (n0, walk.k_tiles));
        }
        let mut tiles = walk.scheduler(plan);
        let mut ps = PipelineState::producer(cfg.stages);
        // The start's prefetch (`_a`) follows the first tile's loads, not ahead of them.
        let mut ahead = (cfg.prefetch_ahead > 0).then(|| Var::<u32>::konst(1).fresh());
        // Tiles from a queue: the next one is taken while this one loads, or (`_ql`) once its
        // loads are issued.
        let late = cfg.queue_take_late;
        let mut taken = walk.queue.map(|q| {
            // Taken late, the first index past the first wave is set before its use.
            let first = if late { Var::konst(0u32) } else { q.take() };
            (q, first.fresh(), PipelineState::producer(QUEUE_SLOTS))
        });
        while tiles.valid() {
            let Unit {
                m0, n0, k_tiles, ..
            } = walk.unit(plan, &tiles);
            for kt in k_tiles.0..k_tiles.1 {
                ring.empty.wait(&ps);
                ring.full.arrive_expect_tx(&ps, plan.stage_bytes());
                let k0 = kt * cfg.tile.2;
                let bar = ring.full.at(ps.stage());
                let a = ring.a + ps.stage() * a_elems;
                let b = ring.b + ps.stage() * b_elems;
                let (a_rows, b_rows) = plan.multicast_slice_rows();
                let share_a = (cluster.y > 1).then(|| (ry * a_rows, cluster.column_mask(rx)));
                let a_copies = (&plan.tma_a, &plan.tma_a_multicast);
                load_operand(plan, a_copies, maps.0, (m0, k0), a, bar, share_a);
                // A resident B is in shared memory already.
                if cfg.b_resident == 0 {
                    let share_b = (cluster.x > 1).then(|| (rx * b_rows, cluster.row_mask(ry)));
                    let b_copies = (&plan.tma_b, &plan.tma_b_multicast);
                    load_operand(plan, b_copies, maps.1, (n0, k0), b, bar, share_b);
                }
                ps.advance();
            }
            if let Some(first) = &mut ahead {
                if first.eq_(1u32) {
                    prefetch_next_waves(plan, maps.0, walk);
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
/// grids for `j` in `1..=N`, the tiles the next waves take (B resident in one-block clusters:
/// tile `i` is rows from `i * bm`), every k-tile of each.
#[device]
fn prefetch_next_waves(plan: &HopperPlan, a_map: &TensorMap, walk: Walk) {
    let (bm, _, bk) = plan.cfg.tile;
    for j in 1..=plan.cfg.prefetch_ahead {
        let i = block_idx_x() + grid_dim_x() * j;
        if i.lt(walk.cluster_tiles.0) {
            for kt in Var::konst(0u32)..walk.k_tiles {
                plan.tma_a.prefetch(a_map, &[i * bm, kt * bk]);
            }
        }
    }
}

/// A stage's load of one operand's tile, rows from `r0` and columns from `k0`, into `dst` on
/// `bar`: the whole tile (`copies.0`), or where the cluster shares it (`shared`: this block's
/// first row of the tile and the blocks sharing it) this block's slice of its rows (`copies.1`),
/// multicast to all of them.
fn load_operand<T: GemmElem>(
    plan: &HopperPlan,
    (whole, slice): (&TmaCopy, &TmaCopy),
    map: &TensorMap,
    (r0, k0): (Var<u32>, Var<u32>),
    dst: SharedPtr<T>,
    bar: SharedPtr<u64>,
    shared: Option<(Var<u32>, Var<u32>)>,
) {
    match shared {
        Some((row, mask)) => slice.load(
            map,
            &[r0 + row, k0],
            dst + row * plan.cfg.tile.2,
            bar,
            Some(mask),
        ),
        None => whole.load(map, &[r0, k0], dst, bar, None),
    }
}

/// With B resident (`_r`): the producer loads the `k_tiles` k-tiles of B's tile at row `n0`
/// once, each into its slot, on the one barrier the consumers wait for before their first tile
/// (the plan took N within one tile, or one column of tiles per block, and K within the slots:
/// `HopperConfig::takes`). In a cluster along M, whose blocks all hold the same B, each loads
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
    let cluster = plan.cfg.cluster_shape();
    let (rx, ry) = cluster.coords();
    let (_, b_rows) = plan.multicast_slice_rows();
    // Every block's barrier counts all of B's bytes: its own slice and the others'.
    mbarrier_arrive_expect_tx(bar, k_tiles * plan.tma_b.bytes());
    for kt in Var::konst(0u32)..k_tiles {
        let k0 = kt * plan.cfg.tile.2;
        let share = (cluster.x > 1).then(|| (rx * b_rows, cluster.row_mask(ry)));
        let copies = (&plan.tma_b, &plan.tma_b_multicast);
        let dst = ring.b + kt * b_elems;
        load_operand(plan, copies, map, (n0, k0), dst, bar, share);
    }
}

/// Where k-tile `kt`'s B is: its ring stage, or (B resident) its own slot.
fn b_slot(plan: &HopperPlan, kt: Var<u32>, stage: Var<u32>) -> Var<u32> {
    if plan.cfg.b_resident > 0 {
        kt
    } else {
        stage
    }
}

/// Consumer `c` (a host value: each consumer has its own rows and named barrier): every tile's
/// main loop into its accumulators, then its epilogue.
#[device]
fn consumer<T: GemmElem>(
    plan: &HopperPlan,
    c: u32,
    ring: &Ring<T>,
    out: &Output<T>,
    (walk, trace): (Walk, Trace),
) -> Result<(), HopperError> {
    RegisterBudget::Claim(REGISTERS.1).apply();
    let cfg = &plan.cfg;
    let t = thread_id_in_warpgroup();

    // This consumer's rows of A and all of B, each stage as GMMA descriptors; its accumulators.
    let sa = STensor::new(ring.a, plan.smem_a_consumer[c as usize].clone())?;
    let sb = STensor::new(ring.b, plan.smem_b.clone())?;
    let ta_stages = sa.partition_a(&plan.mma, t)?; // (MMA, MMA_M, MMA_K, stage)
    let tb_stages = sb.partition_b(&plan.mma, t)?; // (MMA, MMA_N, MMA_K, stage)
    let acc = Fragment::<f32>::new(plan.frag_c.clone(), 1)?;
    // Its output tiles in shared memory, the `stmatrix` partition of each.
    let staging = staging_tiles(plan, out, c, t)?;

    if let Some(b_full) = ring.b_full {
        b_full.wait_at(0u32, 0u32);
    }
    let first = trace.first_unit();
    if c == 0 {
        trace.mark(|| t.eq_(0u32), Phase::ConsumerStart);
    }
    let mut tiles = walk.scheduler(plan);
    let mut cs = PipelineState::consumer(cfg.stages);
    let mut queue = walk
        .queue
        .map(|q| (q, PipelineState::consumer(QUEUE_SLOTS)));
    // Ping-pong, the block's units alternate between the consumers, and so do their main loops
    // (CUTLASS's math order barrier): each waits on its turn, which the other gives when its own
    // main loop is done. Not only for the tensor cores: a consumer waits on a stage's `full` by
    // parity, which tells a phase from the next one but not from the one after, so it must not
    // wait on a stage before the other consumer has taken that stage's earlier loads. The second
    // consumer starts past the first unit, and gives the first its first turn.
    let turn = |of: u32| NamedBarrier::new(ORDER_BARRIER + of, 256);
    if cfg.pingpong && c == 1 {
        if tiles.valid() {
            turn(0).arrive();
            // One staging tile: it starts free for the first consumer's first tile.
            if cfg.one_staging {
                staging_free(0).arrive();
            }
        }
        skip_unit((&mut tiles, &mut queue), &mut cs, walk.k_tiles);
    }
    while tiles.valid() {
        if cfg.pingpong {
            turn(c).sync();
        }
        let unit = walk.unit(plan, &tiles);
        // ---- Main loop: one stage per k-tile ----
        main_loop(
            plan,
            ring,
            (&ta_stages, &tb_stages, &acc),
            (&mut cs, t),
            unit.k_tiles,
        )?;
        if c == 0 {
            trace.mark(|| t.eq_(0u32) & first.holds(), Phase::FirstMainLoop);
        }

        if cfg.pingpong {
            // The other consumer's turn, if it has a unit; this tile's epilogue meanwhile; then
            // past the other's unit (past the walk's end too: this walk is over then).
            next_unit(&mut tiles, &mut queue);
            let other_has_next = tiles.valid();
            if other_has_next {
                turn(1 - c).arrive();
            }
            if cfg.one_staging {
                staging_free(c).sync();
            }
            epilogue(plan, c, &acc, out, &unit, (t, &staging))?;
            // One staging tile: the other consumer's next tile writes it once this store has
            // read it.
            if cfg.one_staging {
                if other_has_next {
                    if t.eq_(0u32) {
                        bulk_wait_group_read(0);
                    }
                    warpgroup_sync(1 + c);
                    staging_free(1 - c).arrive();
                }
            }
            skip_unit((&mut tiles, &mut queue), &mut cs, walk.k_tiles);
        } else {
            // ---- Stream-K: a start hands its sums to the tile's end, an end adds its peers' ----
            hand_over(&tiles, &out.partials, &acc, c, t);
            if tiles.writes_tile() {
                epilogue(plan, c, &acc, out, &unit, (t, &staging))?;
            }
            tiles.next_unit();
        }
        if c == 0 {
            trace.mark(|| t.eq_(0u32) & first.holds(), Phase::FirstEpilogue);
        }
        first.done();
    }
    // The TMA stores have read their staging tiles (and written D) before the block exits.
    if plan.cfg.direct_store == 0 {
        if t.eq_(0u32) {
            bulk_wait_group(0);
        }
    }
    let done = [Phase::Consumer0Done, Phase::Consumer1Done][c as usize];
    trace.mark(|| t.eq_(0u32), done);
    Ok(())
}

/// One unit's main loop of a consumer (thread `t` of its warpgroup): for each of its k-tiles
/// `(k_begin, k_end)`, wait for the stage `cs`, issue the `wgmma` of this consumer's rows of A
/// and of B (with B resident, the k-tile's slot) into the accumulators (the first k-tile
/// overwrites them), and free the stage once its batch has read it: at once, or (`_f1`) when
/// the next batch is issued, keeping one in flight.
#[device]
fn main_loop<T: GemmElem>(
    plan: &HopperPlan,
    ring: &Ring<T>,
    (ta_stages, tb_stages, acc): (&STensor<T>, &STensor<T>, &Fragment<f32>),
    (cs, t): (&mut PipelineState, Var<u32>),
    (k_begin, k_end): (Var<u32>, Var<u32>),
) -> Result<(), HopperError> {
    let cfg = &plan.cfg;
    let cluster = cfg.cluster_shape();
    // Frees a stage once its wgmma have read it: where the cluster shares the ring, in
    // every block of it (a multicast load may write the stage in all of them).
    let release = |stage: Var<u32>| {
        if cfg.ring_shared() {
            if t.lt(cluster.size()) {
                ring.empty.remote_view(t).arrive(stage);
            }
        } else if t.eq_(0u32) {
            ring.empty.arrive_at(stage);
        }
    };
    let mut previous = Var::<u32>::konst(0).fresh();
    for kt in k_begin..k_end {
        ring.full.wait(cs);
        let stage = [All, All, All, Dyn(cs.stage())];
        let b_at = [All, All, All, Dyn(b_slot(plan, kt, cs.stage()))];
        let ta = DescriptorFragment::new(&ta_stages.slice(&stage)?, GmmaMajor::K)?;
        let tb = DescriptorFragment::new(&tb_stages.slice(&b_at)?, GmmaMajor::K)?;
        warpgroup_arrive();
        // The first k-tile overwrites the accumulators: no clear between tiles.
        gemm_accumulate(&plan.mma, acc, &ta, &tb, Accumulate::When(kt.ne_(k_begin)))?;
        warpgroup_commit_batch();
        if cfg.in_flight == 0 {
            warpgroup_wait::<0>();
            release(cs.stage());
        } else {
            // The previous k-tile's batch is done: its stage is free.
            warpgroup_wait::<1>();
            if kt.ne_(k_begin) {
                release(previous);
            }
            previous.set(cs.stage());
        }
        cs.advance();
    }
    if cfg.in_flight > 0 {
        warpgroup_wait::<0>();
        if k_end.gt(k_begin) {
            release(previous);
        }
    }
    Ok(())
}

/// The first of the two named barriers that order ping-pong consumers' main loops (1 and 2 are
/// the consumers' own warpgroup barriers).
const ORDER_BARRIER: u32 = 3;

/// With one staging tile for both ping-pong consumers (`_o`), the named barrier consumer `c`
/// waits on before it writes the tile: the other consumer arrives once its store of the tile
/// before has read it (or, for the first tile, at the start). Each consumer's units alternate
/// with the other's, so each arrival meets the next tile's wait.
fn staging_free(c: u32) -> NamedBarrier {
    NamedBarrier::new(ORDER_BARRIER + 2 + c, 256)
}

/// Steps a ping-pong consumer's walk and ring past the other consumer's unit: a whole tile's
/// `k_tiles` stages (ping-pong walks whole tiles only: `super::launch` gives it no stream-K).
#[device]
fn skip_unit(
    (tiles, queue): (
        &mut StreamKScheduler,
        &mut Option<(TileQueue, PipelineState)>,
    ),
    cs: &mut PipelineState,
    k_tiles: Var<u32>,
) {
    for _ in Var::konst(0u32)..k_tiles {
        cs.advance();
    }
    next_unit(tiles, queue);
}

/// Steps a consumer's walk to its block's next unit: the static walk's, or the next index the
/// producer took from the queue. Past the walk's end it stays there: the producer publishes
/// the end once, and a ping-pong consumer steps past its own unit and the other's.
#[device]
fn next_unit(tiles: &mut StreamKScheduler, queue: &mut Option<(TileQueue, PipelineState)>) {
    match queue {
        Some((q, qs)) => {
            if tiles.valid() {
                let t = q.read(qs);
                tiles.jump_to(t);
            }
        }
        None => tiles.next_unit(),
    }
}

/// Initializes `bars` where there are any (the resident B's barrier).
fn init_if_any(bars: Option<&TmaBarriers>) {
    if let Some(b) = bars {
        b.init();
    }
}

/// Consumer `c`'s staging tiles (thread `t`'s part of each); none where D is stored from the
/// registers (`_u`: the shared memory has no staging).
fn staging_tiles<T: GemmElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    c: u32,
    t: Var<u32>,
) -> Result<Vec<StagingTile<T>>, HopperError> {
    let cfg = &plan.cfg;
    if cfg.direct_store > 0 {
        return Ok(Vec::new());
    }
    let first = staging_of(plan, out, c);
    (0..cfg.staging_buffers)
        .map(|b| {
            let ptr = match b {
                0 => first,
                _ => first + b * cfg.staging_tile_elems(),
            };
            let sd = STensor::new(ptr, plan.smem_d.clone())?;
            Ok(StagingTile {
                ptr,
                part: staging_partition(plan, &sd, t)?,
            })
        })
        .collect()
}

/// One of a consumer's staging tiles: where it starts, and the thread's part of it.
struct StagingTile<T: GemmElem> {
    ptr: SharedPtr<T>,
    part: STensor<T>,
}

/// Consumer `c`'s first staging tile in shared memory (with `_o`, the one both share); its
/// second (`_d2`) follows it.
fn staging_of<T: GemmElem>(plan: &HopperPlan, out: &Output<T>, c: u32) -> SharedPtr<T> {
    if plan.cfg.one_staging {
        return out.staging;
    }
    let cfg = &plan.cfg;
    out.staging + c * cfg.staging_buffers * cfg.staging_tile_elems()
}

/// Consumer `c`'s epilogue of the current unit's tile (thread `t`; `staging`, its staging tiles
/// and its part of each): stored from the registers (`_u`, [`store_direct`]), or registers ->
/// shared (`stmatrix`, or single stores for a swapped tile) -> global (TMA store), one sub-tile
/// of the staging's width at a time, the staging tiles in turn; the stores are not waited for,
/// only their reads of a staging tile before it is written again (with two, the store before
/// last: sub-tiles per tile are even, so a tile's first takes the tile its last but one did).
#[device]
fn epilogue<T: GemmElem>(
    plan: &HopperPlan,
    c: u32,
    acc: &Fragment<f32>,
    out: &Output<T>,
    unit: &Unit,
    (t, staging): (Var<u32>, &[StagingTile<T>]),
) -> Result<(), HopperError> {
    let rows = plan.cfg.consumer_rows();
    // Consumer c's rows of the tile; ping-pong, the tile is c's own.
    let row0 = if plan.cfg.pingpong { 0 } else { c * rows };
    if plan.cfg.direct_store > 0 {
        let tile = DirectTile {
            d: out.d,
            extents: (unit.m_end, out.n),
            origin: (unit.m0 + row0, unit.n0),
        };
        store_direct(plan, acc, &tile, t);
    } else {
        let bn = plan.cfg.tile.1;
        let epi = plan.cfg.epilogue_cols();
        let turns = staging.len() as u32;
        for j in 0..bn / epi {
            let StagingTile {
                ptr: sd_ptr,
                part: t_cs_d,
            } = &staging[(j % turns) as usize];
            if t.eq_(0u32) {
                // The store that last read this staging tile has read it.
                bulk_wait_group_read(turns - 1);
            }
            warpgroup_sync(1 + c);
            if plan.cfg.swap_ab {
                // D's transposed tile: its rows are the accumulators' columns.
                store_fragment_smem(acc, t_cs_d)?;
            } else {
                let sub = sub_tile(acc, plan, j).to_pairs::<T>()?;
                copy(&plan.r2s.atom, &sub, t_cs_d)?;
            }
            // The TMA store reads through the async proxy.
            fence_proxy_async_shared();
            warpgroup_sync(1 + c);
            if t.eq_(0u32) {
                let n0 = column(unit.n0, j * epi);
                let origin = [unit.m0 + row0, n0];
                if plan.cfg.row_split {
                    // A piece ends inside D: its boxes past its rows are the next piece's.
                    let rows = unit.m_end - origin[0];
                    plan.tma_d
                        .store_within(out.d_map, &origin, *sd_ptr, (0, rows));
                } else {
                    plan.tma_d.store(out.d_map, &origin, *sd_ptr);
                }
                bulk_commit_group();
            }
        }
    }
    Ok(())
}

/// Column `n0 + off` (`n0` itself for the first sub-tile: no instruction).
fn column(n0: Var<u32>, off: u32) -> Var<u32> {
    if off == 0 {
        n0
    } else {
        n0 + off
    }
}

/// Epilogue sub-tile `j` of a consumer's accumulators, as the sub-tile's `stmatrix` copy reads
/// it: the registers [`HopperPlan::epilogue_source`] names (the plan checked that they hold the
/// sub-tile's columns), so that only they are rounded and packed.
fn sub_tile(acc: &Fragment<f32>, plan: &HopperPlan, j: u32) -> Fragment<f32> {
    Fragment {
        regs: (0..plan.epilogue_values())
            .map(|v| acc.regs[plan.epilogue_source(j, v) as usize])
            .collect(),
        ..acc.with_layout(plan.retile_c.clone())
    }
}

/// Thread `t`'s part of a consumer's staging tile `sd`: the `stmatrix` partition, or (swapped,
/// a transposed tile that `stmatrix` cannot write) the accumulators' own.
fn staging_partition<T: GemmElem>(
    plan: &HopperPlan,
    sd: &STensor<T>,
    t: Var<u32>,
) -> Result<STensor<T>, HopperError> {
    Ok(if plan.cfg.swap_ab {
        sd.partition_c(&plan.mma, t)?
    } else {
        sd.partition(&plan.r2s, Side::Dst, t)?
    })
}

/// The warp-specialized GEMM of `plan` for elements `T` (f16 or bf16): `D = A * B^T`, f32
/// accumulation. Parameters: `(a_map, b_map, d_map, d, m, n, k, order, sk_tiles, sk_blocks,
/// workspace)`: tensor maps of A (`m x k`), B (`n x k`) and D (`m x n`; swapped, D's transposed)
/// from the plan's TMA copies, D's address (the map's buffer, which only a configuration that
/// stores D from the registers, `_u`, writes through), the extents, the Hilbert tile order (read
/// only with `Raster::Hilbert`; any buffer otherwise), the stream-K split
/// ([`dsl_core::pipeline::StreamKSplit`]: `sk_blocks` no more than the grid's clusters, nor
/// than the split's k-tiles) and its workspace ([`super::fixup`]: zeroed before the first
/// launch, [`super::workspace_elems`] f32 elements; with tiles from a queue, `_q`, its
/// [`dsl_core::pipeline::QUEUE_WORDS`] words, zeroed likewise; any buffer otherwise).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn hopper_ws<T: GemmElem>(
    #[host] plan: &HopperPlan,
    kb: &KernelBuilder,
    a_map: TensorMap,
    b_map: TensorMap,
    d_map: TensorMap,
    d: GlobalPtr<T>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
    order: GlobalPtr<u32>,
    sk_tiles: Var<u32>,
    sk_blocks: Var<u32>,
    workspace: GlobalPtr<f32>,
) -> Result<(), HopperError> {
    // ---- Configuration ----
    let cfg = &plan.cfg;
    let (bm, bn, bk) = cfg.tile;
    let cluster = cfg.cluster_shape();
    // One block per SM with a register cap at entry: what setmaxnreg needs to take effect.
    kb.require_threads(cfg.threads(), 1, 1);
    kb.min_blocks_per_sm(1);
    if cluster.size() > 1 {
        kb.cluster_dims(cluster.size(), 1, 1);
    }

    // ---- Shared memory: the rings of A and B, then each consumer's output tile ----
    let (a_elems, b_elems) = plan.stage_elems();
    let ring_a = kb.dynamic_shared::<T>(1024);
    let ring_b = ring_a + a_elems * cfg.stages;
    let out = ring_b + b_elems * cfg.b_slots();

    // ---- Barriers: full (the loads' bytes), empty (one arrival per consumer reading the stage,
    // per block) ----
    let full = TmaBarriers::new(kb, "full", cfg.stages, 1);
    let empty = Barriers::new(
        kb,
        "empty",
        cfg.stages,
        cfg.stage_consumers() * cfg.ring_sharers(),
    );
    let b_full = (cfg.b_resident > 0).then(|| TmaBarriers::new(kb, "b_full", 1, 1));
    // The phases' timestamps, in a diagnostic build only (nothing otherwise).
    let trace = Trace::new(plan.trace, workspace);
    // Tiles from a queue: its words at the workspace's start (past the trace's records), its
    // ring read by every consumer thread.
    let queue = cfg.tile_queue.then(|| {
        let blocks = grid_dim_x();
        let words = workspace.cast::<u32>();
        let words = if plan.trace {
            words + blocks * (2 * WORDS_PER_BLOCK as u32)
        } else {
            words
        };
        TileQueue::new(kb, words, cfg.consumers() * WARPGROUP_THREADS, blocks)
    });
    if thread_idx_x().eq_(0u32) {
        trace.mark_here(Phase::Entry);
        prefetch_tensor_map(&a_map);
        prefetch_tensor_map(&b_map);
        if cfg.direct_store == 0 {
            prefetch_tensor_map(&d_map);
        }
        full.init();
        empty.init();
        init_if_any(b_full.as_ref());
        if let Some(q) = &queue {
            q.init();
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
    let (tiles_m, rows) = if cfg.row_split {
        let (full, piece, units) = row_split_on_device(m, bm, grid_dim_x(), cfg.piece_granule());
        (units, Some((full, piece)))
    } else {
        ((m + (bm - 1)) / bm, None)
    };
    let walk = Walk {
        cluster_tiles: (
            (tiles_m + (cluster.x - 1)) / cluster.x,
            (tiles_n + (cluster.y - 1)) / cluster.y,
        ),
        k_tiles,
        sk_tiles,
        sk_blocks,
        order,
        m,
        rows,
        queue,
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
        partials: Partials::new(workspace, cfg),
    };
    if wg.eq_(0u32) {
        producer(plan, (&a_map, &b_map), &ring, walk, trace);
    } else if cfg.consumers() == 1 {
        consumer(plan, 0, &ring, &output, (walk, trace))?;
    } else if wg.eq_(1u32) {
        consumer(plan, 0, &ring, &output, (walk, trace))?;
    } else {
        consumer(plan, 1, &ring, &output, (walk, trace))?;
    }
    // No block leaves while another may still multicast into it or arrive on its barriers.
    if cluster.size() > 1 {
        cluster_sync();
    }
    Ok(())
}
