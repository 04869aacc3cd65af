//! The warp-specialized Hopper GEMM (TMA loads into an mbarrier ring, wgmma, persistent
//! blocks, TMA or direct stores) in the simulator, launched as its plan launches it.

use dsl_core::sim::{Options, Schedule, Simulator};
use kernels::gemm::{Accum, Device, GemmDtype, GemmProgram, KernelChoice, Problem};
use kernels::hopper::{HopperSchedule, HopperWs};

use super::plan::{self, Inputs};

static HOPPER: HopperWs = HopperWs;

/// The plan of `schedule` for `m x n x k` of `dtype`: the kernel's simulator and the launch on
/// the H200's facts with `SMS` multiprocessors.
fn planned(
    schedule: &HopperSchedule,
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
) -> (Simulator, kernels::gemm::LaunchPlan) {
    let device = Device {
        sms: plan::SMS,
        ..Device::h200()
    };
    let p = Problem {
        m,
        n,
        k,
        dtype,
        acc: Accum::F32,
        kernel: KernelChoice::Program(&HOPPER),
        config: None,
    };
    let plan = HOPPER
        .plan(&p, &device, Some(schedule))
        .unwrap_or_else(|e| panic!("{schedule}: {e}"));
    let kernel = plan.kernel().unwrap_or_else(|e| panic!("{schedule}: {e}"));
    let sim = Simulator::new(kernel.check().unwrap_or_else(|e| panic!("{e}")));
    (sim, plan.launch(m as u32, n as u32, k as u32, &device))
}

/// Runs `schedule` on `shape` with `inputs` under `opts`: asserts no finding and the result
/// (bit-equal for integers, within the GEMM tolerance for random inputs).
fn check(
    schedule: &HopperSchedule,
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    inputs: Inputs,
    opts: &Options,
) {
    let (sim, launch) = planned(schedule, shape, dtype);
    let (m, n, k) = shape;
    let a = plan::inputs(inputs, 11 + m as u64, m * k, dtype);
    let b = plan::inputs(inputs, 17 + n as u64, n * k, dtype);
    let out = plan::run(&[&sim], &launch, shape, &a, &b, opts);
    let what = format!(
        "{schedule} {dtype} {shape:?} {:?} seed {}",
        opts.schedule, opts.seed
    );
    assert!(out.is_clean(), "{what}:\n{}", out.findings());
    plan::assert_result(&out.d, &a, &b, shape, dtype, inputs, &what);
}

#[test]
fn wide_runs_clean() {
    let s = HopperSchedule::WIDE;
    check(
        &s,
        (256, 256, 128),
        GemmDtype::F16,
        Inputs::Integers { range: 2 },
        &Options::seeded(0, Schedule::RoundRobin),
    );
}

/// Every schedule of the tuning sweep on the first of a few shapes with residues it takes,
/// under a random schedule: prints what fails (a survey, not a test of record).
#[test]
#[ignore]
fn sweep_survey() {
    let shapes = [
        (300, 264, 200),
        (200, 256, 256),
        (130, 136, 120),
        (520, 264, 320),
        (64, 264, 200),
    ];
    let mut failures = Vec::new();
    for spec in HopperSchedule::SWEEP {
        let s: HopperSchedule = spec.parse().unwrap();
        let device = kernels::gemm::Device {
            sms: plan::SMS,
            ..kernels::gemm::Device::h200()
        };
        let Some(shape) = shapes.iter().copied().find(|&(m, n, k)| {
            let p = Problem {
                m,
                n,
                k,
                dtype: GemmDtype::Bf16,
                acc: Accum::F32,
                kernel: KernelChoice::Program(&HOPPER),
                config: None,
            };
            HOPPER.plan(&p, &device, Some(&s)).is_ok()
        }) else {
            println!("{spec}: takes none of the shapes");
            continue;
        };
        let t = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| {
            check(
                &s,
                shape,
                GemmDtype::Bf16,
                Inputs::Integers { range: 1 },
                &Options::seeded(1, Schedule::Random),
            )
        });
        println!(
            "{spec} {shape:?}: {} in {:.2?}",
            if r.is_ok() { "ok" } else { "FAILED" },
            t.elapsed()
        );
        if r.is_err() {
            failures.push(spec);
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}
