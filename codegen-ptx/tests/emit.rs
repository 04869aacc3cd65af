//! Whole-kernel properties of `emit`: determinism, control flow, the header, declarations,
//! typed errors for malformed IR, and generation speed. Assembling needs `RUTE_PTXAS`.

mod common;

use codegen_ptx::{emit, CodegenError};
use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{
    Address, Dim, DynamicShared, IrError, Kernel, Operand, Param, ParamKind, Reg, SpecialReg,
    StateSpace, Stmt, Target, Type,
};
use std::time::Duration;

fn add(ty: Type, dst: Reg, a: impl Into<Operand>, b: impl Into<Operand>) -> Stmt {
    Stmt::op(Arith::Bin {
        op: BinOp::Add,
        ty,
        dst,
        a: a.into(),
        b: b.into(),
    })
}

fn setp(cmp: CmpOp, ty: Type, dst: Reg, a: impl Into<Operand>, b: impl Into<Operand>) -> Stmt {
    Stmt::op(Compare::Setp {
        cmp,
        ty,
        dst,
        a: a.into(),
        b: b.into(),
    })
}

/// A kernel with every structured statement, nested: a dynamic-bound `For` over `n` (a
/// parameter) holding an `If`/`else`, a `While` that halves a value, an `If` without `else`, and a
/// signed `For` counting from -4 with a dynamic step.
fn control_flow_kernel() -> Kernel {
    let mut k = K::new("control_flow");
    k.param("n", ParamKind::Scalar(Type::U32));
    let (n, i, acc, p, x, q, j, step, w) = (
        k.reg(Type::U32),
        k.reg(Type::U32),
        k.reg(Type::U32),
        k.reg(Type::Pred),
        k.reg(Type::U32),
        k.reg(Type::Pred),
        k.reg(Type::S32),
        k.reg(Type::S32),
        k.reg(Type::S32),
    );
    k.op(ld(StateSpace::Param, Type::U32, n, Address::symbol("n", 0)));
    k.op(Data::Mov {
        ty: Type::U32,
        dst: acc,
        src: Operand::Imm(0),
    });
    k.stmt(Stmt::Comment("sum of i for even i, minus odd i".into()));
    k.stmt(Stmt::For {
        var: i,
        start: Operand::Imm(0),
        end: n.into(),
        step: Operand::Imm(1),
        body: vec![
            Stmt::op(Arith::Bin {
                op: BinOp::And,
                ty: Type::B32,
                dst: x,
                a: i.into(),
                b: Operand::Imm(1),
            }),
            setp(CmpOp::Eq, Type::U32, p, x, imm(0)),
            Stmt::If {
                cond: p,
                then: vec![add(Type::U32, acc, acc, i)],
                else_: vec![Stmt::op(Arith::Bin {
                    op: BinOp::Sub,
                    ty: Type::U32,
                    dst: acc,
                    a: acc.into(),
                    b: i.into(),
                })],
            },
        ],
    });
    k.stmt(Stmt::While {
        cond_block: vec![setp(CmpOp::Gt, Type::U32, q, acc, imm(100))],
        cond: q,
        body: vec![Stmt::op(Arith::Bin {
            op: BinOp::Shr,
            ty: Type::U32,
            dst: acc,
            a: acc.into(),
            b: Operand::Imm(1),
        })],
    });
    k.stmt(Stmt::If {
        cond: q,
        then: vec![add(Type::U32, acc, acc, imm(7))],
        else_: vec![],
    });
    k.op(Convert::Cvt {
        dst_ty: Type::S32,
        src_ty: Type::U32,
        rnd: None,
        sat: false,
        dst: step,
        src: n.into(),
    });
    k.op(Data::Mov {
        ty: Type::S32,
        dst: w,
        src: Operand::Imm(0),
    });
    k.stmt(Stmt::For {
        var: j,
        start: Operand::Imm(-4),
        end: Operand::Imm(40),
        step: step.into(),
        body: vec![add(Type::S32, w, w, j)],
    });
    k.sink_all(&[acc, w]);
    k.k
}

#[test]
fn control_flow_lowers_to_predicated_branches_and_assembles() {
    let k = control_flow_kernel();
    let (ptx, _) = assemble_ok(&k, Target::Sm80);
    // Labels are numbered in the order their constructs start: the For (0), its If (1), the
    // While (2), the second If (3), the signed For (4).
    let order = [
        "$L0_loop:",
        "@!%p0 bra $L1_else;",
        "bra.uni $L1_end;",
        "$L1_else:",
        "$L1_end:",
        "bra.uni $L0_loop;",
        "$L0_end:",
        "$L2_while:",
        "@!%p1 bra $L2_end;",
        "bra.uni $L2_while;",
        "$L2_end:",
        "@!%p1 bra $L3_end;",
        "$L3_end:",
        "$L4_loop:",
        "$L4_end:",
    ];
    let mut at = 0;
    for needle in order {
        let pos = ptx[at..]
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` after byte {at}\n{ptx}"));
        at += pos + needle.len();
    }
    // Unsigned and signed loop exits compare by the variable's type; the bound is re-read.
    assert!(ptx.contains("setp.ge.u32"), "{ptx}");
    assert!(ptx.contains("setp.ge.s32"), "{ptx}");
    assert!(ptx.contains("mov.b32 %r4, -4;"), "{ptx}");
    assert!(ptx.contains("// sum of i for even i, minus odd i"));
}

#[test]
fn register_pools_are_declared_with_exact_counts() {
    let ptx = emit(&control_flow_kernel(), Target::Sm80).unwrap();
    for (decl, prefix) in [
        (".reg .pred %p<", "%p"),
        (".reg .b32 %r<", "%r"),
        (".reg .b64 %rd<", "%rd"),
    ] {
        let start = ptx.find(decl).unwrap_or_else(|| panic!("{decl}\n{ptx}")) + decl.len();
        let count: usize = ptx[start..].split('>').next().unwrap().parse().unwrap();
        let body = &ptx[ptx.find("\n\n\t").unwrap()..];
        let used = (0..)
            .take_while(|i| {
                let name = format!("{prefix}{i}");
                body.match_indices(&name)
                    .any(|(p, _)| !body[p + name.len()..].starts_with(|c: char| c.is_ascii_digit()))
            })
            .count();
        assert_eq!(
            count, used,
            "{decl}: every declared register is used\n{ptx}"
        );
        let past = format!("{prefix}{count}");
        assert!(
            !body.match_indices(&past).any(|(p, _)| {
                !body[p + past.len()..].starts_with(|c: char| c.is_ascii_digit())
            }),
            "{past} used beyond the declaration"
        );
    }
}

#[test]
fn emission_is_deterministic() {
    let a = big_kernel(300);
    let b = big_kernel(300);
    let first = emit(&a, Target::Sm90a).unwrap();
    assert_eq!(first, emit(&a, Target::Sm90a).unwrap());
    assert_eq!(first, emit(&b, Target::Sm90a).unwrap());
    assert_eq!(
        emit(&control_flow_kernel(), Target::Sm80).unwrap(),
        emit(&control_flow_kernel(), Target::Sm80).unwrap()
    );
}

fn header(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter(|l| {
            l.starts_with(".version") || l.starts_with(".target") || l.starts_with(".address_size")
        })
        .collect()
}

#[test]
fn version_header_is_the_lowest_the_target_and_ops_allow() {
    let plain = K::new("plain").k;
    assert_eq!(
        header(&emit(&plain, Target::Sm80).unwrap()),
        [".version 7.0", ".target sm_80", ".address_size 64"]
    );
    assert_eq!(
        header(&emit(&plain, Target::Sm90a).unwrap()),
        [".version 8.0", ".target sm_90a", ".address_size 64"]
    );
    assert_eq!(
        header(&emit(&plain, Target::Sm100a).unwrap()),
        [".version 8.6", ".target sm_100a", ".address_size 64"]
    );
    // mbarrier.test_wait arrived in PTX 7.1: an sm_80 kernel using it says so.
    let mut k = K::new("test_wait");
    k.smem("bar", 8, 8);
    let done = k.reg(Type::Pred);
    k.op(Mbarrier::TestWaitParity {
        done,
        addr: Address::symbol("bar", 0),
        parity: Operand::Imm(0),
    });
    k.sink(done);
    let (ptx, _) = assemble_ok(&k.k, Target::Sm80);
    assert_eq!(header(&ptx)[0], ".version 7.1");
    // A cluster shape needs PTX 7.8, below sm_90a's own 8.0.
    let mut k = K::new("cluster");
    k.k.hints.cluster_dims = Some([2, 1, 1]);
    assert_eq!(
        header(&emit(&k.k, Target::Sm90a).unwrap())[0],
        ".version 8.0"
    );
    // Never above 8.7, whatever the kernel holds.
    for t in Target::ALL {
        let v = header(&emit(&plain, t).unwrap())[0]
            .trim_start_matches(".version ")
            .to_string();
        let (maj, min) = v.split_once('.').unwrap();
        let v = (maj.parse::<u32>().unwrap(), min.parse::<u32>().unwrap());
        assert!(v <= (8, 7), "{t}: {v:?}");
    }
}

#[test]
fn each_targets_version_is_the_lowest_ptxas_accepts() {
    // The PTX ISA version just below each target's minimum (there is no 6.6..6.9 or 7.9).
    for (t, below) in [
        (Target::Sm80, "6.5"),
        (Target::Sm90a, "7.8"),
        (Target::Sm100a, "8.5"),
    ] {
        let (ptx, _) = assemble_ok(&K::new("lowest").k, t);
        let v = header(&ptx)[0].to_string();
        let older = ptx.replacen(&v, &format!(".version {below}"), 1);
        match codegen_ptx::ptxas::assemble(&older, t) {
            Err(codegen_ptx::ptxas::PtxasError::Rejected { log, .. }) => {
                assert!(log.contains("does not support"), "{log}")
            }
            other => panic!("{t} at PTX {below}: expected a rejection, got {other:?}"),
        }
    }
}

#[test]
fn signature_shared_memory_and_launch_directives() {
    let mut k = K::new("signature");
    k.param("alpha", ParamKind::Scalar(Type::F32));
    k.param("count", ParamKind::Scalar(Type::S64));
    k.param("half", ParamKind::Scalar(Type::F16));
    k.param("tmap", ParamKind::TensorMap);
    k.smem("tile", 4096, 128);
    k.k.dynamic_shared = Some(DynamicShared {
        name: "dyn_smem".into(),
        align: 1024,
    });
    k.k.hints.maxntid = Some([256, 1, 1]);
    k.k.hints.cluster_dims = Some([2, 2, 1]);
    k.k.hints.minnctapersm = Some(1);
    let (a, size) = (k.reg(Type::F32), k.reg(Type::U32));
    k.op(ld(
        StateSpace::Param,
        Type::F32,
        a,
        Address::symbol("alpha", 0),
    ));
    k.op(Data::ReadSpecial {
        dst: size,
        sreg: SpecialReg::DynamicSmemSize,
    });
    k.op(st(
        StateSpace::Shared,
        Type::F32,
        a,
        Address::symbol("tile", 64),
    ));
    k.op(st(
        StateSpace::Shared,
        Type::U32,
        size,
        Address::symbol("dyn_smem", 0),
    ));
    let (ptx, rep) = assemble_ok(&k.k, Target::Sm90a);
    for line in [
        ".shared .align 128 .b8 tile[4096];",
        ".extern .shared .align 1024 .b8 dyn_smem[];",
        ".visible .entry signature(\n\t.param .u64 out,\n\t.param .f32 alpha,\n\t.param .s64 count,\n\t.param .b16 half,\n\t.param .align 64 .b8 tmap[128]\n)",
        ".maxntid 256, 1, 1\n.reqnctapercluster 2, 2, 1\n.minnctapersm 1\n{",
        "ld.param.f32 %f0, [alpha];",
        "st.shared.f32 [tile+64], %f0;",
    ] {
        assert!(ptx.contains(line), "missing `{line}`\n{ptx}");
    }
    assert_eq!(rep.shared_bytes, 4096, "{}", rep.log);
    let mut r = K::new("reqntid");
    r.k.hints.reqntid = Some([32, 4, 1]);
    let (ptx, _) = assemble_ok(&r.k, Target::Sm80);
    assert!(ptx.contains(")\n.reqntid 32, 4, 1\n{"), "{ptx}");
}

#[test]
fn malformed_ir_is_a_typed_error_not_a_panic() {
    let base = || K::new("bad");
    // A register id outside the register file.
    let mut k = base();
    let ghost = Reg {
        id: 999,
        ty: Type::U32,
    };
    k.op(Data::Mov {
        ty: Type::U32,
        dst: ghost,
        src: Operand::Imm(1),
    });
    let e = emit(&k.k, Target::Sm80).unwrap_err();
    assert!(
        matches!(e, CodegenError::Ir(IrError::BadRegister { id: 999, .. })),
        "{e}"
    );
    // A register whose type disagrees with the register file.
    let mut k = base();
    let r = k.reg(Type::U32);
    k.op(Data::Mov {
        ty: Type::F32,
        dst: Reg {
            id: r.id,
            ty: Type::F32,
        },
        src: Operand::Imm(1),
    });
    let e = emit(&k.k, Target::Sm80).unwrap_err();
    assert!(e.to_string().contains("declared as u32"), "{e}");
    // An operand of the wrong width for its slot.
    let mut k = base();
    let (d, wide) = (k.reg(Type::U32), k.reg(Type::U64));
    k.stmt(add(Type::U32, d, wide, imm(1)));
    let e = emit(&k.k, Target::Sm80).unwrap_err();
    assert!(
        matches!(&e, CodegenError::BadOperand { op, .. } if op == "add")
            && e.to_string().contains("u64"),
        "{e}"
    );
    // A float immediate in an integer slot.
    let mut k = base();
    let d = k.reg(Type::U32);
    k.stmt(add(Type::U32, d, d, Operand::ImmF(0.5)));
    assert!(matches!(
        emit(&k.k, Target::Sm80),
        Err(CodegenError::BadOperand { .. })
    ));
    // An address naming nothing.
    let mut k = base();
    let d = k.reg(Type::U32);
    k.op(ld(
        StateSpace::Shared,
        Type::U32,
        d,
        Address::symbol("nowhere", 0),
    ));
    let e = emit(&k.k, Target::Sm80).unwrap_err();
    assert!(matches!(e, CodegenError::UnknownSymbol { .. }) && e.to_string().contains("nowhere"));
    // A 32-bit register as a global address.
    let mut k = base();
    let (d, a32) = (k.reg(Type::U32), k.reg(Type::U32));
    k.op(ld(StateSpace::Global, Type::U32, d, Address::reg(a32, 0)));
    assert!(emit(&k.k, Target::Sm80)
        .unwrap_err()
        .to_string()
        .contains("64-bit"));
    // The IR's own structural check (cp.async copies 4, 8 or 16 bytes).
    let mut k = base();
    k.smem("s", 64, 16);
    let g = k.reg(Type::U64);
    k.op(CpAsync::Copy {
        cache: CpAsyncCache::Ca,
        bytes: 12,
        dst: Address::symbol("s", 0),
        src: Address::reg(g, 0),
        src_size: None,
    });
    let e = emit(&k.k, Target::Sm80).unwrap_err();
    assert!(
        matches!(e, CodegenError::Ir(_)) && e.to_string().contains("12"),
        "{e}"
    );
    // A loop over a float, a predicate parameter, a duplicate name, a bad identifier.
    let mut k = base();
    let f = k.reg(Type::F32);
    k.stmt(Stmt::For {
        var: f,
        start: Operand::Imm(0),
        end: Operand::Imm(4),
        step: Operand::Imm(1),
        body: vec![],
    });
    assert!(matches!(
        emit(&k.k, Target::Sm80),
        Err(CodegenError::Ir(IrError::BadRegister { .. }))
    ));
    let mut k = base();
    k.param("flag", ParamKind::Scalar(Type::Pred));
    assert!(matches!(
        emit(&k.k, Target::Sm80),
        Err(CodegenError::BadKernel { .. })
    ));
    let mut k = base();
    k.smem("out", 16, 16);
    assert!(emit(&k.k, Target::Sm80)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    let mut k = Kernel::new("bad name");
    k.params.push(Param {
        name: "x".into(),
        kind: ParamKind::Scalar(Type::U32),
    });
    assert!(matches!(
        emit(&k, Target::Sm80),
        Err(CodegenError::BadKernel { .. })
    ));
}

/// A straight-line kernel of about `n` ops across several families (sm_90a).
fn big_kernel(n: usize) -> Kernel {
    let mut k = K::new("big");
    k.smem("bar", 8, 8);
    k.smem("tile", 2048, 128);
    let t = k.reg(Type::U32);
    k.op(Data::ReadSpecial {
        dst: t,
        sreg: SpecialReg::Tid(Dim::X),
    });
    let x = k.reg(Type::F32);
    k.op(Convert::Cvt {
        dst_ty: Type::F32,
        src_ty: Type::U32,
        rnd: None,
        sat: false,
        dst: x,
        src: t.into(),
    });
    let mut ops = 2;
    while ops < n {
        let (a, f, p, h) = (
            k.reg(Type::U32),
            k.reg(Type::F32),
            k.reg(Type::Pred),
            k.reg(Type::F16x2),
        );
        k.stmt(add(Type::U32, a, t, imm(ops as i64)));
        k.op(Arith::Fma {
            rnd: FloatRound::Rn,
            ty: Type::F32,
            dst: f,
            a: x.into(),
            b: Operand::ImmF(1.5),
            c: x.into(),
        });
        k.stmt(setp(CmpOp::Lt, Type::U32, p, a, imm(77)));
        k.op(Convert::PackF32 {
            dst_ty: Type::F16x2,
            relu: false,
            dst: h,
            hi: f.into(),
            lo: x.into(),
        });
        k.guarded(
            st(
                StateSpace::Shared,
                Type::F16x2,
                h,
                Address::symbol("tile", (ops % 512) as i64 * 4),
            ),
            p,
            false,
        );
        k.op(Warp::Shfl {
            mode: ShflMode::Bfly,
            dst: a,
            dst_pred: None,
            a: a.into(),
            b: Operand::Imm(1),
            c: Operand::Imm(31),
            membermask: Operand::Imm(-1),
        });
        k.op(Mbarrier::ArriveExpectTx {
            state: None,
            space: StateSpace::Shared,
            scope: dsl_core::ir::Scope::Cta,
            addr: Address::symbol("bar", 0),
            tx_count: Operand::Imm(128),
        });
        k.op(Barrier::Sync {
            id: Operand::Imm(0),
            count: None,
        });
        ops += 8;
    }
    k.k
}

/// 5 ms of CPU time, the median of 20 runs, in an optimized build (4 times that in an
/// unoptimized one).
#[test]
fn generating_a_few_hundred_ops_takes_under_5_ms() {
    let limit = Duration::from_millis(if cfg!(debug_assertions) { 20 } else { 5 });
    let k = big_kernel(400);
    let mut count = 0;
    dsl_core::ir::for_each_instr(&k.body, &mut |_| count += 1);
    assert!(count >= 400, "{count} ops");
    let mut times: Vec<Duration> = (0..20)
        .map(|_| {
            let start = thread_cpu_time();
            let ptx = emit(&k, Target::Sm90a).unwrap();
            let d = thread_cpu_time() - start;
            assert!(ptx.len() > 10_000);
            d
        })
        .collect();
    times.sort();
    let median = times[times.len() / 2];
    eprintln!("emit: {count} ops, median {median:?} of CPU time over 20 runs");
    assert!(
        median < limit,
        "median {median:?} of CPU time for {count} ops"
    );
    // And what it emits is valid.
    assemble_ok(&k, Target::Sm90a);
}

/// CPU time this thread has used. Timings count it rather than wall-clock time: a busy machine
/// (CI shares 2 cores) preempts the thread, which stretches wall-clock time but not this.
fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a timespec the call may write; the clock exists on every Unix rute runs on.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime: {}", std::io::Error::last_os_error());
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
