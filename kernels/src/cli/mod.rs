//! The `rute` command line: a table of subcommands, each a module with a `run` taking its arguments
//! and the three standard streams, so that tests drive it without a process.
//!
//! Exit codes: 0 success, 1 some input failed (the subcommand says which), 2 a usage error.

use std::io::{BufRead, Write};

mod gemm;
mod layout;
mod ptx;

/// A subcommand's entry point: arguments, stdin, stdout, stderr; returns the exit status.
type Run = fn(&[String], &mut dyn BufRead, &mut dyn Write, &mut dyn Write) -> i32;

/// A subcommand: its name, a line for `--help`, and its entry point.
struct Subcommand {
    name: &'static str,
    summary: &'static str,
    run: Run,
}

/// Runs `run` on `args` with `input` as stdin; returns the exit status, stdout and stderr (the
/// subcommands' tests drive them this way, without a process).
#[cfg(test)]
fn capture(run: Run, args: &[&str], input: &str) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf-8 stdout"),
        String::from_utf8(err).expect("utf-8 stderr"),
    )
}

const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "layout",
        summary: "evaluate CuTe layout expressions: print, --values or --table",
        run: layout::run,
    },
    Subcommand {
        name: "ptx",
        summary: "print a registered kernel's PTX for a target, or --list the kernels",
        run: ptx::run,
    },
    Subcommand {
        name: "gemm",
        summary: "run rute's GEMM on random data: --check against cuBLAS, --bench, --suite",
        run: gemm::run,
    },
];

/// Exit status for a usage error.
pub const USAGE_ERROR: i32 = 2;

fn usage(out: &mut dyn Write) {
    let _ = writeln!(out, "usage: rute <subcommand> [args...]\n\nsubcommands:");
    for s in SUBCOMMANDS {
        let _ = writeln!(out, "  {:<8} {}", s.name, s.summary);
    }
    let _ = writeln!(out, "\n`rute <subcommand> --help` describes one.");
}

/// Run `rute` with `args` (without the program name); returns the exit status.
pub fn run(
    args: &[String],
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(first) = args.first() else {
        usage(err);
        return USAGE_ERROR;
    };
    if matches!(first.as_str(), "--help" | "-h" | "help") {
        usage(out);
        return 0;
    }
    match SUBCOMMANDS.iter().find(|s| s.name == first) {
        Some(s) => (s.run)(&args[1..], stdin, out, err),
        None => {
            let _ = writeln!(err, "error: unknown subcommand `{first}`\n");
            usage(err);
            USAGE_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rute(args: &[&str], input: &str) -> (i32, String, String) {
        capture(run, args, input)
    }

    #[test]
    fn help_lists_subcommands() {
        let (code, out, _) = rute(&["--help"], "");
        assert_eq!(code, 0);
        assert!(out.contains("layout"), "{out}");
    }

    #[test]
    fn unknown_or_missing_subcommand_is_a_usage_error() {
        let (code, _, err) = rute(&["frobnicate"], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.contains("unknown subcommand `frobnicate`"), "{err}");
        let (code, _, err) = rute(&[], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.contains("usage"), "{err}");
    }
}
