//! `rute layout`: evaluate layout expressions (see `dsl_core::layout::expr`), one result per
//! expression, in the order given.
//!
//! A failing expression prints `error: ...` in its place on stdout (and again on stderr), so the
//! output lines stay aligned with the input; the others still run, and the exit status is 1.

use std::io::{BufRead, Write};

use dsl_core::layout::expr::{evaluate, Value};
use dsl_core::layout::{svg, LayoutError};

use super::args::{self, Flag};
use super::{escape_bytes, report, USAGE_ERROR};

const HELP: &str = "\
usage: rute layout [--values | --table | --svg | --svg-tv MxN] [EXPR...]

Evaluates each EXPR (CuTe notation and CuTe's functions) and prints one result per line.
With no EXPR, reads one expression per line from stdin, skipping blank lines and lines
starting with `#`.

  --values   print the offsets L(0) .. L(size-1), space-separated
  --table    print CuTe's print_layout table (rank 1 or 2)
  --svg      print an SVG picture of the layout's offsets (rank 1 or 2); a composed layout's
             cells are colored by the 16-byte chunk their 16-bit element lands in, so a
             bank-conflict-free swizzle shows 8 colors down every 8 rows
  --svg-tv MxN
             the expression is a thread-value layout (thread, value) -> index into the
             column-major MxN tile: print an SVG of which thread and value hold each element

examples:
  rute layout '(4,8):(8,1)' 'size((4,8):(8,1))'
  rute layout 'composition(Sw<3,3,3>, (8,32):(32,1))'
  rute layout --table 'Sw<1,0,1> o 0 o (4,4):(4,1)'
  rute layout --svg 'Sw<3,3,3> o 0 o (8,64):(64,1)' > smem.svg
  rute layout --svg-tv 16x8 '((4,8),(2,2)):((32,1),(16,8))' > mma_c.svg
";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Print,
    Values,
    Table,
    Svg,
    /// A thread-value layout over an `rows x cols` tile.
    SvgTv(i64, i64),
}

const FLAGS: &[Flag] = &[
    Flag::switch("--values"),
    Flag::switch("--table"),
    Flag::switch("--svg"),
    Flag::value("--svg-tv", "a tile MxN, like 16x8"),
];

/// `MxN` as two positive integers.
fn tile_arg(s: &str) -> Option<(i64, i64)> {
    let (m, n) = s.split_once('x')?;
    let (m, n) = (m.parse().ok()?, n.parse().ok()?);
    (m > 0 && n > 0).then_some((m, n))
}

/// The mode and the expressions the arguments ask for, or `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<(Mode, Vec<String>)>, String> {
    let a = args::read(args, FLAGS)?;
    if a.help {
        return Ok(None);
    }
    let modes = a.given_of(&["--values", "--table", "--svg", "--svg-tv"]);
    let mode = match modes[..] {
        [] => Mode::Print,
        ["--values"] => Mode::Values,
        ["--table"] => Mode::Table,
        ["--svg"] => Mode::Svg,
        _ if modes.len() > 1 => {
            return Err("--values, --table, --svg and --svg-tv exclude each other".into())
        }
        _ => {
            let t = a.value("--svg-tv").unwrap_or_default();
            let (m, n) = tile_arg(t)
                .ok_or_else(|| format!("--svg-tv takes a tile MxN, like 16x8, not `{t}`"))?;
            Mode::SvgTv(m, n)
        }
    };
    Ok(Some((mode, a.positional)))
}

/// Run `rute layout` with its arguments; returns the exit status.
pub fn run(
    args: &[String],
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (mode, exprs) = match parse(args) {
        Ok(Some(request)) => request,
        Ok(None) => {
            let _ = out.write_all(HELP.as_bytes());
            return 0;
        }
        Err(message) => {
            report(err, &message);
            let _ = writeln!(err, "\n{HELP}");
            return USAGE_ERROR;
        }
    };
    let mut failed = false;
    if exprs.is_empty() {
        // Each line on its own: one that is not UTF-8 is an error in its place, like one that
        // does not evaluate.
        let mut line = Vec::new();
        for number in 1usize.. {
            line.clear();
            match stdin.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    report(
                        err,
                        &format!("reading stdin after line {}: {e}", number - 1),
                    );
                    return 1;
                }
            }
            let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            let src = match std::str::from_utf8(bytes) {
                Ok(s) => s.trim(),
                // A comment is skipped whatever it holds.
                Err(_) if bytes.trim_ascii().starts_with(b"#") => continue,
                Err(_) => {
                    let message = format!(
                        "line {number} is not valid UTF-8: `{}`",
                        escape_bytes(bytes.trim_ascii())
                    );
                    report(out, &message);
                    report(err, &message);
                    failed = true;
                    continue;
                }
            };
            if src.is_empty() || src.starts_with('#') {
                continue;
            }
            failed |= !one(src, mode, out, err);
        }
    } else {
        for src in &exprs {
            failed |= !one(src, mode, out, err);
        }
    }
    i32::from(failed)
}

/// Evaluate and print one expression; false when it failed.
fn one(src: &str, mode: Mode, out: &mut dyn Write, err: &mut dyn Write) -> bool {
    match render(src, mode) {
        Ok(text) => {
            let _ = out.write_all(text.as_bytes());
            true
        }
        Err(e) => {
            // Parse and call errors quote the expression already; the others get it in front.
            let message = match e {
                LayoutError::Parse { .. } | LayoutError::InCall { .. } => e.to_string(),
                other => format!("`{src}`: {other}"),
            };
            report(out, &message);
            report(err, &message);
            false
        }
    }
}

fn render(src: &str, mode: Mode) -> Result<String, LayoutError> {
    let v: Value = evaluate(src)?;
    Ok(match mode {
        Mode::Print => format!("{v}\n"),
        Mode::Values => {
            let vals: Vec<String> = v.values()?.iter().map(i64::to_string).collect();
            format!("{}\n", vals.join(" "))
        }
        Mode::Table => v.table()?,
        Mode::Svg => match &v {
            Value::Layout(l) => svg::svg_layout(l)?,
            // The picture's coloring assumes 16-bit elements, the GEMMs' shared memory.
            Value::Composed(c) => svg::svg_composed(c, 2)?,
            other => return Err(not_a_layout("--svg", other)),
        },
        Mode::SvgTv(m, n) => match &v {
            Value::Layout(l) => svg::svg_tv(l, m, n)?,
            other => return Err(not_a_layout("--svg-tv", other)),
        },
    })
}

fn not_a_layout(option: &str, v: &Value) -> LayoutError {
    LayoutError::precondition(
        "rute layout",
        v.to_string(),
        format!("{option} draws a layout, not {}", v.kind()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(args: &[&str], input: &str) -> (i32, String, String) {
        super::super::capture(run, args, input)
    }

    #[test]
    fn one_line_per_expression() {
        let (code, out, _) = layout(&["(4,8)", "size(8:2)", "Sw<3,3,3> o (8,32):(32,1)"], "");
        assert_eq!(code, 0);
        assert_eq!(out, "(4,8):(1,4)\n8\nSw<3,3,3> o 0 o (8,32):(32,1)\n");
    }

    #[test]
    fn errors_keep_their_line_and_set_the_status() {
        let (code, out, err) = layout(&["--values"], "# comment\n\n(2,2):(2,1)\n(2,2,2)bad\n4:3\n");
        assert_eq!(code, 1);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "0 2 1 3");
        assert!(
            lines[1].starts_with("error: cannot parse `(2,2,2)bad` at column 8"),
            "{out}"
        );
        assert_eq!(lines[2], "0 3 6 9");
        assert!(err.contains("(2,2,2)bad"));
        // An error that is not a parse error names the expression too.
        let (code, out, _) = layout(&["--values", "Sw<1,0,1>"], "");
        assert_eq!(code, 1);
        assert!(out.starts_with("error: `Sw<1,0,1>`: "), "{out}");
    }

    #[test]
    fn usage_errors() {
        assert_eq!(layout(&["--bogus"], "").0, USAGE_ERROR);
        assert_eq!(layout(&["--values", "--table", "8:1"], "").0, USAGE_ERROR);
        let (code, out, _) = layout(&["--help"], "");
        assert_eq!(code, 0);
        assert!(out.contains("--table"));
        // After `--`, a leading dash is an expression.
        let (code, out, _) = layout(&["--", "-3"], "");
        assert_eq!((code, out.as_str()), (0, "-3\n"));
    }

    #[test]
    fn svg_pictures() {
        let (code, out, _) = layout(&["--svg", "Sw<3,3,3> o 0 o (8,64):(64,1)"], "");
        assert_eq!(code, 0);
        assert!(out.starts_with("<svg") && out.trim_end().ends_with("</svg>"));
        assert_eq!(out.matches("<rect").count(), 1 + 8 * 64);
        let (code, out, _) = layout(&["--svg-tv", "16x8", "((4,8),(2,2)):((32,1),(16,8))"], "");
        assert_eq!(code, 0);
        assert_eq!(
            out.matches(">T31</text>").count(),
            4,
            "thread 31 holds 4 values"
        );
        // Not a layout, a bad tile, a layout that leaves its tile: errors, the exit status 1 or 2.
        let (code, out, _) = layout(&["--svg", "size(8:1)"], "");
        assert_eq!(code, 1);
        assert!(
            out.contains("--svg draws a layout, not an integer"),
            "{out}"
        );
        assert_eq!(layout(&["--svg-tv", "16", "8:1"], "").0, USAGE_ERROR);
        assert_eq!(layout(&["--svg", "--table", "8:1"], "").0, USAGE_ERROR);
        let (code, out, _) = layout(&["--svg-tv", "2x2", "(4,2):(1,4)"], "");
        assert_eq!(code, 1);
        assert!(out.contains("outside the 2x2 tile"), "{out}");
    }
}
