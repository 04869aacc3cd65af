//! Every form the IR accepts, assembled at the lowest target the IR claims for it.
//!
//! For the families with many type combinations (arithmetic, conversions, comparisons, atomics,
//! loads and stores), each combination whose `check()` passes is grouped by its IR `min_target`
//! and `ptx_version`; each group becomes one kernel that must emit and assemble for that target
//! at that version. A ptxas error here means the writer spells a form wrong, or the IR claims a
//! target or a PTX version too low for it. Needs `RUTE_PTXAS`.

mod common;

use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{
    Address, MemOrder, Op, OpInfo, Operand, PtxVersion, Reg, Scope, StateSpace, Target, Type,
};
use std::collections::BTreeMap;

const REG_TYPES: [Type; 16] = [
    Type::B16,
    Type::U16,
    Type::S16,
    Type::B32,
    Type::U32,
    Type::S32,
    Type::B64,
    Type::U64,
    Type::S64,
    Type::F16,
    Type::F16x2,
    Type::BF16,
    Type::BF16x2,
    Type::F32,
    Type::F64,
    Type::Pred,
];

/// Builds one kernel per lowest target from `make(k)`'s ops and assembles each.
fn assemble_by_target(name: &str, make: impl Fn(&mut K) -> Vec<Op>) -> usize {
    let mut probe = K::new(name);
    let ops = make(&mut probe);
    let mut groups: BTreeMap<(Target, PtxVersion), Vec<Op>> = BTreeMap::new();
    let mut n = 0;
    for op in ops {
        if op.check().is_err() {
            continue;
        }
        if let Some(t) = op.min_target() {
            groups.entry((t, op.ptx_version())).or_default().push(op);
            n += 1;
        }
    }
    for ((t, v), ops) in groups {
        let mut k = probe.k.clone();
        k.name = format!("{name}_{}_{}{}", t.name(), v.major, v.minor);
        for op in ops {
            k.body.push(dsl_core::ir::Stmt::op(op));
        }
        assert_eq!(k.ptx_version(t), v.max(t.min_ptx_version()));
        assemble_ok(&k, t);
    }
    n
}

#[test]
fn every_accepted_binary_op_assembles_at_its_lowest_target() {
    let n = assemble_by_target("bin", |k| {
        let mut ops = Vec::new();
        for ty in REG_TYPES {
            let (d, a) = (k.reg(ty), k.reg(ty));
            let sh = k.reg(Type::U32);
            for op in [
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Div,
                BinOp::Rem,
                BinOp::Min,
                BinOp::Max,
                BinOp::And,
                BinOp::Or,
                BinOp::Xor,
                BinOp::Shl,
                BinOp::Shr,
            ] {
                let b = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    sh.into()
                } else {
                    a.into()
                };
                ops.push(
                    Arith::Bin {
                        op,
                        ty,
                        dst: d,
                        a: a.into(),
                        b,
                    }
                    .into(),
                );
            }
            for op in [
                UnOp::Neg,
                UnOp::Abs,
                UnOp::Not,
                UnOp::Popc,
                UnOp::Clz,
                UnOp::Brev,
            ] {
                let dst = if matches!(op, UnOp::Popc | UnOp::Clz) {
                    sh
                } else {
                    d
                };
                ops.push(
                    Arith::Unary {
                        op,
                        ty,
                        dst,
                        a: a.into(),
                    }
                    .into(),
                );
            }
            for op in [
                ApproxOp::Ex2,
                ApproxOp::Lg2,
                ApproxOp::Rcp,
                ApproxOp::Sqrt,
                ApproxOp::Rsqrt,
                ApproxOp::Sin,
                ApproxOp::Cos,
                ApproxOp::Tanh,
            ] {
                ops.push(
                    Arith::Approx {
                        op,
                        ty,
                        dst: d,
                        a: a.into(),
                    }
                    .into(),
                );
            }
            ops.push(
                Arith::Fma {
                    rnd: FloatRound::Rn,
                    ty,
                    dst: d,
                    a: a.into(),
                    b: a.into(),
                    c: a.into(),
                }
                .into(),
            );
        }
        ops
    });
    assert!(n > 100, "{n} forms");
}

#[test]
fn every_accepted_conversion_assembles_at_its_lowest_target() {
    let n = assemble_by_target("cvt", |k| {
        let scalar = [
            Type::U8,
            Type::S8,
            Type::U16,
            Type::S16,
            Type::U32,
            Type::S32,
            Type::U64,
            Type::S64,
            Type::F16,
            Type::BF16,
            Type::F32,
            Type::F64,
        ];
        let reg_for = |k: &mut K, t: Type| -> Reg {
            if t.bits() == 8 {
                k.reg(Type::U16)
            } else {
                k.reg(t)
            }
        };
        let mut ops = Vec::new();
        for dst_ty in scalar {
            for src_ty in scalar {
                let (d, s) = (reg_for(k, dst_ty), reg_for(k, src_ty));
                ops.push(
                    Convert::Cvt {
                        dst_ty,
                        src_ty,
                        rnd: None,
                        sat: false,
                        dst: d,
                        src: s.into(),
                    }
                    .into(),
                );
            }
        }
        ops
    });
    assert!(n > 100, "{n} forms");
}

#[test]
fn every_accepted_comparison_assembles_at_its_lowest_target() {
    let n = assemble_by_target("setp", |k| {
        let p = k.reg(Type::Pred);
        let mut ops = Vec::new();
        for ty in REG_TYPES {
            let a = k.reg(ty);
            for cmp in [
                CmpOp::Eq,
                CmpOp::Ne,
                CmpOp::Lt,
                CmpOp::Le,
                CmpOp::Gt,
                CmpOp::Ge,
                CmpOp::Equ,
                CmpOp::Neu,
                CmpOp::Ltu,
                CmpOp::Leu,
                CmpOp::Gtu,
                CmpOp::Geu,
                CmpOp::Num,
                CmpOp::Nan,
            ] {
                ops.push(
                    Compare::Setp {
                        cmp,
                        ty,
                        dst: p,
                        a: a.into(),
                        b: a.into(),
                    }
                    .into(),
                );
            }
            ops.push(
                Compare::Selp {
                    ty,
                    dst: a,
                    a: a.into(),
                    b: a.into(),
                    cond: p.into(),
                }
                .into(),
            );
        }
        ops
    });
    assert!(n > 50, "{n} forms");
}

#[test]
fn every_accepted_atomic_assembles_at_its_lowest_target() {
    let n = assemble_by_target("atom", |k| {
        k.smem("cell", 16, 16);
        let g = k.reg(Type::U64);
        let mut ops: Vec<Op> = Vec::new();
        for ty in REG_TYPES {
            if ty == Type::Pred {
                continue;
            }
            let (d, a) = (k.reg(ty), k.reg(ty));
            for op in [
                AtomOp::Add,
                AtomOp::Min,
                AtomOp::Max,
                AtomOp::Inc,
                AtomOp::Dec,
                AtomOp::And,
                AtomOp::Or,
                AtomOp::Xor,
                AtomOp::Exch,
                AtomOp::Cas,
            ] {
                for space in [StateSpace::Global, StateSpace::Shared] {
                    let addr = if space == StateSpace::Global {
                        Address::reg(g, 0)
                    } else {
                        Address::symbol("cell", 0)
                    };
                    ops.push(
                        Atomic::Atom {
                            space,
                            op,
                            ty,
                            dst: d,
                            addr: addr.clone(),
                            a: a.into(),
                            b: (op == AtomOp::Cas).then_some(Operand::Reg(a)),
                            order: None,
                        }
                        .into(),
                    );
                    ops.push(
                        Atomic::Red {
                            space,
                            op,
                            ty,
                            addr,
                            a: a.into(),
                            order: None,
                        }
                        .into(),
                    );
                }
            }
        }
        ops
    });
    assert!(n > 40, "{n} forms");
}

#[test]
fn every_accepted_load_and_store_assembles_at_its_lowest_target() {
    let n = assemble_by_target("ldst", |k| {
        k.smem("buf", 64, 16);
        let (a64, a32) = (k.reg(Type::U64), k.reg(Type::U32));
        let mut ops: Vec<Op> = Vec::new();
        let mem_types = [
            Type::B8,
            Type::U8,
            Type::S8,
            Type::B16,
            Type::U16,
            Type::S16,
            Type::B32,
            Type::U32,
            Type::S32,
            Type::B64,
            Type::U64,
            Type::S64,
            Type::F16,
            Type::F16x2,
            Type::BF16,
            Type::BF16x2,
            Type::F32,
            Type::F64,
        ];
        let spaces = [
            StateSpace::Global,
            StateSpace::Shared,
            StateSpace::SharedCluster,
            StateSpace::Local,
            StateSpace::Generic,
            StateSpace::Param,
            StateSpace::Const,
        ];
        for ty in mem_types {
            let rty = if ty.bits() == 8 { Type::U16 } else { ty };
            for n in [1, 2, 4] {
                let regs = k.regs(rty, n);
                for space in spaces {
                    let addr = match space {
                        StateSpace::Shared | StateSpace::SharedCluster => Address::reg(a32, 0),
                        StateSpace::Param => Address::symbol("out", 0),
                        _ => Address::reg(a64, 0),
                    };
                    ops.push(
                        Memory::Ld {
                            space,
                            ty,
                            dsts: regs.clone(),
                            addr: addr.clone(),
                            cache: None,
                            nc: space == StateSpace::Global && n == 2,
                            order: None,
                        }
                        .into(),
                    );
                    ops.push(
                        Memory::St {
                            space,
                            ty,
                            srcs: regs.iter().map(|&r| r.into()).collect(),
                            addr,
                            cache: None,
                            order: None,
                        }
                        .into(),
                    );
                }
            }
        }
        // Memory orders at every scope, scalar u32, on global, shared and shared::cluster.
        let r = k.reg(Type::U32);
        for scope in [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys] {
            for (space, addr) in [
                (StateSpace::Global, Address::reg(a64, 0)),
                (StateSpace::Shared, Address::reg(a32, 0)),
                (StateSpace::SharedCluster, Address::reg(a32, 0)),
            ] {
                for order in [
                    MemOrder::Relaxed(scope),
                    MemOrder::Acquire(scope),
                    MemOrder::Release(scope),
                ] {
                    ops.push(
                        Memory::Ld {
                            space,
                            ty: Type::U32,
                            dsts: vec![r],
                            addr: addr.clone(),
                            cache: None,
                            nc: false,
                            order: Some(order),
                        }
                        .into(),
                    );
                    ops.push(
                        Memory::St {
                            space,
                            ty: Type::U32,
                            srcs: vec![r.into()],
                            addr: addr.clone(),
                            cache: None,
                            order: Some(order),
                        }
                        .into(),
                    );
                }
            }
        }
        ops
    });
    assert!(n > 200, "{n} forms");
}
