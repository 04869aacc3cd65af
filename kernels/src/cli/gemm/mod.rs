//! `rute gemm`: run rute's GEMM on random data, check it against cuBLAS, time both.
//!
//! By concern: [`args`] reads the flags into a [`request::Request`]; [`suites`] holds the suites'
//! shapes and the check of a case without a GPU; [`memory`] counts what a run allocates and
//! refuses one that does not fit; `gpu` (feature `gpu`) runs the request on the device. All but
//! the last are pure and tested without a GPU. Exit status: 0 all passed, 1 a check failed or the
//! GPU (or the build) could not run it, 2 a usage error.

pub mod args;
#[cfg(feature = "gpu")]
mod gpu;
pub mod memory;
pub mod request;
pub mod suites;

pub use args::Args;

use self::args::check_out_file;
use self::memory::{check_memory, host_available, Memory};
use self::request::Request;
use self::suites::{precheck, problem};
use super::args::Usage;
use super::streams::{report, Streams, FAILURE};
use dsl_core::ir::Target;

/// Runs `rute gemm`; returns the exit status, or the usage error for the caller to report.
pub fn run(args: Args, io: &mut Streams) -> Result<i32, Usage> {
    let request = args.request()?;
    // The results file is checked before hours of suite are run for it.
    if let Request::Suite {
        out: Some(path), ..
    } = &request
    {
        check_out_file(path)?;
    }
    // Inputs that no kernel takes are refused before a GPU is looked for.
    if let Request::Single { shape, opts, .. } = &request {
        let p = problem(*shape, opts.dtype_or_default(), opts.acc_or_default(), opts);
        if let Err(e) = precheck(&p, &Target::ALL) {
            report(io.err, &e);
            return Ok(FAILURE);
        }
    }
    // So are runs larger than the host's memory; the runner checks the device's (and the host's
    // again) once it has one, before it allocates.
    if let Some(host) = host_available() {
        let available = Memory {
            host,
            device: u64::MAX,
        };
        if let Err(e) = check_memory(&request, u64::MAX, available) {
            report(io.err, &e.to_string());
            return Ok(FAILURE);
        }
    }
    Ok(execute(&request, io))
}

#[cfg(not(feature = "gpu"))]
fn execute(_: &Request, io: &mut Streams) -> i32 {
    report(
        io.err,
        "this rute was built without GPU support; rebuild with `cargo build --release -p kernels --features gpu`",
    );
    FAILURE
}

#[cfg(feature = "gpu")]
fn execute(request: &Request, io: &mut Streams) -> i32 {
    gpu::execute(request, io)
}

#[cfg(test)]
mod tests {
    use super::super::streams::USAGE_ERROR;

    fn rute(a: &str) -> (i32, String, String) {
        let args: Vec<&str> = std::iter::once("gemm")
            .chain(a.split_whitespace())
            .collect();
        crate::cli::tests::rute(&args, "")
    }

    #[test]
    fn bad_problems_are_refused_before_any_gpu() {
        let (code, out, err) = rute("--m 0 --n 4 --k 4");
        assert_eq!((code, out.as_str()), (USAGE_ERROR, ""));
        assert!(
            err.starts_with("error: --m takes an integer from 1 to 2147483647, not `0`\n"),
            "{err}"
        );
        let (code, _, err) = rute("--m 4 --n 4 --k 4 --dtype bf16 --acc f16");
        assert_eq!(code, 1);
        assert!(
            err.contains("bf16 inputs with f16 accumulation are not supported"),
            "{err}"
        );
        let (code, _, err) = rute("--m 4 --n 4 --k 4 --kernel nope");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.starts_with("error: --kernel takes auto, "), "{err}");
        assert!(err.contains("\nUsage: rute gemm --m M"), "{err}");
        assert!(err.ends_with("`rute gemm --help` says more.\n"), "{err}");
    }

    /// The Blackwell program by name: its configurations parsed at the edge (a spelling it does
    /// not take is a usage error naming it), a problem no target's check takes refused with each
    /// target's sentence before any GPU is looked for.
    #[test]
    fn blackwell_ws_is_refused_with_sentences() {
        let (code, _, err) = rute("--m 512 --n 256 --k 256 --kernel blackwell_ws --config step10");
        assert_eq!(code, USAGE_ERROR, "{err}");
        assert!(
            err.contains("the blackwell_ws kernel: `step10` is not a blackwell_ws configuration"),
            "{err}"
        );
        let (code, out, err) = rute("--m 512 --n 256 --k 250 --kernel blackwell_ws --config step8");
        assert_eq!((code, out.as_str()), (1, ""), "{err}");
        assert!(
            err.contains(
                "on sm_90a: the blackwell_ws kernel cannot run this problem: it runs on sm_100a \
                 only (tcgen05 and tensor memory), not sm_90a"
            ) && err.contains(
                "on sm_100a: the blackwell_ws kernel cannot run this problem: K = 250 is not a \
                 multiple of 8"
            ),
            "{err}"
        );
    }

    /// Without the feature the subcommand says so; with it, on a machine without a GPU it says
    /// why the GPU cannot be used (exit status 1, a sentence on stderr), and on one with a GPU
    /// the check passes.
    #[test]
    fn a_valid_problem_runs_or_fails_loudly() {
        let (code, out, err) = rute("--m 64 --n 48 --k 40 --check");
        if !cfg!(feature = "gpu") {
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("built without GPU support"), "{err}");
        } else if code == 0 {
            assert!(
                out.contains("check: error ") && out.contains(": PASS"),
                "{out}"
            );
        } else {
            assert_eq!(code, 1, "{out}{err}");
            assert!(err.starts_with("error: no usable GPU: "), "{err}");
        }
    }

    #[test]
    fn help_lists_every_kernel_with_its_spelling_and_every_suite() {
        let (code, out, _) = rute("--help");
        assert_eq!(code, 0);
        for p in kernels::gemm::PROGRAMS {
            assert!(out.contains(&format!("- {}:", p.name())), "{out}");
            let syntax = p
                .config_syntax()
                .split_whitespace()
                .next()
                .unwrap_or_default();
            assert!(out.contains(syntax), "{syntax} missing from {out}");
        }
        for suite in ["correctness", "bench", "llm"] {
            assert!(out.contains(&format!("- {suite}:")), "{out}");
        }
        for flag in [
            "--m <M>",
            "--check",
            "--bench",
            "--repeats <R>",
            "--out <FILE.md>",
        ] {
            assert!(out.contains(flag), "{flag} missing from {out}");
        }
        assert!(out.contains("Exit status: 0 all passed"), "{out}");
        // -h is the same help, shorter.
        let (code, short, _) = rute("-h");
        assert_eq!(code, 0);
        assert!(
            short.contains("--check") && short.len() < out.len(),
            "{short}"
        );
    }
}
