//! Parsing CuTe notation: `8`, `(4,2)`, `((2,4),8):((1,2),8)`, `(4,8):_`.
//!
//! [`Cursor`] is the small scanner the other text front ends (the `layout!` macro, the `rute layout`
//! calculator) build on, so that all of them accept exactly the same notation.

use std::str::FromStr;

use super::error::LayoutError;
use super::int_tuple::IntTuple;
use super::layout::Layout;

/// A position in a text being parsed, with errors that point at a column.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Start at the beginning of `input`.
    pub fn new(input: &'a str) -> Self {
        Cursor { input, pos: 0 }
    }

    /// The byte offset reached.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Move to a byte offset previously returned by [`Cursor::pos`] (for backtracking).
    pub fn reset(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The text not yet consumed.
    pub fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    /// Skip whitespace.
    pub fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// The next non-space character, without consuming it.
    pub fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    /// Consume `token` (after whitespace) if it is next.
    pub fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// Consume `token` or fail naming it.
    pub fn expect(&mut self, token: &str) -> Result<(), LayoutError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{token}`")))
        }
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.rest().is_empty()
    }

    /// Fail unless only whitespace is left.
    pub fn expect_end(&mut self) -> Result<(), LayoutError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error("unexpected text after the end"))
        }
    }

    /// A parse error at the current position.
    pub fn error(&self, message: impl Into<String>) -> LayoutError {
        let column = self.input[..self.pos].chars().count() + 1;
        LayoutError::Parse {
            input: self.input.to_string(),
            column,
            message: message.into(),
        }
    }

    /// An identifier (`[A-Za-z_][A-Za-z0-9_]*`), if one is next.
    pub fn ident(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let rest = self.rest();
        let mut chars = rest.char_indices();
        match chars.next() {
            Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
            _ => return None,
        }
        let end = chars
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        self.pos += end;
        Some(&rest[..end])
    }

    /// Whether a static integer in CuTe's printed form (`_8`, `_-1`: `Int<8>`, `Int<-1>`) is
    /// next, as opposed to a lone `_` (the default stride).
    pub fn static_int_next(&mut self) -> bool {
        self.skip_ws();
        let b = self.rest().as_bytes();
        b.first() == Some(&b'_')
            && match b.get(1) {
                Some(d) if d.is_ascii_digit() => true,
                Some(b'-' | b'+') => b.get(2).is_some_and(u8::is_ascii_digit),
                _ => false,
            }
    }

    /// Consume the default-stride marker `_` if it is next (and not the start of `_8`).
    pub fn eat_default_stride(&mut self) -> bool {
        !self.static_int_next() && self.eat("_")
    }

    /// A signed decimal integer, also in CuTe's static spelling `_8` (every integer is static in
    /// rute, so `_8` and `8` are the same value).
    pub fn int(&mut self) -> Result<i64, LayoutError> {
        if self.static_int_next() {
            self.pos += 1;
        }
        self.skip_ws();
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut end = 0;
        if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
            end += 1;
        }
        let digits_start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == digits_start {
            return Err(self.error("expected an integer"));
        }
        let v = rest[..end]
            .parse::<i64>()
            .map_err(|_| self.error("integer out of range"))?;
        self.pos += end;
        Ok(v)
    }

    /// An `IntTuple`: an integer or a parenthesized, comma-separated list of `IntTuple`s.
    pub fn int_tuple(&mut self) -> Result<IntTuple, LayoutError> {
        self.int_tuple_at(0)
    }

    fn int_tuple_at(&mut self, depth: usize) -> Result<IntTuple, LayoutError> {
        // Deep nesting is legal but no real layout needs it; the bound keeps hostile input from
        // exhausting the stack.
        if depth > 64 {
            return Err(self.error("nesting deeper than 64 levels"));
        }
        if self.eat("(") {
            let mut items = Vec::new();
            if self.eat(")") {
                return Ok(IntTuple::Tuple(items));
            }
            loop {
                items.push(self.int_tuple_at(depth + 1)?);
                if self.eat(")") {
                    return Ok(IntTuple::Tuple(items));
                }
                self.expect(",")?;
            }
        }
        Ok(IntTuple::Int(self.int()?))
    }

    /// A layout: `shape`, `shape:stride` or `shape:_` (the last two spell CuTe's default strides).
    pub fn layout(&mut self) -> Result<Layout, LayoutError> {
        let start = self.pos;
        let shape = self.int_tuple()?;
        let stride = if self.eat(":") {
            if self.eat_default_stride() {
                shape.compact_col_major()
            } else {
                self.int_tuple()?
            }
        } else {
            shape.compact_col_major()
        };
        Layout::new(shape, stride).map_err(|e| match e {
            LayoutError::NotCongruent { .. } | LayoutError::BadExtent { .. } => {
                let mut at = self.clone();
                at.pos = start;
                at.error(e.to_string())
            }
            other => other,
        })
    }
}

impl FromStr for IntTuple {
    type Err = LayoutError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut c = Cursor::new(s);
        let t = c.int_tuple()?;
        c.expect_end()?;
        Ok(t)
    }
}

impl FromStr for Layout {
    type Err = LayoutError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut c = Cursor::new(s);
        let l = c.layout()?;
        c.expect_end()?;
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "8:1",
            "(4,2):(1,4)",
            "((2,4),8):((1,2),8)",
            "(8):(1)",
            "(3,4):(0,-1)",
            "():()",
        ] {
            assert_eq!(s.parse::<Layout>().unwrap().to_string(), s);
        }
        assert_eq!(
            "( 4 , 2 ) : _".parse::<Layout>().unwrap().to_string(),
            "(4,2):(1,4)"
        );
    }

    /// CuTe prints static integers as `_8` (`Int<8>`); its output reads back as the same layout,
    /// and a lone `_` stays the default stride.
    #[test]
    fn cute_static_integers_read_back() {
        for (cute, plain) in [
            ("(_8,_4):(_4,_1)", "(8,4):(4,1)"),
            ("((_2,_4),_8):((_1,_2),_8)", "((2,4),8):((1,2),8)"),
            ("(_3,4):(_0,_-1)", "(3,4):(0,-1)"),
            ("_8:_", "8:1"),
            ("(_4,_8):_", "(4,8):(1,4)"),
        ] {
            assert_eq!(cute.parse::<Layout>().unwrap().to_string(), plain, "{cute}");
        }
        for bad in ["(_,4)", "_x:1", "(_ 8):(1)", "(8):(_-)"] {
            assert!(bad.parse::<Layout>().is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_name_the_input() {
        let e = "(4,2):(1,2,3)".parse::<Layout>().unwrap_err().to_string();
        assert!(e.contains("not congruent"), "{e}");
        let e = "(4,2:(1".parse::<Layout>().unwrap_err().to_string();
        assert!(e.contains("column"), "{e}");
        assert!("(0,2)".parse::<Layout>().is_err());
    }
}
