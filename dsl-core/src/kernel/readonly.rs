//! Kernel parameters the kernel only reads: [`ConstPtr`], a global pointer with loads and no
//! stores, and [`ConstTensorMap`], a tensor map for TMA loads only.
//!
//! A kernel's signature says which buffers it writes: a `GlobalPtr<T>` or `TensorMap` parameter
//! may be written, a `ConstPtr<T>` or `ConstTensorMap` is only read. The typed launch that
//! `#[kernel]` generates borrows the host's buffer mutably for the first kind and shares it for
//! the second (see [`crate::kernel::signature`]). In the PTX both are the same parameter as their
//! writable kind.
//!
//! The types keep stores out of reach, not out of the kernel's power: [`ConstPtr::cast_mut`]
//! (for a tensor or an intrinsic that takes a `GlobalPtr`, such as a `cp.async` source) and
//! [`ConstTensorMap`]'s `Deref` give the writable kind back, as Rust's `*const T` does; a kernel
//! whose launch is trusted ([`crate::kernel::signature::TrustedKernel`]) promises not to write
//! through them.

use std::ops::Deref;

use super::context::KernelBuilder;
use super::macro_support::KernelParam;
use super::memory::{GlobalPtr, Offset, TensorMap};
use super::value::{DeviceType, Var};
use crate::ir::Address;

/// A typed pointer into global memory that the kernel only reads: [`GlobalPtr`]'s loads, no
/// stores. As a kernel parameter it tells the typed launch to share the host's buffer rather
/// than borrow it mutably.
pub struct ConstPtr<T>(GlobalPtr<T>);

impl<T> Clone for ConstPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ConstPtr<T> {}

impl<T> std::fmt::Debug for ConstPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ConstPtr({:?})", self.0)
    }
}

impl<T: DeviceType> ConstPtr<T> {
    /// A read-only pointer at a raw byte address.
    pub fn from_addr(addr: Var<u64>) -> Self {
        ConstPtr(GlobalPtr::from_addr(addr))
    }
    /// The byte address.
    pub fn addr(&self) -> Var<u64> {
        self.0.addr()
    }
    /// The same address, read as elements of `U`.
    pub fn cast<U: DeviceType>(self) -> ConstPtr<U> {
        ConstPtr(self.0.cast())
    }
    /// The same address as a [`GlobalPtr`], which can also store: for a tensor or an intrinsic
    /// that takes one (a global tensor to copy from, a `cp.async` source). A kernel trusted to
    /// launch promises not to write through it.
    pub fn cast_mut(self) -> GlobalPtr<T> {
        self.0
    }
    /// The pointer `i` elements further; also spelled `ptr + i`.
    pub fn offset(self, i: impl Offset) -> Self {
        ConstPtr(self.0.offset(i))
    }
    /// The pointer `bytes` bytes further.
    pub fn byte_add(self, bytes: impl Offset) -> Self {
        ConstPtr(self.0.byte_add(bytes))
    }
    /// `*self`.
    pub fn load(self) -> Var<T> {
        self.0.load()
    }
    /// `self[i]`.
    pub fn load_at(self, i: impl Offset) -> Var<T> {
        self.0.load_at(i)
    }
    /// `N` consecutive elements in one access (see [`GlobalPtr::load_vec`]).
    pub fn load_vec<const N: usize>(self) -> [Var<T>; N] {
        self.0.load_vec()
    }
    /// `*self` through the read-only non-coherent path (`ld.global.nc`), which suits a buffer no
    /// thread of the kernel writes.
    pub fn load_nc(self) -> Var<T> {
        self.0.load_nc()
    }
    /// The address as an IR memory operand.
    pub fn address(&self) -> Address {
        self.0.address()
    }
}

impl<T: DeviceType, I: Offset> std::ops::Add<I> for ConstPtr<T> {
    type Output = Self;
    fn add(self, i: I) -> Self {
        self.offset(i)
    }
}

impl<T: DeviceType> KernelParam for ConstPtr<T> {
    fn declare(k: &KernelBuilder, name: &str) -> Self {
        ConstPtr(k.param_ptr::<T>(name))
    }
}

/// A `CUtensorMap` parameter the kernel only loads through (TMA loads, prefetches): the typed
/// launch takes a map over a shared buffer for it. Dereferences to [`TensorMap`], which the TMA
/// atoms take; a kernel trusted to launch promises not to store through it.
#[derive(Debug, Clone)]
pub struct ConstTensorMap(TensorMap);

impl Deref for ConstTensorMap {
    type Target = TensorMap;
    fn deref(&self) -> &TensorMap {
        &self.0
    }
}

impl KernelParam for ConstTensorMap {
    fn declare(k: &KernelBuilder, name: &str) -> Self {
        ConstTensorMap(k.param_tensor_map(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ParamKind, Type};
    use crate::kernel::build_kernel;

    #[test]
    fn read_only_parameters_are_the_writable_kinds_in_the_ir() {
        let k = build_kernel("k", |b| {
            let a: ConstPtr<f32> = KernelParam::declare(b, "a");
            let m: ConstTensorMap = KernelParam::declare(b, "m");
            let x = (a + 1u32).load();
            let _ = (x, m.name().to_string());
        })
        .unwrap();
        let kinds: Vec<_> = k.params.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            [
                ParamKind::GlobalPtr { elem: Type::F32 },
                ParamKind::TensorMap
            ]
        );
    }
}
