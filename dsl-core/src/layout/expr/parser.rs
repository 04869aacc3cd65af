//! The calculator's parser. It evaluates as it parses: each rule returns the value of what it read,
//! with the column where it started, so errors can point back at an argument.
//!
//! ```text
//! expr    := postfix ('o' postfix)*                 swizzle o [offset o] layout
//! postfix := primary ('(' expr (',' expr)* ')')*    evaluation L(i), L(i,j)
//! primary := int [':' stride]                         int: 8, -1, or CuTe's static _8, _-1
//!          | '(' [expr (',' expr)*] ')' [':' stride] tuple: shape, tiler or grouping
//!          | ('Sw' | 'Swizzle') '<' int ',' int ',' int '>'
//!          | name '(' [expr (',' expr)*] ')'         call
//! stride  := '_' | int_tuple
//! ```

use super::checked;
use super::functions;
use super::Value;
use crate::layout::{ComposedLayout, Cursor, IntTuple, Layout, LayoutError, Swizzle, Tiler};

/// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// A value with where it came from.
#[derive(Clone, Debug)]
pub(super) struct Item {
    pub value: Value,
    /// Byte offset of its first character in the source.
    pub pos: usize,
    /// True for a tuple written as a literal shape, `(4,8)`: it becomes a column-major layout (or a
    /// per-mode tiler where a tiler is wanted) rather than staying a tuple.
    pub bare: bool,
}

pub(super) struct Parser<'a> {
    c: Cursor<'a>,
    src: &'a str,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        Parser {
            c: Cursor::new(src),
            src,
            depth: 0,
        }
    }

    /// A parse error at byte offset `pos`.
    pub fn error_at(&self, pos: usize, message: impl Into<String>) -> LayoutError {
        let mut at = Cursor::new(self.src);
        at.reset(pos);
        at.error(message)
    }

    /// 1-based column of byte offset `pos`.
    pub fn column(&self, pos: usize) -> usize {
        self.src[..pos].chars().count() + 1
    }

    pub fn src(&self) -> &'a str {
        self.src
    }

    /// The whole input as one expression; a top-level literal shape is a column-major layout.
    pub fn parse_all(mut self) -> Result<Value, LayoutError> {
        if self.c.at_end() {
            return Err(self.c.error("empty expression"));
        }
        let item = self.expr()?;
        self.c.expect_end()?;
        match item.value {
            Value::Tuple(t) if item.bare => {
                let l = Layout::col_major(t)
                    .and_then(|l| checked::check_layout(&l).map(|()| l))
                    .map_err(|e| self.error_at(item.pos, e.to_string()))?;
                Ok(Value::Layout(l))
            }
            v => Ok(v),
        }
    }

    fn expr(&mut self) -> Result<Item, LayoutError> {
        self.c.skip_ws();
        if self.depth >= MAX_DEPTH {
            return Err(self
                .c
                .error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let result = self.compose_chain();
        self.depth -= 1;
        result
    }

    fn eat_o(&mut self) -> bool {
        let save = self.c.pos();
        if self.c.ident() == Some("o") {
            true
        } else {
            self.c.reset(save);
            false
        }
    }

    fn compose_chain(&mut self) -> Result<Item, LayoutError> {
        let first = self.postfix()?;
        let mut operands = vec![first];
        while self.eat_o() {
            if operands.len() == 3 {
                return Err(self
                    .c
                    .error("a composed layout has three parts: `Sw<B,M,S> o offset o layout`"));
            }
            operands.push(self.postfix()?);
        }
        if operands.len() == 1 {
            return Ok(operands.remove(0));
        }
        let pos = operands[0].pos;
        let swizzle = match operands[0].value {
            Value::Swizzle(s) => s,
            ref v => {
                return Err(self.error_at(
                    pos,
                    format!(
                        "the left of `o` must be a swizzle `Sw<B,M,S>`, not {}; use composition(A, B) to compose layouts",
                        v.kind()
                    ),
                ))
            }
        };
        let offset = if operands.len() == 3 {
            match operands[1].value {
                Value::Int(o) => o,
                ref v => {
                    return Err(self.error_at(
                        operands[1].pos,
                        format!(
                            "the offset of a composed layout is an integer, not {}",
                            v.kind()
                        ),
                    ))
                }
            }
        } else {
            0
        };
        let last = operands
            .pop()
            .unwrap_or_else(|| unreachable!("two or three operands"));
        let layout = match last.value {
            Value::Layout(l) => l,
            Value::Tuple(t) if last.bare => {
                Layout::col_major(t).map_err(|e| self.error_at(last.pos, e.to_string()))?
            }
            ref v => {
                return Err(self.error_at(
                    last.pos,
                    format!("the right of `o` must be a layout, not {}", v.kind()),
                ))
            }
        };
        let composed = ComposedLayout::new(swizzle, offset, layout);
        checked::check_composed(&composed).map_err(|e| self.error_at(pos, e.to_string()))?;
        Ok(Item {
            value: Value::Composed(composed),
            pos,
            bare: false,
        })
    }

    fn postfix(&mut self) -> Result<Item, LayoutError> {
        let mut item = self.primary()?;
        while self.c.peek() == Some('(') {
            let open = self.c.pos();
            let args = self.args()?;
            let value = functions::apply(self, &item, &args, open)?;
            item = Item {
                value,
                pos: item.pos,
                bare: false,
            };
        }
        Ok(item)
    }

    /// `'(' [expr (',' expr)*] ')'`, the opening parenthesis next.
    fn args(&mut self) -> Result<Vec<Item>, LayoutError> {
        self.c.expect("(")?;
        let mut items = Vec::new();
        if self.c.eat(")") {
            return Ok(items);
        }
        loop {
            items.push(self.expr()?);
            if self.c.eat(")") {
                return Ok(items);
            }
            if !self.c.eat(",") {
                return Err(self.c.error("expected `,` or `)`"));
            }
        }
    }

    fn primary(&mut self) -> Result<Item, LayoutError> {
        let pos = self.c.pos();
        match self.c.peek() {
            Some('(') => {
                let items = self.args()?;
                let item = self.group(pos, items)?;
                self.maybe_stride(item)
            }
            Some(ch)
                if ch.is_ascii_digit() || ch == '-' || ch == '+' || self.c.static_int_next() =>
            {
                let n = self.c.int()?;
                self.maybe_stride(Item {
                    value: Value::Int(n),
                    pos,
                    bare: true,
                })
            }
            Some(ch) if ch.is_ascii_alphabetic() || ch == '_' => {
                let name = self.c.ident().unwrap_or_default();
                if name == "Sw" || name == "Swizzle" {
                    return self.swizzle(pos);
                }
                if self.c.peek() != Some('(') {
                    return Err(match functions::lookup(name) {
                        Some(_) => self.c.error(format!("expected `(` after `{name}`")),
                        None => self.error_at(pos, functions::unknown(name)),
                    });
                }
                let args = self.args()?;
                let value = functions::call(self, name, pos, &args)?;
                Ok(Item {
                    value,
                    pos,
                    bare: false,
                })
            }
            Some(_) => Err(self
                .c
                .error("expected a layout, a swizzle, an integer, a tuple or a function call")),
            None => Err(self.c.error("unexpected end of the expression")),
        }
    }

    /// A parenthesized list: a shape (only integers and shapes), a tiler (some item a layout or
    /// tiler), or a composed layout or swizzle in parentheses (grouping).
    fn group(&self, pos: usize, items: Vec<Item>) -> Result<Item, LayoutError> {
        if items.len() == 1 && matches!(items[0].value, Value::Composed(_) | Value::Swizzle(_)) {
            let mut only = items.into_iter().next().unwrap_or_else(|| unreachable!());
            only.pos = pos;
            return Ok(only);
        }
        let all_ints = items
            .iter()
            .all(|i| matches!(i.value, Value::Int(_) | Value::Tuple(_)));
        if all_ints {
            let t = items
                .iter()
                .map(|i| match &i.value {
                    Value::Int(n) => IntTuple::Int(*n),
                    Value::Tuple(t) => t.clone(),
                    _ => unreachable!("checked above"),
                })
                .collect();
            return Ok(Item {
                value: Value::Tuple(IntTuple::Tuple(t)),
                pos,
                bare: true,
            });
        }
        let modes = items
            .iter()
            .map(|i| self.tiler_mode(i))
            .collect::<Result<_, _>>()?;
        Ok(Item {
            value: Value::Tiler(Tiler::Tuple(modes)),
            pos,
            bare: false,
        })
    }

    /// One item of a tiler tuple.
    pub fn tiler_mode(&self, item: &Item) -> Result<Tiler, LayoutError> {
        match &item.value {
            Value::Layout(l) => Ok(Tiler::Layout(l.clone())),
            Value::Tiler(t) => Ok(t.clone()),
            Value::Int(n) => Layout::vector(*n, 1)
                .map(Tiler::Layout)
                .map_err(|e| self.error_at(item.pos, e.to_string())),
            Value::Tuple(t) => shape_tiler(t).map_err(|e| self.error_at(item.pos, e.to_string())),
            v => Err(self.error_at(
                item.pos,
                format!("a tiler's items are layouts or integers, not {}", v.kind()),
            )),
        }
    }

    /// `:stride` after a shape makes a layout.
    fn maybe_stride(&mut self, item: Item) -> Result<Item, LayoutError> {
        let save = self.c.pos();
        if !self.c.eat(":") {
            return Ok(item);
        }
        let shape = match &item.value {
            Value::Int(n) if item.bare => IntTuple::Int(*n),
            Value::Tuple(t) if item.bare => t.clone(),
            v => return Err(self.error_at(save, format!("`:` follows a shape, not {}", v.kind()))),
        };
        let stride = if self.c.eat_default_stride() {
            shape.compact_col_major()
        } else {
            self.c.int_tuple()?
        };
        let layout =
            Layout::new(shape, stride).map_err(|e| self.error_at(item.pos, e.to_string()))?;
        checked::check_layout(&layout).map_err(|e| self.error_at(item.pos, e.to_string()))?;
        Ok(Item {
            value: Value::Layout(layout),
            pos: item.pos,
            bare: false,
        })
    }

    fn swizzle(&mut self, pos: usize) -> Result<Item, LayoutError> {
        self.c.expect("<")?;
        let b = self.c.int()?;
        self.c.expect(",")?;
        let m = self.c.int()?;
        self.c.expect(",")?;
        let s = self.c.int()?;
        self.c.expect(">")?;
        let sw = Swizzle::new(b, m, s).map_err(|e| self.error_at(pos, e.to_string()))?;
        Ok(Item {
            value: Value::Swizzle(sw),
            pos,
            bare: false,
        })
    }
}

/// A shape used as a tiler: each integer `n` is `n:1`, each nested tuple a nested tiler.
pub(super) fn shape_tiler(t: &IntTuple) -> Result<Tiler, LayoutError> {
    match t {
        IntTuple::Int(n) => Layout::vector(*n, 1).map(Tiler::Layout),
        IntTuple::Tuple(modes) => Ok(Tiler::Tuple(
            modes.iter().map(shape_tiler).collect::<Result<_, _>>()?,
        )),
    }
}
