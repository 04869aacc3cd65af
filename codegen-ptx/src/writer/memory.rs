//! Families that move memory: loads and stores, atomics, address conversions, `cp.async`,
//! `ldmatrix`/`stmatrix` and the TMA bulk copies.

use super::{unsigned_of, Res, Writer};
use crate::regs::RegClass;
use dsl_core::ir::op::{
    AddressOp, AtomOp, Atomic, Bulk, CpAsync, CpAsyncCache, LdCache, Matrix, Memory, StCache,
    TensorMapRef,
};
use dsl_core::ir::{MemOrder, Operand, StateSpace, Type};

/// `.space` (empty for generic addresses).
fn space(s: StateSpace) -> String {
    match s {
        StateSpace::Generic => String::new(),
        s => format!(".{}", s.name()),
    }
}

/// `.sem.scope` of an ordered access.
fn order(o: Option<MemOrder>) -> String {
    match o {
        None => String::new(),
        Some(MemOrder::Relaxed(s)) => format!(".relaxed.{}", s.name()),
        Some(MemOrder::Acquire(s)) => format!(".acquire.{}", s.name()),
        Some(MemOrder::Release(s)) => format!(".release.{}", s.name()),
        Some(MemOrder::AcqRel(s)) => format!(".acq_rel.{}", s.name()),
    }
}

/// Loads and stores have no f16/bf16 types: halves move as `.b16`, pairs as `.b32`.
fn mem_ty(t: Type) -> Type {
    super::scalar::move_ty(t)
}

fn vec_suffix(n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        format!(".v{n}")
    }
}

/// The register operand of a load or store: one name, or `{a, b, ..}` for a vector access.
fn scalar_or_vec(names: Vec<String>) -> String {
    match <[String; 1]>::try_from(names) {
        Ok([name]) => name,
        Err(names) => format!("{{{}}}", names.join(", ")),
    }
}

/// The `.L2::cache_hint` qualifier and its trailing policy operand (a 64-bit immediate), or
/// nothing.
fn cache_hint(policy: Option<u64>) -> (&'static str, String) {
    match policy {
        Some(p) => (".L2::cache_hint", format!(", 0x{p:016X}")),
        None => ("", String::new()),
    }
}

impl Writer<'_> {
    /// A register receiving (or giving) a memory element of type `ty`: same width, or for an
    /// 8-bit element any 16- or 32-bit integer register.
    fn elem_reg(&self, r: dsl_core::ir::Reg, ty: Type) -> Res<String> {
        if ty.bits() == 8 {
            self.narrow_reg(r)
        } else {
            self.reg_of(r, ty)
        }
    }

    pub(super) fn write_memory(&mut self, x: &Memory) -> Res {
        match x {
            Memory::Ld {
                space: sp,
                ty,
                dsts,
                addr,
                cache,
                nc,
                order: ord,
            } => {
                let d = scalar_or_vec(
                    dsts.iter()
                        .map(|r| self.elem_reg(*r, *ty))
                        .collect::<Res<_>>()?,
                );
                let a = self.addr(addr, *sp)?;
                let cop = match cache {
                    None => "",
                    Some(LdCache::Ca) => ".ca",
                    Some(LdCache::Cg) => ".cg",
                    Some(LdCache::Cs) => ".cs",
                    Some(LdCache::Lu) => ".lu",
                    Some(LdCache::Cv) => ".cv",
                };
                let nc = if *nc { ".nc" } else { "" };
                self.emit(format_args!(
                    "ld{}{}{cop}{nc}{}.{} {d}, {a}",
                    order(*ord),
                    space(*sp),
                    vec_suffix(dsts.len()),
                    mem_ty(*ty)
                ));
            }
            Memory::St {
                space: sp,
                ty,
                srcs,
                addr,
                cache,
                order: ord,
            } => {
                let mut names = Vec::with_capacity(srcs.len());
                for s in srcs {
                    names.push(match s {
                        Operand::Reg(r) => self.elem_reg(*r, *ty)?,
                        imm => self.src(imm, *ty)?,
                    });
                }
                let v = scalar_or_vec(names);
                let a = self.addr(addr, *sp)?;
                let cop = match cache {
                    None => "",
                    Some(StCache::Wb) => ".wb",
                    Some(StCache::Cg) => ".cg",
                    Some(StCache::Cs) => ".cs",
                    Some(StCache::Wt) => ".wt",
                };
                self.emit(format_args!(
                    "st{}{}{cop}{}.{} {a}, {v}",
                    order(*ord),
                    space(*sp),
                    vec_suffix(srcs.len()),
                    mem_ty(*ty)
                ));
            }
            Memory::Prefetch {
                space: sp,
                l2,
                addr,
            } => {
                let a = self.addr(addr, *sp)?;
                let level = if *l2 { "L2" } else { "L1" };
                self.emit(format_args!("prefetch{}.{level} {a}", space(*sp)));
            }
        }
        Ok(())
    }

    pub(super) fn write_atomic(&mut self, x: &Atomic) -> Res {
        let (sp, op, ty, ord) = x.parts();
        // Half-precision adds exist only without flushing subnormals.
        let noftz = if op == AtomOp::Add
            && matches!(ty, Type::F16 | Type::F16x2 | Type::BF16 | Type::BF16x2)
        {
            ".noftz"
        } else {
            ""
        };
        let head = format!("{}{}.{}{noftz}.{ty}", order(ord), space(sp), op.name());
        match x {
            Atomic::Atom {
                dst, addr, a, b, ..
            } => {
                let d = self.dst(*dst, ty)?;
                let ad = self.addr(addr, sp)?;
                let a = self.src(a, ty)?;
                let b = self.opt_src(b.as_ref(), ty)?;
                self.emit(format_args!("atom{head} {d}, {ad}, {a}{b}"));
            }
            Atomic::Red { addr, a, .. } => {
                let ad = self.addr(addr, sp)?;
                let a = self.src(a, ty)?;
                self.emit(format_args!("red{head} {ad}, {a}"));
            }
        }
        Ok(())
    }

    pub(super) fn write_address(&mut self, x: &AddressOp) -> Res {
        match x {
            AddressOp::Cvta {
                to_generic,
                space: sp,
                dst,
                src,
            } => {
                let t = unsigned_of(dst.ty);
                let d = self.dst(*dst, t)?;
                let s = self.src(src, t)?;
                let to = if *to_generic { "" } else { ".to" };
                self.emit(format_args!("cvta{to}{}.{t} {d}, {s}", space(*sp)));
            }
            AddressOp::Mapa {
                space: sp,
                dst,
                src,
                cta_rank,
            } => {
                let t = unsigned_of(dst.ty);
                let d = self.dst(*dst, t)?;
                let s = self.src(src, t)?;
                let rank = self.src(cta_rank, Type::U32)?;
                self.emit(format_args!("mapa{}.{t} {d}, {s}, {rank}", space(*sp)));
            }
        }
        Ok(())
    }

    pub(super) fn write_cp_async(&mut self, x: &CpAsync) -> Res {
        match x {
            CpAsync::Copy {
                cache,
                bytes,
                dst,
                src,
                src_size,
            } => {
                let d = self.addr(dst, StateSpace::Shared)?;
                let s = self.addr(src, StateSpace::Global)?;
                let c = match cache {
                    CpAsyncCache::Ca => "ca",
                    CpAsyncCache::Cg => "cg",
                };
                let size = self.opt_src(src_size.as_ref(), Type::U32)?;
                self.emit(format_args!(
                    "cp.async.{c}.shared.global {d}, {s}, {bytes}{size}"
                ));
            }
            CpAsync::CommitGroup => self.emit(format_args!("cp.async.commit_group")),
            CpAsync::WaitGroup(n) => self.emit(format_args!("cp.async.wait_group {n}")),
            CpAsync::WaitAll => self.emit(format_args!("cp.async.wait_all")),
        }
        Ok(())
    }

    pub(super) fn write_matrix(&mut self, x: &Matrix) -> Res {
        match x {
            Matrix::Ldmatrix {
                num,
                trans,
                dsts,
                addr,
            } => {
                let d = self.dst_vec(dsts, Type::B32)?;
                let a = self.addr(addr, StateSpace::Shared)?;
                let t = if *trans { ".trans" } else { "" };
                self.emit(format_args!(
                    "ldmatrix.sync.aligned.m8n8.x{}{t}.shared.b16 {d}, {a}",
                    num.count()
                ));
            }
            Matrix::Stmatrix {
                num,
                trans,
                addr,
                srcs,
            } => {
                let a = self.addr(addr, StateSpace::Shared)?;
                // stmatrix.x1 refuses `{imm}`: sources are registers.
                let s = self.src_vec(srcs, Type::B32, true)?;
                let t = if *trans { ".trans" } else { "" };
                self.emit(format_args!(
                    "stmatrix.sync.aligned.m8n8.x{}{t}.shared.b16 {a}, {s}",
                    num.count()
                ));
            }
        }
        Ok(())
    }

    /// The generic address of a tensor map: a by-value parameter's address converted from the
    /// param space (TMA reads the map through a generic address), or a u64 register.
    fn tensor_map(&mut self, t: &TensorMapRef) -> Res<String> {
        match t {
            TensorMapRef::Param(name) => {
                let is_map = self
                    .kernel
                    .params
                    .iter()
                    .any(|p| p.name == *name && p.kind == dsl_core::ir::ParamKind::TensorMap);
                if !is_map {
                    return Err(self.bad(format!(
                        "`{name}` is not a tensor-map parameter of the kernel"
                    )));
                }
                let r = self.regs.scratch(RegClass::B64);
                self.emit_unguarded(format_args!("mov.u64 {r}, {name}"));
                self.emit_unguarded(format_args!("cvta.param.u64 {r}, {r}"));
                Ok(r)
            }
            TensorMapRef::Reg(r) => self.reg_of(*r, Type::U64),
        }
    }

    /// A TMA op's global operand: `[map, {coords}]`.
    fn tensor_tile(&mut self, map: &TensorMapRef, coords: &[Operand]) -> Res<String> {
        let m = self.tensor_map(map)?;
        let c = self.src_vec(coords, Type::S32, false)?;
        Ok(format!("[{m}, {c}]"))
    }

    pub(super) fn write_bulk(&mut self, x: &Bulk) -> Res {
        match x {
            Bulk::TensorLoad {
                dst,
                tensor_map,
                coords,
                mbar,
                multicast,
                cta_group,
                cache_policy,
            } => {
                let d = self.addr(dst, StateSpace::SharedCluster)?;
                let tile = self.tensor_tile(tensor_map, coords)?;
                let b = self.addr(mbar, StateSpace::Shared)?;
                let (mc, mask) = self.multicast(multicast.as_ref())?;
                let (hint, policy) = cache_hint(*cache_policy);
                let group = cta_group
                    .map(|g| format!(".cta_group::{}", g.count()))
                    .unwrap_or_default();
                self.emit(format_args!(
                    "cp.async.bulk.tensor.{}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{mc}{group}{hint} {d}, {tile}, {b}{mask}{policy}",
                    coords.len()
                ));
            }
            Bulk::TensorStore {
                tensor_map,
                coords,
                src,
                cache_policy,
            } => {
                let tile = self.tensor_tile(tensor_map, coords)?;
                let s = self.addr(src, StateSpace::Shared)?;
                let (hint, policy) = cache_hint(*cache_policy);
                self.emit(format_args!(
                    "cp.async.bulk.tensor.{}d.global.shared::cta.tile.bulk_group{hint} {tile}, {s}{policy}",
                    coords.len()
                ));
            }
            Bulk::TensorPrefetch {
                tensor_map,
                coords,
                cache_policy,
            } => {
                let tile = self.tensor_tile(tensor_map, coords)?;
                let (hint, policy) = cache_hint(*cache_policy);
                self.emit(format_args!(
                    "cp.async.bulk.prefetch.tensor.{}d.L2.global.tile{hint} {tile}{policy}",
                    coords.len()
                ));
            }
            Bulk::CommitGroup => self.emit(format_args!("cp.async.bulk.commit_group")),
            Bulk::WaitGroup { n, read } => {
                let r = if *read { ".read" } else { "" };
                self.emit(format_args!("cp.async.bulk.wait_group{r} {n}"));
            }
            Bulk::PrefetchTensormap { tensor_map } => {
                let m = self.tensor_map(tensor_map)?;
                self.emit(format_args!("prefetch.tensormap [{m}]"));
            }
        }
        Ok(())
    }
}
