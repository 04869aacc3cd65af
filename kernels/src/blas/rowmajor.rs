//! The row-major API's mapping, for people who do not think in BLAS (as candle's `matmul`
//! takes tensors): `D[b] = A[b] @ B[b]` with A `[batch, m, k]` and B `[batch, k, n]` given by
//! their shapes and element strides (a transposed view is a stride, not a copy), D `[batch, m,
//! n]` row-major. [`Matmul::to_rute`] maps it onto rute's `D = A' B'^T`: A' is A, B' is B read
//! as `n x k`; each is K-major where its k stride is 1 and MN-major where its other inner
//! stride is; a batch stride of 0 shares the matrix between the batch.
//!
//! ```
//! use kernels::blas::rowmajor::{Matmul, Strided3};
//! use kernels::gemm::layout::Major;
//! // x [4, 128, 64] times a transposed weight: w is [n = 32, k = 64] in memory, seen as [64, 32].
//! let x = Strided3::packed([4, 128, 64]);
//! let wt = Strided3 { shape: [1, 64, 32], strides: [0, 1, 64] };
//! let call = Matmul { a: x, b: wt, d_ld: 32 };
//! let (m, n, k, form) = call.to_rute().unwrap();
//! assert_eq!((m, n, k), (128, 32, 64));
//! assert_eq!((form.a.major, form.b.major), (Major::K, Major::K));
//! assert_eq!((form.batch.count, form.batch.b), (4, 0));
//! ```

use super::BlasError;
use crate::gemm::layout::{Batch, Form, Major, OperandLayout};

/// A rank-3 strided view: `[batch, rows, cols]` and the element stride of each dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided3 {
    /// `[batch, rows, cols]`.
    pub shape: [usize; 3],
    /// Element strides of each.
    pub strides: [usize; 3],
}

impl Strided3 {
    /// A packed row-major `[batch, rows, cols]` tensor.
    pub fn packed(shape: [usize; 3]) -> Strided3 {
        let [_, rows, cols] = shape;
        Strided3 {
            shape,
            strides: [rows * cols, cols, 1],
        }
    }

    /// A packed row-major `rows x cols` matrix (a batch of one).
    pub fn matrix(rows: usize, cols: usize) -> Strided3 {
        Strided3::packed([1, rows, cols])
    }

    /// Elements from the first to one past the last (0 when empty).
    pub fn span(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .map(|(e, s)| (e - 1) * s)
            .sum::<usize>()
            + 1
    }
}

/// `D = A @ B` over a batch: A `[batch, m, k]`, B `[batch, k, n]` (a batch of 1 broadcasts),
/// D row-major `[batch, m, n]` with rows `d_ld` apart, batches packed after one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matmul {
    /// A.
    pub a: Strided3,
    /// B.
    pub b: Strided3,
    /// D's leading dimension (at least the output's columns).
    pub d_ld: usize,
}

impl Matmul {
    /// rute's `m`, `n`, `k` and form (operand layouts and batch; the epilogue plain, set it after),
    /// or why the shapes do not multiply ([`BlasError::InvalidValue`]) or an operand has
    /// neither inner stride 1 ([`BlasError::NotSupported`]: copy it first).
    pub fn to_rute(&self) -> Result<(usize, usize, usize, Form), BlasError> {
        let [ba, m, k] = self.a.shape;
        let [bb, kb, n] = self.b.shape;
        let invalid = |reason: String| Err(BlasError::InvalidValue { reason });
        if k != kb {
            return invalid(format!(
                "A is {m} x {k} and B is {kb} x {n}: A's columns must be B's rows"
            ));
        }
        if ba != bb && ba != 1 && bb != 1 {
            return invalid(format!(
                "A's batch of {ba} and B's of {bb} neither match nor broadcast"
            ));
        }
        let count = ba.max(bb);
        // A is m x k; B' = B read as n x k: (j, kk) at kk * B's row stride + j * its column's.
        let a = layout("A", self.a.strides[1], self.a.strides[2], m, k)?;
        let b = layout("B", self.b.strides[2], self.b.strides[1], n, k)?;
        let batch_stride = |s: &Strided3| if s.shape[0] == 1 { 0 } else { s.strides[0] };
        let cols = n;
        let d_batch = if m == 0 || cols == 0 {
            0
        } else {
            (m - 1) * self.d_ld + cols
        };
        let form = Form {
            a,
            b,
            ldc: self.d_ld,
            ldd: self.d_ld,
            ldr: self.d_ld,
            batch: Batch {
                count,
                a: batch_stride(&self.a),
                b: batch_stride(&self.b),
                c: d_batch,
                d: d_batch,
                residual: d_batch,
            },
            ..Form::packed(m, n, k)
        };
        Ok((m, n, k, form))
    }
}

/// An operand of `rows x k` whose element `(i, kk)` is at `i * row + kk * k_stride`: K-major
/// with `ld = row` where `k_stride` is 1 (or K is 1), MN-major with `ld = k_stride` where `row` is
/// 1 (or there is one row); refused otherwise.
fn layout(
    name: &str,
    row: usize,
    k_stride: usize,
    rows: usize,
    k: usize,
) -> Result<OperandLayout, BlasError> {
    if k_stride == 1 || k <= 1 {
        Ok(OperandLayout {
            major: Major::K,
            ld: row.max(k).max(1),
        })
    } else if row == 1 || rows <= 1 {
        Ok(OperandLayout {
            major: Major::MN,
            ld: k_stride.max(rows).max(1),
        })
    } else {
        Err(BlasError::NotSupported {
            reason: format!(
                "{name} steps {row} elements per row and {k_stride} per column: one of them \
                 must be 1 (copy it into a contiguous layout first)"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::reference::{reference, Inputs};

    fn values(seed: usize, len: usize) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7 + seed * 13) % 11) as f64 - 5.0)
            .collect()
    }

    /// Every layout of A and B (row-major, transposed, padded, a broadcast batch): rute's result
    /// of the mapped form is `A @ B` computed from the views' own strides.
    #[test]
    fn the_mapping_computes_a_at_b() {
        let (batch, m, n, k) = (3, 5, 4, 6);
        let views = |rows: usize, cols: usize, b: usize| -> Vec<Strided3> {
            vec![
                Strided3::packed([b, rows, cols]),
                // Transposed: columns contiguous.
                Strided3 {
                    shape: [b, rows, cols],
                    strides: [rows * cols, 1, rows],
                },
                // Padded rows.
                Strided3 {
                    shape: [b, rows, cols],
                    strides: [rows * (cols + 3), cols + 3, 1],
                },
                // Shared by the batch.
                Strided3 {
                    shape: [1, rows, cols],
                    strides: [0, 1, rows + 2],
                },
            ]
        };
        for a in views(m, k, batch) {
            for b in views(k, n, batch) {
                if a.shape[0] == 1 && b.shape[0] == 1 {
                    continue;
                }
                let call = Matmul { a, b, d_ld: n + 1 };
                let (rm, rn, rk, form) = call.to_rute().unwrap();
                assert_eq!((rm, rn, rk), (m, n, k));
                let av = values(1, a.span());
                let bv = values(2, b.span());
                let count = form.batch.count;
                let mut want = vec![0.0; form.spans(m, n, k).unwrap().d];
                for z in 0..count {
                    let za = if a.shape[0] == 1 { 0 } else { z };
                    let zb = if b.shape[0] == 1 { 0 } else { z };
                    for i in 0..m {
                        for j in 0..n {
                            want[z * form.batch.d + i * (n + 1) + j] = (0..k)
                                .map(|kk| {
                                    av[za * a.strides[0] + i * a.strides[1] + kk * a.strides[2]]
                                        * bv[zb * b.strides[0]
                                            + kk * b.strides[1]
                                            + j * b.strides[2]]
                                })
                                .sum();
                        }
                    }
                }
                let mut got = vec![0.0; want.len()];
                let inputs = Inputs {
                    a: &av,
                    b: &bv,
                    ..Inputs::default()
                };
                reference((m, n, k), &form, &inputs, &mut got);
                assert_eq!(got, want, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn refusals_say_why() {
        let a = Strided3::packed([2, 4, 8]);
        let b = Strided3::packed([3, 7, 5]);
        let e = Matmul { a, b, d_ld: 5 }.to_rute().unwrap_err();
        assert_eq!(
            e.to_string(),
            "A is 4 x 8 and B is 7 x 5: A's columns must be B's rows"
        );
        let b = Strided3::packed([3, 8, 5]);
        let e = Matmul { a, b, d_ld: 5 }.to_rute().unwrap_err();
        assert!(e.to_string().contains("neither match nor broadcast"), "{e}");
        let strided = Strided3 {
            shape: [2, 4, 8],
            strides: [64, 16, 2],
        };
        let b = Strided3::packed([2, 8, 5]);
        let e = Matmul {
            a: strided,
            b,
            d_ld: 5,
        }
        .to_rute()
        .unwrap_err();
        assert!(matches!(e, BlasError::NotSupported { .. }), "{e:?}");
    }
}
