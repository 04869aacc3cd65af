//! The example kernels' PTX: one insta snapshot per (kernel, target) under the repository's
//! `snapshots/` directory, each assembled with ptxas for its target (no spills allowed), and the
//! time generation takes.
//!
//! The ptxas test needs `RUTE_PTXAS` (CI sets it) and fails without it.

use std::time::Duration;

use codegen_ptx::emit;
use codegen_ptx::ptxas::assemble;
use dsl_core::ir::Target;
use kernels::registry::{Registered, KERNELS};
use rute_tests::ptx::{assemble_clean, assert_no_stale_snapshots, ptx_of, SNAPSHOTS};

/// Every (kernel, target) the registry publishes.
fn published() -> Vec<(&'static Registered, Target)> {
    KERNELS
        .iter()
        // The GEMMs have their own snapshot tests (snapshots_gemm.rs, snapshots_hopper.rs,
        // snapshots_blackwell.rs).
        .filter(|k| {
            !["multistage", "hopper_ws", "blackwell_ws"]
                .iter()
                .any(|gemm| k.name.starts_with(gemm))
        })
        .flat_map(|k| k.targets.iter().map(move |&t| (k, t)))
        .collect()
}

/// The snapshot of `name` for `target` is `snapshots/example_<name>_<target>.snap`.
#[test]
fn ptx_snapshots() {
    // The five examples of issue 3, the wgmma tile (sm_90a only), the TMA pipeline and the TMA
    // stream (sm_90a and sm_100a), the naive GEMM, the softmax and the layernorm, on every
    // target each supports.
    assert_eq!(published().len(), 28);
    for (k, target) in published() {
        let ptx = ptx_of(k, target);
        let name = format!("example_{}_{}", k.name, target.name());
        insta::with_settings!({
            snapshot_path => SNAPSHOTS,
            prepend_module_to_snapshot => false,
            description => format!("rute ptx {} --target {}", k.name, target.name()),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, ptx);
        });
    }
    let expected: Vec<String> = published()
        .iter()
        .map(|(k, t)| format!("example_{}_{}.snap", k.name, t.name()))
        .collect();
    assert_no_stale_snapshots("example_", &expected);
}

#[test]
fn every_snapshot_assembles_without_spills() {
    let mut table = Vec::new();
    for (k, target) in published() {
        let ptx = ptx_of(k, target);
        let report = assemble_clean(&ptx, target, k.name);
        table.push(format!(
            "{:<16} {:<8} {:>3} regs {:>6} B smem, 0 spills",
            k.name,
            target.name(),
            report.registers,
            report.shared_bytes
        ));
    }
    println!("{}", table.join("\n"));
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Generating an example's PTX (build the IR, then emit) takes under 5 ms of CPU time: the median
/// of 20 runs after one warm-up, for each (kernel, target). (5 ms is the optimized build's
/// target; an unoptimized one gets 4 times as long.)
#[test]
fn generation_takes_under_5_ms() {
    const RUNS: usize = 20;
    let limit = Duration::from_millis(if cfg!(debug_assertions) { 20 } else { 5 });
    let mut slow = Vec::new();
    for (k, target) in published() {
        let generate = || {
            let kernel = (k.build)(target).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            emit(&kernel, target).unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name))
        };
        let first = generate();
        let samples: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let start = thread_cpu_time();
                let ptx = generate();
                let took = thread_cpu_time() - start;
                assert_eq!(ptx, first, "{} for {target}: not deterministic", k.name);
                took
            })
            .collect();
        let (min, max) = (
            samples.iter().min().copied().unwrap_or_default(),
            samples.iter().max().copied().unwrap_or_default(),
        );
        let med = median(samples);
        println!(
            "{:<16} {:<8} median {:>8.3} ms of CPU (min {:.3}, max {:.3}) over {RUNS} runs",
            k.name,
            target.name(),
            med.as_secs_f64() * 1e3,
            min.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        );
        if med >= limit {
            slow.push(format!("{} for {target}: {med:?}", k.name));
        }
    }
    assert!(
        slow.is_empty(),
        "generation over {limit:?} of CPU time: {slow:?}"
    );
}

/// CPU time this thread has used. Timings count it rather than wall-clock time: a busy machine
/// (CI shares 2 cores) preempts the thread, which stretches wall-clock time but not this.
fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a timespec the call may write; the clock exists on every Unix rute runs on.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime: {}", std::io::Error::last_os_error());
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The configurations the GPU tests run besides the registry's defaults also assemble, spill
/// free, for every target their kernel supports.
#[test]
fn other_configurations_assemble() {
    use kernels::examples::{self, tma_round_trip::TmaBox};
    let cases = [
        (examples::vector_add::<1>(), examples::vector_add::TARGETS),
        (examples::vector_add::<2>(), examples::vector_add::TARGETS),
        (examples::transpose(4), examples::transpose::TARGETS),
        (examples::reduce_sum(96), examples::reduce_sum::TARGETS),
        (examples::reduce_sum(32), examples::reduce_sum::TARGETS),
        (examples::async_copy(96), examples::async_copy::TARGETS),
        (
            examples::tma_round_trip(TmaBox { rows: 16, cols: 8 }, true),
            examples::tma_round_trip::TARGETS,
        ),
        (
            examples::tma_round_trip(examples::tma_round_trip::BOX, true),
            examples::tma_round_trip::TARGETS,
        ),
        (
            kernels::gemm::gemm_naive::<half::bf16>(),
            kernels::gemm::naive::TARGETS,
        ),
    ];
    for (kernel, targets) in cases {
        let kernel = kernel.unwrap_or_else(|e| panic!("generation failed: {e}"));
        for &target in targets {
            let ptx = emit(&kernel, target)
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name));
            let report = assemble(&ptx, target)
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name));
            assert_eq!(
                (report.spill_store_bytes, report.spill_load_bytes),
                (0, 0),
                "{} for {target}",
                kernel.name
            );
        }
    }
}
