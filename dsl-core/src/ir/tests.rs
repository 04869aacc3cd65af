//! Requirements and operand checks of every family against the PTX ISA's tables (targets and
//! versions as the ISA's "Target ISA notes" and "PTX ISA notes" list them; the bf16 rows were
//! confirmed with ptxas 13.5, which names the target or version a refused form needs).

use super::op::*;
use super::*;

fn r(id: u32, ty: Type) -> Reg {
    Reg { id, ty }
}

fn smem(off: i64) -> Address {
    Address::symbol("smem", off)
}

fn f32x(n: usize) -> Vec<Reg> {
    (0..n as u32).map(|i| r(i, Type::F32)).collect()
}

fn b32x(n: usize) -> Vec<Reg> {
    (0..n as u32).map(|i| r(100 + i, Type::B32)).collect()
}

/// (op, lowest target, allowed on sm_100a, ISA version)
fn table() -> Vec<(Op, Target, bool, PtxVersion)> {
    let v = PtxVersion::new;
    let p = r(500, Type::Pred);
    let wg = WgmmaMma {
        n: 64,
        d_ty: Type::F32,
        ab_ty: Type::BF16,
        d: f32x(32),
        a: WgmmaA::Desc(Operand::Imm(0)),
        b_desc: Operand::Imm(0),
        scale_d: ScaleD::Pred(p),
        scale_a: 1,
        scale_b: 1,
        tnsp_a: false,
        tnsp_b: true,
    };
    vec![
        (
            Arith::Bin {
                op: BinOp::Add,
                ty: Type::U32,
                dst: r(1, Type::U32),
                a: Operand::Imm(1),
                b: Operand::Imm(2),
            }
            .into(),
            Target::Sm80,
            true,
            v(6, 0),
        ),
        (
            Arith::Bin {
                op: BinOp::Add,
                ty: Type::BF16x2,
                dst: r(1, Type::BF16x2),
                a: Operand::Imm(1),
                b: Operand::Imm(2),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Convert::PackF32 {
                dst_ty: Type::F16x2,
                relu: false,
                dst: r(1, Type::F16x2),
                hi: Operand::ImmF(1.0),
                lo: Operand::ImmF(2.0),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (
            Convert::Cvt {
                dst_ty: Type::F32,
                src_ty: Type::BF16,
                rnd: None,
                sat: false,
                dst: r(1, Type::F32),
                src: Operand::Reg(r(2, Type::BF16)),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 1),
        ),
        (
            Convert::Cvt {
                dst_ty: Type::F64,
                src_ty: Type::BF16,
                rnd: None,
                sat: false,
                dst: r(1, Type::F64),
                src: Operand::Reg(r(2, Type::BF16)),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Convert::Cvt {
                dst_ty: Type::BF16,
                src_ty: Type::F64,
                rnd: Some(CvtRound::Rn),
                sat: false,
                dst: r(1, Type::BF16),
                src: Operand::Reg(r(2, Type::F64)),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Convert::Cvt {
                dst_ty: Type::BF16,
                src_ty: Type::F32,
                rnd: Some(CvtRound::Rn),
                sat: false,
                dst: r(1, Type::BF16),
                src: Operand::Reg(r(2, Type::F32)),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (
            Arith::Approx {
                op: ApproxOp::Ex2,
                ty: Type::BF16,
                subnormals: Subnormals::Kept,
                dst: r(1, Type::BF16),
                a: Operand::Reg(r(2, Type::BF16)),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Arith::Fma {
                rnd: FloatRound::Rn,
                ty: Type::BF16x2,
                dst: r(1, Type::BF16x2),
                a: Operand::Reg(r(2, Type::BF16x2)),
                b: Operand::Reg(r(2, Type::BF16x2)),
                c: Operand::Reg(r(2, Type::BF16x2)),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (
            Compare::Setp {
                cmp: CmpOp::Lt,
                ty: Type::BF16,
                dst: r(1, Type::Pred),
                a: Operand::Reg(r(2, Type::BF16)),
                b: Operand::Reg(r(2, Type::BF16)),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Warp::Shfl {
                mode: ShflMode::Bfly,
                dst: r(1, Type::F32),
                dst_pred: None,
                a: Operand::Reg(r(2, Type::F32)),
                b: Operand::Imm(16),
                c: Operand::Imm(31),
                membermask: Operand::Imm(-1),
            }
            .into(),
            Target::Sm80,
            true,
            v(6, 0),
        ),
        (
            Warp::Elect {
                dst_lane: None,
                dst_pred: p,
                membermask: Operand::Imm(-1),
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            CpAsync::Copy {
                cache: CpAsyncCache::Cg,
                bytes: 16,
                dst: smem(0),
                src: Address::reg(r(3, Type::U64), 0),
                src_size: Some(Operand::Imm(0)),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (
            Matrix::Ldmatrix {
                num: MatrixCount::X4,
                trans: true,
                dsts: b32x(4),
                addr: smem(0),
            }
            .into(),
            Target::Sm80,
            true,
            v(6, 5),
        ),
        (
            Matrix::Stmatrix {
                num: MatrixCount::X2,
                trans: false,
                addr: smem(0),
                srcs: b32x(2).into_iter().map(Operand::Reg).collect(),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            MmaSync {
                ab_ty: Type::BF16,
                acc_ty: Type::F32,
                d: f32x(4),
                a: b32x(4),
                b: b32x(2),
                c: vec![Operand::ImmF(0.0); 4],
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (Wgmma::MmaAsync(wg).into(), Target::Sm90a, false, v(8, 0)),
        (Wgmma::Fence.into(), Target::Sm90a, false, v(8, 0)),
        (
            Setmaxnreg {
                inc: true,
                count: 232,
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            Mbarrier::Init {
                addr: smem(0),
                count: Operand::Imm(1),
            }
            .into(),
            Target::Sm80,
            true,
            v(7, 0),
        ),
        (
            Mbarrier::Arrive {
                state: None,
                space: StateSpace::SharedCluster,
                scope: Scope::Cluster,
                addr: Address::reg(r(4, Type::U32), 0),
                count: Some(Operand::Imm(1)),
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            Mbarrier::TryWaitParity {
                done: p,
                scope: Scope::Cta,
                addr: smem(0),
                parity: Operand::Imm(0),
                suspend_hint: None,
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Bulk::TensorLoad {
                dst: smem(0),
                tensor_map: TensorMapRef::Param("tmap".into()),
                coords: vec![Operand::Imm(0); 2],
                mbar: smem(8),
                multicast: Some(Operand::Imm(3)),
                cta_group: None,
                cache_policy: None,
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            Bulk::WaitGroup { n: 0, read: true }.into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            Fence::ProxyAsync {
                space: AsyncProxySpace::SharedCta,
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            Fence::Fence {
                sem: FenceSem::AcqRel,
                scope: Scope::Gpu,
            }
            .into(),
            Target::Sm80,
            true,
            v(6, 0),
        ),
        (
            Barrier::Sync {
                id: Operand::Imm(1),
                count: Some(Operand::Imm(128)),
            }
            .into(),
            Target::Sm80,
            true,
            v(6, 0),
        ),
        (
            Barrier::ClusterWait {
                acquire: true,
                aligned: true,
            }
            .into(),
            Target::Sm90a,
            true,
            v(8, 0),
        ),
        (
            AddressOp::Mapa {
                space: StateSpace::SharedCluster,
                dst: r(5, Type::U32),
                src: Operand::Reg(r(4, Type::U32)),
                cta_rank: Operand::Imm(1),
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Data::ReadSpecial {
                dst: r(6, Type::U32),
                sreg: SpecialReg::ClusterCtarank,
            }
            .into(),
            Target::Sm90a,
            true,
            v(7, 8),
        ),
        (
            Data::ReadSpecial {
                dst: r(6, Type::U64),
                sreg: SpecialReg::GlobalTimer,
            }
            .into(),
            Target::Sm80,
            true,
            v(3, 1),
        ),
        (
            Tcgen05::Mma {
                cta_group: CtaGroup::Two,
                kind: MmaKind::F16,
                d_tmem: Operand::Imm(0),
                a: Tcgen05A::Desc(Operand::Imm(0)),
                b_desc: Operand::Imm(0),
                idesc: Operand::Imm(0),
                enable_input_d: Operand::Reg(p),
            }
            .into(),
            Target::Sm100a,
            true,
            v(8, 6),
        ),
        (
            Tcgen05::Ld {
                shape: TmemShape::S32x32b,
                num: 8,
                pack16: false,
                dsts: b32x(8),
                taddr: Operand::Imm(0),
            }
            .into(),
            Target::Sm100a,
            true,
            v(8, 6),
        ),
    ]
}

#[test]
fn every_family_knows_its_targets() {
    for (op, min, on_100a, version) in table() {
        let name = op.mnemonic();
        assert_eq!(op.check(), Ok(()), "{name}");
        assert_eq!(op.min_target(), Some(min), "{name}");
        assert_eq!(op.requires().allows(Target::Sm100a), on_100a, "{name}");
        assert_eq!(op.ptx_version(), version, "{name}");
        for t in Target::ALL {
            assert_eq!(
                op.requires().allows(t),
                t >= min && (t != Target::Sm100a || on_100a),
                "{name} on {t}"
            );
        }
    }
}

#[test]
fn malformed_ops_are_refused() {
    let bad: Vec<Op> = vec![
        // tanh.approx has no .ftz form, and f16 none of any function.
        Arith::Approx {
            op: ApproxOp::Tanh,
            ty: Type::F32,
            subnormals: Subnormals::FlushedToZero,
            dst: r(1, Type::F32),
            a: Operand::Reg(r(2, Type::F32)),
        }
        .into(),
        Arith::Approx {
            op: ApproxOp::Ex2,
            ty: Type::F16,
            subnormals: Subnormals::FlushedToZero,
            dst: r(1, Type::F16),
            a: Operand::Reg(r(2, Type::F16)),
        }
        .into(),
        CpAsync::Copy {
            cache: CpAsyncCache::Cg,
            bytes: 8,
            dst: smem(0),
            src: smem(0),
            src_size: None,
        }
        .into(),
        CpAsync::Copy {
            cache: CpAsyncCache::Ca,
            bytes: 4,
            dst: smem(0),
            src: smem(0),
            src_size: Some(Operand::Imm(5)),
        }
        .into(),
        Matrix::Ldmatrix {
            num: MatrixCount::X4,
            trans: false,
            dsts: b32x(2),
            addr: smem(0),
        }
        .into(),
        MmaSync {
            ab_ty: Type::BF16,
            acc_ty: Type::F16,
            d: b32x(2),
            a: b32x(4),
            b: b32x(2),
            c: vec![Operand::Imm(0); 2],
        }
        .into(),
        Setmaxnreg {
            inc: false,
            count: 20,
        }
        .into(),
        Setmaxnreg {
            inc: false,
            count: 100,
        }
        .into(),
        Memory::Ld {
            space: StateSpace::Global,
            ty: Type::F32,
            dsts: f32x(4).into_iter().chain(f32x(1)).collect(),
            addr: smem(0),
            cache: None,
            nc: false,
            order: None,
        }
        .into(),
        Memory::Ld {
            space: StateSpace::Global,
            ty: Type::B64,
            dsts: (0..4).map(|i| r(i, Type::B64)).collect(),
            addr: smem(0),
            cache: None,
            nc: false,
            order: None,
        }
        .into(),
        Memory::St {
            space: StateSpace::Param,
            ty: Type::U32,
            srcs: vec![Operand::Imm(0)],
            addr: smem(0),
            cache: None,
            order: None,
        }
        .into(),
        Barrier::Sync {
            id: Operand::Imm(16),
            count: None,
        }
        .into(),
        Barrier::Arrive {
            id: Operand::Imm(1),
            count: Operand::Imm(100),
        }
        .into(),
        Bulk::TensorStore {
            tensor_map: TensorMapRef::Param("t".into()),
            coords: vec![Operand::Imm(0); 6],
            src: smem(0),
            cache_policy: None,
        }
        .into(),
        Tcgen05::Alloc {
            cta_group: CtaGroup::One,
            dst: smem(0),
            ncols: Operand::Imm(48),
        }
        .into(),
        Tcgen05::Ld {
            shape: TmemShape::S32x32b,
            num: 3,
            pack16: false,
            dsts: b32x(3),
            taddr: Operand::Imm(0),
        }
        .into(),
        Mbarrier::Arrive {
            state: Some(r(9, Type::B64)),
            space: StateSpace::SharedCluster,
            scope: Scope::Cluster,
            addr: smem(0),
            count: None,
        }
        .into(),
        Compare::Setp {
            cmp: CmpOp::Ltu,
            ty: Type::S32,
            dst: r(1, Type::Pred),
            a: Operand::Imm(0),
            b: Operand::Imm(0),
        }
        .into(),
        Arith::Bin {
            op: BinOp::Shl,
            ty: Type::F32,
            dst: r(1, Type::F32),
            a: Operand::Imm(0),
            b: Operand::Imm(0),
        }
        .into(),
        Atomic::Red {
            space: StateSpace::Global,
            op: AtomOp::Cas,
            ty: Type::B32,
            addr: smem(0),
            a: Operand::Imm(0),
            order: None,
        }
        .into(),
        Fence::Membar {
            scope: Scope::Cluster,
        }
        .into(),
    ];
    for op in bad {
        assert!(op.check().is_err(), "{op:?} passed its check");
    }
}

#[test]
fn wgmma_shapes() {
    for n in [8u32, 16, 64, 128, 200, 256] {
        for (d_ty, regs) in [(Type::F32, n / 2), (Type::F16, n / 4)] {
            let op = Wgmma::MmaAsync(WgmmaMma {
                n,
                d_ty,
                ab_ty: Type::F16,
                d: b32x(regs as usize),
                a: WgmmaA::Regs(b32x(4)),
                b_desc: Operand::Imm(0),
                scale_d: ScaleD::Const(true),
                scale_a: 1,
                scale_b: -1,
                tnsp_a: false,
                tnsp_b: false,
            });
            assert_eq!(op.check(), Ok(()), "n={n} {d_ty}");
        }
    }
    let bad = Wgmma::MmaAsync(WgmmaMma {
        n: 12,
        d_ty: Type::F32,
        ab_ty: Type::F16,
        d: b32x(6),
        a: WgmmaA::Desc(Operand::Imm(0)),
        b_desc: Operand::Imm(0),
        scale_d: ScaleD::Const(false),
        scale_a: 1,
        scale_b: 1,
        tnsp_a: false,
        tnsp_b: false,
    });
    assert!(bad.check().is_err());
}

#[test]
fn kernel_check_finds_bad_registers() {
    let mut k = Kernel::new("k");
    let p = k.new_reg(Type::Pred);
    let x = k.new_reg(Type::U32);
    let ok = Arith::Bin {
        op: BinOp::Add,
        ty: Type::U32,
        dst: x,
        a: Operand::Reg(x),
        b: Operand::Imm(1),
    };
    k.body.push(Stmt::If {
        cond: p,
        then: vec![Stmt::op(ok.clone())],
        else_: vec![],
    });
    assert!(k.check().is_ok());
    // undeclared register
    let ghost = r(7, Type::U32);
    k.body.push(Stmt::op(Data::Mov {
        ty: Type::U32,
        dst: ghost,
        src: Operand::Imm(0),
    }));
    assert!(matches!(k.check(), Err(IrError::BadRegister { id: 7, .. })));
    k.body.pop();
    // a register named with another type
    k.body.push(Stmt::op(Data::Mov {
        ty: Type::S32,
        dst: r(x.id, Type::S32),
        src: Operand::Imm(0),
    }));
    assert!(matches!(k.check(), Err(IrError::BadRegister { .. })));
    k.body.pop();
    // a non-predicate condition and a float loop variable
    k.body.push(Stmt::If {
        cond: x,
        then: vec![],
        else_: vec![],
    });
    assert!(k.check().is_err());
    k.body.pop();
    let f = k.new_reg(Type::F32);
    k.body.push(Stmt::For {
        var: f,
        start: Operand::Imm(0),
        end: Operand::Imm(1),
        step: Operand::Imm(1),
        body: vec![],
    });
    assert!(k.check().is_err());
    k.body.pop();
    assert!(k.check().is_ok());
}

#[test]
fn kernel_requirements_intersect() {
    let mut k = Kernel::new("k");
    k.body.push(Stmt::op(CpAsync::CommitGroup));
    assert_eq!(k.min_target(), Some(Target::Sm80));
    assert_eq!(k.ptx_version(Target::Sm80), PtxVersion::new(7, 0));
    k.body.push(Stmt::If {
        cond: r(0, Type::Pred),
        then: vec![Stmt::op(Wgmma::Fence)],
        else_: vec![],
    });
    assert_eq!(k.requires(), Requirement::only(Target::Sm90a));
    assert_eq!(k.ptx_version(Target::Sm90a), PtxVersion::new(8, 0));
    k.body.push(Stmt::op(Tcgen05::WaitLd));
    assert!(k.requires().is_empty());
    assert_eq!(k.ptx_version(Target::Sm100a), PtxVersion::new(8, 6));
    let mut c = Kernel::new("c");
    c.hints.cluster_dims = Some([2, 1, 1]);
    assert_eq!(c.min_target(), Some(Target::Sm90a));
}
