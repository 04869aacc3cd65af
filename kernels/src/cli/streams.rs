//! What a subcommand reads and writes: the three standard streams (as values, so that tests drive
//! a subcommand without a process), whether stderr is a terminal, and the exit statuses.
//!
//! Every error of every subcommand is written by [`report`], which escapes what the input
//! brought, so that no control byte of the input reaches the terminal.

use std::io::{BufRead, Write};

use super::escape::escape;

/// Exit status: everything ran and passed.
pub const SUCCESS: i32 = 0;

/// Exit status: some input failed (a layout expression, a check, the GPU); the subcommand says
/// which.
pub const FAILURE: i32 = 1;

/// Exit status: a usage error (an argument refused before anything ran).
pub const USAGE_ERROR: i32 = 2;

/// The standard streams of one run of `rute`.
pub struct Streams<'a> {
    /// Standard input (`rute layout` reads expressions from it).
    pub stdin: &'a mut dyn BufRead,
    /// Standard output: results.
    pub out: &'a mut dyn Write,
    /// Standard error: errors, and on a terminal the progress of long runs.
    pub err: &'a mut dyn Write,
    /// Whether `err` is a terminal: only then is a progress line written there (it is rewritten
    /// in place with control sequences, which a file or a pipe should not get).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub err_is_terminal: bool,
}

/// Writes `error: MESSAGE` as one line, the message [`escape`]d: every error of every
/// subcommand goes through here.
pub fn report(w: &mut dyn Write, message: &str) {
    let _ = writeln!(w, "error: {}", escape(message));
}

/// Runs `f` on streams with `input` as stdin, stderr not a terminal; returns the exit status,
/// stdout and stderr (the subcommands' tests drive them this way, without a process).
#[cfg(test)]
pub fn capture(f: impl FnOnce(&mut Streams) -> i32, input: &str) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = f(&mut Streams {
        stdin: &mut input.as_bytes(),
        out: &mut out,
        err: &mut err,
        err_is_terminal: false,
    });
    (
        code,
        String::from_utf8(out).expect("utf-8 stdout"),
        String::from_utf8(err).expect("utf-8 stderr"),
    )
}
