//! The accurate f32 functions measured on the host: each is built from IEEE operations only, so
//! the builder folds it for a constant input to exactly the bits the GPU computes; these tests
//! fold it over a dense sample of its range and compare with the f64 value (std's functions,
//! libm's erf), in ulps of the f32 result.

use super::accurate;
use crate::kernel::Var;

/// The error of `got` against `exact` in ulps of f32 at `exact` (subnormal ulps below 2^-126).
/// Matching infinities and NaNs count 0; a NaN or infinity against a finite value counts
/// infinity.
fn ulps(got: f32, exact: f64) -> f64 {
    if got.is_nan() || exact.is_nan() {
        return if got.is_nan() && exact.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let largest = f64::from(f32::MAX);
    if exact.abs() > largest || got.is_infinite() {
        // Past MAX + ulp/2 (ulp = 2^104 there) the exact value rounds to infinity.
        let rounded = if exact.abs() >= largest + 2f64.powi(103) {
            exact.signum() * f64::INFINITY
        } else {
            exact.signum() * largest
        };
        return if f64::from(got) == rounded {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let e = exact.abs();
    let ulp = if e < f64::from(f32::MIN_POSITIVE) {
        2f64.powi(-149)
    } else {
        2f64.powi(e.log2().floor() as i32 - 23)
    };
    (f64::from(got) - exact).abs() / ulp
}

/// Every f32 in [lo, hi] (both the same sign, or zero) stepping `stride` bit patterns, plus
/// `hi` itself.
fn walk(lo: f32, hi: f32, stride: u32) -> impl Iterator<Item = f32> {
    assert!(lo <= hi && (lo >= 0.0 || hi <= 0.0), "[{lo}, {hi}]");
    let (a, b) = if lo >= 0.0 {
        (lo.to_bits(), hi.to_bits())
    } else {
        (hi.to_bits(), lo.to_bits())
    };
    (a..=b)
        .step_by(stride as usize)
        .chain(std::iter::once(b))
        .map(f32::from_bits)
}

/// The sample of [lo, hi]: about `n` points evenly spaced in bit patterns (every binade gets
/// its share), each side of zero separately.
fn sample(lo: f32, hi: f32, n: u32) -> Vec<f32> {
    let side = |a: f32, b: f32| {
        let span = a.to_bits().abs_diff(b.to_bits()).max(1);
        walk(a, b, (span / n).max(1)).collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    if lo < 0.0 {
        out.extend(side(lo, hi.min(-0.0)));
    }
    if hi >= 0.0 {
        out.extend(side(lo.max(0.0), hi));
    }
    out
}

/// Every f32 within `k` bit patterns of each of `points`.
fn around(points: &[f32], k: u32) -> Vec<f32> {
    points
        .iter()
        .flat_map(|p| {
            let b = p.to_bits();
            (b.saturating_sub(k)..=b.saturating_add(k)).map(f32::from_bits)
        })
        .filter(|x| x.is_finite())
        .collect()
}

/// The worst error of `f` (folded) against `exact` over `xs`: (ulps, x).
fn worst(f: fn(Var<f32>) -> Var<f32>, exact: fn(f64) -> f64, xs: &[f32]) -> (f64, f32) {
    let mut w = (0.0f64, 0.0f32);
    for &x in xs {
        let got = f(Var::konst(x)).as_const().unwrap_or_else(|| {
            panic!("the sequence did not fold at {x:e}: an op without a host fold")
        });
        let e = ulps(got, exact(f64::from(x)));
        if e > w.0 || e.is_nan() {
            w = (e, x);
        }
    }
    w
}

/// Measures `f` over its sample and asserts the bound its docs state.
fn check(name: &str, f: fn(Var<f32>) -> Var<f32>, exact: fn(f64) -> f64, xs: Vec<f32>, bound: f64) {
    let (e, x) = worst(f, exact, &xs);
    println!("{name:<6} worst {e:.3} ulp at {x:e} ({} points)", xs.len());
    assert!(
        e <= bound,
        "{name}: {e} ulp at {x:e} ({:#010x}), bound {bound}",
        x.to_bits()
    );
}

/// Points per range: 2^20 in an optimized build (`cargo test --release`), 2^17 otherwise.
const N: u32 = if cfg!(debug_assertions) {
    1 << 17
} else {
    1 << 20
};

#[test]
fn exp_is_within_1_ulp() {
    let mut xs = sample(-87.33, 88.72, N);
    xs.extend(around(&[0.0, 0.3466, -0.3466, 1.0397, 88.0, -87.0], 2000));
    check("exp", accurate::exp, f64::exp, xs, 1.0);
}

#[test]
fn exp2_is_within_1_ulp() {
    let mut xs = sample(-126.0, 127.99, N);
    xs.extend(around(&[0.0, 0.5, -0.5, 1.5, 127.5], 2000));
    check("exp2", accurate::exp2, f64::exp2, xs, 1.0);
}

#[test]
fn ln_is_within_1_ulp_and_log2_within_1_1() {
    let mut xs = sample(f32::from_bits(1), f32::MAX, N);
    xs.extend(around(
        &[1.0, 2.0 / 3.0, 4.0 / 3.0, 0.5, 2.0, f32::MIN_POSITIVE],
        4000,
    ));
    check("ln", accurate::ln, f64::ln, xs.clone(), 1.0);
    check("log2", accurate::log2, f64::log2, xs, 1.1);
}

#[test]
fn tanh_is_within_1_ulp() {
    let mut xs = sample(-12.0, 12.0, N);
    xs.extend(around(&[0.9, -0.9, 0.55, 9.0], 4000));
    check("tanh", accurate::tanh, f64::tanh, xs, 1.0);
}

#[test]
fn erf_is_within_1_1_ulp() {
    let mut xs = sample(-5.0, 5.0, N);
    xs.extend(around(&[0.927_734_4, -0.927_734_4, 3.92, 2.0], 4000));
    check("erf", accurate::erf, libm::erf, xs, 1.1);
}

#[test]
fn sin_and_cos_are_within_1_ulp() {
    let mut xs = sample(-105_615.0, 105_615.0, N);
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    xs.extend(around(
        &[FRAC_PI_4, 3.0 * FRAC_PI_4, FRAC_PI_2, PI, 0.0],
        4000,
    ));
    check("sin", accurate::sin, f64::sin, xs.clone(), 1.0);
    check("cos", accurate::cos, f64::cos, xs, 1.0);
}

#[test]
fn sqrt_and_recip_are_correctly_rounded_and_rsqrt_within_1_ulp() {
    let mut xs = sample(f32::from_bits(1), f32::MAX, N);
    xs.extend(around(&[1.0, 2.0, 4.0], 1000));
    check("sqrt", accurate::sqrt, f64::sqrt, xs.clone(), 0.5);
    check("recip", accurate::recip, |x| 1.0 / x, xs.clone(), 0.5);
    check("rsqrt", accurate::rsqrt, |x| 1.0 / x.sqrt(), xs, 1.0);
}

#[test]
fn special_values_are_ieee() {
    let fold = |f: fn(Var<f32>) -> Var<f32>, x: f32| f(Var::konst(x)).as_const().unwrap();
    let inf = f32::INFINITY;
    assert_eq!(fold(accurate::exp, inf), inf);
    assert_eq!(fold(accurate::exp, -inf), 0.0);
    assert_eq!(fold(accurate::exp, 89.0), inf);
    assert_eq!(fold(accurate::exp, -104.0), 0.0);
    assert_eq!(fold(accurate::exp2, 128.0), inf);
    assert_eq!(fold(accurate::exp2, -149.0), f32::from_bits(1));
    assert_eq!(fold(accurate::ln, 0.0), -inf);
    assert_eq!(fold(accurate::ln, inf), inf);
    assert!(fold(accurate::ln, -1.0).is_nan());
    assert_eq!(fold(accurate::log2, f32::from_bits(1)), -149.0);
    assert_eq!(fold(accurate::tanh, inf), 1.0);
    assert_eq!(fold(accurate::tanh, -inf), -1.0);
    assert_eq!(fold(accurate::erf, -inf), -1.0);
    assert_eq!(fold(accurate::recip, 0.0), inf);
    assert!(fold(accurate::sqrt, -1.0).is_nan());
    for f in [
        accurate::exp,
        accurate::ln,
        accurate::tanh,
        accurate::erf,
        accurate::sin,
    ] {
        assert!(fold(f, f32::NAN).is_nan());
    }
    for (name, f) in [
        ("sin", accurate::sin as fn(Var<f32>) -> Var<f32>),
        ("tanh", accurate::tanh),
        ("erf", accurate::erf),
    ] {
        let z = fold(f, -0.0);
        assert!(z == 0.0 && z.is_sign_negative(), "{name}(-0) = {z}");
    }
    assert!(fold(accurate::sin, inf).is_nan() && fold(accurate::cos, -inf).is_nan());
}

#[test]
fn sin_and_cos_of_large_arguments_are_within_1_ulp() {
    // Past 105615 the exact (Payne-Hanek) reduction; up to the largest f32.
    let xs = sample(-f32::MAX, -105_616.0, N / 4)
        .into_iter()
        .chain(sample(105_616.0, f32::MAX, N / 4))
        .chain(around(
            &[105_615.0, 1e6, 6.5e6, 8.375_521e8, 3.463_930_4e12],
            200,
        ))
        .collect::<Vec<_>>();
    check("sin", accurate::sin, f64::sin, xs.clone(), 1.0);
    check("cos", accurate::cos, f64::cos, xs, 1.0);
}
