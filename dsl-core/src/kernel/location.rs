//! The Rust source location that emitted instructions carry.
//!
//! The kernel under construction holds a current location; every instruction emitted while it
//! is set carries it ([`crate::ir::Instr::loc`]). `#[kernel]` and `#[device]` set it before each
//! statement of their bodies, so library code called from a statement (a tiled copy, a pipeline
//! verb) stamps the statement's location on everything it emits. A `#[device]` function restores
//! its caller's location when it returns ([`LocationScope`]), so the rest of the caller's statement
//! keeps the caller's line. Code written with the builder API by hand may call [`set_location`]
//! itself; without it, instructions carry no location.
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::ir::{for_each_instr, Location};
//!
//! let mut line = 0;
//! let k = build_kernel("located", |k| {
//!     let out = k.param_ptr::<u32>("out");
//!     line = line!();
//!     set_location(file!(), line, column!());
//!     out.store_at(thread_idx_x(), thread_idx_x() + 1u32);
//! })
//! .unwrap();
//! let mut lines = Vec::new();
//! for_each_instr(&k.body, &mut |i| lines.extend(i.loc.map(|l: Location| l.line)));
//! // Everything, also the parameter's load made at its first use, comes from that statement.
//! assert!(!lines.is_empty() && lines.iter().all(|&l| l == line));
//! ```

use super::context::with;
use crate::ir::Location;

/// Sets the location that instructions emitted from now on carry (nothing when no kernel is
/// being built). `#[kernel]` and `#[device]` call it before each statement with `file!()`,
/// `line!()` and `column!()` at the statement.
pub fn set_location(file: &'static str, line: u32, column: u32) {
    with(|b| b.loc = Some(Location::new(file, line, column)));
}

/// The location instructions emitted now carry (`None` when none is set or no kernel is being
/// built).
pub fn current_location() -> Option<Location> {
    with(|b| b.loc).flatten()
}

/// Restores the location current when it was made, when dropped: a `#[device]` function holds
/// one for its body, so that what its caller emits after the call carries the caller's line.
#[must_use = "the location is restored when the scope is dropped"]
pub struct LocationScope(Option<Location>);

/// A [`LocationScope`] that restores the current location when dropped.
pub fn location_scope() -> LocationScope {
    LocationScope(current_location())
}

impl Drop for LocationScope {
    fn drop(&mut self) {
        let saved = self.0;
        with(|b| b.loc = saved);
    }
}
