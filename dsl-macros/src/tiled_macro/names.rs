//! Atom and value-type names, checked against `dsl_core`'s registry at compile time.

use dsl_core::atom::{atom_names, levenshtein, lookup_atom, NamedAtom, ValType};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote};

/// Which macro reads the atom: each takes one kind.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tiled_copy!`.
    Copy,
    /// `tiled_mma!`.
    Mma,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Copy => "copy atom",
            Kind::Mma => "MMA atom",
        }
    }

    fn of(op: &NamedAtom) -> Kind {
        match op {
            NamedAtom::Copy(_) => Kind::Copy,
            NamedAtom::Mma(_) => Kind::Mma,
        }
    }
}

/// The trees of `tokens` with invisible groups opened: a `macro_rules!` fragment (`$atom:ty`)
/// arrives wrapped in one.
fn flat(tokens: &TokenStream) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for tree in tokens.clone() {
        match tree {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                out.extend(flat(&g.stream()))
            }
            other => out.push(other),
        }
    }
    out
}

/// An atom name as written (`SM80_CP_ASYNC_CACHEGLOBAL<u128>`), without spaces.
pub fn atom_text(tokens: &TokenStream) -> syn::Result<String> {
    let mut text = String::new();
    for (i, tree) in flat(tokens).into_iter().enumerate() {
        match &tree {
            TokenTree::Ident(id) => text.push_str(&id.to_string()),
            TokenTree::Punct(p) if i > 0 && matches!(p.as_char(), '<' | '>' | ':') => {
                text.push(p.as_char())
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    tokens,
                    "expected an atom's name first, as CuTe spells it, like `SM75_U32x4_LDSM_N` \
                     or `SM80_CP_ASYNC_CACHEGLOBAL<u128>`",
                ))
            }
        }
    }
    Ok(text)
}

/// A registry name in the spelling the user chose: `<u128>` unless they wrote `<uint128_t>`.
fn shown(name: &str, written: &str) -> String {
    if written.contains("uint") {
        return name.to_string();
    }
    let mut s = name.to_string();
    for bits in [128, 64, 32, 16, 8] {
        s = s.replace(&format!("<uint{bits}_t>"), &format!("<u{bits}>"));
    }
    s
}

fn quoted_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!(
            "{} or `{last}`",
            init.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Resolve the atom named by `tokens` for the macro of `kind`.
pub fn resolve_atom(tokens: &TokenStream, kind: Kind) -> syn::Result<NamedAtom> {
    let text = atom_text(tokens)?;
    let err = |message: String| Err(syn::Error::new_spanned(tokens, message));
    match lookup_atom(&text) {
        Ok(op) if Kind::of(&op) == kind => Ok(op),
        Ok(NamedAtom::Mma(op)) => err(format!(
            "`{text}` is an MMA atom, not a copy atom: build a tiled MMA with \
             `tiled_mma!({}, atoms = (2,2,1))`; `tiled_copy!` takes a copy atom such as \
             `SM75_U32x4_LDSM_N`",
            op.name()
        )),
        Ok(NamedAtom::Copy(_)) => err(format!(
            "`{text}` is a copy atom, not an MMA atom: build a tiled copy with \
             `tiled_copy!({text}, f16, thr = ..., val = ...)`; `tiled_mma!` takes an MMA atom \
             such as `SM80_16x8x16_F16F16F16F16_TN`"
        )),
        Err(unknown) => {
            let noun = kind.noun();
            // The registry's suggestions of this macro's kind, only the nearest ones.
            let lower = text.to_ascii_lowercase();
            let scored: Vec<(usize, String)> = unknown
                .suggestions
                .iter()
                .filter(|s| matches!(lookup_atom(s), Ok(op) if Kind::of(&op) == kind))
                .map(|s| shown(s, &text))
                .map(|s| (levenshtein(&lower, &s.to_ascii_lowercase()), s))
                .collect();
            let best = scored.iter().map(|(d, _)| *d).min();
            let same_kind: Vec<String> = scored
                .into_iter()
                .filter(|(d, _)| Some(*d) == best)
                .map(|(_, s)| s)
                .collect();
            // A known operation at a width CuTe does not define.
            let base = text.split('<').next().unwrap_or(&text);
            let base = base.strip_prefix("cute::").unwrap_or(base);
            let widths: Vec<String> = atom_names()
                .iter()
                .filter(|n| n.split('<').next() == Some(base) && n.contains('<'))
                .map(|n| shown(n, &text))
                .collect();
            if !widths.is_empty() {
                let hint = if text.contains('<') {
                    format!("CuTe defines `{base}` only as")
                } else {
                    format!("`{base}` needs the width of one access:")
                };
                return err(format!(
                    "unknown {noun} `{text}`: {hint} {}",
                    quoted_list(&widths)
                ));
            }
            if !same_kind.is_empty() {
                return err(format!(
                    "unknown {noun} `{text}`: did you mean {}?",
                    quoted_list(&same_kind)
                ));
            }
            let known: Vec<String> = atom_names()
                .iter()
                .filter(|n| matches!(lookup_atom(n), Ok(op) if Kind::of(&op) == kind))
                .map(|n| shown(n, &text))
                .collect();
            err(format!(
                "unknown {noun} `{text}`: rute knows {}",
                quoted_list(&known)
            ))
        }
    }
}

/// Resolve a value type (`f16`, `bf16`, `f32`, `u8` ... `u128`, or CuTe's `half_t` ...).
pub fn resolve_type(tokens: &TokenStream) -> syn::Result<ValType> {
    let names: Vec<String> = ValType::ALL
        .iter()
        .map(|t| t.short_name().to_string())
        .collect();
    let trees = flat(tokens);
    let written = match trees.as_slice() {
        [TokenTree::Ident(id)] => id.to_string(),
        _ => {
            return Err(syn::Error::new_spanned(
                tokens,
                format!(
                    "expected the value type here, one of {}",
                    quoted_list(&names)
                ),
            ))
        }
    };
    if let Some(t) = ValType::from_name(&written) {
        return Ok(t);
    }
    // Suggest a name only when one is clearly nearest: same first letter (a float stays a float),
    // swapped letters counting as one edit.
    let lower = written.to_ascii_lowercase();
    let sorted = |s: &str| {
        let mut c: Vec<char> = s.chars().collect();
        c.sort_unstable();
        c
    };
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter(|n| n.chars().next() == lower.chars().next())
        .map(|n| {
            let d = levenshtein(&lower, n);
            (
                if sorted(&lower) == sorted(n) {
                    d.min(1)
                } else {
                    d
                },
                n,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    scored.sort();
    let hint = match scored.as_slice() {
        [(d, n), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => {
            format!("did you mean `{n}`? ")
        }
        _ => String::new(),
    };
    Err(syn::Error::new_spanned(
        tokens,
        format!(
            "unknown value type `{written}`: {hint}the value type is one of {}",
            quoted_list(&names)
        ),
    ))
}

/// `::dsl_core::atom::ValType::..` for `t`.
pub fn val_type_tokens(t: ValType) -> TokenStream {
    let v = match t {
        ValType::F16 => "F16",
        ValType::BF16 => "BF16",
        ValType::F32 => "F32",
        ValType::U8 => "U8",
        ValType::U16 => "U16",
        ValType::U32 => "U32",
        ValType::U64 => "U64",
        ValType::U128 => "U128",
    };
    let v = format_ident!("{v}");
    quote!(::dsl_core::atom::ValType::#v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str, kind: Kind) -> Result<String, String> {
        resolve_atom(&text.parse().unwrap(), kind)
            .map(|a| a.name())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_registry_name_resolves_in_both_spellings() {
        for name in atom_names() {
            let op = lookup_atom(&name).unwrap();
            assert_eq!(resolve(&name, Kind::of(&op)), Ok(name.clone()), "{name}");
            assert_eq!(
                resolve(&shown(&name, ""), Kind::of(&op)),
                Ok(name.clone()),
                "{name}"
            );
        }
    }

    #[test]
    fn misspellings_suggest_the_nearest_name_of_the_macros_kind() {
        assert_eq!(
            resolve("SM80_CP_ASYNC_CACHEGLOBL<u128>", Kind::Copy).unwrap_err(),
            "unknown copy atom `SM80_CP_ASYNC_CACHEGLOBL<u128>`: did you mean \
             `SM80_CP_ASYNC_CACHEGLOBAL<u128>`?"
        );
        let e = resolve("SM80_16x8x16_F16F16F16F16_NT", Kind::Mma).unwrap_err();
        assert!(
            e.contains("did you mean `SM80_16x8x16_F16F16F16F16_TN`"),
            "{e}"
        );
        let e = resolve("SM80_CP_ASYNC_CACHEGLOBAL<u64>", Kind::Copy).unwrap_err();
        assert!(
            e.ends_with("CuTe defines `SM80_CP_ASYNC_CACHEGLOBAL` only as `SM80_CP_ASYNC_CACHEGLOBAL<u128>`"),
            "{e}"
        );
        let e = resolve("SM80_CP_ASYNC_CACHEALWAYS", Kind::Copy).unwrap_err();
        assert!(e.contains("`SM80_CP_ASYNC_CACHEALWAYS<u32>`, "), "{e}");
        let e = resolve("wgmma", Kind::Mma).unwrap_err();
        assert!(
            e.contains("rute knows `SM80_16x8x16_F16F16F16F16_TN`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_kind_names_the_other_macro() {
        let e = resolve("SM80_16x8x16_F16F16F16F16_TN", Kind::Copy).unwrap_err();
        assert!(e.contains("tiled_mma!(SM80_16x8x16_F16F16F16F16_TN"), "{e}");
        let e = resolve("SM75_U32x4_LDSM_N", Kind::Mma).unwrap_err();
        assert!(e.contains("tiled_copy!(SM75_U32x4_LDSM_N"), "{e}");
    }

    #[test]
    fn value_types() {
        for t in ValType::ALL {
            let tokens: TokenStream = t.short_name().parse().unwrap();
            assert_eq!(resolve_type(&tokens).unwrap(), t);
        }
        let e = resolve_type(&"f61".parse().unwrap()).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("unknown value type `f61`: did you mean `f16`?"));
        let e = resolve_type(&"f64".parse().unwrap()).unwrap_err();
        assert!(!e.to_string().contains("did you mean"), "{e}");
        let e = resolve_type(&"bf61".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("did you mean `bf16`?"), "{e}");
    }
}
