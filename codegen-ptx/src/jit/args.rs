//! Kernel arguments: scalars, device buffers borrowed for the launch, and tensor maps; and the
//! check of a launch's arguments against the kernel's PTX signature. The checks are pure
//! functions, tested without a GPU.
//!
//! Buffers enter as [`DevicePointer`]s (module `buffer`), made by [`Jit::buffer`] and
//! [`Jit::buffer_mut`](crate::jit::Jit::buffer_mut); [`KernelArg::raw_pointer`] is the `unsafe`
//! way to pass an address.
//!
//! [`Jit::buffer`]: crate::jit::Jit::buffer

use std::ffi::c_void;
use std::fmt;

use super::buffer::DevicePointer;
use super::error::JitError;
use super::owner::BufferOwner;
use super::signature::{PtxClass, PtxParam, PtxParamKind, PtxSpace};
use super::tensor_map::{TensorMap, TensorMapMut};

/// One kernel argument, passed by value as the driver ABI expects (`kernelParams[i]` points at
/// the argument's bytes, which the driver copies at launch). Scalars are built directly
/// (`KernelArg::U32(n)`, or `n.into()`); buffers by [`Jit::buffer`] / [`Jit::buffer_mut`]
/// (borrowed for `'a`); tensor maps by reference (`(&map).into()`).
///
/// [`Jit::buffer`]: crate::jit::Jit::buffer
/// [`Jit::buffer_mut`]: crate::jit::Jit::buffer_mut
pub enum KernelArg<'a> {
    /// `.u8` / `.b8` parameter.
    U8(u8),
    /// `.s8` / `.b8` parameter.
    I8(i8),
    /// `.u16` / `.b16` parameter.
    U16(u16),
    /// `.s16` / `.b16` parameter.
    I16(i16),
    /// `.u32` / `.b32` parameter.
    U32(u32),
    /// `.s32` / `.b32` parameter.
    I32(i32),
    /// `.u64` / `.b64` parameter.
    U64(u64),
    /// `.s64` / `.b64` parameter.
    I64(i64),
    /// `.f32` / `.b32` parameter.
    F32(f32),
    /// `.f64` / `.b64` parameter.
    F64(f64),
    /// `.f16` / `.b16` parameter (rute declares f16 scalars `.b16`).
    F16(half::f16),
    /// `.bf16` / `.b16` parameter (rute declares bf16 scalars `.b16`).
    BF16(half::bf16),
    /// A device address (`.u64` / `.b64`, or `.ptr` to global or generic memory).
    Pointer(DevicePointer<'a>),
    /// A `CUtensorMap` passed by value (`.param .align 64 .b8 name[128]`), with the buffer it
    /// addresses; a kernel may store through it only when it was made by `Jit::tensor_map_mut`.
    TensorMap(&'a TensorMap<'a>),
    /// The address of the buffer a tensor map addresses, as a pointer parameter: for a kernel
    /// that reaches one buffer both through a map and through its address (a GEMM that writes
    /// D with TMA stores or with plain ones), which a second borrow of the buffer could not
    /// give while the map holds it. The map's borrow, with its ordering, covers both: a kernel
    /// may write through the address only when the map was made by `Jit::tensor_map_mut` (the
    /// contract of the `unsafe` launch, `JitFunction::launch`).
    MapBuffer(&'a TensorMap<'a>),
}

impl KernelArg<'static> {
    /// `address` as a pointer argument, unchecked: no owner, no length, no ordering.
    ///
    /// # Safety
    ///
    /// For every launch that takes this argument, until that launch's kernel has finished:
    /// `address` is an address in the launching `Jit`'s context that the kernel may access as it
    /// does (inside a live allocation, for as many bytes as the kernel's other arguments let it
    /// reach); no other stream uses those bytes while the kernel runs, and work that wrote them
    /// before was ordered before the launch; the allocation is not freed while the kernel runs;
    /// and whatever the kernel writes there is valid for the types the host later reads it as.
    pub unsafe fn raw_pointer(address: u64) -> Self {
        // SAFETY: the caller takes on the same contract.
        KernelArg::Pointer(unsafe { DevicePointer::raw(address) })
    }
}

impl KernelArg<'_> {
    /// Bytes the argument occupies in the kernel's parameter buffer.
    pub fn size_bytes(&self) -> usize {
        match self {
            KernelArg::U8(_) | KernelArg::I8(_) => 1,
            KernelArg::U16(_) | KernelArg::I16(_) | KernelArg::F16(_) | KernelArg::BF16(_) => 2,
            KernelArg::U32(_) | KernelArg::I32(_) | KernelArg::F32(_) => 4,
            KernelArg::U64(_)
            | KernelArg::I64(_)
            | KernelArg::F64(_)
            | KernelArg::Pointer(_)
            | KernelArg::MapBuffer(_) => 8,
            KernelArg::TensorMap(_) => TensorMap::BYTES,
        }
    }

    /// The device address the argument carries (a pointer's, or a tensor map's buffer's).
    pub fn address(&self) -> Option<u64> {
        match self {
            KernelArg::Pointer(p) => Some(p.address()),
            KernelArg::TensorMap(m) | KernelArg::MapBuffer(m) => Some(m.pointer().address()),
            _ => None,
        }
    }

    /// Whether the argument can fill parameter `p`, as far as `p`'s declaration tells: a scalar
    /// the parameter's width and class (`.bN` takes any class), a pointer a 64-bit `.u64` /
    /// `.b64` scalar or a `.ptr` (to global or generic memory, unless raw), a tensor map a
    /// 128-byte, 64-byte aligned array.
    pub fn fits(&self, p: &PtxParam) -> bool {
        use PtxClass::{Bits, Float, Signed, Unsigned};
        let scalar = |class: PtxClass, bits: u32| match p.kind {
            PtxParamKind::Scalar(t) => t.bits == bits && (t.class == class || t.class == Bits),
            _ => false,
        };
        match self {
            KernelArg::U8(_) => scalar(Unsigned, 8),
            KernelArg::I8(_) => scalar(Signed, 8),
            KernelArg::U16(_) => scalar(Unsigned, 16),
            KernelArg::I16(_) => scalar(Signed, 16),
            KernelArg::U32(_) => scalar(Unsigned, 32),
            KernelArg::I32(_) => scalar(Signed, 32),
            KernelArg::F32(_) => scalar(Float, 32),
            KernelArg::U64(_) => scalar(Unsigned, 64),
            KernelArg::I64(_) => scalar(Signed, 64),
            KernelArg::F64(_) => scalar(Float, 64),
            KernelArg::F16(_) | KernelArg::BF16(_) => scalar(Float, 16),
            KernelArg::Pointer(ptr) => pointer_fits(p, ptr.is_raw()),
            KernelArg::MapBuffer(m) => pointer_fits(p, m.pointer().is_raw()),
            KernelArg::TensorMap(_) => p.is_tensor_map(),
        }
    }

    /// Pointer to the argument's bytes, for the driver's `kernelParams` array. The driver only
    /// reads through it, during the launch call, while `self` is borrowed.
    pub(crate) fn as_param_ptr(&self) -> *mut c_void {
        let p: *const c_void = match self {
            KernelArg::U8(v) => (v as *const u8).cast(),
            KernelArg::I8(v) => (v as *const i8).cast(),
            KernelArg::U16(v) => (v as *const u16).cast(),
            KernelArg::I16(v) => (v as *const i16).cast(),
            KernelArg::U32(v) => (v as *const u32).cast(),
            KernelArg::I32(v) => (v as *const i32).cast(),
            KernelArg::U64(v) => (v as *const u64).cast(),
            KernelArg::I64(v) => (v as *const i64).cast(),
            KernelArg::F32(v) => (v as *const f32).cast(),
            KernelArg::F64(v) => (v as *const f64).cast(),
            KernelArg::F16(v) => (v as *const half::f16).cast(),
            KernelArg::BF16(v) => (v as *const half::bf16).cast(),
            KernelArg::Pointer(p) => (p.address_ref() as *const u64).cast(),
            KernelArg::TensorMap(m) => m.as_bytes().as_ptr().cast(),
            KernelArg::MapBuffer(m) => (m.pointer().address_ref() as *const u64).cast(),
        };
        p.cast_mut()
    }
}

impl fmt::Debug for KernelArg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelArg::U8(v) => write!(f, "U8({v})"),
            KernelArg::I8(v) => write!(f, "I8({v})"),
            KernelArg::U16(v) => write!(f, "U16({v})"),
            KernelArg::I16(v) => write!(f, "I16({v})"),
            KernelArg::U32(v) => write!(f, "U32({v})"),
            KernelArg::I32(v) => write!(f, "I32({v})"),
            KernelArg::U64(v) => write!(f, "U64({v})"),
            KernelArg::I64(v) => write!(f, "I64({v})"),
            KernelArg::F32(v) => write!(f, "F32({v})"),
            KernelArg::F64(v) => write!(f, "F64({v})"),
            KernelArg::F16(v) => write!(f, "F16({v})"),
            KernelArg::BF16(v) => write!(f, "BF16({v})"),
            KernelArg::Pointer(p) => write!(f, "{p:?}"),
            KernelArg::TensorMap(m) => write!(f, "TensorMap(over {:?})", m.pointer()),
            KernelArg::MapBuffer(m) => write!(f, "MapBuffer({:?})", m.pointer()),
        }
    }
}

macro_rules! kernel_arg_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for KernelArg<'_> {
            fn from(x: $t) -> Self {
                KernelArg::$v(x)
            }
        }
    )*};
}
kernel_arg_from!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
    u64 => U64, i64 => I64, f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16);

impl<'a> From<&'a TensorMap<'a>> for KernelArg<'a> {
    fn from(m: &'a TensorMap<'a>) -> Self {
        KernelArg::TensorMap(m)
    }
}

impl<'a> From<&'a TensorMapMut<'a>> for KernelArg<'a> {
    fn from(m: &'a TensorMapMut<'a>) -> Self {
        KernelArg::TensorMap(m)
    }
}

/// Whether a device address (`raw`: one without an owner) can fill parameter `p`: a 64-bit
/// `.u64` / `.b64` scalar, or a `.ptr` to global or generic memory (any space, raw).
fn pointer_fits(p: &PtxParam, raw: bool) -> bool {
    use PtxClass::{Bits, Unsigned};
    match p.kind {
        PtxParamKind::Scalar(t) => t.bits == 64 && matches!(t.class, Unsigned | Bits),
        PtxParamKind::Pointer { ty, space, .. } => {
            ty.bits == 64
                && matches!(ty.class, Unsigned | Bits)
                && (raw || matches!(space, PtxSpace::Generic | PtxSpace::Global))
        }
        PtxParamKind::Array { .. } => false,
    }
}

/// Checks `args` against kernel `kernel`'s PTX parameters before a launch on the stream `jit`
/// describes. On success: one argument per parameter, each fitting its parameter
/// ([`KernelArg::fits`]); an address the PTX declares aligned (`.ptr.align N`) is so aligned;
/// and every buffer (a pointer's, or a tensor map's) was made for this stream and is one
/// [`admit`](super::admit) accepts. A raw pointer is checked for kind and alignment only.
pub fn check_args(
    kernel: &str,
    params: &[PtxParam],
    args: &[KernelArg<'_>],
    jit: &BufferOwner,
) -> Result<(), JitError> {
    if params.len() != args.len() {
        return Err(JitError::ArgumentCount {
            kernel: kernel.to_string(),
            expected: params.len(),
            given: args.len(),
        });
    }
    for (index, (arg, param)) in args.iter().zip(params).enumerate() {
        if !arg.fits(param) {
            return Err(JitError::ArgumentKind {
                kernel: kernel.to_string(),
                index,
                arg: format!("{arg:?}"),
                given: arg.size_bytes(),
                param: param.to_string(),
                expected: param.size,
            });
        }
        let what = || format!("argument {index} of `{kernel}`");
        let ptr = match arg {
            KernelArg::Pointer(ptr) => ptr,
            KernelArg::MapBuffer(m) => m.pointer(),
            KernelArg::TensorMap(m) => {
                m.pointer()
                    .check_owner(jit, || format!("the buffer of tensor map {}", what()))?;
                continue;
            }
            _ => continue,
        };
        if let PtxParamKind::Pointer { align: Some(a), .. } = param.kind {
            if ptr.address() % u64::from(a) != 0 {
                return Err(JitError::ArgumentMisaligned {
                    kernel: kernel.to_string(),
                    index,
                    address: ptr.address(),
                    align: a,
                    param: param.to_string(),
                });
            }
        }
        ptr.check_owner(jit, what)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::signature::PtxScalar;

    fn param(class: PtxClass, bits: u32) -> PtxParam {
        PtxParam {
            name: "x".into(),
            kind: PtxParamKind::Scalar(PtxScalar { class, bits }),
            size: bits as usize / 8,
            align: bits as usize / 8,
            offset: 0,
        }
    }

    /// rute declares f16 and bf16 scalars `.b16`; a 16-bit float argument fills them (and a
    /// `.f16`), not a 32-bit or an integer parameter.
    #[test]
    fn half_scalars_fill_16_bit_parameters() {
        for arg in [
            KernelArg::F16(half::f16::from_f32(1.5)),
            KernelArg::BF16(half::bf16::from_f32(-2.0)),
        ] {
            assert_eq!(arg.size_bytes(), 2);
            assert!(arg.fits(&param(PtxClass::Bits, 16)), "{arg:?}");
            assert!(arg.fits(&param(PtxClass::Float, 16)), "{arg:?}");
            assert!(!arg.fits(&param(PtxClass::Unsigned, 16)), "{arg:?}");
            assert!(!arg.fits(&param(PtxClass::Float, 32)), "{arg:?}");
        }
        let bits = KernelArg::from(half::f16::from_f32(1.5));
        // The driver copies the argument's 2 bytes: the f16's own bits.
        let p = bits.as_param_ptr().cast::<u16>();
        // SAFETY: `as_param_ptr` points at the argument's value, a 2-byte f16, alive here.
        assert_eq!(unsafe { p.read() }, half::f16::from_f32(1.5).to_bits());
    }
}
