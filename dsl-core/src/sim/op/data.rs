//! Register moves, special registers, symbol addresses and packing (PTX ISA: mov; Special
//! Registers).
//!
//! `%clock`, `%clock64` and `%globaltimer` count the warp instructions the run has executed (a
//! deterministic clock); `%warpid` is the warp's index in its block and `%smid` the SM slot the
//! block is resident on.

use super::super::env::{Symbol, PARAM_WINDOW};
use super::super::exec::{Exec, Flow};
use super::super::regs::{width_mask, Lanes};
use super::super::report::SimError;
use crate::ir::op::Data;
use crate::ir::{Dim, SpecialReg, Type};

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Data) -> Result<Flow, SimError> {
    match op {
        Data::Mov { ty, dst, src } => {
            let v = x.read(src, *ty)?;
            x.set(*dst, &v);
        }
        Data::ReadSpecial { dst, sreg } => {
            let v = special(x, *sreg);
            x.set(*dst, &v);
        }
        Data::AddressOf { dst, symbol } => {
            let a = match x.env.symbols.get(symbol) {
                Some(Symbol::Param(o)) => PARAM_WINDOW + u64::from(*o),
                Some(Symbol::Shared(o)) => u64::from(*o),
                None => {
                    return Err(SimError::BadOperand {
                        op: x.op,
                        location: x.loc(),
                        detail: format!("`{symbol}` names no parameter or shared allocation"),
                    })
                }
            };
            x.set(*dst, &[a; 32]);
        }
        Data::Pack { dst, parts } => {
            let w = dst.ty.bits() / parts.len() as u32;
            let part_ty = bits_type(w);
            let mut out = [0u64; 32];
            for (i, p) in parts.iter().enumerate() {
                let v = x.read(p, part_ty)?;
                for l in 0..32 {
                    out[l] |= (v[l] & width_mask(part_ty)) << (w * i as u32);
                }
            }
            x.set(*dst, &out);
        }
        Data::Unpack { dsts, src } => {
            let v = *x.reg(*src);
            let w = src.ty.bits() / dsts.len() as u32;
            for (i, d) in dsts.iter().enumerate() {
                let part: Lanes = v.map(|s| s >> (w * i as u32));
                x.set(*d, &part);
            }
        }
    }
    Ok(Flow::Next)
}

/// The raw-bits type of `bits` bits.
fn bits_type(bits: u32) -> Type {
    match bits {
        16 => Type::B16,
        32 => Type::B32,
        _ => Type::B64,
    }
}

fn dim(v: [u32; 3], d: Dim) -> u64 {
    u64::from(match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    })
}

fn special(x: &Exec<'_, '_>, s: SpecialReg) -> Lanes {
    let l = &x.env.launch;
    let cta = &x.cl.ctas[x.cta];
    let ctaid = cta.ctaid;
    let cl = l.cluster;
    let uniform = |v: u64| [v; 32];
    match s {
        SpecialReg::Tid(d) => {
            let mut out = [0; 32];
            for (lane, o) in out.iter_mut().enumerate() {
                let t = x.warp as u32 * 32 + lane as u32;
                let (bx, by) = (l.block[0], l.block[1]);
                let v = [t % bx, (t / bx) % by, t / (bx * by)];
                *o = dim(v, d);
            }
            out
        }
        SpecialReg::Ntid(d) => uniform(dim(l.block, d)),
        SpecialReg::Ctaid(d) => uniform(dim(ctaid, d)),
        SpecialReg::Nctaid(d) => uniform(dim(l.grid, d)),
        SpecialReg::LaneId => std::array::from_fn(|i| i as u64),
        SpecialReg::WarpId => uniform(x.warp as u64),
        SpecialReg::ClusterId(d) => uniform(dim(
            [ctaid[0] / cl[0], ctaid[1] / cl[1], ctaid[2] / cl[2]],
            d,
        )),
        SpecialReg::NclusterId(d) => uniform(dim(
            [l.grid[0] / cl[0], l.grid[1] / cl[1], l.grid[2] / cl[2]],
            d,
        )),
        SpecialReg::ClusterCtaid(d) => uniform(dim(
            [ctaid[0] % cl[0], ctaid[1] % cl[1], ctaid[2] % cl[2]],
            d,
        )),
        SpecialReg::ClusterNctaid(d) => uniform(dim(cl, d)),
        SpecialReg::ClusterCtarank => uniform(u64::from(cta.rank)),
        SpecialReg::ClusterNctarank => uniform(u64::from(l.cluster_blocks())),
        SpecialReg::Clock => uniform(x.stats.warp_instructions & 0xffff_ffff),
        SpecialReg::Clock64 | SpecialReg::GlobalTimer => uniform(x.stats.warp_instructions),
        SpecialReg::DynamicSmemSize => uniform(u64::from(l.dynamic_smem)),
        SpecialReg::TotalSmemSize => uniform(u64::from(x.env.smem_bytes)),
        SpecialReg::SmId => uniform(u64::from(x.cl.sm + cta.rank)),
    }
}
