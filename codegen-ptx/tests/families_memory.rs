//! One test per memory, synchronization and `mma.sync` instruction family (loads and stores,
//! atomics, barriers, fences, address conversions, `cp.async`, `ldmatrix`/`stmatrix`), as
//! `families.rs` does for the others: a small kernel built from IR data assembles with ptxas for
//! the family's lowest target (no spills) and is refused, with a sentence naming the op and both
//! targets, for every lower target. Needs `RUTE_PTXAS`.

mod common;

use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{Address, MemOrder, Operand, Scope, StateSpace, Target, Type};
use Target::{Sm100a, Sm80, Sm90a};

#[test]
fn loads_and_stores_all_widths() {
    let mut k = K::new("memory");
    let sa = k.smem("buf", 1024, 16);
    let g = k.out;
    let s32 = k.reg(Type::U32);
    k.op(Data::AddressOf {
        dst: s32,
        symbol: "buf".into(),
    });
    // (element type, register type, vector length)
    let shapes = [
        (Type::U8, Type::U16, 1),
        (Type::S8, Type::S32, 1),
        (Type::B8, Type::B16, 4),
        (Type::U16, Type::U16, 2),
        (Type::F16, Type::F16, 4),
        (Type::BF16, Type::BF16, 1),
        (Type::B32, Type::B32, 1),
        (Type::F32, Type::F32, 2),
        (Type::F32, Type::F32, 4),
        (Type::U32, Type::U32, 4),
        (Type::F16x2, Type::F16x2, 4),
        (Type::U64, Type::U64, 1),
        (Type::B64, Type::B64, 2),
        (Type::F64, Type::F64, 2),
    ];
    let mut off = 0i64;
    for (i, (ty, rty, n)) in shapes.into_iter().enumerate() {
        let dsts = k.regs(rty, n);
        let bytes = i64::from(ty.bytes()) * n as i64;
        let cache = [
            None,
            Some(LdCache::Cg),
            Some(LdCache::Cs),
            Some(LdCache::Ca),
        ][i % 4];
        k.op(Memory::Ld {
            space: StateSpace::Global,
            ty,
            dsts: dsts.clone(),
            addr: Address::reg(g, 4096 + off),
            cache,
            nc: i % 3 == 0,
            order: None,
        });
        k.op(Memory::St {
            space: StateSpace::Shared,
            ty,
            srcs: dsts.iter().map(|&r| r.into()).collect(),
            addr: Address::reg(s32, off),
            cache: None,
            order: None,
        });
        let back = k.regs(rty, n);
        k.op(Memory::Ld {
            space: StateSpace::Shared,
            ty,
            dsts: back.clone(),
            addr: Address {
                base: sa.base.clone(),
                offset: off,
            },
            cache: None,
            nc: false,
            order: None,
        });
        let st_cache = [
            None,
            Some(StCache::Wb),
            Some(StCache::Cg),
            Some(StCache::Cs),
        ][i % 4];
        k.op(Memory::St {
            space: StateSpace::Global,
            ty,
            srcs: back.iter().map(|&r| r.into()).collect(),
            addr: Address::reg(g, 8192 + off),
            cache: st_cache,
            order: None,
        });
        off += bytes.max(16);
    }
    // Immediates stored directly, ordered accesses, generic and local spaces, prefetch.
    k.op(Memory::St {
        space: StateSpace::Global,
        ty: Type::U32,
        srcs: vec![imm(1), imm(2)],
        addr: Address::reg(g, 0),
        cache: None,
        order: None,
    });
    k.op(st(
        StateSpace::Global,
        Type::F16,
        immf(1.0),
        Address::reg(g, 16),
    ));
    let acq = k.reg(Type::U32);
    k.op(Memory::Ld {
        space: StateSpace::Global,
        ty: Type::U32,
        dsts: vec![acq],
        addr: Address::reg(g, 32),
        cache: None,
        nc: false,
        order: Some(MemOrder::Acquire(Scope::Gpu)),
    });
    k.op(Memory::St {
        space: StateSpace::Generic,
        ty: Type::U32,
        srcs: vec![acq.into()],
        addr: Address::reg(g, 36),
        cache: None,
        order: Some(MemOrder::Release(Scope::Sys)),
    });
    let rel = k.reg(Type::U32);
    k.op(Memory::Ld {
        space: StateSpace::Shared,
        ty: Type::U32,
        dsts: vec![rel],
        addr: Address::reg(s32, 0),
        cache: None,
        nc: false,
        order: Some(MemOrder::Relaxed(Scope::Cta)),
    });
    k.op(st(StateSpace::Local, Type::U32, rel, Address::reg(g, 0)));
    k.op(Memory::Prefetch {
        space: StateSpace::Global,
        l2: true,
        addr: Address::reg(g, 128),
    });
    k.op(Memory::Prefetch {
        space: StateSpace::Generic,
        l2: false,
        addr: Address::reg(g, 256),
    });
    k.sink(rel);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "ld");
}

#[test]
fn shared_cluster_loads_need_sm90() {
    let mut k = K::new("memory_cluster");
    k.smem("buf", 64, 16);
    let (a, r) = (k.reg(Type::U32), k.reg(Type::U32));
    k.op(Data::AddressOf {
        dst: a,
        symbol: "buf".into(),
    });
    // A shared::cta address is a valid shared::cluster address of this block.
    k.op(Memory::Ld {
        space: StateSpace::SharedCluster,
        ty: Type::U32,
        dsts: vec![r],
        addr: Address::reg(a, 4),
        cache: None,
        nc: false,
        order: Some(MemOrder::Acquire(Scope::Cluster)),
    });
    k.sink(r);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "ld");
}

#[test]
fn atomics_and_reductions() {
    let mut k = K::new("atomics");
    k.smem("cnt", 64, 8);
    let g = k.out;
    let h = ld_global(&mut k, Type::F16);
    let mut outs = Vec::new();
    // (space, op, type, a, b, order): every op on global memory; add and cas on shared.
    use StateSpace::{Global, Shared};
    #[rustfmt::skip]
    let cases = [
        (Global, AtomOp::Add, Type::U32, imm(1), None, None),
        (Global, AtomOp::Add, Type::F32, immf(0.5), None, Some(MemOrder::Relaxed(Scope::Gpu))),
        (Global, AtomOp::Add, Type::F64, immf(0.5), None, None),
        (Global, AtomOp::Add, Type::F16, h.into(), None, None),
        (Global, AtomOp::Min, Type::S32, imm(-4), None, Some(MemOrder::AcqRel(Scope::Gpu))),
        (Global, AtomOp::Max, Type::U64, imm(9), None, None),
        (Global, AtomOp::Inc, Type::U32, imm(16), None, None),
        (Global, AtomOp::Dec, Type::U32, imm(16), None, None),
        (Global, AtomOp::And, Type::B32, imm(0xff), None, None),
        (Global, AtomOp::Or, Type::B64, imm(0x100), None, Some(MemOrder::Acquire(Scope::Sys))),
        (Global, AtomOp::Xor, Type::B32, imm(3), None, None),
        (Global, AtomOp::Exch, Type::B32, imm(7), None, Some(MemOrder::Release(Scope::Cta))),
        (Global, AtomOp::Cas, Type::B32, imm(0), Some(imm(1)), None),
        (Shared, AtomOp::Add, Type::U32, imm(1), None, None),
        (Shared, AtomOp::Cas, Type::B64, imm(0), Some(imm(5)), None),
    ];
    for (i, (space, op, ty, a, b, order)) in cases.into_iter().enumerate() {
        let d = k.reg(ty);
        let addr = if space == Shared {
            Address::symbol("cnt", 8 * (i as i64 % 4))
        } else {
            Address::reg(g, 8 * i as i64)
        };
        k.op(Atomic::Atom {
            space,
            op,
            ty,
            dst: d,
            addr,
            a,
            b,
            order,
        });
        outs.push(d);
    }
    for (op, ty, a) in [
        (AtomOp::Add, Type::F32, immf(1.0)),
        (AtomOp::Add, Type::F16x2, immf(1.0)),
        (AtomOp::Max, Type::S32, imm(2)),
        (AtomOp::Or, Type::B32, imm(1)),
    ] {
        k.op(Atomic::Red {
            space: StateSpace::Global,
            op,
            ty,
            addr: Address::reg(g, 512),
            a,
            order: Some(MemOrder::Release(Scope::Gpu)),
        });
    }
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "atom");
}

#[test]
fn cluster_and_bf16_atomics_need_sm90() {
    let mut k = K::new("atomics_sm90");
    let h = ld_global(&mut k, Type::BF16);
    let (d, p) = (k.reg(Type::BF16), k.out);
    k.op(Atomic::Atom {
        space: StateSpace::Global,
        op: AtomOp::Add,
        ty: Type::BF16,
        dst: d,
        addr: Address::reg(p, 0),
        a: h.into(),
        b: None,
        order: None,
    });
    k.op(Atomic::Red {
        space: StateSpace::Global,
        op: AtomOp::Add,
        ty: Type::U32,
        addr: Address::reg(p, 8),
        a: imm(1),
        order: Some(MemOrder::Relaxed(Scope::Cluster)),
    });
    k.sink(d);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "atom");
}

#[test]
fn block_barriers() {
    let mut k = K::new("barriers");
    let t = tid(&mut k);
    k.op(Barrier::Sync {
        id: imm(0),
        count: None,
    })
    .op(Barrier::Sync {
        id: imm(1),
        count: Some(imm(64)),
    })
    .op(Barrier::SyncUnaligned {
        id: imm(2),
        count: None,
    })
    .op(Barrier::Arrive {
        id: imm(3),
        count: imm(128),
    })
    .op(Barrier::ArriveUnaligned {
        id: imm(4),
        count: imm(64),
    });
    let idreg = k.reg(Type::U32);
    k.op(bin(BinOp::Shr, Type::U32, idreg, t, imm(7)));
    k.op(Barrier::Sync {
        id: idreg.into(),
        count: Some(imm(128)),
    });
    k.sink(idreg);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "bar.sync");
}

#[test]
fn cluster_barrier_needs_sm90() {
    let mut k = K::new("cluster_barrier");
    for (sem, aligned) in [
        (ClusterArriveSem::Default, true),
        (ClusterArriveSem::Release, false),
        (ClusterArriveSem::Relaxed, true),
    ] {
        k.op(Barrier::ClusterArrive { sem, aligned });
        k.op(Barrier::ClusterWait {
            acquire: sem == ClusterArriveSem::Release,
            aligned,
        });
    }
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "barrier.cluster.arrive");
}

#[test]
fn fences() {
    let mut k = K::new("fences");
    for scope in [Scope::Cta, Scope::Gpu, Scope::Sys] {
        k.op(Fence::Membar { scope });
        k.op(Fence::Fence {
            sem: FenceSem::Sc,
            scope,
        });
        k.op(Fence::Fence {
            sem: FenceSem::AcqRel,
            scope,
        });
    }
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "membar");
}

#[test]
fn async_proxy_and_cluster_fences_need_sm90() {
    let mut k = K::new("fences_sm90");
    for space in [
        AsyncProxySpace::All,
        AsyncProxySpace::Global,
        AsyncProxySpace::SharedCta,
        AsyncProxySpace::SharedCluster,
    ] {
        k.op(Fence::ProxyAsync { space });
    }
    k.op(Fence::MbarrierInit).op(Fence::Fence {
        sem: FenceSem::AcqRel,
        scope: Scope::Cluster,
    });
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "fence.proxy.async");
}

#[test]
fn address_conversions() {
    let mut k = K::new("cvta");
    k.smem("buf", 64, 16);
    let (s, g, back) = (k.reg(Type::U64), k.reg(Type::U64), k.reg(Type::U64));
    k.op(Data::AddressOf {
        dst: s,
        symbol: "buf".into(),
    });
    k.op(AddressOp::Cvta {
        to_generic: true,
        space: StateSpace::Shared,
        dst: g,
        src: s.into(),
    });
    k.op(AddressOp::Cvta {
        to_generic: false,
        space: StateSpace::Shared,
        dst: back,
        src: g.into(),
    });
    let gg = k.reg(Type::U64);
    k.op(AddressOp::Cvta {
        to_generic: true,
        space: StateSpace::Global,
        dst: gg,
        src: back.into(),
    });
    k.sink_all(&[g, back, gg]);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "cvta");
}

#[test]
fn mapa_needs_sm90() {
    let mut k = K::new("mapa");
    k.smem("buf", 64, 16);
    let (s, r, g, rg) = (
        k.reg(Type::U32),
        k.reg(Type::U32),
        k.reg(Type::U64),
        k.reg(Type::U64),
    );
    k.op(Data::AddressOf {
        dst: s,
        symbol: "buf".into(),
    });
    k.op(AddressOp::Mapa {
        space: StateSpace::SharedCluster,
        dst: r,
        src: s.into(),
        cta_rank: imm(1),
    });
    k.op(Data::AddressOf {
        dst: g,
        symbol: "buf".into(),
    });
    k.op(AddressOp::Cvta {
        to_generic: true,
        space: StateSpace::Shared,
        dst: g,
        src: g.into(),
    });
    k.op(AddressOp::Mapa {
        space: StateSpace::Generic,
        dst: rg,
        src: g.into(),
        cta_rank: imm(0),
    });
    k.sink_all(&[r, rg]);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "mapa");
}

#[test]
fn cp_async_sizes_and_groups() {
    let mut k = K::new("cp_async");
    k.smem("stage", 256, 128);
    let t = tid(&mut k);
    let g = k.out;
    let s = k.reg(Type::U32);
    k.op(Data::AddressOf {
        dst: s,
        symbol: "stage".into(),
    });
    for (i, (cache, bytes, size)) in [
        (CpAsyncCache::Ca, 4, None),
        (CpAsyncCache::Ca, 8, Some(imm(4))),
        (CpAsyncCache::Ca, 16, None),
        (CpAsyncCache::Cg, 16, Some(t.into())),
        (CpAsyncCache::Cg, 16, Some(imm(0))),
    ]
    .into_iter()
    .enumerate()
    {
        k.op(CpAsync::Copy {
            cache,
            bytes,
            dst: Address::reg(s, 16 * i as i64),
            src: Address::reg(g, 16 * i as i64),
            src_size: size,
        });
        k.op(CpAsync::CommitGroup);
    }
    k.op(CpAsync::WaitGroup(1)).op(CpAsync::WaitAll);
    let v = k.reg(Type::U32);
    k.op(ld(
        StateSpace::Shared,
        Type::U32,
        v,
        Address::symbol("stage", 0),
    ));
    k.sink(v);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "cp.async");
}

#[test]
fn ldmatrix_counts_and_transpose() {
    let mut k = K::new("ldmatrix");
    k.smem("tile", 1024, 128);
    let mut outs = Vec::new();
    for (num, trans) in [
        (MatrixCount::X1, false),
        (MatrixCount::X2, true),
        (MatrixCount::X4, false),
        (MatrixCount::X4, true),
    ] {
        let d = k.regs(Type::B32, num.count());
        k.op(Matrix::Ldmatrix {
            num,
            trans,
            dsts: d.clone(),
            addr: Address::symbol("tile", 128),
        });
        outs.extend(d);
    }
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "ldmatrix");
}

#[test]
fn mma_sync_f16_bf16() {
    let mut k = K::new("mma_sync");
    let mut outs = Vec::new();
    let a = k.regs(Type::B32, 4);
    let b = k.regs(Type::B32, 2);
    for (i, r) in a.iter().chain(&b).enumerate() {
        k.op(Data::Mov {
            ty: Type::B32,
            dst: *r,
            src: imm(0x3C00_3C00 + i as i64),
        });
    }
    for (ab_ty, acc_ty) in [
        (Type::F16, Type::F32),
        (Type::F16, Type::F16),
        (Type::BF16, Type::F32),
    ] {
        let n = if acc_ty == Type::F32 { 4 } else { 2 };
        let slot = if acc_ty == Type::F32 {
            Type::F32
        } else {
            Type::F16x2
        };
        let d = k.regs(slot, n);
        let d2 = k.regs(slot, n);
        k.op(MmaSync {
            ab_ty,
            acc_ty,
            d: d.clone(),
            a: a.clone(),
            b: b.clone(),
            c: vec![immf(0.0); n],
        });
        k.op(MmaSync {
            ab_ty,
            acc_ty,
            d: d2.clone(),
            a: a.clone(),
            b: b.clone(),
            c: d.iter().map(|&r| r.into()).collect(),
        });
        outs.extend(d2);
    }
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "mma.sync");
}

#[test]
fn stmatrix_needs_sm90() {
    let mut k = K::new("stmatrix");
    k.smem("tile", 1024, 128);
    let t = tid(&mut k);
    for (num, trans) in [
        (MatrixCount::X1, false),
        (MatrixCount::X2, true),
        (MatrixCount::X4, false),
        (MatrixCount::X4, true),
    ] {
        let mut srcs: Vec<Operand> = vec![t.into(); num.count()];
        srcs[0] = imm(0x3C00_0000);
        k.op(Matrix::Stmatrix {
            num,
            trans,
            addr: Address::symbol("tile", 0),
            srcs,
        });
    }
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "stmatrix");
}
