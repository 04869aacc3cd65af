//! [`Blas`]: cudarc's `Gemm<f16>` and `Gemm<bf16>` on rute's kernels.

use std::sync::{Arc, Mutex};

use codegen_ptx::jit::{CudaStream, DevicePtr, DevicePtrMut, Jit};
use cudarc::cublas::result::CublasError;
use cudarc::cublas::sys::{cublasOperation_t, cublasStatus_t};
use cudarc::cublas::{Gemm as CublasGemm, GemmConfig, StridedBatchedConfig};
use half::{bf16, f16};

use super::colmajor::{ColMajor, Op, RuteCall};
use super::{BlasError, BlasStatus};
use crate::gemm::strided::OutElem;
use crate::gemm::{
    Accum, Gemm, GemmElem, GemmError, KernelChoice, Plan, Problem, RawBuffer, RawBuffers,
};

/// A BLAS handle on rute's kernels: made like cudarc's `CudaBlas` (on a stream), it implements
/// cudarc's `Gemm<half::f16>` and `Gemm<half::bf16>` with cuBLAS's column-major semantics
/// (transposes, leading dimensions, alpha and beta, strided batches), so that code written
/// against `CudaBlas` runs rute's kernels by changing the handle's type. Work goes to the stream
/// it was made on. Errors are cudarc's `CublasError` with cuBLAS's statuses; the sentence that
/// says what was refused and why is [`Blas::last_error`] (or the `Result` of the `try_`
/// calls).
///
/// ```no_run
/// use cudarc::cublas::{Gemm, GemmConfig};
/// use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
/// use cudarc::driver::CudaContext;
/// use half::f16;
/// use kernels::Blas;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// let blas = Blas::new(stream.clone())?; // was: CudaBlas::new(stream.clone())?
/// let (m, n, k) = (64, 48, 32);
/// let a = stream.clone_htod(&vec![f16::ONE; m * k])?;
/// let b = stream.clone_htod(&vec![f16::ONE; k * n])?;
/// let mut c = stream.alloc_zeros::<f16>(m * n)?;
/// let cfg = GemmConfig {
///     transa: CUBLAS_OP_N, transb: CUBLAS_OP_N,
///     m: m as i32, n: n as i32, k: k as i32,
///     alpha: f16::ONE, lda: m as i32, ldb: k as i32,
///     beta: f16::ZERO, ldc: m as i32,
/// };
/// // SAFETY: a, b and c hold the m x k, k x n and m x n matrices the configuration describes.
/// unsafe { blas.gemm(cfg, &a, &b, &mut c) }?;
/// let c = stream.clone_dtoh(&c)?;
/// assert!(c.iter().all(|x| x.to_f32() == k as f32));
/// # Ok(()) }
/// ```
pub struct Blas {
    gemm: Gemm<'static>,
    last_error: Mutex<Option<Arc<BlasError>>>,
}

impl std::fmt::Debug for Blas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blas").field("gemm", &self.gemm).finish()
    }
}

/// An element type the handle multiplies: `half::f16` or `half::bf16`.
pub trait BlasElem: GemmElem + OutElem + codegen_ptx::jit::DeviceRepr {}
impl BlasElem for f16 {}
impl BlasElem for bf16 {}

impl Blas {
    /// A handle whose work goes to `stream` (as `CudaBlas::new`). Fails with
    /// `CUBLAS_STATUS_NOT_SUPPORTED` on a driver older than CUDA 12.0 or a device older than
    /// sm_80 ([`Blas::try_new`] says which).
    pub fn new(stream: Arc<CudaStream>) -> Result<Blas, CublasError> {
        Blas::try_new(stream).map_err(|e| e.to_cublas())
    }

    /// [`Blas::new`], its error a sentence.
    pub fn try_new(stream: Arc<CudaStream>) -> Result<Blas, BlasError> {
        let jit = Jit::on_stream(stream).map_err(|e| BlasError::NotSupported {
            reason: e.to_string(),
        })?;
        let gemm = Gemm::on(Arc::new(jit)).map_err(|e| match e {
            GemmError::DeviceTooOld { .. } => BlasError::NotSupported {
                reason: e.to_string(),
            },
            other => BlasError::Runtime(other),
        })?;
        Ok(Blas {
            gemm,
            last_error: Mutex::new(None),
        })
    }

    /// The same handle running every call in the schedule spelled `spelling` (a program's
    /// `rute gemm --config`, e.g. a `hopper_ws` schedule to time beside its default) instead
    /// of the program's default for the shape; a call that no program runs in it is refused
    /// with the reason ([`Gemm::with_config`]).
    pub fn with_config(self, spelling: &str) -> Result<Blas, BlasError> {
        let gemm = self
            .gemm
            .with_config(spelling)
            .map_err(|e| BlasError::InvalidValue {
                reason: e.to_string(),
            })?;
        Ok(Blas { gemm, ..self })
    }

    /// The runtime it plans and launches with (its device, compiled plans and tuning records).
    pub fn runtime(&self) -> &Gemm<'static> {
        &self.gemm
    }

    /// The stream its work goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.gemm.jit().stream()
    }

    /// The error of the last call through cudarc's `Gemm` trait that failed, with its sentence;
    /// `None` before any did.
    pub fn last_error(&self) -> Option<Arc<BlasError>> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Keeps `r`'s error for [`Blas::last_error`] and returns it as cuBLAS's status.
    fn record(&self, r: Result<(), BlasError>) -> Result<(), CublasError> {
        match r {
            Ok(()) => Ok(()),
            Err(e) => {
                let status = e.to_cublas();
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(e));
                Err(status)
            }
        }
    }

    /// `C = alpha op(A) op(B) + beta C` as [`ColMajor`] describes it (one GEMM or a strided
    /// batch): the plan it ran, or why it did not run (nothing is queued then). `None`-like
    /// calls (m, n or the batch 0) run nothing and return `Ok(None)`.
    ///
    /// # Safety
    ///
    /// As cuBLAS's: `a`, `b` and `c` hold the matrices the call describes (their lengths are
    /// checked against what it reads and writes, their contents are not), and `c` overlaps
    /// neither `a` nor `b`.
    pub unsafe fn try_gemm<T: BlasElem, A: DevicePtr<T>, B: DevicePtr<T>, C: DevicePtrMut<T>>(
        &self,
        call: &ColMajor,
        a: &A,
        b: &B,
        c: &mut C,
    ) -> Result<Option<Plan>, BlasError> {
        let Some(rute) = call.to_rute()? else {
            return Ok(None);
        };
        let jit = self.gemm.jit();
        for (name, stream) in [("A", a.stream()), ("B", b.stream()), ("C", c.stream())] {
            if stream.context().cu_ctx() != jit.context().cu_ctx() {
                return Err(BlasError::InvalidValue {
                    reason: format!(
                        "{name} belongs to another CUDA context than the handle's stream"
                    ),
                });
            }
        }
        let (a_len, b_len, c_len) = (a.len(), b.len(), c.len());
        let stream = jit.stream();
        // The guards order this stream after the buffers' earlier uses and record this one
        // once dropped, after the launch is queued (as CudaBlas does).
        let (pa, _ga) = a.device_ptr(stream);
        let (pb, _gb) = b.device_ptr(stream);
        let (pc, _gc) = c.device_ptr_mut(stream);
        let elem = std::mem::size_of::<T>() as u64;
        let spans =
            rute.form
                .spans(rute.m, rute.n, rute.k)
                .map_err(|e| BlasError::InvalidValue {
                    reason: e.to_string(),
                })?;
        // rute's A is the caller's B, its B the caller's A (see `colmajor`).
        let ranges = [
            ("A", pa, spans.b as u64 * elem),
            ("B", pb, spans.a as u64 * elem),
        ];
        let c_range = (pc, pc + spans.d as u64 * elem);
        for (name, start, bytes) in ranges {
            if bytes > 0 && start < c_range.1 && c_range.0 < start + bytes {
                return Err(BlasError::InvalidValue {
                    reason: format!("C overlaps {name}: the GEMM would read what it writes"),
                });
            }
        }
        let buffers = RawBuffers {
            a: RawBuffer {
                address: pb,
                len: b_len,
            },
            b: RawBuffer {
                address: pa,
                len: a_len,
            },
            c: RawBuffer {
                address: pc,
                len: c_len,
            },
            d: RawBuffer {
                address: pc,
                len: c_len,
            },
            ..RawBuffers::default()
        };
        let RuteCall { m, n, k, form } = rute;
        let problem = Problem {
            m,
            n,
            k,
            dtype: T::DTYPE,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            config: None,
        };
        // SAFETY: the caller's contract (cuBLAS's): the buffers are live allocations in this
        // context (checked above) of the lengths cudarc reports, ordered on this stream by the
        // guards held to the end of the call; C is D and overlaps neither A nor B (checked).
        let plan = unsafe { self.gemm.run_raw::<T, T>(&problem, &form, &buffers) }.map_err(
            |e| match e {
                GemmError::Input(i) => BlasError::InvalidValue {
                    reason: i.to_string(),
                },
                other => BlasError::Runtime(other),
            },
        )?;
        Ok(Some(plan))
    }

    /// The plan a call would run, without running it: what [`Blas::try_gemm`] would launch for
    /// `call` on buffers of the lengths its spans need, at addresses aligned as the driver
    /// allocates (256 bytes). `Ok(None)` for a call that runs nothing.
    pub fn plan_for<T: BlasElem>(&self, call: &ColMajor) -> Result<Option<Plan>, BlasError> {
        let Some(RuteCall { m, n, k, form }) = call.to_rute()? else {
            return Ok(None);
        };
        let spans = form.spans(m, n, k).map_err(|e| BlasError::InvalidValue {
            reason: e.to_string(),
        })?;
        let at = |len: usize| RawBuffer {
            address: 1 << 40,
            len,
        };
        let buffers = RawBuffers {
            a: at(spans.a),
            b: at(spans.b),
            c: at(spans.c),
            d: at(spans.d),
            ..RawBuffers::default()
        };
        let problem = Problem {
            m,
            n,
            k,
            dtype: T::DTYPE,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            config: None,
        };
        let (plan, _) =
            self.gemm
                .plan_raw(&problem, &form, &buffers)
                .map_err(|e| BlasError::InvalidValue {
                    reason: e.to_string(),
                })?;
        Ok(Some(plan))
    }

    /// Compiles and loads, before any traffic, the kernel of every call in `calls` (a server's
    /// warm-up: the first call of a shape then costs a launch, not a compile), returning the
    /// plans. Nothing is launched.
    pub fn prepare<T: BlasElem>(&self, calls: &[ColMajor]) -> Result<Vec<Plan>, BlasError> {
        let mut plans = Vec::new();
        for call in calls {
            if let Some(plan) = self.plan_for::<T>(call)? {
                self.gemm.function(&plan)?;
                plans.push(plan);
            }
        }
        Ok(plans)
    }
}

impl BlasError {
    /// cudarc's `CublasError` of [`BlasError::status`].
    pub fn to_cublas(&self) -> CublasError {
        CublasError(match self.status() {
            BlasStatus::InvalidValue => cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE,
            BlasStatus::NotSupported => cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
            BlasStatus::ExecutionFailed => cublasStatus_t::CUBLAS_STATUS_EXECUTION_FAILED,
            BlasStatus::InternalError => cublasStatus_t::CUBLAS_STATUS_INTERNAL_ERROR,
        })
    }
}

/// cuBLAS's operation as [`Op`]: `OP_C` (conjugate transpose) is `T` for real types; any other
/// value is refused, as cuBLAS refuses it.
pub fn op_of(op: cublasOperation_t) -> Result<Op, BlasError> {
    match op {
        cublasOperation_t::CUBLAS_OP_N => Ok(Op::N),
        cublasOperation_t::CUBLAS_OP_T | cublasOperation_t::CUBLAS_OP_C => Ok(Op::T),
        other => Err(BlasError::InvalidValue {
            reason: format!("{other:?} is not an operation a real GEMM takes"),
        }),
    }
}

/// cudarc's `GemmConfig` as [`ColMajor`] (one GEMM).
pub fn from_config<T: BlasElem>(cfg: &GemmConfig<T>) -> Result<ColMajor, BlasError> {
    Ok(ColMajor {
        transa: op_of(cfg.transa)?,
        transb: op_of(cfg.transb)?,
        m: i64::from(cfg.m),
        n: i64::from(cfg.n),
        k: i64::from(cfg.k),
        alpha: cfg.alpha.to_f64() as f32,
        lda: i64::from(cfg.lda),
        ldb: i64::from(cfg.ldb),
        beta: cfg.beta.to_f64() as f32,
        ldc: i64::from(cfg.ldc),
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    })
}

/// cudarc's `StridedBatchedConfig` as [`ColMajor`].
pub fn from_strided<T: BlasElem>(cfg: &StridedBatchedConfig<T>) -> Result<ColMajor, BlasError> {
    Ok(ColMajor {
        batch: i64::from(cfg.batch_size),
        stride_a: cfg.stride_a,
        stride_b: cfg.stride_b,
        stride_c: cfg.stride_c,
        ..from_config(&cfg.gemm)?
    })
}

macro_rules! gemm_impl {
    ($($t:ty),*) => {$(
        impl CublasGemm<$t> for Blas {
            unsafe fn gemm<A: DevicePtr<$t>, B: DevicePtr<$t>, C: DevicePtrMut<$t>>(
                &self,
                cfg: GemmConfig<$t>,
                a: &A,
                b: &B,
                c: &mut C,
            ) -> Result<(), CublasError> {
                // SAFETY: the trait's contract is cuBLAS's, which `try_gemm` states.
                let r = from_config(&cfg)
                    .and_then(|call| unsafe { self.try_gemm(&call, a, b, c) })
                    .map(|_| ());
                self.record(r)
            }

            unsafe fn gemm_strided_batched<
                A: DevicePtr<$t>,
                B: DevicePtr<$t>,
                C: DevicePtrMut<$t>,
            >(
                &self,
                cfg: StridedBatchedConfig<$t>,
                a: &A,
                b: &B,
                c: &mut C,
            ) -> Result<(), CublasError> {
                // SAFETY: as `gemm`.
                let r = from_strided(&cfg)
                    .and_then(|call| unsafe { self.try_gemm(&call, a, b, c) })
                    .map(|_| ());
                self.record(r)
            }
        }
    )*};
}

gemm_impl!(f16, bf16);
