//! IEEE arithmetic on the simulator's float formats (f16, bf16, f32, f64), with the PTX ISA's
//! rounding modes, from exact intermediate values.
//!
//! A result is computed exactly as an unevaluated sum `hi + lo` of two f64 (products of two
//! 24-bit significands are exact in f64; sums use Knuth's TwoSum, which is exact), then rounded
//! once to the target format by [`round`]. This gives correctly rounded f16/bf16 arithmetic and
//! directed rounding (`.rz`, `.rm`, `.rp`) for f32 without double rounding. f32 round-to-nearest
//! add, sub, mul, div, sqrt and fma use the host's IEEE operations, which are exact by the same
//! standard. NaN results are PTX's canonical NaN (all exponent and fraction bits set, sign clear).

use crate::ir::op::{CvtRound, FloatRound};
use crate::ir::Type;

/// Rounding direction of one rounding step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// To nearest, ties to even.
    Nearest,
    /// Toward zero.
    Zero,
    /// Toward negative infinity.
    Down,
    /// Toward positive infinity.
    Up,
}

impl From<FloatRound> for Mode {
    fn from(r: FloatRound) -> Mode {
        match r {
            FloatRound::Rn => Mode::Nearest,
            FloatRound::Rz => Mode::Zero,
            FloatRound::Rm => Mode::Down,
            FloatRound::Rp => Mode::Up,
        }
    }
}

impl Mode {
    /// The float rounding of a `cvt` rounding modifier (the integer forms round the same way).
    pub(crate) fn of_cvt(r: CvtRound) -> Mode {
        match r {
            CvtRound::Rn | CvtRound::Rni => Mode::Nearest,
            CvtRound::Rz | CvtRound::Rzi => Mode::Zero,
            CvtRound::Rm | CvtRound::Rmi => Mode::Down,
            CvtRound::Rp | CvtRound::Rpi => Mode::Up,
        }
    }
}

/// A binary interchange format narrower than f64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Format {
    exp_bits: u32,
    man_bits: u32,
}

/// IEEE binary16.
pub(crate) const F16: Format = Format {
    exp_bits: 5,
    man_bits: 10,
};
/// bfloat16.
pub(crate) const BF16: Format = Format {
    exp_bits: 8,
    man_bits: 7,
};
/// IEEE binary32.
pub(crate) const F32: Format = Format {
    exp_bits: 8,
    man_bits: 23,
};

impl Format {
    /// The format of a scalar or packed float type (`None` for f64 and non-floats).
    pub(crate) fn of(ty: Type) -> Option<Format> {
        match ty {
            Type::F16 | Type::F16x2 => Some(F16),
            Type::BF16 | Type::BF16x2 => Some(BF16),
            Type::F32 => Some(F32),
            _ => None,
        }
    }

    fn bias(self) -> i64 {
        (1 << (self.exp_bits - 1)) - 1
    }

    fn inf(self) -> u64 {
        ((1u64 << self.exp_bits) - 1) << self.man_bits
    }

    /// PTX's canonical NaN: every exponent and fraction bit set, sign clear.
    pub(crate) fn nan(self) -> u64 {
        (1u64 << (self.exp_bits + self.man_bits)) - 1
    }

    fn sign_bit(self) -> u64 {
        1u64 << (self.exp_bits + self.man_bits)
    }

    /// The value of `bits` in this format, exactly, as an f64.
    pub(crate) fn to_f64(self, bits: u64) -> f64 {
        // Every value of these formats is an f32, exactly.
        if self == F32 {
            return f64::from(f32::from_bits(bits as u32));
        }
        if self == BF16 {
            return f64::from(f32::from_bits((bits as u32 & 0xffff) << 16));
        }
        if self == F16 {
            return f64::from(f16_table()[bits as usize & 0xffff]);
        }
        let sign = if bits & self.sign_bit() != 0 {
            -1.0
        } else {
            1.0
        };
        let e = ((bits >> self.man_bits) & ((1 << self.exp_bits) - 1)) as i64;
        let m = bits & ((1 << self.man_bits) - 1);
        let emax = (1i64 << self.exp_bits) - 1;
        if e == emax {
            return if m == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        let (sig, exp) = if e == 0 {
            (m, 1 - self.bias() - self.man_bits as i64)
        } else {
            (
                m | (1 << self.man_bits),
                e - self.bias() - self.man_bits as i64,
            )
        };
        sign * (sig as f64) * 2f64.powi(exp as i32)
    }
}

/// Every f16 value as an f32 (exact), indexed by its bits: decoding is the tensor-core ops'
/// inner loop.
fn f16_table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=u16::MAX)
            .map(|b| half::f16::from_bits(b).to_f32())
            .collect()
    })
}

/// Rounds the exact value `hi + lo` to `fmt` in direction `mode`; `lo` is at most half an f64
/// ulp of `hi` (as TwoSum and TwoProduct leave it). NaN gives the canonical NaN.
pub(crate) fn round(fmt: Format, hi: f64, lo: f64, mode: Mode) -> u64 {
    if hi.is_nan() || lo.is_nan() {
        return fmt.nan();
    }
    if fmt == F32 && lo == 0.0 && mode == Mode::Nearest {
        // The host's f64 -> f32 conversion rounds to nearest even.
        return u64::from((hi as f32).to_bits());
    }
    let neg = hi.is_sign_negative();
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if hi.is_infinite() {
        return sign | fmt.inf();
    }
    if hi == 0.0 {
        // lo is 0 too when hi is: TwoSum's hi is the rounded sum.
        return sign;
    }
    let raw = hi.to_bits();
    let bexp = ((raw >> 52) & 0x7ff) as i64;
    let (sig, exp) = if bexp == 0 {
        (raw & ((1 << 52) - 1), -1074i64)
    } else {
        ((raw & ((1 << 52) - 1)) | (1 << 52), bexp - 1075)
    };
    // The value is sig * 2^exp; the target's quantum at this magnitude is 2^q.
    // floor(log2 |hi|).
    let top = exp + 63 - i64::from(sig.leading_zeros());
    let emin = 1 - fmt.bias();
    let man = fmt.man_bits as i64;
    let q = if top < emin { emin - man } else { top - man };
    let shift = q - exp;
    // `lo` in the direction of the magnitude: positive when it makes |hi + lo| larger.
    let lo_mag = if neg { -lo } else { lo };
    let (mut kept, above, tie, inexact) = if shift <= 0 {
        // hi is exact at this quantum (only for values far above f64's subnormals).
        let kept = sig << (-shift) as u32;
        match lo_mag.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Less) => (kept - 1, true, false, true),
            Some(std::cmp::Ordering::Greater) => (kept, false, false, true),
            _ => (kept, false, false, false),
        }
    } else if shift >= 64 {
        (0, false, false, true)
    } else {
        let s = shift as u32;
        let kept = sig >> s;
        let rem = sig & ((1u64 << s) - 1);
        let half = 1u64 << (s - 1);
        if rem == 0 {
            match lo_mag.partial_cmp(&0.0) {
                Some(std::cmp::Ordering::Less) => (kept - 1, true, false, true),
                Some(std::cmp::Ordering::Greater) => (kept, false, false, true),
                _ => (kept, false, false, false),
            }
        } else if rem != half {
            (kept, rem > half, false, true)
        } else if lo_mag > 0.0 {
            (kept, true, false, true)
        } else if lo_mag < 0.0 {
            (kept, false, false, true)
        } else {
            (kept, false, true, true)
        }
    };
    let up = match mode {
        Mode::Nearest => above || (tie && kept & 1 == 1),
        Mode::Zero => false,
        Mode::Down => neg && inexact,
        Mode::Up => !neg && inexact,
    };
    if up {
        kept += 1;
    }
    let encoded = if top < emin {
        kept
    } else {
        (((top - emin) as u64) << fmt.man_bits) + kept
    };
    if encoded >= fmt.inf() {
        let to_inf = match mode {
            Mode::Nearest => true,
            Mode::Zero => false,
            Mode::Down => neg,
            Mode::Up => !neg,
        };
        return sign | if to_inf { fmt.inf() } else { fmt.inf() - 1 };
    }
    sign | encoded
}

/// Knuth's TwoSum: `a + b == s + e` exactly, `s` the rounded sum.
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    if s.is_finite() {
        (s, e)
    } else {
        (s, 0.0)
    }
}

/// The exact product of two values of at most 26-bit significands (f32, f16, bf16), then `+ c`
/// exactly as `hi + lo`.
pub(crate) fn fma_exact(a: f64, b: f64, c: f64) -> (f64, f64) {
    two_sum(a * b, c)
}

/// `x` with a NaN replaced by f32's canonical NaN.
pub(crate) fn canon32(x: f32) -> u64 {
    if x.is_nan() {
        F32.nan()
    } else {
        u64::from(x.to_bits())
    }
}

/// `x` with a NaN replaced by f64's canonical NaN.
pub(crate) fn canon64(x: f64) -> u64 {
    if x.is_nan() {
        0x7fff_ffff_ffff_ffff
    } else {
        x.to_bits()
    }
}

/// IEEE 754-2019 minimumNumber / maximumNumber, as PTX's `min`/`max` on floats: a NaN input
/// gives the other input, two NaNs the canonical NaN, and -0 orders below +0.
pub(crate) fn min_max(a: f64, b: f64, max: bool) -> Option<f64> {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => None,
        (true, false) => Some(b),
        (false, true) => Some(a),
        _ => {
            let a_first = if a == b {
                // Signed zeros: -0 < +0.
                a.is_sign_negative() != max
            } else {
                (a < b) != max
            };
            Some(if a_first { a } else { b })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rn(fmt: Format, x: f64) -> u64 {
        round(fmt, x, 0.0, Mode::Nearest)
    }

    #[test]
    fn f32_matches_the_host_for_nearest() {
        let xs = [
            1.0f64,
            1.0 + 2f64.powi(-24),
            1.0 + 3.0 * 2f64.powi(-24),
            -1.0 - 2f64.powi(-24) - 2f64.powi(-60),
            3.4e38,
            3.5e38,
            1e-40,
            1e-46,
            -7e-46,
            0.1,
            1e300,
        ];
        for x in xs {
            assert_eq!(rn(F32, x), u64::from((x as f32).to_bits()), "{x:e}");
        }
    }

    #[test]
    fn ties_break_on_the_low_part() {
        // 1 + 2^-11 is a tie between two f16 values; a positive low part rounds up.
        let tie = 1.0 + 2f64.powi(-11);
        assert_eq!(rn(F16, tie), 0x3c00);
        assert_eq!(round(F16, tie, 1e-30, Mode::Nearest), 0x3c01);
        assert_eq!(round(F16, tie, -1e-30, Mode::Nearest), 0x3c00);
        // A value just below 1.0 given as 1.0 - tiny.
        assert_eq!(round(F16, 1.0, -1e-30, Mode::Zero), 0x3bff);
        assert_eq!(round(F16, 1.0, -1e-30, Mode::Nearest), 0x3c00);
        assert_eq!(round(F16, -1.0, 1e-30, Mode::Down), 0xbc00);
        assert_eq!(round(F16, -1.0, 1e-30, Mode::Up), 0xbbff);
    }

    #[test]
    fn directed_rounding_and_overflow() {
        let third = 1.0 / 3.0;
        let up = round(F32, third, 0.0, Mode::Up);
        let down = round(F32, third, 0.0, Mode::Down);
        assert_eq!(up, down + 1);
        assert_eq!(round(F32, -third, 0.0, Mode::Zero), down | 1 << 31);
        assert_eq!(rn(F16, 70000.0), 0x7c00);
        assert_eq!(round(F16, 70000.0, 0.0, Mode::Zero), 0x7bff);
        assert_eq!(round(F16, -70000.0, 0.0, Mode::Up), 0xfbff);
        assert_eq!(round(BF16, f64::NAN, 0.0, Mode::Nearest), 0x7fff);
        // Subnormals: f16's smallest is 2^-24; half of it ties to even (zero).
        assert_eq!(rn(F16, 2f64.powi(-24)), 1);
        assert_eq!(rn(F16, 2f64.powi(-25)), 0);
        assert_eq!(rn(F16, 1.5 * 2f64.powi(-24)), 2);
        assert_eq!(round(F16, 2f64.powi(-30), 0.0, Mode::Up), 1);
        // bf16 keeps f32's exponent range.
        assert_eq!(rn(BF16, 1.0), 0x3f80);
        assert_eq!(rn(BF16, 1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(rn(BF16, 1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
    }

    #[test]
    fn decoding_round_trips() {
        for bits in (0u64..0x7c00).step_by(7) {
            assert_eq!(rn(F16, F16.to_f64(bits)), bits);
            assert_eq!(rn(BF16, BF16.to_f64(bits)), bits);
        }
        assert_eq!(F16.to_f64(0x3c00), 1.0);
        assert_eq!(BF16.to_f64(0xc000), -2.0);
    }

    #[test]
    fn fma_rounds_once() {
        // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20: in f16 the 2^-20 decides nothing; with c = -1 it is
        // kept exactly.
        let a = F16.to_f64(0x3c01);
        let (hi, lo) = fma_exact(a, a, -1.0);
        assert_eq!(hi + lo, 2f64.powi(-9) + 2f64.powi(-20));
        let (hi, lo) = two_sum(1e20, 1.0);
        assert_eq!((hi, lo), (1e20, 1.0));
    }

    #[test]
    fn min_and_max_follow_minimum_number() {
        assert_eq!(min_max(f64::NAN, 2.0, false), Some(2.0));
        assert_eq!(min_max(f64::NAN, f64::NAN, true), None);
        assert!(min_max(0.0, -0.0, false).unwrap().is_sign_negative());
        assert!(min_max(-0.0, 0.0, true).unwrap().is_sign_positive());
        assert_eq!(min_max(1.0, 3.0, true), Some(3.0));
    }
}
