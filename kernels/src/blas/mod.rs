//! GEMM as Rust code calls BLAS: [`colmajor`] maps cuBLAS's column-major `GemmConfig` and
//! `StridedBatchedConfig` onto rute's row-major GEMM; with the feature `gpu`, `Blas` implements
//! cudarc's `cudarc::cublas::Gemm<half::f16>` and `Gemm<half::bf16>` on rute's kernels, so that
//! code written against `CudaBlas` runs them by changing the handle's type.
//!
//! A strided batch is one launch: on sm_90a the Hopper program's, whose walk runs over every
//! GEMM's tiles and whose TMA maps take the batch as a third coordinate (batch strides that are
//! multiples of 16 bytes and step past a matrix, or 0 for a shared operand:
//! [`crate::hopper::batch`]); otherwise the multistage program's, the batch along its grid.
//!
//! Errors are [`BlasError`]s: a sentence saying what was refused and why, and the
//! [`BlasStatus`] a cuBLAS user already handles (`CUBLAS_STATUS_INVALID_VALUE` for arguments
//! cuBLAS also refuses, `CUBLAS_STATUS_NOT_SUPPORTED` for a case rute does not cover). A case
//! rute does not cover is refused, never computed wrong.
//!
//! # What the first call costs
//!
//! A handle plans, generates and loads a kernel the first time it meets a shape and layout;
//! later calls of that kind only launch. Measured on an H200 (CUDA 13.0 driver, bf16, release
//! build), each case in a fresh process, from the call to its result (the CUDA context, which a
//! cuBLAS user pays too, not counted: 250-385 ms there):
//!
//! | first call | driver's compute cache cold | warm |
//! |---|---:|---:|
//! | TN 4096^3 (the Hopper program) | 349 ms | 26 ms |
//! | NN 4096^3 | 363 ms | 34 ms |
//! | an odd leading dimension (the multistage program) | 227 ms | 14 ms |
//! | a strided batch | 349 ms | 33 ms |
//! | a fused bias + GELU epilogue | 1032 ms | 47 ms |
//!
//! Cold, most of it is the driver compiling the PTX (about 320 ms for the plain Hopper
//! kernel); the driver keeps what it compiled in its cache (`~/.nv/ComputeCache`), so a second
//! process pays the warm column. Of a warm call, planning and generating the PTX take 12-19 ms.
//! With a warm driver cache every first call is under 50 ms, so rute keeps no cache of its own.
//! For comparison on the same H200: Triton compiles about 0.5 s per cold configuration; CuTe
//! DSL takes seconds per kernel cold. A server that wants no compile on its first request
//! calls `Blas::prepare` with the calls it expects (4 plans in 0.8 s cold; their first calls
//! then took 0.3-2.8 ms).

pub mod colmajor;
#[cfg(feature = "gpu")]
mod handle;
#[cfg(feature = "gpu")]
mod matmul;
pub mod rowmajor;

#[cfg(feature = "gpu")]
pub use handle::{from_config, from_strided, op_of, Blas, BlasElem};
#[cfg(feature = "gpu")]
pub use matmul::{Fusion, RowMajor};

use thiserror::Error;

/// The cuBLAS status a [`BlasError`] reports through cudarc's `CublasError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlasStatus {
    /// `CUBLAS_STATUS_INVALID_VALUE`: an argument cuBLAS also refuses.
    InvalidValue,
    /// `CUBLAS_STATUS_NOT_SUPPORTED`: a case rute does not cover.
    NotSupported,
    /// `CUBLAS_STATUS_EXECUTION_FAILED`: the device refused or failed the work.
    ExecutionFailed,
    /// `CUBLAS_STATUS_INTERNAL_ERROR`: a kernel could not be generated (a bug in rute).
    InternalError,
}

/// Why a BLAS call did not run.
#[derive(Debug, Error)]
pub enum BlasError {
    /// An argument cuBLAS refuses too (a negative dimension, a leading dimension below the rows
    /// it steps over, a buffer shorter than the call reads), or one whose result cuBLAS leaves
    /// undefined (a batch whose outputs overlap).
    #[error("{reason}")]
    InvalidValue {
        /// The argument and why, as a sentence.
        reason: String,
    },
    /// A call rute does not compute.
    #[error("{reason}")]
    NotSupported {
        /// What and why, as a sentence.
        reason: String,
    },
    /// The runtime failed: the device, the driver or generating a kernel.
    #[cfg(feature = "gpu")]
    #[error("{0}")]
    Runtime(#[from] crate::gemm::GemmError),
}

impl BlasError {
    /// The status cuBLAS would report.
    pub fn status(&self) -> BlasStatus {
        match self {
            BlasError::InvalidValue { .. } => BlasStatus::InvalidValue,
            BlasError::NotSupported { .. } => BlasStatus::NotSupported,
            #[cfg(feature = "gpu")]
            BlasError::Runtime(e) => runtime_status(e),
        }
    }
}

/// The status of a runtime error: inputs refused before launch are invalid values, kernels
/// that could not be made are internal errors, the rest failed executions.
#[cfg(feature = "gpu")]
fn runtime_status(e: &crate::gemm::GemmError) -> BlasStatus {
    use crate::gemm::GemmError as E;
    match e {
        E::Input(_) | E::Config(_) | E::ForeignBuffer { .. } | E::Misaligned { .. } => {
            BlasStatus::InvalidValue
        }
        E::DeviceTooOld { .. } => BlasStatus::NotSupported,
        E::Build { .. } | E::BadLaunch { .. } | E::Codegen { .. } => BlasStatus::InternalError,
        E::Jit(_) | E::Cublas(_) => BlasStatus::ExecutionFailed,
    }
}
