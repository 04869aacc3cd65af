//! `rute layout` against CuTe: a spread sample of the conformance vectors
//! (`tests/conformance/vectors.tsv`, generated from CuTe's definitions) goes through the real binary
//! on stdin, one expression a line, once printing results and once with `--values`; every output line
//! must match.

mod common;

const VECTORS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/conformance/vectors.tsv"
));

/// About this many cases go through the binary.
const SAMPLE: usize = 500;

/// Every k-th successful case, so that each operation (the file is grouped by operation) is sampled.
/// Cases CuTe rejects are left out: how the calculator reports an error line is its own business and
/// the library test checks that those inputs are refused.
fn sample() -> Vec<(&'static str, &'static str, &'static str)> {
    let ok: Vec<_> = VECTORS
        .lines()
        .filter_map(|l| {
            let mut cols = l.split('\t');
            Some((cols.next()?, cols.next()?, cols.next()?))
        })
        .filter(|(_, printed, _)| *printed != "ERROR")
        .collect();
    assert!(
        ok.len() >= SAMPLE,
        "vectors.tsv has only {} cases",
        ok.len()
    );
    let step = ok.len() / SAMPLE;
    ok.into_iter().step_by(step).collect()
}

/// Runs `rute layout [flags]` with one expression a line on stdin; returns its stdout lines.
fn run(flags: &[&str], input: &str) -> Vec<String> {
    let out = common::run(
        std::iter::once("layout").chain(flags.iter().copied()),
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "rute layout {flags:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("rute prints UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Compares line by line; `norm` says what counts as equal. Panics with the first few differences.
fn compare(what: &str, cases: &[(&str, &str)], got: &[String], norm: fn(&str) -> String) {
    assert_eq!(
        got.len(),
        cases.len(),
        "rute layout {what}: {} output lines for {} input lines",
        got.len(),
        cases.len()
    );
    let bad: Vec<String> = cases
        .iter()
        .zip(got)
        .filter(|((_, want), got)| norm(want) != norm(got))
        .map(|((expr, want), got)| format!("  {expr}\n    expected: {want}\n    got:      {got}"))
        .collect();
    assert!(
        bad.is_empty(),
        "rute layout {what}: {} of {} lines differ from CuTe; first ones:\n{}",
        bad.len(),
        cases.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

#[test]
fn rute_layout_prints_what_cute_prints() {
    let cases = sample();
    let input: String = cases.iter().map(|(e, _, _)| format!("{e}\n")).collect();
    let got = run(&[], &input);
    let want: Vec<_> = cases.iter().map(|(e, p, _)| (*e, *p)).collect();
    compare("(print)", &want, &got, |s| s.trim().to_owned());
}

#[test]
fn rute_layout_values_match_cute() {
    let cases = sample();
    let input: String = cases.iter().map(|(e, _, _)| format!("{e}\n")).collect();
    let got = run(&["--values"], &input);
    let want: Vec<_> = cases.iter().map(|(e, _, v)| (*e, *v)).collect();
    // The offsets are compared as numbers separated by whitespace, however much of it.
    compare("--values", &want, &got, |s| {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    });
}
