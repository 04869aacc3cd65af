//! Token trees -> [`LayoutInput`].
//!
//! The parser walks the token trees rustc hands the macro instead of re-lexing their text, so every
//! error points at the token that is wrong. Grammar (CuTe notation, as `dsl_core::layout::Cursor`
//! reads it, plus Rust constants and the swizzle prefix):
//!
//! ```text
//! input   := [swizzle 'o' [value 'o']] layout
//! swizzle := ('Sw' | 'Swizzle') '<' value ',' value ',' value '>'
//! layout  := tuple [':' (tuple | '_')]
//! tuple   := value | '(' [tuple (',' tuple)*] ')'
//! value   := ['-' | '+'] integer | IDENT | '{' expr '}'
//! ```

use dsl_core::layout::{Cursor, LayoutError};
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::ToTokens;

use super::model::{LayoutInput, LayoutSpec, SwizzleSpec, Tuple, Value, ValueKind};

/// The same bound as `dsl_core`'s text parser: deep nesting is legal but no real layout needs it.
const MAX_DEPTH: usize = 64;

/// Parse the macro's whole input. Errors from independent parts (two bad modes of one tuple, say) are
/// all reported, combined into one `syn::Error`.
pub fn parse(input: TokenStream) -> syn::Result<LayoutInput> {
    let mut errors = Errors::default();
    // Past the last token, errors point at that token ("expected a stride after `:`").
    let end = input
        .clone()
        .into_iter()
        .last()
        .map_or_else(Span::call_site, |t| t.span());
    let mut tokens = Tokens::new(input, end);
    let parsed = parse_input(&mut tokens, &mut errors);
    match (parsed, errors.combined()) {
        (Ok(input), None) => Ok(input),
        (Ok(_), Some(e)) => Err(e),
        (Err(e), None) => Err(e),
        (Err(e), Some(mut all)) => {
            all.combine(e);
            Err(all)
        }
    }
}

/// Errors collected while parsing continues past them.
#[derive(Default)]
struct Errors(Vec<syn::Error>);

impl Errors {
    fn push(&mut self, e: syn::Error) {
        self.0.push(e);
    }

    fn combined(self) -> Option<syn::Error> {
        self.0.into_iter().reduce(|mut all, e| {
            all.combine(e);
            all
        })
    }
}

/// A position in a flat list of token trees (one level: a group is a single tree).
struct Tokens {
    trees: Vec<TokenTree>,
    pos: usize,
    /// Where to point "expected ..." errors once the trees run out: the closing delimiter of the
    /// group being read, or the macro call for the top level.
    end: Span,
}

impl Tokens {
    fn new(stream: TokenStream, end: Span) -> Self {
        Tokens {
            trees: stream.into_iter().collect(),
            pos: 0,
            end,
        }
    }

    fn of_group(group: &Group) -> Self {
        Tokens::new(group.stream(), group.span_close())
    }

    fn peek(&self) -> Option<&TokenTree> {
        self.trees.get(self.pos)
    }

    fn peek_at(&self, ahead: usize) -> Option<&TokenTree> {
        self.trees.get(self.pos + ahead)
    }

    fn next(&mut self) -> Option<TokenTree> {
        let t = self.trees.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn at_end(&self) -> bool {
        self.pos >= self.trees.len()
    }

    fn peek_punct(&self, ch: char) -> bool {
        is_punct(self.peek(), ch)
    }

    fn peek_ident(&self, name: &str) -> bool {
        is_ident(self.peek(), name)
    }

    /// The trees from `start` to the current position, for spans and messages.
    fn since(&self, start: usize) -> TokenStream {
        self.trees[start..self.pos].iter().cloned().collect()
    }

    /// The trees not yet consumed.
    fn rest(&self) -> TokenStream {
        self.trees[self.pos.min(self.trees.len())..]
            .iter()
            .cloned()
            .collect()
    }

    /// An error at the next tree, or at the end of this group when none is left.
    fn error_here(&self, message: impl std::fmt::Display) -> syn::Error {
        match self.peek() {
            Some(t) => syn::Error::new_spanned(t, message),
            None => syn::Error::new(self.end, message),
        }
    }

    /// Skip to the next `,` of this group (not consuming it), after an error in a mode.
    fn skip_to_comma(&mut self) {
        while !self.at_end() && !self.peek_punct(',') {
            self.pos += 1;
        }
    }
}

fn is_punct(t: Option<&TokenTree>, ch: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ch)
}

fn is_ident(t: Option<&TokenTree>, name: &str) -> bool {
    matches!(t, Some(TokenTree::Ident(i)) if i == name)
}

/// What a token reads as in a message: its text, or "the end of the input".
fn describe(t: Option<&TokenTree>) -> String {
    match t {
        Some(t) => format!("`{t}`"),
        None => "the end of the input".to_string(),
    }
}

fn parse_input(tokens: &mut Tokens, errors: &mut Errors) -> syn::Result<LayoutInput> {
    if tokens.at_end() {
        return Err(tokens.error_here(
            "expected a layout: write it in CuTe notation, like `layout!((8,32):(32,1))`",
        ));
    }
    // A name followed by `<` opens a swizzle; any other name is a constant of the shape.
    let swizzle = match (tokens.peek(), tokens.peek_at(1)) {
        (Some(TokenTree::Ident(_)), t) if is_punct(t, '<') => Some(parse_swizzle(tokens, errors)?),
        _ => None,
    };
    if swizzle.is_some() && tokens.at_end() {
        return Err(tokens.error_here(
            "expected a layout after `o`: write `Sw<B,M,S> o layout`, like `Sw<3,3,3> o (8,32):(32,1)`",
        ));
    }
    let layout = parse_layout(tokens, errors)?;
    if !tokens.at_end() {
        let rest = tokens.rest();
        let hint = if layout.stride.is_none()
            && matches!(
                tokens.peek(),
                Some(TokenTree::Group(_) | TokenTree::Literal(_))
            ) {
            "separate the shape from the stride with `:`, like `(8,32):(32,1)`"
        } else if tokens.peek_ident("o") {
            "write the swizzle first, as in `Sw<3,3,3> o (8,32):(32,1)`"
        } else {
            "remove it; the layout ends here"
        };
        let first = describe(tokens.peek());
        return Err(syn::Error::new_spanned(
            rest,
            format!("unexpected {first} after the layout `{layout}`: {hint}"),
        ));
    }
    Ok(LayoutInput { swizzle, layout })
}

/// `Sw<B,M,S> o [offset o]`, the name already seen to be followed by `<`.
fn parse_swizzle(tokens: &mut Tokens, errors: &mut Errors) -> syn::Result<SwizzleSpec> {
    let start = tokens.pos;
    let name = tokens.next();
    if let Some(TokenTree::Ident(name)) = &name {
        if name != "Sw" && name != "Swizzle" {
            // Keep parsing: the rest may hold further errors worth reporting together.
            errors.push(syn::Error::new_spanned(
                name,
                format!("unknown swizzle `{name}`: write `Sw<B,M,S>` or `Swizzle<B,M,S>`"),
            ));
        }
    }
    tokens.next(); // `<`, checked by the caller
    let b = parse_swizzle_arg(tokens, "B")?;
    expect_swizzle_comma(tokens)?;
    let m = parse_swizzle_arg(tokens, "M")?;
    expect_swizzle_comma(tokens)?;
    let s = parse_swizzle_arg(tokens, "S")?;
    if !tokens.peek_punct('>') {
        return Err(tokens.error_here(format!(
            "expected `>` after the three swizzle parameters, found {}: write `Sw<B,M,S>`",
            describe(tokens.peek())
        )));
    }
    tokens.next();
    let swizzle_tokens = tokens.since(start);
    if !tokens.peek_ident("o") {
        return Err(tokens.error_here(format!(
            "expected `o` after the swizzle, found {}: write `Sw<B,M,S> o layout`, like \
             `Sw<3,3,3> o (8,32):(32,1)`",
            describe(tokens.peek())
        )));
    }
    tokens.next();
    // `value o` is the offset; anything else is the start of the layout.
    let save = tokens.pos;
    let offset = match parse_value(tokens) {
        Ok(v) if tokens.peek_ident("o") => {
            tokens.next();
            Some(v)
        }
        _ => {
            tokens.pos = save;
            None
        }
    };
    Ok(SwizzleSpec {
        args: [b, m, s],
        offset,
        tokens: swizzle_tokens,
    })
}

fn parse_swizzle_arg(tokens: &mut Tokens, which: &str) -> syn::Result<Value> {
    if tokens.at_end() || tokens.peek_punct('>') || tokens.peek_punct(',') {
        return Err(tokens.error_here(format!(
            "expected the swizzle parameter {which} here, found {}: write `Sw<B,M,S>` with three \
             integers",
            describe(tokens.peek())
        )));
    }
    parse_value(tokens)
}

fn expect_swizzle_comma(tokens: &mut Tokens) -> syn::Result<()> {
    if tokens.peek_punct(',') {
        tokens.next();
        Ok(())
    } else {
        Err(tokens.error_here(format!(
            "expected `,` between swizzle parameters, found {}: write `Sw<B,M,S>` with three \
             integers",
            describe(tokens.peek())
        )))
    }
}

/// `shape`, `shape:stride` or `shape:_`.
fn parse_layout(tokens: &mut Tokens, errors: &mut Errors) -> syn::Result<LayoutSpec> {
    let shape = parse_tuple(tokens, errors, 0)?;
    if !tokens.peek_punct(':') {
        return Ok(LayoutSpec {
            shape,
            stride: None,
        });
    }
    tokens.next();
    if tokens.peek_ident("_") {
        tokens.next();
        return Ok(LayoutSpec {
            shape,
            stride: None,
        });
    }
    if tokens.at_end() {
        return Err(tokens.error_here(
            "expected a stride after `:`: give one stride per mode, like `(8,32):(32,1)`, or `_` \
             for the column-major default",
        ));
    }
    let stride = parse_tuple(tokens, errors, 0)?;
    Ok(LayoutSpec {
        shape,
        stride: Some(stride),
    })
}

/// An `IntTuple`: a value or a parenthesized list of tuples.
fn parse_tuple(tokens: &mut Tokens, errors: &mut Errors, depth: usize) -> syn::Result<Tuple> {
    match tokens.peek() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
            let group = g.clone();
            tokens.next();
            if depth >= MAX_DEPTH {
                return Err(syn::Error::new_spanned(
                    &group,
                    format!("tuples nest deeper than {MAX_DEPTH} levels: flatten this tuple"),
                ));
            }
            let modes = parse_modes(&group, errors, depth + 1);
            Ok(Tuple::Modes(modes, group.into_token_stream()))
        }
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => {
            Err(syn::Error::new_spanned(
                g,
                "tuples use parentheses in CuTe notation: write `(4,8)`, not `[4,8]`",
            ))
        }
        _ => Ok(Tuple::Leaf(parse_value(tokens)?)),
    }
}

/// The comma-separated modes inside a parenthesized group. A bad mode is reported and skipped, so the
/// other modes are still checked.
fn parse_modes(group: &Group, errors: &mut Errors, depth: usize) -> Vec<Tuple> {
    let mut tokens = Tokens::of_group(group);
    let mut modes = Vec::new();
    while !tokens.at_end() {
        match parse_tuple(&mut tokens, errors, depth) {
            Ok(mode) => modes.push(mode),
            Err(e) => {
                errors.push(e);
                tokens.skip_to_comma();
            }
        }
        if tokens.at_end() {
            break;
        }
        if tokens.peek_punct(',') {
            let comma = tokens.next();
            if tokens.at_end() {
                errors.push(syn::Error::new_spanned(
                    comma,
                    "trailing `,` in a tuple: remove it; CuTe writes `(8)` for a one-mode tuple",
                ));
            }
            continue;
        }
        let message = if tokens.peek_punct(':') {
            "expected `,` or `)`, found `:`: a stride follows the whole shape, so close the \
             shape's parenthesis first, like `(8,32):(32,1)`"
                .to_string()
        } else {
            format!(
                "expected `,` or `)` after this mode, found {}: separate modes with `,`",
                describe(tokens.peek())
            )
        };
        errors.push(tokens.error_here(message));
        tokens.skip_to_comma();
    }
    modes
}

/// One integer: a literal (maybe negated), a constant's name, or a braced expression.
fn parse_value(tokens: &mut Tokens) -> syn::Result<Value> {
    let start = tokens.pos;
    let kind = match tokens.next() {
        Some(TokenTree::Literal(lit)) => ValueKind::Lit(parse_int(&lit.to_string(), &lit)?),
        // `dsl_core`'s scanner takes a sign on integers; so does the macro.
        Some(TokenTree::Punct(minus)) if matches!(minus.as_char(), '-' | '+') => {
            match tokens.next() {
                Some(TokenTree::Literal(lit)) => {
                    let sign = minus.as_char();
                    let both: TokenStream =
                        [TokenTree::Punct(minus), TokenTree::Literal(lit.clone())]
                            .into_iter()
                            .collect();
                    ValueKind::Lit(parse_int(&format!("{sign}{lit}"), &both)?)
                }
                Some(t @ (TokenTree::Ident(_) | TokenTree::Group(_))) => {
                    return Err(syn::Error::new_spanned(
                        tokens.since(start),
                        format!(
                            "a sign before a constant is not CuTe notation: put it inside braces, \
                         like `{{{minus}{t}}}`"
                        ),
                    ));
                }
                other => {
                    let message = format!("expected an integer after `{minus}`, like `{minus}1`");
                    return Err(match other {
                        Some(t) => syn::Error::new_spanned(t, message),
                        None => syn::Error::new_spanned(&minus, message),
                    });
                }
            }
        }
        Some(TokenTree::Ident(id)) if id == "_" => {
            return Err(syn::Error::new_spanned(
                id,
                "`_` stands for a whole default stride, not one integer: write `shape:_`, or give \
                 every stride",
            ));
        }
        // CuTe's printed static integers, `_8` (`Int<8>`): every integer of `layout!` is static.
        Some(TokenTree::Ident(id))
            if id
                .to_string()
                .strip_prefix('_')
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            ValueKind::Lit(parse_int(&id.to_string(), &id)?)
        }
        Some(TokenTree::Ident(id)) => ValueKind::Expr(id.into_token_stream()),
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            if g.stream().is_empty() {
                return Err(syn::Error::new_spanned(
                    g,
                    "empty `{}`: write a Rust expression inside, like `{2 * BK}`",
                ));
            }
            ValueKind::Expr(g.stream())
        }
        // What a `macro_rules!` fragment like `$n:expr` arrives as: one literal keeps being a
        // literal, anything else is an expression.
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::None => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            match inner.as_slice() {
                [TokenTree::Literal(lit)] => ValueKind::Lit(parse_int(&lit.to_string(), &g)?),
                _ => ValueKind::Expr(g.stream()),
            }
        }
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => {
            return Err(syn::Error::new_spanned(
                p,
                "expected a mode before this `,`: write an integer between the commas, like `(8,32)`",
            ));
        }
        other => {
            tokens.pos = start;
            let message = format!(
                "expected an integer, a constant's name or `{{expr}}`, found {}",
                describe(other.as_ref())
            );
            return Err(match other {
                Some(t) => syn::Error::new_spanned(t, message),
                None => syn::Error::new(tokens.end, message),
            });
        }
    };
    Ok(Value {
        kind,
        tokens: tokens.since(start),
    })
}

/// An integer literal, read by `dsl_core`'s own scanner so the macro accepts exactly its notation.
fn parse_int(text: &str, at: &dyn ToTokens) -> syn::Result<i64> {
    let mut cursor = Cursor::new(text);
    let parsed = cursor.int().and_then(|v| cursor.expect_end().map(|()| v));
    parsed.map_err(|e| {
        let out_of_range =
            matches!(&e, LayoutError::Parse { message, .. } if message.contains("range"));
        let message = if out_of_range {
            format!(
                "`{text}` does not fit in a 64-bit integer: extents, strides and swizzle \
                 parameters are `i64`"
            )
        } else if text
            .trim_start_matches('-')
            .starts_with(|c: char| c.is_ascii_digit())
        {
            let unsigned = text.trim_start_matches(['-', '+']);
            let sign = &text[..text.len() - unsigned.len()];
            // Rust's own reading of the literal, to suggest the same number in plain digits.
            let value = syn::parse_str::<syn::LitInt>(unsigned)
                .ok()
                .and_then(|lit| lit.base10_parse::<i64>().ok());
            match value {
                Some(v) => format!(
                    "`{text}` is not a plain decimal integer: CuTe notation has no suffixes, \
                     separators or other bases, so write `{sign}{v}`"
                ),
                None => format!(
                    "`{text}` is not a plain decimal integer: CuTe notation has no suffixes, \
                     separators, fractions or other bases, so write digits only, like `32`"
                ),
            }
        } else {
            format!("expected an integer, found `{text}`: shapes and strides hold plain integers, like `8`")
        };
        syn::Error::new_spanned(at.to_token_stream(), message)
    })
}
