//! The `rute` command line: one subcommand a variant of [`Command`], each a module with its
//! arguments (`Args`, declared with clap) and a `run` taking them and the standard streams
//! ([`streams::Streams`]), so that tests drive it without a process. Adding a subcommand is one
//! module and one variant (with its arm in [`run`]).
//!
//! Exit codes: 0 success, 1 some input failed (the subcommand says which), 2 a usage error.
//!
//! The modules below this one depend on the leaves ([`args`], [`escape`], [`streams`],
//! `progress`) and never on this one, so there is no import cycle.

use std::ffi::OsString;

use clap::{CommandFactory, Parser, Subcommand};

mod args;
mod escape;
#[cfg(test)]
mod extremes;
#[cfg(test)]
mod fuzz;
mod gemm;
mod layout;
// Shown by the GPU runner's suites only.
#[cfg(any(feature = "gpu", test))]
mod progress;
mod ptx;
mod sim;
mod streams;
mod tune;

pub use streams::Streams;

use args::{refuse, Stop, Usage};
use streams::{report, SUCCESS, USAGE_ERROR};

/// rute: GPU kernels written in Rust, generated as PTX
#[derive(Parser, Debug)]
#[command(
    name = "rute",
    arg_required_else_help = true,
    after_help = "`rute <subcommand> --help` describes one.\n\n\
                  Exit status: 0 success, 1 some input failed (the subcommand says which), \
                  2 a usage error."
)]
struct Rute {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands; each variant's help is its module's `Args`'s.
#[derive(Subcommand, Debug)]
enum Command {
    Layout(layout::Args),
    Ptx(ptx::Args),
    Gemm(gemm::Args),
    Tune(tune::Args),
    Sim(sim::Args),
}

/// Run `rute` with `args` (without the program name); returns the exit status. An argument that
/// is not UTF-8 is a usage error.
pub fn run(args: &[OsString], io: &mut Streams) -> i32 {
    let args = match args::utf8(args) {
        Ok(a) => a,
        Err(usage) => {
            report(io.err, &usage.0);
            return USAGE_ERROR;
        }
    };
    let rute: Rute = match args::parse(Rute::command(), &args) {
        Ok(r) => r,
        Err(Stop::Help(text)) => {
            let _ = io.out.write_all(text.as_bytes());
            return SUCCESS;
        }
        Err(Stop::Usage(usage)) => return refuse(Rute::command(), &args, &usage, io.err),
    };
    let ran: Result<i32, Usage> = match rute.command {
        Command::Layout(a) => layout::run(a, io),
        Command::Ptx(a) => ptx::run(a, io),
        Command::Gemm(a) => gemm::run(a, io),
        Command::Tune(a) => tune::run(a, io),
        Command::Sim(a) => sim::run(a, io),
    };
    ran.unwrap_or_else(|usage| refuse(Rute::command(), &args, &usage, io.err))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `rute ARGS` with `input` on stdin: the exit status, stdout and stderr.
    pub fn rute(args: &[&str], input: &str) -> (i32, String, String) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        streams::capture(|io| run(&args, io), input)
    }

    #[test]
    fn help_lists_subcommands() {
        for help in ["--help", "-h", "help"] {
            let (code, out, _) = rute(&[help], "");
            assert_eq!(code, 0);
            for sub in ["layout", "ptx", "gemm", "tune", "sim"] {
                assert!(out.contains(&format!("  {sub} ")), "{out}");
            }
            assert!(out.contains("Exit status"), "{out}");
        }
        let (code, out, _) = rute(&["help", "gemm"], "");
        assert_eq!(code, 0);
        assert!(out.contains("--suite"), "{out}");
    }

    #[test]
    fn unknown_or_missing_subcommand_is_a_usage_error() {
        let (code, out, err) = rute(&["frobnicate"], "");
        assert_eq!((code, out.as_str()), (USAGE_ERROR, ""));
        assert!(
            err.starts_with("error: unknown subcommand `frobnicate`\n"),
            "{err}"
        );
        assert!(err.contains("Usage: rute"), "{err}");
        let (code, _, err) = rute(&["gemmm"], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(
            err.starts_with("error: unknown subcommand `gemmm`; did you mean `gemm`?\n"),
            "{err}"
        );
        let (code, _, err) = rute(&[], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.starts_with("error: rute needs a subcommand\n"), "{err}");
        assert!(err.contains("Usage: rute"), "{err}");
    }

    #[test]
    fn a_subcommand_refusal_shows_its_usage() {
        let (code, out, err) = rute(&["ptx", "--frobnicate"], "");
        assert_eq!((code, out.as_str()), (USAGE_ERROR, ""));
        assert_eq!(
            err,
            "error: unknown option `--frobnicate`\n\n\
             Usage: rute ptx NAME --target sm_80|sm_90a|sm_100a [--config SPEC [--form FORM]]\n       \
             rute ptx --list\n\
             `rute ptx --help` says more.\n"
        );
    }
}
