//! Immediates printed the way PTX spells them in a slot of a given type.
//!
//! Integers print in decimal (hex when the unsigned bit pattern is large), f32 as `0fXXXXXXXX`,
//! f64 as `0dXXXXXXXXXXXXXXXX`. PTX has no f16/bf16 literals: such an immediate is a bit pattern
//! that codegen first moves into a register ([`Literal::Bits`]).

use dsl_core::ir::{Operand, Type};

/// How an immediate appears in a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Literal {
    /// Printed in place.
    Text(String),
    /// A 16- or 32-bit pattern that must be moved into a register of `bits` width first.
    Bits {
        /// 16 or 32.
        bits: u32,
        /// The pattern.
        value: u32,
    },
}

/// The literal for immediate `op` in a slot of type `ty`; `Err` says why it does not fit.
pub(crate) fn literal(op: &Operand, ty: Type) -> Result<Literal, String> {
    let float = match op {
        Operand::Reg(_) => return Err("not an immediate".into()),
        Operand::Imm(i) => *i as f64,
        Operand::ImmF(x) => *x,
    };
    match ty {
        Type::F32 => Ok(Literal::Text(format!("0f{:08X}", (float as f32).to_bits()))),
        Type::F64 => Ok(Literal::Text(format!("0d{:016X}", float.to_bits()))),
        Type::F16 => Ok(Literal::Bits {
            bits: 16,
            value: u32::from(f16_bits(float)),
        }),
        Type::BF16 => Ok(Literal::Bits {
            bits: 16,
            value: u32::from(bf16_bits(float)),
        }),
        // A packed immediate fills both halves with the same value.
        Type::F16x2 => {
            let h = u32::from(f16_bits(float));
            Ok(Literal::Bits {
                bits: 32,
                value: (h << 16) | h,
            })
        }
        Type::BF16x2 => {
            let h = u32::from(bf16_bits(float));
            Ok(Literal::Bits {
                bits: 32,
                value: (h << 16) | h,
            })
        }
        _ => {
            let Operand::Imm(i) = *op else {
                return Err(format!("a float immediate cannot fill a {ty} slot"));
            };
            int_literal(i, ty).map(Literal::Text)
        }
    }
}

fn int_literal(i: i64, ty: Type) -> Result<String, String> {
    let bits = ty.bits();
    if ty == Type::Pred {
        return match i {
            0 | 1 => Ok(i.to_string()),
            _ => Err(format!("predicate immediate {i} is not 0 or 1")),
        };
    }
    // Accept any value whose signed or unsigned reading fits the width.
    let fits = bits == 64 || {
        let lo = -(1i64 << (bits - 1));
        let hi = (1i64 << bits) - 1;
        (lo..=hi).contains(&i)
    };
    if !fits {
        return Err(format!("immediate {i} does not fit in {ty}"));
    }
    if ty.is_signed() || (0..(1i64 << 31)).contains(&i) {
        return Ok(i.to_string());
    }
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    Ok(format!("0x{:X}", (i as u64) & mask))
}

/// IEEE binary16 bits of `x`, rounded to nearest even.
pub(crate) fn f16_bits(x: f64) -> u16 {
    narrow_float(x, 5, 10)
}

/// bfloat16 bits of `x`, rounded to nearest even.
pub(crate) fn bf16_bits(x: f64) -> u16 {
    narrow_float(x, 8, 7)
}

/// Rounds `x` to a binary format of `e_bits` exponent and `m_bits` mantissa bits (at most 16 bits
/// in all), to nearest even, with subnormals, infinities and a quiet NaN.
fn narrow_float(x: f64, e_bits: u32, m_bits: u32) -> u16 {
    let sign: u64 = if x.is_sign_negative() {
        1 << (e_bits + m_bits)
    } else {
        0
    };
    let exp_mask: u64 = ((1 << e_bits) - 1) << m_bits;
    if x.is_nan() {
        return (exp_mask | (1 << (m_bits - 1))) as u16;
    }
    let bias = (1i32 << (e_bits - 1)) - 1;
    let a = x.abs();
    if a.is_infinite() {
        return (sign | exp_mask) as u16;
    }
    let raw = a.to_bits();
    let biased = ((raw >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Zero, or an f64 subnormal: far below the narrow format's smallest subnormal.
        return sign as u16;
    }
    let mut e = biased - 1023;
    let mant = (raw & ((1u64 << 52) - 1)) | (1u64 << 52);
    let round_shift = |m: u64, shift: u32| -> u64 {
        if shift >= 64 {
            return 0;
        }
        let keep = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        let half = if shift == 0 { 0 } else { 1u64 << (shift - 1) };
        if shift > 0 && (rem > half || (rem == half && keep & 1 == 1)) {
            keep + 1
        } else {
            keep
        }
    };
    if e >= 1 - bias {
        let mut keep = round_shift(mant, 52 - m_bits);
        if keep >> (m_bits + 1) != 0 {
            keep >>= 1;
            e += 1;
        }
        if e > bias {
            return (sign | exp_mask) as u16;
        }
        let field = ((e + bias) as u64) << m_bits;
        (sign | field | (keep & ((1 << m_bits) - 1))) as u16
    } else {
        // Subnormal: count units of 2^(1 - bias - m_bits); a carry into the exponent field
        // encodes the smallest normal number, as it should.
        let shift = (1 - bias - m_bits as i32) - (e - 52);
        let keep = round_shift(mant, shift as u32);
        (sign | keep) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_known_values() {
        // Bit patterns from the IEEE 754 binary16 and bfloat16 definitions.
        assert_eq!(f16_bits(1.0), 0x3C00);
        assert_eq!(f16_bits(-2.0), 0xC000);
        assert_eq!(f16_bits(65504.0), 0x7BFF);
        assert_eq!(f16_bits(65520.0), 0x7C00);
        assert_eq!(f16_bits(0.1), 0x2E66);
        assert_eq!(f16_bits(2f64.powi(-24)), 0x0001);
        assert_eq!(f16_bits(2f64.powi(-14)), 0x0400);
        assert_eq!(f16_bits(2f64.powi(-26)), 0x0000);
        assert_eq!(f16_bits(f64::INFINITY), 0x7C00);
        assert_eq!(f16_bits(f64::NAN) & 0x7E00, 0x7E00);
        assert_eq!(bf16_bits(1.0), 0x3F80);
        assert_eq!(bf16_bits(0.1), 0x3DCD);
        assert_eq!(bf16_bits(3.140625), 0x4049);
        assert_eq!(bf16_bits(-0.0), 0x8000);
    }

    #[test]
    fn integer_and_float_text() {
        let t = |op, ty| literal(&op, ty).unwrap();
        assert_eq!(
            t(Operand::Imm(-1), Type::U32),
            Literal::Text("0xFFFFFFFF".into())
        );
        assert_eq!(t(Operand::Imm(-1), Type::S32), Literal::Text("-1".into()));
        assert_eq!(t(Operand::Imm(31), Type::B32), Literal::Text("31".into()));
        assert_eq!(
            t(Operand::Imm(1), Type::F32),
            Literal::Text("0f3F800000".into())
        );
        assert_eq!(
            t(Operand::ImmF(0.5), Type::F64),
            Literal::Text("0d3FE0000000000000".into())
        );
        assert_eq!(
            t(Operand::ImmF(1.0), Type::F16x2),
            Literal::Bits {
                bits: 32,
                value: 0x3C00_3C00
            }
        );
        assert!(literal(&Operand::Imm(1 << 40), Type::U32).is_err());
        assert!(literal(&Operand::ImmF(1.5), Type::U32).is_err());
        assert!(literal(&Operand::Imm(2), Type::Pred).is_err());
    }
}
