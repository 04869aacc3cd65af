//! The warp-specialized Hopper GEMM (TMA loads into an mbarrier ring, wgmma, persistent
//! blocks, TMA or direct stores) in the simulator, launched as its plan launches it: its
//! default schedule and schedules of the tuning sweep (ping-pong consumers, clusters along M and
//! N, stream-K, swapped operands, direct stores, a tile queue, Hilbert order) on shapes with
//! residues in M, N and K and more than one tile per block, under four seeds each: bit-equal to
//! the CPU on small integers (every partial sum exact), within the GEMM tolerance on random
//! inputs, with no finding; the same seed gives the same report.

use dsl_core::sim::{Options, Report, Schedule, Simulator};
use kernels::gemm::{Accum, Device, GemmDtype, GemmProgram, KernelChoice, LaunchPlan, Problem};
use kernels::hopper::{launch, HopperSchedule, HopperWs};

use super::plan::{self, Inputs};

static HOPPER: HopperWs = HopperWs;

/// The schedules and seeds each case runs under.
const RUNS: [(u64, Schedule); 4] = [
    (0, Schedule::RoundRobin),
    (1, Schedule::Random),
    (2, Schedule::Pct { depth: 3 }),
    (3, Schedule::Random),
];

/// The plan of `schedule` for `m x n x k` of `dtype` on the H200's facts with `sms`
/// multiprocessors: the kernel's simulator and the launch.
fn planned(
    schedule: &HopperSchedule,
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    sms: u32,
) -> (Simulator, LaunchPlan) {
    let device = Device {
        sms,
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

/// Runs `schedule` on `shape` of `dtype` with `inputs` under `opts` on `sms` SMs: no finding,
/// and D right; returns the report.
fn check(
    schedule: &HopperSchedule,
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    sms: u32,
    inputs: Inputs,
    opts: &Options,
) -> Report {
    let (sim, launch) = planned(schedule, shape, dtype, sms);
    let (m, n, k) = shape;
    let a = plan::inputs(inputs, 11 + m as u64, m * k, dtype);
    let b = plan::inputs(inputs, 17 + n as u64, n * k, dtype);
    let out = plan::run(&[&sim], &launch, shape, &a, &b, opts);
    let what = format!(
        "{schedule} {dtype} {shape:?} on {sms} SMs, {:?} seed {}",
        opts.schedule, opts.seed
    );
    assert!(out.is_clean(), "{what}:\n{}", out.findings());
    plan::assert_result(&out.d, &a, &b, shape, dtype, inputs, &what);
    out.reports.into_iter().next().expect("a launch")
}

/// Every run of [`RUNS`] on integers, then one on random inputs.
fn every_run(schedule: &HopperSchedule, shape: (usize, usize, usize), sms: u32) {
    for (i, &(seed, s)) in RUNS.iter().enumerate() {
        let dtype = if i % 2 == 0 {
            GemmDtype::Bf16
        } else {
            GemmDtype::F16
        };
        let ints = Inputs::Integers { range: 1 };
        check(schedule, shape, dtype, sms, ints, &Options::seeded(seed, s));
    }
    let opts = Options::seeded(4, Schedule::Random);
    check(schedule, shape, GemmDtype::Bf16, sms, Inputs::Random, &opts);
}

fn schedule(spec: &str) -> HopperSchedule {
    spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// The H200's default schedule for 512x256x256 (ping-pong consumers with B resident), on 8 SMs.
#[test]
fn the_default_plan_at_512x256x256() {
    let shape = (512, 256, 256);
    let s = HopperWs::default_schedule(shape.0, shape.1, shape.2, &Device::h200());
    let (first, again) = (
        check(
            &s,
            shape,
            GemmDtype::Bf16,
            8,
            Inputs::Integers { range: 1 },
            &Options::seeded(0, Schedule::RoundRobin),
        ),
        check(
            &s,
            shape,
            GemmDtype::Bf16,
            8,
            Inputs::Integers { range: 1 },
            &Options::seeded(0, Schedule::RoundRobin),
        ),
    );
    assert_eq!(first.to_string(), again.to_string(), "not repeatable");
    for &(seed, sch) in &RUNS[1..] {
        check(
            &s,
            shape,
            GemmDtype::F16,
            8,
            Inputs::Integers { range: 2 },
            &Options::seeded(seed, sch),
        );
    }
}

/// Cooperative consumers, TMA stores, two blocks walking four tiles each.
#[test]
fn the_wide_tile_walks_several_tiles_per_block() {
    every_run(&HopperSchedule::WIDE, (500, 520, 136), 2);
}

/// Ping-pong consumers, each owning whole tiles.
#[test]
fn ping_pong_consumers() {
    every_run(&schedule("128x128x64s5_p"), (300, 264, 136), 2);
}

/// Clusters along M and along N, the shared operand multicast.
#[test]
fn clusters_of_two() {
    every_run(&schedule("128x128x64s5_c2x1"), (520, 136, 136), 2);
    every_run(&schedule("128x64x64s8_c1x2"), (136, 264, 136), 2);
}

/// Stream-K: the k-tiles of the two tiles shared out over four blocks, the partial sums handed
/// over through the workspace.
#[test]
fn stream_k_shares_the_tiles_out() {
    let s = HopperSchedule::WIDE;
    let shape = (200, 136, 1000);
    let l = launch(
        &s,
        shape.0 as u32,
        shape.1 as u32,
        shape.2 as u32,
        4,
        60 << 20,
    );
    assert!(
        l.split.sk_tiles > 0,
        "the shape must be split: {:?}",
        l.split
    );
    every_run(&s, shape, 4);
}

/// A and B swapped (the kernel computes D^T).
#[test]
fn swapped_operands() {
    every_run(&schedule("128x64x64s8_t"), (136, 296, 136), 2);
}

/// D stored from the registers, no staging tile.
#[test]
fn direct_stores() {
    every_run(&schedule("128x256x64s4_f1_u8"), (264, 520, 136), 2);
}

/// Tiles taken from a queue (an atomic counter in the workspace).
#[test]
fn a_tile_queue() {
    every_run(
        &schedule("64x256x64s7_f1_e128_r4_p_q_l256_vnnf"),
        (200, 256, 256),
        2,
    );
}

/// Every schedule of the tuning sweep on the first of a few shapes with residues it takes, once
/// on integers under a random schedule (a survey of the sweep: `--ignored`, release).
#[test]
#[ignore]
fn every_sweep_schedule() {
    let shapes = [(300, 264, 200), (200, 256, 256), (520, 264, 320)];
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let mut failures = Vec::new();
    for spec in HopperSchedule::SWEEP {
        let s = schedule(spec);
        let takes = |&(m, n, k): &(usize, usize, usize)| {
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
        };
        let Some(shape) = shapes.iter().find(|s| takes(s)).copied() else {
            failures.push(format!("{spec}: takes none of the shapes"));
            continue;
        };
        let r = std::panic::catch_unwind(|| {
            let opts = Options::seeded(1, Schedule::Random);
            check(
                &s,
                shape,
                GemmDtype::Bf16,
                4,
                Inputs::Integers { range: 1 },
                &opts,
            );
        });
        if r.is_err() {
            failures.push(format!("{spec} {shape:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The default plan and a cluster schedule on larger shapes (`--ignored`, release).
#[test]
#[ignore]
fn larger_shapes() {
    let d = Device::h200();
    for (spec, shape, sms) in [
        (None, (512, 256, 256), 8),
        (None, (1000, 776, 264), 8),
        (Some("128x256x64s3_c2x1"), (1024, 1024, 1024), 8),
        (Some("128x256x64s3_c2x1_h"), (1000, 776, 520), 8),
    ] {
        let s = spec.map_or_else(
            || HopperWs::default_schedule(shape.0, shape.1, shape.2, &d),
            schedule,
        );
        for &(seed, sch) in &RUNS {
            let opts = Options::seeded(seed, sch);
            check(
                &s,
                shape,
                GemmDtype::Bf16,
                sms,
                Inputs::Integers { range: 1 },
                &opts,
            );
        }
        let opts = Options::seeded(9, Schedule::Random);
        check(&s, shape, GemmDtype::Bf16, sms, Inputs::Random, &opts);
    }
}
