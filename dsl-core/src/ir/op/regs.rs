//! The registers an op names, with reads (uses) and writes (defs) kept apart: the kernel's
//! register check needs both, a liveness or initialization analysis (the simulator's check of
//! reads of uninitialized registers) needs to know which is which.

use super::*;
use crate::ir::value::{AddrBase, Address, Operand, Reg};

/// Ops that name registers.
pub trait Regs {
    /// Calls `f` on every register the op may read: value operands, address bases, descriptors,
    /// and accumulators that are read and written (they are defs too). The guard predicate of an
    /// [`Instr`](crate::ir::Instr) is not part of its op and is not visited.
    fn for_each_use(&self, f: &mut dyn FnMut(Reg));

    /// Calls `f` on every register the op writes (results, and read-and-written accumulators).
    fn for_each_def(&self, f: &mut dyn FnMut(Reg));

    /// Calls `f` on every register the op names: its defs, then its uses (a register read and
    /// written comes twice).
    fn for_each_reg(&self, f: &mut dyn FnMut(Reg)) {
        self.for_each_def(f);
        self.for_each_use(f);
    }
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
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Arith::Bin { a: x, b, .. } | Arith::MulPart { a: x, b, .. } => os(f, &[*x, *b]),
            Arith::Mad { a: x, b, c, .. } | Arith::Fma { a: x, b, c, .. } => os(f, &[*x, *b, *c]),
            Arith::Unary { a: x, .. }
            | Arith::Approx { a: x, .. }
            | Arith::Rounded { a: x, .. } => o(f, x),
            Arith::Bfe { a: x, pos, len, .. } => os(f, &[*x, *pos, *len]),
            Arith::Bfi {
                f: x, b, pos, len, ..
            } => os(f, &[*x, *b, *pos, *len]),
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Arith::Bin { dst, .. }
            | Arith::MulPart { dst, .. }
            | Arith::Mad { dst, .. }
            | Arith::Fma { dst, .. }
            | Arith::Unary { dst, .. }
            | Arith::Approx { dst, .. }
            | Arith::Rounded { dst, .. }
            | Arith::Bfe { dst, .. }
            | Arith::Bfi { dst, .. } => f(*dst),
        }
    }
}

impl Regs for Convert {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Convert::Cvt { src, .. } => o(f, src),
            Convert::PackF32 { hi, lo, .. } => os(f, &[*hi, *lo]),
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Convert::Cvt { dst, .. } | Convert::PackF32 { dst, .. } => f(*dst),
        }
    }
}

impl Regs for Compare {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Compare::Setp { a: x, b, .. } => os(f, &[*x, *b]),
            Compare::Selp { a: x, b, cond, .. } => os(f, &[*x, *b, *cond]),
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Compare::Setp { dst, .. } | Compare::Selp { dst, .. } => f(*dst),
        }
    }
}

impl Regs for Data {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Data::Mov { src, .. } => o(f, src),
            Data::ReadSpecial { .. } | Data::AddressOf { .. } => {}
            Data::Pack { parts, .. } => os(f, parts),
            Data::Unpack { src, .. } => f(*src),
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Data::Mov { dst, .. }
            | Data::ReadSpecial { dst, .. }
            | Data::AddressOf { dst, .. }
            | Data::Pack { dst, .. } => f(*dst),
            Data::Unpack { dsts, .. } => rs(f, dsts),
        }
    }
}

impl Regs for Warp {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Warp::Shfl {
                a: x,
                b,
                c,
                membermask,
                ..
            } => os(f, &[*x, *b, *c, *membermask]),
            Warp::Vote {
                pred, membermask, ..
            } => os(f, &[*pred, *membermask]),
            Warp::Redux {
                src, membermask, ..
            } => os(f, &[*src, *membermask]),
            Warp::Elect { membermask, .. } | Warp::Sync { membermask } => o(f, membermask),
            Warp::Activemask { .. } => {}
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Warp::Shfl { dst, dst_pred, .. } => {
                f(*dst);
                if let Some(p) = dst_pred {
                    f(*p);
                }
            }
            Warp::Vote { dst, .. } | Warp::Redux { dst, .. } | Warp::Activemask { dst } => f(*dst),
            Warp::Elect {
                dst_lane, dst_pred, ..
            } => {
                if let Some(l) = dst_lane {
                    f(*l);
                }
                f(*dst_pred);
            }
            Warp::Sync { .. } => {}
        }
    }
}

impl Regs for Memory {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Memory::Ld { addr, .. } | Memory::Prefetch { addr, .. } => a(f, addr),
            Memory::St { srcs, addr, .. } => {
                a(f, addr);
                os(f, srcs);
            }
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        if let Memory::Ld { dsts, .. } = self {
            rs(f, dsts);
        }
    }
}

impl Regs for Atomic {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Atomic::Atom { addr, a: x, b, .. } => {
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
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        if let Atomic::Atom { dst, .. } = self {
            f(*dst);
        }
    }
}

impl Regs for Barrier {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Barrier::Sync { id, count } | Barrier::SyncUnaligned { id, count } => {
                o(f, id);
                if let Some(c) = count {
                    o(f, c);
                }
            }
            Barrier::Arrive { id, count } | Barrier::ArriveUnaligned { id, count } => {
                os(f, &[*id, *count])
            }
            Barrier::ClusterArrive { .. } | Barrier::ClusterWait { .. } => {}
        }
    }
    fn for_each_def(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for Fence {
    fn for_each_use(&self, _: &mut dyn FnMut(Reg)) {}
    fn for_each_def(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for AddressOp {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            AddressOp::Cvta { src, .. } => o(f, src),
            AddressOp::Mapa { src, cta_rank, .. } => os(f, &[*src, *cta_rank]),
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            AddressOp::Cvta { dst, .. } | AddressOp::Mapa { dst, .. } => f(*dst),
        }
    }
}

impl Regs for CpAsync {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
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
    fn for_each_def(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for Matrix {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Matrix::Ldmatrix { addr, .. } => a(f, addr),
            Matrix::Stmatrix { addr, srcs, .. } => {
                a(f, addr);
                os(f, srcs);
            }
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        if let Matrix::Ldmatrix { dsts, .. } = self {
            rs(f, dsts);
        }
    }
}

impl Regs for MmaSync {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        rs(f, &self.a);
        rs(f, &self.b);
        os(f, &self.c);
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        rs(f, &self.d);
    }
}

impl Regs for Wgmma {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        if let Wgmma::MmaAsync(w) = self {
            // The accumulator is read unless scale-d is a host `false`.
            if w.scale_d != ScaleD::Const(false) {
                rs(f, &w.d);
            }
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
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        if let Wgmma::MmaAsync(w) = self {
            rs(f, &w.d);
        }
    }
}

impl Regs for Mbarrier {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Mbarrier::Init { addr, count } => {
                a(f, addr);
                o(f, count);
            }
            Mbarrier::Inval { addr } => a(f, addr),
            Mbarrier::Arrive { addr, count, .. } => {
                a(f, addr);
                if let Some(c) = count {
                    o(f, c);
                }
            }
            Mbarrier::ArriveExpectTx { addr, tx_count, .. }
            | Mbarrier::ExpectTx { addr, tx_count, .. } => {
                a(f, addr);
                o(f, tx_count);
            }
            Mbarrier::TryWaitParity {
                addr,
                parity,
                suspend_hint,
                ..
            } => {
                a(f, addr);
                o(f, parity);
                if let Some(h) = suspend_hint {
                    o(f, h);
                }
            }
            Mbarrier::TestWaitParity { addr, parity, .. } => {
                a(f, addr);
                o(f, parity);
            }
        }
    }
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match self {
            Mbarrier::Arrive { state, .. } | Mbarrier::ArriveExpectTx { state, .. } => {
                if let Some(s) = state {
                    f(*s);
                }
            }
            Mbarrier::TryWaitParity { done, .. } | Mbarrier::TestWaitParity { done, .. } => {
                f(*done)
            }
            Mbarrier::Init { .. } | Mbarrier::Inval { .. } | Mbarrier::ExpectTx { .. } => {}
        }
    }
}

impl Regs for Bulk {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
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
    fn for_each_def(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for Setmaxnreg {
    fn for_each_use(&self, _: &mut dyn FnMut(Reg)) {}
    fn for_each_def(&self, _: &mut dyn FnMut(Reg)) {}
}

impl Regs for Tcgen05 {
    fn for_each_use(&self, f: &mut dyn FnMut(Reg)) {
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
            Tcgen05::Ld { taddr, .. } => o(f, taddr),
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
    fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        if let Tcgen05::Ld { dsts, .. } = self {
            rs(f, dsts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::Type;
    use crate::ir::StateSpace;

    fn r(id: u32, ty: Type) -> Reg {
        Reg { id, ty }
    }

    fn uses_defs(op: &Op) -> (Vec<u32>, Vec<u32>) {
        let (mut u, mut d) = (Vec::new(), Vec::new());
        op.for_each_use(&mut |x| u.push(x.id));
        op.for_each_def(&mut |x| d.push(x.id));
        (u, d)
    }

    #[test]
    fn loads_write_their_destinations_and_read_their_address() {
        let ld: Op = Memory::Ld {
            space: StateSpace::Global,
            ty: Type::U32,
            dsts: vec![r(1, Type::U32), r(2, Type::U32)],
            addr: Address::reg(r(0, Type::U64), 0),
            cache: None,
            nc: false,
            order: None,
        }
        .into();
        assert_eq!(uses_defs(&ld), (vec![0], vec![1, 2]));
        let st: Op = Memory::St {
            space: StateSpace::Shared,
            ty: Type::U32,
            srcs: vec![r(1, Type::U32).into(), Operand::Imm(3)],
            addr: Address::reg(r(0, Type::U32), 0),
            cache: None,
            order: None,
        }
        .into();
        assert_eq!(uses_defs(&st), (vec![0, 1], vec![]));
        let mut all = Vec::new();
        st.for_each_reg(&mut |x| all.push(x.id));
        assert_eq!(all, [0, 1]);
    }

    #[test]
    fn accumulators_are_read_unless_overwritten() {
        let acc = vec![
            r(5, Type::F32),
            r(6, Type::F32),
            r(7, Type::F32),
            r(8, Type::F32),
        ];
        let mma = |scale_d| -> Op {
            Wgmma::MmaAsync(WgmmaMma {
                n: 8,
                d_ty: Type::F32,
                ab_ty: Type::F16,
                d: acc.clone(),
                a: WgmmaA::Desc(r(1, Type::U64).into()),
                b_desc: r(2, Type::U64).into(),
                scale_d,
                scale_a: 1,
                scale_b: 1,
                tnsp_a: false,
                tnsp_b: false,
            })
            .into()
        };
        assert_eq!(
            uses_defs(&mma(ScaleD::Pred(r(3, Type::Pred)))),
            (vec![5, 6, 7, 8, 1, 2, 3], vec![5, 6, 7, 8])
        );
        assert_eq!(
            uses_defs(&mma(ScaleD::Const(false))),
            (vec![1, 2], vec![5, 6, 7, 8])
        );
        let shfl: Op = Warp::Shfl {
            mode: ShflMode::Down,
            dst: r(1, Type::B32),
            dst_pred: Some(r(2, Type::Pred)),
            a: r(1, Type::B32).into(),
            b: Operand::Imm(1),
            c: Operand::Imm(31),
            membermask: Operand::Imm(-1),
        }
        .into();
        assert_eq!(uses_defs(&shfl), (vec![1], vec![1, 2]));
    }
}
