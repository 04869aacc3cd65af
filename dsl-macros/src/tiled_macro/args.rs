//! The argument list of `tiled_copy!` / `tiled_mma!`: positional arguments first (the atom, the value
//! type), then `name = value` pairs in any order.

use std::collections::BTreeMap;

use proc_macro2::{Ident, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// Errors collected while the other arguments are still read, reported together.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    /// Record one error.
    pub fn push(&mut self, e: syn::Error) {
        self.0.push(e);
    }

    /// Record an error whose checking stopped at the first problem.
    pub fn take<T>(&mut self, r: syn::Result<T>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    /// `Ok(value)` when nothing was recorded, else every error combined.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.0.into_iter().reduce(|mut all, e| {
            all.combine(e);
            all
        }) {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}

/// One argument as written.
pub struct Arg {
    /// `Some(name)` for `name = value`.
    pub name: Option<Ident>,
    /// The value: the whole argument for a positional one, what follows `=` for a named one.
    pub value: TokenStream,
    /// The whole argument, for errors about it.
    pub tokens: TokenStream,
    /// Where the argument stands in the list (0-based), to keep errors in the order written.
    pub index: usize,
}

/// The arguments of one macro call, sorted into positional and named ones.
pub struct Args {
    /// The positional arguments, in order.
    pub positional: Vec<Arg>,
    /// The named arguments by name.
    pub named: BTreeMap<String, Arg>,
    /// Whether an unknown name was given: then a missing argument is most likely that one,
    /// misspelled, and its own error says so.
    pub had_unknown: bool,
}

impl Args {
    /// The named argument `name`, if given.
    pub fn get(&self, name: &str) -> Option<&Arg> {
        self.named.get(name)
    }
}

/// Whether `trees` starts `name = ...` (one `=`, not `==` or `=>`).
fn is_named(trees: &[TokenTree]) -> bool {
    matches!(trees, [TokenTree::Ident(_), TokenTree::Punct(eq), ..]
        if eq.as_char() == '=' && eq.spacing() == Spacing::Alone)
}

/// Split `input` at its top-level commas and sort the pieces. `allowed` lists the names this macro
/// takes; an unknown name, a name given twice, or a positional argument after a named one is an
/// error (recorded in `errors`, the argument dropped). `layouts` names the arguments whose values
/// are layouts, where `<` and `>` pair up (`Sw<3,3,3> o ...`) as they do in positional arguments;
/// other values are Rust expressions, where `<` may be a comparison.
pub fn split(
    input: TokenStream,
    macro_name: &str,
    allowed: &[&str],
    layouts: &[&str],
    errors: &mut Errors,
) -> Args {
    let mut pieces: Vec<(Vec<TokenTree>, Option<TokenTree>)> = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut angles = 0usize;
    for tree in input {
        let pairs_angles = !is_named(&current)
            || matches!(&current[0], TokenTree::Ident(name) if layouts.iter().any(|l| name == l));
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' && (angles == 0 || !pairs_angles) => {
                pieces.push((std::mem::take(&mut current), Some(tree)));
                angles = 0;
                continue;
            }
            TokenTree::Punct(p) if p.as_char() == '<' && pairs_angles => angles += 1,
            TokenTree::Punct(p) if p.as_char() == '>' && pairs_angles => {
                angles = angles.saturating_sub(1)
            }
            _ => {}
        }
        current.push(tree);
    }
    if !current.is_empty() {
        pieces.push((current, None));
    }

    let mut args = Args {
        positional: Vec::new(),
        named: BTreeMap::new(),
        had_unknown: false,
    };
    for (index, (trees, comma)) in pieces.into_iter().enumerate() {
        if trees.is_empty() {
            if let Some(comma) = comma {
                errors.push(syn::Error::new_spanned(
                    comma,
                    "expected an argument before this `,`: remove the extra comma",
                ));
            }
            continue;
        }
        let tokens: TokenStream = trees.iter().cloned().collect();
        if !is_named(&trees) {
            if !args.named.is_empty() {
                errors.push(syn::Error::new_spanned(
                    &tokens,
                    format!(
                        "positional argument after a named one: `{macro_name}!` takes the atom{} \
                         first, then `name = value` arguments",
                        if macro_name == "tiled_copy" {
                            " and the value type"
                        } else {
                            ""
                        }
                    ),
                ));
                continue;
            }
            args.positional.push(Arg {
                name: None,
                value: tokens.clone(),
                tokens,
                index,
            });
            continue;
        }
        let TokenTree::Ident(name) = &trees[0] else {
            unreachable!("is_named checked the first tree is an identifier")
        };
        let key = name.to_string();
        if !allowed.contains(&key.as_str()) {
            errors.push(syn::Error::new_spanned(
                name,
                unknown_name_message(&key, macro_name, allowed),
            ));
            args.had_unknown = true;
            continue;
        }
        if args.named.contains_key(&key) {
            errors.push(syn::Error::new_spanned(
                &tokens,
                format!("`{key}` is given twice: keep one `{key} = ...`"),
            ));
            continue;
        }
        let value: TokenStream = trees[2..].iter().cloned().collect();
        if value.is_empty() {
            errors.push(syn::Error::new_spanned(
                &tokens,
                format!("expected a value after `{key} =`"),
            ));
            continue;
        }
        args.named.insert(
            key,
            Arg {
                name: Some(name.clone()),
                value,
                tokens,
                index,
            },
        );
    }
    args
}

fn unknown_name_message(name: &str, macro_name: &str, allowed: &[&str]) -> String {
    let list = allowed
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let nearest = allowed
        .iter()
        .map(|a| (dsl_core::atom::levenshtein(name, a), *a))
        .filter(|(d, _)| *d <= 2)
        .min();
    match nearest {
        Some((_, a)) => {
            format!("unknown argument `{name}`: did you mean `{a}`? `{macro_name}!` takes {list}")
        }
        None => format!("unknown argument `{name}`: `{macro_name}!` takes {list}"),
    }
}

/// The tokens of several arguments (with their places in the list) in the order written, so that one
/// error can span them.
pub fn spanning(parts: &[(usize, &TokenStream)]) -> TokenStream {
    let mut sorted = parts.to_vec();
    sorted.sort_by_key(|(index, _)| *index);
    let mut out = TokenStream::new();
    for (_, tokens) in sorted {
        tokens.to_tokens(&mut out);
    }
    out
}

/// An error for an argument that is missing: it points at the macro call.
pub fn missing(message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(Span::call_site(), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(input: &str, layouts: &[&str]) -> (Vec<String>, Vec<(String, String)>, usize) {
        let mut errors = Errors::default();
        let allowed = ["thr", "val", "mma", "operand"];
        let args = split(
            input.parse().unwrap(),
            "tiled_copy",
            &allowed,
            layouts,
            &mut errors,
        );
        let n_errors = errors.finish(()).err().map_or(0, |e| e.into_iter().count());
        (
            args.positional
                .iter()
                .map(|a| a.value.to_string())
                .collect(),
            args.named
                .iter()
                .map(|(k, a)| (k.clone(), a.value.to_string()))
                .collect(),
            n_errors,
        )
    }

    #[test]
    fn commas_split_arguments_except_inside_angles_of_names_and_layouts() {
        let (pos, named, n_errors) = texts(
            "UniversalCopy<u64>, f16, thr = Sw<3,3,3> o (8,8), mma = f(a < b, c), operand = A,",
            &["thr", "val"],
        );
        assert_eq!(pos, ["UniversalCopy < u64 >", "f16"]);
        assert_eq!(
            named,
            [
                ("mma".to_string(), "f (a < b , c)".to_string()),
                ("operand".to_string(), "A".to_string()),
                ("thr".to_string(), "Sw < 3 , 3 , 3 > o (8 , 8)".to_string()),
            ]
        );
        assert_eq!(n_errors, 0);
        // In an expression argument `<` is a comparison: the comma after it ends the argument.
        let (_, named, _) = texts("X, f16, mma = a < b, operand = A", &["thr", "val"]);
        assert_eq!(named[0], ("mma".to_string(), "a < b".to_string()));
    }

    #[test]
    fn mistakes_are_counted_and_the_rest_kept() {
        // Unknown name, duplicate, empty argument, positional after named, empty value.
        let (pos, named, n_errors) = texts(
            "X, f16, thrs = 1, val = 1, val = 2, , f32, mma =",
            &["thr", "val"],
        );
        assert_eq!(pos, ["X", "f16"]);
        assert_eq!(named, [("val".to_string(), "1".to_string())]);
        assert_eq!(n_errors, 5);
        // `==` and `=>` do not name an argument.
        let (pos, named, _) = texts("a == b, c => d", &[]);
        assert_eq!((pos.len(), named.len()), (2, 0));
    }
}
