//! The correctness metric: relative Frobenius error, summed in f64 on the host, against cuBLAS
//! and against the exact product; and the verdict of a check ([`CheckErrors::passes`]).

use super::GemmElem;

/// `||got - want||_F / ||want||_F`, each square summed in f64.
///
/// Returns NaN when any element of `got` or `want` is not finite (a poisoned element left
/// unwritten reads as NaN, and NaN fails every `<=` test), NaN for different lengths, and for an
/// all-zero `want` 0 when `got` is all zero too, otherwise infinity.
pub fn relative_frobenius_error<T: GemmElem>(got: &[T], want: &[T]) -> f64 {
    if got.len() != want.len() {
        return f64::NAN;
    }
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (g, w) in got.iter().zip(want) {
        let (g, w) = (g.to_f64(), w.to_f64());
        if !g.is_finite() || !w.is_finite() {
            return f64::NAN;
        }
        diff += (g - w) * (g - w);
        norm += w * w;
    }
    match (diff == 0.0, norm == 0.0) {
        (true, _) => 0.0,
        (false, true) => f64::INFINITY,
        (false, false) => (diff / norm).sqrt(),
    }
}

/// `||D - R|| / ||R||` over `samples` entries `(i, j)` of an `m x n` D, where `R` is the f64 dot
/// product of row `i` of A (`m x k`) and row `j` of B (`n x k`): a reference that shares no code or
/// rounding with the GPU, for shapes too large to check on the host in full. The entries are drawn
/// from `seed`; NaN if a sampled D is not finite.
pub fn sampled_f64_error<T: GemmElem>(
    a: &[T],
    b: &[T],
    d: &[T],
    (m, n, k): (usize, usize, usize),
    samples: usize,
    seed: u64,
) -> f64 {
    let mut state = seed | 1;
    let mut next = move || {
        // splitmix64: a different generator from the data's, so samples don't track the inputs.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let entries = (0..samples).map(|_| {
        let i = (next() % m as u64) as usize;
        (i, (next() % n as u64) as usize)
    });
    error_over(a, b, d, (n, k), entries)
}

/// Products above which [`f64_error`] samples instead of computing D in full: about a tenth of
/// a second on one core.
pub const FULL_F64_PRODUCTS: u64 = 1 << 27;

/// The relative Frobenius error of D against the exact product (f64 dot products, as
/// [`sampled_f64_error`]), and how many entries it covers: every entry when D has at most
/// `samples` of them (no dearer than the sample) or the product takes at most
/// [`FULL_F64_PRODUCTS`] multiplications, else `samples` entries drawn from `seed`. NaN if a
/// covered entry of D is not finite.
pub fn f64_error<T: GemmElem>(
    a: &[T],
    b: &[T],
    d: &[T],
    (m, n, k): (usize, usize, usize),
    samples: usize,
    seed: u64,
) -> (f64, usize) {
    let entries = m.saturating_mul(n);
    let products = (entries as u64).saturating_mul(k as u64);
    if entries <= samples || products <= FULL_F64_PRODUCTS {
        let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
        (error_over(a, b, d, (n, k), all), entries)
    } else {
        (
            sampled_f64_error(a, b, d, (m, n, k), samples, seed),
            samples,
        )
    }
}

/// `||D - R|| / ||R||` over `entries` of D (`n` columns), R the f64 product of A's and B's rows
/// (`k` long); NaN if one of D's is not finite, 0 or infinity for an all-zero R.
fn error_over<T: GemmElem>(
    a: &[T],
    b: &[T],
    d: &[T],
    (n, k): (usize, usize),
    entries: impl Iterator<Item = (usize, usize)>,
) -> f64 {
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (i, j) in entries {
        let want: f64 = (0..k)
            .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
            .sum();
        let got = d[i * n + j].to_f64();
        if !got.is_finite() {
            return f64::NAN;
        }
        diff += (got - want) * (got - want);
        norm += want * want;
    }
    if norm == 0.0 {
        if diff == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (diff / norm).sqrt()
    }
}

/// How much farther from the exact product than cuBLAS's own result rute's may be and pass.
pub const CUBLAS_SLACK: f64 = 1.5;

/// The three distances of one correctness case, each a relative Frobenius error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckErrors {
    /// rute's D against the exact product ([`f64_error`]).
    pub rute_f64: f64,
    /// cuBLAS's D against the exact product, over the same entries.
    pub cublas_f64: f64,
    /// rute's D against cuBLAS's, every element ([`relative_frobenius_error`]).
    pub rute_cublas: f64,
}

impl CheckErrors {
    /// The largest distance to the exact product that passes: `tolerance`, or
    /// [`CUBLAS_SLACK`] times cuBLAS's own distance where that is larger.
    pub fn bound(&self, tolerance: f64) -> f64 {
        // f64::max ignores a NaN: a broken reference leaves the tolerance (and fails below).
        tolerance.max(CUBLAS_SLACK * self.cublas_f64)
    }

    /// The verdict: the truth decides, cuBLAS is the yardstick.
    ///
    /// 1. `rute_f64 <= bound`: rute's result is as close to the exact product as `tolerance` asks,
    ///    or no more than 1.5 times as far as cuBLAS's (an accepted implementation rounding the
    ///    same products). A result closer to the truth than cuBLAS's never fails; where rounding
    ///    D alone is past the tolerance (a few bf16 outputs), matching cuBLAS's distance passes.
    /// 2. `rute_cublas <= bound + cublas_f64`: the two results are no farther apart than two
    ///    results each within its distance of the exact product can be (the triangle
    ///    inequality). The exact reference may be a sample of D; this comparison covers every
    ///    element, so it catches a wrong tile the sample missed.
    ///
    /// A NaN in rute's distances fails (no comparison with NaN holds), and so does one in
    /// cuBLAS's (rule 2). The comparison with cuBLAS alone decided before, and failed a
    /// 2 x 2 x 65536 bf16 product whose two roundings differ by more than the tolerance though
    /// rute's is the nearer the truth.
    pub fn passes(&self, tolerance: f64) -> bool {
        let bound = self.bound(tolerance);
        self.rute_f64 <= bound && self.rute_cublas <= bound + self.cublas_f64
    }
}

/// Elements of `xs` that are NaN or infinite.
pub fn count_non_finite<T: GemmElem>(xs: &[T]) -> usize {
    xs.iter().filter(|x| !x.to_f64().is_finite()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rute gemm --m 2 --n 2 --k 65536 --dtype bf16 --check` on the H200: rute 2.07e-3 from
    /// f64, cuBLAS 3.10e-3, the two 5.07e-3 apart (tolerance 4e-3), passes; what must fail still
    /// does.
    #[test]
    fn the_verdict_rests_on_the_exact_product() {
        let tol = 4e-3;
        let errors = |rute_f64, cublas_f64, rute_cublas| CheckErrors {
            rute_f64,
            cublas_f64,
            rute_cublas,
        };
        let few_bf16 = errors(2.07e-3, 3.10e-3, 5.07e-3);
        assert!(few_bf16.passes(tol));
        assert!((few_bf16.bound(tol) - 4.65e-3).abs() < 1e-12);
        // Bit-identical to cuBLAS, both past the tolerance: cuBLAS's own distance passes.
        assert!(errors(5e-3, 5e-3, 0.0).passes(tol));
        // A large D, every distance small: passes, under the tolerance itself.
        let f16 = errors(2.4e-4, 2.3e-4, 3.0e-4);
        assert!(f16.passes(2e-3) && f16.bound(2e-3) == 2e-3);
        // One wrong element of a 2 x 2 D (10% off): far from the exact product.
        assert!(!errors(5e-2, 3.1e-3, 5.1e-2).passes(tol));
        // Uniformly a little worse than both the tolerance and 1.5x cuBLAS.
        assert!(!errors(4.1e-3, 2.5e-3, 4.0e-3).passes(tol));
        // A wrong tile the sample missed: near f64 on the sample, far from cuBLAS everywhere.
        assert!(!errors(2.0e-3, 3.0e-3, 3.0e-2).passes(tol));
        // NaN (an unwritten element) anywhere in rute's, or a broken reference.
        assert!(!errors(f64::NAN, 3e-3, 1e-3).passes(tol));
        assert!(!errors(1e-3, 3e-3, f64::NAN).passes(tol));
        assert!(!errors(1e-3, f64::NAN, 1e-3).passes(tol));
        assert!(!errors(f64::INFINITY, 3e-3, 1e-3).passes(tol));
    }

    #[test]
    fn small_outputs_are_checked_in_full() {
        // 2 x 2 x 3: four entries, fewer than the sample: all of them.
        let a = h(&[1.0, 2.0, 3.0, 0.5, 0.5, 0.5]);
        let b = h(&[1.0, 1.0, 1.0, 2.0, 0.0, -1.0]);
        let d = h(&[6.0, -1.0, 1.5, 0.5]);
        assert_eq!(f64_error(&a, &b, &d, (2, 2, 3), 512, 7), (0.0, 4));
        let mut off = d.clone();
        off[3] = f16::from_f32(1.0);
        let (e, n) = f64_error(&a, &b, &off, (2, 2, 3), 512, 7);
        // want = (6, -1, 1.5, 0.5): norm^2 = 39.5; one entry 0.5 off.
        assert_eq!(n, 4);
        assert!((e - (0.25f64 / 39.5).sqrt()).abs() < 1e-12, "{e}");
        // Past both limits: the sample.
        let big = (1usize << 10, 1usize << 10, 1usize << 8);
        assert!((big.0 * big.1 * big.2) as u64 > FULL_F64_PRODUCTS);
        let (a, b) = (vec![f16::ONE; big.0 * big.2], vec![f16::ONE; big.1 * big.2]);
        let d = vec![f16::from_f32(256.0); big.0 * big.1];
        assert_eq!(f64_error(&a, &b, &d, big, 512, 7), (0.0, 512));
    }

    #[test]
    fn sampled_f64_error_sees_a_wrong_entry() {
        // 2x2x2: D = A * B^T exactly, then one entry off.
        let a = h(&[1.0, 2.0, 3.0, 4.0]);
        let b = h(&[1.0, 0.0, 0.0, 1.0]);
        let mut d = h(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(sampled_f64_error(&a, &b, &d, (2, 2, 2), 64, 5), 0.0);
        d[3] = f16::from_f32(5.0);
        assert!(sampled_f64_error(&a, &b, &d, (2, 2, 2), 64, 5) > 0.01);
        d[0] = f16::NAN;
        assert!(sampled_f64_error(&a, &b, &d, (2, 2, 2), 64, 5).is_nan());
    }
    use half::{bf16, f16};

    fn h(xs: &[f32]) -> Vec<f16> {
        xs.iter().map(|&x| f16::from_f32(x)).collect()
    }

    #[test]
    fn matches_the_definition() {
        // want = (3, 4): norm 5; got - want = (0, -1): error 1/5.
        assert_eq!(
            relative_frobenius_error(&h(&[3.0, 3.0]), &h(&[3.0, 4.0])),
            0.2
        );
        assert_eq!(
            relative_frobenius_error(&h(&[1.5, -2.0]), &h(&[1.5, -2.0])),
            0.0
        );
        let b: Vec<bf16> = [6.0f32, 8.0].iter().map(|&x| bf16::from_f32(x)).collect();
        let c: Vec<bf16> = [6.0f32, 9.0].iter().map(|&x| bf16::from_f32(x)).collect();
        assert_eq!(relative_frobenius_error(&c, &b), 0.1);
    }

    #[test]
    fn nan_and_odd_cases_never_pass() {
        let poisoned = vec![f16::NAN, f16::from_f32(1.0)];
        let e = relative_frobenius_error(&poisoned, &h(&[1.0, 1.0]));
        assert!(e.is_nan(), "{e}");
        assert_eq!(count_non_finite(&poisoned), 1);
        assert!(relative_frobenius_error(&h(&[1.0]), &h(&[1.0, 1.0])).is_nan());
        assert_eq!(
            relative_frobenius_error(&h(&[1.0]), &h(&[0.0])),
            f64::INFINITY
        );
        assert_eq!(relative_frobenius_error(&h(&[0.0]), &h(&[0.0])), 0.0);
    }
}
