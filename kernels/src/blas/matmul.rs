//! [`Blas::matmul`]: the row-major API on the device (see [`super::rowmajor`] for the mapping).

use codegen_ptx::jit::{AnyBitPattern, CudaView, DeviceBuffer, DeviceBufferMut, KernelArg};

use super::rowmajor::{Matmul, Strided3};
use super::{Blas, BlasElem, BlasError};
use crate::gemm::epilogue::Epilogue;
use crate::gemm::strided::OutElem;
use crate::gemm::{Accum, GemmError, KernelChoice, Plan, Problem, RawBuffer, RawBuffers};

/// A row-major matrix operand of D's shape (C, the residual): its buffer, its row stride and
/// its batch stride, in elements.
#[derive(Debug)]
pub struct RowMajor<'a, O> {
    /// The buffer.
    pub data: CudaView<'a, O>,
    /// Elements between rows.
    pub ld: usize,
    /// Elements between batches (0: shared).
    pub batch_stride: usize,
}

/// What a row-major matmul fuses into its epilogue, with the epilogue's operands.
///
/// On sm_90a, an elementwise epilogue without C of a 16-bit D over a long enough K runs on
/// warps of its own, under the next tile's multiplications (the Hopper schedule's epilogue
/// warps, `_x`): `alpha * acc` is then rounded to D's type before the bias, the map and the
/// residual, as a GEMM followed by a separate elementwise kernel rounds it, so that D is within
/// about one and a half units in its last place of the exact result rather than half of one.
/// An epilogue that reads C, a gated one and an f32 D are computed from the f32 sums.
#[derive(Debug)]
pub struct Fusion<'a, O> {
    /// The epilogue.
    pub epilogue: Epilogue,
    /// `alpha`.
    pub alpha: f32,
    /// `beta`.
    pub beta: f32,
    /// C, for an epilogue that reads it; `None` reads D itself (accumulating in place).
    pub c: Option<RowMajor<'a, O>>,
    /// The bias, for an epilogue with one.
    pub bias: Option<CudaView<'a, O>>,
    /// The residual, for an epilogue that adds one.
    pub residual: Option<RowMajor<'a, O>>,
}

impl<O> Fusion<'_, O> {
    /// Nothing fused: `D = A @ B`.
    pub fn none() -> Self {
        Fusion::epilogue(Epilogue::Plain)
    }

    /// `epilogue` with alpha 1 and beta 0 and no operands yet.
    pub fn epilogue(epilogue: Epilogue) -> Self {
        Fusion {
            epilogue,
            alpha: 1.0,
            beta: 0.0,
            c: None,
            bias: None,
            residual: None,
        }
    }
}

/// A buffer's address and element count, its use ordered on the handle's stream for as long
/// as the argument lives.
fn raw(arg: &KernelArg<'_>, elem: usize) -> RawBuffer {
    match arg {
        KernelArg::Pointer(p) => RawBuffer {
            address: p.address(),
            len: p.bytes().unwrap_or(0) / elem,
        },
        _ => RawBuffer::default(),
    }
}

impl Blas {
    /// `D[b] = epilogue(A[b] @ B[b])` for every `b` of the batch, in row-major terms (see
    /// [`super::rowmajor`]): A `[batch, m, k]` and B `[batch, k, n]` as `a_view` and `b_view`
    /// describe them over their buffers (any strides where one inner stride is 1; a batch of 1
    /// broadcasts), D `[batch, m, n_out]` row-major with rows `d_ld` apart and batches packed
    /// after one another (`n_out` is `n`, or `n / 2` for a gated epilogue), of type `O`; the
    /// fusion's operands as it gives them. Queued on the handle's stream; returns the plan that
    /// ran (`None` for an empty D: nothing runs). Every buffer is checked against what the call reads or writes, and belongs to the
    /// handle's context, so the call is safe.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use half::bf16;
    /// use kernels::blas::rowmajor::Strided3;
    /// use kernels::blas::{Blas, Fusion};
    /// use kernels::gemm::epilogue::{Activation, Epilogue};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let stream = CudaContext::new(0)?.new_stream()?;
    /// let blas = Blas::try_new(stream.clone())?;
    /// // y = gelu(x w^T + bias): x [tokens, 4096], w [11008, 4096] (a linear layer's weight).
    /// let (tokens, hidden, ffn) = (512, 4096, 11008);
    /// let x = stream.alloc_zeros::<bf16>(tokens * hidden)?;
    /// let w = stream.alloc_zeros::<bf16>(ffn * hidden)?;
    /// let bias = stream.alloc_zeros::<bf16>(ffn)?;
    /// let mut y = stream.alloc_zeros::<bf16>(tokens * ffn)?;
    /// let wt = Strided3 { shape: [1, hidden, ffn], strides: [0, 1, hidden] }; // w transposed
    /// let fusion = Fusion {
    ///     bias: Some(bias.as_view()),
    ///     ..Fusion::epilogue(Epilogue::bias_act(Activation::GeluTanh))
    /// };
    /// let plan = blas.matmul(&x, Strided3::matrix(tokens, hidden), &w, wt, &mut y, ffn, &fusion)?;
    /// println!("{}", plan.unwrap().describe());
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn matmul<T, O, A, B, D>(
        &self,
        a: &A,
        a_view: Strided3,
        b: &B,
        b_view: Strided3,
        d: &mut D,
        d_ld: usize,
        fusion: &Fusion<'_, O>,
    ) -> Result<Option<Plan>, BlasError>
    where
        T: BlasElem,
        O: OutElem + AnyBitPattern,
        A: DeviceBuffer<T>,
        B: DeviceBuffer<T>,
        D: DeviceBufferMut<O>,
    {
        let call = Matmul {
            a: a_view,
            b: b_view,
            d_ld,
        };
        let (m, n, k, form) = call.to_rute()?;
        let cols = fusion.epilogue.out_cols(n);
        let form = crate::gemm::layout::Form {
            epilogue: fusion.epilogue,
            alpha: fusion.alpha,
            beta: fusion.beta,
            out: Some(O::OUT),
            ldc: fusion.c.as_ref().map_or(d_ld, |c| c.ld),
            ldr: fusion.residual.as_ref().map_or(d_ld, |r| r.ld),
            batch: crate::gemm::layout::Batch {
                c: fusion.c.as_ref().map_or(form.batch.d, |c| c.batch_stride),
                residual: fusion
                    .residual
                    .as_ref()
                    .map_or(form.batch.d, |r| r.batch_stride),
                ..form.batch
            },
            ..form
        };
        if m == 0 || cols == 0 || form.batch.count == 0 {
            return Ok(None);
        }
        let jit = self.runtime().jit();
        let foreign = |name: &str, e: codegen_ptx::jit::ForeignBuffer| BlasError::InvalidValue {
            reason: format!("{name} {e}"),
        };
        jit.check_buffer(a).map_err(|e| foreign("A", e))?;
        jit.check_buffer(b).map_err(|e| foreign("B", e))?;
        jit.check_buffer(d).map_err(|e| foreign("D", e))?;
        if let Some(c) = &fusion.c {
            jit.check_buffer(&c.data).map_err(|e| foreign("C", e))?;
        }
        if let Some(x) = &fusion.bias {
            jit.check_buffer(x).map_err(|e| foreign("the bias", e))?;
        }
        if let Some(r) = &fusion.residual {
            jit.check_buffer(&r.data)
                .map_err(|e| foreign("the residual", e))?;
        }
        let missing = |what: &str| BlasError::InvalidValue {
            reason: format!(
                "the epilogue ({}) reads {what}, and none was given",
                fusion.epilogue.describe()
            ),
        };
        if form.epilogue.bias().is_some() && fusion.bias.is_none() {
            return Err(missing("a bias"));
        }
        if form.epilogue.adds_residual() && fusion.residual.is_none() {
            return Err(missing("a residual"));
        }
        let (t, o) = (std::mem::size_of::<T>(), std::mem::size_of::<O>());
        // The arguments order the buffers' uses on the stream until they are dropped, after the
        // launch is queued.
        let (pa, pb) = (jit.buffer(a), jit.buffer(b));
        let c = fusion.c.as_ref().map(|c| jit.buffer(&c.data));
        let bias = fusion.bias.as_ref().map(|x| jit.buffer(x));
        let residual = fusion.residual.as_ref().map(|r| jit.buffer(&r.data));
        let pd = jit.buffer_mut(d);
        let d_raw = raw(&pd, o);
        let buffers = RawBuffers {
            a: raw(&pa, t),
            b: raw(&pb, t),
            // No C given: D itself, read in place.
            c: c.as_ref().map_or(d_raw, |c| raw(c, o)),
            d: d_raw,
            bias: bias.as_ref().map_or(RawBuffer::default(), |x| raw(x, o)),
            residual: residual
                .as_ref()
                .map_or(RawBuffer::default(), |x| raw(x, o)),
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
        // SAFETY: every buffer is a cudarc allocation (or a view into one: the sealed
        // DeviceBuffer) of this context (checked above) with the length it reports, which
        // run_raw checks against the form's spans; the arguments above order their uses on this
        // stream and record them when dropped, after the launch; D is borrowed mutably, so no
        // other operand aliases it except C where C is D itself.
        let plan =
            unsafe { self.runtime().run_raw::<T, O>(&problem, &form, &buffers) }.map_err(|e| {
                match e {
                    GemmError::Input(i) => BlasError::InvalidValue {
                        reason: i.to_string(),
                    },
                    other => BlasError::Runtime(other),
                }
            })?;
        drop((pa, pb, c, bias, residual, pd));
        Ok(Some(plan))
    }
}
