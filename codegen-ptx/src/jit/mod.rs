//! The JIT runtime: the only code in rute that touches a GPU.
//!
//! It takes PTX text (from `codegen_ptx` or written by hand), loads it through the CUDA driver
//! with the JIT's error log captured, keeps loaded modules in a cache keyed by a hash of the text,
//! and launches kernels with grid/block/cluster extents and dynamic shared memory, checking the
//! configuration before the driver sees it. It also encodes TMA descriptors (`CUtensorMap`) and
//! times work with CUDA events.
//!
//! libcuda is loaded at run time (cudarc's `dynamic-loading`), so a program built on a machine
//! without a GPU links and runs, and [`Jit::new`](crate::jit::Jit::new) answers [`JitError::NoGpu`](crate::jit::JitError::NoGpu) there.
//!
//! # The typed launch
//!
//! A kernel written with `#[kernel]` is launched through its signature, with one typed argument
//! per parameter; a wrong type or count does not compile, and buffers the kernel may write are
//! borrowed mutably (see [`TypedFunction`](crate::jit::TypedFunction) and
//! `dsl_core::kernel::signature`):
//!
//! ```no_run
//! use codegen_ptx::jit::{Jit, Launch};
//! use dsl_core::kernel::*;
//! use dsl_macros::kernel;
//!
//! /// `c[i] = a[i] + b[i]` for `i < n`.
//! #[kernel]
//! fn vadd(#[len(n)] a: ConstPtr<f32>, #[len(n)] b: ConstPtr<f32>, #[len(n)] c: GlobalPtr<f32>, n: Var<u32>) {
//!     let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!     if i < n {
//!         c.store_at(i, a.load_at(i) + b.load_at(i));
//!     }
//! }
//! // SAFETY: every access is at an index below `n`, which the launch checks against each
//! // buffer's length (`#[len(n)]`); only `c` is written.
//! unsafe impl TrustedKernel for VaddKernel {}
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let jit = Jit::new(0)?;
//! let vadd = jit.compile(&VaddKernel::build()?, jit.target()?)?;
//! let (a, b) = (jit.upload(&[1.0f32; 1000])?, jit.upload(&[2.0f32; 1000])?);
//! let mut c = jit.alloc_zeros::<f32>(1000)?;
//! VaddKernel::launch(vadd.with(&Launch::linear(1000, 256)), &a, &b, &mut c, 1000)?;
//! let sum = jit.download(&c)?;
//! # Ok(()) }
//! ```
//!
//! # The untyped launch
//!
//! Any loaded PTX can be launched with positional [`KernelArg`](crate::jit::KernelArg)s, checked
//! against the kernel's parameter list read from the PTX text the module was loaded from
//! ([`ptx_signatures`](crate::jit::ptx_signatures), [`check_args`](crate::jit::check_args)), on
//! every driver and without asking the driver. The text says nothing of what the kernel does
//! with its arguments, so that launch is `unsafe`
//! ([`JitFunction::launch`](crate::jit::JitFunction::launch) states the contract):
//!
//! ```no_run
//! use codegen_ptx::jit::{Jit, KernelArg, Launch};
//! # fn main() -> Result<(), codegen_ptx::jit::JitError> {
//! # let ptx = "";
//! let jit = Jit::new(0)?;
//! let module = jit.load(ptx)?;
//! let vadd = module.function("vadd")?;
//! let (a, b) = (jit.upload(&[1.0f32; 1000])?, jit.upload(&[2.0f32; 1000])?);
//! let mut c = jit.alloc_zeros::<f32>(1000)?;
//! // SAFETY: this `vadd` reads and writes f32 elements below its last argument, 1000, the
//! // length of the three buffers, and writes only `c`.
//! unsafe {
//!     vadd.launch(
//!         &Launch::linear(1000, 256),
//!         &[jit.buffer(&a), jit.buffer(&b), jit.buffer_mut(&mut c), KernelArg::U32(1000)],
//!     )?;
//! }
//! let sum = jit.download(&c)?;
//! # Ok(()) }
//! ```
//!
//! Its arguments take scalars, buffers borrowed for the call ([`Jit::buffer`] for what the
//! kernel reads, [`Jit::buffer_mut`] for what it writes) and tensor maps encoded over a borrowed
//! buffer ([`Jit::tensor_map`], [`Jit::tensor_map_mut`]); an address cannot be forged from an
//! integer without `unsafe` ([`KernelArg::raw_pointer`](crate::jit::KernelArg::raw_pointer),
//! [`TensorMap::encode_tiled_raw`](crate::jit::TensorMap::encode_tiled_raw)):
//!
//! ```compile_fail,E0133
//! # fn f(f: &codegen_ptx::jit::JitFunction) {
//! // The untyped launch of arbitrary PTX needs an unsafe block.
//! let _ = f.launch(&codegen_ptx::jit::Launch::linear(1, 1), &[]);
//! # }
//! ```
//! ```compile_fail
//! let forged = codegen_ptx::jit::KernelArg::Ptr(0x1000); // the old safe forge: gone
//! ```
//! ```compile_fail
//! use codegen_ptx::jit::{DevicePointer, KernelArg};
//! let forged = KernelArg::Pointer(DevicePointer { address: 0x1000 }); // private fields
//! ```
//! ```compile_fail,E0133
//! let forged = codegen_ptx::jit::KernelArg::raw_pointer(0x1000); // needs an unsafe block
//! ```
//! ```
//! // The same call compiles in an unsafe block, whose contract the caller then takes on.
//! let raw = unsafe { codegen_ptx::jit::KernelArg::raw_pointer(0x1000) };
//! assert_eq!(raw.address(), Some(0x1000));
//! ```
//!
//! Launches, copies and allocations of a `Jit` go to its one stream [`Jit::stream`]; buffers
//! allocated elsewhere (another `Jit`, another stream of the context) are ordered with it by
//! cudarc's event tracking, which stays on, and those it cannot order are refused (see
//! [`admit`](crate::jit::admit)).
//!
//! [`Jit::buffer`]: crate::jit::Jit::buffer
//! [`Jit::buffer_mut`]: crate::jit::Jit::buffer_mut
//! [`Jit::tensor_map`]: crate::jit::Jit::tensor_map
//! [`Jit::tensor_map_mut`]: crate::jit::Jit::tensor_map_mut
//! [`Jit::stream`]: crate::jit::Jit::stream
#![warn(missing_docs)]

mod args;
mod buffer;
mod context;
mod device;
mod error;
mod launch;
mod module;
mod owner;
mod signature;
mod tensor_map;
mod tensor_map_spec;
mod timing;
mod typed;

pub use args::{check_args, KernelArg};
pub use buffer::{AnyBitPattern, DeviceBuffer, DeviceBufferMut, DevicePointer};
pub use device::Jit;
pub use error::JitError;
pub use launch::{
    validate_for_kernel, validate_launch, DeviceLimits, KernelFacts, Launch, LaunchError,
    MAX_NON_PORTABLE_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE,
};
pub use module::{ptx_entries, ptx_hash, JitFunction, JitModule};
pub use owner::{admit, BufferOwner, ForeignBuffer, ForeignReason};
pub use signature::{
    ptx_signature, ptx_signatures, PtxClass, PtxEntry, PtxParam, PtxParamKind, PtxScalar, PtxSpace,
    SignatureError,
};
pub use tensor_map::{TensorMap, TensorMapMut};
pub use tensor_map_spec::{
    tensor_map_spec, TensorMapError, TensorMapSpec, TmaDataType, TmaInterleave, TmaL2Promotion,
    TmaOobFill, TmaSwizzle,
};
pub use timing::{shuffled_order, Timing, MAX_SPIN_NS, SPIN_NS, SPIN_PTX};
pub use typed::{ScalarArg, TypedFunction, TypedLaunch};

/// cudarc itself, for what the wrappers here do not cover.
pub use cudarc;
/// The cudarc types tests and benches handle directly.
pub use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr,
    ValidAsZeroBits,
};
