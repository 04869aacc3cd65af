//! The async proxy: (b) expect-tx bytes that do not count every block that loads, (c) a TMA
//! store of shared memory written without `fence.proxy.async`, (d) an accumulator read before
//! `wgmma.wait_group`, (e) a stage freed to the producer before the `wgmma` reading it
//! retires, (q) an mbarrier whose init no fence published to the async proxy. The runs pass their tensor maps as `CaseArg::TensorMap`, which
//! `kernels::cases::simulate` hands the simulator by description.

use dsl_core::atom::gmma::GmmaMajor;
use dsl_core::atom::tma::{make_tma_copy, TmaCopy, TmaDescriptor, TmaGlobal, TmaKind};
use dsl_core::atom::{Accumulate, ValType};
use dsl_core::kernel::*;
use dsl_core::layout::LayoutError;
use dsl_core::pipeline::{elect_one, warpgroup_id, Barriers, PipelineState, TmaBarriers};
use dsl_core::sim::FindingKind;
use dsl_core::tensor::{
    copy, gemm_accumulate, warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait,
    DescriptorFragment, Fragment, GTensor, Idx, STensor,
};
use dsl_core::tiled::Side;
use dsl_macros::kernel;
use half::f16;
use kernels::cases::examples::{tile_product, TmaRoundTrip};
use kernels::cases::{Agreement, Buffer, CaseArg, Data, Elem, Expect, Rng, Run, Shape, Step};
use kernels::examples::tma_round_trip::TmaBox;
use kernels::examples::wgmma_tile::{WgmmaTile, WgmmaTileError};

use super::{caught, clean, marked, Planted};

const SOURCE: &str = include_str!("async_proxy.rs");
const FILE: &str = "planted/async_proxy.rs";

fn floats(stream: u64, n: usize) -> Vec<f32> {
    Rng::new(11, stream).floats(n)
}

/// The map of a row-major `rows x cols` tensor of `elem` with a `box_rows x box_cols` box, no
/// swizzle.
fn plain_map(
    elem: ValType,
    (rows, cols): (u64, u64),
    (box_rows, box_cols): (u32, u32),
) -> TmaDescriptor {
    TmaDescriptor {
        elem,
        global_dims: vec![cols, rows],
        global_strides_bytes: vec![cols * u64::from(elem.bits() / 8)],
        box_dims: vec![box_cols, box_rows],
        element_strides: vec![1, 1],
        swizzle: dsl_core::atom::tma::TmaSwizzleMode::None,
        l2_promotion: Default::default(),
    }
}

// ---- (b) expect-tx ----

const HALF_ROWS: u32 = 16;
const COLS: u32 = 32;

/// A two-block cluster loads a `2 HALF_ROWS x COLS` f32 tile: block `r` loads rows
/// `r HALF_ROWS..` and multicasts them to both blocks, so each block's barrier receives both
/// halves; its one arrival expects the bytes of `counted` halves. Each block copies the whole
/// tile to its part of `out`.
#[kernel]
fn multicast(#[host] counted: u32, k: &KernelBuilder, src: ConstTensorMap, out: GlobalPtr<f32>) {
    let elems = 2 * HALF_ROWS * COLS;
    let tile = k.shared_array::<f32>("tile", u64::from(elems), 128);
    let bar = k.shared_array::<u64>("bar", 1, 8);
    let (t, rank) = (thread_idx_x(), block_idx_x() % 2u32);
    if t.eq_(0u32) {
        mbarrier_init(bar, 1u32);
        fence_mbarrier_init();
    }
    // The peer's barrier is initialized before this block's multicast reaches it.
    cluster_sync();
    if t.eq_(0u32) {
        mbarrier_arrive_expect_tx(bar, counted * HALF_ROWS * COLS * 4); // planted: expect tx
        let row = (rank * HALF_ROWS).cast::<i32>();
        let half = tile + rank * (HALF_ROWS * COLS);
        tma_load_multicast(half, &src, &[Var::konst(0i32), row], bar, 3u32); // planted: multicast
    }
    mbarrier_wait(bar, 0u32);
    for i in (t..elems).step_by(block_dim_x()) {
        out.store_at(block_idx_x() * elems + i, tile.load_at(i)); // planted: tile read
    }
    // No block leaves while its peer may still multicast into it.
    cluster_sync();
}

fn multicast_case(counted: u32) -> Planted {
    let (rows, cols) = (2 * HALF_ROWS as usize, COLS as usize);
    let src = floats(1, rows * cols);
    let want: Vec<f32> = src.iter().chain(&src).copied().collect();
    Planted {
        kernel: multicast(counted).unwrap(),
        run: Run {
            buffers: vec![
                Buffer::input("src", Data::F32(src)),
                Buffer::output("out", Elem::F32, want.len()),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape {
                    cluster: Some([2, 1, 1]),
                    ..Shape::linear(2, 64)
                },
                args: vec![
                    CaseArg::TensorMap {
                        buffer: 0,
                        descriptor: plain_map(
                            ValType::F32,
                            (rows as u64, cols as u64),
                            (HALF_ROWS, COLS),
                        ),
                    },
                    CaseArg::Buffer(1),
                ],
            }],
            expect: vec![Expect::bits(1, Data::F32(want))],
        },
    }
}

/// (b) Each block's barrier expects one half's bytes while both halves land on it: the
/// transaction count over-runs (more bytes complete than were expected), so the phase may
/// complete with the peer's half still in flight. Reported as mbarrier misuse at the load or
/// the expect, or as the read of the half not yet landed.
#[test]
fn expect_tx_counting_one_block_of_a_multicast_overruns() {
    caught(
        &multicast_case(1),
        &[
            FindingKind::Mbarrier,
            FindingKind::DataRace,
            FindingKind::UninitializedShared,
        ],
        FILE,
        &[
            marked(SOURCE, "expect tx"),
            marked(SOURCE, "multicast"),
            marked(SOURCE, "tile read"),
        ],
    );
    clean(&multicast_case(2));
}

// ---- (c) a TMA store without fence.proxy.async ----

const BOX: TmaBox = TmaBox { rows: 16, cols: 8 };

/// How the thread that initializes the barrier publishes the init to the async proxy, which
/// completes the TMA load's transaction on it.
#[derive(Debug, Clone, Copy)]
enum InitFence {
    /// Not at all: `bar.sync` orders the init before the load's issue, but not for the proxy.
    None,
    /// `fence.mbarrier_init.release.cluster` (CUTLASS's `fence_barrier_init`).
    MbarrierInit,
    /// `fence.proxy.async.shared::cta` (the CUDA guide's TMA example).
    ProxyAsync,
}

/// What the threads do to the tile between the load and the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Negate {
    /// Nothing: a plain round trip.
    No,
    /// Negate it, the generic writes not made visible to the TMA store.
    Unfenced,
    /// Negate it, then `fence.proxy.async`.
    Fenced,
}

/// `tma_round_trip`: the barrier's init published as `init` says, the tile negated in shared
/// memory as `negate` says.
#[kernel]
fn round_trip(
    #[host] init: InitFence,
    #[host] negate: Negate,
    k: &KernelBuilder,
    src_map: ConstTensorMap,
    dst_map: TensorMap,
) {
    let elems = BOX.rows * BOX.cols;
    let tile = k.shared_array::<f32>("tile", u64::from(elems), 128);
    let bar = k.shared_array::<u64>("bar", 1, 8);
    let t = thread_idx_x();
    let x = (block_idx_x() * BOX.cols).cast::<i32>();
    let y = (block_idx_y() * BOX.rows).cast::<i32>();
    if t.eq_(0u32) {
        mbarrier_init(bar, 1u32); // planted: init
        match init {
            InitFence::None => {}
            InitFence::MbarrierInit => fence_mbarrier_init(),
            InitFence::ProxyAsync => fence_proxy_async_shared(),
        }
    }
    sync_threads();
    if t.eq_(0u32) {
        mbarrier_arrive_expect_tx(bar, elems * 4);
        tma_load(tile, &src_map, &[x, y], bar); // planted: load
    }
    mbarrier_wait(bar, 0u32);
    if negate != Negate::No {
        for i in (t..elems).step_by(block_dim_x()) {
            tile.store_at(i, -tile.load_at(i)); // planted: generic writes
        }
    }
    if negate == Negate::Fenced {
        fence_proxy_async_shared();
    }
    sync_threads();
    if t.eq_(0u32) {
        tma_store(&dst_map, &[x, y], tile); // planted: tma store
        bulk_commit_group();
        bulk_wait_group_read(0);
    }
}

fn round_trip_case(init: InitFence, negate: Negate) -> Planted {
    // The example's case gives the run (maps, grid, reference); the kernel is this one.
    let like = TmaRoundTrip {
        rows: 40,
        cols: 24,
        tile_box: BOX,
        negate: negate != Negate::No,
    };
    Planted {
        kernel: round_trip(init, negate).unwrap(),
        run: kernels::cases::Case::run(&like, 3).unwrap(),
    }
}

/// (c) Without the fence, the TMA store reads shared memory the threads wrote through the
/// generic proxy: an async-proxy race at the store, the threads' writes the other party.
#[test]
fn a_tma_store_of_unfenced_writes_is_an_async_proxy_race() {
    let f = caught(
        &round_trip_case(InitFence::MbarrierInit, Negate::Unfenced),
        &[FindingKind::AsyncProxyRace],
        FILE,
        &[marked(SOURCE, "tma store")],
    );
    let other = f.other.expect("the generic write");
    assert_eq!(
        other.location.unwrap().line,
        marked(SOURCE, "generic writes")
    );
    clean(&round_trip_case(InitFence::MbarrierInit, Negate::Fenced));
}

// ---- (q) an mbarrier whose init no proxy fence published ----

/// (q) A barrier's init that `bar.sync` orders before the TMA load's issue but that no fence
/// of the initializing thread published to the async proxy, which completes the load's bytes
/// on it: mbarrier misuse at the load, the init the other party. Either fence publishes it.
#[test]
fn an_mbarrier_init_no_proxy_fence_published_is_caught_at_the_tma_load() {
    let f = caught(
        &round_trip_case(InitFence::None, Negate::No),
        &[FindingKind::Mbarrier],
        FILE,
        &[marked(SOURCE, "load")],
    );
    let other = f.other.expect("the init");
    assert_eq!(other.location.unwrap().line, marked(SOURCE, "init"));
    clean(&round_trip_case(InitFence::MbarrierInit, Negate::No));
    clean(&round_trip_case(InitFence::ProxyAsync, Negate::No));
}

// ---- (d) accumulators read before wgmma.wait_group ----

/// `wgmma_tile`'s product, D stored from the accumulators before `wgmma.wait_group` unless
/// `wait_first`.
#[kernel]
fn early(
    #[host] t: &WgmmaTile,
    #[host] wait_first: bool,
    kb: &KernelBuilder,
    d: GlobalPtr<f32>,
    a: ConstPtr<f16>,
    b: ConstPtr<f16>,
) -> Result<(), WgmmaTileError> {
    kb.require_threads(128, 1, 1);
    let tid = thread_idx_x();
    let n = Var::konst(64u32);
    let whole = |p: GlobalPtr<f16>| {
        GTensor::row_major(p, n, n)
            .local_tile(&[64, 64], &[Idx::At(0), Idx::At(0)])
            .map(|t| t.without_bounds())
    };
    let sa = STensor::new(kb.shared_array::<f16>("sa", 4096, 1024), t.smem.clone())?;
    let sb = STensor::new(kb.shared_array::<f16>("sb", 4096, 1024), t.smem.clone())?;
    copy(
        &t.g2s.atom,
        &whole(a.cast_mut())?.partition(&t.g2s, Side::Src, tid)?,
        &sa.partition(&t.g2s, Side::Dst, tid)?,
    )?;
    copy(
        &t.g2s.atom,
        &whole(b.cast_mut())?.partition(&t.g2s, Side::Src, tid)?,
        &sb.partition(&t.g2s, Side::Dst, tid)?,
    )?;
    fence_proxy_async_shared();
    sync_threads();
    let acc = Fragment::<f32>::new(t.frag_c.clone(), 1)?;
    let ta = DescriptorFragment::new(&sa.partition_a(&t.mma, tid)?, GmmaMajor::K)?;
    let tb = DescriptorFragment::new(&sb.partition_b(&t.mma, tid)?, GmmaMajor::K)?;
    warpgroup_arrive();
    gemm_accumulate(&t.mma, &acc, &ta, &tb, Accumulate::No)?;
    warpgroup_commit_batch();
    if wait_first {
        warpgroup_wait::<0>();
    }
    let gd = GTensor::row_major(d, n, n)
        .local_tile(&[64, 64], &[Idx::At(0), Idx::At(0)])?
        .without_bounds();
    copy(&t.store, &acc, &gd.partition_c(&t.mma, tid)?)?; // planted: accumulators read
    if !wait_first {
        warpgroup_wait::<0>();
    }
    Ok(())
}

fn early_case(wait_first: bool) -> Planted {
    let tile = WgmmaTile::new().unwrap();
    let run = kernels::cases::Case::run(&kernels::cases::examples::WgmmaTile, 4).unwrap();
    Planted {
        kernel: early(&tile, wait_first).unwrap(),
        run,
    }
}

/// (d) The accumulators are read while the `wgmma` that writes them is in flight: a race on
/// the registers (or a read of registers not yet written) at the store of D.
#[test]
fn accumulators_read_before_the_wait_are_caught() {
    caught(
        &early_case(false),
        &[FindingKind::AsyncRegister],
        FILE,
        &[marked(SOURCE, "accumulators read")],
    );
    clean(&early_case(true));
}

// ---- (e) a stage freed before its wgmma retires ----

const K_TILES: u32 = 4;
const STAGES: u32 = 2;

/// The TMA copies of a 64x64 f16 k-tile into the GMMA layout (128-byte swizzle).
fn k_tile_copy(t: &WgmmaTile) -> Result<TmaCopy, LayoutError> {
    make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F16), &t.smem)
}

/// `D = A B^T` for A, B of 64 rows and `64 K_TILES` columns, through a `STAGES`-deep ring:
/// an elected lane of warpgroup 1 loads each k-tile of A and B with TMA (`full` expects their
/// bytes, `empty` frees a stage); warpgroup 0 runs a `wgmma` batch per k-tile and frees the
/// stage on `empty`, after `wgmma.wait_group` retired the batch unless `early`.
#[kernel]
fn ring(
    #[host] t: &WgmmaTile,
    #[host] early: bool,
    kb: &KernelBuilder,
    d: GlobalPtr<f32>,
    a_map: ConstTensorMap,
    b_map: ConstTensorMap,
) -> Result<(), WgmmaTileError> {
    kb.require_threads(256, 1, 1);
    let full = TmaBarriers::new(kb, "full", STAGES, 1);
    // Every thread of the consuming warpgroup arrives on `empty`.
    let empty = Barriers::new(kb, "empty", STAGES, 128);
    let ring_a = kb.shared_array::<f16>("ring_a", u64::from(STAGES * 4096), 1024);
    let ring_b = kb.shared_array::<f16>("ring_b", u64::from(STAGES * 4096), 1024);
    let tid = thread_idx_x();
    if tid.eq_(0u32) {
        full.init();
        empty.init();
        fence_mbarrier_init();
    }
    sync_threads();
    if warpgroup_id().eq_(1u32) {
        if (tid % 128u32).lt(32u32) & elect_one() {
            let mut ps = PipelineState::producer(STAGES);
            for kt in 0..K_TILES {
                empty.wait(&ps);
                full.arrive_expect_tx(&ps, 2 * 4096 * 2);
                let k = Var::konst((kt * 64) as i32);
                let at = ps.stage() * 4096u32;
                let (c, bar) = ([k, Var::konst(0i32)], full.at(ps.stage()));
                tma_load(ring_a + at, &a_map, &c, bar); // planted: producer refills
                tma_load(
                    ring_b + at,
                    &b_map,
                    &[k, Var::konst(0i32)],
                    full.at(ps.stage()),
                );
                ps.advance();
            }
        }
    } else {
        let acc = Fragment::<f32>::new(t.frag_c.clone(), 1)?;
        let mut cs = PipelineState::consumer(STAGES);
        for kt in 0..K_TILES {
            full.wait(&cs);
            let at = cs.stage() * 4096u32;
            let sa = STensor::new(ring_a + at, t.smem.clone())?;
            let sb = STensor::new(ring_b + at, t.smem.clone())?;
            let ta = DescriptorFragment::new(&sa.partition_a(&t.mma, tid)?, GmmaMajor::K)?;
            let tb = DescriptorFragment::new(&sb.partition_b(&t.mma, tid)?, GmmaMajor::K)?;
            warpgroup_arrive();
            let first = if kt == 0 {
                Accumulate::No
            } else {
                Accumulate::Yes
            };
            gemm_accumulate(&t.mma, &acc, &ta, &tb, first)?; // planted: wgmma reads
            warpgroup_commit_batch();
            if early {
                empty.arrive(&cs);
            }
            warpgroup_wait::<0>();
            if !early {
                empty.arrive(&cs);
            }
            cs.advance();
        }
        let n = Var::konst(64u32);
        let gd = GTensor::row_major(d, n, n)
            .local_tile(&[64, 64], &[Idx::At(0), Idx::At(0)])?
            .without_bounds();
        copy(&t.store, &acc, &gd.partition_c(&t.mma, tid)?)?;
    }
    Ok(())
}

fn ring_case(early: bool) -> Planted {
    let t = WgmmaTile::new().unwrap();
    let copy = k_tile_copy(&t).unwrap();
    let cols = 64 * K_TILES as usize;
    let (a, b) = (
        Rng::new(11, 2).halves(64 * cols),
        Rng::new(11, 3).halves(64 * cols),
    );
    // The product over K = 64 K_TILES: tile_product on the k-tiles' sum.
    let (mut want, mut mags) = (vec![0.0; 64 * 64], vec![0.0; 64 * 64]);
    for kt in 0..K_TILES as usize {
        let piece = |m: &[f16]| -> Vec<f16> {
            (0..64 * 64)
                .map(|i| m[(i / 64) * cols + kt * 64 + i % 64])
                .collect()
        };
        let (w, g) = tile_product(&piece(&a), &piece(&b), 64);
        for i in 0..want.len() {
            want[i] += w[i];
            mags[i] += g[i];
        }
    }
    let map = |buffer| CaseArg::TensorMap {
        buffer,
        descriptor: copy
            .descriptor(&[64, cols as u64], &[cols as u64, 1])
            .unwrap(),
    };
    Planted {
        kernel: ring(&t, early).unwrap(),
        run: Run {
            buffers: vec![
                Buffer::output("d", Elem::F32, 64 * 64),
                Buffer::input("a", Data::F16(a)),
                Buffer::input("b", Data::F16(b)),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(1, 256),
                args: vec![CaseArg::Buffer(0), map(1), map(2)],
            }],
            expect: vec![Expect::close(0, want, mags, 1e-5, Agreement::Tolerance)],
        },
    }
}

/// (e) The consumer frees the stage while the `wgmma` that reads it is in flight: the
/// producer's next TMA load into it races the tensor cores' read.
#[test]
fn a_stage_freed_before_its_wgmma_retires_races_the_refill() {
    caught(
        &ring_case(true),
        &[FindingKind::DataRace, FindingKind::AsyncProxyRace],
        FILE,
        &[
            marked(SOURCE, "producer refills"),
            marked(SOURCE, "wgmma reads"),
        ],
    );
    clean(&ring_case(false));
}
