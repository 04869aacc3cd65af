//! The `rute` command line tool: `rute layout` (evaluate and draw layouts), `rute ptx` (print a
//! registered kernel's PTX), `rute gemm` (run, check and time the GEMM; feature `gpu`), `rute
//! sim` (run a registered kernel in the CPU simulator against its reference).

use std::io::IsTerminal;

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    // As the OS gives them: `cli::run` refuses one that is not UTF-8 with a sentence.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let stderr = std::io::stderr();
    let err_is_terminal = stderr.is_terminal();
    let code = cli::run(
        &args,
        &mut cli::Streams {
            stdin: &mut std::io::stdin().lock(),
            out: &mut std::io::stdout().lock(),
            err: &mut stderr.lock(),
            err_is_terminal,
        },
    );
    std::process::exit(code);
}
