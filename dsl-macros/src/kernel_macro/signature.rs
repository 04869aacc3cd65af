//! The kernel's typed signature: the type `#[kernel]` generates beside the function (its name in
//! CamelCase with `Kernel` appended), implementing `dsl_core::kernel::signature::KernelSignature`,
//! with `build` (the kernel, tagged with its signature) and `launch` (one typed argument per
//! kernel parameter, through a `Launcher`). See `dsl_core::kernel::signature`.
//!
//! ```text
//! #[kernel] fn vector_add<const V: usize>(k: &KernelBuilder, #[len(n)] a: ConstPtr<f32>, n: Var<u32>)
//! ```
//! also gives
//! ```text
//! struct VectorAddKernel<const V: usize> { .. }
//! impl<const V: usize> KernelSignature for VectorAddKernel<V> { const NAME = "vector_add"; }
//! impl<const V: usize> VectorAddKernel<V> {
//!     fn build() -> Result<TypedKernel<Self>, BuildError> { .. vector_add::<V>() .. }
//!     fn launch<'a, L, A0, A1>(to: L, a: A0, n: A1) -> L::Output
//!     where L: Launcher<'a, Kernel = Self> + LaunchArg<'a, ConstPtr<f32>, A0> + LaunchArg<'a, Var<u32>, A1>
//!     { .. checks `a`'s length against `n` .. }
//! }
//! ```
//!
//! A function with a `self` receiver (a kernel inside an `impl`) gets no signature type: items
//! cannot be declared in an `impl` block.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, GenericParam, Ident, Type};

use super::model::KernelFn;
use super::Errors;

/// The `#[len(..)]` of each kernel parameter, in order, taken out of its attributes; a `#[len]`
/// that is not a length of a buffer parameter is an error.
pub fn take_lengths(kernel: &mut KernelFn, errors: &mut Errors) -> Vec<Option<Expr>> {
    for input in &kernel.host_inputs {
        if let FnArg::Typed(t) = input {
            for a in t.attrs.iter().filter(|a| a.path().is_ident("len")) {
                errors.spanned(
                    a,
                    "`#[len(..)]` gives a buffer parameter's length; a `#[host]` input has none",
                );
            }
        }
    }
    let others: Vec<Ident> = kernel
        .device
        .iter()
        .filter(|p| last_segment(&p.ty).as_deref() != Some("Var"))
        .map(|p| p.ident.clone())
        .collect();
    let mut lengths = Vec::with_capacity(kernel.device.len());
    for p in &mut kernel.device {
        let mut found: Option<Expr> = None;
        let mut kept = Vec::with_capacity(p.attrs.len());
        for a in std::mem::take(&mut p.attrs) {
            if !a.path().is_ident("len") {
                kept.push(a);
                continue;
            }
            if found.is_some() {
                errors.spanned(&a, "a parameter has one `#[len(..)]`");
                continue;
            }
            let buffer = matches!(
                last_segment(&p.ty).as_deref(),
                Some("GlobalPtr" | "ConstPtr")
            );
            if !buffer {
                errors.spanned(
                    &a,
                    format!(
                        "`#[len(..)]` gives a buffer's length in elements; `{}` is not a buffer \
                         parameter (`GlobalPtr<T>` or `ConstPtr<T>`)",
                        p.ident
                    ),
                );
                continue;
            }
            match a.parse_args::<Expr>() {
                Ok(e) => {
                    check_length(&e, &others, errors);
                    found = Some(e);
                }
                Err(e) => errors.push(syn::Error::new(
                    e.span(),
                    format!(
                        "`#[len(..)]` takes an expression, e.g. `#[len(n)]` or `#[len(rows * cols)]`: {e}"
                    ),
                )),
            }
        }
        p.attrs = kept;
        lengths.push(found);
    }
    lengths
}

/// Refuses what a length expression may not hold: anything but integer literals, names (the
/// kernel's scalar parameters, or integer constants in scope), `+ - * /` and parentheses; a name of
/// one of the kernel's other parameters (`others`: buffers, tensor maps) is refused too.
fn check_length(e: &Expr, others: &[Ident], errors: &mut Errors) {
    match e {
        Expr::Paren(p) => check_length(&p.expr, others, errors),
        Expr::Group(g) => check_length(&g.expr, others, errors),
        Expr::Binary(b)
            if matches!(
                b.op,
                syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
            ) =>
        {
            check_length(&b.left, others, errors);
            check_length(&b.right, others, errors);
        }
        Expr::Lit(l) if matches!(&l.lit, syn::Lit::Int(i) if i.base10_parse::<u128>().is_ok()) => {}
        Expr::Path(p) if p.qself.is_none() => {
            let name = p.path.get_ident().map(|i| i.unraw());
            if others.iter().any(|s| Some(s.unraw()) == name) {
                errors.spanned(
                    p,
                    format!(
                        "`{}` is not a scalar parameter of this kernel: a length is computed from the \
                         launch's `Var<T>` arguments and integer constants",
                        p.to_token_stream()
                    ),
                );
            }
        }
        other => errors.spanned(
            other,
            "a `#[len(..)]` is an expression of integer literals, integer constants and the \
             kernel's scalar parameters (`Var<T>`) with `+ - * /` and parentheses",
        ),
    }
}

/// The last path segment's name of `ty`, if it is a path.
fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Paren(p) => last_segment(&p.elem),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

/// `vector_add` -> `VectorAddKernel`.
pub fn signature_name(function: &Ident) -> Ident {
    let name: String = function
        .unraw()
        .to_string()
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    Ident::new(&format!("{name}Kernel"), function.span())
}

/// The signature type and its impls, or nothing for a function with a receiver.
pub fn expand(kernel: &KernelFn, lengths: &[Option<Expr>]) -> TokenStream {
    if kernel
        .host_inputs
        .iter()
        .any(|i| matches!(i, FnArg::Receiver(_)))
    {
        return TokenStream::new();
    }
    let d = quote!(::dsl_core::kernel::signature);
    let item = &kernel.item;
    let sig = &item.sig;
    let vis = &item.vis;
    let function = &sig.ident;
    let ptx_name = function.unraw().to_string();
    let name = signature_name(function);
    let cfgs: Vec<_> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let generics = &sig.generics;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    // The struct holds nothing: phantom uses of its type and lifetime parameters.
    let phantoms = generics.params.iter().filter_map(|p| match p {
        GenericParam::Type(t) => {
            let t = &t.ident;
            Some(quote!(fn() -> #t))
        }
        GenericParam::Lifetime(l) => {
            let l = &l.lifetime;
            Some(quote!(&#l ()))
        }
        GenericParam::Const(_) => None,
    });
    let turbofish_args: Vec<_> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.to_token_stream()),
            GenericParam::Const(c) => Some(c.ident.to_token_stream()),
            GenericParam::Lifetime(_) => None,
        })
        .collect();
    let turbofish = (!turbofish_args.is_empty()).then(|| quote!(::<#(#turbofish_args),*>));

    // build(host inputs) -> Result<TypedKernel<Self>, E>
    let host: Vec<(Ident, &Type)> = kernel
        .host_inputs
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            FnArg::Typed(t) => Some((hidden(&format!("__rute_host{i}")), &*t.ty)),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let host_params = host.iter().map(|(n, t)| quote!(#n: #t));
    let host_args = host.iter().map(|(n, _)| n);
    let error = match &kernel.error_type {
        Some(e) => e.to_token_stream(),
        None => quote!(::dsl_core::kernel::BuildError),
    };
    let (build_unsafety, call) = match &sig.unsafety {
        Some(u) => (
            Some(u),
            quote!(unsafe { #function #turbofish (#(#host_args),*) }),
        ),
        None => (None, quote!(#function #turbofish (#(#host_args),*))),
    };

    // launch(to, params..) -> L::Output
    let lt = syn::Lifetime::new("'__rute_a", Span::mixed_site());
    let launcher = hidden("__RuteLauncher");
    let to = hidden("__rute_to");
    let (extents_var, args_var) = (hidden("__rute_extents"), hidden("__rute_args"));
    let arg_types: Vec<Ident> = (0..kernel.device.len())
        .map(|i| hidden(&format!("__RuteArg{i}")))
        .collect();
    let params: Vec<&Ident> = kernel.device.iter().map(|p| &p.ident).collect();
    let bounds = kernel.device.iter().zip(&arg_types).map(|(p, a)| {
        let ty = &p.ty;
        quote_spanned!(ty.span()=> #d::LaunchArg<#lt, #ty, #a>)
    });
    let lowered = kernel.device.iter().zip(&arg_types).map(|(p, a)| {
        let (ty, ident) = (&p.ty, &p.ident);
        quote!(<#launcher as #d::LaunchArg<#lt, #ty, #a>>::lower(&#to, #ident))
    });
    let param_of = |ident: &Ident| {
        kernel
            .device
            .iter()
            .zip(&arg_types)
            .find(|(p, _)| p.ident.unraw() == ident.unraw())
            .map(|(p, a)| (&p.ty, a))
    };
    let extents = kernel
        .device
        .iter()
        .zip(&arg_types)
        .zip(lengths)
        .filter_map(|((p, a), len)| {
            let len = len.as_ref()?;
            let (ty, ident) = (&p.ty, &p.ident);
            let need = extent_expr(len, &|i| {
                let (sty, sa) = param_of(i)?;
                Some(quote!(<#launcher as #d::LaunchArg<#lt, #sty, #sa>>::value(&#i)))
            });
            let (param, text) = (ident.unraw().to_string(), length_text(len));
            Some(quote! {
                #d::ExtentCheck {
                    param: #param,
                    len: #text,
                    need: #need,
                    have: <#launcher as #d::LaunchArg<#lt, #ty, #a>>::elems(&#ident),
                }
            })
        });
    let param_list = kernel
        .device
        .iter()
        .map(|p| format!("`{}: {}`", p.ident.unraw(), type_text(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ");
    let struct_doc = format!(
        "The typed signature of the kernel [`{ptx_name}`](fn@{function}): `{name}::build(..)` \
         generates it as a `TypedKernel`, `{name}::launch(to, ..)` launches it with one argument \
         per kernel parameter ({param_list}). Generated by `#[kernel]`; see \
         `dsl_core::kernel::signature`."
    );
    let build_doc = format!(
        "The kernel [`{ptx_name}`](fn@{function}) generated with these inputs, tagged with its \
         signature."
    );
    let launch_doc = format!(
        "Launches the kernel through `to` (e.g. `TypedFunction::with` of codegen-ptx's JIT) with \
         one argument per parameter: {param_list}. Buffers with a `#[len(..)]` are checked against \
         it before the launch."
    );
    quote! {
        #(#cfgs)*
        #[doc = #struct_doc]
        #vis struct #name #impl_generics #where_clause {
            _signature: ::core::marker::PhantomData<(#(#phantoms,)*)>,
        }

        #(#cfgs)*
        impl #impl_generics #d::KernelSignature for #name #ty_generics #where_clause {
            const NAME: &'static str = #ptx_name;
        }

        #(#cfgs)*
        impl #impl_generics #name #ty_generics #where_clause {
            #[doc = #build_doc]
            // The one `unsafe` of the expansion: a crate that denies unsafe code still builds it.
            #[allow(unsafe_code)]
            #vis #build_unsafety fn build(#(#host_params),*)
                -> ::core::result::Result<#d::TypedKernel<Self>, #error>
            {
                let kernel = #call?;
                // SAFETY: the kernel was generated by the function this signature describes.
                ::core::result::Result::Ok(unsafe { #d::TypedKernel::new_unchecked(kernel) })
            }

            #[doc = #launch_doc]
            #[allow(clippy::too_many_arguments)]
            #vis fn launch<#lt, #launcher, #(#arg_types),*>(#to: #launcher, #(#params: #arg_types),*)
                -> <#launcher as #d::Launcher<#lt>>::Output
            where
                #launcher: #d::Launcher<#lt, Kernel = Self> #(+ #bounds)*
            {
                let #extents_var = [#(#extents),*];
                let #args_var = ::std::vec![#(#lowered),*];
                #d::Launcher::run(#to, #args_var, &#extents_var)
            }
        }
    }
}

/// The length expression with each scalar `x` replaced by its value as an `Extent`.
fn extent_expr(e: &Expr, value_of: &dyn Fn(&Ident) -> Option<TokenStream>) -> TokenStream {
    let d = quote!(::dsl_core::kernel::signature);
    match e {
        Expr::Paren(p) => {
            let inner = extent_expr(&p.expr, value_of);
            quote!((#inner))
        }
        Expr::Group(g) => extent_expr(&g.expr, value_of),
        Expr::Binary(b) => {
            let (l, r, op) = (
                extent_expr(&b.left, value_of),
                extent_expr(&b.right, value_of),
                &b.op,
            );
            quote!((#l #op #r))
        }
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => {
            let v = i.base10_parse::<u128>().unwrap_or(0);
            quote!(#d::Extent::lit(#v))
        }
        Expr::Path(p) => match p.path.get_ident().and_then(value_of) {
            Some(v) => quote!(#d::Extent::of(#v)),
            // A constant: its value, if it is a non-negative integer.
            None => quote!(#d::Extent::of(::core::convert::TryFrom::try_from(#p).ok())),
        },
        _ => quote!(#d::Extent::of(::core::option::Option::None)),
    }
}

/// The expression as the user wrote it, for messages: `rows * cols`.
fn length_text(e: &Expr) -> String {
    e.to_token_stream().to_string()
}

fn type_text(ty: &Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
}

/// An identifier of the expansion, invisible to the user's code.
fn hidden(name: &str) -> Ident {
    format_ident!("{}", name, span = Span::mixed_site())
}
