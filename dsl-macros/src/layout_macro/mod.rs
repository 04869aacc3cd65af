//! `layout!`: CuTe layout notation checked at compile time, in three passes.
//!
//! [`parse`] walks the token trees into a typed [`model`], [`check`] proves what can be proven now
//! (congruence, extents, swizzle parameters), and [`expand`] writes the `::dsl_core` constructor calls.

mod check;
mod expand;
mod model;
mod parse;

use proc_macro2::TokenStream;

/// The `layout!` macro: its expansion, or the compile errors that explain what to write instead.
pub fn layout(input: TokenStream) -> TokenStream {
    match parse::parse(input).and_then(check::check) {
        Ok(checked) => expand::expand(&checked),
        Err(e) => e.to_compile_error(),
    }
}
