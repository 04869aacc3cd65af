//! `copy`, `clear`, the register and shared-memory epilogues, and the `cp.async` group fences
//! on device tensors.

use super::{Fragment, GTensor, STensor};
use crate::atom::{CopyAtom, CopyEnd, EndKind};
use crate::ir::op::{CpAsync, Data, Memory};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};
use crate::kernel::{emit, pack_bf16x2, pack_f16x2, Arm, Cond, DeviceType, Var};
use crate::layout::{Layout, LayoutError};

fn bad(op: &'static str, l: &Layout, msg: impl Into<String>) -> LayoutError {
    LayoutError::precondition(op, l.to_string(), msg.into())
}

/// The static offsets of the atom applications: the layout's values (mode 0 innermost) cut into
/// groups of `n`, each of which must be `n` consecutive elements inside mode 0 (CuTe's copy
/// iterates the atom over the `CPY` mode, then over the rest).
fn vector_groups(op: &'static str, base: i64, l: &Layout, n: i64) -> Result<Vec<i64>, LayoutError> {
    if n < 1 || l.mode(0)?.size() % n != 0 {
        return Err(bad(
            op,
            l,
            format!("mode 0 does not split into groups of {n}"),
        ));
    }
    (0..l.size() / n)
        .map(|g| {
            let o = l.eval(g * n)?;
            for j in 1..n {
                if l.eval(g * n + j)? != o + j {
                    return Err(bad(
                        op,
                        l,
                        format!("values {}.. are not {n} consecutive elements", g * n),
                    ));
                }
            }
            Ok(base + o)
        })
        .collect()
}

/// A tensor that can be one end of CuTe's `copy(atom, src, dst)`: it cuts itself into the
/// atom's value groups and resolves each to the endpoint the atom takes (an address, with its
/// bounds predicate for global memory, or registers).
pub trait CopySide {
    /// The per-thread layout whose values are copied (value groups are consecutive runs of it).
    fn copy_layout(&self) -> &Layout;
    /// One endpoint per value group of `atom` (its values per thread on this side), in order,
    /// of the kind the atom takes there. `source` says whether this tensor is the copy's source
    /// (a global source out of bounds is clamped to the tile's origin; a destination is
    /// predicated).
    fn copy_ends(&self, atom: &CopyAtom, source: bool) -> Result<Vec<CopyEnd>, LayoutError>;
}

/// What `atom` takes on one side: the endpoint kind and the values per group.
fn side(atom: &CopyAtom, source: bool) -> (EndKind, i64) {
    if source {
        (atom.op().src_kind(), atom.num_val_src())
    } else {
        (atom.op().dst_kind(), atom.num_val_dst())
    }
}

/// The error of a tensor that cannot be `atom`'s end of kind `kind`.
fn not_an_end(atom: &CopyAtom, l: &Layout, what: &str, kind: EndKind) -> LayoutError {
    bad(
        "copy",
        l,
        format!("{atom}: {what} cannot be the atom's {kind:?} end"),
    )
}

impl<T: DeviceType> CopySide for GTensor<T> {
    fn copy_layout(&self) -> &Layout {
        self.layout()
    }
    fn copy_ends(&self, atom: &CopyAtom, source: bool) -> Result<Vec<CopyEnd>, LayoutError> {
        let (kind, group) = side(atom, source);
        if !matches!(kind, EndKind::Global | EndKind::Memory | EndKind::Any) {
            return Err(not_an_end(atom, self.layout(), "a global tensor", kind));
        }
        let offs = vector_groups("copy", self.base(), self.layout(), group)?;
        Ok(self
            .accesses(&offs, group, source)?
            .into_iter()
            .map(|a| CopyEnd::Global {
                addr: a.addr,
                pred: a.pred,
            })
            .collect())
    }
}

impl<T: DeviceType> CopySide for STensor<T> {
    fn copy_layout(&self) -> &Layout {
        self.layout()
    }
    fn copy_ends(&self, atom: &CopyAtom, source: bool) -> Result<Vec<CopyEnd>, LayoutError> {
        let (kind, group) = side(atom, source);
        if !matches!(kind, EndKind::Shared | EndKind::Memory | EndKind::Any) {
            return Err(not_an_end(atom, self.layout(), "a shared tensor", kind));
        }
        let offs = vector_groups("copy", self.view().base, self.layout(), group)?;
        Ok(self
            .addresses(&offs, group)?
            .into_iter()
            .map(|addr| CopyEnd::Shared { addr })
            .collect())
    }
}

impl<R: DeviceType> CopySide for Fragment<R> {
    fn copy_layout(&self) -> &Layout {
        &self.layout
    }
    fn copy_ends(&self, atom: &CopyAtom, source: bool) -> Result<Vec<CopyEnd>, LayoutError> {
        let (kind, group) = side(atom, source);
        if !matches!(kind, EndKind::Registers | EndKind::Any) {
            return Err(not_an_end(atom, &self.layout, "registers", kind));
        }
        let vpr = self.vals_per_reg;
        if group < 1 || group % vpr != 0 || self.layout.mode(0)?.size() % group != 0 {
            return Err(bad(
                "copy",
                &self.layout,
                format!(
                    "mode 0 does not split into groups of {group} values held {vpr} per register"
                ),
            ));
        }
        (0..self.layout.size() / group)
            .map(|g| {
                let regs = (0..group / vpr)
                    .map(|j| self.reg_at(g * group + j * vpr).map(|r| r.to_reg()))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(CopyEnd::Registers(regs))
            })
            .collect()
    }
}

/// CuTe's `copy(copy_atom, src, dst)` for one thread's partitions of the same size (`src` from
/// `partition_S` or a retiled fragment, `dst` likewise): each value group, the atom's values
/// per thread on each side, is one [`CopyAtom::call`].
///
/// The atom decides what it moves; the tensors only resolve their groups: a [`GTensor`] gives
/// addresses with bounds predicates (a `cp.async` then zero-fills what is outside), an
/// [`STensor`] shared addresses (swizzled), a [`Fragment`] registers.
pub fn copy<S: CopySide, D: CopySide>(
    atom: &CopyAtom,
    src: &S,
    dst: &D,
) -> Result<(), LayoutError> {
    let (sl, dl) = (src.copy_layout(), dst.copy_layout());
    if sl.size() != dl.size() {
        return Err(bad(
            "copy",
            sl,
            format!("source and destination sizes differ: {dl}"),
        ));
    }
    let s = src.copy_ends(atom, true)?;
    let d = dst.copy_ends(atom, false)?;
    if s.len() != d.len() {
        return Err(bad(
            "copy",
            sl,
            format!(
                "{} source groups of {} values but {} destination groups of {} in {dl}",
                s.len(),
                atom.num_val_src(),
                d.len(),
                atom.num_val_dst()
            ),
        ));
    }
    for (s, d) in s.iter().zip(&d) {
        atom.call(s, d)?;
    }
    Ok(())
}

/// CuTe's `clear(fragment)`: every register set to 0.
pub fn clear<R: DeviceType>(frag: &Fragment<R>) {
    for r in &frag.regs {
        if let Some(reg) = r.reg() {
            emit(Data::Mov {
                ty: reg.ty.bits_type(),
                dst: reg,
                src: Operand::Imm(0),
            });
        }
    }
}

/// CuTe's `cp_async_fence()`: `cp.async.commit_group`.
pub fn cp_async_fence() {
    emit(CpAsync::CommitGroup);
}

/// CuTe's `cp_async_wait<N>()`: `cp.async.wait_group N` (`wait_all` for 0, as CuTe).
pub fn cp_async_wait<const N: u32>() {
    if N == 0 {
        emit(CpAsync::WaitAll);
    } else {
        emit(CpAsync::WaitGroup(N));
    }
}

/// [`cp_async_wait`] with the count known when the kernel is generated rather than when rute is
/// compiled (a configuration's `stages - 2`).
pub fn cp_async_wait_n(n: u32) {
    if n == 0 {
        emit(CpAsync::WaitAll);
    } else {
        emit(CpAsync::WaitGroup(n));
    }
}

/// The register epilogue, CuTe's `copy(tCrD, tCgD)` with a conversion: `acc` is one thread's
/// accumulator fragment `(MMA, MMA_M, MMA_N)` and `dst` the matching `partition_C` of the output
/// tile; each value is converted to `T` (f16 or bf16; an f16 accumulator is stored as it is) and
/// stored where `dst`'s bounds hold.
///
/// Two values that sit side by side in one row (the pairs of an `mma` accumulator) go out in one
/// 32-bit store when both are in bounds and the address is 4-byte aligned (an even row stride and
/// an even column); otherwise as two 16-bit stores, each where it is in bounds.
///
/// An f32 `dst` with f32 accumulators (a split-K partial sum) stores them as they are: a pair as
/// one `st.global.v2.f32` where both are in bounds and 8-byte aligned, otherwise one by one.
pub fn store_fragment<C: DeviceType, T: DeviceType>(
    acc: &Fragment<C>,
    dst: &GTensor<T>,
) -> Result<(), LayoutError> {
    let f32_out = T::TY == Type::F32 && C::TY == Type::F32;
    if acc.layout.size() != dst.layout().size() || (T::TY.bits() != 16 && !f32_out) {
        return Err(bad(
            "store_fragment",
            &acc.layout,
            format!(
                "does not match the output {} (16-bit, or f32 from f32 accumulators)",
                dst.layout()
            ),
        ));
    }
    let n = dst.layout().size();
    let offs = (0..n)
        .map(|i| Ok(dst.base() + dst.layout().eval(i)?))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    let vals = (0..n)
        .map(|i| acc.value(i))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    let st = |ty: Type, srcs: Vec<Operand>, addr: Address| {
        emit(Memory::St {
            space: StateSpace::Global,
            ty,
            srcs,
            addr,
            cache: None,
            order: None,
        })
    };
    if f32_out {
        // Each value has its own register: any two side by side go out together.
        let reg = |v: i64| Operand::Reg(acc.regs[v as usize].to_reg());
        return store_in_pairs(
            dst,
            &offs,
            8,
            |_| true,
            |i, addr| st(Type::F32, vec![reg(vals[i])], addr),
            |i, addr| st(Type::F32, vec![reg(vals[i]), reg(vals[i + 1])], addr),
        );
    }
    let reg_of = |v: i64| acc.regs[(v / acc.vals_per_reg) as usize];
    let half_of = |v: i64| half_value::<C, T>(acc, v);
    store_in_pairs(
        dst,
        &offs,
        4,
        // Consecutive values that share a register, or two f32 ones rounded into one.
        |i| vals[i + 1] == vals[i] + 1 && vals[i] % acc.vals_per_reg.max(2) == 0,
        |i, addr| st(Type::B16, vec![Operand::Reg(half_of(vals[i]))], addr),
        |i, addr| {
            let v0 = vals[i];
            let packed = if acc.vals_per_reg == 2 {
                reg_of(v0).to_reg()
            } else {
                pack_pair::<T>(
                    Var::from_reg(reg_of(v0).to_reg()),
                    Var::from_reg(reg_of(v0 + 1).to_reg()),
                )
            };
            st(Type::B32, vec![Operand::Reg(packed)], addr);
        },
    )
}

/// Accumulator value `v` of `acc` as a 16-bit `T` in a register of its own: unpacked from a
/// packed pair, or an f32 rounded to `T`.
fn half_value<C: DeviceType, T: DeviceType>(acc: &Fragment<C>, v: i64) -> Reg {
    let reg = acc.regs[(v / acc.vals_per_reg) as usize].to_reg();
    if acc.vals_per_reg == 2 {
        let lo = Var::<half::f16>::uninit().to_reg();
        let hi = Var::<half::f16>::uninit().to_reg();
        emit(Data::Unpack {
            dsts: vec![lo, hi],
            src: reg,
        });
        [lo, hi][(v % 2) as usize]
    } else {
        let f: Var<f32> = Var::from_reg(reg);
        if T::TY == Type::BF16 {
            f.cast::<half::bf16>().to_reg()
        } else {
            f.cast::<half::f16>().to_reg()
        }
    }
}

/// The walk both forms of [`store_fragment`] share. Element `i` of `dst` (static offsets `offs`)
/// goes out alone (`single`), or with `i + 1` as one store (`pair`) where the two sit side by
/// side at an even offset and `pairable(i)` holds: at run time, where both are in bounds and
/// `dst` is aligned to `pair_bytes`, else one by one. Each store is predicated on its bounds.
fn store_in_pairs<T: DeviceType>(
    dst: &GTensor<T>,
    offs: &[i64],
    pair_bytes: u32,
    pairable: impl Fn(usize) -> bool,
    single: impl Fn(usize, Address),
    pair: impl Fn(usize, Address),
) -> Result<(), LayoutError> {
    let n = offs.len();
    let singles = dst.accesses(offs, 1, false)?;
    let aligned = dst.aligned_to(pair_bytes);
    let one = |i: usize| {
        let a = &singles[i];
        match a.pred {
            Some(p) => p.if_(|_| single(i, a.addr.clone())),
            None => single(i, a.addr.clone()),
        }
    };
    let mut i = 0usize;
    while i < n {
        if !(i + 1 < n && offs[i + 1] == offs[i] + 1 && offs[i] % 2 == 0 && pairable(i)) {
            one(i);
            i += 1;
            continue;
        }
        let both = dst.accesses(&offs[i..i + 1], 2, false)?.remove(0);
        let ok = match both.pred {
            Some(p) => p & aligned,
            None => aligned,
        };
        let j = i;
        ok.if_else(|arm| match arm {
            Arm::Then => pair(j, both.addr.clone()),
            Arm::Else => {
                one(j);
                one(j + 1);
            }
        });
        i += 2;
    }
    Ok(())
}

/// f32 accumulators `lo`, `hi` rounded to `T` (f16 or bf16) and packed into one register, `lo`
/// in the low half: what both epilogues store as one 32-bit word.
fn pack_pair<T: DeviceType>(lo: Var<f32>, hi: Var<f32>) -> Reg {
    if T::TY == Type::BF16 {
        pack_bf16x2(lo, hi).to_reg()
    } else {
        pack_f16x2(lo, hi).to_reg()
    }
}

/// The first half of a shared-memory epilogue: `acc` (one thread's `(MMA, MMA_M, MMA_N)`
/// accumulators) converted to `T` and stored into `dst`, the matching `partition_C` of a shared
/// tile: one 32-bit store per accumulator pair that sits side by side in `dst`, two 16-bit
/// stores per pair that does not (a transposed tile, whose rows are the accumulators' columns).
pub fn store_fragment_smem<C: DeviceType, T: DeviceType>(
    acc: &Fragment<C>,
    dst: &STensor<T>,
) -> Result<(), LayoutError> {
    let n = dst.layout().size();
    if acc.layout.size() != n || T::TY.bits() != 16 || n % 2 != 0 {
        return Err(bad(
            "store_fragment_smem",
            &acc.layout,
            format!("does not match the 16-bit tile {}", dst.layout()),
        ));
    }
    let base = dst.view().base;
    let (mut pair_offs, mut pairs) = (Vec::new(), Vec::new());
    let (mut single_offs, mut singles) = (Vec::new(), Vec::new());
    for i in (0..n).step_by(2) {
        let (o0, o1) = (dst.layout().eval(i)?, dst.layout().eval(i + 1)?);
        let (v0, v1) = (acc.value(i)?, acc.value(i + 1)?);
        if o1 == o0 + 1 && (base + o0) % 2 == 0 && v1 == v0 + 1 && v0 % 2 == 0 {
            pair_offs.push(base + o0);
            pairs.push(if acc.vals_per_reg == 2 {
                acc.regs[(v0 / 2) as usize].to_reg()
            } else {
                pack_pair::<T>(
                    Var::from_reg(acc.regs[v0 as usize].to_reg()),
                    Var::from_reg(acc.regs[v1 as usize].to_reg()),
                )
            });
        } else {
            for (o, v) in [(o0, v0), (o1, v1)] {
                single_offs.push(base + o);
                singles.push(half_value::<C, T>(acc, v));
            }
        }
    }
    let st = |ty: Type, addr: Address, r: Reg| {
        emit(Memory::St {
            space: StateSpace::Shared,
            ty,
            srcs: vec![Operand::Reg(r)],
            addr,
            cache: None,
            order: None,
        })
    };
    if !pairs.is_empty() {
        for (addr, r) in dst.addresses(&pair_offs, 2)?.into_iter().zip(pairs) {
            st(Type::B32, addr, r);
        }
    }
    if !singles.is_empty() {
        for (addr, r) in dst.addresses(&single_offs, 1)?.into_iter().zip(singles) {
            st(Type::B16, addr, r);
        }
    }
    Ok(())
}

/// The second half of a shared-memory epilogue, CuTe's `copy(s2g_tiled_copy, tDsD, tDgD)` with a
/// `UniversalCopy<uint128_t>` atom: each group of 8 values is one 16-byte shared load and, where
/// the whole group is in bounds and the global address is 16-byte aligned, one 16-byte global
/// store; otherwise its elements are stored one by one where each is in bounds.
pub fn copy_s2g<T: DeviceType>(
    atom: &CopyAtom,
    src: &STensor<T>,
    dst: &GTensor<T>,
) -> Result<(), LayoutError> {
    if atom.name() != "UniversalCopy<uint128_t>" || T::TY.bits() != 16 {
        return Err(bad(
            "copy_s2g",
            src.layout(),
            format!("{atom} is not UniversalCopy<uint128_t> of 16-bit values"),
        ));
    }
    if src.layout().shape() != dst.layout().shape() {
        return Err(bad(
            "copy_s2g",
            src.layout(),
            format!("source and destination shapes differ: {}", dst.layout()),
        ));
    }
    let so = vector_groups("copy_s2g", src.view().base, src.layout(), 8)?;
    let d_off = vector_groups("copy_s2g", dst.base(), dst.layout(), 8)?;
    let srcs = src.addresses(&so, 8)?;
    let whole = dst.accesses(&d_off, 8, false)?;
    let aligned = dst.aligned_to(16);
    for ((saddr, w), &d0) in srcs.into_iter().zip(whole).zip(&d_off) {
        let regs: Vec<Reg> = (0..4).map(|_| Var::<u32>::uninit().to_reg()).collect();
        emit(Memory::Ld {
            space: StateSpace::Shared,
            ty: Type::B32,
            dsts: regs.clone(),
            addr: saddr,
            cache: None,
            nc: false,
            order: None,
        });
        let ok = match w.pred {
            Some(p) => p & aligned,
            None => aligned,
        };
        let mut err = None;
        ok.if_else(|arm| match arm {
            Arm::Then => emit(Memory::St {
                space: StateSpace::Global,
                ty: Type::B32,
                srcs: regs.iter().map(|&r| Operand::Reg(r)).collect(),
                addr: w.addr.clone(),
                cache: None,
                order: None,
            }),
            Arm::Else => {
                let offs: Vec<i64> = (0..8).map(|j| d0 + j).collect();
                let singles = match dst.accesses(&offs, 1, false) {
                    Ok(s) => s,
                    Err(e) => {
                        err = Some(e);
                        return;
                    }
                };
                for (j, a) in singles.into_iter().enumerate() {
                    let lo = Var::<half::f16>::uninit().to_reg();
                    let hi = Var::<half::f16>::uninit().to_reg();
                    emit(Data::Unpack {
                        dsts: vec![lo, hi],
                        src: regs[j / 2],
                    });
                    let h = if j % 2 == 0 { lo } else { hi };
                    let st = |addr: Address| {
                        emit(Memory::St {
                            space: StateSpace::Global,
                            ty: Type::B16,
                            srcs: vec![Operand::Reg(h)],
                            addr,
                            cache: None,
                            order: None,
                        })
                    };
                    match a.pred {
                        Some(p) => p.if_(|_| st(a.addr.clone())),
                        None => st(a.addr.clone()),
                    }
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(())
}
