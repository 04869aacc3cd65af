//! Atomics and reductions (PTX ISA: atom, red) on global and shared memory.
//!
//! The lanes of a warp perform their operations one after the other, in lane order. Integer
//! adds wrap; `inc` wraps to 0 past its operand, `dec` to its operand below 1; float adds round
//! to nearest even (f16 and bf16 as `.noftz`). Atomics do not race with each other; a plain
//! access unordered with one does. Ordered atomics synchronize through their shared location as
//! loads and stores do; an atomic that changes nothing, repeated at the same position with no
//! write anywhere in between, is a polling loop and parks its warp.

use super::super::exec::{Exec, Flow};
use super::super::float::{canon32, canon64, round, two_sum, Format, Mode};
use super::super::regs::{lanes, sext, width_mask};
use super::super::report::SimError;
use super::super::shadow::Accessor;
use super::arith::{halves, to_f64};
use super::memory::{
    acquire_after, address, check_global_read, check_global_write, place, poll, release_clock,
    report_shared, sync_release, with_smem, Place,
};
use crate::ir::op::{AtomOp, Atomic};
use crate::ir::{MemOrder, Scope, Type};

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Atomic) -> Result<Flow, SimError> {
    let (space, aop, ty, order) = op.parts();
    let (addr, a, b) = match op {
        Atomic::Atom { addr, a, b, .. } => (addr, a, b.as_ref()),
        Atomic::Red { addr, a, .. } => (addr, a, None),
    };
    let addrs = address(x, addr, space)?;
    let av = x.read(a, ty)?;
    let bv = match b {
        Some(b) => x.read(b, ty)?,
        None => [0; 32],
    };
    let len = ty.bytes();
    let release = release_clock(x, order);
    // An atomic without an order is relaxed at the device's scope.
    let scope = order.map_or(Scope::Gpu, MemOrder::scope);
    let mut old = [0u64; 32];
    let mut hash = 0u64;
    for l in lanes(x.mask) {
        let Some(p) = place(x, space, addrs[l], len, len, l as u32)? else {
            continue;
        };
        crate::sim::peers::note_place(x, &p, l as u32);
        let mut buf = [0u8; 8];
        read_modify(x, (p, scope), l as u32, &mut buf[..len as usize], |cur| {
            apply(aop, ty, cur, av[l], bv[l])
        })?;
        old[l] = u64::from_le_bytes(buf);
        hash = hash.rotate_left(7) ^ old[l];
        acquire_after(
            x,
            order.or(Some(MemOrder::Relaxed(crate::ir::Scope::Gpu))),
            p,
        );
        if let Some((vc, scope)) = &release {
            sync_release(x, p, (vc, *scope));
        }
    }
    if let Atomic::Atom { dst, .. } = op {
        x.set(*dst, &old);
    }
    if matches!(order, Some(MemOrder::Release(_) | MemOrder::AcqRel(_))) {
        let comp = x.wr().comp;
        x.w().vc.tick(comp)?;
    }
    Ok(match op {
        Atomic::Atom { .. } => poll(x, hash),
        Atomic::Red { .. } => Flow::Next,
    })
}

/// Reads the bytes at `p` into `old`, writes back `f(old)`; only a changed value counts as a
/// write for polling warps.
fn read_modify(
    x: &mut Exec<'_, '_>,
    (p, scope): (Place, Scope),
    lane: u32,
    old: &mut [u8],
    f: impl FnOnce(u64) -> u64,
) -> Result<(), SimError> {
    let len = old.len();
    match p {
        Place::Global { buf, off } => {
            old.copy_from_slice(&x.mem.data(buf)[off..off + len]);
            let mut word = [0u8; 8];
            word[..len].copy_from_slice(old);
            let new = f(u64::from_le_bytes(word)).to_le_bytes();
            check_global_read(x, buf, off, len, lane);
            check_global_write(x, buf, off, len, lane);
            x.global_access((buf, off, len), (true, true), Some(scope), lane, None);
            if new[..len] != *old {
                x.mem.data_mut(buf)[off..off + len].copy_from_slice(&new[..len]);
                x.mem.generation += 1;
            }
            x.mem.mark_init(buf, off, len);
        }
        Place::Shared { rank, off } => {
            let (pc, cta, warp) = (x.pc, x.cta, x.warp);
            let o = with_smem(x.cl, rank, cta, warp, |m, vc, comp| {
                let at = off as usize..off as usize + len;
                old.copy_from_slice(&m.data[at.clone()]);
                let mut word = [0u8; 8];
                word[..len].copy_from_slice(old);
                let new = f(u64::from_le_bytes(word)).to_le_bytes();
                let changed = new[..len] != *old;
                m.data[at].copy_from_slice(&new[..len]);
                let gen = m.generation;
                let o = m.strong_write(off, len as u32, &Accessor::warp(vc, comp, pc, lane), true);
                if !changed {
                    m.generation = gen;
                }
                o
            });
            report_shared(x, o, lane, rank, len as u32, true);
        }
        Place::Param { .. } | Place::Local { .. } => {
            return Err(x.unsupported("an atomic outside global and shared memory"))
        }
    }
    Ok(())
}

/// The new value of an atomic `op` on `cur` with operands `a` (and `b` for `cas`).
pub(crate) fn apply(op: AtomOp, ty: Type, cur: u64, a: u64, b: u64) -> u64 {
    let m = width_mask(ty);
    let (cur, a, b) = (cur & m, a & m, b & m);
    let bits = ty.bits();
    let signed = ty.is_signed();
    match op {
        AtomOp::Add if ty.is_float() => float_add(ty, cur, a),
        AtomOp::Add => cur.wrapping_add(a) & m,
        AtomOp::Min if signed => {
            if sext(cur, bits) <= sext(a, bits) {
                cur
            } else {
                a
            }
        }
        AtomOp::Min => cur.min(a),
        AtomOp::Max if signed => {
            if sext(cur, bits) >= sext(a, bits) {
                cur
            } else {
                a
            }
        }
        AtomOp::Max => cur.max(a),
        AtomOp::Inc => {
            if cur >= a {
                0
            } else {
                cur + 1
            }
        }
        AtomOp::Dec => {
            if cur == 0 || cur > a {
                a
            } else {
                cur - 1
            }
        }
        AtomOp::And => cur & a,
        AtomOp::Or => cur | a,
        AtomOp::Xor => cur ^ a,
        AtomOp::Exch => a,
        AtomOp::Cas => {
            if cur == a {
                b
            } else {
                cur
            }
        }
    }
}

fn float_add(ty: Type, cur: u64, a: u64) -> u64 {
    halves(ty, [cur, a], |t, [p, q]| match t {
        Type::F32 => canon32(f32::from_bits(p as u32) + f32::from_bits(q as u32)),
        Type::F64 => canon64(f64::from_bits(p) + f64::from_bits(q)),
        t => {
            let Some(fmt) = Format::of(t) else { return p };
            let (hi, lo) = two_sum(to_f64(t, p), to_f64(t, q));
            round(fmt, hi, lo, Mode::Nearest)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_modify_write_ops() {
        assert_eq!(apply(AtomOp::Inc, Type::U32, 5, 5, 0), 0);
        assert_eq!(apply(AtomOp::Inc, Type::U32, 4, 5, 0), 5);
        assert_eq!(apply(AtomOp::Dec, Type::U32, 0, 5, 0), 5);
        assert_eq!(apply(AtomOp::Cas, Type::B32, 3, 3, 9), 9);
        assert_eq!(apply(AtomOp::Cas, Type::B32, 4, 3, 9), 4);
        assert_eq!(apply(AtomOp::Max, Type::S32, 0xffff_ffff, 1, 0), 1);
        assert_eq!(apply(AtomOp::Add, Type::U32, 0xffff_ffff, 2, 0), 1);
        let f = |x: f32| u64::from(x.to_bits());
        assert_eq!(apply(AtomOp::Add, Type::F32, f(1.5), f(2.0), 0), f(3.5));
    }
}
