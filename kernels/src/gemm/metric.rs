//! The correctness metric: relative Frobenius error, summed in f64 on the host.

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
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for _ in 0..samples {
        let (i, j) = ((next() % m as u64) as usize, (next() % n as u64) as usize);
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

/// Elements of `xs` that are NaN or infinite.
pub fn count_non_finite<T: GemmElem>(xs: &[T]) -> usize {
    xs.iter().filter(|x| !x.to_f64().is_finite()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

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
