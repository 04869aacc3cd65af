//! What `#[kernel]` reads from a function: its signature split by role, and its body.

use syn::{Attribute, Block, FnArg, Ident, Pat, Type};

/// A `#[kernel]` function after parsing.
pub struct KernelFn {
    /// The function as written, minus the `#[host]` markers; its inputs are rebuilt by `expand`.
    pub item: syn::ItemFn,
    /// Inputs of the generating function, in order: the receiver and the `#[host]` parameters.
    pub host_inputs: Vec<FnArg>,
    /// The parameter bound to the builder handle (`k: &KernelBuilder`), if any.
    pub builder: Option<(Pat, Type)>,
    /// Kernel parameters, in PTX order.
    pub device: Vec<DeviceParam>,
    /// `E` when the function returns `Result<(), E>`: the body may use `?` at its top level.
    pub error_type: Option<Type>,
    /// The body, rewritten in place by `rewrite`.
    pub body: Block,
}

/// One kernel parameter.
pub struct DeviceParam {
    /// Attributes other than `#[host]`, kept on the binding.
    pub attrs: Vec<Attribute>,
    /// `mut` on the binding.
    pub mutability: Option<syn::token::Mut>,
    /// The binding and the PTX parameter's name.
    pub ident: Ident,
    /// Its type (`GlobalPtr<f32>`, `Var<u32>`, `TensorMap`, ...).
    pub ty: Type,
}
