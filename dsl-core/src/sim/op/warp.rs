//! Warp collectives (PTX ISA: shfl.sync, vote.sync, redux.sync, elect.sync, activemask).
//!
//! The machine runs a `.sync` op only once every lane of its member mask that has not exited is
//! at it (the lanes of one part); here the op computes across the executing lanes. A lane
//! outside the member mask, lanes that disagree on the mask, or a shuffle reading a lane that
//! does not take part is a [`FindingKind::WarpSync`]: the ISA leaves the result undefined.

use super::super::exec::{Exec, Flow};
use super::super::regs::{lanes, sext, Lanes};
use super::super::report::{FindingKind, SimError};
use crate::ir::op::{ReduxOp, ShflMode, VoteMode, Warp};
use crate::ir::{Operand, Type};

/// The member mask of the executing lanes (the first lane's), checking that they agree and
/// belong to it.
pub(crate) fn member_mask(x: &mut Exec<'_, '_>, o: &Operand) -> Result<u32, SimError> {
    let v = x.read(o, Type::B32)?;
    let first = x.mask.trailing_zeros().min(31) as usize;
    let mask = v[first] as u32;
    let disagree = lanes(x.mask).find(|&l| v[l] as u32 != mask);
    if let Some(l) = disagree {
        x.find(FindingKind::WarpSync, l as u32, || {
            format!(
                "lanes of the warp give different member masks ({mask:#010x} in lane {first}, {:#010x} in lane {l})",
                v[l] as u32
            )
        });
    }
    let outside = x.mask & !mask;
    if outside != 0 {
        x.find(FindingKind::WarpSync, outside.trailing_zeros(), || {
            format!("lanes {outside:#010x} execute it but are not in its member mask {mask:#010x}")
        });
    }
    Ok(mask)
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Warp) -> Result<Flow, SimError> {
    match op {
        Warp::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            membermask,
        } => {
            let members = member_mask(x, membermask)?;
            let (av, bv, cv) = (
                x.read(a, Type::B32)?,
                x.read(b, Type::U32)?,
                x.read(c, Type::U32)?,
            );
            let (mut out, mut pred) = ([0u64; 32], [0u64; 32]);
            let sources = x.mask & members;
            for l in lanes(x.mask) {
                let (j, ok) = shfl_source(*mode, l as u32, bv[l] as u32, cv[l] as u32);
                if sources & (1 << j) == 0 {
                    x.find(FindingKind::WarpSync, l as u32, || {
                        format!("lane {l} reads lane {j}, which does not take part in the shuffle")
                    });
                }
                out[l] = av[j as usize];
                pred[l] = u64::from(ok);
            }
            x.set(*dst, &out);
            if let Some(p) = dst_pred {
                x.set(*p, &pred);
            }
        }
        Warp::Vote {
            mode,
            dst,
            pred,
            negate,
            membermask,
        } => {
            member_mask(x, membermask)?;
            let pv = x.read(pred, Type::Pred)?;
            let mut ballot = 0u32;
            for l in lanes(x.mask) {
                if (pv[l] & 1 != 0) != *negate {
                    ballot |= 1 << l;
                }
            }
            let v = match mode {
                VoteMode::All => u64::from(ballot == x.mask),
                VoteMode::Any => u64::from(ballot != 0),
                VoteMode::Uni => u64::from(ballot == x.mask || ballot == 0),
                VoteMode::Ballot => u64::from(ballot),
            };
            x.set(*dst, &[v; 32]);
        }
        Warp::Redux {
            op,
            ty,
            dst,
            src,
            membermask,
        } => {
            member_mask(x, membermask)?;
            let v = x.read(src, *ty)?;
            let r = redux(*op, *ty, &v, x.mask);
            x.set(*dst, &[r; 32]);
        }
        Warp::Elect {
            dst_lane,
            dst_pred,
            membermask,
        } => {
            let members = member_mask(x, membermask)?;
            let candidates = x.mask & members;
            if candidates == 0 {
                return Ok(Flow::Next);
            }
            let leader = x.sched.elect(candidates);
            if let Some(d) = dst_lane {
                x.set(*d, &[u64::from(leader); 32]);
            }
            let p: Lanes = std::array::from_fn(|l| u64::from(l as u32 == leader));
            x.set(*dst_pred, &p);
        }
        Warp::Activemask { dst } => {
            let m = u64::from(x.part_mask);
            x.set(*dst, &[m; 32]);
        }
        // The lanes are gathered (the machine's rendezvous) and the warp's clock has moved on
        // past every warp-synchronous op: accesses before it are ordered before those after.
        Warp::Sync { membermask } => {
            member_mask(x, membermask)?;
        }
    }
    Ok(Flow::Next)
}

/// The source lane of a shuffle and whether it is in range, as the ISA's pseudocode computes
/// them (an out-of-range source reads the lane's own value).
pub(crate) fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let seg = (c >> 8) & 0x1f;
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !seg)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if ok {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

fn redux(op: ReduxOp, ty: Type, v: &Lanes, mask: u32) -> u64 {
    let vals = lanes(mask).map(|l| v[l] & 0xffff_ffff);
    let signed = ty == Type::S32;
    let key = |a: u64| if signed { sext(a, 32) } else { a as i64 };
    match op {
        ReduxOp::Add => vals.fold(0u64, |a, b| a.wrapping_add(b)) & 0xffff_ffff,
        ReduxOp::Min => vals.min_by_key(|&a| key(a)).unwrap_or(0),
        ReduxOp::Max => vals.max_by_key(|&a| key(a)).unwrap_or(0),
        ReduxOp::And => vals.fold(0xffff_ffff, |a, b| a & b),
        ReduxOp::Or => vals.fold(0, |a, b| a | b),
        ReduxOp::Xor => vals.fold(0, |a, b| a ^ b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_follow_the_isa_pseudocode() {
        assert_eq!(shfl_source(ShflMode::Down, 3, 16, 0x1f), (19, true));
        assert_eq!(shfl_source(ShflMode::Down, 20, 16, 0x1f), (20, false));
        assert_eq!(shfl_source(ShflMode::Up, 3, 4, 0), (3, false));
        assert_eq!(shfl_source(ShflMode::Up, 5, 4, 0), (1, true));
        assert_eq!(shfl_source(ShflMode::Bfly, 5, 1, 0x1f), (4, true));
        assert_eq!(shfl_source(ShflMode::Idx, 9, 2, 0x1f), (2, true));
        // Segments of 8 lanes (c = 0x181f... mask bits 8..13 = 0x18): idx stays in the segment.
        assert_eq!(shfl_source(ShflMode::Idx, 9, 2, 0x1807), (10, true));
    }

    #[test]
    fn reductions_over_lanes() {
        let v: Lanes = std::array::from_fn(|l| if l == 1 { 0xffff_ffff } else { l as u64 });
        assert_eq!(redux(ReduxOp::Min, Type::S32, &v, 0b111), 0xffff_ffff);
        assert_eq!(redux(ReduxOp::Min, Type::U32, &v, 0b111), 0);
        assert_eq!(redux(ReduxOp::Add, Type::U32, &v, 0b101), 2);
        assert_eq!(redux(ReduxOp::Or, Type::B32, &v, 0b1101), 2 | 3);
    }
}
