//! `#[kernel]`: a Rust function turned into a kernel generator, in three passes.
//!
//! [`parse`] splits the signature into host inputs, the builder handle and device parameters;
//! [`check`] refuses signatures that cannot become a kernel; [`rewrite`] turns the body's control
//! flow into calls of `dsl_core::kernel`'s traits (and refuses what cannot be rewritten); [`expand`]
//! writes the generating function and [`signature`] the kernel's typed signature (its
//! `#[len(..)]` attributes read first). Every refusal is a `syn::Error` at the offending tokens; all of
//! them are reported together.

mod check;
mod expand;
mod location;
mod model;
mod parse;
mod rewrite;
mod signature;
#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;

/// The `#[kernel]` attribute: its expansion, or the compile errors saying what to write instead.
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match run(attr, item) {
        Ok(tokens) => tokens,
        Err(e) => e.into_iter().map(|e| e.to_compile_error()).collect(),
    }
}

fn run(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    if let Some(tok) = attr.into_iter().next() {
        errors.push(syn::Error::new_spanned(
            tok,
            "#[kernel] takes no arguments: the kernel's PTX name is the function's name; write `#[kernel]`",
        ));
    }
    let item: syn::ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("#[kernel] applies to a function (`fn name(..) {{ .. }}`): {e}"),
        )
    })?;
    let mut kernel = parse::parse(item, &mut errors);
    check::check(&kernel, &mut errors);
    location::stamp_statements(&mut kernel.body);
    let lengths = signature::take_lengths(&mut kernel, &mut errors);
    rewrite::rewrite_body(&mut kernel, &mut errors);
    match errors.combined() {
        Some(e) => Err(e),
        None => {
            let function = expand::expand(&kernel);
            let signature = signature::expand(&kernel, &lengths);
            Ok(quote::quote!(#function #signature))
        }
    }
}

/// The `#[device]` attribute: the function with its body's control flow rewritten as in a
/// `#[kernel]` body, or the compile errors saying what to write instead.
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    match run_device(attr, item) {
        Ok(tokens) => tokens,
        Err(e) => e.into_iter().map(|e| e.to_compile_error()).collect(),
    }
}

fn run_device(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    if let Some(tok) = attr.into_iter().next() {
        errors.spanned(
            tok,
            "#[device] takes no arguments: write `#[device]` above the helper function",
        );
    }
    let mut item: syn::ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("#[device] applies to a function (`fn name(..) {{ .. }}`): {e}"),
        )
    })?;
    if let Some(t) = &item.sig.asyncness {
        errors.spanned(t, "a #[device] function cannot be `async`: it runs on the host while the kernel is generated; remove `async`");
    }
    let (unit, error_type) = match &item.sig.output {
        syn::ReturnType::Default => (true, None),
        syn::ReturnType::Type(_, ty) => (
            matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty()),
            parse::result_error_type_of_any(ty),
        ),
    };
    location::stamp_device_body(&mut item.block);
    rewrite::rewrite_block(&mut item.block, error_type, unit, &mut errors);
    match errors.combined() {
        Some(e) => Err(e),
        None => Ok(quote::quote!(#item)),
    }
}

/// Errors collected while the passes continue past them.
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        self.0.push(e);
    }

    pub(crate) fn spanned(
        &mut self,
        tokens: impl quote::ToTokens,
        message: impl std::fmt::Display,
    ) {
        self.0.push(syn::Error::new_spanned(tokens, message));
    }

    fn combined(self) -> Option<syn::Error> {
        self.0.into_iter().reduce(|mut all, e| {
            all.combine(e);
            all
        })
    }
}
