//! Host folding of operations on two constants, with PTX's results (which are Rust's wrapping
//! results for integers and IEEE round-to-nearest for f32/f64).

use super::value::Const;
use crate::ir::op::{BinOp, CmpOp, FloatRound, RoundedOp, UnOp};
use crate::ir::Type;

/// Folding refused because the operation has no defined result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FoldError {
    DivisionByZero,
}

/// The integer value of `v` read as `ty` (sign- or zero-extended).
fn int_of(ty: Type, v: i64) -> i128 {
    match ty {
        Type::Pred => (v & 1) as i128,
        Type::S32 => v as i32 as i128,
        Type::U32 | Type::B32 => v as u32 as i128,
        Type::S16 => v as i16 as i128,
        Type::U16 | Type::B16 => v as u16 as i128,
        Type::U64 | Type::B64 => v as u64 as i128,
        _ => v as i128,
    }
}

/// `v` wrapped to `ty`'s width, stored the way [`Const::Int`] stores it.
fn wrap(ty: Type, v: i128) -> i64 {
    match ty {
        Type::Pred => (v & 1) as i64,
        Type::S32 => v as i32 as i64,
        Type::U32 | Type::B32 => v as u32 as i64,
        Type::S16 => v as i16 as i64,
        Type::U16 | Type::B16 => v as u16 as i64,
        _ => v as i64,
    }
}

/// Whether the builder folds values of this type (packed and 16-bit floats are left to the GPU).
pub(crate) fn folds(ty: Type) -> bool {
    ty.is_int() || matches!(ty, Type::Pred | Type::F32 | Type::F64)
}

/// `a op b` of type `ty`; `Ok(None)` when the type is not folded.
pub(crate) fn bin(op: BinOp, ty: Type, a: Const, b: Const) -> Result<Option<Const>, FoldError> {
    if !folds(ty) {
        return Ok(None);
    }
    match (a, b) {
        (Const::Int(a), Const::Int(b)) => int_bin(op, ty, a, b).map(|v| v.map(Const::Int)),
        (Const::Float(a), Const::Float(b)) => Ok(float_bin(op, ty, a, b).map(Const::Float)),
        _ => Ok(None),
    }
}

fn int_bin(op: BinOp, ty: Type, a: i64, b: i64) -> Result<Option<i64>, FoldError> {
    let bits = ty.bits();
    let (x, y) = (int_of(ty, a), int_of(ty, b));
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem if y == 0 => return Err(FoldError::DivisionByZero),
        BinOp::Div => x / y,
        BinOp::Rem => x % y,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        // The shift amount is a u32; PTX clamps amounts past the width.
        BinOp::Shl | BinOp::Shr => {
            let amount = b as u32;
            if amount >= bits {
                if op == BinOp::Shr && ty.is_signed() && x < 0 {
                    -1
                } else {
                    0
                }
            } else if op == BinOp::Shl {
                x << amount
            } else {
                x >> amount
            }
        }
    };
    Ok(Some(wrap(ty, r)))
}

fn float_bin(op: BinOp, ty: Type, a: f64, b: f64) -> Option<f64> {
    if ty == Type::F32 {
        let (x, y) = (a as f32, b as f32);
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Min => x.min(y),
            BinOp::Max => x.max(y),
            _ => return None,
        };
        Some(r as f64)
    } else {
        let r = match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Min => a.min(b),
            BinOp::Max => a.max(b),
            _ => return None,
        };
        Some(r)
    }
}

/// `op a` of type `ty`.
pub(crate) fn unary(op: UnOp, ty: Type, a: Const) -> Option<Const> {
    if !folds(ty) {
        return None;
    }
    match (op, a) {
        (UnOp::Neg, Const::Int(a)) => Some(Const::Int(wrap(ty, int_of(ty, a).wrapping_neg()))),
        (UnOp::Not, Const::Int(a)) => Some(Const::Int(wrap(ty, !int_of(ty, a)))),
        (UnOp::Neg, Const::Float(a)) if ty == Type::F32 => Some(Const::Float(-(a as f32) as f64)),
        (UnOp::Neg, Const::Float(a)) => Some(Const::Float(-a)),
        (UnOp::Abs, Const::Int(a)) if ty.is_signed() => {
            Some(Const::Int(wrap(ty, int_of(ty, a).wrapping_abs())))
        }
        (UnOp::Abs, Const::Float(a)) => Some(Const::Float(a.abs())),
        _ => None,
    }
}

/// A correctly rounded `op a` (round to nearest even only) of type f32 or f64.
pub(crate) fn rounded(op: RoundedOp, rnd: FloatRound, ty: Type, a: Const) -> Option<Const> {
    let Const::Float(a) = a else { return None };
    if rnd != FloatRound::Rn {
        return None;
    }
    // Rust's `sqrt` and `/` are IEEE 754's, rounded to nearest even in the value's width.
    match ty {
        Type::F32 => {
            let x = a as f32;
            Some(Const::Float(f64::from(match op {
                RoundedOp::Sqrt => x.sqrt(),
                RoundedOp::Rcp => 1.0 / x,
            })))
        }
        Type::F64 => Some(Const::Float(match op {
            RoundedOp::Sqrt => a.sqrt(),
            RoundedOp::Rcp => 1.0 / a,
        })),
        _ => None,
    }
}

/// The bits of constant `a` of type `src` read as type `dst` of the same width (`mov.bN`).
pub(crate) fn bitcast(src: Type, dst: Type, a: Const) -> Option<Const> {
    if src.bits() != dst.bits() || !folds(src) || !folds(dst) || src == Type::Pred {
        return None;
    }
    let bits: u64 = match (src, a) {
        (Type::F32, Const::Float(x)) => u64::from((x as f32).to_bits()),
        (Type::F64, Const::Float(x)) => x.to_bits(),
        (_, Const::Int(i)) => int_of(src, i) as u64,
        _ => return None,
    };
    Some(match dst {
        Type::F32 => Const::Float(f64::from(f32::from_bits(bits as u32))),
        Type::F64 => Const::Float(f64::from_bits(bits)),
        _ => Const::Int(wrap(dst, i128::from(bits))),
    })
}

/// `a cmp b` of type `ty`.
pub(crate) fn compare(cmp: CmpOp, ty: Type, a: Const, b: Const) -> Option<bool> {
    if !folds(ty) {
        return None;
    }
    match (a, b) {
        (Const::Int(a), Const::Int(b)) => {
            let (x, y) = (int_of(ty, a), int_of(ty, b));
            Some(match cmp {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                _ => return None,
            })
        }
        (Const::Float(x), Const::Float(y)) => {
            // f32 constants are exact in f64, so comparing the f64s compares the f32s.
            let unordered = x.is_nan() || y.is_nan();
            Some(match cmp {
                CmpOp::Eq => x == y,
                CmpOp::Ne => !unordered && x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                CmpOp::Equ => unordered || x == y,
                CmpOp::Neu => unordered || x != y,
                CmpOp::Ltu => unordered || x < y,
                CmpOp::Leu => unordered || x <= y,
                CmpOp::Gtu => unordered || x > y,
                CmpOp::Geu => unordered || x >= y,
                CmpOp::Num => !unordered,
                CmpOp::Nan => unordered,
            })
        }
        _ => None,
    }
}

/// Rust's `a as dst` from `src`, for the folded types.
pub(crate) fn cast(src: Type, dst: Type, a: Const) -> Option<Const> {
    if !folds(src) || !folds(dst) {
        return None;
    }
    match a {
        Const::Int(v) => {
            let x = int_of(src, v);
            Some(match dst {
                Type::F32 => Const::Float(x as f32 as f64),
                Type::F64 => Const::Float(x as f64),
                Type::Pred => Const::Int((x != 0) as i64),
                _ => Const::Int(wrap(dst, x)),
            })
        }
        Const::Float(f) => {
            let f32v = f as f32;
            Some(match (src, dst) {
                (_, Type::Pred) => Const::Int((f != 0.0) as i64),
                (_, Type::F64) => Const::Float(f),
                (_, Type::F32) => Const::Float(f as f32 as f64),
                (Type::F32, Type::S32) => Const::Int(f32v as i32 as i64),
                (Type::F32, Type::U32) => Const::Int(f32v as u32 as i64),
                (Type::F32, Type::S64) => Const::Int(f32v as i64),
                (Type::F32, Type::U64) => Const::Int(f32v as u64 as i64),
                (_, Type::S32) => Const::Int(f as i32 as i64),
                (_, Type::U32) => Const::Int(f as u32 as i64),
                (_, Type::S64) => Const::Int(f as i64),
                (_, Type::U64) => Const::Int(f as u64 as i64),
                _ => return None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> Const {
        Const::Int(v)
    }

    #[test]
    fn integers_wrap_like_rust() {
        let cases: [(BinOp, Type, i64, i64, i64); 10] = [
            (
                BinOp::Add,
                Type::S32,
                i32::MAX as i64,
                1,
                i32::MAX.wrapping_add(1) as i64,
            ),
            (BinOp::Add, Type::U32, u32::MAX as i64, 1, 0),
            (
                BinOp::Mul,
                Type::U64,
                -1,
                -1,
                (u64::MAX.wrapping_mul(u64::MAX)) as i64,
            ),
            (BinOp::Div, Type::S32, -7, 2, -7 / 2),
            (BinOp::Rem, Type::S32, -7, 2, -7 % 2),
            (BinOp::Div, Type::U32, -1, 2, (u32::MAX / 2) as i64),
            (BinOp::Shr, Type::S32, -16, 2, -16 >> 2),
            (BinOp::Shr, Type::U32, -16, 2, ((-16i32 as u32) >> 2) as i64),
            (BinOp::Shl, Type::S32, 1, 40, 0),
            (BinOp::Min, Type::U64, -1, 3, 3),
        ];
        for (op, ty, a, b, want) in cases {
            assert_eq!(
                bin(op, ty, i(a), i(b)),
                Ok(Some(i(want))),
                "{op:?} {ty} {a} {b}"
            );
        }
        assert_eq!(
            bin(BinOp::Div, Type::S32, i(1), i(0)),
            Err(FoldError::DivisionByZero)
        );
    }

    #[test]
    fn floats_round_in_their_width() {
        let third = bin(BinOp::Div, Type::F32, Const::Float(1.0), Const::Float(3.0));
        assert_eq!(third, Ok(Some(Const::Float((1.0f32 / 3.0) as f64))));
        assert_eq!(
            bin(BinOp::Add, Type::F16, Const::Float(1.0), Const::Float(1.0)),
            Ok(None)
        );
        assert_eq!(
            compare(
                CmpOp::Ne,
                Type::F32,
                Const::Float(f64::NAN),
                Const::Float(1.0)
            ),
            Some(false)
        );
        assert_eq!(
            compare(
                CmpOp::Neu,
                Type::F32,
                Const::Float(f64::NAN),
                Const::Float(1.0)
            ),
            Some(true)
        );
    }

    #[test]
    fn casts_follow_rust_as() {
        assert_eq!(cast(Type::S32, Type::S64, i(-1)), Some(i(-1)));
        assert_eq!(
            cast(Type::U32, Type::S64, i(u32::MAX as i64)),
            Some(i(u32::MAX as i64))
        );
        assert_eq!(cast(Type::S64, Type::S32, i(1 << 40 | 5)), Some(i(5)));
        assert_eq!(
            cast(Type::F32, Type::S32, Const::Float(1e20)),
            Some(i(i32::MAX as i64))
        );
        assert_eq!(cast(Type::F32, Type::U32, Const::Float(-3.5)), Some(i(0)));
        assert_eq!(
            cast(Type::F64, Type::S32, Const::Float(f64::NAN)),
            Some(i(0))
        );
        assert_eq!(
            cast(Type::S64, Type::F32, i(16_777_217)),
            Some(Const::Float(16_777_216.0))
        );
    }
}
