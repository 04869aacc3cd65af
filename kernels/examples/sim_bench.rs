//! How fast the CPU simulator runs the GEMM programs it models (a benchmark, not a test): warp
//! and lane instructions per second and multiply-accumulates per second, with every check on and
//! with none, for the multistage GEMM's reference plan and the Hopper GEMM's default plan at
//! 512x256x256 and a Hopper cluster schedule at 1024^3; then the largest square GEMM each
//! simulates within 10 seconds. Run with
//! `cargo run --release -p kernels --example sim_bench` (one core: the simulator is serial).

use std::time::Instant;

use dsl_core::sim::{Arg, Checks, Launch, Memory, Options, Simulator, Stats};
use half::f16;
use kernels::gemm::{Accum, Device, GemmDtype, GemmProgram, KernelChoice, Problem};
use kernels::hopper::{HopperSchedule, HopperWs};
use kernels::multistage::{multistage_kernel, MultistageConfig};

/// The tests' launch of a GEMM plan in the simulator (operands, tensor maps, workspace).
#[path = "../tests/sim/plan.rs"]
#[allow(dead_code)]
mod plan;

/// Xorshift values in [-1, 1) (what `plan` draws its inputs from).
pub(crate) fn floats(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// A program at a shape: runs it with `checks`, returns what ran and the seconds it took.
type Runner<'a> = dyn Fn(u32, u32, u32, Checks) -> (Stats, f64) + 'a;

fn multistage<'a>(
    sim: &'a Simulator,
    cfg: &'a MultistageConfig,
) -> impl Fn(u32, u32, u32, Checks) -> (Stats, f64) + 'a {
    move |m, n, k, checks| {
        let mut mem = Memory::new();
        let d = mem.alloc("d", 2 * (m * n) as usize);
        let a = mem.upload("a", &vec![f16::from_f32(0.5); (m * k) as usize]);
        let b = mem.upload("b", &vec![f16::from_f32(0.25); (n * k) as usize]);
        let (gx, gy, gz) = cfg.grid(m, n);
        let launch = Launch::new([gx, gy, gz], [cfg.threads(), 1, 1])
            .with_dynamic_smem(cfg.smem_bytes())
            .with_sms(8);
        let args = [
            Arg::Buffer(d),
            Arg::Buffer(a),
            Arg::Buffer(b),
            Arg::u32(m),
            Arg::u32(n),
            Arg::u32(k),
        ];
        let opts = Options {
            checks,
            ..Options::default()
        };
        let t = Instant::now();
        let r = sim.run(&launch, &args, &mut mem, &opts).expect("the run");
        let s = t.elapsed().as_secs_f64();
        assert!(r.is_clean(), "{r}");
        (r.stats, s)
    }
}

static HOPPER: HopperWs = HopperWs;

/// The Hopper program with `schedule` (the H200's default for the shape when `None`), launched
/// by its plan on 8 SMs.
fn hopper(schedule: Option<HopperSchedule>) -> impl Fn(u32, u32, u32, Checks) -> (Stats, f64) {
    move |m, n, k, checks| {
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let s = schedule.unwrap_or_else(|| HopperWs::default_schedule(m, n, k, &Device::h200()));
        let device = Device {
            sms: plan::SMS,
            ..Device::h200()
        };
        let p = Problem {
            m,
            n,
            k,
            dtype: GemmDtype::Bf16,
            acc: Accum::F32,
            kernel: KernelChoice::Program(&HOPPER),
            config: None,
        };
        let plan = HOPPER.plan(&p, &device, Some(&s)).expect("the plan");
        let sim = Simulator::new(plan.kernel().expect("the kernel").check().expect("valid"));
        let launch = plan.launch(m as u32, n as u32, k as u32, &device);
        let a = plan::inputs(plan::Inputs::Random, 1, m * k, GemmDtype::Bf16);
        let b = plan::inputs(plan::Inputs::Random, 2, n * k, GemmDtype::Bf16);
        let opts = Options {
            checks,
            ..Options::default()
        };
        let t = Instant::now();
        let out = plan::run(&[&sim], &launch, (m, n, k), &a, &b, &opts);
        let secs = t.elapsed().as_secs_f64();
        assert!(out.is_clean(), "{}", out.findings());
        (out.reports[0].stats, secs)
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
    let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F32);
    let kernel = multistage_kernel(&cfg).expect("the multistage kernel");
    let sim = Simulator::new(kernel.check().expect("a valid kernel"));
    let ms = multistage(&sim, &cfg);
    println!("multistage {}:", cfg.name());
    for checks in [Checks::ALL, Checks::NONE] {
        report(&ms, 512, 256, 256, checks);
    }
    largest(&ms);

    let default = hopper(None);
    println!(
        "hopper_ws, the H200's default schedule for the shape ({} at 512x256x256):",
        HopperWs::default_schedule(512, 256, 256, &Device::h200())
    );
    for checks in [Checks::ALL, Checks::NONE] {
        report(&default, 512, 256, 256, checks);
    }
    largest(&default);

    let pairs: HopperSchedule = "128x256x64s3_c2x1".parse().expect("a schedule");
    let clustered = hopper(Some(pairs));
    println!("hopper_ws {pairs} (clusters of two):");
    for checks in [Checks::ALL, Checks::NONE] {
        report(&clustered, 1024, 1024, 1024, checks);
    }
    largest(&clustered);
}
