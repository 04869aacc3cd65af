//! Memory protocols: (f) the multistage ring read without the barrier after
//! `cp.async.wait_group`, (h) a stream-K hand-over whose flag no block raises.

use std::cell::RefCell;

use dsl_core::ir::Scope;
use dsl_core::kernel::*;
use dsl_core::layout::LayoutError;
use dsl_core::pipeline::NamedBarrier;
use dsl_core::sim::FindingKind;
use dsl_core::tensor::{
    clear, copy, cp_async_fence, cp_async_wait_n, gemm, store_fragment, Fragment, GTensor, Idx,
    STensor,
};
use dsl_core::tiled::Side;
use dsl_macros::kernel;
use half::f16;
use kernels::cases::{Agreement, Buffer, CaseArg, Data, Elem, Expect, Rng, Run, Shape, Step};
use kernels::gemm::{Accum, GemmDtype};
use kernels::multistage::{MultistageConfig, MultistageError, MultistageParts, Setup};

use super::{caught, clean, marked, Planted};

pub const SOURCE: &str = include_str!("memory.rs");
pub const FILE: &str = "planted/memory.rs";

/// The multistage program's setup (its tiled copies, MMA, shared layouts) for 32x32x32 tiles
/// of 2x2 warps and a ring of 3 stages: 128 threads, so that a warp reads bytes another warp's
/// copies brought.
fn small_setup() -> Setup {
    let parts = MultistageParts {
        tile_m: 32,
        tile_n: 32,
        ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
    };
    Setup::new(&MultistageConfig::new(parts).unwrap()).unwrap()
}

/// `ldmatrix` of the k-block `s` of a stage's partition into the fragment's slice `r` (a plain
/// function: its ops carry the calling statement's line).
fn ldsm(
    plan: &Setup,
    (from, to): (&STensor<f16>, &Fragment<u32>),
    (s, r): (&[Idx], &[Idx]),
) -> Result<(), LayoutError> {
    copy(&plan.s2r_atom, &from.slice(s)?, &to.slice(r)?)
}

fn note(slot: &RefCell<Option<LayoutError>>, r: Result<(), LayoutError>) {
    if let Err(e) = r {
        slot.borrow_mut().get_or_insert(e);
    }
}

/// The multistage main loop with the program's building blocks (predicated `cp.async` of
/// k-tiles into a ring of `stages`, `ldmatrix` of each k-block, `mma.sync`, the accumulators to
/// D): per k-tile, `cp.async.wait_group stages-2` and (unless the bug is planted) `bar.sync`
/// before the `ldmatrix` reads of the stage that landed, `bar.sync` before the stage read last
/// is refilled. `D = A B^T`, A `m x k`, B `n x k`.
#[kernel]
fn ring_gemm(
    #[host] plan: &Setup,
    #[host] barrier_after_wait: bool,
    kb: &KernelBuilder,
    d: GlobalPtr<f16>,
    a: GlobalPtr<f16>,
    b: GlobalPtr<f16>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) -> Result<(), MultistageError> {
    use Idx::{All, At, Dyn};
    let cfg = &plan.cfg;
    kb.require_threads(cfg.threads(), 1, 1);
    let (bm, bn, bk) = (
        i64::from(cfg.tile_m),
        i64::from(cfg.tile_n),
        i64::from(cfg.tile_k),
    );
    let stages = cfg.stages;
    let nk = plan.frag_a.mode(2)?.size();
    let failed = RefCell::new(None::<LayoutError>);
    let idx = thread_idx_x();
    let (tm, tn) = (block_idx_y(), block_idx_x());
    let ga = GTensor::row_major(a, m, k).local_tile(&[bm, bk], &[Dyn(tm), All])?;
    let gb = GTensor::row_major(b, n, k).local_tile(&[bn, bk], &[Dyn(tn), All])?;
    let gd = GTensor::row_major(d, m, n).local_tile(&[bm, bn], &[Dyn(tm), Dyn(tn)])?;
    let smem = kb.dynamic_shared::<f16>(128);
    let sa = STensor::new(smem, plan.smem_a.clone())?;
    let sb = STensor::new(smem + (plan.smem_a.cosize() as u32), plan.smem_b.clone())?;
    let fa = Fragment::<u32>::new(plan.frag_a.clone(), 2)?;
    let fb = Fragment::<u32>::new(plan.frag_b.clone(), 2)?;
    let acc = Fragment::<f32>::new(plan.frag_c.clone(), 1)?;
    clear(&acc);
    let t_as = sa.partition(&plan.s2r_a, Side::Src, idx)?;
    let t_bs = sb.partition(&plan.s2r_b, Side::Src, idx)?;
    let (fa_view, fb_view) = (
        fa.with_layout(plan.retile_a.clone()),
        fb.with_layout(plan.retile_b.clone()),
    );
    let t_ag = ga.partition(&plan.g2s, Side::Src, idx)?;
    let t_as_copy = sa.partition(&plan.g2s, Side::Dst, idx)?;
    let t_bg = gb.partition(&plan.g2s, Side::Src, idx)?;
    let t_bs_copy = sb.partition(&plan.g2s, Side::Dst, idx)?;
    // A k-tile into a stage; tiles past K are zero-filled by the copies' predicates.
    let load_tile = |tile: Idx, stage: Idx| -> Result<(), LayoutError> {
        let (g, s) = ([All, All, All, tile], [All, All, All, stage]);
        copy(&plan.g2s_atom, &t_ag.slice(&g)?, &t_as_copy.slice(&s)?)?;
        copy(&plan.g2s_atom, &t_bg.slice(&g)?, &t_bs_copy.slice(&s)?)
    };
    let ntile = (k + (cfg.tile_k - 1)) / cfg.tile_k;
    for s in 0..i64::from(stages - 1) {
        note(&failed, load_tile(At(s), At(s)));
        cp_async_fence();
    }
    for itile in Var::konst(0u32)..ntile {
        cp_async_wait_n(stages - 2);
        if barrier_after_wait {
            sync_threads();
        }
        let stage = itile % stages;
        for ik in 0..nk {
            let (s, r) = ([All, All, At(ik), Dyn(stage)], [All, All, At(ik)]);
            note(&failed, ldsm(plan, (&t_as, &fa_view), (&s, &r))); // planted: ldmatrix A
            note(&failed, ldsm(plan, (&t_bs, &fb_view), (&s, &r))); // planted: ldmatrix B
            let (ka, kb_) = (fa.slice(&[All, All, At(ik)]), fb.slice(&[All, All, At(ik)]));
            if let (Ok(ka), Ok(kb_)) = (ka, kb_) {
                note(&failed, gemm(&plan.mma, &acc, &ka, &kb_));
            }
        }
        // Every warp has read the stage the next copy refills (the one read last k-tile).
        sync_threads();
        let next = itile + (stages - 1);
        note(&failed, load_tile(Dyn(next), Dyn(next % stages)));
        cp_async_fence();
    }
    failed.into_inner().map_or(Ok(()), Err)?;
    store_fragment(&acc, &gd.partition_c(&plan.mma, idx)?)?;
    Ok(())
}

fn ring_gemm_case(barrier_after_wait: bool) -> Planted {
    let plan = small_setup();
    let (m, n, k) = (50usize, 45usize, 136usize);
    let (a, b) = (Rng::new(9, 1).halves(m * k), Rng::new(9, 2).halves(n * k));
    let want: Vec<f64> = (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            (0..k)
                .map(|p| a[r * k + p].to_f64() * b[c * k + p].to_f64())
                .sum()
        })
        .collect();
    Planted {
        kernel: ring_gemm(&plan, barrier_after_wait).unwrap(),
        run: Run {
            buffers: vec![
                Buffer::output("d", Elem::F16, m * n),
                Buffer::input("a", Data::F16(a)),
                Buffer::input("b", Data::F16(b)),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::new([2, 2, 1], [plan.cfg.threads(), 1, 1])
                    .with_dynamic_smem(plan.cfg.smem_bytes()),
                args: vec![
                    CaseArg::Buffer(0),
                    CaseArg::Buffer(1),
                    CaseArg::Buffer(2),
                    CaseArg::U32(m as u32),
                    CaseArg::U32(n as u32),
                    CaseArg::U32(k as u32),
                ],
            }],
            expect: vec![Expect {
                buffer: 0,
                check: kernels::cases::Check::Frobenius { want, tol: 2e-3 },
                agreement: Agreement::Tolerance,
            }],
        },
    }
}

/// (f) Without the barrier after `cp.async.wait_group`, a warp's `ldmatrix` reads bytes
/// another warp's `cp.async` copied, which only that warp's wait completed: a race (or a read
/// of bytes not yet copied) at the `ldmatrix`, the `cp.async` the other party.
#[test]
fn the_multistage_loop_without_the_barrier_after_the_wait_races_at_the_ldmatrix() {
    let f = caught(
        &ring_gemm_case(false),
        &[FindingKind::DataRace, FindingKind::UninitializedShared],
        FILE,
        &[marked(SOURCE, "ldmatrix A"), marked(SOURCE, "ldmatrix B")],
    );
    assert_eq!(f.op, "ldmatrix", "{f}");
    if let Some(other) = &f.other {
        assert_eq!(other.op, "cp.async", "{f}");
    }
    clean(&ring_gemm_case(true));
}

const THREADS: u32 = 128;
const PER_THREAD: u32 = 8;

/// Split-K of one tile between two blocks, as stream-K hands a tile's partial sums over: block
/// 1 (a start) sums the second half of each thread's `PER_THREAD` values, stores them to its
/// slot, and after its warpgroup's barrier thread 0 releases them (`fence.acq_rel`, unless
/// `fenced` is false) and raises flag `raised`; block 0 (the end) sums the first half, spins on
/// flag 1 with `ld.acquire`, and adds the slot. The fence is at scope `fence`, the flag's store
/// and load at `flag`
/// (the device's, for blocks of two clusters).
#[kernel]
pub fn hand_over(
    #[host] raised: u32,
    #[host] fenced: bool,
    #[host] fence: Scope,
    #[host] flag: Scope,
    k: &KernelBuilder,
    x: GlobalPtr<f32>,
    slots: GlobalPtr<f32>,
    flags: GlobalPtr<u32>,
    out: GlobalPtr<f32>,
) {
    k.require_threads(THREADS, 1, 1);
    let own = NamedBarrier::new(1, THREADS);
    let (t, me) = (thread_idx_x(), block_idx_x());
    let half = PER_THREAD / 2;
    let first = t * PER_THREAD + me * half;
    let mut sum = Var::konst(0.0f32).fresh();
    for i in 0..half {
        sum += x.load_at(first + i);
    }
    if me.eq_(1u32) {
        slots.store_at(t, sum);
        own.sync();
        if t.eq_(0u32) {
            if fenced {
                fence_acq_rel(fence);
            }
            (flags + raised).store_relaxed(1u32, flag); // planted: raises
        }
    } else {
        if t.eq_(0u32) {
            let raised_at = flags + 1u32;
            while raised_at.load_acquire(flag).ne_(1u32) {} // planted: end spins
        }
        own.sync();
        out.store_at(t, sum + slots.load_at(t)); // planted: end adds
    }
}

/// The device's scope for both the fence and the flag.
pub const GPU: (Scope, Scope) = (Scope::Gpu, Scope::Gpu);

/// The hand-over, its flag `raised` and released (`fenced`) or not, at scopes `(fence, flag)`,
/// as a case whose
/// reference is the whole sum.
pub fn hand_over_case(raised: u32, fenced: bool, (fence, flag): (Scope, Scope)) -> Planted {
    let n = (THREADS * PER_THREAD) as usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let want: Vec<f32> = x
        .chunks(PER_THREAD as usize)
        .map(|c| c.iter().sum())
        .collect();
    Planted {
        kernel: hand_over(raised, fenced, fence, flag).unwrap(),
        run: Run {
            buffers: vec![
                Buffer::input("x", Data::F32(x)),
                Buffer::output("slots", Elem::F32, THREADS as usize),
                Buffer::scratch("flags", Elem::U32, 2),
                Buffer::output("out", Elem::F32, THREADS as usize),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(2, THREADS),
                args: (0..4).map(CaseArg::Buffer).collect(),
            }],
            expect: vec![Expect::bits(3, Data::F32(want))],
        },
    }
}

/// (h) The start raises flag 0, the end waits on flag 1: nothing raises it, and the end's spin
/// is a deadlock that names its line.
#[test]
fn a_stream_k_end_waiting_on_a_flag_nobody_raises_deadlocks_at_its_spin() {
    let f = caught(
        &hand_over_case(0, true, GPU),
        &[FindingKind::Deadlock],
        FILE,
        &[marked(SOURCE, "end spins")],
    );
    assert!(f.details.contains("block (0,0,0)"), "{}", f.details);
    clean(&hand_over_case(1, true, GPU));
}

/// Each lane of a warp copies 16 bytes of `x` into its part of a shared row with `cp.async`,
/// then 16 more bytes of `x` over the same part: with a wait between (`waited`), the second
/// copy's bytes are what the row holds; without, the two copies' writes land in either order.
#[kernel]
fn copied_twice(#[host] waited: bool, k: &KernelBuilder, x: GlobalPtr<u32>, out: GlobalPtr<u32>) {
    k.require_threads(32, 1, 1);
    let s = k.shared_array::<u32>("s", 128, 16);
    let t = thread_idx_x();
    cp_async(s + t * 4u32, x + t * 4u32, 16, None); // planted: first copy
    cp_async_commit();
    if waited {
        cp_async_wait_group(0);
    }
    cp_async(s + t * 4u32, x + (t * 4u32 + 128u32), 16, None); // planted: second copy
    cp_async_commit();
    cp_async_wait_all();
    for i in 0..4u32 {
        out.store_at(t * 4u32 + i, s.load_at(t * 4u32 + i));
    }
}

fn copied_twice_case(waited: bool) -> Planted {
    let kernel = copied_twice(waited).unwrap();
    Planted::one_block_in_out(kernel, 32, (0..256).collect(), (128..256).collect())
}

/// (n) Two `cp.async` of one warp to the same shared bytes with no `cp.async.wait_group` between
/// them (a ring whose stages alias, say): a race between the two copies, at either's line.
#[test]
fn two_copies_to_the_same_bytes_without_a_wait_race() {
    let f = caught(
        &copied_twice_case(false),
        &[FindingKind::DataRace],
        FILE,
        &[marked(SOURCE, "first copy"), marked(SOURCE, "second copy")],
    );
    let other = f.other.as_ref().expect("the other copy");
    assert!(other.write && other.op == "cp.async", "{f}");
    clean(&copied_twice_case(true));
}
