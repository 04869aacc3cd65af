//! codegen-ptx

/// The cudarc runtime: load PTX, launch kernels, build TMA descriptors (feature `jit`).
#[cfg(feature = "jit")]
pub mod jit;
