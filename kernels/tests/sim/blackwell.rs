//! The warp-specialized Blackwell GEMM (tutorial steps 7, 8 and 9: TMA into an mbarrier ring,
//! `tcgen05.mma` into tensor memory, one block or a pair, one MMA consumer or two, the
//! writeback through `tcgen05.ld` and TMA stores) in the simulator, launched as its host plan
//! launches it, under four seeds each: bit-equal to the CPU on small integers, within the GEMM
//! tolerance on random inputs, with no finding.

use dsl_core::sim::{Options, Schedule, Simulator};
use kernels::blackwell::{kernel_of, BlackwellConfig, BlackwellPlan};
use kernels::gemm::GemmDtype;

use super::plan::{self, Inputs};

/// Runs `cfg` on `shape` of `dtype` with `inputs` under `opts` on a device of `sms` SMs: no
/// finding, and D bit-equal to the CPU for integers or within the GEMM tolerance.
fn check(
    cfg: BlackwellConfig,
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    sms: u32,
    inputs: Inputs,
    opts: &Options,
) {
    let p = BlackwellPlan::new(cfg, dtype).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let kernel = kernel_of(&p).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let sim = Simulator::new(kernel.check().unwrap_or_else(|e| panic!("{e}")));
    let (m, n, k) = shape;
    let launch = p
        .launch(m as u32, n as u32, k as u32, sms)
        .unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let a = plan::inputs(inputs, 31 + m as u64, m * k, dtype);
    let b = plan::inputs(inputs, 37 + n as u64, n * k, dtype);
    let out = plan::run(&[&sim], &launch, shape, &a, &b, opts);
    let what = format!(
        "{cfg} {dtype} {shape:?} {:?} seed {}",
        opts.schedule, opts.seed
    );
    assert!(out.is_clean(), "{what}:\n{}", out.findings());
    plan::assert_result(&out.d, &a, &b, shape, dtype, inputs, &what);
}

/// The schedules and seeds each case runs under.
const RUNS: [(u64, Schedule); 4] = [
    (0, Schedule::RoundRobin),
    (1, Schedule::Random),
    (2, Schedule::Pct { depth: 3 }),
    (3, Schedule::Random),
];

/// Every run of [`RUNS`] on integers (bf16 and f16 in turn), then one on random inputs.
fn every_run(cfg: BlackwellConfig, shape: (usize, usize, usize), sms: u32) {
    for (i, &(seed, s)) in RUNS.iter().enumerate() {
        let dtype = if i % 2 == 0 {
            GemmDtype::Bf16
        } else {
            GemmDtype::F16
        };
        let ints = Inputs::Integers { range: 1 };
        check(cfg, shape, dtype, sms, ints, &Options::seeded(seed, s));
    }
    let opts = Options::seeded(4, Schedule::Random);
    check(cfg, shape, GemmDtype::Bf16, sms, Inputs::Random, &opts);
}

/// Step 7 (one block: TMA producer, MMA warp, writeback warpgroup): one block walks six tiles
/// of a shape with residues in M, N and K.
#[test]
fn step7_walks_several_tiles() {
    every_run(BlackwellConfig::step7(4), (200, 264, 136), 1);
}

/// Step 8 (a pair of blocks, one `cta_group::2` MMA): one pair walks several cluster tiles.
#[test]
fn step8_walks_several_cluster_tiles() {
    every_run(BlackwellConfig::step8(4), (520, 264, 136), 2);
}

/// Step 9 (two MMA consumers sharing B in the pair).
#[test]
fn step9_walks_several_cluster_tiles() {
    every_run(BlackwellConfig::step9(4), (1000, 264, 136), 2);
}

/// The three steps at 512x256x256, 1024x768x320 and a shape with residues and more than one
/// tile per cluster, on 8 SMs (`--ignored`, release).
#[test]
#[ignore]
fn larger_shapes() {
    for cfg in [
        BlackwellConfig::step7(4),
        BlackwellConfig::step8(4),
        BlackwellConfig::step9(4),
    ] {
        for shape in [(512, 256, 256), (1024, 768, 320), (1000, 776, 264)] {
            every_run(cfg, shape, 8);
        }
    }
}
