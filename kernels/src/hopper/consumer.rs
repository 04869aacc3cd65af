//! The consumers: each waits for a stage, issues its `wgmma` over it into the accumulators,
//! frees the stage, and after a tile's last k-tile runs the epilogue ([`super::epilogue`]).
//! Cooperative consumers split each tile's rows and hand stream-K's partial sums over
//! ([`super::fixup`]); ping-pong consumers own alternate tiles and take turns on their main
//! loops (and, with one staging tile, on it), each a loop of its own here.
//!
//! The block's named barriers are handed out once, in order (`NamedBarriers`), each with
//! its thread count: each consumer warpgroup's own, then ping-pong's turns and staging.

use dsl_core::atom::Accumulate;
use dsl_core::kernel::*;
use dsl_core::pipeline::{
    thread_id_in_warpgroup, warpgroup_id, NamedBarrier, NamedBarriers, PipelineState,
    RegisterBudget, StreamKScheduler, TileQueue, QUEUE_SLOTS, WARPGROUP_THREADS,
};
use dsl_core::tensor::{
    gemm_accumulate, warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait, DescriptorFragment,
    Fragment, Idx, STensor,
};
use dsl_macros::device;

use super::epilogue::{epilogue, staging_tiles, StagingTile};
use super::epilogue_warps::HandOff;
use super::fixup::hand_over;
use super::plan::HopperPlan;
use super::roles::{Output, Ring, Unit, Walk};
use super::schedule::{Consumers, InFlight};
use super::trace::{FirstUnit, Phase, Trace};
use super::HopperError;
use crate::gemm::GemmElem;

use Idx::{All, Dyn};

/// The consumers' named barriers: each warpgroup's own (128 threads), and for ping-pong
/// consumers the turns of their main loops and, with one staging tile, of the staging (both
/// warpgroups, 256 threads).
#[derive(Debug, Clone)]
pub(super) struct ConsumerBarriers {
    /// One per consumer, and at least two (a one-consumer block's barrier ids are a
    /// two-consumer block's).
    own: Vec<NamedBarrier>,
    turn: Option<[NamedBarrier; 2]>,
    staging_free: Option<[NamedBarrier; 2]>,
    /// The hand-over to the epilogue warps (`_x`).
    pub(super) handoff: Option<HandOff>,
}

impl ConsumerBarriers {
    /// The barriers `plan`'s consumers use, handed out in order.
    pub(super) fn allocate(plan: &HopperPlan) -> ConsumerBarriers {
        let mut ids = NamedBarriers::new();
        let own = (0..plan.schedule.consumers().max(2))
            .map(|_| ids.next(WARPGROUP_THREADS))
            .collect();
        let both = 2 * WARPGROUP_THREADS;
        let (turn, staging_free) = match plan.schedule.consumers {
            Consumers::PingPong(_) => (
                Some(ids.take(both)),
                plan.schedule.shared_staging().then(|| ids.take(both)),
            ),
            Consumers::Cooperative(_) => (None, None),
        };
        let handoff = plan
            .schedule
            .epilogue_warps()
            .then(|| HandOff::allocate(&mut ids, plan.schedule.consumers()));
        ConsumerBarriers {
            own,
            turn,
            staging_free,
            handoff,
        }
    }
}

/// Whose code a consumer warpgroup runs: its own copy, for consumer `c` (a host value), or the
/// one copy all of a cooperative block's consumers share, each warpgroup's index a value at run
/// time. Shared, a fused epilogue's code (straight-line, about eight instructions a value, run
/// once per tile) is fetched once per SM rather than once per consumer: at one tile a block its
/// instruction-cache misses were most of what bias + GELU cost over the plain GEMM (ncu,
/// results/blas.md, 2026-12-06, fifth session), and sharing took that cost from +13.7% to
/// +8.6% at 512 x 6144 x 4096 (H100, sixth session). The main loop stays a copy per consumer (a
/// branch on the index), its A's descriptors host values; on tiles narrower than
/// [`super::program::SHARED_CODE_MIN_COLS`] that costs more than sharing saves.
#[derive(Debug, Clone, Copy)]
pub(super) enum ConsumerCode {
    /// Consumer `c`'s own copy.
    Own(u32),
    /// One copy for the block's `consumers` cooperative consumers (the producer's warpgroup
    /// first: warpgroup `1 + c` is consumer `c`).
    Shared {
        /// The consumers the copy serves.
        consumers: u32,
    },
}

impl ConsumerCode {
    /// The consumer's index as a value: a constant for [`ConsumerCode::Own`], else made from the
    /// warpgroup's index where it is used (kept in no register across the main loop, whose
    /// accumulators leave the widest tiles none to spare).
    fn index(self) -> Var<u32> {
        match self {
            ConsumerCode::Own(c) => Var::konst(c),
            ConsumerCode::Shared { .. } => warpgroup_id() - 1u32,
        }
    }

    /// The consumers the code may run as.
    fn consumers(self) -> std::ops::Range<u32> {
        match self {
            ConsumerCode::Own(c) => c..c + 1,
            ConsumerCode::Shared { consumers } => 0..consumers,
        }
    }

    /// Whether the code may run as consumer `c`.
    fn may_be(self, c: u32) -> bool {
        self.consumers().contains(&c)
    }

    /// Whether this warpgroup is consumer `c` (a constant for [`ConsumerCode::Own`]).
    fn is(self, c: u32) -> Var<bool> {
        match self {
            ConsumerCode::Own(own) => Var::konst(own == c),
            ConsumerCode::Shared { .. } => self.index().eq_(c),
        }
    }

    /// The consumers whose part of the tile this code may take, each with whether it is this
    /// warpgroup's.
    fn served(self) -> Vec<(u32, Var<bool>)> {
        self.consumers().map(|c| (c, self.is(c))).collect()
    }
}

/// A consumer warpgroup's own named barrier (128 threads), where the code may serve several
/// consumers: consumer `c`'s barrier, picked by a branch on the index where the code is shared
/// (each barrier then still reached from one instruction, by its own warpgroup alone).
#[derive(Debug, Clone)]
pub(super) struct OwnBarrier {
    barriers: Vec<(NamedBarrier, Var<bool>)>,
}

impl OwnBarrier {
    /// Waits for the rest of the warpgroup.
    pub(super) fn sync(&self) {
        match &self.barriers[..] {
            [(only, _)] => only.sync(),
            several => {
                for (barrier, mine) in several {
                    mine.if_(|arm| {
                        if arm == Arm::Then {
                            barrier.sync();
                        }
                    });
                }
            }
        }
    }
}

/// What one consumer holds through its walk: which consumer it is (`c`, and whose code it runs)
/// and its thread index, its accumulators, its stages of A and B as GMMA descriptors (A's for
/// each consumer the code serves), its staging tiles; and what it shares: the plan, the ring,
/// the output, the walk, the trace and the barriers.
struct Consumer<'a, T: GemmElem> {
    plan: &'a HopperPlan,
    code: ConsumerCode,
    t: Var<u32>,
    ta_stages: Vec<(Var<bool>, STensor<T>)>,
    tb_stages: STensor<T>,
    acc: Fragment<f32>,
    staging: Vec<StagingTile<T>>,
    ring: &'a Ring<'a, T>,
    out: &'a Output<'a, T>,
    walk: Walk,
    trace: Trace,
    bars: &'a ConsumerBarriers,
}

impl<T: GemmElem> Consumer<'_, T> {
    /// Stamps `phase` of the first unit (consumer 0, one thread; a traced build only).
    fn mark(&self, first: &FirstUnit, phase: Phase) {
        if self.code.may_be(0) {
            let code = self.code;
            self.trace
                .mark(|| self.t.eq_(0u32) & first.holds() & code.is(0), phase);
        }
    }

    /// This consumer's warpgroup's barrier.
    fn own(&self) -> OwnBarrier {
        OwnBarrier {
            barriers: self
                .code
                .served()
                .into_iter()
                .map(|(c, mine)| (self.bars.own[c as usize], mine))
                .collect(),
        }
    }

    /// The epilogue of `unit` ([`epilogue`]); `last`: the walk ends with it.
    fn epilogue(&self, unit: &Unit, last: Var<bool>) -> Result<(), HopperError> {
        let own = self.own();
        let staging = (self.t, &self.staging[..], &own, self.bars.handoff);
        let c = self.code.index();
        epilogue(self.plan, c, &self.acc, self.out, unit, staging, last)
    }
}

/// A consumer (`code`: its own copy for consumer `c`, each consumer having its own rows and
/// named barrier, or one copy for all of a cooperative block's): every unit's main loop into its
/// accumulators, then its epilogue; cooperative or ping-pong.
#[device]
pub(super) fn consumer<T: GemmElem>(
    plan: &HopperPlan,
    code: ConsumerCode,
    (ring, out): (&Ring<T>, &Output<T>),
    (walk, trace): (Walk, Trace),
    bars: &ConsumerBarriers,
) -> Result<(), HopperError> {
    RegisterBudget::Claim(plan.schedule.registers().1).apply();
    let t = thread_id_in_warpgroup();

    // Each served consumer's rows of A and all of B, each stage as GMMA descriptors; the
    // accumulators.
    let ta_stages = code
        .served()
        .into_iter()
        .map(|(i, mine)| {
            let sa = STensor::new(ring.a, plan.smem_a_consumer[i as usize].clone())?;
            Ok((mine, sa.partition_a(&plan.mma, t)?)) // (MMA, MMA_M, MMA_K, stage)
        })
        .collect::<Result<Vec<_>, HopperError>>()?;
    let sb = STensor::new(ring.b, plan.smem_b.clone())?;
    let tb_stages = sb.partition_b(&plan.mma, t)?; // (MMA, MMA_N, MMA_K, stage)
    let acc = Fragment::<f32>::new(plan.frag_c.clone(), 1)?;
    // Its output tiles in shared memory, the `stmatrix` partition of each.
    let staging = staging_tiles(plan, out, code.index(), t)?;
    let me = Consumer {
        plan,
        code,
        t,
        ta_stages,
        tb_stages,
        acc,
        staging,
        ring,
        out,
        walk,
        trace,
        bars,
    };

    if let Some(b_full) = ring.b_full {
        b_full.wait_at(0u32, 0u32);
    }
    let first = trace.first_unit();
    if code.may_be(0) {
        trace.mark(|| t.eq_(0u32) & code.is(0), Phase::ConsumerStart);
    }
    let tiles = walk.scheduler(plan);
    let cs = PipelineState::consumer(plan.schedule.tile.stages());
    let queue = walk
        .queue
        .map(|q| (q, PipelineState::consumer(QUEUE_SLOTS)));
    let walked = (tiles, cs, queue);
    match plan.schedule.consumers {
        Consumers::Cooperative(_) => cooperative(&me, walked, first)?,
        Consumers::PingPong(_) => pingpong(&me, walked, first)?,
    }
    // The TMA stores have read their staging tiles (and written D) before the block exits.
    if !me.staging.is_empty() && bars.handoff.is_none() {
        if t.eq_(0u32) {
            bulk_wait_group(0);
        }
    }
    // The trace has the first two consumers' ends (a third's is its peers' within the tile).
    for (c, done) in [(0, Phase::Consumer0Done), (1, Phase::Consumer1Done)] {
        if code.may_be(c) {
            trace.mark(|| t.eq_(0u32) & code.is(c), done);
        }
    }
    Ok(())
}

/// A consumer's walk: the scheduler, the ring's state and (tiles from a queue) the queue's ring
/// and its state.
type Walked = (
    StreamKScheduler,
    PipelineState,
    Option<(TileQueue, PipelineState)>,
);

/// A cooperative consumer's units: its rows of each unit's tile, stream-K's hand-over where
/// the unit is a share of a tile, and the epilogue of every unit that ends a tile.
#[device]
fn cooperative<T: GemmElem>(
    me: &Consumer<T>,
    walked: Walked,
    first: FirstUnit,
) -> Result<(), HopperError> {
    let (mut tiles, mut cs, _) = walked;
    while tiles.valid() {
        let unit = me.walk.unit(me.plan, &tiles);
        // ---- Main loop: one stage per k-tile (a copy per consumer the code serves) ----
        for (mine, ta_stages) in &me.ta_stages {
            mine.try_if_(|arm| match arm {
                Arm::Then => main_loop(me, ta_stages, &mut cs, unit.k_tiles),
                Arm::Else => Ok(()),
            })?;
        }
        me.mark(&first, Phase::FirstMainLoop);
        // ---- Stream-K: a start hands its sums to the tile's end, an end adds its peers' ----
        let c = me.code.index();
        hand_over(&tiles, &me.out.partials, &me.acc, (c, me.t), &me.own());
        if tiles.writes_tile() {
            me.epilogue(&unit, tiles.ends_after())?;
        }
        tiles.next_unit();
        me.mark(&first, Phase::FirstEpilogue);
        first.done();
    }
    Ok(())
}

/// A ping-pong consumer's units: the block's units alternate between the consumers, and so do
/// their main loops (CUTLASS's math order barrier): each waits on its turn, which the other
/// gives when its own main loop is done. Not only for the tensor cores: a consumer waits on a
/// stage's `full` by parity, which tells a phase from the next one but not from the one after,
/// so it must not wait on a stage before the other consumer has taken that stage's earlier
/// loads. The second consumer starts past the first unit, and gives the first its first turn.
/// With one staging tile for both (`_o`), each waits for it on its own barrier, where the other
/// arrives once its store of the tile before has read it (or, for the first tile, at the
/// start); each consumer's units alternate with the other's, so each arrival meets the next
/// tile's wait.
#[device]
fn pingpong<T: GemmElem>(
    me: &Consumer<T>,
    walked: Walked,
    first: FirstUnit,
) -> Result<(), HopperError> {
    let (mut tiles, mut cs, mut queue) = walked;
    let ConsumerCode::Own(c) = me.code else {
        unreachable!("ping-pong consumers each run their own copy (program::shares_consumer_code)");
    };
    let (c, t, k_tiles) = (c as usize, me.t, me.walk.k_tiles);
    let turn = me.bars.turn.expect("ping-pong consumers have turns");
    let shared = me.bars.staging_free;
    if c == 1 {
        if tiles.valid() {
            turn[0].arrive();
            // One staging tile: it starts free for the first consumer's first tile.
            if let Some(free) = shared {
                free[0].arrive();
            }
        }
        skip_unit((&mut tiles, &mut queue), &mut cs, k_tiles);
    }
    while tiles.valid() {
        turn[c].sync();
        let unit = me.walk.unit(me.plan, &tiles);
        // ---- Main loop: one stage per k-tile ----
        main_loop(me, &me.ta_stages[0].1, &mut cs, unit.k_tiles)?;
        me.mark(&first, Phase::FirstMainLoop);
        // The other consumer's turn, if it has a unit; this tile's epilogue meanwhile; then
        // past the other's unit (past the walk's end too: this walk is over then).
        next_unit(&mut tiles, &mut queue);
        let other_has_next = tiles.valid();
        if other_has_next {
            turn[1 - c].arrive();
        }
        if let Some(free) = shared {
            free[c].sync();
        }
        me.epilogue(&unit, Var::konst(false))?;
        // One staging tile: the other consumer's next tile writes it once this store has
        // read it.
        if let Some(free) = shared {
            if other_has_next {
                if t.eq_(0u32) {
                    bulk_wait_group_read(0);
                }
                me.own().sync();
                free[1 - c].arrive();
            }
        }
        skip_unit((&mut tiles, &mut queue), &mut cs, k_tiles);
        me.mark(&first, Phase::FirstEpilogue);
        first.done();
    }
    Ok(())
}

/// One unit's main loop of a consumer (thread `t` of its warpgroup): for each of its k-tiles
/// `(k_begin, k_end)`, wait for the stage `cs`, issue the `wgmma` of this consumer's rows of A
/// and of B (with B resident, the k-tile's slot) into the accumulators (the first k-tile
/// overwrites them), and free the stage once its batch has read it: at once, or (`_f1`) when
/// the next batch is issued, keeping one in flight.
#[device]
fn main_loop<T: GemmElem>(
    me: &Consumer<T>,
    ta_stages: &STensor<T>,
    cs: &mut PipelineState,
    (k_begin, k_end): (Var<u32>, Var<u32>),
) -> Result<(), HopperError> {
    let (plan, ring) = (me.plan, me.ring);
    let s = &plan.schedule;
    let cluster = s.cluster_shape();
    let t = me.t;
    // Frees a stage once its wgmma have read it: where the cluster shares the ring, in
    // every block of it (a multicast load may write the stage in all of them).
    let release = |stage: Var<u32>| {
        if s.ring_shared() {
            if t.lt(cluster.size()) {
                ring.empty.remote_view(t).arrive(stage);
            }
        } else if t.eq_(0u32) {
            ring.empty.arrive_at(stage);
        }
    };
    // Where k-tile `kt`'s B is: its ring stage, or (B resident) its own slot.
    let resident = s.resident_b().is_some();
    let mut previous = Var::<u32>::konst(0).fresh();
    for kt in k_begin..k_end {
        ring.full.wait(cs);
        let stage = [All, All, All, Dyn(cs.stage())];
        let b_at = [All, All, All, Dyn(if resident { kt } else { cs.stage() })];
        let ta = DescriptorFragment::new(&ta_stages.slice(&stage)?, plan.majors.a)?;
        let tb = DescriptorFragment::new(&me.tb_stages.slice(&b_at)?, plan.majors.b)?;
        warpgroup_arrive();
        // The first k-tile overwrites the accumulators: no clear between tiles.
        gemm_accumulate(
            &plan.mma,
            &me.acc,
            &ta,
            &tb,
            Accumulate::When(kt.ne_(k_begin)),
        )?;
        warpgroup_commit_batch();
        match s.in_flight {
            InFlight::Zero => {
                warpgroup_wait::<0>();
                release(cs.stage());
            }
            InFlight::One => {
                // The previous k-tile's batch is done: its stage is free.
                warpgroup_wait::<1>();
                if kt.ne_(k_begin) {
                    release(previous);
                }
                previous.set(cs.stage());
            }
        }
        cs.advance();
    }
    if s.in_flight == InFlight::One {
        warpgroup_wait::<0>();
        if k_end.gt(k_begin) {
            release(previous);
        }
    }
    Ok(())
}

/// Steps a ping-pong consumer's walk and ring past the other consumer's unit: a whole tile's
/// `k_tiles` stages (ping-pong walks whole tiles only: the launch gives it no stream-K).
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
