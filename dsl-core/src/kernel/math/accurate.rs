//! The accurate f32 functions, in the style of CUDA's libdevice: a range reduction, a minimax
//! polynomial evaluated with `fma.rn.f32` (Horner's scheme), and a reconstruction. They are
//! built from IEEE operations only (`fma.rn`, `add.rn`, `mul.rn`, `div.rn`, `sqrt.rn`, `rcp.rn`,
//! integer and bit operations, `selp`), never from `.approx` instructions, so their result is
//! fully determined by the PTX ISA: the builder folds the same sequence on the host for constant
//! inputs, bit for bit what the GPU computes, and the accuracy tests measure that fold.
//!
//! Every branch is a `selp` (both sides computed), so a warp does not diverge inside a
//! function, except in `sin` and `cos` of |x| > 105615, whose exact reduction is a branch that
//! only the lanes with such arguments take.
//!
//! The coefficients are minimax fits (Lawson's algorithm, 50-digit arithmetic) rounded to f32;
//! each table says what it approximates on which interval, highest degree first.

use super::super::context::emit;
use super::super::control::Cond;
use super::super::ops::select;
use super::super::value::{IntoVar, Var};
use super::rounded;
use crate::ir::op::{Arith, FloatRound, RoundedOp};
use crate::ir::{Operand, Type};

/// An f32 constant by its bits (exact, and free of decimal rounding).
const fn c(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// 1.5 * 2^23: added to and subtracted from |v| < 2^22, it rounds `v` to the nearest integer.
const SHIFT: f32 = 12_582_912.0;

pub(super) const LOG2E: f32 = c(0x3fb8_aa3b); // 1.44269502
const LOG2E_LO: f32 = c(0x32a5_7060); // log2(e) - LOG2E = 1.92596303e-8
pub(super) const LN2: f32 = c(0x3f31_7218); // 0.693147182
const LN2_LO: f32 = c(0xb102_e308); // ln(2) - LN2 = -1.90465421e-9
/// ln(2) to 16 bits: `i * LN2_HI16` is exact for |i| < 2^8.
const LN2_HI16: f32 = c(0x3f31_7200); // 0.693145752
const LN2_LO16: f32 = c(0x35bf_be8e); // ln(2) - LN2_HI16 = 1.42860677e-6
const TWO_OVER_PI: f32 = c(0x3f22_f983); // 0.636619747
/// pi/2 as three f32 (Cody and Waite): their sum is pi/2 to about 72 bits.
const PIO2_HI: f32 = c(0x3fc9_0fdb); // 1.57079637
const PIO2_MID: f32 = c(0xb33b_bd2e); // -4.37113883e-8
const PIO2_LO: f32 = c(0xa6f7_2ced); // -1.71512451e-15

/// e^f on [-ln(2)/2, ln(2)/2]: relative error of the polynomial 2^-28.3.
const EXP_POLY: [f32; 7] = [
    c(0x3ab5_1224), // 1.381461043e-3
    c(0x3c09_1cea), // 8.368710056e-3
    c(0x3d2a_ac79), // 4.166838899e-2
    c(0x3e2a_aa49), // 1.666652113e-1
    c(0x3eff_fffe), // 4.999999404e-1
    1.0,
    1.0,
];

/// 2^f on [-1/2, 1/2]: relative error 2^-28.9.
const EXP2_POLY: [f32; 7] = [
    c(0x3920_fddd), // 1.535336050e-4
    c(0x3aaf_9f2a), // 1.339887502e-3
    c(0x3c1d_96a6), // 9.618436918e-3
    c(0x3d63_5774), // 5.550332367e-2
    c(0x3e75_fdee), // 2.402264774e-1
    c(0x3f31_7218), // 6.931471825e-1
    1.0,
];

/// P(f) with log(1 + f) = f + f^2 P(f) on [-1/3, 1/3]: relative error of log(1 + f) 2^-27.7
/// (fitted one coefficient at a time from the lowest, each rounded to f32 before the next fit).
const LOG1P_POLY: [f32; 9] = [
    c(0xbe03_d51b), // -1.287426203e-1
    c(0x3e0f_3950), // 1.398670673e-1
    c(0xbdf9_9e39), // -1.218838170e-1
    c(0x3e0f_6a29), // 1.400534064e-1
    c(0xbe2a_ce17), // -1.668017954e-1
    c(0x3e4c_e82e), // 2.001044452e-1
    c(0xbe7f_ff7d), // -2.499980479e-1
    c(0x3eaa_aa83), // 3.333321512e-1
    -0.5,
];

/// P(s) with tanh(x) = x + x^3 P(x^2) on |x| < 0.9: relative error of tanh 2^-29.8.
const TANH_POLY: [f32; 7] = [
    c(0xb9ee_cae8), // -4.554607440e-4
    c(0x3b29_4204), // 2.582670189e-3
    c(0xbc07_6805), // -8.264546283e-3
    c(0x3cb1_77bf), // 2.166354470e-2
    c(0xbd5c_e4f9), // -5.392930284e-2
    c(0x3e08_879a), // 1.333297789e-1
    c(0xbeaa_aaa7), // -3.333332241e-1
];
/// Below this |x|, tanh is the polynomial; above, `1 - 2 / (e^2|x| + 1)`.
const TANH_SPLIT: f32 = 0.9;

/// P(s) with erf(x) = x + x P(x^2) on |x| < 0.927734375: relative error of erf 2^-31.1.
const ERF_POLY: [f32; 7] = [
    c(0x38ae_bb39), // 8.331839490e-5
    c(0xba55_37dc), // -8.133628871e-4
    c(0x3baa_66b2), // 5.200230516e-3
    c(0xbcdc_0790), // -2.685907483e-2
    c(0x3de7_1708), // 1.128368974e-1
    c(0xbec0_93a1), // -3.761263192e-1
    c(0x3e03_75d4), // 1.283791661e-1
];
/// q(t) ~ log(erfc(t)) on [0.927734375, 3.9], so that erf(t) = 1 - e^q(t): the error of q,
/// weighted by erfc/erf (what it costs erf, relatively), is 2^-34.9.
const ERFC_LOG_POLY: [f32; 9] = [
    c(0xb4ed_ac1c), // -4.426991609e-7
    c(0xb781_5c06), // -1.542085010e-5
    c(0x39d3_79f9), // 4.033593286e-4
    c(0xbb85_8e42), // -4.075796343e-3
    c(0x3ccc_511b), // 2.494101785e-2
    c(0xbddd_5438), // -1.080707908e-1
    c(0xbf22_2cdf), // -6.334971786e-1
    c(0xbf90_91f7), // -1.129454494
    c(0x392c_3c11), // 1.642557472e-4
];
/// Below this |x|, erf is the odd polynomial.
const ERF_SPLIT: f32 = 0.927_734_4;
/// From here on erf(|x|) rounds to 1.
const ERF_ONE: f32 = 3.92;

/// S(s) with sin(r) = r + r^3 S(r^2) on |r| <= pi/4: relative error 2^-28.0.
const SIN_POLY: [f32; 3] = [
    c(0xb94c_a1f2), // -1.951528538e-4
    c(0x3c08_839e), // 8.332161233e-3
    c(0xbe2a_aaa3), // -1.666665524e-1
];
/// cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4: relative error 2^-33.0 (the table ends with
/// -1/2: `horner` of it is C(s) s - 1/2).
const COS_POLY: [f32; 4] = [
    c(0x37cc_f5cc), // 2.443315316e-5
    c(0xbab6_061a), // -1.388731645e-3
    c(0x3d2a_aaa5), // 4.166664556e-2
    -0.5,
];

/// `a + b`, `a - b` and `a * b` rounded once, as `fma.rn` (`a * 1 + b`, `a * b + -0`): PTX lets
/// ptxas fuse a plain `mul.f32` and a following `add.f32` into one fma, which would change the
/// bits (and break the exact-error steps below); an `fma.rn` it keeps as written.
fn add(a: impl IntoVar<f32>, b: impl IntoVar<f32>) -> Var<f32> {
    a.into_var().mul_add(1.0f32, b)
}

/// `a - b` rounded once (see [`add`]).
fn sub(a: impl IntoVar<f32>, b: impl IntoVar<f32>) -> Var<f32> {
    a.into_var().mul_add(1.0f32, -b.into_var())
}

/// `a * b` rounded once (see [`add`]); `+ -0` keeps the product's zero sign.
fn mul(a: impl IntoVar<f32>, b: impl IntoVar<f32>) -> Var<f32> {
    a.into_var().mul_add(b, -0.0f32)
}

/// `a * b` on f64 rounded once, as `fma.rn.f64 a, b, -0` (see [`add`]: the product below
/// feeds a subtraction ptxas could otherwise fuse with it); folded for constants.
fn mul_f64(a: Var<f64>, b: f64) -> Var<f64> {
    if let Some(a) = a.as_const() {
        return Var::konst(a.mul_add(b, -0.0));
    }
    let x = a.operand();
    let out = Var::<f64>::uninit();
    if let Some(dst) = out.reg() {
        emit(Arith::Fma {
            rnd: FloatRound::Rn,
            ty: Type::F64,
            dst,
            a: x,
            b: Operand::ImmF(b),
            c: Operand::ImmF(-0.0),
        });
    }
    out
}

/// Horner's scheme with `fma.rn`: `coeffs[0] x^n + ... + coeffs[n]`.
fn horner(x: Var<f32>, coeffs: &[f32]) -> Var<f32> {
    let mut p = Var::konst(coeffs[0]);
    for &k in &coeffs[1..] {
        p = p.mul_add(x, k);
    }
    p
}

/// `v` rounded to the nearest integer (ties to even), for |v| < 2^22, still as an f32.
fn round_int(v: Var<f32>) -> Var<f32> {
    sub(add(v, SHIFT), SHIFT)
}

/// `p * 2^i` for i in [-252, 128] with one rounding (CUDA's scaling: two factors so that
/// neither overflows nor goes subnormal before the product).
fn scale_pow2(p: Var<f32>, i: Var<i32>) -> Var<f32> {
    // i > 0: 2^127 * 2^(i-127); i <= 0: 2^-123 * 2^(i+123).
    let bias = select(i.gt(0), 0i32, 0x8300_0000u32 as i32);
    let s = (bias + 0x7f00_0000i32).bitcast::<f32>();
    let t = ((i << 23u32) - bias).bitcast::<f32>();
    mul(mul(p, s), t)
}

/// `mag` with the sign bit of `sign` (`mag` non-negative).
fn copysign(mag: Var<f32>, sign: Var<f32>) -> Var<f32> {
    let s = sign.bitcast::<u32>() & 0x8000_0000u32;
    (mag.bitcast::<u32>() | s).bitcast::<f32>()
}

/// e^x, |x| < 104 through the reduction; beyond it +inf or 0.
pub(super) fn exp(x: Var<f32>) -> Var<f32> {
    // x = j ln2 + f, |f| <= ln2/2: the first fma is exact (both on a 2^-25 grid, |f| < 1/2).
    let j = round_int(mul(x, LOG2E));
    let f = j.mul_add(-LN2, x);
    let f = j.mul_add(-LN2_LO, f);
    let r = scale_pow2(horner(f, &EXP_POLY), j.cast::<i32>());
    saturate_exp(x, 104.0, r)
}

/// `r`, or for |x| >= `limit` what e^x or 2^x is there: +inf for x > 0, 0 for x < 0 (NaN
/// fails the test and keeps `r`, which is NaN).
fn saturate_exp(x: Var<f32>, limit: f32, r: Var<f32>) -> Var<f32> {
    let far = select(x.gt(0.0f32), f32::INFINITY, 0.0f32);
    select(x.abs().ge(limit), far, r)
}

/// 2^x.
pub(super) fn exp2(x: Var<f32>) -> Var<f32> {
    // x = j + f exactly, |f| <= 1/2.
    let j = round_int(x);
    let f = sub(x, j);
    let r = scale_pow2(horner(f, &EXP2_POLY), j.cast::<i32>());
    saturate_exp(x, 150.0, r)
}

/// The reduction of a logarithm: `a = 2^i m` with m in [2/3, 4/3), as `(i, f = m - 1)`, for a
/// positive finite `a` (subnormals scaled by 2^23 first).
fn log_reduce(a: Var<f32>) -> (Var<f32>, Var<f32>) {
    let tiny = a.lt(f32::MIN_POSITIVE);
    let m = select(tiny, mul(a, 8_388_608.0), a);
    let bits = m.bitcast::<i32>();
    let e = (bits - 0x3f2a_aaabi32) & (0xff80_0000u32 as i32);
    let m = (bits - e).bitcast::<f32>();
    let i = add((e >> 23u32).cast::<f32>(), select(tiny, -23.0f32, 0.0f32));
    (i, sub(m, 1.0))
}

/// `r` for a positive finite `a`, else what a logarithm is there: -inf at 0, NaN below,
/// +inf at +inf, NaN for NaN.
fn log_special(a: Var<f32>, r: Var<f32>) -> Var<f32> {
    let special = select(
        a.eq_(0.0f32),
        f32::NEG_INFINITY,
        select(a.lt(0.0f32), f32::NAN, add(a, a)),
    );
    let finite = a.gt(0.0f32) & a.le(f32::MAX);
    select(finite, r, special)
}

/// ln(a).
pub(super) fn ln(a: Var<f32>) -> Var<f32> {
    let (i, f) = log_reduce(a);
    let p = horner(f, &LOG1P_POLY);
    // ln a = i ln2 + f + f^2 P(f): i * LN2_HI16 is exact, and the sum with f is kept as an
    // unevaluated pair (Fast2Sum: |i LN2_HI16| >= |f| whenever i != 0).
    let hi = mul(i, LN2_HI16);
    let s = add(hi, f);
    let err = add(sub(hi, s), f);
    let tail = i.mul_add(LN2_LO16, err);
    let tail = p.mul_add(mul(f, f), tail);
    log_special(a, add(s, tail))
}

/// log2(a).
pub(super) fn log2(a: Var<f32>) -> Var<f32> {
    let (i, f) = log_reduce(a);
    let p = horner(f, &LOG1P_POLY);
    // log2 a = i + log2(e) (f + f^2 P(f)); f log2(e) exactly as hi + lo, then i + hi as a pair.
    let hi = mul(f, LOG2E);
    let lo = f.mul_add(LOG2E, -hi);
    let s = add(i, hi);
    let err = add(sub(i, s), hi);
    let tail = f.mul_add(LOG2E_LO, add(lo, err));
    let tail = mul(p, mul(f, f)).mul_add(LOG2E, tail);
    log_special(a, add(s, tail))
}

/// tanh(x).
pub(super) fn tanh(x: Var<f32>) -> Var<f32> {
    // tanh |x|, then x's sign (also on -0).
    let ax = x.abs();
    let s = mul(x, x);
    let small = mul(horner(s, &TANH_POLY), s).mul_add(ax, ax);
    // tanh|x| = 1 - 2 / (e^2|x| + 1); e^2|x| = +inf gives 1.
    let e = exp(add(ax, ax));
    let large = sub(1.0f32, 2.0f32 / add(e, 1.0f32));
    copysign(select(ax.lt(TANH_SPLIT), small, large), x)
}

/// erf(x).
pub(super) fn erf(x: Var<f32>) -> Var<f32> {
    erf_with(x, exp)
}

/// erf(x) with `exp` as the exponential of its tail, `1 - e^q(|x|)` (the fast variant passes
/// `ex2.approx`).
pub(super) fn erf_with(x: Var<f32>, exp: fn(Var<f32>) -> Var<f32>) -> Var<f32> {
    let t = x.abs();
    let small = horner(mul(x, x), &ERF_POLY).mul_add(x, x);
    // Clamped by a comparison, not `min`, so that NaN stays NaN.
    let q = horner(select(t.ge(ERF_ONE), ERF_ONE, t), &ERFC_LOG_POLY);
    let large = select(t.ge(ERF_ONE), 1.0f32, sub(1.0f32, exp(q)));
    select(t.lt(ERF_SPLIT), small, copysign(large, x))
}

/// Up to this |x| the Cody-Waite reduction is accurate; beyond it, [`payne_hanek`].
const TRIG_FAST_LIMIT: f32 = 105_615.0;

/// The bits of 2/pi after the binary point, 32 to a word, after one word of zeros (the window
/// of a small exponent starts before the point).
const TWO_OVER_PI_BITS: [u32; 8] = [
    0,
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
];

/// pi/2 * 2^-62: the value of one unit of a 2.62 fixed-point fraction of a quadrant.
const PIO2_2M62: f64 = 3.406_121_580_086_554_5e-19;

/// The reduction `x = j pi/2 + r + c`, |r| <= pi/4 (to rounding), as `(r, c, j)`.
///
/// Up to |x| = 105615 it is Cody and Waite's: `r + c` is the reduced argument to about
/// 2^-24 |r| more bits than `r` alone (the product with the middle part of pi/2 and the sum
/// with it are kept exact, 2Sum); where j = 0, `r` is `x` itself (keeps tiny inputs exact).
/// Beyond, a branch taken only by the lanes that need it runs [`payne_hanek`].
fn trig_reduce(x: Var<f32>) -> (Var<f32>, Var<f32>, Var<i32>) {
    let j = round_int(mul(x, TWO_OVER_PI));
    let r1 = j.mul_add(-PIO2_HI, x);
    let m = mul(j, -PIO2_MID);
    let m_lo = j.mul_add(-PIO2_MID, -m);
    let r = add(r1, m);
    let b = sub(r, r1);
    let c = add(sub(r1, sub(r, b)), sub(m, b));
    let c = j.mul_add(-PIO2_LO, add(c, m_lo));
    let zero = j.eq_(0.0f32);
    let (mut r, mut c, mut q) = (select(zero, x, r), select(zero, 0.0f32, c), j.cast::<i32>());
    x.abs().gt(TRIG_FAST_LIMIT).if_(|_| {
        let (far_r, far_c, far_q) = payne_hanek(x);
        r.set(far_r);
        c.set(far_c);
        q.set(far_q);
    });
    (r, c, q)
}

/// The word `k` (0..8) of [`TWO_OVER_PI_BITS`], by a chain of `selp`.
fn two_over_pi_word(k: Var<u32>) -> Var<u32> {
    let mut w = Var::konst(TWO_OVER_PI_BITS[0]);
    for (t, &bits) in TWO_OVER_PI_BITS.iter().enumerate().skip(1) {
        w = select(k.eq_(t as u32), bits, w);
    }
    w
}

/// Payne and Hanek's reduction of |x| >= 2^16: `x 2/pi mod 4` in 2.62 fixed point from the
/// 96 bits of 2/pi that matter at x's exponent (those of weight 4 and more times x are
/// multiples of 4 and dropped, those past the window add less than 2^-62), as `(r, c, q)`:
/// `r + c` in [-pi/4, pi/4] (`r` the f32 rounding, `c` the rest) and `q` the quadrant. +-inf
/// gives NaN.
fn payne_hanek(x: Var<f32>) -> (Var<f32>, Var<f32>, Var<i32>) {
    let bits = x.bitcast::<u32>();
    // x = ia 2^(E - 31), ia the significand with its leading one at bit 31.
    let ia = ((bits & 0x007f_ffffu32) << 8u32) | 0x8000_0000u32;
    // The window starts at bit E - 1 of the table (E - 33 after the point, one zero word first).
    let start = ((bits >> 23u32) & 0xffu32) - 128u32;
    let (i, sh) = (start >> 5u32, start & 31u32);
    let w = |k: u32| two_over_pi_word(i + k);
    let (t0, t1, t2, t3) = (w(0), w(1), w(2), w(3));
    // Shifts by 32 (sh = 0) give 0 in PTX, as the fold does.
    let rs = 32u32 - sh;
    let hi = (t0 << sh) | (t1 >> rs);
    let mid = (t1 << sh) | (t2 >> rs);
    let lo = (t2 << sh) | (t3 >> rs);
    // Bits 32..96 of ia * (hi, mid, lo): the 2.62 fixed-point x 2/pi mod 4.
    let ia64 = ia.cast::<u64>();
    let p0 = ia64 * lo.cast::<u64>();
    let p1 = ia64 * mid.cast::<u64>() + (p0 >> 32u32);
    let p = p1 + ((ia * hi).cast::<u64>() << 32u32);
    // Round to the nearest quadrant: the fraction in [-1/2, 1/2), two's complement.
    let up = (p & (1u64 << 61)).ne_(0u64);
    let frac = (p & ((1u64 << 62) - 1)) - select(up, 1u64 << 62, 0u64);
    let q = ((p >> 62u32) + select(up, 1u64, 0u64)).cast::<i32>();
    // r + c: the f64 product split into its f32 rounding and the rest.
    let d = mul_f64(frac.bitcast::<i64>().cast::<f64>(), PIO2_2M62);
    let r = select(x.abs().lt(f32::INFINITY), d.cast::<f32>(), f32::NAN);
    let c = (d - r.cast::<f64>()).cast::<f32>();
    let neg = x.lt(0.0f32);
    (select(neg, -r, r), select(neg, -c, c), select(neg, -q, q))
}

/// sin(r + c) for the reduced argument and its quadrant `q`: sin or cos by `q & 1`, negated by
/// `q & 2`. c joins the small terms (|c| < 2^-24 |r|, so first order is exact to f32):
/// sin(r + c) = r + (c + r s S(s)) and cos(r + c) = 1 + s' (C(s') s' - 1/2) with
/// s' = r^2 + 2 r c, each rounded once at the end.
fn trig_eval(r: Var<f32>, c: Var<f32>, q: Var<i32>) -> Var<f32> {
    let s = r.mul_add(r, mul(add(r, r), c));
    let sin = add(r, horner(s, &SIN_POLY).mul_add(mul(r, s), c));
    let cos = horner(s, &COS_POLY).mul_add(s, 1.0f32);
    let v = select((q & 1i32).eq_(0i32), sin, cos);
    select((q & 2i32).eq_(0i32), v, -v)
}

/// sin(x).
pub(super) fn sin(x: Var<f32>) -> Var<f32> {
    let (r, c, q) = trig_reduce(x);
    // sin(+-0) = +-0 (the sums would give +0 for -0).
    select(x.eq_(0.0f32), x, trig_eval(r, c, q))
}

/// cos(x) = sin(x + pi/2): the next quadrant.
pub(super) fn cos(x: Var<f32>) -> Var<f32> {
    let (r, c, q) = trig_reduce(x);
    trig_eval(r, c, q + 1i32)
}

/// `sqrt.rn.f32`: correctly rounded.
pub(super) fn sqrt(x: Var<f32>) -> Var<f32> {
    rounded(RoundedOp::Sqrt, x)
}

/// `rcp.rn.f32`: correctly rounded.
pub(super) fn recip(x: Var<f32>) -> Var<f32> {
    rounded(RoundedOp::Rcp, x)
}

/// 1/sqrt(x): `y = rcp.rn(sqrt.rn(x))` (two roundings, up to 1.5 ulp) and one Newton step,
/// `y + y/2 (1 - x y^2)`, with `1 - (x y) y` computed from the exact product `x y = p + l` (so
/// that nothing goes subnormal for large x).
pub(super) fn rsqrt(x: Var<f32>) -> Var<f32> {
    let y = recip(sqrt(x));
    let p = mul(x, y);
    let l = x.mul_add(y, -p);
    let e = (-p).mul_add(y, 1.0f32);
    let e = (-l).mul_add(y, e);
    let refined = mul(y, 0.5).mul_add(e, y);
    // 0, infinities and NaN make the product NaN; y is the answer there (+inf, 0, NaN).
    select(refined.eq_(refined), refined, y)
}
