//! Resource bounds of the layout library: on long inputs (hundreds of thousands of modes, an
//! expression of megabytes) and on the largest layouts the fuzz harness makes, every operation
//! finishes quickly and in memory bounded by its input and output, or refuses with a sentence.
//!
//! Memory is measured in a child process: this test binary run again on one ignored test, under
//! `ulimit -v`, which reads its own peak resident size (`VmHWM` in `/proc/self/status`) at the end.

use std::process::Command;

use dsl_core::layout::expr::evaluate;

/// Set in the child process, so that the ignored tests know their parent runs them.
const CHILD: &str = "RUTE_RESOURCE_CHILD";

/// Runs the ignored test `name` of this binary in a child process whose address space is capped at
/// `cap_mb`, and fails if the child fails.
fn in_child(name: &str, cap_mb: u64) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let script = format!(
        "ulimit -v {} && exec \"$0\" --exact {name} --ignored --test-threads=1 --nocapture",
        cap_mb * 1024
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(exe)
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} in a child process: {}\n{text}",
        out.status
    );
    for line in text.lines().filter(|l| l.contains("peak resident size")) {
        println!("{line}");
    }
}

/// This process's peak resident size in MiB, or `None` where `/proc` does not say.
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// In a child process: fails if this process's peak resident size passed `max_mb`.
fn assert_peak_below(what: &str, max_mb: u64) {
    if let Some(mb) = peak_rss_mb() {
        assert!(
            mb <= max_mb,
            "{what}: peak resident size {mb} MiB, more than {max_mb}"
        );
        println!("{what}: peak resident size {mb} MiB (at most {max_mb})");
    }
}

fn ones(n: usize) -> String {
    vec!["1"; n].join(",")
}

/// `zipped_divide` of a 5 MB expression line (1.25M modes, a tiler of 1.25M modes) took 950 MB: it
/// made the whole logical_divide, then copied it to regroup its modes. It regroups mode by mode now.
#[test]
fn zipped_divide_of_a_long_line_needs_memory_like_its_result() {
    in_child("child_zipped_divide_of_a_long_line", 2048);
}

#[test]
#[ignore = "run by zipped_divide_of_a_long_line_needs_memory_like_its_result in a child process"]
fn child_zipped_divide_of_a_long_line() {
    let n = 1_250_000;
    let line = format!("zipped_divide(({}), ({}))", ones(n), ones(n));
    assert!(line.len() > 5_000_000);
    let v = evaluate(&line).unwrap();
    assert_eq!(v.to_string().len(), 4 * 2 * n + 11);
    assert_peak_below("zipped_divide of a 5 MB line", 600);
}
