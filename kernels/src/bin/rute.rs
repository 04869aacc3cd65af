//! The `rute` command line tool: `rute layout` (evaluate and draw layouts), `rute ptx` (print a
//! registered kernel's PTX), `rute gemm` (run, check and time the GEMM; feature `gpu`).

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    // As the OS gives them: `cli::run` refuses one that is not UTF-8 with a sentence.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let stdin = std::io::stdin();
    let code = cli::run(
        &args,
        &mut stdin.lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(code);
}
