//! The Rust source location of the kernel statement that emitted an instruction.
//!
//! `#[kernel]` and `#[device]` bodies record the location of each statement as they run (see
//! [`crate::kernel::set_location`]); every instruction emitted while a statement runs, also by
//! library code it calls, carries that statement's location. Locations take no part in IR
//! equality and are not printed in PTX: they are for diagnostics (the simulator's findings, IR
//! errors).

use std::fmt;

/// A `file:line:column` in the Rust source, as `file!()`, `line!()` and `column!()` give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The source file, relative to the workspace or crate root as `file!()` gives it.
    pub file: &'static str,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
}

impl Location {
    /// The location `file:line:column`.
    pub const fn new(file: &'static str, line: u32, column: u32) -> Self {
        Location { file, line, column }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
