//! Typed errors of the layout algebra. Each names the layout or shape that failed and the rule it broke.

use thiserror::Error;

/// Everything the layout algebra can refuse. Messages are sentences that name the offending value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// Text that is not CuTe notation.
    #[error("cannot parse `{input}` at column {column}: {message}")]
    Parse {
        /// The whole text being parsed.
        input: String,
        /// 1-based column of the offending character.
        column: usize,
        /// What was expected there.
        message: String,
    },
    /// Shape and stride with different tree structures.
    #[error(
        "shape {shape} and stride {stride} are not congruent: they must have the same nesting"
    )]
    NotCongruent {
        /// The shape.
        shape: String,
        /// The stride.
        stride: String,
    },
    /// A shape extent below 1.
    #[error("shape {shape} has extent {extent}: every extent must be at least 1")]
    BadExtent {
        /// The shape.
        shape: String,
        /// The offending extent.
        extent: i64,
    },
    /// A coordinate that does not match the shape it indexes.
    #[error("coordinate {coord} does not match shape {shape}")]
    CoordinateMismatch {
        /// The coordinate.
        coord: String,
        /// The shape.
        shape: String,
    },
    /// A mode index past the rank.
    #[error("layout {layout} has rank {rank}: there is no mode {index}")]
    ModeOutOfRange {
        /// The layout.
        layout: String,
        /// Its rank.
        rank: usize,
        /// The index asked for.
        index: usize,
    },
    /// An operation whose precondition the arguments break (divisibility, injectivity, ...).
    #[error("{op}({args}): {rule}")]
    Precondition {
        /// The operation's CuTe name.
        op: &'static str,
        /// Its arguments, printed.
        args: String,
        /// The rule broken, as a sentence.
        rule: String,
    },
    /// An operation called from the `rute layout` language that refused its arguments: where the call
    /// is, what it was, and the operation's own error.
    #[error("{}", in_call_message(call, error, *column, input))]
    InCall {
        /// The whole expression.
        input: String,
        /// 1-based column of the call's name.
        column: usize,
        /// The call with its arguments, printed (`composition((4,2):(1,4), 3:5)`).
        call: String,
        /// The operation's error.
        error: Box<LayoutError>,
    },
    /// A result of the `rute layout` calculator with more integers than it keeps (see
    /// [`MAX_MODES`](super::expr::MAX_MODES)).
    #[error(
        "the result would have {count} integers in its shape, more than the {limit} the calculator keeps"
    )]
    TooLarge {
        /// The integers the result would have.
        count: usize,
        /// The most the calculator keeps.
        limit: usize,
    },
    /// A value that overflows 64-bit arithmetic.
    #[error("{op}({args}) overflows 64-bit integers")]
    Overflow {
        /// The operation's CuTe name.
        op: &'static str,
        /// Its arguments, printed.
        args: String,
    },
}

/// `in CALL: ERROR (column N of `INPUT`)`, without repeating the call when the operation's own
/// message already starts with it.
fn in_call_message(call: &str, error: &LayoutError, column: usize, input: &str) -> String {
    let inner = error.to_string();
    if inner.starts_with(call) {
        format!("{inner} (column {column} of `{input}`)")
    } else {
        format!("in {call}: {inner} (column {column} of `{input}`)")
    }
}

impl LayoutError {
    /// Shorthand for a [`LayoutError::Precondition`].
    pub fn precondition(
        op: &'static str,
        args: impl Into<String>,
        rule: impl Into<String>,
    ) -> Self {
        LayoutError::Precondition {
            op,
            args: args.into(),
            rule: rule.into(),
        }
    }
}
