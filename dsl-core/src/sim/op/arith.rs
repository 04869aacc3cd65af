//! Integer and float arithmetic (PTX ISA: Integer Arithmetic Instructions, Floating-Point
//! Instructions, Half Precision Floating-Point Instructions).
//!
//! Integers wrap (two's complement); division by zero gives all ones (`div`) or the dividend
//! (`rem`), as the hardware does (the ISA leaves it unspecified). Shift amounts past the width
//! clamp to it. Floats are IEEE with round-to-nearest-even unless the op names a rounding;
//! f16/bf16 results are rounded once from the exact value. The `.approx` functions return the
//! f64 result of the exact function rounded to the type (within the ISA's error bounds, and
//! deterministic); `rcp.approx.ftz.f64` and the bf16 `ex2.approx.ftz` flush subnormal inputs and
//! results to zero.

use super::super::exec::{Exec, Flow};
use super::super::float::{
    canon32, canon64, fma_exact, min_max, round, two_sum, Format, Mode, F32,
};
use super::super::regs::{sext, width_mask, Lanes};
use super::super::report::SimError;
use crate::ir::op::{
    ApproxOp, Arith, BinOp, FloatRound, MulMode, Regs, RoundedOp, Subnormals, UnOp,
};
use crate::ir::Type;

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Arith) -> Result<Flow, SimError> {
    let out: Lanes = match op {
        Arith::Bin { op, ty, a, b, .. } => {
            let av = x.read(a, *ty)?;
            let b_ty = if matches!(op, BinOp::Shl | BinOp::Shr) {
                Type::U32
            } else {
                *ty
            };
            let bv = x.read(b, b_ty)?;
            if ty.is_float() {
                map2(&av, &bv, |p, q| float_bin(*op, *ty, p, q))
            } else {
                int_bin(*op, *ty, &av, &bv)
            }
        }
        Arith::MulPart { mode, ty, a, b, .. } => {
            let (av, bv) = (x.read(a, *ty)?, x.read(b, *ty)?);
            map2(&av, &bv, |p, q| mul_part(*mode, *ty, p, q))
        }
        Arith::Mad {
            mode, ty, a, b, c, ..
        } => {
            let wide = if *mode == MulMode::Wide {
                wide_of(*ty)
            } else {
                *ty
            };
            let (av, bv, cv) = (x.read(a, *ty)?, x.read(b, *ty)?, x.read(c, wide)?);
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = mul_part(*mode, *ty, av[l], bv[l]).wrapping_add(cv[l]) & width_mask(wide);
            }
            out
        }
        Arith::Fma {
            rnd, ty, a, b, c, ..
        } => {
            let (av, bv, cv) = (x.read(a, *ty)?, x.read(b, *ty)?, x.read(c, *ty)?);
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = fma(*rnd, *ty, av[l], bv[l], cv[l]);
            }
            out
        }
        Arith::Unary { op, ty, a, .. } => {
            let av = x.read(a, *ty)?;
            av.map(|v| unary(*op, *ty, v))
        }
        Arith::Approx {
            op,
            ty,
            subnormals,
            a,
            ..
        } => {
            let av = x.read(a, *ty)?;
            av.map(|v| approx(*op, *ty, *subnormals, v))
        }
        Arith::Rounded { op, rnd, ty, a, .. } => {
            let av = x.read(a, *ty)?;
            av.map(|v| rounded(*op, Mode::from(*rnd), *ty, v))
        }
        Arith::Bfe {
            ty, a, pos, len, ..
        } => {
            let (av, pv, lv) = (
                x.read(a, *ty)?,
                x.read(pos, Type::U32)?,
                x.read(len, Type::U32)?,
            );
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = bfe(*ty, av[l], pv[l], lv[l]);
            }
            out
        }
        Arith::Bfi {
            ty, f, b, pos, len, ..
        } => {
            let (fv, bv, pv, lv) = (
                x.read(f, *ty)?,
                x.read(b, *ty)?,
                x.read(pos, Type::U32)?,
                x.read(len, Type::U32)?,
            );
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = bfi(*ty, fv[l], bv[l], pv[l], lv[l]);
            }
            out
        }
    };
    // Every arithmetic op writes exactly one register.
    let mut dst = None;
    op.for_each_def(&mut |r| dst = Some(r));
    if let Some(d) = dst {
        x.set(d, &out);
    }
    Ok(Flow::Next)
}

fn map2(a: &Lanes, b: &Lanes, f: impl Fn(u64, u64) -> u64) -> Lanes {
    let mut out = [0; 32];
    for l in 0..32 {
        out[l] = f(a[l], b[l]);
    }
    out
}

/// The integer type twice as wide as `t`, of its signedness.
pub(crate) fn wide_of(t: Type) -> Type {
    match (t.is_signed(), t.bits()) {
        (true, 16) => Type::S32,
        (true, _) => Type::S64,
        (false, 16) => Type::U32,
        (false, _) => Type::U64,
    }
}

fn int_bin(op: BinOp, ty: Type, a: &Lanes, b: &Lanes) -> Lanes {
    let bits = ty.bits();
    let m = width_mask(ty);
    let signed = ty.is_signed();
    let s = |v: u64| sext(v, bits);
    let f: &dyn Fn(u64, u64) -> u64 = match op {
        BinOp::Add => &|p, q| p.wrapping_add(q),
        BinOp::Sub => &|p, q| p.wrapping_sub(q),
        BinOp::Mul => &|p, q| p.wrapping_mul(q),
        BinOp::Div if signed => &|p, q| {
            s(p).checked_div(s(q))
                .map_or(if q == 0 { u64::MAX } else { p }, |v| v as u64)
        },
        BinOp::Div => &|p, q| p.checked_div(q).unwrap_or(u64::MAX),
        BinOp::Rem if signed => &|p, q| {
            s(p).checked_rem(s(q))
                .map_or(if q == 0 { p } else { 0 }, |v| v as u64)
        },
        BinOp::Rem => &|p, q| p.checked_rem(q).unwrap_or(p),
        BinOp::Min if signed => &|p, q| if s(p) <= s(q) { p } else { q },
        BinOp::Min => &|p, q| p.min(q),
        BinOp::Max if signed => &|p, q| if s(p) >= s(q) { p } else { q },
        BinOp::Max => &|p, q| p.max(q),
        BinOp::And => &|p, q| p & q,
        BinOp::Or => &|p, q| p | q,
        BinOp::Xor => &|p, q| p ^ q,
        BinOp::Shl => &|p, q| if q >= u64::from(bits) { 0 } else { p << q },
        BinOp::Shr if signed => &|p, q| (s(p) >> q.min(u64::from(bits) - 1).min(63)) as u64,
        BinOp::Shr => &|p, q| if q >= u64::from(bits) { 0 } else { p >> q },
    };
    let mut out = [0; 32];
    for l in 0..32 {
        out[l] = f(a[l], b[l]) & m;
    }
    out
}

fn mul_part(mode: MulMode, ty: Type, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let p: i128 = if ty.is_signed() {
        i128::from(sext(a, bits)) * i128::from(sext(b, bits))
    } else {
        (u128::from(a) * u128::from(b)) as i128
    };
    match mode {
        MulMode::Lo => (p as u64) & width_mask(ty),
        MulMode::Hi => ((p >> bits) as u64) & width_mask(ty),
        MulMode::Wide => (p as u64) & width_mask(wide_of(ty)),
    }
}

/// A float's bits as an f64 (exactly), for a scalar type.
pub(crate) fn to_f64(ty: Type, bits: u64) -> f64 {
    match ty {
        Type::F64 => f64::from_bits(bits),
        Type::F32 => f64::from(f32::from_bits(bits as u32)),
        t => Format::of(t).map_or(0.0, |f| f.to_f64(bits & 0xffff)),
    }
}

/// Applies `f` to the operands `xs` of a scalar type, or to each 16-bit half of a packed type's
/// (element 0 in the low half) with the element type.
pub(crate) fn halves<const N: usize>(
    ty: Type,
    xs: [u64; N],
    f: impl Fn(Type, [u64; N]) -> u64,
) -> u64 {
    let elem = match ty {
        Type::F16x2 => Type::F16,
        Type::BF16x2 => Type::BF16,
        t => return f(t, xs),
    };
    f(elem, xs.map(|v| v & 0xffff)) | (f(elem, xs.map(|v| (v >> 16) & 0xffff)) << 16)
}

fn float_bin(op: BinOp, ty: Type, a: u64, b: u64) -> u64 {
    halves(ty, [a, b], |t, [p, q]| match t {
        Type::F32 => {
            let (x, y) = (f32::from_bits(p as u32), f32::from_bits(q as u32));
            match op {
                BinOp::Add => canon32(x + y),
                BinOp::Sub => canon32(x - y),
                BinOp::Mul => canon32(x * y),
                BinOp::Div => canon32(x / y),
                BinOp::Min | BinOp::Max => {
                    let r = min_max(f64::from(x), f64::from(y), op == BinOp::Max);
                    r.map_or(F32.nan(), |v| canon32(v as f32))
                }
                _ => 0,
            }
        }
        Type::F64 => {
            let (x, y) = (f64::from_bits(p), f64::from_bits(q));
            match op {
                BinOp::Add => canon64(x + y),
                BinOp::Sub => canon64(x - y),
                BinOp::Mul => canon64(x * y),
                BinOp::Div => canon64(x / y),
                BinOp::Min | BinOp::Max => {
                    min_max(x, y, op == BinOp::Max).map_or(canon64(f64::NAN), canon64)
                }
                _ => 0,
            }
        }
        t => {
            let Some(fmt) = Format::of(t) else { return 0 };
            let (x, y) = (fmt.to_f64(p), fmt.to_f64(q));
            let (hi, lo) = match op {
                BinOp::Add => two_sum(x, y),
                BinOp::Sub => two_sum(x, -y),
                // Products of two 11-bit (or 8-bit) significands are exact in f64.
                BinOp::Mul => (x * y, 0.0),
                BinOp::Min | BinOp::Max => match min_max(x, y, op == BinOp::Max) {
                    Some(v) => (v, 0.0),
                    None => return fmt.nan(),
                },
                _ => return 0,
            };
            round(fmt, hi, lo, Mode::Nearest)
        }
    })
}

fn fma(rnd: FloatRound, ty: Type, a: u64, b: u64, c: u64) -> u64 {
    let mode = Mode::from(rnd);
    halves(ty, [a, b, c], |t, [p, q, r]| match t {
        Type::F64 => canon64(f64::from_bits(p).mul_add(f64::from_bits(q), f64::from_bits(r))),
        Type::F32 if mode == Mode::Nearest => {
            let (x, y, z) = (
                f32::from_bits(p as u32),
                f32::from_bits(q as u32),
                f32::from_bits(r as u32),
            );
            canon32(x.mul_add(y, z))
        }
        t => {
            let Some(fmt) = Format::of(t) else { return 0 };
            let (x, y, z) = (to_f64(t, p), to_f64(t, q), to_f64(t, r));
            let (hi, lo) = fma_exact(x, y, z);
            round(fmt, hi, lo, mode)
        }
    })
}

/// `sqrt.rnd` and `rcp.rnd` on f32 or f64: the f64 result rounded to nearest, its exact
/// residual (`x - r*r` and `1 - r*x` are exact through one fma), and one rounding of the two in
/// the op's mode, so that directed modes see which side of `r` the exact value lies on.
fn rounded(op: RoundedOp, mode: Mode, ty: Type, a: u64) -> u64 {
    let x = match ty {
        Type::F32 => f64::from(f32::from_bits(a as u32)),
        _ => f64::from_bits(a),
    };
    let (hi, lo) = match op {
        RoundedOp::Sqrt => {
            let r = x.sqrt();
            let lo = if r.is_finite() && r != 0.0 {
                (-r).mul_add(r, x) / (2.0 * r)
            } else {
                0.0
            };
            (r, lo)
        }
        RoundedOp::Rcp => {
            let r = 1.0 / x;
            let lo = if r.is_finite() && r != 0.0 {
                (-r).mul_add(x, 1.0) / x
            } else {
                0.0
            };
            (r, lo)
        }
    };
    match ty {
        Type::F32 => round(F32, hi, lo, mode),
        _ => canon64(round_f64(hi, lo, mode)),
    }
}

/// `hi + lo` (`lo` below half an ulp of `hi`, `hi` the nearest f64) rounded in `mode`.
fn round_f64(hi: f64, lo: f64, mode: Mode) -> f64 {
    match mode {
        _ if lo == 0.0 || !hi.is_finite() => hi,
        Mode::Nearest => hi,
        Mode::Up if lo > 0.0 => hi.next_up(),
        Mode::Down if lo < 0.0 => hi.next_down(),
        Mode::Zero if hi > 0.0 && lo < 0.0 => hi.next_down(),
        Mode::Zero if hi < 0.0 && lo > 0.0 => hi.next_up(),
        _ => hi,
    }
}

fn unary(op: UnOp, ty: Type, a: u64) -> u64 {
    let bits = ty.bits();
    let m = width_mask(ty);
    match op {
        // Sign-bit operations (NaN inputs keep their payload, as the ISA allows).
        UnOp::Neg | UnOp::Abs if ty.is_float() => halves(ty, [a], |t, [v]| {
            let sign = 1u64 << (t.bits() - 1);
            match op {
                UnOp::Neg => v ^ sign,
                _ => v & !sign,
            }
        }),
        UnOp::Neg => (sext(a, bits).wrapping_neg() as u64) & m,
        UnOp::Abs => (sext(a, bits).wrapping_abs() as u64) & m,
        UnOp::Not => !a & m,
        UnOp::Popc => u64::from((a & m).count_ones()),
        UnOp::Clz => u64::from((a & m).leading_zeros() - (64 - bits)),
        UnOp::Brev => (a & m).reverse_bits() >> (64 - bits),
    }
}

fn approx(op: ApproxOp, ty: Type, subnormals: Subnormals, a: u64) -> u64 {
    let f = |x: f64| -> f64 {
        match op {
            ApproxOp::Ex2 => x.exp2(),
            ApproxOp::Lg2 => x.log2(),
            ApproxOp::Rcp => 1.0 / x,
            ApproxOp::Sqrt => x.sqrt(),
            ApproxOp::Rsqrt => 1.0 / x.sqrt(),
            ApproxOp::Sin => x.sin(),
            ApproxOp::Cos => x.cos(),
            ApproxOp::Tanh => x.tanh(),
        }
    };
    // Asked for, or the forms codegen writes with `.ftz` whatever was asked.
    let ftz = subnormals == Subnormals::FlushedToZero
        || (op == ApproxOp::Rcp && ty == Type::F64)
        || (op == ApproxOp::Ex2 && ty.is_bf16());
    halves(ty, [a], |t, [bits]| {
        let mut x = to_f64(t, bits);
        let tiny = |v: f64, t: Type| match t {
            Type::F64 => v.abs() < f64::MIN_POSITIVE,
            _ => v.abs() < f64::from(f32::MIN_POSITIVE),
        };
        if ftz && tiny(x, t) {
            x = 0.0f64.copysign(x);
        }
        let mut y = f(x);
        if ftz && y != 0.0 && tiny(y, t) {
            y = 0.0f64.copysign(y);
        }
        match t {
            Type::F64 => canon64(y),
            t => Format::of(t).map_or(0, |fmt| round(fmt, y, 0.0, Mode::Nearest)),
        }
    })
}

/// `bfe`: `len` bits from `pos` (both taken mod 256, then clamped to the width), sign-extended
/// from the last bit taken for signed types.
fn bfe(ty: Type, a: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let (pos, len) = (pos & 0xff, len & 0xff);
    let m = width_mask(ty);
    if len == 0 {
        return 0;
    }
    let sign_at = (pos + len - 1).min(bits - 1);
    let field = if pos >= bits { 0 } else { (a & m) >> pos };
    let keep = if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    let v = field & keep;
    if ty.is_signed() {
        let sbit = (a >> sign_at) & 1;
        let take = len.min(bits.saturating_sub(pos));
        if sbit == 1 {
            let ext = if take >= 64 { 0 } else { u64::MAX << take };
            return (v | ext) & m;
        }
    }
    v & m
}

/// `bfi`: `b` with `len` bits at `pos` replaced by `f`'s low bits.
fn bfi(ty: Type, f: u64, b: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let (pos, len) = (pos & 0xff, len & 0xff);
    if pos >= bits || len == 0 {
        return b;
    }
    let len = len.min(bits - pos);
    let keep = if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    let field = keep << pos;
    ((b & !field) | ((f << pos) & field)) & width_mask(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(x: f32) -> u64 {
        u64::from(half::f16::from_f32(x).to_bits())
    }

    #[test]
    fn integers_wrap_and_shift_clamps() {
        let a = [u64::from(u32::MAX); 32];
        let b = [2; 32];
        assert_eq!(int_bin(BinOp::Add, Type::U32, &a, &b)[0], 1);
        assert_eq!(
            int_bin(BinOp::Shr, Type::S32, &a, &[40; 32])[0],
            0xffff_ffff
        );
        assert_eq!(int_bin(BinOp::Shl, Type::U32, &b, &[32; 32])[0], 0);
        assert_eq!(int_bin(BinOp::Div, Type::U32, &b, &[0; 32])[0], 0xffff_ffff);
        assert_eq!(int_bin(BinOp::Min, Type::S32, &a, &b)[0], 0xffff_ffff);
        assert_eq!(mul_part(MulMode::Hi, Type::U32, 1 << 31, 4), 2);
        assert_eq!(
            mul_part(MulMode::Wide, Type::S32, 0xffff_ffff, 3),
            (-3i64) as u64
        );
        assert_eq!(unary(UnOp::Clz, Type::B32, 1), 31);
        assert_eq!(unary(UnOp::Brev, Type::B32, 1), 1 << 31);
        assert_eq!(unary(UnOp::Neg, Type::S16, 1), 0xffff);
    }

    #[test]
    fn flushed_approximations_flush_subnormal_inputs_and_results() {
        let f32_bits = |x: f32| u64::from(x.to_bits());
        // 2^-130 is subnormal in f32: kept, then flushed.
        let ex2 = |s| approx(ApproxOp::Ex2, Type::F32, s, f32_bits(-130.0));
        assert_eq!(ex2(Subnormals::Kept), f32_bits(2f32.powi(-130)));
        assert_eq!(ex2(Subnormals::FlushedToZero), 0);
        // 1/x of a subnormal x: +inf once x is flushed; of -2^127, -0 once 2^-127 is flushed.
        let rcp = |s, x: f32| approx(ApproxOp::Rcp, Type::F32, s, f32_bits(x));
        let tiny = f32::from_bits(1);
        assert_eq!(
            rcp(Subnormals::FlushedToZero, tiny),
            f32_bits(f32::INFINITY)
        );
        assert_eq!(
            rcp(Subnormals::Kept, -(2f32.powi(127))),
            f32_bits(-(2f32.powi(-127)))
        );
        assert_eq!(
            rcp(Subnormals::FlushedToZero, -(2f32.powi(127))),
            f32_bits(-0.0)
        );
        // Normal values are the same either way.
        assert_eq!(rcp(Subnormals::FlushedToZero, 4.0), f32_bits(0.25));
    }

    #[test]
    fn halves_round_once() {
        // 1 + 2^-10 + 2^-11: the f16 sum of 1+2^-10 and 2^-11 is a tie, rounded to even.
        let one_ulp = f16(1.0) + 1;
        let half_ulp = f16(2f32.powi(-11));
        assert_eq!(
            float_bin(BinOp::Add, Type::F16, one_ulp, half_ulp),
            one_ulp + 1
        );
        assert_eq!(
            float_bin(BinOp::Mul, Type::F16, f16(1.5), f16(2.0)),
            f16(3.0)
        );
        let packed = f16(1.0) | (f16(2.0) << 16);
        assert_eq!(
            float_bin(BinOp::Add, Type::F16x2, packed, packed),
            f16(2.0) | (f16(4.0) << 16)
        );
        assert_eq!(
            fma(FloatRound::Rn, Type::F16, f16(2.0), f16(3.0), f16(1.0)),
            f16(7.0)
        );
        // f32(1/3) is slightly above 1/3: three of it is 1 + 2^-25 exactly, between 1 and the
        // next f32.
        let third = (1.0f32 / 3.0).to_bits() as u64;
        let one = 1.0f32.to_bits() as u64;
        let three = 3f32.to_bits() as u64;
        assert_eq!(fma(FloatRound::Rp, Type::F32, third, three, 0), one + 1);
        assert_eq!(fma(FloatRound::Rm, Type::F32, third, three, 0), one);
        assert_eq!(fma(FloatRound::Rn, Type::F32, third, three, 0), one);
    }

    #[test]
    fn floats_follow_ieee_and_canonical_nan() {
        let nan = f32::NAN.to_bits() as u64;
        let two = 2f32.to_bits() as u64;
        assert_eq!(float_bin(BinOp::Add, Type::F32, nan, two), 0x7fff_ffff);
        assert_eq!(float_bin(BinOp::Min, Type::F32, nan, two), two);
        assert_eq!(
            approx(ApproxOp::Ex2, Type::F32, Subnormals::Kept, two),
            4f32.to_bits() as u64
        );
        assert_eq!(unary(UnOp::Abs, Type::F16x2, 0x8000_8000), 0);
    }

    #[test]
    fn bit_fields() {
        assert_eq!(bfe(Type::U32, 0xf0, 4, 4), 0xf);
        assert_eq!(bfe(Type::S32, 0xf0, 4, 4), 0xffff_ffff);
        assert_eq!(bfe(Type::S32, 0x70, 4, 4), 7);
        assert_eq!(bfi(Type::B32, 0xff, 0, 8, 4), 0xf00);
    }
}
