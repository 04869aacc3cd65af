//! [`KernelFn`] -> the generating function.
//!
//! ```text
//! #[kernel] fn name(#[host] cfg: C, k: &KernelBuilder, a: GlobalPtr<f32>, n: Var<u32>) { body }
//! ```
//! becomes
//! ```text
//! fn name(cfg: C) -> Result<Kernel, BuildError> {
//!     build_kernel("name", |builder| {
//!         let k: &KernelBuilder = builder;
//!         let a: GlobalPtr<f32> = KernelParam::declare(builder, "a");
//!         let n: Var<u32> = KernelParam::declare(builder, "n");
//!         body   // rewritten
//!     })
//! }
//! ```
//! With `-> Result<(), E>` the body runs in an inner closure returning `Result<(), E>`; the
//! generating function returns `Result<Kernel, E>`, its error the body's or the builder's
//! (through `E: From<BuildError>`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::Ident;

use super::model::KernelFn;

/// The generating function.
pub fn expand(kernel: &KernelFn) -> TokenStream {
    let k = quote!(::dsl_core::kernel);
    let item = &kernel.item;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let sig = &item.sig;
    let (unsafety, ident, generics) = (&sig.unsafety, &sig.ident, &sig.generics);
    let where_clause = &generics.where_clause;
    let inputs = &kernel.host_inputs;
    // `r#type` is named `type` in the PTX, as in Rust.
    let name = ident.unraw().to_string();
    let builder = Ident::new("__rute_builder", Span::mixed_site());

    let bind_builder = kernel
        .builder
        .as_ref()
        .map(|(pat, ty)| quote!(let #pat: #ty = #builder;));
    let params = kernel.device.iter().map(|p| {
        let (attrs, mutability, ident, ty) = (&p.attrs, &p.mutability, &p.ident, &p.ty);
        let name = ident.unraw().to_string();
        // Spanned at the type, so that a type that is no kernel parameter is reported there.
        let span = ty.span();
        let located = super::location::location_tokens(ident.span());
        quote_spanned! {span=>
            #located
            #(#attrs)*
            let #mutability #ident: #ty = ::dsl_core::kernel::macro_support::KernelParam::declare(#builder, #name);
        }
    });
    let body = &kernel.body;
    match &kernel.error_type {
        None => quote! {
            #(#attrs)*
            #vis #unsafety fn #ident #generics (#(#inputs),*)
                -> ::core::result::Result<::dsl_core::ir::Kernel, #k::BuildError>
                #where_clause
            {
                #k::build_kernel(#name, |#builder: &#k::KernelBuilder| {
                    #bind_builder
                    #(#params)*
                    #body
                })
            }
        },
        Some(err) => {
            let outcome = Ident::new("__rute_outcome", Span::mixed_site());
            quote! {
                #(#attrs)*
                #vis #unsafety fn #ident #generics (#(#inputs),*)
                    -> ::core::result::Result<::dsl_core::ir::Kernel, #err>
                    #where_clause
                {
                    let mut #outcome: ::core::result::Result<(), #err> = ::core::result::Result::Ok(());
                    let built = #k::build_kernel(#name, |#builder: &#k::KernelBuilder| {
                        #bind_builder
                        #(#params)*
                        #outcome = (|| -> ::core::result::Result<(), #err> #body)();
                    });
                    #outcome?;
                    ::core::result::Result::Ok(built?)
                }
            }
        }
    }
}
