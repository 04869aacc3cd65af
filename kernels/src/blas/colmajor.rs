//! cuBLAS's column-major GEMM as rute's row-major one: [`ColMajor`] (what `GemmConfig` and
//! `StridedBatchedConfig` say) mapped to the `m x n x k` and [`Form`] of a rute GEMM
//! ([`ColMajor::to_rute`]), checked as cuBLAS checks it.
//!
//! cuBLAS computes `C = alpha op(A) op(B) + beta C`, C column-major `m x n` with leading
//! dimension `ldc`. Read row-major, that memory is `C^T` (`n x m`, rows `ldc` apart), and `C^T =
//! op(B)^T op(A)^T`: rute's `D = A' B'^T` with `D = C^T`, `A' = op(B)^T` (`n x k`) and `B' = op(A)`
//! (`m x k`). So rute's M is cuBLAS's n, its N cuBLAS's m, its A the caller's B and its B the
//! caller's A; the operations fix the majors:
//!
//! | cuBLAS | rute's A (the caller's B, `n x k`) | rute's B (the caller's A, `m x k`) |
//! |--------|------------------------------------|------------------------------------|
//! | `transb = N` | K-major, `ld = ldb` (B is `k x n`, k contiguous) | |
//! | `transb = T` | MN-major, `ld = ldb` (B is `n x k`, n contiguous) | |
//! | `transa = T` | | K-major, `ld = lda` (A is `k x m`, k contiguous) |
//! | `transa = N` | | MN-major, `ld = lda` (A is `m x k`, m contiguous) |
//!
//! D and C are the caller's C, row-major with `ld = ldc`. `TN` (`transa = T`, `transb = N`) is
//! rute's packed form: both operands K-major.
//!
//! ```
//! use kernels::blas::colmajor::{ColMajor, Op};
//! use kernels::gemm::layout::Major;
//! let call = ColMajor { transa: Op::N, transb: Op::N, ..ColMajor::packed(Op::N, Op::N, 64, 32, 16) };
//! let rute = call.to_rute().unwrap().unwrap();
//! assert_eq!((rute.m, rute.n, rute.k), (32, 64, 16));
//! assert_eq!((rute.form.a.major, rute.form.b.major), (Major::K, Major::MN));
//! let bad = ColMajor { lda: 63, ..call };
//! assert_eq!(bad.to_rute().unwrap_err().to_string(),
//!            "lda = 63 is below 64, the rows of A (m = 64, transa = N) it steps over");
//! ```

use std::fmt;

use super::BlasError;
use crate::gemm::epilogue::{Elementwise, Epilogue, Source};
use crate::gemm::layout::{Batch, Form, FormError, Major, OperandLayout};

/// cuBLAS's operation on an operand (`CUBLAS_OP_C`, the conjugate transpose, is `T` for real
/// types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// As stored.
    N,
    /// Transposed.
    T,
}

impl Op {
    /// Every transpose pair `(transa, transb)` a call can take: NN, NT, TN, TT.
    pub const PAIRS: [(Op, Op); 4] = [
        (Op::N, Op::N),
        (Op::N, Op::T),
        (Op::T, Op::N),
        (Op::T, Op::T),
    ];
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::N => "N",
            Op::T => "T",
        })
    }
}

/// A column-major GEMM as cuBLAS takes it: `C = alpha op(A) op(B) + beta C`, `op(A)` `m x k`,
/// `op(B)` `k x n`, C `m x n`; a strided batch of `batch` of them (1 for one GEMM, whose strides
/// are unused). Integers as cuBLAS's C types hold them (`int`, `long long`), widened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColMajor {
    /// A's operation.
    pub transa: Op,
    /// B's operation.
    pub transb: Op,
    /// Rows of `op(A)` and C.
    pub m: i64,
    /// Columns of `op(B)` and C.
    pub n: i64,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: i64,
    /// `alpha`.
    pub alpha: f32,
    /// A's leading dimension.
    pub lda: i64,
    /// B's leading dimension.
    pub ldb: i64,
    /// `beta`.
    pub beta: f32,
    /// C's leading dimension.
    pub ldc: i64,
    /// GEMMs in the batch.
    pub batch: i64,
    /// Elements between consecutive A matrices.
    pub stride_a: i64,
    /// Elements between consecutive B matrices.
    pub stride_b: i64,
    /// Elements between consecutive C matrices.
    pub stride_c: i64,
}

/// A column-major call as rute runs it: rute's `m x n x k` and [`Form`], whose A is the
/// caller's B and whose B is the caller's A (see the module's docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuteCall {
    /// rute's M: cuBLAS's n.
    pub m: usize,
    /// rute's N: cuBLAS's m.
    pub n: usize,
    /// K.
    pub k: usize,
    /// The form: majors, leading dimensions, batch, alpha and beta.
    pub form: Form,
}

impl ColMajor {
    /// One packed GEMM: leading dimensions the least cuBLAS takes, alpha 1, beta 0.
    pub fn packed(transa: Op, transb: Op, m: i64, n: i64, k: i64) -> ColMajor {
        let rows = |op: Op, n_rows: i64, t_rows: i64| match op {
            Op::N => n_rows,
            Op::T => t_rows,
        };
        ColMajor {
            transa,
            transb,
            m,
            n,
            k,
            alpha: 1.0,
            lda: rows(transa, m, k).max(1),
            ldb: rows(transb, k, n).max(1),
            beta: 0.0,
            ldc: m.max(1),
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
        }
    }

    /// The rute call, `None` where cuBLAS returns at once (m, n or the batch 0), or the
    /// argument cuBLAS refuses ([`BlasError::InvalidValue`]: a negative dimension, a leading
    /// dimension below the rows it steps over, a negative batch) or rute does
    /// ([`BlasError::InvalidValue`] for batches whose C matrices overlap, whose result cuBLAS
    /// leaves undefined; [`BlasError::NotSupported`] for negative batch strides).
    pub fn to_rute(&self) -> Result<Option<RuteCall>, BlasError> {
        let invalid = |reason: String| Err(BlasError::InvalidValue { reason });
        for (name, v) in [("m", self.m), ("n", self.n), ("k", self.k)] {
            if v < 0 {
                return invalid(format!("{name} = {v} is negative"));
            }
        }
        if self.batch < 0 {
            return invalid(format!("the batch count {} is negative", self.batch));
        }
        let rows_a = match self.transa {
            Op::N => ("m", self.m),
            Op::T => ("k", self.k),
        };
        let rows_b = match self.transb {
            Op::N => ("k", self.k),
            Op::T => ("n", self.n),
        };
        let checks = [
            (
                "lda",
                self.lda,
                rows_a.1,
                format!("A ({} = {}, transa = {})", rows_a.0, rows_a.1, self.transa),
            ),
            (
                "ldb",
                self.ldb,
                rows_b.1,
                format!("B ({} = {}, transb = {})", rows_b.0, rows_b.1, self.transb),
            ),
            ("ldc", self.ldc, self.m, format!("C (m = {})", self.m)),
        ];
        for (name, ld, rows, what) in checks {
            if ld < rows.max(1) {
                return invalid(format!(
                    "{name} = {ld} is below {}, the rows of {what} it steps over",
                    rows.max(1)
                ));
            }
        }
        if self.m == 0 || self.n == 0 || self.batch == 0 {
            return Ok(None);
        }
        let batched = self.batch > 1;
        if batched {
            for (name, s) in [
                ("stride_a", self.stride_a),
                ("stride_b", self.stride_b),
                ("stride_c", self.stride_c),
            ] {
                if s < 0 {
                    return Err(BlasError::NotSupported {
                        reason: format!(
                            "{name} = {s} is negative; rute takes strides of 0 or more"
                        ),
                    });
                }
            }
        }
        let size = |v: i64| -> Result<usize, BlasError> {
            usize::try_from(v).map_err(|_| BlasError::InvalidValue {
                reason: format!("{v} is past what this machine addresses"),
            })
        };
        let stride = |s: i64| if batched { size(s) } else { Ok(0) };
        let (m, n, k) = (size(self.n)?, size(self.m)?, size(self.k)?);
        let major = |op: Op, k_major_when: Op| {
            if op == k_major_when {
                Major::K
            } else {
                Major::MN
            }
        };
        let epilogue = if self.alpha == 1.0 && self.beta == 0.0 {
            Epilogue::Plain
        } else {
            Epilogue::Elementwise(Elementwise {
                source: if self.beta == 0.0 {
                    Source::None
                } else {
                    Source::C
                },
                ..Elementwise::IDENTITY
            })
        };
        let ldc = size(self.ldc)?;
        let stride_c = stride(self.stride_c)?;
        let form = Form {
            a: OperandLayout {
                major: major(self.transb, Op::N),
                ld: size(self.ldb)?,
            },
            b: OperandLayout {
                major: major(self.transa, Op::T),
                ld: size(self.lda)?,
            },
            ldc,
            ldd: ldc,
            ldr: ldc,
            batch: Batch {
                count: size(self.batch)?,
                a: stride(self.stride_b)?,
                b: stride(self.stride_a)?,
                c: stride_c,
                d: stride_c,
                residual: 0,
            },
            epilogue,
            alpha: self.alpha,
            beta: self.beta,
            out: None,
            base_align: crate::gemm::layout::ALLOCATION_ALIGN,
        };
        form.check(m, n, k).map_err(|e| match e {
            FormError::OverlappingOutputs {
                count,
                stride,
                span,
            } => BlasError::InvalidValue {
                reason: format!(
                    "the batch's {count} C matrices are stride_c = {stride} elements apart and \
                     each spans {span}: they overlap, and cuBLAS leaves the result undefined"
                ),
            },
            other => BlasError::InvalidValue {
                reason: other.to_string(),
            },
        })?;
        Ok(Some(RuteCall { m, n, k, form }))
    }
}

/// The column-major GEMM on the host in f64, as cuBLAS defines it: `c` overwritten with
/// `alpha op(A) op(B) + beta C` for each batch (C not read where beta is 0), only inside the
/// `m x n` extents. A test's reference.
///
/// # Panics
///
/// On a call [`ColMajor::to_rute`] refuses, or buffers shorter than it reads.
pub fn colmajor_reference(call: &ColMajor, a: &[f64], b: &[f64], c: &mut [f64]) {
    let u = |v: i64| usize::try_from(v).expect("a call to_rute takes");
    let (m, n, k) = (u(call.m), u(call.n), u(call.k));
    let (lda, ldb, ldc) = (u(call.lda), u(call.ldb), u(call.ldc));
    let op_a = |bi: usize, r: usize, kk: usize| {
        let base = bi * u(call.stride_a);
        match call.transa {
            Op::N => a[base + r + kk * lda],
            Op::T => a[base + kk + r * lda],
        }
    };
    let op_b = |bi: usize, kk: usize, col: usize| {
        let base = bi * u(call.stride_b);
        match call.transb {
            Op::N => b[base + kk + col * ldb],
            Op::T => b[base + col + kk * ldb],
        }
    };
    for bi in 0..u(call.batch) {
        for col in 0..n {
            for r in 0..m {
                let sum: f64 = (0..k).map(|kk| op_a(bi, r, kk) * op_b(bi, kk, col)).sum();
                let at = bi * u(call.stride_c) + r + col * ldc;
                let mut v = f64::from(call.alpha) * sum;
                if call.beta != 0.0 {
                    v += f64::from(call.beta) * c[at];
                }
                c[at] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::reference::{reference, Inputs};

    /// Values with few significant bits, so that every product and sum is exact in f64 and the
    /// two references' different orders of summation give the same bits.
    fn values(seed: u64, len: usize) -> Vec<f64> {
        let mut s = seed | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) % 17) as f64 - 8.0
            })
            .collect()
    }

    /// Every transpose pair, leading dimension, scalar and batch stride of small shapes: cuBLAS's
    /// column-major result equals rute's row-major one of the mapped call, bit for bit, and
    /// neither writes the elements of C between `m` and `ldc`.
    #[test]
    fn the_mapping_computes_what_cublas_does() {
        let mut cases = 0;
        for (transa, transb) in Op::PAIRS {
            for (m, n, k) in [(1, 1, 1), (3, 2, 5), (4, 7, 3), (5, 5, 8), (2, 6, 0)] {
                for pad in [0, 3] {
                    for (alpha, beta) in [(1.0, 0.0), (2.0, 0.0), (1.0, 1.0), (-0.5, 2.0)] {
                        for (batch, extra) in [(1, 0), (3, 0), (2, 5)] {
                            check_case(transa, transb, (m, n, k), pad, alpha, beta, batch, extra);
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 4 * 5 * 2 * 4 * 3);
    }

    #[allow(clippy::too_many_arguments)]
    fn check_case(
        transa: Op,
        transb: Op,
        (m, n, k): (i64, i64, i64),
        pad: i64,
        alpha: f32,
        beta: f32,
        batch: i64,
        extra: i64,
    ) {
        let base = ColMajor::packed(transa, transb, m, n, k);
        let (lda, ldb, ldc) = (base.lda + pad, base.ldb + pad, base.ldc + pad);
        let cols = |op: Op, n_cols: i64, t_cols: i64| match op {
            Op::N => n_cols,
            Op::T => t_cols,
        };
        let span_a = lda * cols(transa, k, m);
        let span_b = ldb * cols(transb, n, k);
        let span_c = ldc * n;
        let call = ColMajor {
            alpha,
            beta,
            lda,
            ldb,
            ldc,
            batch,
            stride_a: span_a + extra,
            // A shared B when batched without extra room: stride 0.
            stride_b: if extra == 0 { 0 } else { span_b + extra },
            stride_c: span_c + extra,
            ..base
        };
        let len = |span: i64, stride: i64| ((batch - 1) * stride + span).max(1) as usize;
        let a = values(1 + m as u64, len(span_a, call.stride_a));
        let b = values(2 + n as u64, len(span_b, call.stride_b));
        let c0 = values(3 + k as u64, len(span_c, call.stride_c));
        let mut want = c0.clone();
        colmajor_reference(&call, &a, &b, &mut want);
        let what = format!("{call:?}");
        let rute = call.to_rute().unwrap().expect(&what);
        assert_eq!(
            (rute.m, rute.n, rute.k),
            (n as usize, m as usize, k as usize)
        );
        let spans = rute.form.spans(rute.m, rute.n, rute.k).unwrap();
        // rute's A is the caller's B, its B the caller's A.
        assert!(spans.a <= b.len() && spans.b <= a.len(), "{what}");
        assert!(spans.d <= c0.len() && spans.c <= c0.len(), "{what}");
        let mut got = c0.clone();
        let inputs = Inputs {
            a: &b,
            b: &a,
            c: &c0,
            ..Inputs::default()
        };
        reference((rute.m, rute.n, rute.k), &rute.form, &inputs, &mut got);
        assert_eq!(got, want, "{what}");
        // The padding of C keeps its values in both.
        for bi in 0..batch {
            for col in 0..n {
                for r in m..ldc {
                    let at = (bi * call.stride_c + col * ldc + r) as usize;
                    assert_eq!(got[at], c0[at], "{what}: padding at {at}");
                }
            }
        }
    }

    #[test]
    fn refusals_are_cublas_statuses_with_sentences() {
        let ok = ColMajor::packed(Op::T, Op::N, 8, 8, 8);
        let cases = [
            (ColMajor { m: -1, ..ok }, "m = -1 is negative"),
            (
                ColMajor { lda: 7, ..ok },
                "lda = 7 is below 8, the rows of A (k = 8, transa = T) it steps over",
            ),
            (
                ColMajor {
                    transb: Op::T,
                    ldb: 3,
                    ..ok
                },
                "ldb = 3 is below 8, the rows of B (n = 8, transb = T) it steps over",
            ),
            (
                ColMajor { ldc: 0, ..ok },
                "ldc = 0 is below 8, the rows of C (m = 8) it steps over",
            ),
            (
                ColMajor { batch: -2, ..ok },
                "the batch count -2 is negative",
            ),
            (
                ColMajor {
                    batch: 2,
                    stride_c: 10,
                    ..ok
                },
                "the batch's 2 C matrices are stride_c = 10 elements apart and each spans 64: \
                 they overlap, and cuBLAS leaves the result undefined",
            ),
        ];
        for (call, want) in cases {
            let e = call.to_rute().unwrap_err();
            assert!(matches!(e, BlasError::InvalidValue { .. }), "{e:?}");
            assert_eq!(e.to_string(), want);
        }
        let e = ColMajor {
            batch: 2,
            stride_a: -64,
            stride_c: 64,
            ..ok
        }
        .to_rute()
        .unwrap_err();
        assert!(matches!(e, BlasError::NotSupported { .. }), "{e:?}");
        // Nothing to do: cuBLAS returns at once.
        for empty in [
            ColMajor { m: 0, ..ok },
            ColMajor { n: 0, ..ok },
            ColMajor { batch: 0, ..ok },
        ] {
            assert_eq!(empty.to_rute().unwrap(), None);
        }
        // k = 0 is a GEMM: C = beta C.
        assert!(ColMajor { k: 0, ..ok }.to_rute().unwrap().is_some());
    }

    #[test]
    fn tn_is_the_packed_form_and_scalars_pick_the_epilogue() {
        let tn = ColMajor::packed(Op::T, Op::N, 64, 48, 32)
            .to_rute()
            .unwrap()
            .unwrap();
        assert!(tn.form.is_packed(48, 64, 32, crate::gemm::GemmDtype::F16));
        let scaled = ColMajor {
            alpha: 0.5,
            ..ColMajor::packed(Op::T, Op::N, 64, 48, 32)
        };
        let r = scaled.to_rute().unwrap().unwrap();
        assert!(!r.form.epilogue.reads_c());
        assert!(matches!(r.form.epilogue, Epilogue::Elementwise(_)));
        let accumulate = ColMajor {
            beta: 1.0,
            ..scaled
        };
        assert!(accumulate
            .to_rute()
            .unwrap()
            .unwrap()
            .form
            .epilogue
            .reads_c());
    }
}

#[cfg(test)]
mod plans {
    use super::*;
    use crate::gemm::{check_form, Accum, Device, FormLens, GemmDtype, KernelChoice, Problem};

    /// The program each transpose pair and leading dimension runs on the H200: the Hopper
    /// program for every pair whose leading dimensions give rows of 16 bytes (an MN-major
    /// operand staged MN-major), the multistage one where they do not.
    #[test]
    fn every_transpose_pair_plans_a_tensor_core_program() {
        for op in Op::PAIRS {
            for pad in [0, 1, 8] {
                let base = ColMajor::packed(op.0, op.1, 4096, 4096, 4096);
                let call = ColMajor {
                    lda: base.lda + pad,
                    ldb: base.ldb + pad,
                    ldc: base.ldc + pad,
                    beta: 1.0,
                    ..base
                };
                let plan = plan_of(&call, GemmDtype::Bf16);
                let want = if pad == 1 { "multistage" } else { "hopper_ws" };
                assert_eq!(
                    plan.program(),
                    want,
                    "{op:?} pad {pad}: {}",
                    plan.describe()
                );
            }
        }
    }

    /// The plan of `call` with elements of `dtype` on the H200, for buffers as long as it
    /// reaches.
    fn plan_of(call: &ColMajor, dtype: GemmDtype) -> crate::gemm::Plan {
        let r = call.to_rute().unwrap().unwrap();
        let s = r.form.spans(r.m, r.n, r.k).unwrap();
        let p = Problem {
            m: r.m,
            n: r.n,
            k: r.k,
            dtype,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            config: None,
        };
        let lens = FormLens {
            a: s.a,
            b: s.b,
            c: s.c,
            d: s.d,
            ..FormLens::default()
        };
        check_form(&p, &r.form, lens, &Device::h200()).unwrap()
    }

    /// A strided batch in every transpose pair, at the issue's shapes (16 x 1024^3 and
    /// attention's 64 x 512 x 512 x 128) and with C's matrices a gap apart, runs in one launch
    /// of the Hopper program on the H200; a batch stride TMA cannot step by goes to the
    /// multistage program, which says why.
    #[test]
    fn strided_batches_plan_one_hopper_launch() {
        for op in Op::PAIRS {
            for (batch, (m, n, k), gap) in [(16, (1024, 1024, 1024), 0), (64, (512, 512, 128), 8)] {
                let call = ColMajor {
                    batch,
                    stride_a: m * k,
                    stride_b: k * n,
                    stride_c: m * n + gap,
                    beta: if gap > 0 { 0.5 } else { 0.0 },
                    ..ColMajor::packed(op.0, op.1, m, n, k)
                };
                let plan = plan_of(&call, GemmDtype::F16);
                assert_eq!(plan.program(), "hopper_ws", "{op:?}: {}", plan.describe());
                assert!(plan.describe().contains("a strided batch in one launch"));
                let odd = ColMajor {
                    stride_a: m * k + 4,
                    ..call
                };
                let plan = plan_of(&odd, GemmDtype::F16);
                assert_eq!(plan.program(), "multistage", "{op:?}: {}", plan.describe());
                let why = plan.fallback().unwrap_or_default();
                assert!(why.contains("batch stride of"), "{why}");
            }
        }
    }
}
