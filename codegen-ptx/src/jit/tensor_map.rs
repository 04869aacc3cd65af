//! Encoded TMA descriptors (`CUtensorMap`): a [`TensorMapSpec`] encoded through the driver over
//! a buffer, which the map keeps borrowed.
//!
//! A tensor map holds a global address, and the TMA unit reads and writes through it without
//! further checks; so the safe encoders ([`Jit::tensor_map`], [`Jit::tensor_map_mut`]) take the
//! buffer itself, check that every element the map can reach lies inside it, and keep it
//! borrowed (and its uses ordered, like a buffer argument's) for as long as the map lives.
//! Encoding from a bare address is [`TensorMap::encode_tiled_raw`], which is `unsafe`.
//!
//! [`Jit::tensor_map`]: super::Jit::tensor_map
//! [`Jit::tensor_map_mut`]: super::Jit::tensor_map_mut

use std::fmt;

use cudarc::driver::sys;

use super::buffer::DevicePointer;
use super::context::Shared;
use super::error::{describe, JitError};
use super::owner::BufferOwner;
use super::tensor_map_spec::{
    TensorMapError, TensorMapSpec, TmaDataType, TmaInterleave, TmaL2Promotion, TmaOobFill,
    TmaSwizzle,
};

/// The 128 bytes of an encoded `CUtensorMap`, 64-byte aligned as kernels expect them.
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Descriptor([u8; 128]);

/// An encoded `CUtensorMap` (128 opaque bytes, 64-byte aligned, passed by value as
/// `.param .align 64 .b8 name[128]`) and the buffer it addresses, borrowed for `'a`. Pass it
/// as `KernelArg::TensorMap(&map)` (or `(&map).into()`).
pub struct TensorMap<'a> {
    descriptor: Descriptor,
    pointer: DevicePointer<'a>,
}

impl TensorMap<'_> {
    /// Size of a tensor map in bytes.
    pub const BYTES: usize = 128;

    /// The descriptor's bytes, as the kernel receives them.
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.descriptor.0
    }

    /// The buffer (or, from [`TensorMap::encode_tiled_raw`], the raw address) the map addresses.
    pub fn pointer(&self) -> &DevicePointer<'_> {
        &self.pointer
    }
}

/// A tensor map encoded over a buffer borrowed mutably ([`Jit::tensor_map_mut`](super::Jit::tensor_map_mut)): one a kernel
/// may store through (TMA stores), which the typed launch requires for a writable `TensorMap`
/// parameter. Dereferences to the [`TensorMap`], and converts into it.
pub struct TensorMapMut<'a>(TensorMap<'a>);

impl<'a> TensorMapMut<'a> {
    /// `map`, which must have been encoded over a buffer borrowed mutably.
    pub(crate) fn of_written(map: TensorMap<'a>) -> Self {
        debug_assert!(map.pointer().writes() || map.pointer().bytes().is_none());
        TensorMapMut(map)
    }
}

impl<'a> std::ops::Deref for TensorMapMut<'a> {
    type Target = TensorMap<'a>;
    fn deref(&self) -> &TensorMap<'a> {
        &self.0
    }
}

impl<'a> From<TensorMapMut<'a>> for TensorMap<'a> {
    fn from(map: TensorMapMut<'a>) -> TensorMap<'a> {
        map.0
    }
}

impl fmt::Debug for TensorMapMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorMapMut({:?})", self.0)
    }
}

impl<'a> TensorMap<'a> {
    /// The map of `spec` over `pointer`'s buffer: `spec` validated against its address and
    /// length ([`TensorMapSpec::validate_for`]; a raw address is taken to be `raw_bytes` long),
    /// the buffer checked to be one the stream may use, and the descriptor encoded.
    pub(crate) fn encode_over(
        shared: &Shared,
        spec: &TensorMapSpec,
        pointer: DevicePointer<'a>,
        raw_bytes: u64,
    ) -> Result<TensorMap<'a>, JitError> {
        pointer.check_owner(&BufferOwner::of_stream(&shared.stream), || {
            "the buffer of the tensor map".to_string()
        })?;
        let bytes = pointer.bytes().map_or(raw_bytes, |b| b as u64);
        Ok(TensorMap {
            descriptor: encode(shared, spec, pointer.address(), bytes)?,
            pointer,
        })
    }
}

/// Validates `spec` for `address` and `buffer_bytes` and encodes it.
fn encode(
    shared: &Shared,
    spec: &TensorMapSpec,
    address: u64,
    buffer_bytes: u64,
) -> Result<Descriptor, JitError> {
    spec.validate_for(address, buffer_bytes)?;
    let (major, minor) = shared.limits.compute_capability;
    if major < 9 {
        return Err(JitError::Unsupported {
            feature: "TMA (tensor maps)",
            needs_major: 9,
            needs_minor: 0,
            major,
            minor,
        });
    }
    shared.bind()?;
    let mut raw = sys::CUtensorMap { opaque: [0; 16] };
    let rank =
        u32::try_from(spec.rank()).map_err(|_| TensorMapError::Rank { rank: spec.rank() })?;
    // SAFETY: `raw` is a properly aligned CUtensorMap the driver writes; every array pointer is
    // valid for the lengths that `validate` checked against `rank` (globalStrides has rank - 1
    // entries, as the driver reads); the global address is only recorded, never dereferenced,
    // by the encoder (what the TMA unit later does with it is the callers' concern: the safe
    // encoders pass a borrowed buffer the extent fits in).
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut raw,
            dtype_to_sys(spec.dtype),
            rank,
            std::ptr::without_provenance_mut::<std::ffi::c_void>(address as usize),
            spec.global_dims.as_ptr(),
            spec.global_strides_bytes.as_ptr(),
            spec.box_dims.as_ptr(),
            spec.element_strides.as_ptr(),
            interleave_to_sys(spec.interleave),
            swizzle_to_sys(spec.swizzle),
            l2_to_sys(spec.l2_promotion),
            oob_to_sys(spec.oob_fill),
        )
    };
    result.result().map_err(|e| JitError::Driver {
        call: "cuTensorMapEncodeTiled",
        reason: format!("{} for {spec:?} at {address:#x}", describe(e)),
    })?;
    let mut bytes = [0u8; 128];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(raw.opaque.iter()) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    Ok(Descriptor(bytes))
}

impl fmt::Debug for TensorMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorMap(")?;
        for b in &self.descriptor.0[..16] {
            write!(f, "{b:02x}")?;
        }
        write!(f, ".. over {:?})", self.pointer)
    }
}

fn interleave_to_sys(i: TmaInterleave) -> sys::CUtensorMapInterleave {
    use sys::CUtensorMapInterleave as I;
    match i {
        TmaInterleave::None => I::CU_TENSOR_MAP_INTERLEAVE_NONE,
        TmaInterleave::B16 => I::CU_TENSOR_MAP_INTERLEAVE_16B,
        TmaInterleave::B32 => I::CU_TENSOR_MAP_INTERLEAVE_32B,
    }
}

fn swizzle_to_sys(s: TmaSwizzle) -> sys::CUtensorMapSwizzle {
    use sys::CUtensorMapSwizzle as S;
    match s {
        TmaSwizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
        TmaSwizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
        TmaSwizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
        TmaSwizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

fn l2_to_sys(l: TmaL2Promotion) -> sys::CUtensorMapL2promotion {
    use sys::CUtensorMapL2promotion as L;
    match l {
        TmaL2Promotion::None => L::CU_TENSOR_MAP_L2_PROMOTION_NONE,
        TmaL2Promotion::B64 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        TmaL2Promotion::B128 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        TmaL2Promotion::B256 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    }
}

fn oob_to_sys(o: TmaOobFill) -> sys::CUtensorMapFloatOOBfill {
    use sys::CUtensorMapFloatOOBfill as O;
    match o {
        TmaOobFill::Zero => O::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        TmaOobFill::NanRequestZeroFma => O::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
    }
}

fn dtype_to_sys(d: TmaDataType) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType as D;
    match d {
        TmaDataType::U8 => D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        TmaDataType::U16 => D::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        TmaDataType::U32 => D::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        TmaDataType::I32 => D::CU_TENSOR_MAP_DATA_TYPE_INT32,
        TmaDataType::U64 => D::CU_TENSOR_MAP_DATA_TYPE_UINT64,
        TmaDataType::I64 => D::CU_TENSOR_MAP_DATA_TYPE_INT64,
        TmaDataType::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        TmaDataType::F32 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        TmaDataType::F64 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        TmaDataType::BF16 => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        TmaDataType::F32Ftz => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
        TmaDataType::TF32 => D::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
        TmaDataType::TF32Ftz => D::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn descriptor_is_128_bytes_64_aligned() {
        assert_eq!(
            std::mem::size_of::<super::Descriptor>(),
            super::TensorMap::BYTES
        );
        assert_eq!(std::mem::align_of::<super::Descriptor>(), 64);
    }
}
