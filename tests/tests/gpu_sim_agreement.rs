//! The simulator against the hardware (feature `gpu`): each registered kernel's case, and each
//! configuration of the GEMM programs' sweeps, runs on the GPU and in the simulator
//! (`dsl_core::sim`) on the same inputs. The GPU's outputs must hold what the CPU reference says
//! (each case's check), the simulator's run must have no finding, and the two must agree as the
//! case says: bit for bit where every operation and its order are defined to the bit (the
//! examples but `wgmma_tile`, and GEMMs on small integers, whose every partial sum is exact),
//! within twice the case's tolerance otherwise (tensor-core accumulation on random inputs).
//!
//! Kernels published only for targets the GPU is not (the Blackwell program on an H200) are
//! left out and listed; every other case must run in the simulator.
//!
//! Run: `cargo test --release -p rute-tests --features gpu --test gpu_sim_agreement -- --nocapture`.

use codegen_ptx::jit::Jit;
use dsl_core::ir::Target;
use dsl_core::sim::{Options, Schedule};
use kernels::cases::gemm::sweep;
use kernels::cases::gpu::OnGpu;
use kernels::cases::simulate::{verify, Simulated};
use kernels::cases::{Case, Data, GemmCase, Run, Values};
use kernels::gemm::{Accum, GemmDtype, PROGRAMS};
use kernels::registry::KERNELS;
use rute_tests::gpu::jit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The seeds each case runs on both machines.
const SEEDS: [u64; 2] = [0, 1];

/// One run of a case on the GPU, checked against the case's reference: what the simulator must
/// then agree with.
struct OnDevice<'c> {
    case: &'c dyn Case,
    seed: u64,
    run: Run,
    outputs: Vec<Option<Data>>,
}

/// Runs `case` for `seed` on the GPU; panics naming what is wrong with the GPU's outputs.
fn on_gpu<'c>(jit: &Jit, target: Target, case: &'c dyn Case, seed: u64) -> OnDevice<'c> {
    let what = format!("{} seed {seed}", case.describe());
    let run = case.run(seed).unwrap_or_else(|e| panic!("{what}: {e}"));
    let outputs = OnGpu::new(jit, case, target)
        .and_then(|g| g.execute(&run))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let wrong = verify(&run, &outputs);
    assert!(wrong.is_empty(), "{what}: the GPU's outputs: {wrong:?}");
    OnDevice {
        case,
        seed,
        run,
        outputs,
    }
}

/// Runs a GPU run's case in the simulator on the same inputs; panics naming what disagrees.
fn agree(d: &OnDevice) {
    let what = format!("{} seed {}", d.case.describe(), d.seed);
    let sim = Simulated::new(d.case).unwrap_or_else(|e| panic!("{what}: {e}"));
    let done = sim
        .execute(&d.run, &Options::seeded(d.seed, Schedule::Random))
        .unwrap_or_else(|e| panic!("{what}: in the simulator: {e}"));
    for (kernel, report) in &done.reports {
        assert!(
            report.is_clean(),
            "{what}: `{kernel}` in the simulator: {report}"
        );
    }
    for e in &d.run.expect {
        let name = &d.run.buffers[e.buffer].name;
        let (s, g) = (&done.outputs[e.buffer], &d.outputs[e.buffer]);
        let (Some(s), Some(g)) = (s, g) else {
            panic!("{what}: `{name}` is not an output");
        };
        if let Err(m) = e.agree(name, s, g) {
            panic!("{what}: the simulator against the GPU: {m}");
        }
    }
    println!("agree: {what}");
}

/// Runs `cases` on both machines over [`SEEDS`]: every GPU run first, one at a time, then the
/// simulator's runs, which take most of the time, over every core of the machine.
fn agree_all(cases: Vec<Box<dyn Case>>) {
    let jit = jit();
    let target = jit.target().unwrap();
    let runs: Vec<OnDevice> = cases
        .iter()
        .flat_map(|case| SEEDS.map(|seed| (case, seed)))
        .map(|(case, seed)| on_gpu(&jit, target, case.as_ref(), seed))
        .collect();
    let next = AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..cores.min(runs.len()) {
            s.spawn(|| {
                while let Some(d) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    agree(d);
                }
            });
        }
    });
    println!(
        "{} runs agree between the GPU and the simulator",
        runs.len()
    );
}

/// Whether the GPU behind [`jit`] runs code for `targets` (a kernel's published targets).
fn runs_here(targets: &[Target]) -> bool {
    let here = jit().target().unwrap();
    let runs = targets.contains(&here);
    if !runs {
        println!("left out: published for {targets:?}, and this GPU is {here}");
    }
    runs
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn every_registered_kernel_agrees_with_the_simulator() {
    let cases = KERNELS
        .iter()
        .filter(|k| runs_here(k.targets))
        .map(|k| (k.case)().unwrap_or_else(|e| panic!("{}: {e}", k.name)))
        .collect();
    agree_all(cases);
}

/// Every configuration of every program's sweep (each program's default where it has none),
/// the element and accumulator types rotating from one configuration to the next (the next the
/// program takes where it refuses one), on small integers (bit for bit) and on random inputs.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn every_sweep_configuration_agrees_with_the_simulator() {
    let types = [
        (GemmDtype::F16, Accum::F32),
        (GemmDtype::Bf16, Accum::F32),
        (GemmDtype::F16, Accum::F16),
    ];
    let mut cases: Vec<Box<dyn Case>> = Vec::new();
    let here = jit().target().unwrap();
    for p in PROGRAMS.iter().filter(|p| {
        let runs = p.runs_on(here);
        if !runs {
            println!("left out: {} does not run on {here}", p.name());
        }
        runs
    }) {
        let configs: Vec<Option<&str>> = match sweep(p.name()) {
            [] => vec![None],
            s => s.iter().copied().map(Some).collect(),
        };
        for (i, config) in configs.into_iter().enumerate() {
            for values in [Values::SmallIntegers, Values::Random] {
                let case = (0..types.len())
                    .find_map(|j| {
                        GemmCase::sized(p.name(), config, types[(i + j) % types.len()], values).ok()
                    })
                    .unwrap_or_else(|| panic!("{} {config:?} plans for no type", p.name()));
                cases.push(Box::new(case));
            }
        }
    }
    agree_all(cases);
}
