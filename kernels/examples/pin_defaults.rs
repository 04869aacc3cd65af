//! Rewrites the Hopper chooser's pinned decisions (`kernels/src/hopper/chooser/pinned_defaults.txt`)
//! with what the chooser gives now for the H200's facts: the same shapes and comments, each
//! line's schedule replaced, and on stderr every line that changed. For a deliberate change to
//! the table or the model: run it, read the changes, and commit the file with the results file
//! that measured them. Run with
//! `cargo run -p kernels --example pin_defaults > kernels/src/hopper/chooser/pinned_defaults.txt.new`.

use kernels::gemm::Device;
use kernels::hopper::chooser::choose;

fn main() {
    let pinned = include_str!("../src/hopper/chooser/pinned_defaults.txt");
    let h200 = Device::h200();
    let mut changed = 0;
    for line in pinned.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [set, m, n, k, was] = fields[..] else {
            // Comments stay as they are.
            println!("{line}");
            continue;
        };
        let dim = |s: &str| -> usize {
            s.parse()
                .unwrap_or_else(|_| panic!("`{line}`: `{s}` is not a dimension"))
        };
        let now = choose(dim(m), dim(n), dim(k), &h200).schedule.to_string();
        if now != was {
            changed += 1;
            eprintln!("{set} {m} x {n} x {k}: {was} -> {now}");
        }
        println!("{set} {m} {n} {k} {now}");
    }
    eprintln!("{changed} lines changed");
}
