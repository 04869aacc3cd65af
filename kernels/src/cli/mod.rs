//! The `rute` command line: a table of subcommands, each a module with a `run` taking its arguments
//! and the three standard streams, so that tests drive it without a process.
//!
//! Exit codes: 0 success, 1 some input failed (the subcommand says which), 2 a usage error.
//!
//! Arguments are read once, by [`args`], for every subcommand; every error is written by
//! [`report`], which escapes what the input brought ([`escape`]), so that no control byte of the
//! input reaches the terminal.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{BufRead, Write};

mod args;
#[cfg(test)]
mod extremes;
#[cfg(test)]
mod fuzz;
mod gemm;
mod layout;
mod ptx;
mod tune;

/// A subcommand's entry point: arguments, stdin, stdout, stderr; returns the exit status.
type Run = fn(&[String], &mut dyn BufRead, &mut dyn Write, &mut dyn Write) -> i32;

/// A subcommand: its name, a line for `--help`, and its entry point.
struct Subcommand {
    name: &'static str,
    summary: &'static str,
    run: Run,
}

/// Runs `run` on `args` with `input` as stdin; returns the exit status, stdout and stderr (the
/// subcommands' tests drive them this way, without a process).
#[cfg(test)]
fn capture(run: Run, args: &[&str], input: &str) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf-8 stdout"),
        String::from_utf8(err).expect("utf-8 stderr"),
    )
}

/// Whether `c` is shown escaped when echoed: the C0 and C1 controls and DEL (`char::is_control`),
/// and the invisible marks that reorder or hide text (bidirectional overrides and isolates,
/// zero-width characters, the byte order mark).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
        )
}

/// `text` fit to echo in a message: every [`hidden`] character written as an escape (`\0`, `\t`,
/// `\n`, `\r`, `\x1b` below 0x80, `\u{202e}` above), the rest unchanged. Escaping escaped text
/// changes nothing (a backslash is left as it is), so a message may quote text that is escaped
/// already.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => s.push_str("\\0"),
            '\t' => s.push_str("\\t"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            c if hidden(c) && (c as u32) < 0x80 => s.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => s.push(c),
        }
    }
    Cow::Owned(s)
}

/// `bytes` as text fit to echo: [`escape`] of each valid UTF-8 run, and every byte that is not
/// UTF-8 as `\xff`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(&escape(chunk.valid()));
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// Writes `error: MESSAGE` as one line, the message [`escape`]d: every error of every
/// subcommand goes through here.
pub fn report(w: &mut dyn Write, message: &str) {
    let _ = writeln!(w, "error: {}", escape(message));
}

const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "layout",
        summary: "evaluate CuTe layout expressions: print, --values or --table",
        run: layout::run,
    },
    Subcommand {
        name: "ptx",
        summary: "print a registered kernel's PTX for a target, or --list the kernels",
        run: ptx::run,
    },
    Subcommand {
        name: "gemm",
        summary: "run rute's GEMM on random data: --check against cuBLAS, --bench, --suite",
        run: gemm::run,
    },
    Subcommand {
        name: "tune",
        summary: "time schedules for one GEMM shape on the GPU and record the fastest",
        run: tune::run,
    },
];

/// Exit status for a usage error.
pub const USAGE_ERROR: i32 = 2;

fn usage(out: &mut dyn Write) {
    let _ = writeln!(out, "usage: rute <subcommand> [args...]\n\nsubcommands:");
    for s in SUBCOMMANDS {
        let _ = writeln!(out, "  {:<8} {}", s.name, s.summary);
    }
    let _ = writeln!(out, "\n`rute <subcommand> --help` describes one.");
}

/// Run `rute` with `args` (without the program name); returns the exit status. An argument that
/// is not UTF-8 is a usage error.
pub fn run(
    args: &[OsString],
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let args = match args::utf8(args) {
        Ok(a) => a,
        Err(message) => {
            report(err, &message);
            return USAGE_ERROR;
        }
    };
    let Some(first) = args.first() else {
        usage(err);
        return USAGE_ERROR;
    };
    if matches!(first.as_str(), "--help" | "-h" | "help") {
        usage(out);
        return 0;
    }
    match SUBCOMMANDS.iter().find(|s| s.name == first) {
        Some(s) => (s.run)(&args[1..], stdin, out, err),
        None => {
            report(err, &format!("unknown subcommand `{first}`"));
            let _ = writeln!(err);
            usage(err);
            USAGE_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rute(args: &[&str], input: &str) -> (i32, String, String) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
        (
            code,
            String::from_utf8(out).expect("utf-8 stdout"),
            String::from_utf8(err).expect("utf-8 stderr"),
        )
    }

    #[test]
    fn escape_shows_every_hidden_character() {
        assert_eq!(escape("(4,2):(1,4)"), "(4,2):(1,4)");
        assert!(matches!(escape("plain `text`"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\0b\tc\nd\re\x1b[2Jf\x7fg\u{9b}h\u{202e}i"),
            "a\\0b\\tc\\nd\\re\\x1b[2Jf\\x7fg\\u{9b}h\\u{202e}i"
        );
        // Escaped text is left as it is, so a message may quote it.
        let once = escape("\x1b").into_owned();
        assert_eq!(escape(&once), once);
        // Printable non-ASCII stays.
        assert_eq!(escape("Sw<3,3,3> ∘ ü"), "Sw<3,3,3> ∘ ü");
        assert_eq!(escape_bytes(b"\xff(4,\xc3)\x1b"), "\\xff(4,\\xc3)\\x1b");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
    }

    #[test]
    fn help_lists_subcommands() {
        let (code, out, _) = rute(&["--help"], "");
        assert_eq!(code, 0);
        assert!(out.contains("layout"), "{out}");
    }

    #[test]
    fn unknown_or_missing_subcommand_is_a_usage_error() {
        let (code, _, err) = rute(&["frobnicate"], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.contains("unknown subcommand `frobnicate`"), "{err}");
        let (code, _, err) = rute(&[], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.contains("usage"), "{err}");
    }
}
