//! The reference: cuBLAS's `cublasGemmEx` with f16/bf16 operands and f32 compute, on the `Jit`'s
//! stream so that it orders with rute's launches and times with the same events.

use codegen_ptx::jit::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, Jit};
use cudarc::cublas::{result, sys, CudaBlas};

use super::check::{check_shapes, BufferLens};
use super::runtime::{check_same_context, GemmError};
use super::{GemmDtype, GemmElem};

/// A cuBLAS handle bound to one `Jit`'s stream.
#[derive(Debug)]
pub struct CublasRef<'j> {
    jit: &'j Jit,
    blas: CudaBlas,
}

impl<'j> CublasRef<'j> {
    /// Loads cuBLAS (libcublas, found at run time) and makes a handle on `jit`'s stream.
    pub fn new(jit: &'j Jit) -> Result<Self, GemmError> {
        // SAFETY: only tries to open the library by its usual names; cudarc's loader, which
        // panics when the library is missing, is reached only after this says it is there.
        if !unsafe { sys::is_culib_present() } {
            return Err(GemmError::Cublas(
                "the cuBLAS library (libcublas.so) is not installed on this machine".into(),
            ));
        }
        let blas = CudaBlas::new(jit.stream().clone())
            .map_err(|e| GemmError::Cublas(format!("cublasCreate failed: {e:?}")))?;
        Ok(CublasRef { jit, blas })
    }

    /// Queues `D (m x n) = A (m x k) * B (n x k)^T`, row-major as [`crate::gemm::GemmArgs`]
    /// describes, with f32 compute (`CUBLAS_COMPUTE_32F`) and D rounded to `T`. Shapes and
    /// lengths are checked as for rute's kernels, and buffers must be in the `Jit`'s context.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm<T: GemmElem + DeviceRepr>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        d: &mut CudaSlice<T>,
    ) -> Result<(), GemmError> {
        check_shapes(
            m,
            n,
            k,
            BufferLens {
                a: a.len(),
                b: b.len(),
                d: d.len(),
            },
        )?;
        check_same_context(self.jit, "A", a)?;
        check_same_context(self.jit, "B", b)?;
        check_same_context(self.jit, "D", d)?;
        // check_shapes bounded every dimension by i32::MAX.
        let int = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
        let (m, n, k) = (int(m), int(n), int(k));
        let ty = match T::DTYPE {
            GemmDtype::F16 => sys::cudaDataType_t::CUDA_R_16F,
            GemmDtype::Bf16 => sys::cudaDataType_t::CUDA_R_16BF,
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let stream = self.jit.stream();
        let (pa, _ra) = a.device_ptr(stream);
        let (pb, _rb) = b.device_ptr(stream);
        let (pd, _rd) = d.device_ptr_mut(stream);
        // cuBLAS is column-major: row-major D (m x n) is column-major D^T (n x m, ld n), and
        // D^T = B * A^T. Row-major B (n x k) read column-major is B^T (k x n, ld k), so op = T
        // gives B; row-major A (m x k) read column-major is A^T (k x m, ld k), op = N.
        //
        // SAFETY: the three pointers are live allocations this stream may use (checked above:
        // device_ptr ordered the stream after their last writes, and D's last reads, and the
        // guards record this use once the call is queued) with
        // exactly n*k, m*k and m*n elements of the type named by `ty` (checked above), which is
        // what these dimensions and leading dimensions address; alpha and beta are f32, as
        // COMPUTE_32F requires, and outlive the call; the handle's stream is the Jit's, which
        // orders the call after the work that wrote A and B.
        unsafe {
            result::gemm_ex(
                *self.blas.handle(),
                sys::cublasOperation_t::CUBLAS_OP_T,
                sys::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast(),
                pb as *const _,
                ty,
                k,
                pa as *const _,
                ty,
                k,
                (&beta as *const f32).cast(),
                pd as *mut _,
                ty,
                n,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| GemmError::Cublas(format!("cublasGemmEx failed: {e:?}")))
    }
}
