//! `rute layout`: evaluate layout expressions (see `dsl_core::layout::expr`), one result per
//! expression, in the order given.
//!
//! A failing expression prints `error: ...` in its place on stdout (and again on stderr), so the
//! output lines stay aligned with the input; the others still run, and the exit status is 1.

use dsl_core::layout::expr::{evaluate, Value};
use dsl_core::layout::{svg, LayoutError};

use super::args::{Expected, Usage};
use super::escape::escape_bytes;
use super::streams::{report, Streams};

/// The examples at the end of `rute layout --help`.
const EXAMPLES: &str = "\
Examples:
  rute layout '(4,8):(8,1)' 'size((4,8):(8,1))'
  rute layout 'composition(Sw<3,3,3>, (8,32):(32,1))'
  rute layout --table 'Sw<1,0,1> o 0 o (4,4):(4,1)'
  rute layout --svg 'Sw<3,3,3> o 0 o (8,64):(64,1)' > smem.svg
  rute layout --svg-tv 16x8 '((4,8),(2,2)):((32,1),(16,8))' > mma_c.svg";

/// evaluate CuTe layout expressions: print, --values, --table or an SVG picture
///
/// Evaluates each EXPR (CuTe notation and CuTe's functions) and prints one result per line.
/// With no EXPR, reads one expression per line from stdin, skipping blank lines and lines
/// starting with `#`. A bad expression prints `error: ...` in its place, the others still run,
/// and the exit status is 1.
#[derive(clap::Args, Debug)]
#[command(
    verbatim_doc_comment,
    override_usage = "rute layout [--values | --table | --svg | --svg-tv MxN] [EXPR...]",
    after_help = EXAMPLES
)]
pub struct Args {
    /// print the offsets L(0) .. L(size-1), space-separated
    #[arg(long, group = "mode")]
    values: bool,
    /// print CuTe's print_layout table (rank 1 or 2)
    #[arg(long, group = "mode")]
    table: bool,
    /// print an SVG picture of the layout's offsets (rank 1 or 2); a composed layout's
    /// cells are colored by the 16-byte chunk their 16-bit element lands in, so a
    /// bank-conflict-free swizzle shows 8 colors down every 8 rows
    #[arg(long, group = "mode", verbatim_doc_comment)]
    svg: bool,
    /// the expression is a thread-value layout (thread, value) -> index into the
    /// column-major MxN tile: print an SVG of which thread and value hold each element
    #[arg(long, group = "mode", value_name = "MxN", value_parser = tile, verbatim_doc_comment)]
    svg_tv: Option<(i64, i64)>,
    /// layout expressions (a leading `-` is read as a number: `-3`; after `--`, every
    /// argument is an expression); none: one a line from stdin
    #[arg(
        value_name = "EXPR",
        allow_negative_numbers = true,
        verbatim_doc_comment
    )]
    exprs: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Print,
    Values,
    Table,
    Svg,
    /// A thread-value layout over an `rows x cols` tile.
    SvgTv(i64, i64),
}

impl Args {
    /// The output the flags ask for (clap lets at most one of them through).
    fn mode(&self) -> Mode {
        match (self.values, self.table, self.svg, self.svg_tv) {
            (true, ..) => Mode::Values,
            (_, true, ..) => Mode::Table,
            (_, _, true, _) => Mode::Svg,
            (.., Some((m, n))) => Mode::SvgTv(m, n),
            _ => Mode::Print,
        }
    }
}

/// `MxN` as two positive integers.
fn tile(s: &str) -> Result<(i64, i64), Expected> {
    let parse = || -> Option<(i64, i64)> {
        let (m, n) = s.split_once('x')?;
        let (m, n) = (m.parse().ok()?, n.parse().ok()?);
        (m > 0 && n > 0).then_some((m, n))
    };
    parse().ok_or_else(|| Expected("a tile MxN, like 16x8".into()))
}

/// Runs `rute layout`; returns the exit status (its arguments are all checked by clap).
pub fn run(args: Args, io: &mut Streams) -> Result<i32, Usage> {
    let mode = args.mode();
    let mut failed = false;
    if args.exprs.is_empty() {
        // Each line on its own: one that is not UTF-8 is an error in its place, like one that
        // does not evaluate.
        let mut line = Vec::new();
        for number in 1usize.. {
            line.clear();
            match io.stdin.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    report(
                        io.err,
                        &format!("reading stdin after line {}: {e}", number - 1),
                    );
                    return Ok(1);
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
                    report(io.out, &message);
                    report(io.err, &message);
                    failed = true;
                    continue;
                }
            };
            if src.is_empty() || src.starts_with('#') {
                continue;
            }
            failed |= !one(src, mode, io);
        }
    } else {
        for src in &args.exprs {
            failed |= !one(src, mode, io);
        }
    }
    Ok(i32::from(failed))
}

/// Evaluate and print one expression; false when it failed.
fn one(src: &str, mode: Mode, io: &mut Streams) -> bool {
    match render(src, mode) {
        Ok(text) => {
            let _ = io.out.write_all(text.as_bytes());
            true
        }
        Err(e) => {
            // Parse and call errors quote the expression already; the others get it in front.
            let message = match e {
                LayoutError::Parse { .. } | LayoutError::InCall { .. } => e.to_string(),
                other => format!("`{src}`: {other}"),
            };
            report(io.out, &message);
            report(io.err, &message);
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
    use super::super::streams::USAGE_ERROR;

    fn layout(args: &[&str], input: &str) -> (i32, String, String) {
        let args: Vec<&str> = std::iter::once("layout")
            .chain(args.iter().copied())
            .collect();
        crate::cli::tests::rute(&args, input)
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
        let (code, _, err) = layout(&["--values", "--table", "8:1"], "");
        assert_eq!(code, USAGE_ERROR);
        assert!(
            err.starts_with("error: --values and --table exclude each other; give one\n"),
            "{err}"
        );
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
