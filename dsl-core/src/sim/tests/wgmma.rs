//! wgmma in the simulator: one warpgroup multiplies a 64 x 16 A by a 16 x 8 B (both K-major,
//! unswizzled canonical layouts that threads write, the descriptors built here from the PTX
//! ISA's definitions) into its accumulators, against the CPU; and the bugs of the issue:
//! an accumulator read before `wgmma.wait_group`, a `wgmma.mma_async` with no `wgmma.fence`
//! before it, and a stage released to a producer (an mbarrier arrive) before the wgmma that
//! reads it retires, which the producer's overwrite then races.

use super::product::{assert_product_everywhere, canonical, run_product, small_halves, K};
use super::*;
use crate::ir::op::{ScaleD, Wgmma, WgmmaA, WgmmaMma};
use crate::ir::Type;
use crate::kernel::*;
use crate::sim::*;

/// How the kernel goes wrong.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bug {
    None,
    /// Reads an accumulator between `commit_group` and `wait_group`.
    EarlyRead,
    /// No `wgmma.fence` before the MMA.
    NoFence,
    /// Releases the operands' stage to the producer before `wait_group`.
    EarlyRelease,
    /// Threads write the operands with generic stores and no `fence.proxy.async` before the
    /// wgmma reads them through the async proxy.
    NoProxyFence,
}

/// A wgmma descriptor of `start` (shared address) with LBO 128 and SBO 256, no swizzle.
fn descriptor(start: Var<u32>) -> Var<u64> {
    let s = (start >> 4u32).cast::<u64>() & 0x3fffu64;
    s | Var::konst((128u64 >> 4) << 16) | Var::konst((256u64 >> 4) << 32)
}

/// The kernel: warpgroup 0 computes `D = A B^T` (A 64 x 16 row-major, B 8 x 16 row-major, f16)
/// and writes D (64 x 8 f32); warp 4, a producer, then overwrites A's stage once warpgroup 0
/// releases it through an mbarrier.
fn kernel(bug: Bug, lines: &mut (u32, u32)) -> Kernel {
    build_kernel("wgmma", |k| {
        let d_out = k.param_ptr::<f32>("d");
        let a = k.param_ptr::<half::f16>("a");
        let b = k.param_ptr::<half::f16>("b");
        let sa = k.shared_array::<half::f16>("sa", 64 * 16, 128);
        let sb = k.shared_array::<half::f16>("sb", 8 * 16, 128);
        let empty = k.shared_array::<u64>("empty", 1, 8);
        let t = thread_idx_x();
        t.eq_(0u32).if_(|_| {
            mbarrier_init(empty, 1u32);
            fence_mbarrier_init();
        });
        t.lt(128u32).if_(|_| {
            range(t, 64u32 * 16u32).step_by(128u32).for_each_(|i| {
                let (r, c) = (i / 16u32, i % 16u32);
                sa.byte_add(canonical(r, c)).store(a.load_at(i));
            });
            t.lt(8u32 * 16u32).if_(|_| {
                let (r, c) = (t / 16u32, t % 16u32);
                sb.byte_add(canonical(r, c)).store(b.load_at(t));
            });
            if bug != Bug::NoProxyFence {
                fence_proxy_async_shared();
            }
        });
        sync_threads();
        t.lt(128u32).if_else(|arm| match arm {
            Arm::Then => {
                let d: Vec<Var<f32>> = (0..4).map(|_| Var::<f32>::uninit()).collect();
                if bug != Bug::NoFence {
                    emit(Wgmma::Fence);
                }
                lines.0 = here!();
                emit(Wgmma::MmaAsync(WgmmaMma {
                    n: 8,
                    d_ty: Type::F32,
                    ab_ty: Type::F16,
                    d: d.iter().map(|v| v.to_reg()).collect(),
                    a: WgmmaA::Desc(descriptor(sa.addr()).operand()),
                    b_desc: descriptor(sb.addr()).operand(),
                    scale_d: ScaleD::Const(false),
                    scale_a: 1,
                    scale_b: 1,
                    tnsp_a: false,
                    tnsp_b: false,
                }));
                emit(Wgmma::CommitGroup);
                if bug == Bug::EarlyRead {
                    lines.1 = here!();
                    d_out.store_at(t, d[0]);
                }
                if bug == Bug::EarlyRelease {
                    t.eq_(0u32).if_(|_| mbarrier_arrive(empty));
                }
                emit(Wgmma::WaitGroup(0));
                if bug != Bug::EarlyRelease {
                    t.eq_(0u32).if_(|_| mbarrier_arrive(empty));
                }
                // Element i of the thread: row 16 w + g + 8 ((i / 2) % 2), column 2 t4 + i % 2.
                let (w, g, t4) = (t / 32u32, (t % 32u32) / 4u32, t % 4u32);
                for (i, v) in d.iter().enumerate() {
                    let row = w * 16u32 + g + 8 * ((i as u32 / 2) % 2);
                    let col = t4 * 2u32 + i as u32 % 2;
                    d_out.store_at(row * 8u32 + col, *v);
                }
            }
            Arm::Else => {
                // The producer: once the stage is free, the next tile's A.
                mbarrier_wait(empty, 0u32);
                lines.1 = if bug == Bug::EarlyRelease {
                    here!()
                } else {
                    lines.1
                };
                range(t - 128u32, 64u32 * 16u32)
                    .step_by(32u32)
                    .for_each_(|i| sa.store_at(i, half::f16::ZERO));
            }
        });
    })
    .unwrap()
}

fn run(k: &Kernel, opts: Options) -> (Report, Vec<f32>, Vec<f32>) {
    let (a, b) = (small_halves(3, 64 * K, 3), small_halves(5, 8 * K, 3));
    run_product(k, Launch::linear(1, 160), (&a, &b), (64, 8), opts)
}

#[test]
fn a_warpgroup_product_matches_the_cpu() {
    let mut lines = (0, 0);
    let k = kernel(Bug::None, &mut lines);
    assert_product_everywhere(|options| run(&k, options));
}

#[test]
fn an_accumulator_read_before_the_wait_is_a_finding() {
    let mut lines = (0, 0);
    let k = kernel(Bug::EarlyRead, &mut lines);
    let (r, _, _) = run(&k, opts(0, Schedule::RoundRobin));
    let f = r
        .first_of(&[FindingKind::AsyncRegister])
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        f.details
            .starts_with("accumulator read before wgmma.wait_group"),
        "{r}"
    );
    assert_eq!(line(f), lines.1, "{r}");
}

#[test]
fn an_mma_without_a_fence_is_a_finding() {
    let mut lines = (0, 0);
    let k = kernel(Bug::NoFence, &mut lines);
    let (r, _, _) = run(&k, opts(0, Schedule::RoundRobin));
    let f = r
        .first_of(&[FindingKind::AsyncRegister])
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!((f.op, line(f)), ("wgmma.mma_async", lines.0), "{r}");
}

/// Operands that threads wrote, read by the wgmma (the async proxy) with only a barrier
/// between: the barrier orders the generic proxy, not the async one.
#[test]
fn operands_written_without_the_proxy_fence_race_the_wgmma() {
    let mut lines = (0, 0);
    let k = kernel(Bug::NoProxyFence, &mut lines);
    for (seed, schedule) in [(0, Schedule::RoundRobin), (1, Schedule::Random)] {
        let (r, _, _) = run(&k, opts(seed, schedule));
        let f = r
            .first_of(&[FindingKind::AsyncProxyRace])
            .unwrap_or_else(|| panic!("{schedule:?}: {r}"));
        assert_eq!((f.op, line(f)), ("wgmma.mma_async", lines.0), "{r}");
    }
}

#[test]
fn a_stage_released_before_the_wgmma_retires_races_the_producer() {
    let mut lines = (0, 0);
    let k = kernel(Bug::EarlyRelease, &mut lines);
    for (seed, schedule) in [
        (0, Schedule::RoundRobin),
        (1, Schedule::Random),
        (2, Schedule::Pct { depth: 3 }),
    ] {
        let (r, _, _) = run(&k, opts(seed, schedule));
        let f = r
            .first_of(&[FindingKind::DataRace])
            .unwrap_or_else(|| panic!("{schedule:?}: {r}"));
        // Either side may come second: the producer's store or the wgmma's read.
        let sides = [Some(f.op), f.other.as_ref().map(|o| o.op)];
        assert!(
            sides.contains(&Some("wgmma.mma_async")) && sides.contains(&Some("st")),
            "{r}"
        );
        let lines_seen = [
            Some(line(f)),
            f.other.as_ref().and_then(|o| o.location).map(|l| l.line),
        ];
        assert!(
            lines_seen.contains(&Some(lines.0)) && lines_seen.contains(&Some(lines.1)),
            "{r}"
        );
    }
}
