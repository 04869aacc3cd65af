//! Register-to-register families: arithmetic, conversions, comparisons, moves, warp collectives.

use super::{unsigned_of, Res, Writer};
use crate::literal::{literal, Literal};
use dsl_core::ir::op::{
    default_round, ApproxOp, Arith, BinOp, CmpOp, Compare, Convert, Data, MulMode, ReduxOp,
    Subnormals, UnOp, VoteMode, Warp,
};
use dsl_core::ir::{Operand, SpecialReg, Type};

/// The PTX name of a special register (`%tid.x`, `%cluster_ctarank`).
pub(crate) fn special_name(s: SpecialReg) -> String {
    use SpecialReg::*;
    match s {
        Tid(d) => format!("%tid.{}", d.name()),
        Ntid(d) => format!("%ntid.{}", d.name()),
        Ctaid(d) => format!("%ctaid.{}", d.name()),
        Nctaid(d) => format!("%nctaid.{}", d.name()),
        LaneId => "%laneid".into(),
        WarpId => "%warpid".into(),
        ClusterId(d) => format!("%clusterid.{}", d.name()),
        NclusterId(d) => format!("%nclusterid.{}", d.name()),
        ClusterCtaid(d) => format!("%cluster_ctaid.{}", d.name()),
        ClusterNctaid(d) => format!("%cluster_nctaid.{}", d.name()),
        ClusterCtarank => "%cluster_ctarank".into(),
        ClusterNctarank => "%cluster_nctarank".into(),
        Clock => "%clock".into(),
        Clock64 => "%clock64".into(),
        GlobalTimer => "%globaltimer".into(),
        DynamicSmemSize => "%dynamic_smem_size".into(),
        TotalSmemSize => "%total_smem_size".into(),
        SmId => "%smid".into(),
    }
}

/// Integer arithmetic has no `.b` forms: raw bits compute as unsigned.
fn arith_ty(t: Type) -> Type {
    match t {
        Type::B16 | Type::B32 | Type::B64 => unsigned_of(t),
        t => t,
    }
}

/// The type `mov`/`selp` use to move a value of type `t` (halves and pairs move as raw bits).
pub(super) fn move_ty(t: Type) -> Type {
    match t {
        Type::F16 | Type::BF16 => Type::B16,
        Type::F16x2 | Type::BF16x2 => Type::B32,
        t => t,
    }
}

/// The integer type twice as wide as `t`, keeping its signedness.
fn wide_ty(t: Type) -> Type {
    match (t.is_signed(), t.bits()) {
        (true, 16) => Type::S32,
        (true, _) => Type::S64,
        (false, 16) => Type::U32,
        (false, _) => Type::U64,
    }
}

/// The `.lo`/`.hi`/`.wide` qualifier of `mul` and `mad` on `ty` inputs, and their result type.
fn mul_mode(mode: MulMode, ty: Type) -> (&'static str, Type) {
    match mode {
        MulMode::Lo => ("lo", ty),
        MulMode::Hi => ("hi", ty),
        MulMode::Wide => ("wide", wide_ty(ty)),
    }
}

impl Writer<'_> {
    pub(super) fn write_arith(&mut self, x: &Arith) -> Res {
        match x {
            Arith::Bin { op, ty, dst, a, b } => {
                let ty = *ty;
                let d = self.dst(*dst, ty)?;
                let a = self.src(a, ty)?;
                let b_ty = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    Type::U32
                } else {
                    ty
                };
                let b = self.src(b, b_ty)?;
                let name = op.name();
                let suffix = match op {
                    BinOp::And | BinOp::Or | BinOp::Xor => format!("{}", ty.bits_type()),
                    BinOp::Shl => format!("{}", ty.bits_type()),
                    BinOp::Shr if ty.is_signed() => format!("{ty}"),
                    BinOp::Shr => format!("{}", unsigned_of(ty)),
                    BinOp::Mul if !ty.is_float() => format!("lo.{}", arith_ty(ty)),
                    BinOp::Div if ty.is_float() => format!("rn.{ty}"),
                    _ => format!("{}", arith_ty(ty)),
                };
                if ty.is_float() && matches!(op, BinOp::Rem) {
                    return Err(self.bad(format!("rem is not defined on {ty}")));
                }
                self.emit(format_args!("{name}.{suffix} {d}, {a}, {b}"));
            }
            Arith::MulPart {
                mode,
                ty,
                dst,
                a,
                b,
            } => {
                let (m, dty) = mul_mode(*mode, *ty);
                let d = self.dst(*dst, dty)?;
                let a = self.src(a, *ty)?;
                let b = self.src(b, *ty)?;
                self.emit(format_args!("mul.{m}.{ty} {d}, {a}, {b}"));
            }
            Arith::Mad {
                mode,
                ty,
                dst,
                a,
                b,
                c,
            } => {
                let (m, dty) = mul_mode(*mode, *ty);
                let d = self.dst(*dst, dty)?;
                let a = self.src(a, *ty)?;
                let b = self.src(b, *ty)?;
                let c = self.src(c, dty)?;
                self.emit(format_args!("mad.{m}.{ty} {d}, {a}, {b}, {c}"));
            }
            Arith::Fma {
                rnd,
                ty,
                dst,
                a,
                b,
                c,
            } => {
                if !ty.is_float() {
                    return Err(self.bad(format!("fma takes floats, not {ty}")));
                }
                let d = self.dst(*dst, *ty)?;
                let a = self.src(a, *ty)?;
                let b = self.src(b, *ty)?;
                let c = self.src(c, *ty)?;
                self.emit(format_args!("fma.{}.{ty} {d}, {a}, {b}, {c}", rnd.name()));
            }
            Arith::Unary { op, ty, dst, a } => {
                let ty = *ty;
                let counts = matches!(op, UnOp::Popc | UnOp::Clz);
                let d = self.dst(*dst, if counts { Type::U32 } else { ty })?;
                let a = self.src(a, ty)?;
                let suffix = match op {
                    UnOp::Neg | UnOp::Abs => {
                        if !(ty.is_signed() || ty.is_float()) {
                            return Err(
                                self.bad(format!("{} takes signed ints or floats", op.name()))
                            );
                        }
                        ty
                    }
                    _ => {
                        if ty.is_float() {
                            return Err(self.bad(format!("{} is not defined on {ty}", op.name())));
                        }
                        ty.bits_type()
                    }
                };
                self.emit(format_args!("{}.{suffix} {d}, {a}", op.name()));
            }
            Arith::Approx {
                op,
                ty,
                subnormals,
                dst,
                a,
            } => {
                let d = self.dst(*dst, *ty)?;
                let a = self.src(a, *ty)?;
                let form = match (op, ty) {
                    (ApproxOp::Rcp, Type::F64) => "rcp.approx.ftz.f64".to_string(),
                    (ApproxOp::Sqrt, Type::F64) => "sqrt.rn.f64".to_string(),
                    (ApproxOp::Ex2, t) if t.is_bf16() => format!("ex2.approx.ftz.{t}"),
                    (op, t) if *subnormals == Subnormals::FlushedToZero => {
                        format!("{}.approx.ftz.{t}", op.name())
                    }
                    (op, t) => format!("{}.approx.{t}", op.name()),
                };
                self.emit(format_args!("{form} {d}, {a}"));
            }
            Arith::Rounded {
                op,
                rnd,
                ty,
                dst,
                a,
            } => {
                let d = self.dst(*dst, *ty)?;
                let a = self.src(a, *ty)?;
                self.emit(format_args!("{}.{}.{ty} {d}, {a}", op.name(), rnd.name()));
            }
            Arith::Bfe {
                ty,
                dst,
                a,
                pos,
                len,
            } => {
                let d = self.dst(*dst, *ty)?;
                let a = self.src(a, *ty)?;
                let pos = self.src(pos, Type::U32)?;
                let len = self.src(len, Type::U32)?;
                self.emit(format_args!("bfe.{ty} {d}, {a}, {pos}, {len}"));
            }
            Arith::Bfi {
                ty,
                dst,
                f,
                b,
                pos,
                len,
            } => {
                let d = self.dst(*dst, *ty)?;
                let f = self.src(f, *ty)?;
                let b = self.src(b, *ty)?;
                let pos = self.src(pos, Type::U32)?;
                let len = self.src(len, Type::U32)?;
                self.emit(format_args!("bfi.{ty} {d}, {f}, {b}, {pos}, {len}"));
            }
        }
        Ok(())
    }

    pub(super) fn write_convert(&mut self, x: &Convert) -> Res {
        match x {
            Convert::Cvt {
                dst_ty,
                src_ty,
                rnd,
                sat,
                dst,
                src,
            } => {
                let (dt, st) = (*dst_ty, *src_ty);
                // 8-bit values live in 16- or 32-bit registers.
                let d = if dt.is_register_type() {
                    self.dst(*dst, dt)?
                } else {
                    self.narrow_reg(*dst)?
                };
                let s = match src {
                    Operand::Reg(r) if !st.is_register_type() => self.narrow_reg(*r)?,
                    Operand::Reg(r) => self.reg_of(*r, st)?,
                    imm => self.src(imm, st)?,
                };
                if rnd.is_some() && !dt.is_float() && !st.is_float() {
                    return Err(self.bad("integer-to-integer conversions take no rounding"));
                }
                let rnd = rnd.or_else(|| default_round(dt, st));
                let rnd = rnd.map_or(String::new(), |r| format!(".{}", r.name()));
                let sat = if *sat { ".sat" } else { "" };
                let (dt, st) = (arith_ty(dt), arith_ty(st));
                self.emit(format_args!("cvt{rnd}{sat}.{dt}.{st} {d}, {s}"));
            }
            Convert::PackF32 {
                dst_ty,
                relu,
                dst,
                hi,
                lo,
            } => {
                let d = self.dst(*dst, *dst_ty)?;
                let hi = self.src(hi, Type::F32)?;
                let lo = self.src(lo, Type::F32)?;
                let relu = if *relu { ".relu" } else { "" };
                self.emit(format_args!("cvt.rn{relu}.{dst_ty}.f32 {d}, {hi}, {lo}"));
            }
        }
        Ok(())
    }

    pub(super) fn write_compare(&mut self, x: &Compare) -> Res {
        match x {
            Compare::Setp { cmp, ty, dst, a, b } => {
                let d = self.dst(*dst, Type::Pred)?;
                let a = self.src(a, *ty)?;
                let b = self.src(b, *ty)?;
                let t = match cmp {
                    CmpOp::Eq | CmpOp::Ne => *ty,
                    _ => arith_ty(*ty),
                };
                self.emit(format_args!("setp.{}.{t} {d}, {a}, {b}", cmp.name()));
            }
            Compare::Selp {
                ty,
                dst,
                a,
                b,
                cond,
            } => {
                let d = self.dst(*dst, *ty)?;
                let a = self.src(a, *ty)?;
                let b = self.src(b, *ty)?;
                let c = self.src(cond, Type::Pred)?;
                self.emit(format_args!("selp.{} {d}, {a}, {b}, {c}", move_ty(*ty)));
            }
        }
        Ok(())
    }

    pub(super) fn write_data(&mut self, x: &Data) -> Res {
        match x {
            Data::Mov { ty, dst, src } => {
                let d = self.dst(*dst, *ty)?;
                // A half-precision immediate moves its bit pattern directly.
                let s = match literal(src, *ty) {
                    Ok(Literal::Bits { value, .. }) => format!("0x{value:X}"),
                    _ => self.src(src, *ty)?,
                };
                self.emit(format_args!("mov.{} {d}, {s}", move_ty(*ty)));
            }
            Data::ReadSpecial { dst, sreg } => {
                let t = sreg.ty();
                let d = self.dst(*dst, t)?;
                self.emit(format_args!("mov.{t} {d}, {}", special_name(*sreg)));
            }
            Data::AddressOf { dst, symbol } => {
                self.symbol(symbol)?;
                let t = unsigned_of(dst.ty);
                let d = self.dst(*dst, t)?;
                self.emit(format_args!("mov.{t} {d}, {symbol}"));
            }
            Data::Pack { dst, parts } => {
                let bits = dst.ty.bits();
                let part = bits_ty(bits / parts.len() as u32);
                let whole = dst.ty.bits_type();
                let d = self.dst(*dst, whole)?;
                let v = self.src_vec(parts, part, false)?;
                self.emit(format_args!("mov.{whole} {d}, {v}"));
            }
            Data::Unpack { dsts, src } => {
                let whole = src.ty.bits_type();
                let part = bits_ty(src.ty.bits() / dsts.len() as u32);
                let s = self.reg_of(*src, whole)?;
                let v = self.dst_vec(dsts, part)?;
                self.emit(format_args!("mov.{whole} {v}, {s}"));
            }
        }
        Ok(())
    }

    pub(super) fn write_warp(&mut self, x: &Warp) -> Res {
        match x {
            Warp::Shfl {
                mode,
                dst,
                dst_pred,
                a,
                b,
                c,
                membermask,
            } => {
                let mut d = self.dst(*dst, Type::B32)?;
                if let Some(p) = dst_pred {
                    d = format!("{d}|{}", self.dst(*p, Type::Pred)?);
                }
                let a = self.src(a, Type::B32)?;
                let b = self.src(b, Type::U32)?;
                let c = self.src(c, Type::U32)?;
                let m = self.src(membermask, Type::U32)?;
                self.emit(format_args!(
                    "shfl.sync.{}.b32 {d}, {a}, {b}, {c}, {m}",
                    mode.name()
                ));
            }
            Warp::Vote {
                mode,
                dst,
                pred,
                negate,
                membermask,
            } => {
                let (m, dty, suffix) = match mode {
                    VoteMode::All => ("all", Type::Pred, "pred"),
                    VoteMode::Any => ("any", Type::Pred, "pred"),
                    VoteMode::Uni => ("uni", Type::Pred, "pred"),
                    VoteMode::Ballot => ("ballot", Type::B32, "b32"),
                };
                let d = self.dst(*dst, dty)?;
                let p = match pred {
                    Operand::Reg(r) => {
                        format!(
                            "{}{}",
                            if *negate { "!" } else { "" },
                            self.reg_of(*r, Type::Pred)?
                        )
                    }
                    // A constant vote: fold the negation.
                    Operand::Imm(i @ (0 | 1)) => format!("{}", i ^ i64::from(*negate)),
                    _ => return Err(self.bad("a vote is a predicate register or 0/1")),
                };
                let mask = self.src(membermask, Type::U32)?;
                self.emit(format_args!("vote.sync.{m}.{suffix} {d}, {p}, {mask}"));
            }
            Warp::Redux {
                op,
                ty,
                dst,
                src,
                membermask,
            } => {
                let d = self.dst(*dst, *ty)?;
                let s = self.src(src, *ty)?;
                let m = self.src(membermask, Type::U32)?;
                let name = match op {
                    ReduxOp::Add => "add",
                    ReduxOp::Min => "min",
                    ReduxOp::Max => "max",
                    ReduxOp::And => "and",
                    ReduxOp::Or => "or",
                    ReduxOp::Xor => "xor",
                };
                self.emit(format_args!("redux.sync.{name}.{ty} {d}, {s}, {m}"));
            }
            Warp::Elect {
                dst_lane,
                dst_pred,
                membermask,
            } => {
                let lane = self.dst_or_sink(*dst_lane, Type::U32)?;
                let p = self.dst(*dst_pred, Type::Pred)?;
                let m = self.src(membermask, Type::U32)?;
                self.emit(format_args!("elect.sync {lane}|{p}, {m}"));
            }
            Warp::Activemask { dst } => {
                let d = self.dst(*dst, Type::B32)?;
                self.emit(format_args!("activemask.b32 {d}"));
            }
            Warp::Sync { membermask } => {
                let m = self.src(membermask, Type::U32)?;
                self.emit(format_args!("bar.warp.sync {m}"));
            }
        }
        Ok(())
    }
}

/// The raw-bits type of `bits` bits.
fn bits_ty(bits: u32) -> Type {
    match bits {
        8 => Type::B8,
        16 => Type::B16,
        32 => Type::B32,
        _ => Type::B64,
    }
}
