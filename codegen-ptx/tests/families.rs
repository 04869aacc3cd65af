//! One test per instruction family: a small kernel built from IR data assembles with ptxas for
//! the family's lowest target (no spills) and is refused, with a sentence naming the op and both
//! targets, for every lower target. Needs `RUTE_PTXAS`. The arithmetic, conversion, comparison,
//! data and warp families; memory, barriers, fences and `mma.sync` are in `families_memory.rs`,
//! the asynchronous and tensor-core ones (wgmma, mbarrier, TMA, tcgen05) in `families_async.rs`.

mod common;

use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{Dim, Reg, SpecialReg, Target, Type};
use Target::{Sm100a, Sm80, Sm90a};

/// `src` (of type `src_ty`) converted into a fresh `dst_ty` register.
fn cvt(k: &mut K, dst_ty: Type, src_ty: Type, src: Reg, rnd: Option<CvtRound>, sat: bool) -> Reg {
    let d = k.reg(dst_ty);
    k.op(Convert::Cvt {
        dst_ty,
        src_ty,
        rnd,
        sat,
        dst: d,
        src: src.into(),
    });
    d
}

#[test]
fn arith_integer_and_float() {
    let mut k = K::new("arith");
    let t = tid(&mut k);
    let mut outs = Vec::new();
    for ty in [
        Type::U32,
        Type::S32,
        Type::U64,
        Type::S64,
        Type::B32,
        Type::U16,
    ] {
        let a = k.reg(ty);
        if ty.bits() == 32 {
            k.op(Data::Mov {
                ty,
                dst: a,
                src: t.into(),
            });
        } else {
            k.op(Convert::Cvt {
                dst_ty: ty,
                src_ty: Type::U32,
                rnd: None,
                sat: false,
                dst: a,
                src: t.into(),
            });
        }
        for op in BinOp::ALL {
            let d = k.reg(ty);
            let b = if matches!(op, BinOp::Shl | BinOp::Shr) {
                imm(3)
            } else {
                imm(7)
            };
            k.op(bin(op, ty, d, a, b));
            outs.push(d);
        }
    }
    // mul.hi, mul.wide, mad.lo, mad.wide, bfe, bfi, unary ops.
    let (hi, wide, mad, madw) = (
        k.reg(Type::U32),
        k.reg(Type::U64),
        k.reg(Type::S32),
        k.reg(Type::S64),
    );
    let s = k.reg(Type::S32);
    k.op(Data::Mov {
        ty: Type::S32,
        dst: s,
        src: t.into(),
    });
    k.op(Arith::MulPart {
        mode: MulMode::Hi,
        ty: Type::U32,
        dst: hi,
        a: t.into(),
        b: imm(-1),
    });
    k.op(Arith::MulPart {
        mode: MulMode::Wide,
        ty: Type::U32,
        dst: wide,
        a: t.into(),
        b: imm(12),
    });
    k.op(Arith::Mad {
        mode: MulMode::Lo,
        ty: Type::S32,
        dst: mad,
        a: s.into(),
        b: imm(-3),
        c: s.into(),
    });
    k.op(Arith::Mad {
        mode: MulMode::Wide,
        ty: Type::S32,
        dst: madw,
        a: s.into(),
        b: imm(5),
        c: imm(-9),
    });
    outs.extend([hi, wide, mad, madw]);
    for op in [UnOp::Neg, UnOp::Abs] {
        let d = k.reg(Type::S32);
        k.op(Arith::Unary {
            op,
            ty: Type::S32,
            dst: d,
            a: s.into(),
        });
        outs.push(d);
    }
    for op in [UnOp::Not, UnOp::Popc, UnOp::Clz, UnOp::Brev] {
        // popc/clz count into a u32; not/brev keep the input's width.
        let d = if matches!(op, UnOp::Popc | UnOp::Clz) {
            k.reg(Type::U32)
        } else {
            k.reg(Type::U64)
        };
        k.op(Arith::Unary {
            op,
            ty: Type::U64,
            dst: d,
            a: wide.into(),
        });
        outs.push(d);
    }
    let (e, f) = (k.reg(Type::U32), k.reg(Type::B32));
    k.op(Arith::Bfe {
        ty: Type::U32,
        dst: e,
        a: t.into(),
        pos: imm(4),
        len: imm(8),
    });
    k.op(Arith::Bfi {
        ty: Type::B32,
        dst: f,
        f: t.into(),
        b: imm(0x1234),
        pos: imm(8),
        len: imm(4),
    });
    outs.extend([e, f]);
    // Floats: f32, f64, f16, f16x2, bf16 (fma and min/max exist on sm_80).
    let x = ld_global(&mut k, Type::F32);
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Min,
        BinOp::Max,
    ] {
        let d = k.reg(Type::F32);
        k.op(bin(op, Type::F32, d, x, immf(1.5)));
        outs.push(d);
    }
    let xd = cvt(&mut k, Type::F64, Type::F32, x, None, false);
    let dd = k.reg(Type::F64);
    k.op(bin(BinOp::Div, Type::F64, dd, xd, immf(3.0)));
    outs.push(dd);
    for op in ApproxOp::ALL {
        let d = k.reg(Type::F32);
        k.op(Arith::Approx {
            op,
            ty: Type::F32,
            subnormals: Subnormals::Kept,
            dst: d,
            a: x.into(),
        });
        outs.push(d);
    }
    // Every f32 form with `.ftz` (tanh.approx has none).
    for op in ApproxOp::ALL.into_iter().filter(|&op| op != ApproxOp::Tanh) {
        let d = k.reg(Type::F32);
        k.op(Arith::Approx {
            op,
            ty: Type::F32,
            subnormals: Subnormals::FlushedToZero,
            dst: d,
            a: x.into(),
        });
        outs.push(d);
    }
    for (op, rnd) in [
        (RoundedOp::Sqrt, FloatRound::Rn),
        (RoundedOp::Rcp, FloatRound::Rn),
    ] {
        for (ty, src) in [(Type::F32, x), (Type::F64, xd)] {
            let d = k.reg(ty);
            k.op(Arith::Rounded {
                op,
                rnd,
                ty,
                dst: d,
                a: src.into(),
            });
            outs.push(d);
        }
    }
    for op in [ApproxOp::Rcp, ApproxOp::Sqrt, ApproxOp::Rsqrt] {
        let d = k.reg(Type::F64);
        k.op(Arith::Approx {
            op,
            ty: Type::F64,
            subnormals: Subnormals::Kept,
            dst: d,
            a: xd.into(),
        });
        outs.push(d);
    }
    let h = cvt(&mut k, Type::F16, Type::F32, x, None, false);
    let (h2, hf, he, ht) = (
        k.reg(Type::F16),
        k.reg(Type::F16),
        k.reg(Type::F16),
        k.reg(Type::F16),
    );
    k.op(bin(BinOp::Add, Type::F16, h2, h, immf(1.0)));
    k.op(Arith::Fma {
        rnd: FloatRound::Rn,
        ty: Type::F16,
        dst: hf,
        a: h.into(),
        b: immf(2.0),
        c: h2.into(),
    });
    k.op(Arith::Approx {
        op: ApproxOp::Ex2,
        ty: Type::F16,
        subnormals: Subnormals::Kept,
        dst: he,
        a: hf.into(),
    });
    k.op(Arith::Approx {
        op: ApproxOp::Tanh,
        ty: Type::F16,
        subnormals: Subnormals::Kept,
        dst: ht,
        a: he.into(),
    });
    let p = k.reg(Type::F16x2);
    k.op(Convert::PackF32 {
        dst_ty: Type::F16x2,
        relu: false,
        dst: p,
        hi: x.into(),
        lo: immf(0.25),
    });
    let (pm, pf) = (k.reg(Type::F16x2), k.reg(Type::F16x2));
    k.op(bin(BinOp::Mul, Type::F16x2, pm, p, immf(-1.0)));
    k.op(Arith::Fma {
        rnd: FloatRound::Rn,
        ty: Type::F16x2,
        dst: pf,
        a: pm.into(),
        b: p.into(),
        c: immf(0.5),
    });
    let b = k.reg(Type::BF16x2);
    k.op(Convert::PackF32 {
        dst_ty: Type::BF16x2,
        relu: true,
        dst: b,
        hi: x.into(),
        lo: x.into(),
    });
    let (bf, bm) = (k.reg(Type::BF16x2), k.reg(Type::BF16x2));
    k.op(Arith::Fma {
        rnd: FloatRound::Rn,
        ty: Type::BF16x2,
        dst: bf,
        a: b.into(),
        b: b.into(),
        c: immf(1.0),
    });
    k.op(bin(BinOp::Max, Type::BF16x2, bm, bf, b));
    let f32fma = k.reg(Type::F32);
    k.op(Arith::Fma {
        rnd: FloatRound::Rz,
        ty: Type::F32,
        dst: f32fma,
        a: x.into(),
        b: x.into(),
        c: immf(-2.0),
    });
    outs.extend([ht, pf, bm, f32fma]);
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "add");
}

#[test]
fn arith_bf16_needs_sm90() {
    let mut k = K::new("arith_bf16");
    let x = ld_global(&mut k, Type::BF16x2);
    let (a, m, n) = (k.reg(Type::BF16x2), k.reg(Type::BF16x2), k.reg(Type::BF16));
    k.op(bin(BinOp::Add, Type::BF16x2, a, x, immf(1.0)));
    k.op(bin(BinOp::Mul, Type::BF16x2, m, a, x));
    let (h, h_hi) = (k.reg(Type::BF16), k.reg(Type::BF16));
    k.op(Data::Unpack {
        dsts: vec![h, h_hi],
        src: m,
    });
    k.op(Arith::Approx {
        op: ApproxOp::Ex2,
        ty: Type::BF16,
        subnormals: Subnormals::Kept,
        dst: n,
        a: h.into(),
    });
    k.sink_all(&[m, n]);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "add");
}

#[test]
fn convert() {
    let mut k = K::new("convert");
    let x = ld_global(&mut k, Type::F32);
    let t = tid(&mut k);
    let mut outs = Vec::new();
    let h = cvt(&mut k, Type::F16, Type::F32, x, None, false);
    let w = cvt(&mut k, Type::U64, Type::U32, t, None, false);
    // (to, from, source, rounding, saturate)
    for (to, from, src, rnd, sat) in [
        (Type::F32, Type::F16, h, None, false),
        (Type::BF16, Type::F32, x, Some(CvtRound::Rz), false),
        (Type::S32, Type::F32, x, None, true),
        (Type::U32, Type::F32, x, Some(CvtRound::Rni), false),
        (Type::F32, Type::S32, t, None, false),
        (Type::F64, Type::U32, t, Some(CvtRound::Rz), false),
        (Type::S64, Type::S32, t, None, false),
        (Type::U16, Type::U32, t, None, true),
        (Type::U32, Type::U64, w, None, false),
    ] {
        outs.push(cvt(&mut k, to, from, src, rnd, sat));
    }
    // 8-bit conversions go through 16/32-bit registers.
    let b8 = k.reg(Type::U32);
    k.op(Convert::Cvt {
        dst_ty: Type::S8,
        src_ty: Type::U32,
        rnd: None,
        sat: true,
        dst: b8,
        src: t.into(),
    });
    outs.push(b8);
    for (ty, relu) in [(Type::F16x2, false), (Type::BF16x2, true)] {
        let p = k.reg(ty);
        k.op(Convert::PackF32 {
            dst_ty: ty,
            relu,
            dst: p,
            hi: x.into(),
            lo: immf(-3.0),
        });
        outs.push(p);
    }
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "cvt");
}

#[test]
fn convert_from_bf16_needs_sm90() {
    // sm_80 widens bf16 to f32 only; bf16 to integers (or f16, f64) needs sm_90.
    let mut k = K::new("convert_bf16");
    let x = ld_global(&mut k, Type::BF16);
    let w = cvt(&mut k, Type::F32, Type::BF16, x, None, false);
    assert_eq!(k.k.min_target(), Some(Sm80));
    assert_eq!(k.k.ptx_version(Sm80), dsl_core::ir::PtxVersion::new(7, 1));
    let d = cvt(&mut k, Type::S32, Type::BF16, x, None, false);
    k.sink_all(&[w, d]);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "cvt");
}

#[test]
fn compare_and_select() {
    let mut k = K::new("compare");
    let t = tid(&mut k);
    let x = ld_global(&mut k, Type::F32);
    let h = ld_global(&mut k, Type::F16);
    let mut outs = Vec::new();
    let int_cmps = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
    for ty in [Type::U32, Type::S32, Type::B32] {
        for cmp in int_cmps {
            outs.push(setp(&mut k, cmp, ty, t, imm(5)));
        }
    }
    let float_cmps = [
        CmpOp::Lt,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];
    for cmp in float_cmps {
        outs.push(setp(&mut k, cmp, Type::F32, x, immf(0.5)));
    }
    let ph = setp(&mut k, CmpOp::Gt, Type::F16, h, immf(1.0));
    let (s1, s2, s3) = (k.reg(Type::F32), k.reg(Type::U32), k.reg(Type::F16));
    k.op(Compare::Selp {
        ty: Type::F32,
        dst: s1,
        a: x.into(),
        b: immf(2.0),
        cond: ph.into(),
    });
    k.op(Compare::Selp {
        ty: Type::U32,
        dst: s2,
        a: imm(1),
        b: t.into(),
        cond: outs[0].into(),
    });
    k.op(Compare::Selp {
        ty: Type::F16,
        dst: s3,
        a: h.into(),
        b: immf(0.0),
        cond: ph.into(),
    });
    outs.extend([s1, s2, s3]);
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "setp");
}

#[test]
fn compare_bf16_needs_sm90() {
    let mut k = K::new("compare_bf16");
    let h = ld_global(&mut k, Type::BF16);
    let p = setp(&mut k, CmpOp::Lt, Type::BF16, h, immf(1.0));
    k.sink(p);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "setp");
}

#[test]
fn data_moves_and_special_registers() {
    let mut k = K::new("data");
    k.smem("tile", 256, 16);
    let mut outs = Vec::new();
    use SpecialReg::*;
    for s in [
        Tid(Dim::X),
        Tid(Dim::Y),
        Tid(Dim::Z),
        Ntid(Dim::X),
        Ctaid(Dim::X),
        Ctaid(Dim::Z),
        Nctaid(Dim::Y),
        LaneId,
        WarpId,
        Clock,
        Clock64,
        GlobalTimer,
        DynamicSmemSize,
        TotalSmemSize,
        SmId,
    ] {
        let d = k.reg(s.ty());
        k.op(Data::ReadSpecial { dst: d, sreg: s });
        outs.push(d);
    }
    let (a32, a64) = (k.reg(Type::U32), k.reg(Type::U64));
    k.op(Data::AddressOf {
        dst: a32,
        symbol: "tile".into(),
    });
    k.op(Data::AddressOf {
        dst: a64,
        symbol: "out".into(),
    });
    let (m1, m2, m3) = (k.reg(Type::F32), k.reg(Type::F16), k.reg(Type::S64));
    k.op(Data::Mov {
        ty: Type::F32,
        dst: m1,
        src: immf(3.5),
    });
    k.op(Data::Mov {
        ty: Type::F16,
        dst: m2,
        src: immf(-0.5),
    });
    k.op(Data::Mov {
        ty: Type::S64,
        dst: m3,
        src: imm(-7),
    });
    let (p32, p64) = (k.reg(Type::B32), k.reg(Type::B64));
    k.op(Data::Pack {
        dst: p32,
        parts: vec![m2.into(), imm(0x3C00)],
    });
    k.op(Data::Pack {
        dst: p64,
        parts: vec![a32.into(), p32.into()],
    });
    let (u0, u1) = (k.reg(Type::F16), k.reg(Type::B16));
    k.op(Data::Unpack {
        dsts: vec![u0, u1],
        src: p32,
    });
    outs.extend([a32, a64, m1, m3, p64, u0, u1]);
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "mov");
}

#[test]
fn cluster_special_registers_need_sm90() {
    let mut k = K::new("cluster_sregs");
    let mut outs = Vec::new();
    use SpecialReg::*;
    for s in [
        ClusterCtarank,
        ClusterNctarank,
        ClusterId(Dim::X),
        NclusterId(Dim::Y),
        ClusterCtaid(Dim::X),
        ClusterNctaid(Dim::Z),
    ] {
        let d = k.reg(Type::U32);
        k.op(Data::ReadSpecial { dst: d, sreg: s });
        outs.push(d);
    }
    k.sink_all(&outs);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "%cluster_ctarank");
}

#[test]
fn warp_collectives() {
    let mut k = K::new("warp");
    let t = tid(&mut k);
    let x = ld_global(&mut k, Type::F32);
    let mut outs = Vec::new();
    for mode in [ShflMode::Up, ShflMode::Down, ShflMode::Bfly, ShflMode::Idx] {
        let (d, p) = (k.reg(Type::F32), k.reg(Type::Pred));
        k.op(Warp::Shfl {
            mode,
            dst: d,
            dst_pred: Some(p),
            a: x.into(),
            b: imm(1),
            c: imm(if mode == ShflMode::Up { 0 } else { 31 }),
            membermask: ALL_MASK,
        });
        outs.extend([d, p]);
    }
    let d = k.reg(Type::U32);
    k.op(Warp::Shfl {
        mode: ShflMode::Idx,
        dst: d,
        dst_pred: None,
        a: t.into(),
        b: t.into(),
        c: imm(31),
        membermask: ALL_MASK,
    });
    outs.push(d);
    let p = setp(&mut k, CmpOp::Lt, Type::U32, t, imm(7));
    for (mode, ty, negate) in [
        (VoteMode::All, Type::Pred, false),
        (VoteMode::Any, Type::Pred, true),
        (VoteMode::Uni, Type::Pred, false),
        (VoteMode::Ballot, Type::U32, false),
    ] {
        let d = k.reg(ty);
        k.op(Warp::Vote {
            mode,
            dst: d,
            pred: p.into(),
            negate,
            membermask: ALL_MASK,
        });
        outs.push(d);
    }
    for (op, ty) in [
        (ReduxOp::Add, Type::U32),
        (ReduxOp::Min, Type::S32),
        (ReduxOp::Max, Type::U32),
        (ReduxOp::And, Type::B32),
        (ReduxOp::Or, Type::B32),
        (ReduxOp::Xor, Type::B32),
    ] {
        let d = k.reg(ty);
        k.op(Warp::Redux {
            op,
            ty,
            dst: d,
            src: t.into(),
            membermask: ALL_MASK,
        });
        outs.push(d);
    }
    let m = k.reg(Type::U32);
    k.op(Warp::Activemask { dst: m });
    outs.push(m);
    k.op(Warp::Sync {
        membermask: ALL_MASK,
    });
    k.op(Warp::Sync {
        membermask: m.into(),
    });
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "shfl.sync");
    let ptx = codegen_ptx::emit(&k.k, Sm80).unwrap();
    assert_eq!(ptx.matches("bar.warp.sync ").count(), 2, "{ptx}");
}

#[test]
fn elect_sync_needs_sm90() {
    let mut k = K::new("elect");
    let (lane, p, p2) = (k.reg(Type::U32), k.reg(Type::Pred), k.reg(Type::Pred));
    k.op(Warp::Elect {
        dst_lane: Some(lane),
        dst_pred: p,
        membermask: ALL_MASK,
    });
    k.op(Warp::Elect {
        dst_lane: None,
        dst_pred: p2,
        membermask: ALL_MASK,
    });
    k.sink_all(&[lane, p, p2]);
    family(&k.k, Sm90a, &[Sm100a], &[Sm80], "elect.sync");
}
