//! How fast the CPU simulator runs the GEMM programs it models (a benchmark, not a test): warp
//! and lane instructions per second and multiply-accumulates per second, with every check on and
//! with none, for the multistage GEMM's reference plan and the Hopper GEMM's default plan at
//! 512x256x256 and a Hopper cluster schedule at 1024^3; then the largest square GEMM each
//! simulates within 10 seconds. Run with
//! `cargo run --release -p kernels --example sim_bench` (one core: the simulator is serial).

use std::time::Instant;

use dsl_core::sim::{Checks, Options, Stats};
use kernels::cases::simulate::{verify, Simulated};
use kernels::cases::{Case, GemmCase, Values};
use kernels::gemm::{Accum, Device, GemmDtype};
use kernels::hopper::HopperWs;

/// A program at a shape: runs it with `checks`, returns what ran and the seconds it took.
type Runner<'a> = dyn Fn(u32, u32, u32, Checks) -> (Stats, f64) + 'a;

/// GEMM program `program` at `config` (`None`: its default for the shape) on 8 SMs, bf16 random
/// inputs, through its case (the launch, operands and tensor maps its plan makes); the output
/// is checked against the reference after the timed run.
fn gemm(
    program: &'static str,
    config: Option<&'static str>,
) -> impl Fn(u32, u32, u32, Checks) -> (Stats, f64) {
    move |m, n, k, checks| {
        let shape = (m as usize, n as usize, k as usize);
        let case = GemmCase::program(
            program,
            config,
            (GemmDtype::Bf16, Accum::F32),
            shape,
            Values::Random,
        )
        .and_then(|c| c.on_sms(8))
        .expect("the case");
        let sim = Simulated::new(&case).expect("the kernels");
        let run = case.run(1).expect("the run");
        let opts = Options {
            checks,
            ..Options::default()
        };
        let t = Instant::now();
        let done = sim.execute(&run, &opts).expect("the simulation");
        let secs = t.elapsed().as_secs_f64();
        let mut stats = Stats::default();
        for (_, r) in &done.reports {
            assert!(r.is_clean(), "{r}");
            stats.warp_instructions += r.stats.warp_instructions;
            stats.lane_instructions += r.stats.lane_instructions;
        }
        let wrong = verify(&run, &done.outputs);
        assert!(wrong.is_empty(), "{wrong:?}");
        (stats, secs)
    }
}

fn report(run: &Runner<'_>, m: u32, n: u32, k: u32, checks: Checks) -> f64 {
    let (stats, s) = run(m, n, k, checks);
    let macs = f64::from(m) * f64::from(n) * f64::from(k);
    println!(
        "  {m}x{n}x{k} checks {}: {s:.3} s, {:.1} M warp instr/s, {:.1} M lane instr/s, {:.1} M MAC/s",
        if checks == Checks::ALL { "on " } else { "off" },
        stats.warp_instructions as f64 / s / 1e6,
        stats.lane_instructions as f64 / s / 1e6,
        macs / s / 1e6
    );
    s
}

/// The largest power-of-two square GEMM `run` simulates within 10 s with every check on.
fn largest(run: &Runner<'_>) {
    let mut size = 256;
    loop {
        let s = report(run, size, size, size, Checks::ALL);
        // Time grows with the cube: stop before a run would pass 10 s.
        if s > 10.0 || size >= 4096 || s * 8.0 > 10.0 {
            break;
        }
        size *= 2;
    }
    println!("  largest square GEMM simulated within 10 s (checks on): {size}^3");
}

fn main() {
    let ms = gemm("multistage", Some("ref"));
    println!("multistage ref:");
    for checks in [Checks::ALL, Checks::NONE] {
        report(&ms, 512, 256, 256, checks);
    }
    largest(&ms);

    let default = gemm("hopper_ws", None);
    println!(
        "hopper_ws, the H200's default schedule for the shape ({} at 512x256x256):",
        HopperWs::default_schedule(512, 256, 256, &Device::h200())
    );
    for checks in [Checks::ALL, Checks::NONE] {
        report(&default, 512, 256, 256, checks);
    }
    largest(&default);

    let clustered = gemm("hopper_ws", Some("128x256x64s3_c2x1"));
    println!("hopper_ws 128x256x64s3_c2x1 (clusters of two):");
    for checks in [Checks::ALL, Checks::NONE] {
        report(&clustered, 1024, 1024, 1024, checks);
    }
    largest(&clustered);

    let step9 = gemm("blackwell_ws", Some("step9"));
    println!("blackwell_ws step9 (two MMA consumers in a pair):");
    report(&step9, 1024, 768, 320, Checks::ALL);
}
