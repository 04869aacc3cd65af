//! `rute layout`: evaluate layout expressions (see `dsl_core::layout::expr`), one result per
//! expression, in the order given.
//!
//! A failing expression prints `error: ...` in its place on stdout (and again on stderr), so the
//! output lines stay aligned with the input; the others still run, and the exit status is 1.

use std::io::{BufRead, Write};

use dsl_core::layout::expr::{evaluate, Value};
use dsl_core::layout::LayoutError;

use super::USAGE_ERROR;

const HELP: &str = "\
usage: rute layout [--values | --table] [EXPR...]

Evaluates each EXPR (CuTe notation and CuTe's functions) and prints one result per line.
With no EXPR, reads one expression per line from stdin, skipping blank lines and lines
starting with `#`.

  --values   print the offsets L(0) .. L(size-1), space-separated
  --table    print CuTe's print_layout table (rank 1 or 2)

examples:
  rute layout '(4,8):(8,1)' 'size((4,8):(8,1))'
  rute layout 'composition(Sw<3,3,3>, (8,32):(32,1))'
  rute layout --table 'Sw<1,0,1> o 0 o (4,4):(4,1)'
";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Print,
    Values,
    Table,
}

/// Run `rute layout` with its arguments; returns the exit status.
pub fn run(
    args: &[String],
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut mode = Mode::Print;
    let mut exprs = Vec::new();
    let mut options_done = false;
    for a in args {
        let wanted = match a.as_str() {
            _ if options_done => None,
            "--" => {
                options_done = true;
                continue;
            }
            "--help" | "-h" => {
                let _ = out.write_all(HELP.as_bytes());
                return 0;
            }
            "--values" => Some(Mode::Values),
            "--table" => Some(Mode::Table),
            s if s.starts_with("--") => {
                let _ = writeln!(err, "error: unknown option `{s}`\n\n{HELP}");
                return USAGE_ERROR;
            }
            _ => None,
        };
        match wanted {
            Some(m) if mode != Mode::Print && mode != m => {
                let _ = writeln!(err, "error: --values and --table exclude each other");
                return USAGE_ERROR;
            }
            Some(m) => mode = m,
            None => exprs.push(a.clone()),
        }
    }

    let mut failed = false;
    if exprs.is_empty() {
        for line in stdin.lines() {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    let _ = writeln!(err, "error: reading stdin: {e}");
                    return 1;
                }
            };
            let src = line.trim();
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
            let msg = match e {
                LayoutError::Parse { .. } | LayoutError::InCall { .. } => e.to_string(),
                other => format!("`{src}`: {other}"),
            };
            let _ = writeln!(out, "error: {msg}");
            let _ = writeln!(err, "error: {msg}");
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
    })
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
}
