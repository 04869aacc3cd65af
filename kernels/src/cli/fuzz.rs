//! A fuzzer of the whole command line, kept with it: random arguments (bytes, not only UTF-8)
//! and stdin for `rute layout`'s flags and expressions, `rute gemm`'s argument parsing and memory
//! model, `rute ptx`, and the subcommand table, through [`super::run`] in this process.
//!
//! Each case must end without a panic, with exit status 0, 1 or 2, a usage error (2) writing
//! nothing on stdout, every error an `error: ` line without a control byte, and `rute layout`
//! keeping one output line per expression when it prints results or values (an error line in a
//! failed expression's place, the status 1 exactly when there is one).
//!
//! The inputs stay within [`super::extremes`], which the resource test runs through the real
//! binary. The budget is fixed ([`CASES`] per property, `RUTE_FUZZ_CASES` to change it); the
//! fuzzer is meant to run with overflow checks and debug assertions, so it is ignored in release
//! builds and `.ci/run` runs it in the dev profile (`cargo test -p kernels --bin rute fuzz`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use dsl_core::layout::expr::FUNCTIONS;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::extremes::{
    BIG_LEAVES, BIG_TILES, GEMM_VALUES, INTS, MAX_ARGS, MAX_CALL_ARGS, MAX_CALL_DEPTH, MAX_EXPRS,
    MAX_TOKENS, TILES,
};
use super::gemm::memory::{self, Memory};
use super::gemm::request::{Request, MAX_REPEATS};
use super::{Command, Rute};

/// Cases per property, unless `RUTE_FUZZ_CASES` says otherwise.
const CASES: u32 = 5000;

fn config(share: u32) -> Config {
    let cases = std::env::var("RUTE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    Config {
        cases: (cases / share).max(1),
        // A failing case is shrunk for a while, not forever, and printed (no regression file:
        // the seed is random, PROPTEST_RNG_SEED fixes it to replay a run).
        max_shrink_iters: 2000,
        max_shrink_time: 30_000,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Bytes that break terminals, parsers or UTF-8.
fn hostile_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "\u{0}",
        "\u{1b}[2J",
        "\u{1b}]0;x\u{7}",
        "\r",
        "\t",
        "\u{7f}",
        "\u{9b}",
        "\u{202e}",
        "\u{feff}",
        "é",
        "∘",
        " ",
        "\\",
        "`",
        "'",
        "\"",
        "=",
        "--",
        "#",
    ])
    .prop_map(str::to_string)
}

/// One token of a layout expression, or something that is not one.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec![
            "(", ")", ",", ":", "_", " o ", "Sw<", ">", "<", "-", " ", "x", "Sw<3,3,3>",
        ])
        .prop_map(str::to_string),
        4 => (0i64..40).prop_map(|n| n.to_string()),
        2 => prop::sample::select(INTS).prop_map(str::to_string),
        3 => prop::sample::select(FUNCTIONS).prop_map(str::to_string),
        1 => prop::sample::select(BIG_LEAVES).prop_map(str::to_string),
        1 => hostile_text(),
    ]
}

/// A small layout in CuTe notation: up to 3 modes, an int or a pair each, strides -2..8.
fn small_layout() -> impl Strategy<Value = String> {
    let mode = prop_oneof![
        (1i64..9, -2i64..9).prop_map(|(s, d)| (s.to_string(), d.to_string())),
        ((1i64..5, 1i64..5), (-2i64..9, -2i64..9))
            .prop_map(|((a, b), (c, d))| (format!("({a},{b})"), format!("({c},{d})"))),
    ];
    prop::collection::vec(mode, 1..=3).prop_map(|modes| {
        let (s, d): (Vec<_>, Vec<_>) = modes.into_iter().unzip();
        format!("({}):({})", s.join(","), d.join(","))
    })
}

/// A well-formed call tree over small and big leaves, at most [`MAX_CALL_DEPTH`] deep.
fn call() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => small_layout(),
        2 => (0i64..64).prop_map(|n| n.to_string()),
        1 => prop::sample::select(INTS).prop_map(str::to_string),
        1 => prop::sample::select(BIG_LEAVES).prop_map(str::to_string),
        1 => small_layout().prop_map(|l| format!("Sw<2,1,2> o 0 o {l}")),
        1 => (small_layout(), small_layout()).prop_map(|(a, b)| format!("({a},{b})")),
    ];
    leaf.prop_recursive(MAX_CALL_DEPTH, 24, MAX_CALL_ARGS as u32, |inner| {
        (
            prop::sample::select(FUNCTIONS),
            prop_oneof![
                3 => prop::collection::vec(inner.clone(), 1..=2),
                1 => prop::collection::vec(inner, 1..=MAX_CALL_ARGS),
            ],
        )
            .prop_map(|(f, args)| format!("{f}({})", args.join(", ")))
    })
}

/// An expression: a call tree, a token soup, or either with a hostile byte somewhere.
fn expression() -> impl Strategy<Value = String> {
    prop_oneof![
        // A bare big leaf is rare: its listing or picture is the slowest case (the resource
        // test runs each one).
        40 => call(),
        1 => prop::sample::select(BIG_LEAVES).prop_map(str::to_string),
        20 => prop::collection::vec(token(), 0..=MAX_TOKENS).prop_map(|t| t.concat()),
        7 => (call(), hostile_text(), any::<prop::sample::Index>()).prop_map(|(e, h, at)| {
            let cut = e.char_indices().map(|(i, _)| i).nth(at.index(e.chars().count())).unwrap_or(0);
            format!("{}{h}{}", &e[..cut], &e[cut..])
        }),
    ]
}

/// An argument as bytes: mostly UTF-8, sometimes not.
fn bytes_of(s: impl Strategy<Value = String>) -> impl Strategy<Value = Vec<u8>> {
    (
        s,
        prop::option::weighted(0.03, (any::<prop::sample::Index>(), 0x80u8..=0xff)),
    )
        .prop_map(|(s, bad)| {
            let mut b = s.into_bytes();
            if let Some((at, byte)) = bad {
                b.insert(at.index(b.len() + 1), byte);
            }
            b
        })
}

/// `rute layout`'s flags, valid, repeated, unknown or malformed.
fn layout_flag() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        4 => prop::sample::select(vec!["--values", "--table", "--svg"]).prop_map(|f| vec![f.to_string()]),
        3 => prop::sample::select(&TILES[..BIG_TILES]).prop_map(|t| vec!["--svg-tv".into(), t.to_string()]),
        2 => prop::sample::select(TILES).prop_map(|t| vec!["--svg-tv".into(), t.to_string()]),
        1 => prop::sample::select(TILES).prop_map(|t| vec![format!("--svg-tv={t}")]),
        1 => prop::sample::select(vec!["--svg-tv", "--", "--bogus", "--values=1", "-h", "-3"])
            .prop_map(|f| vec![f.to_string()]),
    ]
}

fn to_os(args: Vec<Vec<u8>>) -> Vec<OsString> {
    args.into_iter().map(OsString::from_vec).collect()
}

/// What a case wrote.
struct Outcome {
    code: i32,
    out: Vec<u8>,
    err: Vec<u8>,
}

fn run(args: &[OsString], stdin: &[u8]) -> Outcome {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = super::run(
        args,
        &mut super::Streams {
            stdin: &mut &stdin[..],
            out: &mut out,
            err: &mut err,
            err_is_terminal: false,
        },
    );
    Outcome { code, out, err }
}

/// `rute gemm ARGS` read into its request, as the command line reads it (`None`: refused, or
/// help).
fn gemm_request(args: &[String]) -> Option<Request> {
    use clap::CommandFactory;
    let all: Vec<String> = std::iter::once("gemm".to_string())
        .chain(args.iter().cloned())
        .collect();
    match super::args::parse::<Rute>(Rute::command(), &all) {
        Ok(Rute {
            command: Command::Gemm(a),
        }) => a.request().ok(),
        _ => None,
    }
}

/// A stream with no control byte but the newline (`tab_ok`: and the tab, which PTX uses).
fn clean(stream: &[u8], tab_ok: bool) -> bool {
    stream
        .iter()
        .all(|&b| !(b < 0x20 || b == 0x7f) || b == b'\n' || (tab_ok && b == b'\t'))
}

/// The properties every subcommand keeps.
fn common(o: &Outcome, ptx: bool) -> Result<(), TestCaseError> {
    prop_assert!(matches!(o.code, 0..=2), "exit status {}", o.code);
    let err = std::str::from_utf8(&o.err);
    prop_assert!(err.is_ok(), "stderr is not UTF-8: {:?}", o.err);
    prop_assert!(std::str::from_utf8(&o.out).is_ok(), "stdout is not UTF-8");
    prop_assert!(clean(&o.err, false), "a control byte on stderr: {:?}", err);
    prop_assert!(clean(&o.out, ptx), "a control byte on stdout");
    if o.code == 2 {
        prop_assert!(o.out.is_empty(), "a usage error wrote stdout");
        prop_assert!(o.err.starts_with(b"error: "), "{:?}", err);
    }
    if o.code == 1 {
        prop_assert!(
            err.unwrap_or("").lines().any(|l| l.starts_with("error: ")),
            "status 1 without an error line"
        );
    }
    Ok(())
}

/// A `rute layout` case: flags, then expressions as arguments or as stdin lines.
#[derive(Debug, Clone)]
struct LayoutCase {
    flags: Vec<String>,
    exprs: Vec<Vec<u8>>,
    from_stdin: bool,
    newline: &'static str,
}

impl LayoutCase {
    fn args(&self) -> Vec<Vec<u8>> {
        let mut args = vec![b"layout".to_vec()];
        args.extend(self.flags.iter().map(|f| f.clone().into_bytes()));
        if !self.from_stdin {
            args.extend(self.exprs.iter().cloned());
        }
        args
    }

    fn stdin(&self) -> Vec<u8> {
        let mut s = Vec::new();
        if self.from_stdin {
            for e in &self.exprs {
                s.extend(e.iter().filter(|&&b| b != b'\n'));
                s.extend(self.newline.as_bytes());
            }
        }
        s
    }

    /// The expressions `rute layout` evaluates, one output line each in print or values mode:
    /// the arguments after flags (`--` ending the options once), or the stdin lines that are
    /// not blank or a `#` comment.
    fn evaluated(&self) -> usize {
        if !self.from_stdin && !self.exprs.is_empty() {
            let dashdash = self.exprs.iter().position(|e| e == b"--");
            return self.exprs.len() - usize::from(dashdash.is_some());
        }
        let stdin = self.stdin();
        stdin
            .split(|&b| b == b'\n')
            .filter(|l| {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                let skip = match std::str::from_utf8(l) {
                    Ok(s) => s.trim().is_empty() || s.trim().starts_with('#'),
                    Err(_) => l.trim_ascii().starts_with(b"#"),
                };
                !skip
            })
            .count()
    }
}

fn layout_case() -> impl Strategy<Value = LayoutCase> {
    (
        prop_oneof![
            3 => Just(Vec::new()),
            4 => layout_flag().prop_map(|f| vec![f]),
            1 => prop::collection::vec(layout_flag(), 2),
        ],
        prop::collection::vec(bytes_of(expression()), 0..=MAX_EXPRS),
        any::<bool>(),
        prop::sample::select(vec!["\n", "\r\n"]),
    )
        .prop_map(|(flags, exprs, from_stdin, newline)| LayoutCase {
            flags: flags.into_iter().flatten().collect(),
            from_stdin: from_stdin || exprs.is_empty(),
            exprs,
            newline,
        })
}

fn check_layout(case: &LayoutCase) -> Result<(), TestCaseError> {
    let o = run(&to_os(case.args()), &case.stdin());
    common(&o, false)?;
    let aligned = case.flags.is_empty() || case.flags == ["--values"];
    if o.code == 2 || !aligned {
        return Ok(());
    }
    let out = String::from_utf8_lossy(&o.out);
    let lines: Vec<&str> = out.lines().collect();
    prop_assert_eq!(lines.len(), case.evaluated(), "{}", out);
    let errors = lines.iter().filter(|l| l.starts_with("error: ")).count();
    prop_assert_eq!(
        o.code == 1,
        errors > 0,
        "status {} with {} error lines",
        o.code,
        errors
    );
    Ok(())
}

#[cfg_attr(
    not(debug_assertions),
    ignore = "run with overflow checks: .ci/run runs it in the dev profile"
)]
#[test]
fn fuzz_layout() {
    let mut runner = TestRunner::new(config(1));
    runner
        .run(&layout_case(), |case| check_layout(&case))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// One argument of a `rute gemm` case.
fn gemm_arg() -> impl Strategy<Value = String> {
    const FLAGS: &[&str] = &[
        "--m",
        "--n",
        "--k",
        "--dtype",
        "--acc",
        "--kernel",
        "--config",
        "--repeats",
        "--seed",
        "--suite",
        "--check",
        "--bench",
        "--help",
        "--bogus",
        "-h",
        "--",
    ];
    prop_oneof![
        5 => prop::sample::select(FLAGS).prop_map(str::to_string),
        4 => prop::sample::select(INTS).prop_map(str::to_string),
        3 => (1u64..5000).prop_map(|n| n.to_string()),
        3 => prop::sample::select(GEMM_VALUES).prop_map(str::to_string),
        1 => (prop::sample::select(FLAGS), prop::sample::select(INTS))
            .prop_map(|(f, v)| format!("{f}={v}")),
        1 => hostile_text(),
    ]
}

/// The shape of a single request, and its form.
fn request_bounds(r: &Request) -> Result<(), TestCaseError> {
    let opts = match r {
        Request::Single {
            shape: (m, n, k),
            opts,
            ..
        } => {
            for d in [m, n, k] {
                prop_assert!((1..=i32::MAX as usize).contains(d), "dimension {}", d);
            }
            opts
        }
        Request::Suite { opts, .. } => opts,
    };
    prop_assert!(
        (1..=MAX_REPEATS).contains(&opts.repeats),
        "repeats {}",
        opts.repeats
    );
    Ok(())
}

#[cfg_attr(
    not(debug_assertions),
    ignore = "run with overflow checks: .ci/run runs it in the dev profile"
)]
#[test]
fn fuzz_gemm_arguments() {
    let case = (
        prop::collection::vec(bytes_of(gemm_arg()), 0..=MAX_ARGS),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
    );
    let mut runner = TestRunner::new(config(1));
    runner
        .run(&case, |(args, host, device, l2)| {
            let text: Option<Vec<String>> = args
                .iter()
                .map(|a| String::from_utf8(a.clone()).ok())
                .collect();
            if let Some(text) = &text {
                if let Some(r) = gemm_request(text) {
                    request_bounds(&r)?;
                    let need = memory::memory_needed(&r, l2);
                    match memory::check_memory(&r, l2, Memory { host, device }) {
                        Ok(m) => {
                            prop_assert_eq!(m, need);
                            prop_assert!(need.host <= host && need.device <= device);
                        }
                        Err(e) => {
                            prop_assert!(e.needed > e.available);
                            prop_assert!(!e.to_string().contains('\n'));
                        }
                    }
                }
            }
            // The whole subcommand, where it cannot reach a GPU (--out never parses here: the
            // fuzzer does not make files).
            if !cfg!(feature = "gpu") {
                let mut all = vec![b"gemm".to_vec()];
                all.extend(args);
                common(&run(&to_os(all), b""), false)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[cfg_attr(
    not(debug_assertions),
    ignore = "run with overflow checks: .ci/run runs it in the dev profile"
)]
#[test]
fn fuzz_ptx_and_the_subcommand_table() {
    let names: Vec<String> = kernels::registry::KERNELS
        .iter()
        .map(|k| k.name.to_string())
        .collect();
    let arg = prop_oneof![
        3 => prop::sample::select(names),
        3 => prop::sample::select(vec!["--target", "sm_80", "sm_90a", "sm_100a", "sm_75", "--list"])
            .prop_map(str::to_string),
        1 => prop::sample::select(vec!["--target=sm_90a", "--target=", "--help", "-x", "--", "--list=1"])
            .prop_map(str::to_string),
        1 => hostile_text(),
    ];
    let first = prop::sample::select(vec![
        "ptx", "ptx", "ptx", "layout", "gemm", "help", "", "-h", "PTX",
    ]);
    // PTX generation is the slowest thing here: a tenth of the budget.
    let mut runner = TestRunner::new(config(10));
    runner
        .run(
            &(first, prop::collection::vec(bytes_of(arg), 0..=4)),
            |(first, rest)| {
                let mut args = vec![first.as_bytes().to_vec()];
                args.extend(rest);
                let o = run(&to_os(args), b"");
                common(&o, true)
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The largest requests the fuzzer's atoms make are refused before any GPU is looked for.
#[test]
fn the_largest_gemm_requests_are_refused() {
    for args in super::extremes::GEMM_LARGEST {
        let mut all: Vec<OsString> = vec!["gemm".into()];
        all.extend(args.iter().map(OsString::from));
        let o = run(&all, b"");
        let err = String::from_utf8_lossy(&o.err);
        assert!(
            matches!(o.code, 1 | 2) && o.out.is_empty() && err.starts_with("error: "),
            "{args:?}: {err}"
        );
        let first = err.lines().next().unwrap_or("");
        assert!(
            !first.contains("GPU"),
            "{args:?} got as far as the GPU: {first}"
        );
    }
}
