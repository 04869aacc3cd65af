//! One test per instruction family: a small kernel built from IR data assembles with ptxas for
//! the family's lowest target (no spills) and is refused, with a sentence naming the op and both
//! targets, for every lower target. Needs `RUTE_PTXAS`.

mod common;

use common::*;
use dsl_core::ir::op::*;
use dsl_core::ir::{
    Address, Dim, MemOrder, Operand, ParamKind, Reg, Scope, SpecialReg, StateSpace, Target, Type,
};
use Target::{Sm100a, Sm80, Sm90a};

fn bin(op: BinOp, ty: Type, dst: Reg, a: impl Into<Operand>, b: impl Into<Operand>) -> Arith {
    Arith::Bin {
        op,
        ty,
        dst,
        a: a.into(),
        b: b.into(),
    }
}

/// A fresh predicate set to `a cmp b`, compared as `ty`.
fn setp(k: &mut K, cmp: CmpOp, ty: Type, a: Reg, b: Operand) -> Reg {
    let p = k.reg(Type::Pred);
    k.op(Compare::Setp {
        cmp,
        ty,
        dst: p,
        a: a.into(),
        b,
    });
    p
}

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

fn tid(k: &mut K) -> Reg {
    let t = k.reg(Type::U32);
    k.op(Data::ReadSpecial {
        dst: t,
        sreg: SpecialReg::Tid(Dim::X),
    });
    t
}

/// A value of type `ty` loaded through a generic address, unknown to ptxas.
fn ld_global(k: &mut K, ty: Type) -> Reg {
    let r = k.reg(ty);
    k.op(ld(
        StateSpace::Generic,
        ty,
        r,
        Address::reg(k.out_generic, 64),
    ));
    r
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
        dst: he,
        a: hf.into(),
    });
    k.op(Arith::Approx {
        op: ApproxOp::Tanh,
        ty: Type::F16,
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
    k.sink_all(&outs);
    family(&k.k, Sm80, &[Sm90a, Sm100a], &[], "shfl.sync");
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
