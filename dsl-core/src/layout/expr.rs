//! The expression language of the `rute layout` calculator: CuTe notation plus CuTe's functions.
//!
//! An expression is one of
//! - a layout: `((2,4),8):((1,2),8)`, `8:1`, `(4,8):_`, or a bare shape `(4,8)` (column-major);
//! - a swizzle: `Sw<3,3,3>` or `Swizzle<3,3,3>`;
//! - a composed layout as CuTe prints it: `Sw<2,1,-3> o 38 o (3,8):(8,1)`, or `Sw<3,3,3> o (8,32):(32,1)`
//!   (offset 0);
//! - a tiler: a parenthesized tuple with at least one layout among its items, `(2:1,4:1)`; `(7:1)` is
//!   a one-mode tiler, unlike the layout `7:1`; integers in a tiler mean `n:1`;
//! - an integer;
//! - a call `name(arg, ...)` of a CuTe function (see [`FUNCTIONS`]), or an evaluation `L(i)`.
//!
//! Where a function wants a tiler, a bare shape `(4,8)` is the tiler `(4:1,8:1)`, as a CuTe `Shape`
//! passed to `logical_divide` is; elsewhere it is the column-major layout of that shape.
//!
//! ```
//! use dsl_core::layout::expr::{evaluate, Value};
//! let v = evaluate("composition(Sw<3,3,3>, (8,32):(32,1))").unwrap();
//! assert_eq!(v.to_string(), "Sw<3,3,3> o 0 o (8,32):(32,1)");
//! assert_eq!(evaluate("size((4,8):(8,1))").unwrap(), Value::Int(32));
//! assert_eq!(evaluate("(4,8):(8,1)(1,2)").unwrap(), Value::Int(10));
//! ```

use std::fmt;

use super::print::{print_composed, print_layout};
use super::{ComposedLayout, IntTuple, Layout, LayoutError, Swizzle, Tiler};

mod checked;
mod functions;
mod parser;

pub use checked::MAX_MODES;
pub use functions::FUNCTIONS;

/// The value of an expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Value {
    /// An integer (`size(...)`, `L(i)`, ...).
    Int(i64),
    /// A layout.
    Layout(Layout),
    /// A composed layout `swizzle o offset o layout`.
    Composed(ComposedLayout),
    /// A swizzle on its own.
    Swizzle(Swizzle),
    /// A tiler tuple (a tiler that is a single layout is a [`Value::Layout`]).
    Tiler(Tiler),
    /// A tuple of integers that is not a layout: a coordinate (`idx2crd(...)`) or a mode of a shape.
    Tuple(IntTuple),
}

/// Evaluate one expression. Errors are [`LayoutError::Parse`] with the column of the problem, or
/// [`LayoutError::InCall`] wrapping the error of the operation that refused its arguments.
/// No input panics.
pub fn evaluate(src: &str) -> Result<Value, LayoutError> {
    parser::Parser::new(src).parse_all()
}

impl Value {
    /// What kind of value this is, in words, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Layout(_) => "a layout",
            Value::Composed(_) => "a composed layout",
            Value::Swizzle(_) => "a swizzle",
            Value::Tiler(_) => "a tiler",
            Value::Tuple(_) => "a tuple",
        }
    }

    /// The offsets of indices `0..size`: `L(0), ..., L(size-1)` for a layout or composed layout;
    /// `[n]` for an integer. Other values have no offsets (an error says so).
    pub fn values(&self) -> Result<Vec<i64>, LayoutError> {
        match self {
            Value::Int(n) => Ok(vec![*n]),
            Value::Layout(l) => {
                let n = checked::listable_size(&l.to_string(), l.shape())?;
                (0..n)
                    .map(|i| checked::eval_layout(l, &IntTuple::Int(i)))
                    .collect()
            }
            Value::Composed(c) => {
                let n = checked::listable_size(&c.to_string(), c.layout.shape())?;
                (0..n)
                    .map(|i| checked::eval_composed(c, &IntTuple::Int(i)))
                    .collect()
            }
            other => Err(LayoutError::precondition(
                "values",
                other.to_string(),
                format!(
                    "{} has no offsets: only layouts and composed layouts do",
                    other.kind()
                ),
            )),
        }
    }

    /// The table of CuTe's `print_layout` (see [`print_layout`]) of a layout or composed layout.
    pub fn table(&self) -> Result<String, LayoutError> {
        match self {
            Value::Layout(l) => {
                checked::check_layout(l)?;
                print_layout(l)
            }
            Value::Composed(c) => {
                checked::check_composed(c)?;
                print_composed(c)
            }
            other => Err(LayoutError::precondition(
                "print_layout",
                other.to_string(),
                format!(
                    "{} has no table: only layouts and composed layouts do",
                    other.kind()
                ),
            )),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Layout(l) => write!(f, "{l}"),
            Value::Composed(c) => write!(f, "{c}"),
            Value::Swizzle(s) => write!(f, "{s}"),
            Value::Tiler(t) => write!(f, "{t}"),
            Value::Tuple(t) => write!(f, "{t}"),
        }
    }
}

#[cfg(test)]
mod tests;
