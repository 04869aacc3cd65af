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

/// The types a register may hold (every type but the 8-bit ones).
fn reg_types() -> impl Iterator<Item = Type> {
    Type::ALL.into_iter().filter(|t| t.is_register_type())
}

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
        for ty in reg_types() {
            let (d, a) = (k.reg(ty), k.reg(ty));
            let sh = k.reg(Type::U32);
            for op in BinOp::ALL {
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
            for op in UnOp::ALL {
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
            for op in ApproxOp::ALL {
                ops.push(
                    Arith::Approx {
                        op,
                        ty,
                        subnormals: Subnormals::Kept,
                        dst: d,
                        a: a.into(),
                    }
                    .into(),
                );
            }
            for op in RoundedOp::ALL {
                for rnd in [
                    FloatRound::Rn,
                    FloatRound::Rz,
                    FloatRound::Rm,
                    FloatRound::Rp,
                ] {
                    ops.push(
                        Arith::Rounded {
                            op,
                            rnd,
                            ty,
                            dst: d,
                            a: a.into(),
                        }
                        .into(),
                    );
                }
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
        // Integers and scalar floats: cvt has no form for raw bits or packed pairs.
        let scalar: Vec<Type> = Type::ALL
            .into_iter()
            .filter(|t| t.is_int() || (t.is_float() && !t.is_packed()))
            .collect();
        let reg_for = |k: &mut K, t: Type| -> Reg {
            if t.bits() == 8 {
                k.reg(Type::U16)
            } else {
                k.reg(t)
            }
        };
        let mut ops = Vec::new();
        for &dst_ty in &scalar {
            for &src_ty in &scalar {
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
        for ty in reg_types() {
            let a = k.reg(ty);
            for cmp in CmpOp::ALL {
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
        for ty in reg_types() {
            if ty == Type::Pred {
                continue;
            }
            let (d, a) = (k.reg(ty), k.reg(ty));
            for op in AtomOp::ALL {
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
        let spaces = [
            StateSpace::Global,
            StateSpace::Shared,
            StateSpace::SharedCluster,
            StateSpace::Local,
            StateSpace::Generic,
            StateSpace::Param,
            StateSpace::Const,
        ];
        // Every type that lives in memory (all but predicates).
        for ty in Type::ALL.into_iter().filter(|&t| t != Type::Pred) {
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
