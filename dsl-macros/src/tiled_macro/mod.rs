//! `tiled_copy!` and `tiled_mma!`: CuTe's `make_tiled_copy`, `make_tiled_copy_A/B/C` and
//! `make_tiled_mma` written in CuTe notation and checked at compile time.
//!
//! [`args`] splits the call into the atom, the value type and `name = value` arguments; [`names`]
//! checks the atom and type names against `dsl_core`'s registry; [`layout_arg`] reads the layouts
//! with `layout!`'s parser. [`copy`] and [`mma`] then build the tiled object at compile time when
//! every layout is a literal (so a refusal is a compile error at the argument to blame) and expand
//! to the same `dsl_core` calls.

mod args;
mod copy;
mod layout_arg;
mod mma;
mod names;

use proc_macro2::TokenStream;

use crate::layout_macro::compile_errors;

/// The `tiled_copy!` macro: its expansion, or the compile errors that explain what to write instead.
pub fn tiled_copy(input: TokenStream) -> TokenStream {
    match copy::check(input) {
        Ok(call) => copy::expand(&call),
        Err(e) => compile_errors(e),
    }
}

/// The `tiled_mma!` macro: its expansion, or the compile errors that explain what to write instead.
pub fn tiled_mma(input: TokenStream) -> TokenStream {
    match mma::check(input) {
        Ok(call) => mma::expand(&call),
        Err(e) => compile_errors(e),
    }
}
