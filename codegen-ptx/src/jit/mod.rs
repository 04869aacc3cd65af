//! The JIT runtime: the only code in rute that touches a GPU.
//!
//! It takes PTX text (from `codegen_ptx` or written by hand), loads it through the CUDA driver
//! with the JIT's error log captured, keeps loaded modules in a cache keyed by a hash of the text,
//! and launches kernels with typed arguments, grid/block/cluster extents and dynamic shared
//! memory, checking the configuration before the driver sees it. It also encodes TMA descriptors
//! (`CUtensorMap`) and times work with CUDA events.
//!
//! libcuda is loaded at run time (cudarc's `dynamic-loading`), so a program built on a machine
//! without a GPU links and runs, and [`Jit::new`](crate::jit::Jit::new) answers [`JitError::NoGpu`](crate::jit::JitError::NoGpu) there.
//!
//! ```no_run
//! use codegen_ptx::jit::{Jit, KernelArg, Launch};
//! # fn main() -> Result<(), codegen_ptx::jit::JitError> {
//! # let ptx = "";
//! let jit = Jit::new(0)?;
//! let module = jit.load(ptx)?;
//! let vadd = module.function("vadd")?;
//! let (a, b) = (jit.upload(&[1.0f32; 1000])?, jit.upload(&[2.0f32; 1000])?);
//! let c = jit.alloc_zeros::<f32>(1000)?;
//! vadd.launch(
//!     &Launch::linear(1000, 256),
//!     &[jit.ptr(&a), jit.ptr(&b), jit.ptr(&c), KernelArg::U32(1000)],
//! )?;
//! let sum = jit.download(&c)?;
//! # Ok(()) }
//! ```
//!
//! All work goes through the one stream [`Jit::stream`](crate::jit::Jit::stream); slices are allocated on it and cudarc's
//! cross-stream event tracking is off, so order on that stream is the only synchronisation.
#![warn(missing_docs)]

mod device;
mod error;
mod launch;
mod module;
mod signature;
mod tensor_map;
mod timing;

pub use device::Jit;
pub use error::JitError;
pub use launch::{
    validate_for_kernel, validate_launch, DeviceLimits, KernelArg, KernelFacts, Launch,
    LaunchError, MAX_NON_PORTABLE_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE,
};
pub use module::{ptx_entries, ptx_hash, JitFunction, JitModule};
pub use signature::{
    ptx_signature, ptx_signatures, PtxClass, PtxEntry, PtxParam, PtxParamKind, PtxScalar,
    PtxSpace, SignatureError,
};
pub use tensor_map::{
    TensorMap, TensorMapError, TensorMapSpec, TmaDataType, TmaInterleave, TmaL2Promotion,
    TmaOobFill, TmaSwizzle,
};
pub use timing::Timing;

/// cudarc itself, for what the wrappers here do not cover.
pub use cudarc;
/// The cudarc types tests and benches handle directly.
pub use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr};
