//! Signature checks: what cannot become a kernel generator, and kernel parameters whose type is
//! plainly not a device type. Types the macro cannot judge (any other path) are left to the
//! `KernelParam` trait, whose own message names the type.

use std::collections::HashSet;

use syn::{GenericParam, Type};

use super::model::KernelFn;
use super::Errors;

/// Host types that someone may write as a kernel parameter, meaning a scalar argument.
const HOST_SCALARS: &[&str] = &[
    "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
    "isize", "f32", "f64", "f16", "bf16",
];

/// Host types that are never kernel parameters.
const HOST_OTHERS: &[&str] = &[
    "str", "String", "Vec", "Option", "Box", "Layout", "IntTuple",
];

/// Pushes an error for each problem of the signature.
pub fn check(kernel: &KernelFn, errors: &mut Errors) {
    let sig = &kernel.item.sig;
    if let Some(t) = &sig.asyncness {
        errors.spanned(
            t,
            "a #[kernel] function cannot be `async`: it runs on the host, once, to generate the kernel; remove `async`",
        );
    }
    if let Some(t) = &sig.constness {
        errors.spanned(
            t,
            "a #[kernel] function cannot be `const`: generating a kernel allocates registers at run time; remove `const`",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            "a #[kernel] function cannot have an ABI: the generating function is plain Rust and the kernel's \
             ABI is PTX's; remove the `extern`",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(
            v,
            "a #[kernel] function cannot be variadic: a kernel has a fixed list of parameters",
        );
    }
    let type_params: HashSet<String> = sig
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect();
    for p in &kernel.device {
        if let Some(why) = not_a_device_type(&p.ty, &type_params) {
            errors.spanned(
                &p.ty,
                format!(
                    "`{}` cannot be a kernel parameter: {why}; a kernel parameter has a device type \
                     (`Var<u32>` for a scalar, `GlobalPtr<T>`, `TensorMap`), and a value that configures \
                     generation is a host parameter: mark it `#[host]`",
                    type_text(&p.ty)
                ),
            );
        }
    }
}

/// Why `ty` is certainly not a device parameter type, or `None` when it may be one.
fn not_a_device_type(ty: &Type, type_params: &HashSet<String>) -> Option<&'static str> {
    match ty {
        Type::Paren(p) => not_a_device_type(&p.elem, type_params),
        Type::Group(g) => not_a_device_type(&g.elem, type_params),
        Type::Reference(_) | Type::Ptr(_) => Some("a reference or pointer is a host value"),
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => {
            Some("a tuple, array or slice is a host value; declare one parameter per element")
        }
        Type::ImplTrait(_) | Type::TraitObject(_) => {
            Some("the parameter's type must be named, so that its PTX type is known")
        }
        Type::BareFn(_) | Type::Never(_) => Some("it has no device form"),
        Type::Infer(_) => Some("the parameter's type must be written out"),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if p.path.segments.len() == 1 && type_params.contains(&name) {
                Some("a bare type parameter could be anything; wrap it: `Var<T>`, `GlobalPtr<T>`")
            } else if HOST_SCALARS.contains(&name.as_str()) {
                Some("a Rust scalar is a host value")
            } else if HOST_OTHERS.contains(&name.as_str()) {
                Some("it is a host value")
            } else {
                None
            }
        }
        _ => None,
    }
}

fn type_text(ty: &Type) -> String {
    quote::quote!(#ty)
        .to_string()
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace("& ", "&")
        .replace(" ,", ",")
}
