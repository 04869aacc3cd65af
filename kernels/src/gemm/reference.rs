//! The CPU reference of a GEMM in any [`Form`]: every product summed in f64, the epilogue in
//! f64 ([`super::epilogue::host_value`]), D rounded to its type. Tests measure rute's kernels
//! against it (on the device and in the simulator), and the column-major mapping of
//! [`crate::blas`] against a column-major reference of the same semantics.
//!
//! ```
//! use kernels::gemm::layout::Form;
//! use kernels::gemm::reference::{reference, Inputs};
//! // 2 x 2 x 3: D = A B^T.
//! let (a, b) = ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
//! let mut d = vec![0.0; 4];
//! let inputs = Inputs { a: &a, b: &b, ..Inputs::default() };
//! reference((2, 2, 3), &Form::packed(2, 2, 3), &inputs, &mut d);
//! assert_eq!(d, [1.0, 2.0, 4.0, 5.0]);
//! ```

use super::epilogue::host_value;
use super::layout::Form;

/// The reference's inputs, as f64 values at the offsets the form gives (each buffer's
/// elements from its start; the buffers the epilogue does not read may be empty), and a
/// device epilogue's host twin.
pub struct Inputs<'a> {
    /// A.
    pub a: &'a [f64],
    /// B.
    pub b: &'a [f64],
    /// C (read with [`super::epilogue::Source::C`]).
    pub c: &'a [f64],
    /// The bias.
    pub bias: &'a [f64],
    /// The residual.
    pub residual: &'a [f64],
    /// What a [`super::epilogue::DeviceFn`] computes, on the host: `(x, row, col)`.
    pub custom: &'a dyn Fn(f64, usize, usize) -> f64,
}

impl Default for Inputs<'_> {
    fn default() -> Self {
        Inputs {
            a: &[],
            b: &[],
            c: &[],
            bias: &[],
            residual: &[],
            custom: &|x, _, _| x,
        }
    }
}

/// Writes `D` of the `(m, n, k)` GEMM in `form` into `d` (f64, unrounded: round with
/// [`super::layout::OutType::round`] to compare with a kernel's), every batch, only the elements
/// inside D's extents: the ones between a row's end and the leading dimension keep their
/// values.
///
/// # Panics
///
/// If a buffer is shorter than the form's spans (a bug in the test that calls it).
pub fn reference((m, n, k): (usize, usize, usize), form: &Form, inputs: &Inputs, d: &mut [f64]) {
    let cols = form.out_cols(n);
    let spans = form.spans(m, n, k).expect("the form's spans fit usize");
    assert!(
        inputs.a.len() >= spans.a && inputs.b.len() >= spans.b && d.len() >= spans.d,
        "the reference's buffers are shorter than the form spans"
    );
    let (alpha, beta) = (f64::from(form.alpha), f64::from(form.beta));
    let mut row_sums = vec![0.0f64; n];
    for batch in 0..form.batch.count {
        // With K = 0 the operands span nothing, and nothing of them is read.
        let a = inputs.a.get(batch * form.batch.a..).unwrap_or_default();
        let b = inputs.b.get(batch * form.batch.b..).unwrap_or_default();
        for i in 0..m {
            for (j, sum) in row_sums.iter_mut().enumerate() {
                *sum = (0..k)
                    .map(|kk| a[form.a.offset(i, kk)] * b[form.b.offset(j, kk)])
                    .sum();
            }
            for j in 0..cols {
                let at = |base: usize, ld: usize| base + i * ld + j;
                let c_at = at(batch * form.batch.c, form.ldc);
                let r_at = at(batch * form.batch.residual, form.ldr);
                let v = host_value(
                    &form.epilogue,
                    (alpha, beta),
                    (i, j),
                    |col| row_sums[col],
                    || inputs.c[c_at],
                    |row, col| match form.epilogue.bias() {
                        Some(super::epilogue::Bias::PerRow) => inputs.bias[row],
                        _ => inputs.bias[col],
                    },
                    || inputs.residual[r_at],
                    inputs.custom,
                );
                d[at(batch * form.batch.d, form.ldd)] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::epilogue::{Activation, Bias, Elementwise, Epilogue, Map, Residual, Source};
    use crate::gemm::layout::{Batch, Major, OperandLayout};

    /// An MN-major A and a padded D give the packed result, and the padding keeps its values.
    #[test]
    fn layouts_change_addresses_not_values() {
        let (m, n, k) = (3, 2, 4);
        let a_rows: Vec<f64> = (0..m * k).map(|x| x as f64).collect();
        let b: Vec<f64> = (0..n * k).map(|x| (x % 3) as f64).collect();
        let mut packed = vec![0.0; m * n];
        let inputs = Inputs {
            a: &a_rows,
            b: &b,
            ..Inputs::default()
        };
        reference((m, n, k), &Form::packed(m, n, k), &inputs, &mut packed);
        // A column-major (ld 5) and D with rows of 3.
        let mut a_cols = vec![-1.0; 5 * k];
        for i in 0..m {
            for kk in 0..k {
                a_cols[i + kk * 5] = a_rows[i * k + kk];
            }
        }
        let form = Form {
            a: OperandLayout {
                major: Major::MN,
                ld: 5,
            },
            ldd: 3,
            ..Form::packed(m, n, k)
        };
        let mut d = vec![7.0; 3 * m];
        let inputs = Inputs {
            a: &a_cols,
            b: &b,
            ..Inputs::default()
        };
        reference((m, n, k), &form, &inputs, &mut d);
        for i in 0..m {
            assert_eq!(&d[i * 3..i * 3 + 2], &packed[i * 2..i * 2 + 2]);
            assert_eq!(d[i * 3 + 2], 7.0, "padding written");
        }
    }

    #[test]
    fn batches_and_epilogues() {
        let (m, n, k) = (2, 2, 1);
        let a = [1.0, 2.0, 3.0, 4.0]; // two batches of 2 x 1
        let b = [1.0, -1.0]; // shared
        let c = [10.0; 8];
        let bias = [0.5, -0.5];
        let epilogue = Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerColumn),
            map: Map::Activation(Activation::Relu),
            residual: Residual::None,
        });
        let form = Form {
            batch: Batch {
                count: 2,
                a: 2,
                b: 0,
                c: 4,
                d: 4,
                residual: 0,
            },
            epilogue,
            alpha: 2.0,
            beta: -1.0,
            ..Form::packed(m, n, k)
        };
        let mut d = vec![0.0; 8];
        let inputs = Inputs {
            a: &a,
            b: &b,
            c: &c,
            bias: &bias,
            ..Inputs::default()
        };
        reference((m, n, k), &form, &inputs, &mut d);
        // Batch 1, row 1: acc = 4 * (1, -1); x = 2 acc - 10 + bias = (-1.5, -18.5); relu.
        assert_eq!(&d[6..8], &[0.0, 0.0]);
        // Batch 1, row 0 with alpha 2: (6 - 10 + 0.5, ...) -> relu -> 0
        let relu = |x: f64| x.max(0.0);
        assert_eq!(d[4], relu(2.0 * 3.0 - 10.0 + 0.5));
    }
}
