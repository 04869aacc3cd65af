//! `syn::ItemFn` -> [`KernelFn`]: the signature's inputs sorted by role.
//!
//! - the receiver (`self`, `&self`) and parameters marked `#[host]` stay inputs of the generating
//!   function: plain Rust values read while the kernel is generated;
//! - a parameter of type `&KernelBuilder` is bound to the builder handle (shared memory, launch
//!   hints); it is not an input of the generating function;
//! - every other parameter is a kernel parameter, declared in order under its own name.

use syn::{FnArg, GenericArgument, Pat, PathArguments, ReturnType, Type};

use super::model::{DeviceParam, KernelFn};
use super::Errors;

/// Sorts the inputs; errors about their form go to `errors` (the result is still usable).
pub fn parse(mut item: syn::ItemFn, errors: &mut Errors) -> KernelFn {
    let mut host_inputs = Vec::new();
    let mut builder = None;
    let mut device = Vec::new();
    let inputs = std::mem::take(&mut item.sig.inputs);
    for input in inputs {
        match input {
            FnArg::Receiver(_) => host_inputs.push(input),
            FnArg::Typed(mut typed) => {
                let before = typed.attrs.len();
                let mut host_attrs = Vec::new();
                typed.attrs.retain(|a| {
                    let is_host = a.path().is_ident("host");
                    if is_host {
                        host_attrs.push(a.clone());
                    }
                    !is_host
                });
                for a in &host_attrs {
                    if !matches!(a.meta, syn::Meta::Path(_)) {
                        errors.spanned(
                            a,
                            "`#[host]` takes no arguments: write `#[host] name: Type`",
                        );
                    }
                }
                if typed.attrs.len() < before {
                    host_inputs.push(FnArg::Typed(typed));
                } else if let Some(mutable) = builder_handle(&typed.ty) {
                    if mutable {
                        errors.spanned(
                            &typed.ty,
                            "the builder handle is shared, not exclusive: write `&KernelBuilder`",
                        );
                    }
                    if builder.is_some() {
                        errors.spanned(
                            &typed,
                            "a #[kernel] function takes the builder handle (`&KernelBuilder`) at most once",
                        );
                    }
                    builder = Some((*typed.pat, *typed.ty));
                } else {
                    match *typed.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            device.push(DeviceParam {
                                attrs: typed.attrs,
                                mutability: p.mutability,
                                ident: p.ident,
                                ty: *typed.ty,
                            })
                        }
                        pat => errors.spanned(
                            pat,
                            "a kernel parameter must be a plain name (`name: Type`), which becomes \
                             its PTX name; destructure it in the body, or mark a host value `#[host]`",
                        ),
                    }
                }
            }
        }
    }
    let error_type = match &item.sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) if is_unit(ty) => None,
        ReturnType::Type(_, ty) => match result_error_type(ty) {
            Some(e) => Some(e),
            None => {
                errors.spanned(
                    ty,
                    "a #[kernel] function returns nothing, or `Result<(), E>` (with `E: From<BuildError>`) \
                     to use `?` on host values; the generated function returns the kernel",
                );
                None
            }
        },
    };
    let body = (*item.block).clone();
    KernelFn {
        item,
        host_inputs,
        builder,
        device,
        error_type,
        body,
    }
}

/// `Some(is_mut)` when `ty` is a reference to a type named `KernelBuilder`.
fn builder_handle(ty: &Type) -> Option<bool> {
    let Type::Reference(r) = ty else {
        return None;
    };
    let Type::Path(p) = &*r.elem else {
        return None;
    };
    let last = p.path.segments.last()?;
    (last.ident == "KernelBuilder").then_some(r.mutability.is_some())
}

fn is_unit(ty: &Type) -> bool {
    matches!(ty, Type::Tuple(t) if t.elems.is_empty())
}

/// `(T, E)` of `Result<T, E>` (the last path segment named `Result` with two type arguments).
fn result_types(ty: &Type) -> Option<(&Type, &Type)> {
    let Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// `E` of `Result<T, E>`, whatever `T` is (a `#[device]` function may return a value).
pub fn result_error_type_of_any(ty: &Type) -> Option<Type> {
    result_types(ty).map(|(_, err)| err.clone())
}

/// `E` of `Result<(), E>`.
fn result_error_type(ty: &Type) -> Option<Type> {
    result_types(ty)
        .filter(|(ok, _)| is_unit(ok))
        .map(|(_, err)| err.clone())
}
