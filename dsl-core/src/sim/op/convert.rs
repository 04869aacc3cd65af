//! Conversions (PTX ISA: Data Movement and Conversion Instructions: cvt) and the f32-pair
//! packing `cvt.rn{.relu}.{f16x2,bf16x2}.f32`.
//!
//! Integer to integer: truncated or extended by the source's signedness; `.sat` clamps to the
//! destination's range. Float to float: exact when widening, rounded once by the modifier when
//! narrowing (to nearest even by default); an integer rounding (`.rni`...) between floats of one
//! width rounds to an integral value. Float to integer: rounded by the modifier (toward zero by
//! default), saturated to the range, NaN to 0. Integer to float: rounded once. `.sat` on a float
//! result clamps to [0, 1] (NaN to 0). A result narrower than its register (8-bit) is extended
//! by its signedness.

use super::super::exec::{Exec, Flow};
use super::super::float::{canon32, canon64, round, Format, Mode};
use super::super::regs::{sext, width_mask, Lanes};
use super::super::report::SimError;
use super::arith::to_f64;
use crate::ir::op::{default_round, Convert, CvtRound};
use crate::ir::{Reg, Type};

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Convert) -> Result<Flow, SimError> {
    let (dst, out): (Reg, Lanes) = match op {
        Convert::Cvt {
            dst_ty,
            src_ty,
            rnd,
            sat,
            dst,
            src,
        } => {
            let v = x.read(src, *src_ty)?;
            let rnd = rnd.or_else(|| default_round(*dst_ty, *src_ty));
            let mut out = v.map(|s| cvt(*dst_ty, *src_ty, rnd, *sat, s));
            if dst_ty.bits() == 8 {
                for o in &mut out {
                    *o = if dst_ty.is_signed() {
                        (sext(*o, 8) as u64) & width_mask(dst.ty)
                    } else {
                        *o & 0xff
                    };
                }
            }
            (*dst, out)
        }
        Convert::PackF32 {
            dst_ty,
            relu,
            dst,
            hi,
            lo,
        } => {
            let (h, l) = (x.read(hi, Type::F32)?, x.read(lo, Type::F32)?);
            let fmt = Format::of(*dst_ty).ok_or_else(|| x.unsupported(dst_ty))?;
            let one = |bits: u64| {
                let v = f64::from(f32::from_bits(bits as u32));
                if *relu && v.is_nan() {
                    fmt.nan()
                } else if *relu && v < 0.0 {
                    0
                } else {
                    round(fmt, v, 0.0, Mode::Nearest)
                }
            };
            let mut out = [0; 32];
            for i in 0..32 {
                out[i] = one(l[i]) | (one(h[i]) << 16);
            }
            (*dst, out)
        }
    };
    x.set(dst, &out);
    Ok(Flow::Next)
}

/// The range of an integer type, as i128.
fn int_range(t: Type) -> (i128, i128) {
    let b = t.bits();
    if t.is_signed() {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// Rounds `v` to an integral value by `r`'s direction.
fn round_integral(v: f64, r: Option<CvtRound>) -> f64 {
    match r.map(Mode::of_cvt) {
        Some(Mode::Nearest) => v.round_ties_even(),
        Some(Mode::Down) => v.floor(),
        Some(Mode::Up) => v.ceil(),
        _ => v.trunc(),
    }
}

/// Encodes the exact value `hi + lo` in float type `t`, rounded by `mode`.
fn encode(t: Type, hi: f64, lo: f64, mode: Mode) -> u64 {
    match t {
        Type::F64 => {
            // `hi` is the nearest f64; a directed mode steps away from it when `lo` says so.
            let v = match mode {
                Mode::Down if lo < 0.0 => hi.next_down(),
                Mode::Up if lo > 0.0 => hi.next_up(),
                Mode::Zero if (lo < 0.0) != (hi < 0.0) && lo != 0.0 => {
                    if hi > 0.0 {
                        hi.next_down()
                    } else {
                        hi.next_up()
                    }
                }
                _ => hi,
            };
            canon64(v)
        }
        t => Format::of(t).map_or(0, |f| round(f, hi, lo, mode)),
    }
}

pub(crate) fn cvt(dst: Type, src: Type, rnd: Option<CvtRound>, sat: bool, s: u64) -> u64 {
    let mode = rnd.map_or(Mode::Nearest, Mode::of_cvt);
    match (dst.is_float(), src.is_float()) {
        (false, false) => {
            let v: i128 = if src.is_signed() {
                i128::from(sext(s, src.bits()))
            } else {
                i128::from(s & width_mask(src))
            };
            let v = if sat && dst.is_int() {
                let (lo, hi) = int_range(dst);
                v.clamp(lo, hi)
            } else {
                v
            };
            (v as u64) & width_mask(dst)
        }
        (false, true) => {
            let v = round_integral(to_f64(src, s), rnd);
            if v.is_nan() {
                return 0;
            }
            let (lo, hi) = int_range(if dst.is_int() {
                dst
            } else {
                // A raw-bits destination converts as unsigned.
                match dst.bits() {
                    8 => Type::U8,
                    16 => Type::U16,
                    32 => Type::U32,
                    _ => Type::U64,
                }
            });
            let i = if v <= lo as f64 {
                lo
            } else if v >= hi as f64 {
                hi
            } else {
                v as i128
            };
            (i as u64) & width_mask(dst)
        }
        (true, false) => {
            let v: i128 = if src.is_signed() {
                i128::from(sext(s, src.bits()))
            } else {
                i128::from(s & width_mask(src))
            };
            let hi = v as f64;
            let lo = (v - hi as i128) as f64;
            let r = encode(dst, hi, lo, mode);
            if sat {
                saturate(dst, r)
            } else {
                r
            }
        }
        (true, true) => {
            let v = to_f64(src, s);
            let r = if dst == src {
                // cvt.rni.f32.f32 and friends: an integral value of the same format.
                let v = match rnd {
                    Some(CvtRound::Rni | CvtRound::Rzi | CvtRound::Rmi | CvtRound::Rpi) => {
                        round_integral(v, rnd)
                    }
                    _ => v,
                };
                match dst {
                    Type::F32 => canon32(v as f32),
                    t => encode(t, v, 0.0, Mode::Nearest),
                }
            } else {
                encode(dst, v, 0.0, mode)
            };
            if sat {
                saturate(dst, r)
            } else {
                r
            }
        }
    }
}

/// `.sat` on a float result: clamped to [0, 1], NaN to +0.
fn saturate(t: Type, bits: u64) -> u64 {
    let v = to_f64(t, bits);
    let c = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    encode(t, c, 0.0, Mode::Nearest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn float_to_int_rounds_saturates_and_zeroes_nan() {
        assert_eq!(
            cvt(Type::S32, Type::F32, Some(CvtRound::Rzi), false, f(-2.7)),
            (-2i64 as u64) & 0xffff_ffff
        );
        assert_eq!(
            cvt(Type::S32, Type::F32, Some(CvtRound::Rni), false, f(2.5)),
            2
        );
        assert_eq!(
            cvt(Type::S32, Type::F32, Some(CvtRound::Rmi), false, f(-2.5)),
            (-3i64 as u64) & 0xffff_ffff
        );
        assert_eq!(
            cvt(Type::U32, Type::F32, Some(CvtRound::Rzi), false, f(-5.0)),
            0
        );
        assert_eq!(
            cvt(Type::U8, Type::F32, Some(CvtRound::Rzi), false, f(300.0)),
            255
        );
        assert_eq!(
            cvt(
                Type::S32,
                Type::F32,
                Some(CvtRound::Rzi),
                false,
                f(f32::NAN)
            ),
            0
        );
    }

    #[test]
    fn conversions_between_floats_and_integers() {
        let h = |x: f32| u64::from(half::f16::from_f32(x).to_bits());
        assert_eq!(
            cvt(Type::F16, Type::F32, Some(CvtRound::Rn), false, f(1.5)),
            h(1.5)
        );
        assert_eq!(cvt(Type::F32, Type::F16, None, false, h(0.25)), f(0.25));
        assert_eq!(
            cvt(Type::F32, Type::S32, Some(CvtRound::Rn), false, 0xffff_fffe),
            f(-2.0)
        );
        // 2^24 + 1 is not an f32: nearest-even gives 2^24, up gives 2^24 + 2.
        let big = (1u64 << 24) + 1;
        assert_eq!(
            cvt(Type::F32, Type::U32, Some(CvtRound::Rn), false, big),
            f(16_777_216.0)
        );
        assert_eq!(
            cvt(Type::F32, Type::U32, Some(CvtRound::Rp), false, big),
            f(16_777_218.0)
        );
        assert_eq!(
            cvt(Type::F32, Type::F32, Some(CvtRound::Rni), false, f(2.5)),
            f(2.0)
        );
        assert_eq!(cvt(Type::F32, Type::F32, None, true, f(7.0)), f(1.0));
        assert_eq!(cvt(Type::S32, Type::S16, None, false, 0xffff), 0xffff_ffff);
        assert_eq!(cvt(Type::U16, Type::S32, None, true, 0xffff_ffff), 0);
        assert_eq!(cvt(Type::S8, Type::S32, None, true, 1000), 127);
    }
}
