//! The typed model of a `layout!` input: what [`parse`](super::parse) builds and the later passes read.
//!
//! Every node keeps the tokens it came from, so that [`check`](super::check) can point an error at
//! exactly the offending part of the input.

use std::fmt;

use proc_macro2::TokenStream;

/// The whole input: a plain layout, or `Sw<B,M,S> o [offset o] layout`.
pub struct LayoutInput {
    /// The swizzle and offset in front of the layout, if any.
    pub swizzle: Option<SwizzleSpec>,
    /// The layout itself.
    pub layout: LayoutSpec,
}

/// `Sw<B,M,S> o [offset o]`.
pub struct SwizzleSpec {
    /// B, M and S.
    pub args: [Value; 3],
    /// The offset between the swizzle and the layout; 0 when left out.
    pub offset: Option<Value>,
    /// The tokens from the name to the closing `>`, for errors about the swizzle as a whole.
    pub tokens: TokenStream,
}

/// `shape`, `shape:stride` or `shape:_`.
pub struct LayoutSpec {
    /// The shape.
    pub shape: Tuple,
    /// The stride, or `None` for CuTe's default (compact column-major) stride.
    pub stride: Option<Tuple>,
}

/// An `IntTuple` as written: a single value, or a parenthesized list of tuples.
pub enum Tuple {
    /// One integer.
    Leaf(Value),
    /// `( mode, mode, ... )`; the tokens are the whole parenthesized group.
    Modes(Vec<Tuple>, TokenStream),
}

/// One integer of a shape, stride, swizzle or offset.
pub struct Value {
    /// A literal, known now, or a Rust expression, known at run time.
    pub kind: ValueKind,
    /// The tokens it was written with (the `-` included).
    pub tokens: TokenStream,
}

/// What a [`Value`] holds.
pub enum ValueKind {
    /// An integer literal, possibly negated.
    Lit(i64),
    /// A constant name or a braced expression, evaluated where the macro expands.
    Expr(TokenStream),
}

impl Tuple {
    /// The tokens this tuple was written with.
    pub fn tokens(&self) -> &TokenStream {
        match self {
            Tuple::Leaf(v) => &v.tokens,
            Tuple::Modes(_, tokens) => tokens,
        }
    }

    /// Every leaf, depth first.
    pub fn leaves(&self) -> Vec<&Value> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<&'a Value>) {
        match self {
            Tuple::Leaf(v) => out.push(v),
            Tuple::Modes(modes, _) => modes.iter().for_each(|m| m.collect_leaves(out)),
        }
    }
}

/// Prints in CuTe notation; a constant prints as its name, an expression as `{expr}`.
impl fmt::Display for Tuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tuple::Leaf(v) => write!(f, "{v}"),
            Tuple::Modes(modes, _) => {
                f.write_str("(")?;
                for (i, m) in modes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ValueKind::Lit(v) => write!(f, "{v}"),
            ValueKind::Expr(_) => {
                let text = self.tokens.to_string();
                f.write_str(&text)
            }
        }
    }
}

impl fmt::Display for LayoutSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.stride {
            Some(stride) => write!(f, "{}:{}", self.shape, stride),
            None => write!(f, "{}", self.shape),
        }
    }
}

impl fmt::Display for LayoutInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(sw) = &self.swizzle {
            let [b, m, s] = &sw.args;
            write!(f, "Sw<{b},{m},{s}> o ")?;
            if let Some(offset) = &sw.offset {
                write!(f, "{offset} o ")?;
            }
        }
        write!(f, "{}", self.layout)
    }
}
