//! The `rute` command line tool: `rute layout` (evaluate and draw layouts), `rute ptx` (print a
//! registered kernel's PTX); `rute gemm` will join them as a subcommand of the same [`cli`] module.

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdin = std::io::stdin();
    let code = cli::run(
        &args,
        &mut stdin.lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(code);
}
