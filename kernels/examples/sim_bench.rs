//! How fast the CPU simulator runs the GEMM programs it models (a benchmark, not a test): warp
//! and lane instructions per second and multiply-accumulates per second, with every check on and
//! with none, for the multistage GEMM's reference plan at 512x256x256; then the largest square
//! GEMM it simulates within 10 seconds. Run with
//! `cargo run --release -p kernels --example sim_bench` (one core: the simulator is serial).

use std::time::Instant;

use dsl_core::sim::{Arg, Checks, Launch, Memory, Options, Simulator};
use half::f16;
use kernels::gemm::{Accum, GemmDtype};
use kernels::multistage::{multistage_kernel, MultistageConfig};

fn run(sim: &Simulator, cfg: &MultistageConfig, m: u32, n: u32, k: u32, checks: Checks) -> f64 {
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
    let macs = f64::from(m) * f64::from(n) * f64::from(k);
    println!(
        "{m}x{n}x{k} checks {}: {s:.3} s, {:.1} M warp instr/s, {:.1} M lane instr/s, {:.1} M MAC/s",
        if checks == Checks::ALL { "on " } else { "off" },
        r.stats.warp_instructions as f64 / s / 1e6,
        r.stats.lane_instructions as f64 / s / 1e6,
        macs / s / 1e6
    );
    s
}

fn main() {
    let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F32);
    let kernel = multistage_kernel(&cfg).expect("the multistage kernel");
    let sim = Simulator::new(kernel.check().expect("a valid kernel"));
    println!("multistage {}:", cfg.name());
    for checks in [Checks::ALL, Checks::NONE] {
        run(&sim, &cfg, 512, 256, 256, checks);
    }
    let mut size = 256;
    loop {
        let s = run(&sim, &cfg, size, size, size, Checks::ALL);
        if s > 10.0 || size >= 4096 {
            break;
        }
        let next = size * 2;
        // Time grows with the cube: stop before a run would pass 10 s.
        if s * 8.0 > 10.0 {
            break;
        }
        size = next;
    }
    println!("largest square GEMM simulated within 10 s (checks on): {size}^3");
}
