//! Tensor-core families: sm_80 `mma.sync`, sm_90a `wgmma.*`, sm_100a `tcgen05.*`.

use super::{Res, Writer};
use dsl_core::ir::op::{MmaSync, ScaleD, Tcgen05, Tcgen05A, Wgmma, WgmmaA};
use dsl_core::ir::{StateSpace, Type};

impl Writer<'_> {
    pub(super) fn write_mma(&mut self, x: &MmaSync) -> Res {
        // An f16 accumulator packs two halves per register.
        let (acc_slot, acc_name) = if x.acc_ty == Type::F32 {
            (Type::F32, "f32")
        } else {
            (Type::F16x2, "f16")
        };
        let ab = x.ab_ty;
        let d = self.dst_vec(&x.d, acc_slot)?;
        let a = self.dst_vec(&x.a, Type::B32)?;
        let b = self.dst_vec(&x.b, Type::B32)?;
        let c = self.src_vec(&x.c, acc_slot, false)?;
        self.emit(format_args!(
            "mma.sync.aligned.m16n8k16.row.col.{acc_name}.{ab}.{ab}.{acc_name} {d}, {a}, {b}, {c}"
        ));
        Ok(())
    }

    pub(super) fn write_wgmma(&mut self, x: &Wgmma) -> Res {
        match x {
            Wgmma::Fence => self.emit(format_args!("wgmma.fence.sync.aligned")),
            Wgmma::CommitGroup => self.emit(format_args!("wgmma.commit_group.sync.aligned")),
            Wgmma::WaitGroup(n) => self.emit(format_args!("wgmma.wait_group.sync.aligned {n}")),
            Wgmma::MmaAsync(w) => {
                let (d_slot, d_name) = if w.d_ty == Type::F32 {
                    (Type::F32, "f32")
                } else {
                    (Type::F16x2, "f16")
                };
                let d = self.dst_vec(&w.d, d_slot)?;
                let a = match &w.a {
                    WgmmaA::Desc(o) => self.src(o, Type::U64)?,
                    WgmmaA::Regs(rs) => self.dst_vec(rs, Type::B32)?,
                };
                let b = self.src(&w.b_desc, Type::U64)?;
                let scale_d = match w.scale_d {
                    ScaleD::Const(on) => u8::from(on).to_string(),
                    ScaleD::Pred(p) => self.reg_of(p, Type::Pred)?,
                };
                let trans_a = match w.a {
                    WgmmaA::Desc(_) => format!(", {}", u8::from(w.tnsp_a)),
                    WgmmaA::Regs(_) => String::new(),
                };
                self.emit(format_args!(
                    "wgmma.mma_async.sync.aligned.m64n{}k16.{d_name}.{ab}.{ab} {d}, {a}, {b}, {scale_d}, {}, {}{trans_a}, {}",
                    w.n,
                    w.scale_a,
                    w.scale_b,
                    u8::from(w.tnsp_b),
                    ab = w.ab_ty,
                ));
            }
        }
        Ok(())
    }

    pub(super) fn write_tcgen05(&mut self, x: &Tcgen05) -> Res {
        match x {
            Tcgen05::Alloc {
                cta_group,
                dst,
                ncols,
            } => {
                let d = self.addr(dst, StateSpace::Shared)?;
                let n = self.src(ncols, Type::U32)?;
                self.emit(format_args!(
                    "tcgen05.alloc.cta_group::{}.sync.aligned.shared::cta.b32 {d}, {n}",
                    cta_group.count()
                ));
            }
            Tcgen05::Dealloc {
                cta_group,
                taddr,
                ncols,
            } => {
                let t = self.src(taddr, Type::U32)?;
                let n = self.src(ncols, Type::U32)?;
                self.emit(format_args!(
                    "tcgen05.dealloc.cta_group::{}.sync.aligned.b32 {t}, {n}",
                    cta_group.count()
                ));
            }
            Tcgen05::RelinquishAllocPermit { cta_group } => self.emit(format_args!(
                "tcgen05.relinquish_alloc_permit.cta_group::{}.sync.aligned",
                cta_group.count()
            )),
            // TMEM addresses are bracketed operands, which must be registers; descriptors
            // and the instruction descriptor may be immediates.
            Tcgen05::Mma {
                cta_group,
                kind,
                d_tmem,
                a,
                b_desc,
                idesc,
                enable_input_d,
            } => {
                let d = self.src_reg(d_tmem, Type::U32)?;
                let a = match a {
                    Tcgen05A::Desc(o) => self.src(o, Type::U64)?,
                    Tcgen05A::Tmem(o) => format!("[{}]", self.src_reg(o, Type::U32)?),
                };
                let b = self.src(b_desc, Type::U64)?;
                let i = self.src(idesc, Type::U32)?;
                let en = self.src(enable_input_d, Type::Pred)?;
                self.emit(format_args!(
                    "tcgen05.mma.cta_group::{}.kind::{} [{d}], {a}, {b}, {i}, {en}",
                    cta_group.count(),
                    kind.name()
                ));
            }
            Tcgen05::Commit {
                cta_group,
                mbar,
                multicast,
            } => {
                let m = self.addr(mbar, StateSpace::SharedCluster)?;
                let (mc, mask) = self.multicast(multicast.as_ref())?;
                self.emit(format_args!(
                    "tcgen05.commit.cta_group::{}.mbarrier::arrive::one.shared::cluster{mc}.b64 {m}{mask}",
                    cta_group.count()
                ));
            }
            Tcgen05::Ld {
                shape,
                num,
                pack16,
                dsts,
                taddr,
            } => {
                let d = self.dst_vec(dsts, Type::B32)?;
                let t = self.src_reg(taddr, Type::U32)?;
                let p = if *pack16 { ".pack::16b" } else { "" };
                self.emit(format_args!(
                    "tcgen05.ld.sync.aligned.{}.x{num}{p}.b32 {d}, [{t}]",
                    shape.name()
                ));
            }
            Tcgen05::St {
                shape,
                num,
                unpack16,
                taddr,
                srcs,
            } => {
                let t = self.src_reg(taddr, Type::U32)?;
                // tcgen05.st refuses a vector mixing registers and immediates.
                let s = self.src_vec(srcs, Type::B32, true)?;
                let u = if *unpack16 { ".unpack::16b" } else { "" };
                self.emit(format_args!(
                    "tcgen05.st.sync.aligned.{}.x{num}{u}.b32 [{t}], {s}",
                    shape.name()
                ));
            }
            Tcgen05::WaitLd => self.emit(format_args!("tcgen05.wait::ld.sync.aligned")),
            Tcgen05::WaitSt => self.emit(format_args!("tcgen05.wait::st.sync.aligned")),
            Tcgen05::FenceBeforeThreadSync => {
                self.emit(format_args!("tcgen05.fence::before_thread_sync"))
            }
            Tcgen05::FenceAfterThreadSync => {
                self.emit(format_args!("tcgen05.fence::after_thread_sync"))
            }
        }
        Ok(())
    }
}
