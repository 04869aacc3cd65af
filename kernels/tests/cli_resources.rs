//! Every `rute` command on the largest inputs its fuzzer makes (`src/cli/extremes.rs`, included
//! here) finishes under 5 s of CPU time and 500 MB of memory, or refuses with a sentence.
//!
//! Each command runs the real binary as a child process; its CPU time (user + system) and peak
//! resident set come from `wait4`'s rusage, which counts that child alone (its peak includes what
//! the test process had resident when it spawned the child, so this process keeps no output:
//! a few MB at most). The bound is on CPU
//! time, not wall-clock, so that a busy machine (CI shares 2 cores) does not fail the test; a
//! wall-clock guard of 120 s only stops a runaway. The bounds are the release binary's, so the
//! tests are ignored in an unoptimized build (CI runs `cargo test --release`).

mod common;
#[path = "../src/cli/extremes.rs"]
#[allow(dead_code)]
mod extremes;

use std::io::{Read, Write};
use std::thread;
use std::time::{Duration, Instant};

use dsl_core::layout::expr::FUNCTIONS;
use extremes::{BIG_LEAVES, BIG_TILES, GEMM_LARGEST, INTS, MAX_EXPRS, MAX_TOKENS, TILES};

/// CPU time a command may take.
const CPU_LIMIT: Duration = Duration::from_secs(5);

/// Peak resident memory a command may take, bytes.
const RSS_LIMIT: u64 = 500_000_000;

/// Wall-clock time after which a command is killed as a runaway.
const WALL_GUARD: Duration = Duration::from_secs(120);

/// What a command used and wrote.
struct Run {
    what: String,
    cpu: Duration,
    max_rss: u64,
    code: Option<i32>,
    stdout_bytes: u64,
    stderr: Vec<u8>,
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// Runs `rute args` with `stdin`, and measures it.
fn measure(args: &[String], stdin: Vec<u8>) -> Run {
    let what = format!("rute {}", args.join(" "));
    let what = if what.len() > 300 {
        let cut: String = what.chars().take(300).collect();
        format!("{cut}... ({} bytes of arguments)", what.len())
    } else {
        what
    };
    // Reaped by wait4 below, which std's `Child::wait` cannot replace: it gives no rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = common::spawn(args);
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut input = child.stdin.take().expect("piped");
    let writer = thread::spawn(move || {
        // The child may stop reading (a usage error): a broken pipe is its business.
        let _ = input.write_all(&stdin);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let out = thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()).unwrap_or(0));
    let mut stderr = child.stderr.take().expect("piped");
    let err = thread::spawn(move || {
        // The first 64 KiB (the error lines); the rest is counted out.
        let mut v = Vec::new();
        let _ = (&mut stderr).take(64 << 10).read_to_end(&mut v);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        v
    });
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: rusage is plain old data; all zeros is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is this process's child, not reaped yet (the `Child` is never waited on);
        // `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > WALL_GUARD {
            // Not reaped yet, so the pid is still the child's.
            let _ = child.kill();
            panic!("{what}: still running after {WALL_GUARD:?}");
        }
        thread::sleep(Duration::from_millis(1));
    }
    writer.join().expect("the writer ends");
    let (stdout_bytes, stderr) = (out.join().expect("stdout"), err.join().expect("stderr"));
    Run {
        what,
        cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        max_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout_bytes,
        stderr,
    }
}

/// Within the bounds, and either a success or a refusal with a sentence: status 1 or 2, the
/// first line of stderr `error: ...`, no panic.
fn assert_bounded(r: &Run) {
    assert!(r.cpu < CPU_LIMIT, "{}: {:?} of CPU time", r.what, r.cpu);
    assert!(
        r.max_rss < RSS_LIMIT,
        "{}: {} MB resident",
        r.what,
        r.max_rss / 1_000_000
    );
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!err.contains("panicked"), "{}: {err}", r.what);
    match r.code {
        Some(0) => {}
        Some(1 | 2) => {
            let first = err.lines().next().unwrap_or("");
            assert!(
                first.starts_with("error: ") && first.len() > "error: ".len(),
                "{}: refused without a sentence: {first:?}",
                r.what
            );
        }
        other => panic!("{}: exit status {other:?}: {err}", r.what),
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// The modes of `rute layout`, with the largest valid tiles for `--svg-tv`.
fn layout_modes() -> Vec<Vec<String>> {
    let mut modes = vec![
        vec![],
        words(&["--values"]),
        words(&["--table"]),
        words(&["--svg"]),
    ];
    modes.extend(TILES[..BIG_TILES].iter().map(|t| words(&["--svg-tv", t])));
    modes
}

/// A command: its arguments and its stdin.
type Cmd = (Vec<String>, Vec<u8>);

/// Runs `commands` two at a time (the child's CPU time is its own, whatever runs beside it),
/// checks each, and prints the one that took the most CPU time.
fn run_all(commands: Vec<Cmd>) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slowest = std::sync::Mutex::new((Duration::ZERO, String::new()));
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((args, stdin)) = commands.get(i) else {
                    break;
                };
                let r = measure(args, stdin.clone());
                assert_bounded(&r);
                let mut worst = slowest.lock().expect("not poisoned");
                if r.cpu > worst.0 {
                    *worst = (
                        r.cpu,
                        format!(
                            "{} MB resident, {} bytes out: {}",
                            r.max_rss / 1_000_000,
                            r.stdout_bytes,
                            r.what
                        ),
                    );
                }
            });
        }
    });
    let (cpu, what) = slowest.into_inner().expect("not poisoned");
    println!("slowest of {}: {cpu:?} of CPU, {what}", commands.len());
}

/// Each big leaf, [`MAX_EXPRS`] times, in each mode.
#[cfg_attr(
    debug_assertions,
    ignore = "bounds the release binary: cargo test --release"
)]
#[test]
fn layout_on_the_largest_leaves_in_every_mode() {
    let mut commands = Vec::new();
    for leaf in BIG_LEAVES {
        for mode in layout_modes() {
            let mut args = words(&["layout"]);
            args.extend(mode);
            args.extend((0..MAX_EXPRS).map(|_| leaf.to_string()));
            commands.push((args, Vec::new()));
        }
    }
    run_all(commands);
}

/// Every function on the big leaves (one, two and three of the same), and every function of every
/// function of two big leaves, on stdin, printing and listing. (The fuzzer nests calls 3 deep;
/// these are the calls of depth 1 and 2 over its biggest leaves, not every tree it can make.)
#[cfg_attr(
    debug_assertions,
    ignore = "bounds the release binary: cargo test --release"
)]
#[test]
fn layout_functions_of_the_largest_leaves() {
    let heavy = [
        "(1024,1024):(1024,1)",
        "(2147483647,2147483647):(1,2147483647)",
    ];
    let mut commands = Vec::new();
    for f in FUNCTIONS {
        let mut lines = Vec::new();
        for l in BIG_LEAVES {
            lines.push(format!("{f}({l})"));
            lines.push(format!("{f}({l}, {l})"));
            lines.push(format!("{f}({l}, {l}, {l})"));
            lines.push(format!("{f}({l}, 1048576)"));
        }
        for g in FUNCTIONS {
            for h in heavy {
                lines.push(format!("{f}({g}({h}, {h}), {h})"));
            }
        }
        // As the fuzzer gives them: at most MAX_EXPRS lines a command.
        for chunk in lines.chunks(MAX_EXPRS) {
            let stdin = chunk.join("\n").into_bytes();
            for mode in [vec![], words(&["--values"])] {
                let mut args = words(&["layout"]);
                args.extend(mode);
                commands.push((args, stdin.clone()));
            }
        }
    }
    run_all(commands);
}

/// The longest token soups: nested as deep as [`MAX_TOKENS`] allows, as wide, and the biggest
/// integers and leaves one after the other.
#[cfg_attr(
    debug_assertions,
    ignore = "bounds the release binary: cargo test --release"
)]
#[test]
fn layout_on_the_longest_expressions() {
    let half = MAX_TOKENS / 2;
    let big_int = INTS[INTS.len() - 1];
    let exprs = [
        format!("{}8{}", "(".repeat(half), ")".repeat(half - 1)),
        format!("{}8{}", "(".repeat(half - 1), ")".repeat(half - 1)),
        format!("({})", vec![big_int; half].join(",")),
        format!(
            "({}):({})",
            vec!["65536"; half / 2].join(","),
            vec!["1"; half / 2].join(",")
        ),
        BIG_LEAVES[..MAX_TOKENS / 4].join(" o "),
        vec!["Sw<3,3,3>"; half].join(" o "),
        FUNCTIONS[..half.min(FUNCTIONS.len())].join("("),
    ];
    let mut commands = Vec::new();
    for mode in layout_modes() {
        let mut args = words(&["layout"]);
        args.extend(mode.clone());
        args.extend(exprs.iter().cloned());
        commands.push((args, Vec::new()));
        let mut args = words(&["layout"]);
        args.extend(mode);
        commands.push((args, exprs.join("\n").into_bytes()));
    }
    run_all(commands);
}

#[cfg_attr(
    debug_assertions,
    ignore = "bounds the release binary: cargo test --release"
)]
#[test]
fn ptx_of_every_kernel_for_every_target() {
    let mut commands = vec![(words(&["ptx", "--list"]), Vec::new())];
    for k in kernels::registry::KERNELS {
        for t in ["sm_80", "sm_90a", "sm_100a"] {
            commands.push((words(&["ptx", k.name, "--target", t]), Vec::new()));
        }
    }
    run_all(commands);
}

/// The largest requests are refused by the parser or the host-memory check, never sent on.
#[cfg_attr(
    debug_assertions,
    ignore = "bounds the release binary: cargo test --release"
)]
#[test]
fn gemm_on_the_largest_numbers() {
    for args in GEMM_LARGEST {
        let mut a = words(&["gemm"]);
        a.extend(words(args));
        let r = measure(&a, Vec::new());
        assert_bounded(&r);
        assert!(matches!(r.code, Some(1 | 2)), "{}: ran", r.what);
        let err = String::from_utf8_lossy(&r.stderr);
        let first = err.lines().next().unwrap_or("");
        assert!(
            !first.contains("GPU"),
            "{}: got as far as the GPU: {first}",
            r.what
        );
    }
}
