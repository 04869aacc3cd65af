//! Comparisons and selects (PTX ISA: Comparison and Selection Instructions: setp, selp).
//! Integer comparisons are signed or unsigned by the type (raw bits compare unsigned); float
//! comparisons are ordered (false on NaN) except the `u` forms, `num` and `nan`.

use super::super::exec::{Exec, Flow};
use super::super::regs::sext;
use super::super::report::SimError;
use super::arith::to_f64;
use crate::ir::op::{CmpOp, Compare};
use crate::ir::Type;
use std::cmp::Ordering;

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Compare) -> Result<Flow, SimError> {
    match op {
        Compare::Setp { cmp, ty, dst, a, b } => {
            let (av, bv) = (x.read(a, *ty)?, x.read(b, *ty)?);
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = u64::from(setp(*cmp, *ty, av[l], bv[l]));
            }
            x.set(*dst, &out);
        }
        Compare::Selp {
            ty,
            dst,
            a,
            b,
            cond,
        } => {
            let (av, bv, cv) = (x.read(a, *ty)?, x.read(b, *ty)?, x.read(cond, Type::Pred)?);
            let mut out = [0; 32];
            for l in 0..32 {
                out[l] = if cv[l] & 1 != 0 { av[l] } else { bv[l] };
            }
            x.set(*dst, &out);
        }
    }
    Ok(Flow::Next)
}

pub(crate) fn setp(cmp: CmpOp, ty: Type, a: u64, b: u64) -> bool {
    let ord = if ty.is_float() {
        to_f64(ty, a).partial_cmp(&to_f64(ty, b))
    } else if ty.is_signed() {
        Some(sext(a, ty.bits()).cmp(&sext(b, ty.bits())))
    } else {
        Some(a.cmp(&b))
    };
    let is = |o: Ordering| ord == Some(o);
    let unordered = ord.is_none();
    match cmp {
        CmpOp::Eq => is(Ordering::Equal),
        CmpOp::Ne => !unordered && !is(Ordering::Equal),
        CmpOp::Lt => is(Ordering::Less),
        CmpOp::Le => is(Ordering::Less) || is(Ordering::Equal),
        CmpOp::Gt => is(Ordering::Greater),
        CmpOp::Ge => is(Ordering::Greater) || is(Ordering::Equal),
        CmpOp::Equ => unordered || is(Ordering::Equal),
        CmpOp::Neu => unordered || !is(Ordering::Equal),
        CmpOp::Ltu => unordered || is(Ordering::Less),
        CmpOp::Leu => unordered || !is(Ordering::Greater),
        CmpOp::Gtu => unordered || is(Ordering::Greater),
        CmpOp::Geu => unordered || !is(Ordering::Less),
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signedness_and_nan_decide() {
        assert!(setp(CmpOp::Lt, Type::S32, 0xffff_ffff, 0));
        assert!(!setp(CmpOp::Lt, Type::U32, 0xffff_ffff, 0));
        let nan = u64::from(f32::NAN.to_bits());
        let one = u64::from(1f32.to_bits());
        assert!(!setp(CmpOp::Ne, Type::F32, nan, one));
        assert!(setp(CmpOp::Neu, Type::F32, nan, one));
        assert!(setp(CmpOp::Nan, Type::F32, nan, one));
        let zero = u64::from(0f32.to_bits());
        let neg_zero = u64::from((-0f32).to_bits());
        assert!(setp(CmpOp::Eq, Type::F32, zero, neg_zero));
        let h = |x: f32| u64::from(half::f16::from_f32(x).to_bits());
        assert!(setp(CmpOp::Gt, Type::F16, h(2.0), h(-3.0)));
    }
}
