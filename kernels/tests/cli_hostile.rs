//! Hostile input to the real `rute` binary: bytes that are not UTF-8, control bytes, absurd
//! numbers and shapes, repeated flags, an `--out` that cannot be written. Each is refused with one
//! sentence naming the input (exit status 2 for a bad argument, 1 for a bad input line), never a
//! panic, and nothing runs first.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Output;

fn rute_os(args: &[OsString], stdin: &[u8]) -> Output {
    common::run(args, stdin)
}

fn rute(args: &[&str]) -> Output {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    rute_os(&args, b"")
}

/// Arguments given as raw bytes.
fn rute_bytes(args: &[&[u8]], stdin: &[u8]) -> Output {
    let args: Vec<OsString> = args
        .iter()
        .map(|a| OsString::from_vec(a.to_vec()))
        .collect();
    rute_os(&args, stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("rute writes UTF-8")
}

/// No panic, and neither stream carries a control byte other than the newline.
fn assert_clean(o: &Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_ne!(o.status.code(), Some(101), "{what}: {o:?}");
    for (name, stream) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        assert!(
            !stream
                .iter()
                .any(|&b| (b < 0x20 && b != b'\n') || b == 0x7f),
            "{what}: a raw control byte on {name}: {:?}",
            String::from_utf8_lossy(stream)
        );
    }
}

/// Exit status 2, nothing on stdout, and stderr starting with an `error:` line that contains
/// every needle.
fn assert_refused(o: &Output, what: &str, needles: &[&str]) {
    assert_clean(o, what);
    assert_eq!(o.status.code(), Some(2), "{what}: {o:?}");
    assert!(o.stdout.is_empty(), "{what}: ran anyway: {o:?}");
    let err = text(&o.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error: "), "{what}: {err}");
    for n in needles {
        assert!(first.contains(n), "{what}: `{n}` missing from {first}");
    }
}

#[test]
fn arguments_that_are_not_utf8_are_refused_by_every_subcommand() {
    let cases: [&[&[u8]]; 5] = [
        &[b"layout", b"\xff(4,2)"],
        &[b"layout", b"--values", b"8:1", b"(4,\xc3)"],
        &[b"ptx", b"vector_add", b"--target", b"sm_80\xfe"],
        &[b"gemm", b"--m", b"1\xff", b"--n", b"1", b"--k", b"1"],
        &[b"\xfflayout"],
    ];
    for args in cases {
        let o = rute_bytes(args, b"");
        let what = format!("{args:?}");
        assert_refused(&o, &what, &["is not valid UTF-8"]);
    }
    let o = rute_bytes(&[b"layout", b"\xff(4,2)"], b"");
    assert_eq!(
        text(&o.stderr),
        "error: argument 2 is not valid UTF-8: `\\xff(4,2)`\n"
    );
}

#[test]
fn a_bad_utf8_line_on_stdin_stops_only_itself() {
    let o = rute_bytes(
        &[b"layout", b"--values"],
        b"4:1\n\xff(4,2)\n(2,2):(2,1)\nsize(\xe2\x82)\n8:2\n",
    );
    assert_clean(&o, "stdin");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        text(&o.stdout),
        "0 1 2 3\n\
         error: line 2 is not valid UTF-8: `\\xff(4,2)`\n\
         0 2 1 3\n\
         error: line 4 is not valid UTF-8: `size(\\xe2\\x82)`\n\
         0 2 4 6 8 10 12 14\n"
    );
    assert!(text(&o.stderr).contains("line 2 is not valid UTF-8"));
}

#[test]
fn control_bytes_from_the_input_are_escaped_in_every_error() {
    // (An argument cannot hold a NUL; stdin can, below.)
    let args: [&[&[u8]]; 7] = [
        &[b"layout", b"(4,\x1b[2J2)"],
        &[b"layout", b"--table", b"Sw<1,0,1>\x07"],
        &[b"layout", b"--svg-tv", b"16x8\x1b[0m", b"8:1"],
        &[b"ptx", b"\x1b[31mvector_add", b"--target", b"sm_80"],
        &[b"ptx", b"vector_add", b"--target", b"sm_80\r"],
        &[
            b"gemm",
            b"--m",
            b"1",
            b"--n",
            b"1",
            b"--k",
            b"1",
            b"--dtype",
            b"\x1b]0;x\x07",
        ],
        &[b"\x1b[2Jlayout"],
    ];
    for a in args {
        let o = rute_bytes(a, b"");
        let what = format!("{a:?}");
        assert_clean(&o, &what);
        assert_ne!(o.status.code(), Some(0), "{what}: {o:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains("\\x1b")
                || err.contains("\\0")
                || err.contains("\\x07")
                || err.contains("\\r"),
            "{what}: the control byte is not shown escaped: {err}"
        );
    }
    // On stdin too, where the error line takes the expression's place on stdout.
    let o = rute_bytes(&[b"layout"], b"8:1\n(4,\x1b[2J2)\x00\n\t4:2\n");
    assert_clean(&o, "stdin");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[1].starts_with("error: ") && lines[1].contains("(4,\\x1b[2J2)\\0"),
        "{out}"
    );
    assert_eq!(lines[2], "4:2");
}

#[test]
fn gemm_numbers_are_bounded_when_parsed() {
    for r in ["18446744073709551615", "1000000000000", "10001", "0"] {
        let o = rute(&[
            "gemm",
            "--m",
            "64",
            "--n",
            "64",
            "--k",
            "64",
            "--bench",
            "--repeats",
            r,
        ]);
        assert_refused(
            &o,
            r,
            &[&format!(
                "--repeats takes an integer from 1 to 10000, not `{r}`"
            )],
        );
    }
    for (flag, v) in [
        ("--m", "2147483648"),
        ("--k", "99999999999999999999999"),
        ("--n", "0"),
    ] {
        let mut args = vec!["gemm", "--m", "8", "--n", "8", "--k", "8"];
        let at = args.iter().position(|a| *a == flag).unwrap();
        args[at + 1] = v;
        let o = rute(&args);
        assert_refused(
            &o,
            v,
            &[&format!(
                "{flag} takes an integer from 1 to 2147483647, not `{v}`"
            )],
        );
    }
    let o = rute(&["gemm", "--suite", "bench", "--seed", "18446744073709551616"]);
    assert_refused(
        &o,
        "seed",
        &["--seed takes an integer from 0 to 18446744073709551615"],
    );
}

#[test]
fn absurd_shapes_are_refused_before_anything_is_allocated() {
    // 1 x (2^31 - 1) x (2^31 - 1): B alone is 8 EiB, which no host has.
    let o = rute(&["gemm", "--m", "1", "--n", "2147483647", "--k", "2147483647"]);
    assert_clean(&o, "absurd");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: 1 x 2147483647 x 2147483647 (f16) needs ")
            && err.contains("of host memory")
            && err.contains("available"),
        "{err}"
    );
}

#[test]
fn out_is_checked_before_the_suite_runs() {
    let path = "/nonexistent-rute-dir/results.md";
    let o = rute(&["gemm", "--suite", "correctness", "--out", path]);
    assert_refused(&o, "--out", &["--out", path, "cannot be created"]);
    // A directory is no file either.
    let o = rute(&["gemm", "--suite", "bench", "--out", "/"]);
    assert_refused(&o, "--out /", &["--out `/`"]);
}

#[test]
fn a_flag_given_twice_is_refused() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["gemm", "--m", "1", "--m", "2", "--n", "1", "--k", "1"],
            "--m is given twice (`1`, then `2`); give it once",
        ),
        (
            &["gemm", "--suite", "bench", "--seed=1", "--seed", "1"],
            "--seed is given twice",
        ),
        (
            &[
                "gemm", "--m", "1", "--n", "1", "--k", "1", "--check", "--check",
            ],
            "--check is given twice; give it once",
        ),
        (
            &["ptx", "vector_add", "--target", "sm_80", "--target=sm_90a"],
            "--target is given twice (`sm_80`, then `sm_90a`)",
        ),
        (
            &["layout", "--svg-tv", "16x8", "--svg-tv", "8x8", "8:1"],
            "--svg-tv is given twice (`16x8`, then `8x8`)",
        ),
        (
            &["layout", "--values", "--values", "8:1"],
            "--values is given twice",
        ),
    ];
    for (args, want) in cases {
        let o = rute(args);
        assert_refused(&o, &format!("{args:?}"), &[want]);
    }
}
