//! `layout!`: CuTe layout notation checked at compile time, in three passes.
//!
//! [`parse`] walks the token trees into a typed [`model`], [`check`] proves what can be proven now
//! (congruence, extents, swizzle parameters), and [`expand`] writes the `::dsl_core` constructor calls.

pub(crate) mod check;
pub(crate) mod expand;
pub(crate) mod model;
pub(crate) mod parse;

use proc_macro2::TokenStream;

/// The `layout!` macro: its expansion, or the compile errors that explain what to write instead.
pub fn layout(input: TokenStream) -> TokenStream {
    match parse::parse(input).and_then(check::check) {
        Ok(checked) => expand::expand(&checked),
        Err(e) => compile_errors(e),
    }
}

/// One expression for one or several errors. `compile_error!`s in a row are not an expression; in a
/// block with the last one as its value they are, and that value's type is rustc's error type, so no
/// type mismatch or unreachable-code warning is added to the real errors.
pub(crate) fn compile_errors(e: syn::Error) -> TokenStream {
    let mut errors: Vec<TokenStream> = e.into_iter().map(|e| e.to_compile_error()).collect();
    let last = errors.pop();
    quote::quote!({ #(#errors;)* (#last) })
}

#[cfg(test)]
mod tests {
    use dsl_core::layout::Layout;
    use proptest::prelude::*;

    use super::{check, parse};

    /// What the macro makes of `text`: `None` when it is not even a Rust token stream (unbalanced
    /// parentheses never reach the macro), else the layout or the error messages.
    fn through_macro(text: &str) -> Option<Result<Layout, String>> {
        let tokens = text.parse().ok()?;
        let checked = parse::parse(tokens).and_then(check::check);
        Some(match checked {
            Ok(c) => Ok(c.layout.expect("a literal layout is built at compile time")),
            Err(e) => Err(e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")),
        })
    }

    /// The macro accepts a literal layout exactly when `dsl_core`'s text parser does, and builds the
    /// same layout.
    fn agrees_with_text_parser(text: &str) {
        let Some(from_macro) = through_macro(text) else {
            return;
        };
        match (from_macro, text.parse::<Layout>()) {
            (Ok(m), Ok(p)) => assert_eq!(m, p, "{text}"),
            (Err(_), Err(_)) => {}
            (m, p) => panic!("{text}: macro says {m:?}, text parser says {p:?}"),
        }
    }

    #[test]
    fn accepts_what_the_text_parser_accepts() {
        for text in [
            "8:1",
            "8",
            "+8:+1",
            "-8:1",
            "0:1",
            "(8,32):(32,1)",
            "((2,4),8):((1,2),8)",
            "(4,8):_",
            "( 4 , 2 ) : _",
            "(4,2):(-1,4)",
            "(8):(1)",
            "():()",
            "()",
            "(4,2):(1,2,3)",
            "(4,2):(1)",
            "8:(1)",
            "(8):1",
            "((2,4),8):(1,8)",
            "(0,2)",
            "(4,-1):(1,4)",
            "(4,,8)",
            "(4,8,)",
            "4:1:1",
            "8 1",
            "_",
            "8:_",
            "(4,8)(1,4)",
            "0x8:1",
            "8u8:1",
            "8:1.5",
            "9223372036854775807:1",
            "9223372036854775808:1",
            "-9223372036854775808:1",
            "8:-9223372036854775808",
            "(4,8):",
            "(4,_):(1,4)",
            "[4,8]",
            "(4;8)",
        ] {
            agrees_with_text_parser(text);
        }
    }

    /// CuTe notation for a random tuple: leaves in -1..=9, up to three levels.
    fn tuple_text() -> impl Strategy<Value = String> {
        let leaf = (-1i64..=9).prop_map(|v| v.to_string());
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop::collection::vec(inner, 0..4).prop_map(|modes| format!("({})", modes.join(",")))
        })
    }

    proptest! {
        #[test]
        fn random_layouts_agree_with_text_parser(
            shape in tuple_text(),
            stride in tuple_text(),
            form in 0..3,
        ) {
            let text = match form {
                0 => shape,
                1 => format!("{shape}:_"),
                _ => format!("{shape}:{stride}"),
            };
            agrees_with_text_parser(&text);
        }

        #[test]
        fn congruent_random_layouts_are_accepted(shape in tuple_text(), seed in 0i64..7) {
            // A stride congruent to the shape by construction: only the extents can be refused.
            let stride: String = shape
                .chars()
                .map(|c| if c.is_ascii_digit() { char::from(b'0' + (seed as u8)) } else { c })
                .collect::<String>()
                .replace("-", "");
            let text = format!("{shape}:{stride}");
            agrees_with_text_parser(&text);
            let all_positive = !shape.contains('-') && !shape.split(|c: char| !c.is_ascii_digit()).any(|d| d == "0");
            prop_assert_eq!(through_macro(&text).unwrap().is_ok(), all_positive, "{}", text);
        }
    }
}
