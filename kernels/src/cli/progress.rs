//! A progress line for long runs (the suites): `[12/28] 2048 x 6144 x 4096 bf16 f32`, on stderr,
//! rewritten in place while a case runs and cleared before its result is written to stdout (which
//! may be the same terminal). Written only where stderr is a terminal: a file or a pipe gets
//! nothing, so logs stay free of control sequences.

use std::io::Write;

/// Erases the terminal's current line and returns to its first column.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// The progress of a run of `total` cases.
#[derive(Debug)]
pub struct Progress {
    total: usize,
    started: usize,
    enabled: bool,
}

impl Progress {
    /// A run of `total` cases; `enabled`: whether stderr is a terminal.
    pub fn new(total: usize, enabled: bool) -> Progress {
        Progress {
            total,
            started: 0,
            enabled,
        }
    }

    /// Shows that the next case, `label`, is running: `[n/total] label`.
    pub fn start(&mut self, err: &mut dyn Write, label: &str) {
        self.started += 1;
        if self.enabled {
            let _ = write!(err, "{CLEAR_LINE}[{}/{}] {label}", self.started, self.total);
            let _ = err.flush();
        }
    }

    /// Shows the case [`Progress::start`] began under a new label (its next phase).
    pub fn step(&self, err: &mut dyn Write, label: &str) {
        if self.enabled {
            let _ = write!(err, "{CLEAR_LINE}[{}/{}] {label}", self.started, self.total);
            let _ = err.flush();
        }
    }

    /// Clears the line, before a result is written.
    pub fn clear(&self, err: &mut dyn Write) {
        if self.enabled {
            let _ = write!(err, "{CLEAR_LINE}");
            let _ = err.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_sees_each_case_and_a_clear_line() {
        let mut err = Vec::new();
        let mut p = Progress::new(2, true);
        p.start(&mut err, "4096 x 4096 x 4096 bf16");
        p.clear(&mut err);
        p.start(&mut err, "8192 x 8192 x 8192 bf16: check");
        p.step(&mut err, "8192 x 8192 x 8192 bf16: bench");
        p.clear(&mut err);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "\r\x1b[2K[1/2] 4096 x 4096 x 4096 bf16\r\x1b[2K\
             \r\x1b[2K[2/2] 8192 x 8192 x 8192 bf16: check\
             \r\x1b[2K[2/2] 8192 x 8192 x 8192 bf16: bench\r\x1b[2K"
        );
    }

    #[test]
    fn a_file_or_pipe_sees_nothing() {
        let mut err = Vec::new();
        let mut p = Progress::new(3, false);
        p.start(&mut err, "case");
        p.step(&mut err, "case: bench");
        p.clear(&mut err);
        assert!(err.is_empty());
    }
}
