//! [`Checked`] -> the Rust expression that builds the layout with `::dsl_core` constructors.
//!
//! A part known at compile time is written out as `IntTuple` literals and built through a path that
//! cannot fail (the checks already ran). A part holding constants is built at run time through the
//! checked constructors, and a refusal panics with a message naming the layout as written.

use dsl_core::layout::{IntTuple, Layout, Swizzle};
use proc_macro2::TokenStream;
use quote::quote;

use super::check::Checked;
use super::model::{Tuple, Value, ValueKind};

/// The expression for a checked input: a `Layout`, or a `ComposedLayout` when a swizzle is given.
pub fn expand(checked: &Checked) -> TokenStream {
    let text = checked.input.to_string();
    let spec = &checked.input.layout;
    let layout = match &checked.layout {
        Some(known) => known_layout(known),
        None => {
            let shape = runtime_tuple(&spec.shape, &text);
            let built = match &spec.stride {
                Some(stride) => {
                    let stride = runtime_tuple(stride, &text);
                    quote!(::dsl_core::layout::Layout::new(#shape, #stride))
                }
                None => quote!(::dsl_core::layout::Layout::col_major(#shape)),
            };
            quote! {
                match #built {
                    ::core::result::Result::Ok(layout) => layout,
                    ::core::result::Result::Err(e) => ::core::panic!("layout!({}): {}", #text, e),
                }
            }
        }
    };
    let Some(sw) = &checked.input.swizzle else {
        return layout;
    };
    let swizzle = match &checked.swizzle {
        Some(known) => known_swizzle(known),
        None => {
            let [b, m, s] = sw.args.each_ref().map(|v| runtime_int(v, &text));
            quote! {
                match ::dsl_core::layout::Swizzle::new(#b, #m, #s) {
                    ::core::result::Result::Ok(swizzle) => swizzle,
                    ::core::result::Result::Err(e) => ::core::panic!("layout!({}): {}", #text, e),
                }
            }
        }
    };
    let offset = match &sw.offset {
        Some(v) => runtime_int(v, &text),
        None => quote!(0i64),
    };
    quote! {
        ::dsl_core::layout::ComposedLayout {
            swizzle: #swizzle,
            offset: #offset,
            layout: #layout,
        }
    }
}

/// A layout the checks built: its shape and stride as literals. `Layout::new` returns a `Result`
/// although these arguments passed the very same checks at compile time.
fn known_layout(layout: &Layout) -> TokenStream {
    let shape = known_tuple(layout.shape());
    let stride = known_tuple(layout.stride());
    let message = format!("layout!({layout}) was checked at compile time");
    quote! {
        match ::dsl_core::layout::Layout::new(#shape, #stride) {
            ::core::result::Result::Ok(layout) => layout,
            ::core::result::Result::Err(_) => ::core::unreachable!(#message),
        }
    }
}

fn known_swizzle(swizzle: &Swizzle) -> TokenStream {
    let b = i64::from(swizzle.bits());
    let m = i64::from(swizzle.base());
    let s = i64::from(swizzle.shift());
    let message = format!("layout!: {swizzle} was checked at compile time");
    quote! {
        match ::dsl_core::layout::Swizzle::new(#b, #m, #s) {
            ::core::result::Result::Ok(swizzle) => swizzle,
            ::core::result::Result::Err(_) => ::core::unreachable!(#message),
        }
    }
}

fn known_tuple(tuple: &IntTuple) -> TokenStream {
    match tuple {
        IntTuple::Int(v) => quote!(::dsl_core::layout::IntTuple::Int(#v)),
        IntTuple::Tuple(modes) => {
            let modes = modes.iter().map(known_tuple);
            quote!(::dsl_core::layout::IntTuple::Tuple(
                ::std::vec![#(#modes),*]
            ))
        }
    }
}

fn runtime_tuple(tuple: &Tuple, text: &str) -> TokenStream {
    match tuple {
        Tuple::Leaf(v) => {
            let v = runtime_int(v, text);
            quote!(::dsl_core::layout::IntTuple::Int(#v))
        }
        Tuple::Modes(modes, _) => {
            let modes = modes.iter().map(|m| runtime_tuple(m, text));
            quote!(::dsl_core::layout::IntTuple::Tuple(
                ::std::vec![#(#modes),*]
            ))
        }
    }
}

/// An `i64` expression for one value. Constants of any integer type are accepted; one that does not
/// fit in `i64` panics naming the layout.
fn runtime_int(value: &Value, text: &str) -> TokenStream {
    match &value.kind {
        ValueKind::Lit(v) => quote!(#v),
        ValueKind::Expr(expr) => {
            let shown = value.to_string();
            quote! {
                match <i64 as ::core::convert::TryFrom<_>>::try_from(#expr) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(_) => ::core::panic!(
                        "layout!({}): the value of `{}` does not fit in i64", #text, #shown
                    ),
                }
            }
        }
    }
}
