//! Visiting the registers an op names (read or written), for checks and for codegen.

use super::*;
use crate::ir::value::{AddrBase, Address, Operand, Reg};

/// Ops that name registers.
pub trait Regs {
    /// Calls `f` on every register the op reads or writes, in operand order.
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg));
}

fn o(f: &mut dyn FnMut(Reg), x: &Operand) {
    if let Operand::Reg(r) = x {
        f(*r);
    }
}

fn a(f: &mut dyn FnMut(Reg), x: &Address) {
    if let AddrBase::Reg(r) = &x.base {
        f(*r);
    }
}

fn os(f: &mut dyn FnMut(Reg), xs: &[Operand]) {
    xs.iter().for_each(|x| o(f, x));
}

fn rs(f: &mut dyn FnMut(Reg), xs: &[Reg]) {
    xs.iter().for_each(|r| f(*r));
}

fn tm(f: &mut dyn FnMut(Reg), t: &TensorMapRef) {
    if let TensorMapRef::Reg(r) = t {
        f(*r);
    }
}

impl Regs for Arith {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Arith::Bin { dst, a: x, b, .. } | Arith::MulPart { dst, a: x, b, .. } => {
                f(*dst);
                os(f, &[*x, *b]);
            }
            Arith::Mad {
                dst, a: x, b, c, ..
            }
            | Arith::Fma {
                dst, a: x, b, c, ..
            } => {
                f(*dst);
                os(f, &[*x, *b, *c]);
            }
            Arith::Unary { dst, a: x, .. }
            | Arith::Approx { dst, a: x, .. }
            | Arith::Rounded { dst, a: x, .. } => {
                f(*dst);
                o(f, x);
            }
            Arith::Bfe {
                dst,
                a: x,
                pos,
                len,
                ..
            } => {
                f(*dst);
                os(f, &[*x, *pos, *len]);
            }
            Arith::Bfi {
                dst,
                f: x,
                b,
                pos,
                len,
                ..
            } => {
                f(*dst);
                os(f, &[*x, *b, *pos, *len]);
            }
        }
    }
}

impl Regs for Convert {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Convert::Cvt { dst, src, .. } => {
                f(*dst);
                o(f, src);
            }
            Convert::PackF32 { dst, hi, lo, .. } => {
                f(*dst);
                os(f, &[*hi, *lo]);
            }
        }
    }
}

impl Regs for Compare {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Compare::Setp { dst, a: x, b, .. } => {
                f(*dst);
                os(f, &[*x, *b]);
            }
            Compare::Selp {
                dst, a: x, b, cond, ..
            } => {
                f(*dst);
                os(f, &[*x, *b, *cond]);
            }
        }
    }
}

impl Regs for Data {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Data::Mov { dst, src, .. } => {
                f(*dst);
                o(f, src);
            }
            Data::ReadSpecial { dst, .. } | Data::AddressOf { dst, .. } => f(*dst),
            Data::Pack { dst, parts } => {
                f(*dst);
                os(f, parts);
            }
            Data::Unpack { dsts, src } => {
                rs(f, dsts);
                f(*src);
            }
        }
    }
}

impl Regs for Warp {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Warp::Shfl {
                dst,
                dst_pred,
                a: x,
                b,
                c,
                membermask,
                ..
            } => {
                f(*dst);
                if let Some(p) = dst_pred {
                    f(*p);
                }
                os(f, &[*x, *b, *c, *membermask]);
            }
            Warp::Vote {
                dst,
                pred,
                membermask,
                ..
            } => {
                f(*dst);
                os(f, &[*pred, *membermask]);
            }
            Warp::Redux {
                dst,
                src,
                membermask,
                ..
            } => {
                f(*dst);
                os(f, &[*src, *membermask]);
            }
            Warp::Elect {
                dst_lane,
                dst_pred,
                membermask,
            } => {
                if let Some(l) = dst_lane {
                    f(*l);
                }
                f(*dst_pred);
                o(f, membermask);
            }
            Warp::Activemask { dst } => f(*dst),
        }
    }
}

impl Regs for Memory {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Memory::Ld { dsts, addr, .. } => {
                rs(f, dsts);
                a(f, addr);
            }
            Memory::St { srcs, addr, .. } => {
                a(f, addr);
                os(f, srcs);
            }
            Memory::Prefetch { addr, .. } => a(f, addr),
        }
    }
}

impl Regs for Atomic {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Atomic::Atom {
                dst, addr, a: x, b, ..
            } => {
                f(*dst);
                a(f, addr);
                o(f, x);
                if let Some(b) = b {
                    o(f, b);
                }
            }
            Atomic::Red { addr, a: x, .. } => {
                a(f, addr);
                o(f, x);
            }
        }
    }
}

impl Regs for Barrier {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Barrier::Sync { id, count } | Barrier::SyncUnaligned { id, count } => {
                o(f, id);
                if let Some(c) = count {
                    o(f, c);
                }
            }
            Barrier::Arrive { id, count } => os(f, &[*id, *count]),
            Barrier::ClusterArrive { .. } | Barrier::ClusterWait { .. } => {}
        }
    }
}

impl Regs for Fence {
    fn for_each_reg(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for AddressOp {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            AddressOp::Cvta { dst, src, .. } => {
                f(*dst);
                o(f, src);
            }
            AddressOp::Mapa {
                dst, src, cta_rank, ..
            } => {
                f(*dst);
                os(f, &[*src, *cta_rank]);
            }
        }
    }
}

impl Regs for CpAsync {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        if let CpAsync::Copy {
            dst, src, src_size, ..
        } = self
        {
            a(f, dst);
            a(f, src);
            if let Some(s) = src_size {
                o(f, s);
            }
        }
    }
}

impl Regs for Matrix {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Matrix::Ldmatrix { dsts, addr, .. } => {
                rs(f, dsts);
                a(f, addr);
            }
            Matrix::Stmatrix { addr, srcs, .. } => {
                a(f, addr);
                os(f, srcs);
            }
        }
    }
}

impl Regs for MmaSync {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        rs(f, &self.d);
        rs(f, &self.a);
        rs(f, &self.b);
        os(f, &self.c);
    }
}

impl Regs for Wgmma {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        if let Wgmma::MmaAsync(w) = self {
            rs(f, &w.d);
            match &w.a {
                WgmmaA::Desc(d) => o(f, d),
                WgmmaA::Regs(r) => rs(f, r),
            }
            o(f, &w.b_desc);
            if let ScaleD::Pred(p) = w.scale_d {
                f(p);
            }
        }
    }
}

impl Regs for Mbarrier {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Mbarrier::Init { addr, count } => {
                a(f, addr);
                o(f, count);
            }
            Mbarrier::Inval { addr } => a(f, addr),
            Mbarrier::Arrive {
                state, addr, count, ..
            } => {
                if let Some(s) = state {
                    f(*s);
                }
                a(f, addr);
                if let Some(c) = count {
                    o(f, c);
                }
            }
            Mbarrier::ArriveExpectTx {
                state,
                addr,
                tx_count,
                ..
            } => {
                if let Some(s) = state {
                    f(*s);
                }
                a(f, addr);
                o(f, tx_count);
            }
            Mbarrier::ExpectTx { addr, tx_count, .. } => {
                a(f, addr);
                o(f, tx_count);
            }
            Mbarrier::TryWaitParity {
                done,
                addr,
                parity,
                suspend_hint,
                ..
            } => {
                f(*done);
                a(f, addr);
                o(f, parity);
                if let Some(h) = suspend_hint {
                    o(f, h);
                }
            }
            Mbarrier::TestWaitParity { done, addr, parity } => {
                f(*done);
                a(f, addr);
                o(f, parity);
            }
        }
    }
}

impl Regs for Bulk {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Bulk::TensorLoad {
                dst,
                tensor_map,
                coords,
                mbar,
                multicast,
                cta_group: _,
                cache_policy: _,
            } => {
                a(f, dst);
                tm(f, tensor_map);
                os(f, coords);
                a(f, mbar);
                if let Some(m) = multicast {
                    o(f, m);
                }
            }
            Bulk::TensorStore {
                tensor_map,
                coords,
                src,
                cache_policy: _,
            } => {
                tm(f, tensor_map);
                os(f, coords);
                a(f, src);
            }
            Bulk::TensorPrefetch {
                tensor_map,
                coords,
                cache_policy: _,
            } => {
                tm(f, tensor_map);
                os(f, coords);
            }
            Bulk::PrefetchTensormap { tensor_map } => tm(f, tensor_map),
            Bulk::CommitGroup | Bulk::WaitGroup { .. } => {}
        }
    }
}

impl Regs for Setmaxnreg {
    fn for_each_reg(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for Tcgen05 {
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Tcgen05::Alloc { dst, ncols, .. } => {
                a(f, dst);
                o(f, ncols);
            }
            Tcgen05::Dealloc { taddr, ncols, .. } => os(f, &[*taddr, *ncols]),
            Tcgen05::Mma {
                d_tmem,
                a: x,
                b_desc,
                idesc,
                enable_input_d,
                ..
            } => {
                o(f, d_tmem);
                match x {
                    Tcgen05A::Desc(d) | Tcgen05A::Tmem(d) => o(f, d),
                }
                os(f, &[*b_desc, *idesc, *enable_input_d]);
            }
            Tcgen05::Commit {
                mbar, multicast, ..
            } => {
                a(f, mbar);
                if let Some(m) = multicast {
                    o(f, m);
                }
            }
            Tcgen05::Ld { dsts, taddr, .. } => {
                rs(f, dsts);
                o(f, taddr);
            }
            Tcgen05::St { taddr, srcs, .. } => {
                o(f, taddr);
                os(f, srcs);
            }
            Tcgen05::RelinquishAllocPermit { .. }
            | Tcgen05::WaitLd
            | Tcgen05::WaitSt
            | Tcgen05::FenceBeforeThreadSync
            | Tcgen05::FenceAfterThreadSync => {}
        }
    }
}
