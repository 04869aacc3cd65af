//! Layout arguments (`thr =`, `val =`, `atoms =`, the entries of `tile =`), read by `layout!`'s own
//! parser and checks so that the notation, the constants and the error messages are the same.

use dsl_core::layout::Layout;
use proc_macro2::{Delimiter, TokenStream, TokenTree};

use super::args::Arg;
use crate::layout_macro::{check, expand, parse};

/// A layout argument that passed `layout!`'s checks.
pub struct LayoutArg {
    /// Boxed: the parsed model is large and most arguments are moved around whole.
    checked: Box<check::Checked>,
    /// The tokens of the whole argument (`thr = (32,4):(4,1)`), for errors about it.
    pub tokens: TokenStream,
    /// The argument's place in the list, to order spans over several arguments.
    pub index: usize,
}

impl LayoutArg {
    /// The layout, when every integer is a literal (then it is built now).
    pub fn literal(&self) -> Option<&Layout> {
        self.checked.layout.as_ref()
    }

    /// The expression that builds the layout where the macro expands.
    pub fn expr(&self) -> TokenStream {
        expand::expand(&self.checked)
    }

    /// The layout as written, in CuTe notation.
    pub fn text(&self) -> String {
        self.checked.input.to_string()
    }
}

/// Read `value` as a plain (unswizzled) layout; `what` names it in errors ("the thread layout").
pub fn layout_value(
    value: &TokenStream,
    tokens: &TokenStream,
    index: usize,
    what: &str,
) -> syn::Result<LayoutArg> {
    let checked = parse::parse(value.clone()).and_then(check::check)?;
    if let Some(sw) = &checked.input.swizzle {
        let [b, m, s] = &sw.args;
        return Err(syn::Error::new_spanned(
            &sw.tokens,
            format!(
                "{what} is a plain layout: a swizzle belongs to a shared memory layout, not here; \
                 remove `Sw<{b},{m},{s}> o`"
            ),
        ));
    }
    Ok(LayoutArg {
        checked: Box::new(checked),
        tokens: tokens.clone(),
        index,
    })
}

/// A named argument read as a layout.
pub fn layout_arg(arg: &Arg, what: &str) -> syn::Result<LayoutArg> {
    layout_value(&arg.value, &arg.tokens, arg.index, what)
}

/// One entry of `tile = (..)`: `_` (the atoms' own extent) or a layout (`32` meaning `32:1`).
pub enum TileEntry {
    /// `_`.
    Default,
    /// A tiler layout.
    Layout(LayoutArg),
}

/// `tile = (M, N, K)` with up to three entries.
pub fn tile_arg(arg: &Arg) -> syn::Result<Vec<TileEntry>> {
    let trees: Vec<TokenTree> = arg.value.clone().into_iter().collect();
    let group =
        match trees.as_slice() {
            [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => g.clone(),
            _ => return Err(syn::Error::new_spanned(
                &arg.value,
                "write the tile as a tuple of up to three entries (M, N, K), each an integer or \
                 `_`, like `tile = (32,32,16)`",
            )),
        };
    let mut entries: Vec<TokenStream> = vec![TokenStream::new()];
    for tree in group.stream() {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' => entries.push(TokenStream::new()),
            _ => entries.last_mut().expect("starts with one").extend([tree]),
        }
    }
    if entries.last().is_some_and(|e| e.is_empty()) {
        entries.pop();
    }
    let mut errors: Vec<syn::Error> = Vec::new();
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if i == 3 {
            errors.push(syn::Error::new_spanned(
                entries[3..].iter().cloned().collect::<TokenStream>(),
                "a tiled MMA's tile has at most three entries, for M, N and K: remove the rest",
            ));
            break;
        }
        let mode = ["M", "N", "K"][i];
        let is_default = matches!(
            entry.clone().into_iter().collect::<Vec<_>>().as_slice(),
            [TokenTree::Ident(id)] if id == "_"
        );
        if is_default {
            out.push(TileEntry::Default);
        } else if entry.is_empty() {
            errors.push(syn::Error::new_spanned(
                &group,
                format!("the tile's {mode} entry is empty: write an integer or `_`"),
            ));
        } else {
            match layout_value(entry, entry, arg.index, &format!("the tile's {mode} entry")) {
                Ok(l) => out.push(TileEntry::Layout(l)),
                Err(e) => errors.push(e),
            }
        }
    }
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
