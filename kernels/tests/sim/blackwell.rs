//! The warp-specialized Blackwell GEMM (tutorial steps 7, 8 and 9: TMA into an mbarrier ring,
//! `tcgen05.mma` into tensor memory, one block or a pair, one MMA consumer or two, the
//! writeback through `tcgen05.ld` and TMA stores) in the simulator, launched as its host plan
//! launches it.

use dsl_core::sim::{Options, Schedule, Simulator};
use kernels::blackwell::{kernel_of, BlackwellConfig, BlackwellPlan};
use kernels::gemm::GemmDtype;

use super::plan::{self, Inputs};

/// Runs `cfg` on `shape` with `inputs` under `opts`: no finding, and the result bit-equal for
/// integers or within the GEMM tolerance.
pub fn check(
    cfg: BlackwellConfig,
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    inputs: Inputs,
    opts: &Options,
) {
    let p = BlackwellPlan::new(cfg, dtype).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let kernel = kernel_of(&p).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let sim = Simulator::new(kernel.check().unwrap_or_else(|e| panic!("{e}")));
    let (m, n, k) = shape;
    let launch = p
        .launch(m as u32, n as u32, k as u32, plan::SMS)
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

#[test]
fn step7_runs_clean() {
    check(
        BlackwellConfig::step7(4),
        (256, 256, 128),
        GemmDtype::F16,
        Inputs::Integers { range: 2 },
        &Options::seeded(0, Schedule::RoundRobin),
    );
}

#[test]
#[ignore]
fn survey() {
    for cfg in [BlackwellConfig::step7(4), BlackwellConfig::step8(4), BlackwellConfig::step9(4)] {
        for shape in [(512, 256, 256), (1024, 768, 320), (1000, 776, 264)] {
            for (seed, schedule) in [(0, Schedule::RoundRobin), (1, Schedule::Random), (2, Schedule::Pct { depth: 3 })] {
                let t = std::time::Instant::now();
                let r = std::panic::catch_unwind(|| {
                    check(cfg, shape, GemmDtype::Bf16, Inputs::Integers { range: 1 }, &Options::seeded(seed, schedule))
                });
                println!("{cfg} {shape:?} {schedule:?}: {} in {:.2?}", if r.is_ok() { "ok" } else { "FAILED" }, t.elapsed());
            }
        }
    }
}

#[test]
#[ignore]
fn planted_survey() {
    use kernels::blackwell::PlantedBug;
    for (cfg, bug) in [
        (BlackwellConfig::step7(4), PlantedBug::BothPhasesZero),
        (BlackwellConfig::step8(4), PlantedBug::BothPhasesZero),
        (BlackwellConfig::step8(4), PlantedBug::ExpectTxWithoutCtaGroup),
        (BlackwellConfig::step9(4), PlantedBug::ExpectTxWithoutCtaGroup),
    ] {
        for (seed, schedule) in [(0, Schedule::RoundRobin), (1, Schedule::Random)] {
            let r = std::panic::catch_unwind(|| {
                check(cfg.with_planted(bug), (512, 256, 256), GemmDtype::Bf16, Inputs::Integers { range: 1 }, &Options::seeded(seed, schedule))
            });
            let msg = r.err().map(|e| e.downcast_ref::<String>().cloned().unwrap_or_default()).unwrap_or("NOT CAUGHT".into());
            println!("=== {cfg} {bug:?} {schedule:?}:\n{}", msg.chars().take(1500).collect::<String>());
        }
    }
}
