//! `rute sim` as a user runs it: the real binary, its arguments, stdout, stderr and exit status.

mod common;

use std::process::Output;

fn sim(args: &str) -> Output {
    common::run(std::iter::once("sim").chain(args.split_whitespace()), b"")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

#[test]
fn a_registered_kernel_passes_every_seed() {
    let o = sim("transpose --seed 2 --seeds 3 --schedule pct");
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(o.stderr.is_empty());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "transpose, blocks of 32x8, 70x45");
    for (i, seed) in [2, 3, 4].into_iter().enumerate() {
        assert!(
            lines[1 + i].starts_with(&format!(
                "seed {seed}, schedule pct: PASS (1 launch: 6 blocks, "
            )),
            "{out}"
        );
    }
    assert_eq!(lines[4], "3 of 3 seeds passed");
}

#[test]
fn a_gemm_plan_runs_with_exact_inputs() {
    let o = sim(
        "gemm --kernel multistage --config ref --m 145 --n 137 --k 104 --values integers --seed 1",
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        out.starts_with(
            "multistage f16 (f32 acc, 128x128x32 tile, 3 stages, 2x2 warps) at 145x137x104, small-integer inputs\n\
             seed 1, schedule round-robin: PASS (1 launch: 4 blocks, "
        ),
        "{out}"
    );
}

/// `--sms` makes the plan for a device of that many SMs: the Hopper program's persistent grid
/// is that many blocks, each walking several tiles, and the rerun line keeps the flag.
#[test]
fn a_persistent_gemm_runs_on_a_few_sms() {
    let o = sim("gemm --kernel hopper_ws --m 384 --n 256 --k 128 --sms 2 --values integers");
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("seed 0, schedule round-robin: PASS (1 launch: 2 blocks, "),
        "{out}"
    );
    let o = sim("softmax --sms 4");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("error: --sms goes with `rute sim gemm`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn what_cannot_run_exits_1_with_a_sentence() {
    // A problem the program refuses, as `rute gemm` says it.
    let o = sim("gemm --kernel multistage --config tuned --m 64 --n 64 --k 13");
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: the multistage kernel cannot run this problem: K = 13"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2_with_the_usage() {
    for (args, want) in [
        ("", "error: which kernel? registered kernels: vector_add"),
        (
            "gemm --m 4",
            "error: rute sim gemm needs --m, --n and --k: --n, --k missing",
        ),
        (
            "softmax --seed -1",
            "error: --seed takes an integer from 0 to ",
        ),
        ("softmax --frob", "error: unknown option `--frob`"),
    ] {
        let o = sim(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args}: {err}");
        assert!(o.stdout.is_empty(), "{args}");
        assert!(err.starts_with(want), "{args}: {err}");
        assert!(
            err.contains("Usage: rute sim NAME") && err.ends_with("`rute sim --help` says more.\n"),
            "{err}"
        );
    }
}

#[test]
fn help_names_the_schedules_and_the_exit_statuses() {
    let o = sim("--help");
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(out.contains("round-robin") && out.contains("pct"), "{out}");
    assert!(out.contains("Exit status: 0 every seed passed"), "{out}");
}
