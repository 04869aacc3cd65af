//! The program, top-down as the tutorial writes it: the kernel ([`blackwell_ws`]: the
//! configuration's allocation, barrier init, TMEM allocation, the tile scheduler, the roles and
//! the cleanup), which warps run which role ([`roles`]), the barriers and the ring they guard,
//! then the roles, each a short `#[device]` function: the main loop's TMA producer and MMA
//! consumers, and the epilogue's writeback warpgroups.
//!
//! | warpgroup | warp | role | loop |
//! |-----------|------|------|------|
//! | `C` (the last) | 3 | [`tma_producer`]: one elected lane | per k-tile: wait `mma2tma[s]`; TMA A (each consumer's rows) and B into stage `s`, completing on `tma2mma[s]` (a pair: the even block's); the even block arrives on it expecting the stage's bytes; after the last, wait for every stage's release (the tail) |
//! | `C` | `c` < `C` | [`mma_consumer`] `c`: one elected lane of the even block | per tile: wait `ld2mma[c]`; per k-tile: wait `tma2mma[s]`, four `tcgen05.mma` into accumulator `c`, commit to `mma2tma[s]`; then commit to `mma2ld[c]` |
//! | `c` < `C` | all | [`writeback`] `c` | per tile: wait `mma2ld[c]`; per chunk: TMEM -> registers, (last chunk: arrive on `ld2mma[c]`, the even block's), f16 -> staging tile, TMA store |
//!
//! `C` is the number of MMA consumers; a pair's commits arrive in both blocks (`cta_mask =
//! 0b11`).

use dsl_core::atom::gmma::GmmaMajor;
use dsl_core::atom::Accumulate;
use dsl_core::ir::op::CtaGroup;
use dsl_core::kernel::*;
use dsl_core::pipeline::{
    elect_one, thread_id_in_warpgroup, warp_id_in_block, warp_id_in_warpgroup, warpgroup_id,
    warpgroup_sync, Barriers, ClusterShape, MmaBarriers, PersistentScheduler, PipelineState,
    Raster, TmaBarriers, TmemAllocation,
};
use dsl_core::tensor::{
    copy, gemm_tmem, tmem_fence_after_sync, tmem_fence_before_sync, tmem_load, tmem_wait_ld,
    Fragment, STensor, TTensor, UmmaDescriptorFragment,
};
use dsl_core::tiled::{make_fragment_like, Side};
use dsl_macros::{device, kernel};

use super::config::{PlantedBug, BLOCK_K, BLOCK_M, WRITEBACK_BARRIER};
use super::plan::BlackwellPlan;
use super::BlackwellError;
use crate::gemm::GemmElem;

use dsl_core::tensor::Idx::{All, At, Dyn};

// ---- The kernel: configuration, allocation, barriers, scheduler, roles ----

/// The warp-specialized Blackwell GEMM of `plan` for elements `T` (f16 or bf16): `D = A B^T`,
/// f32 accumulation in TMEM. Parameters `(a_map, b_map, d_map, m, n, k)`: tensor maps of A (`m x
/// k`), B (`n x k`) and D (`m x n`), row-major, from the plan's TMA copies
/// ([`BlackwellPlan::launch`]).
#[kernel]
pub fn blackwell_ws<T: GemmElem>(
    #[host] plan: &BlackwellPlan,
    kb: &KernelBuilder,
    a_map: TensorMap,
    b_map: TensorMap,
    d_map: TensorMap,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) -> Result<(), BlackwellError> {
    let cfg = &plan.cfg;
    kb.require_threads(cfg.threads(), 1, 1);
    kb.min_blocks_per_sm(1);
    let pair = cfg.cta_group == CtaGroup::Two;
    if pair {
        kb.cluster_dims(2, 1, 1);
    }
    let consumers = cfg.consumers.count();

    // --- Allocation ---
    let tmem = TmemAllocation::new(kb, "tmem_addr", cfg.tmem_columns(), cfg.cta_group);
    // Counts 1, C (one commit per consumer), 1 and 128 G (every writeback thread of every block
    // of the group): BlackwellConfig::barrier_counts.
    let counts = cfg.barrier_counts();
    let tma2mma = TmaBarriers::new(kb, "tma2mma", cfg.depth, counts.tma2mma);
    let mma2tma = MmaBarriers::new(kb, "mma2tma", cfg.depth, counts.mma2tma);
    let mma2ld = MmaBarriers::new(kb, "mma2ld", consumers, counts.mma2ld);
    let ld2mma = Barriers::new(kb, "ld2mma", consumers, counts.ld2mma);
    // Aligned to 1024 bytes, where the 128-byte swizzle's pattern repeats.
    let smem = kb.dynamic_shared::<T>(1024);
    let ring = Ring {
        a: smem,
        b: smem + plan.a_stage_elems() * cfg.depth,
        tma2mma: &tma2mma,
        mma2tma: &mma2tma,
        mma2ld: &mma2ld,
        ld2mma: &ld2mma,
    };
    let staging = ring.b + plan.b_stage_elems() * cfg.depth;

    // --- Barrier init ---
    if thread_idx_x().eq_(0u32) {
        prefetch_tensor_map(&a_map);
        prefetch_tensor_map(&b_map);
        prefetch_tensor_map(&d_map);
        tma2mma.init();
        mma2tma.init();
        mma2ld.init();
        ld2mma.init();
        fence_mbarrier_init();
    }

    // --- TMEM alloc + fence ---
    let alloc_warp = warp_id_in_block().eq_(0u32);
    if alloc_warp {
        tmem.allocate();
    }
    // A pair's blocks arrive on each other's barriers: both are initialized before either runs.
    if pair {
        cluster_sync();
    } else {
        sync_threads();
    }
    let tmem_base = tmem.address();

    // --- Tile scheduler ---
    let (tile_rows, tile_cols) = cfg.cluster_tile();
    let walk = Walk {
        tiles_m: (m + (tile_rows - 1)) / tile_rows,
        tiles_n: (n + (tile_cols - 1)) / tile_cols,
        k_tiles: (k + (BLOCK_K - 1)) / BLOCK_K,
    };

    // --- Roles ---
    let maps = (&a_map, &b_map, &d_map);
    roles(plan, kb, &ring, maps, (tmem_base, staging), walk)?;

    // --- Cleanup: every thread, then the allocating warp frees TMEM ---
    kb.comment("role: cleanup");
    tmem.release(alloc_warp);
    Ok(())
}

// ---- Roles ----

/// Which warps run which role: in warpgroup `C` (the last) warp 3 is the TMA producer and warp
/// `c` MMA consumer `c`; warpgroup `c` writes consumer `c`'s accumulator back. Each role's code
/// starts with a `role:` comment (what [`super::protocol`] reads).
#[device]
fn roles<T: GemmElem>(
    plan: &BlackwellPlan,
    kb: &KernelBuilder,
    ring: &Ring<T>,
    (a_map, b_map, d_map): (&TensorMap, &TensorMap, &TensorMap),
    (tmem, staging): (Var<u32>, SharedPtr<T>),
    walk: Walk,
) -> Result<(), BlackwellError> {
    let consumers = plan.cfg.consumers.count();
    let wg = warpgroup_id();
    let warp = warp_id_in_warpgroup();
    let last = wg.eq_(consumers);
    if last & warp.eq_(3u32) {
        kb.comment("role: TMA producer");
        tma_producer(plan, (a_map, b_map), ring, walk);
    }
    for c in 0..consumers {
        if last & warp.eq_(c) {
            kb.comment(&format!("role: MMA consumer {c}"));
            mma_consumer(plan, c, ring, tmem, walk)?;
        }
        if wg.eq_(c) {
            kb.comment(&format!("role: writeback {c}"));
            let own_staging = staging + c * (BLOCK_M * plan.cfg.epilogue_columns);
            writeback(plan, c, ring, (tmem, own_staging, d_map), walk)?;
        }
    }
    Ok(())
}

// ---- The barriers, the ring and the walk ----

/// The four barriers and the ring they guard.
struct Ring<'a, T> {
    a: SharedPtr<T>,
    b: SharedPtr<T>,
    tma2mma: &'a TmaBarriers,
    mma2tma: &'a MmaBarriers,
    mma2ld: &'a MmaBarriers,
    ld2mma: &'a Barriers,
}

/// The persistent walk's extents: cluster tiles along M and N, and k-tiles.
#[derive(Clone, Copy)]
struct Walk {
    tiles_m: Var<u32>,
    tiles_n: Var<u32>,
    k_tiles: Var<u32>,
}

impl Walk {
    /// A role's own walk over the cluster tiles (the tutorial's `ClusterPersistentScheduler2D` with
    /// groups of 8 along M): the two blocks of a pair walk together.
    fn scheduler(&self, plan: &BlackwellPlan) -> PersistentScheduler {
        PersistentScheduler::new(
            self.tiles_m,
            self.tiles_n,
            Raster::Grouped { group: 8 },
            cluster(plan),
            None,
        )
    }
}

/// The cluster: one block, or the pair along x.
fn cluster(plan: &BlackwellPlan) -> ClusterShape {
    ClusterShape {
        x: plan.cfg.cluster_blocks(),
        y: 1,
    }
}

/// This block's place in its pair (the tutorial's `cbx`): 0 for one block.
fn cbx(plan: &BlackwellPlan) -> Var<u32> {
    cluster(plan).rank()
}

/// The first row of consumer `c`'s A (and output) tile in this block: `(m_idx * C * G + c * G +
/// cbx) * BLK_M`, G the CTA group.
fn tile_row(plan: &BlackwellPlan, m_idx: Var<u32>, c: u32) -> Var<u32> {
    let cfg = &plan.cfg;
    let g = cfg.cluster_blocks();
    (m_idx * (cfg.consumers.count() * g) + (c * g) + cbx(plan)) * BLOCK_M
}

/// The first row of B this block loads: `(n_idx * G + cbx) * BLK_N` (the MMA's N spans every
/// block's rows).
fn b_row(plan: &BlackwellPlan, n_idx: Var<u32>) -> Var<u32> {
    let cfg = &plan.cfg;
    (n_idx * cfg.cluster_blocks() + cbx(plan)) * cfg.tile_n
}

// ---- Main loop: the TMA producer and the MMA consumers ----

/// The TMA producer: one elected lane streams every tile's k-tiles of A and B into the ring.
#[device]
fn tma_producer<T: GemmElem>(
    plan: &BlackwellPlan,
    maps: (&TensorMap, &TensorMap),
    ring: &Ring<T>,
    walk: Walk,
) {
    let cfg = &plan.cfg;
    // The even block of a pair (every block, alone) announces each stage's bytes.
    let leader = cbx(plan).eq_(0u32);
    if elect_one() {
        let mut tiles = walk.scheduler(plan);
        // The producer starts at phase 1: its first wait on each empty stage passes.
        let mut tma_ps = match cfg.planted {
            Some(PlantedBug::BothPhasesZero) => PipelineState::consumer(cfg.depth),
            _ => PipelineState::producer(cfg.depth),
        };
        while tiles.valid() {
            let n_st = b_row(plan, tiles.n());
            for kt in 0u32..walk.k_tiles {
                ring.mma2tma.wait(&tma_ps);
                let k0 = kt * BLOCK_K;
                tma_load(plan, maps, ring, &tma_ps, (tiles.m(), n_st, k0));
                if leader {
                    arrive_expect_tx(plan, ring, &tma_ps);
                }
                tma_ps.advance();
            }
            tiles.next_tile();
        }
        // The producer's tail (CUTLASS's `load_tail`): wait until the MMA has released every
        // stage, so that no `tcgen05.commit` of the last k-tiles is still to land on this
        // block's `mma2tma` when it exits. A commit arrives when the MMAs it tracks complete,
        // and the PTX ISA orders no commit's arrival after another's: the writeback's wait on
        // the tile's later `mma2ld` commit does not promise these have landed.
        let tail: u32 = match cfg.planted {
            Some(PlantedBug::NoProducerTail) => 0u32,
            _ => cfg.depth,
        };
        for _ in 0..tail {
            ring.mma2tma.wait(&tma_ps);
            tma_ps.advance();
        }
    }
}

/// Stage `ps`'s loads: each consumer's A tile and the B tile, into this block's ring, completing
/// on `tma2mma[ps]`: this block's, or for a pair the even block's (`SM100_TMA_2SM_LOAD`).
fn tma_load<T: GemmElem>(
    plan: &BlackwellPlan,
    (a_map, b_map): (&TensorMap, &TensorMap),
    ring: &Ring<T>,
    ps: &PipelineState,
    (m_idx, n_st, k0): (Var<u32>, Var<u32>, Var<u32>),
) {
    let a_stage = ring.a + ps.stage() * plan.a_stage_elems();
    let b_stage = ring.b + ps.stage() * plan.b_stage_elems();
    let a_tiles = (0..plan.cfg.consumers.count()).map(|c| {
        let at = a_stage + c * plan.a_tile_elems();
        (at, tile_row(plan, m_idx, c))
    });
    match plan.cfg.cta_group {
        CtaGroup::One => {
            let bar = ring.tma2mma.at(ps.stage());
            for (dst, m_st) in a_tiles {
                plan.tma_a.load(a_map, &[m_st, k0], dst, bar, None);
            }
            plan.tma_b.load(b_map, &[n_st, k0], b_stage, bar, None);
        }
        CtaGroup::Two => {
            let bar = ring.tma2mma.remote_view(0u32).at(ps.stage());
            for (dst, m_st) in a_tiles {
                plan.tma_a.load_2sm(a_map, &[m_st, k0], dst, bar);
            }
            plan.tma_b.load_2sm(b_map, &[n_st, k0], b_stage, bar);
        }
    }
}

/// The stage's one arrival on `tma2mma[ps]`, expecting the bytes of every load that completes on
/// it: this block's, or (a pair, from the even block) both blocks' through its cluster address.
fn arrive_expect_tx<T: GemmElem>(plan: &BlackwellPlan, ring: &Ring<T>, ps: &PipelineState) {
    let bytes = plan.cfg.expect_tx_bytes();
    match plan.cfg.cta_group {
        CtaGroup::One => ring.tma2mma.arrive_expect_tx(ps, bytes),
        CtaGroup::Two => ring
            .tma2mma
            .remote_view(0u32)
            .arrive_expect_tx(ps.stage(), bytes),
    }
}

/// MMA consumer `c` (a host value: its A rows, its accumulator and its barrier slots): one
/// elected lane of the even block issues every tile's MMAs into accumulator `c` (for a pair,
/// both blocks' rows).
#[device]
fn mma_consumer<T: GemmElem>(
    plan: &BlackwellPlan,
    c: u32,
    ring: &Ring<T>,
    tmem: Var<u32>,
    walk: Walk,
) -> Result<(), BlackwellError> {
    let cfg = &plan.cfg;
    // This consumer's A and all of B, every stage, as the MMA partitions them (the even block's
    // slice of a pair's rows; the odd block's lie at the same offsets of its shared memory).
    let sa = STensor::new(ring.a, plan.mma_a[c as usize].clone())?;
    let sb = STensor::new(ring.b, plan.mma_b.clone())?;
    let ta_stages = sa.partition_a(&plan.mma, Var::konst(0u32))?; // (MMA, 1, 4, stage)
    let tb_stages = sb.partition_b(&plan.mma, Var::konst(0u32))?;
    let acc = TTensor::accumulator(tmem, &plan.umma, cfg.consumers.count())?;
    let acc = acc.slice(&[All, All, At(i64::from(c))])?;
    let mut mma_ps = PipelineState::consumer(cfg.depth);
    // The accumulator starts free: the first wait on ld2mma passes.
    let mut ld_ps = PipelineState::producer(1);
    if cbx(plan).eq_(0u32) & elect_one() {
        let mut tiles = walk.scheduler(plan);
        while tiles.valid() {
            ring.ld2mma.wait_at(c, ld_ps.phase());
            ld_ps.advance();
            // The writeback's TMEM loads (before its arrival) come before these MMAs' writes.
            tmem_fence_after_sync();
            for kt in 0u32..walk.k_tiles {
                ring.tma2mma.wait(&mma_ps);
                let stage = [All, All, All, Dyn(mma_ps.stage())];
                let ta = UmmaDescriptorFragment::new(&ta_stages.slice(&stage)?, GmmaMajor::K)?;
                let tb = UmmaDescriptorFragment::new(&tb_stages.slice(&stage)?, GmmaMajor::K)?;
                // The first k-tile of a tile overwrites the accumulator.
                gemm_tmem(&plan.mma, &acc, &ta, &tb, Accumulate::When(kt.ne_(0u32)))?;
                ring.mma2tma
                    .commit(&mma_ps, cfg.cta_group, cfg.commit_mask());
                mma_ps.advance();
            }
            ring.mma2ld.commit_at(c, cfg.cta_group, cfg.commit_mask());
            tiles.next_tile();
        }
    }
    Ok(())
}

// ---- Epilogue: the writeback warpgroups ----

/// Writeback warpgroup `c`: every tile's accumulator `c`, `epilogue_columns` at a time, TMEM ->
/// registers -> f16 -> its staging tile -> TMA store; after the last chunk's load it frees the
/// accumulator.
#[device]
fn writeback<T: GemmElem>(
    plan: &BlackwellPlan,
    c: u32,
    ring: &Ring<T>,
    (tmem, staging, d_map): (Var<u32>, SharedPtr<T>, &TensorMap),
    walk: Walk,
) -> Result<(), BlackwellError> {
    let cfg = &plan.cfg;
    let t = thread_id_in_warpgroup();
    let warp = warp_id_in_warpgroup();
    let epi = cfg.epilogue_columns;
    let chunks = cfg.mma_n() / epi;
    let acc = TTensor::accumulator(tmem, &plan.umma, cfg.consumers.count())?;
    let acc = acc.slice(&[All, All, At(i64::from(c))])?; // (BLK_M rows, MMA_N columns)
    let sd = STensor::new(staging, plan.smem_d.clone())?;
    // This thread's row of the staging tile, (8, 1, EPI / 8); the chunk's values in registers
    // in the row's order: register j is column j.
    let sd_row = sd.partition(&plan.r2s, Side::Dst, t)?;
    let frag = make_fragment_like(sd_row.layout())?;
    let mut wb_ps = PipelineState::consumer(1);
    let mut tiles = walk.scheduler(plan);
    while tiles.valid() {
        ring.mma2ld.wait_at(c, wb_ps.phase());
        wb_ps.advance();
        // The MMA's writes (before its commit) come before this warp's TMEM loads.
        tmem_fence_after_sync();
        let m_st = tile_row(plan, tiles.m(), c);
        // Unrolled (host values), as the tutorial's `T.unroll`.
        for chunk in 0..chunks {
            // This warp's 32 lanes (rows), the chunk's columns.
            let tile = acc.local_tile(&[32, i64::from(epi)], &[Dyn(warp), At(i64::from(chunk))])?;
            let regs = Fragment::<f32>::new(frag.clone(), 1)?;
            tmem_load(&plan.tmem_load, &tile, &regs)?;
            tmem_wait_ld();
            if chunk == chunks - 1 {
                release_accumulator(plan, ring, c);
            }
            // f32 -> T, two to a register, into this thread's row.
            copy(&plan.r2s.atom, &regs.to_pairs::<T>()?, &sd_row)?;
            // The TMA store reads the staging tile through the async proxy.
            fence_proxy_async_shared();
            warpgroup_sync(WRITEBACK_BARRIER + c);
            if t.eq_(0u32) {
                let n_st = tiles.n() * cfg.mma_n() + chunk * epi;
                plan.tma_d.store(d_map, &[m_st, n_st], staging);
                bulk_commit_group();
                bulk_wait_group(0);
            }
            // The staging tile is free again once the store has run.
            warpgroup_sync(WRITEBACK_BARRIER + c);
        }
        tiles.next_tile();
    }
    Ok(())
}

/// Every writeback thread's arrival on `ld2mma[c]`, once its TMEM loads are done: this block's
/// barrier, or for a pair the even block's (128 arrivals from each block).
fn release_accumulator<T: GemmElem>(plan: &BlackwellPlan, ring: &Ring<T>, c: u32) {
    tmem_fence_before_sync();
    match plan.cfg.cta_group {
        CtaGroup::One => ring.ld2mma.arrive_at(c),
        CtaGroup::Two => ring.ld2mma.remote_view(0u32).arrive_release_cluster(c),
    }
}
