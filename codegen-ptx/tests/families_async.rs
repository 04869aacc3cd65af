//! One test per asynchronous or tensor-core instruction family (wgmma, mbarrier, TMA,
//! `setmaxnreg`, tcgen05, cluster launches), as `families.rs` does for the others: a small kernel
//! built from IR data assembles with ptxas for the family's lowest target (no spills) and is
//! refused, with a sentence naming the op and both targets, for every lower target. Needs
//! `RUTE_PTXAS`.

mod common;

use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{Address, Operand, ParamKind, Reg, Scope, StateSpace, Target, Type};
use Target::{Sm100a, Sm80, Sm90a};

fn wgmma(n: u32, d_ty: Type, ab_ty: Type, d: Vec<Reg>, a: WgmmaA, scale_d: ScaleD) -> Wgmma {
    Wgmma::MmaAsync(WgmmaMma {
        n,
        d_ty,
        ab_ty,
        d,
        a,
        b_desc: imm(0x4000_0040_0000_0100),
        scale_d,
        scale_a: 1,
        scale_b: -1,
        tnsp_a: false,
        tnsp_b: true,
    })
}

#[test]
fn wgmma_smem_and_register_a_is_sm90a_only() {
    let mut k = K::new("wgmma");
    let desc = k.reg(Type::U64);
    k.op(Data::Mov {
        ty: Type::U64,
        dst: desc,
        src: imm(0x4000_0040_0000_0000),
    });
    let t = tid(&mut k);
    let p = setp(&mut k, CmpOp::Ne, Type::U32, t, imm(0));
    // One accumulator live at a time: each shape waits for its group and stores a value.
    for (n, d_ty, ab_ty) in [
        (8, Type::F32, Type::F16),
        (64, Type::F32, Type::BF16),
        (128, Type::F16, Type::F16),
        (256, Type::F32, Type::F16),
    ] {
        let slot = if d_ty == Type::F32 {
            Type::F32
        } else {
            Type::B32
        };
        let regs = if d_ty == Type::F32 { n / 2 } else { n / 4 } as usize;
        let d = k.regs(slot, regs);
        // Accumulators are read by wgmma: define them here so they are not live from the entry.
        for r in &d {
            k.op(Data::Mov {
                ty: slot,
                dst: *r,
                src: imm(0),
            });
        }
        k.op(Wgmma::Fence);
        k.op(wgmma(
            n,
            d_ty,
            ab_ty,
            d.clone(),
            WgmmaA::Desc(desc.into()),
            ScaleD::Const(false),
        ));
        k.op(wgmma(
            n,
            d_ty,
            ab_ty,
            d.clone(),
            WgmmaA::Desc(imm(0x4000_0040_0000_0200)),
            ScaleD::Pred(p),
        ));
        k.op(Wgmma::CommitGroup).op(Wgmma::WaitGroup(0));
        k.sink_all(&d);
    }
    // A from registers, N = 16 and 64.
    let a = k.regs(Type::B32, 4);
    for r in &a {
        k.op(Data::Mov {
            ty: Type::B32,
            dst: *r,
            src: imm(0x3C00_3C00),
        });
    }
    for n in [16, 64] {
        let d = k.regs(Type::F32, n as usize / 2);
        for r in &d {
            k.op(Data::Mov {
                ty: Type::F32,
                dst: *r,
                src: imm(0),
            });
        }
        k.op(Wgmma::Fence);
        k.op(wgmma(
            n,
            Type::F32,
            Type::F16,
            d.clone(),
            WgmmaA::Regs(a.clone()),
            ScaleD::Const(true),
        ));
        k.op(Wgmma::CommitGroup).op(Wgmma::WaitGroup(0));
        k.sink_all(&d);
    }
    // Architecture-specific: neither sm_80 nor sm_100a has wgmma.
    family(&k.k, Sm90a, &[], &[Sm80], "wgmma");
    let err = codegen_ptx::emit(&k.k, Sm100a).unwrap_err().to_string();
    assert!(
        err.contains("wgmma") && err.contains("sm_90a only") && err.contains("sm_100a"),
        "{err}"
    );
}

#[test]
fn mbarrier_sm80_forms() {
    let mut k = K::new("mbarrier_sm80");
    k.smem("bar", 16, 8);
    let (st, done) = (k.reg(Type::B64), k.reg(Type::Pred));
    k.op(Mbarrier::Init {
        addr: Address::symbol("bar", 0),
        count: imm(1),
    })
    .op(Mbarrier::Arrive {
        state: Some(st),
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: Address::symbol("bar", 0),
        count: None,
    })
    .op(Mbarrier::TestWaitParity {
        done,
        addr: Address::symbol("bar", 0),
        parity: imm(0),
    })
    .op(Mbarrier::Inval {
        addr: Address::symbol("bar", 0),
    });
    k.sink_all(&[st, done]);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "mbarrier");
}

#[test]
fn mbarrier_sm90_forms_cluster_and_remote() {
    let mut k = K::new("mbarrier_sm90");
    k.smem("bar", 16, 8);
    let bar = Address::symbol("bar", 0);
    let (st, done, done2) = (k.reg(Type::B64), k.reg(Type::Pred), k.reg(Type::Pred));
    let (local, remote) = (k.reg(Type::U32), k.reg(Type::U32));
    k.op(Mbarrier::Init {
        addr: bar.clone(),
        count: imm(2),
    })
    .op(Fence::MbarrierInit)
    .op(Mbarrier::ArriveExpectTx {
        state: Some(st),
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: bar.clone(),
        tx_count: imm(4096),
    })
    .op(Mbarrier::ArriveExpectTx {
        state: None,
        space: StateSpace::Shared,
        scope: Scope::Cluster,
        addr: bar.clone(),
        tx_count: imm(1024),
    })
    .op(Mbarrier::ExpectTx {
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: bar.clone(),
        tx_count: imm(64),
    })
    .op(Mbarrier::Arrive {
        state: Some(st),
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: bar.clone(),
        count: Some(imm(1)),
    })
    .op(Data::AddressOf {
        dst: local,
        symbol: "bar".into(),
    })
    .op(AddressOp::Mapa {
        space: StateSpace::SharedCluster,
        dst: remote,
        src: local.into(),
        cta_rank: imm(1),
    })
    .op(Mbarrier::Arrive {
        state: None,
        space: StateSpace::SharedCluster,
        scope: Scope::Cluster,
        addr: Address::reg(remote, 0),
        count: None,
    })
    .op(Mbarrier::ExpectTx {
        space: StateSpace::SharedCluster,
        scope: Scope::Cluster,
        addr: Address::reg(remote, 0),
        tx_count: imm(32),
    })
    .op(Mbarrier::TryWaitParity {
        done,
        scope: Scope::Cta,
        addr: bar.clone(),
        parity: imm(0),
        suspend_hint: Some(imm(1_000_000)),
    })
    .op(Mbarrier::TryWaitParity {
        done: done2,
        scope: Scope::Cluster,
        addr: Address::reg(local, 0),
        parity: imm(1),
        suspend_hint: None,
    });
    k.sink_all(&[st, done, done2]);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "mbarrier");
}

fn tma_kernel(name: &str) -> K {
    let mut k = K::new(name);
    k.param("tmap", ParamKind::TensorMap);
    k.k.dynamic_shared = Some(dsl_core::ir::DynamicShared {
        name: "smem".into(),
        align: 1024,
    });
    k.smem("bar", 8, 8);
    k.op(Mbarrier::Init {
        addr: Address::symbol("bar", 0),
        count: imm(1),
    });
    k
}

#[test]
fn tma_loads_2d_to_5d_with_and_without_multicast() {
    let mut k = tma_kernel("tma_load");
    k.k.hints.cluster_dims = Some([2, 1, 1]);
    let t = tid(&mut k);
    let mask = k.reg(Type::B16);
    k.op(Data::Mov {
        ty: Type::B16,
        dst: mask,
        src: imm(3),
    });
    let mapreg = k.reg(Type::U64);
    k.op(Data::AddressOf {
        dst: mapreg,
        symbol: "tmap".into(),
    })
    .op(AddressOp::Cvta {
        to_generic: true,
        space: StateSpace::Param,
        dst: mapreg,
        src: mapreg.into(),
    })
    .op(Bulk::PrefetchTensormap {
        tensor_map: TensorMapRef::Param("tmap".into()),
    });
    for dims in 1..=5usize {
        let coords: Vec<Operand> = (0..dims)
            .map(|i| if i == 0 { t.into() } else { imm(i as i64 * 8) })
            .collect();
        // With and without an L2 cache policy (CuTe's EVICT_FIRST, EVICT_LAST), multicast too.
        for (m, map, policy) in [
            (None, TensorMapRef::Param("tmap".into()), None),
            (Some(mask.into()), TensorMapRef::Reg(mapreg), None),
            (Some(imm(1)), TensorMapRef::Param("tmap".into()), None),
            (None, TensorMapRef::Reg(mapreg), Some(0x12F0_0000_0000_0000)),
            (
                Some(mask.into()),
                TensorMapRef::Reg(mapreg),
                Some(0x14F0_0000_0000_0000),
            ),
        ] {
            k.op(Bulk::TensorPrefetch {
                tensor_map: map.clone(),
                coords: coords.clone(),
                cache_policy: policy,
            });
            k.op(Bulk::TensorLoad {
                dst: Address::symbol("smem", 1024 * dims as i64),
                tensor_map: map,
                coords: coords.clone(),
                mbar: Address::symbol("bar", 0),
                multicast: m,
                cta_group: None,
                cache_policy: policy,
            });
        }
    }
    let done = k.reg(Type::Pred);
    k.op(Mbarrier::TryWaitParity {
        done,
        scope: Scope::Cta,
        addr: Address::symbol("bar", 0),
        parity: imm(0),
        suspend_hint: None,
    });
    k.sink(done);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "");
    // The refusal names the first op sm_80 lacks (the cluster directive comes first).
    let msg = codegen_ptx::emit(&k.k, Sm80).unwrap_err().to_string();
    assert!(msg.contains(".reqnctapercluster"), "{msg}");
    k.k.hints.cluster_dims = None;
    let msg = codegen_ptx::emit(&k.k, Sm80).unwrap_err().to_string();
    assert!(
        msg.contains("cp.async.bulk.tensor")
            || msg.contains("prefetch.tensormap")
            || msg.contains("mov from"),
        "{msg}"
    );
}

#[test]
fn tma_store_with_bulk_groups() {
    let mut k = tma_kernel("tma_store");
    for dims in 2..=5usize {
        k.op(Bulk::TensorStore {
            tensor_map: TensorMapRef::Param("tmap".into()),
            coords: (0..dims).map(|i| imm(16 * i as i64)).collect(),
            src: Address::symbol("smem", 0),
            // Every other store with EVICT_FIRST's policy.
            cache_policy: (dims % 2 == 1).then_some(0x12F0_0000_0000_0000),
        });
        k.op(Bulk::CommitGroup);
    }
    k.op(Bulk::WaitGroup { n: 1, read: true })
        .op(Bulk::WaitGroup { n: 0, read: false });
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "cp.async.bulk.tensor");
}

#[test]
fn setmaxnreg_on_sm90a_and_sm100a() {
    let mut k = K::new("setmaxnreg");
    k.k.hints.maxntid = Some([384, 1, 1]);
    let t = tid(&mut k);
    let p = setp(&mut k, CmpOp::Lt, Type::U32, t, imm(128));
    k.stmt(dsl_core::ir::Stmt::If {
        cond: p,
        then: vec![dsl_core::ir::Stmt::op(Setmaxnreg {
            inc: false,
            count: 40,
        })],
        else_: vec![dsl_core::ir::Stmt::op(Setmaxnreg {
            inc: true,
            count: 232,
        })],
    });
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "setmaxnreg");
}

/// A TMA load whose barrier may be the pair peer's (`.cta_group::2`, CuTe's
/// `SM100_TMA_2SM_LOAD`): both blocks of a pair load into their own shared memory and complete
/// on the even block's barrier, reached through `mapa`; sm_100a only.
#[test]
fn tma_loads_for_a_pair_are_sm100a_only() {
    let mut k = tma_kernel("tma_load_2sm");
    k.k.hints.cluster_dims = Some([2, 1, 1]);
    let (bar, lead) = (k.reg(Type::U32), k.reg(Type::U32));
    k.op(Data::AddressOf {
        dst: bar,
        symbol: "bar".into(),
    })
    .op(AddressOp::Mapa {
        space: StateSpace::SharedCluster,
        dst: lead,
        src: bar.into(),
        cta_rank: imm(0),
    });
    for group in [CtaGroup::One, CtaGroup::Two] {
        k.op(Bulk::TensorLoad {
            dst: Address::symbol("smem", 0),
            tensor_map: TensorMapRef::Param("tmap".into()),
            coords: vec![imm(0), imm(64)],
            mbar: Address::reg(lead, 0),
            multicast: None,
            cta_group: Some(group),
            cache_policy: None,
        });
    }
    let text = assemble_ok(&k.k, Sm100a).0;
    assert!(
        text.contains(".mbarrier::complete_tx::bytes.cta_group::2 [smem], [")
            && text.contains(".cta_group::1 "),
        "{text}"
    );
    family(&k.k, Sm100a, &[], &[Sm90a], "cp.async.bulk.tensor");
}

/// Every tcgen05 op of one CTA group (ptxas refuses a kernel mixing groups).
fn tcgen05_kernel(cta_group: CtaGroup) -> K {
    let mut k = K::new(&format!("tcgen05_cta{}", cta_group.count()));
    k.k.hints.cluster_dims = Some([2, 1, 1]);
    k.smem("tmem_addr", 16, 16);
    k.smem("bar", 8, 8);
    let taddr = k.reg(Type::U32);
    let (adesc, bdesc) = (k.reg(Type::U64), k.reg(Type::U64));
    let idesc = k.reg(Type::U32);
    let t = tid(&mut k);
    let acc = setp(&mut k, CmpOp::Ne, Type::U32, t, imm(0));
    k.op(Tcgen05::Alloc {
        cta_group,
        dst: Address::symbol("tmem_addr", 0),
        ncols: imm(128),
    })
    .op(Tcgen05::RelinquishAllocPermit { cta_group });
    k.op(Tcgen05::FenceBeforeThreadSync)
        .op(Barrier::Sync {
            id: imm(0),
            count: None,
        })
        .op(Tcgen05::FenceAfterThreadSync)
        .op(ld(
            StateSpace::Shared,
            Type::U32,
            taddr,
            Address::symbol("tmem_addr", 0),
        ))
        .op(Data::Mov {
            ty: Type::U64,
            dst: adesc,
            src: imm(0x4000_4000_0100_0000),
        })
        .op(Data::Mov {
            ty: Type::U64,
            dst: bdesc,
            src: imm(0x4000_4000_0100_0040),
        })
        .op(Data::Mov {
            ty: Type::U32,
            dst: idesc,
            src: imm(0x0810_0490),
        });
    for (a, en, kind) in [
        (Tcgen05A::Desc(adesc.into()), imm(0), MmaKind::F16),
        (
            Tcgen05A::Desc(imm(0x4000_4000_0100_0080)),
            acc.into(),
            MmaKind::F16,
        ),
        (Tcgen05A::Tmem(taddr.into()), acc.into(), MmaKind::F16),
        (Tcgen05A::Desc(adesc.into()), imm(1), MmaKind::Tf32),
        (Tcgen05A::Desc(adesc.into()), acc.into(), MmaKind::F8f6f4),
        (Tcgen05A::Desc(adesc.into()), acc.into(), MmaKind::I8),
    ] {
        k.op(Tcgen05::Mma {
            cta_group,
            kind,
            d_tmem: taddr.into(),
            a,
            b_desc: bdesc.into(),
            idesc: idesc.into(),
            enable_input_d: en,
        });
    }
    for mc in [None, Some(imm(3))] {
        k.op(Tcgen05::Commit {
            cta_group,
            mbar: Address::symbol("bar", 0),
            multicast: mc,
        });
    }
    let mut outs = Vec::new();
    for (num, pack16) in [(1, false), (2, true), (4, false), (8, false), (32, false)] {
        let d = k.regs(Type::F32, num as usize);
        k.op(Tcgen05::Ld {
            shape: TmemShape::S32x32b,
            num,
            pack16,
            dsts: d.clone(),
            taddr: taddr.into(),
        });
        outs.push(d[0]);
    }
    for (shape, num) in [
        (TmemShape::S16x64b, 2),
        (TmemShape::S16x128b, 1),
        (TmemShape::S16x256b, 1),
    ] {
        let d = k.regs(Type::B32, shape.regs_per_rep() * num as usize);
        k.op(Tcgen05::Ld {
            shape,
            num,
            pack16: false,
            dsts: d.clone(),
            taddr: imm(0),
        });
        outs.push(d[d.len() - 1]);
    }
    k.op(Tcgen05::WaitLd);
    k.op(Tcgen05::St {
        shape: TmemShape::S32x32b,
        num: 2,
        unpack16: true,
        taddr: taddr.into(),
        srcs: vec![outs[0].into(), imm(0x3F80_0000)],
    })
    .op(Tcgen05::WaitSt);
    k.op(Tcgen05::Dealloc {
        cta_group,
        taddr: taddr.into(),
        ncols: imm(128),
    });
    k.sink_all(&outs);
    k
}

#[test]
fn tcgen05_cta_group_1_is_sm100a_only() {
    tcgen05_checks(tcgen05_kernel(CtaGroup::One));
}

#[test]
fn tcgen05_cta_group_2_is_sm100a_only() {
    tcgen05_checks(tcgen05_kernel(CtaGroup::Two));
}

fn tcgen05_checks(mut k: K) {
    family(&k.k, Sm100a, &[], &[Sm90a], "tcgen05");
    // sm_80 fails first on the cluster directive; without it, on the first tcgen05 op.
    k.k.hints.cluster_dims = None;
    let msg = codegen_ptx::emit(&k.k, Sm80).unwrap_err().to_string();
    assert!(
        msg.contains("tcgen05.alloc") && msg.contains("sm_100a only") && msg.contains("sm_80"),
        "{msg}"
    );
}

#[test]
fn cluster_directive_is_refused_on_sm80() {
    let mut k = K::new("cluster_hint");
    k.k.hints.cluster_dims = Some([2, 1, 1]);
    k.k.hints.reqntid = Some([128, 1, 1]);
    k.k.hints.minnctapersm = Some(2);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], ".reqnctapercluster");
}
