//! `copy`, `gemm`, `clear` and the `cp.async` group fences on device tensors.

use super::{Fragment, GTensor, STensor};
use crate::atom::{CopyAtom, CopyOp};
use crate::ir::op::{Compare, CpAsync, CpAsyncCache, Data, Matrix, MatrixCount, Memory, MmaSync};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};
use crate::kernel::{emit, pack_bf16x2, pack_f16x2, select, Arm, Cond, DeviceType, Var};
use crate::layout::{Layout, LayoutError};
use crate::tiled::TiledMma;

fn bad(op: &'static str, l: &Layout, msg: impl Into<String>) -> LayoutError {
    LayoutError::precondition(op, l.to_string(), msg.into())
}

/// Static offsets of `(v = 0, rest = i)` for every `i`, and the value count of mode 0.
fn group_offsets(base: i64, layout: &Layout) -> Result<(i64, Vec<i64>), LayoutError> {
    let v = layout.mode(0)?.size();
    let n = layout.size() / v.max(1);
    let offs = (0..n)
        .map(|i| Ok(base + layout.eval(i * v)?))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    Ok((v, offs))
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

/// The source side of CuTe's `copy(atom, src, dst)`: which instruction family moves `Self`
/// into `D` (global -> shared: [`copy_g2s`]; shared -> registers: [`copy_s2r`]; registers ->
/// shared: [`copy_r2s`]).
pub trait CopyTo<D> {
    /// Copies `self` into `dst` with `atom`, one atom per value group.
    fn copy_to(&self, atom: &CopyAtom, dst: &D) -> Result<(), LayoutError>;
}

impl<T: DeviceType> CopyTo<STensor<T>> for GTensor<T> {
    fn copy_to(&self, atom: &CopyAtom, dst: &STensor<T>) -> Result<(), LayoutError> {
        copy_g2s(atom, self, dst)
    }
}

impl<T: DeviceType> CopyTo<Fragment<u32>> for STensor<T> {
    fn copy_to(&self, atom: &CopyAtom, dst: &Fragment<u32>) -> Result<(), LayoutError> {
        copy_s2r(atom, self, dst)
    }
}

impl<T: DeviceType> CopyTo<STensor<T>> for Fragment<u32> {
    fn copy_to(&self, atom: &CopyAtom, dst: &STensor<T>) -> Result<(), LayoutError> {
        copy_r2s(atom, self, dst)
    }
}

/// CuTe's `copy(copy_atom, src, dst)` for one thread's partitions of the same shape, by the
/// tensors' kinds (see [`CopyTo`]).
pub fn copy<S: CopyTo<D>, D>(atom: &CopyAtom, src: &S, dst: &D) -> Result<(), LayoutError> {
    src.copy_to(atom, dst)
}

/// CuTe's `copy(tiled_copy, src, dst)` from global to shared memory: `src` and `dst` are one
/// thread's `(CPY, CPY_M, CPY_K, ...)` partitions of the same shape; each value group (mode 0) is
/// one access of the atom's width.
///
/// - `cp.async` atoms (`SM80_CP_ASYNC_CACHEGLOBAL/ALWAYS`): one asynchronous copy per group. Where
///   `src` has bounds, a group outside them reads nothing and zero-fills its destination (source
///   size 0), its source address moved to the tile's origin.
/// - `UniversalCopy<uintN>`: a load into registers and a store (synchronous); a group outside the
///   bounds loads from the tile's origin and stores zeros.
pub fn copy_g2s<T: DeviceType>(
    atom: &CopyAtom,
    src: &GTensor<T>,
    dst: &STensor<T>,
) -> Result<(), LayoutError> {
    let (bits, cache) = match atom.op() {
        CopyOp::CpAsyncCacheGlobal { bits } => (bits, Some(CpAsyncCache::Cg)),
        CopyOp::CpAsyncCacheAlways { bits } => (bits, Some(CpAsyncCache::Ca)),
        CopyOp::UniversalCopy { bits } if bits >= 16 => (bits, None),
        other => {
            return Err(bad(
                "copy_g2s",
                src.layout(),
                format!("{} is not a global -> shared atom", other.cute_name()),
            ))
        }
    };
    let bytes = bits / 8;
    let vec = i64::from(bits / T::TY.bits());
    if src.layout().shape() != dst.layout().shape() {
        return Err(bad(
            "copy_g2s",
            src.layout(),
            format!("source and destination shapes differ: {}", dst.layout()),
        ));
    }
    let so = vector_groups("copy_g2s", src.base(), src.layout(), vec)?;
    let d_off = vector_groups("copy_g2s", dst.view().base, dst.layout(), vec)?;
    let srcs = src.accesses(&so, vec, true)?;
    let dsts = dst.addresses(&d_off, vec)?;
    for (s, d) in srcs.into_iter().zip(dsts) {
        match cache {
            Some(cache) => {
                let src_size = s.pred.map(|p| select(p, bytes, 0u32).operand());
                emit(CpAsync::Copy {
                    cache,
                    bytes,
                    dst: d,
                    src: s.addr,
                    src_size,
                });
            }
            None => universal_copy(bits, s.addr, s.pred, d),
        }
    }
    Ok(())
}

/// `ld.global` of `bits` into registers (one b16, or b32 words), zeroed where `pred` fails, and
/// `st.shared` of them.
fn universal_copy(bits: u32, src: Address, pred: Option<Var<bool>>, dst: Address) {
    let (ty, n) = if bits == 16 {
        (Type::B16, 1)
    } else {
        (Type::B32, (bits / 32) as usize)
    };
    let regs: Vec<Reg> = (0..n)
        .map(|_| {
            if ty == Type::B16 {
                Var::<half::f16>::uninit().to_reg()
            } else {
                Var::<u32>::uninit().to_reg()
            }
        })
        .collect();
    emit(Memory::Ld {
        space: StateSpace::Global,
        ty,
        dsts: regs.clone(),
        addr: src,
        cache: None,
        nc: false,
        order: None,
    });
    let srcs = regs
        .iter()
        .map(|&r| match pred {
            None => Operand::Reg(r),
            Some(p) => {
                let out = if ty == Type::B16 {
                    Var::<half::f16>::uninit().to_reg()
                } else {
                    Var::<u32>::uninit().to_reg()
                };
                emit(Compare::Selp {
                    ty,
                    dst: out,
                    a: Operand::Reg(r),
                    b: Operand::Imm(0),
                    cond: p.operand(),
                });
                Operand::Reg(out)
            }
        })
        .collect();
    emit(Memory::St {
        space: StateSpace::Shared,
        ty,
        srcs,
        addr: dst,
        cache: None,
        order: None,
    });
}

/// What `ldmatrix` and `stmatrix` copies check alike: 16-bit values in pairs, value groups of
/// `2n` (one `.x{n}` instruction each) on both sides, equal sizes. Returns the matrix count, the
/// group size and each group's static offset in `smem`.
fn matrix_groups<T: DeviceType>(
    op: &'static str,
    instr: &str,
    n: u32,
    smem: &STensor<T>,
    regs: &Fragment<u32>,
) -> Result<(MatrixCount, i64, Vec<i64>), LayoutError> {
    let num = match n {
        1 => MatrixCount::X1,
        2 => MatrixCount::X2,
        _ => MatrixCount::X4,
    };
    if T::TY.bits() != 16 || regs.vals_per_reg != 2 {
        return Err(bad(
            op,
            smem.layout(),
            format!("{instr} moves 16-bit values in pairs"),
        ));
    }
    let (v, offs) = group_offsets(smem.view().base, smem.layout())?;
    if v != 2 * i64::from(n) || regs.layout.mode(0)?.size() != v {
        return Err(bad(
            op,
            smem.layout(),
            format!(
                "x{n} moves {} values per thread; the groups have {v} and {}",
                2 * n,
                regs.layout
            ),
        ));
    }
    if smem.layout().size() != regs.layout.size() {
        return Err(bad(
            op,
            smem.layout(),
            format!("sizes differ from {}", regs.layout),
        ));
    }
    Ok((num, v, offs))
}

/// CuTe's `copy(s2r_tiled_copy, src, dst)` with an `ldmatrix` atom: `src` is one thread's
/// `(CPY, CPY_M, CPY_K)` shared partition (`partition_S`), `dst` the register fragment retiled to
/// the same shape (`retile_D`); each value group is one `ldmatrix.x{n}` whose register `j` holds
/// values `2j, 2j + 1` of the group.
pub fn copy_s2r<T: DeviceType>(
    atom: &CopyAtom,
    src: &STensor<T>,
    dst: &Fragment<u32>,
) -> Result<(), LayoutError> {
    let (n, trans) = match atom.op() {
        CopyOp::LdsmN { n } => (n, false),
        CopyOp::LdsmT { n } => (n, true),
        other => {
            return Err(bad(
                "copy_s2r",
                src.layout(),
                format!("{} is not an ldmatrix atom", other.cute_name()),
            ))
        }
    };
    let (num, v, so) = matrix_groups("copy_s2r", "ldmatrix", n, src, dst)?;
    // With .trans each thread's row address covers 8 values of one row; otherwise too.
    let addrs = src.addresses(&so, 8)?;
    for (i, addr) in addrs.into_iter().enumerate() {
        let dsts = (0..i64::from(n))
            .map(|j| dst.reg_at(i as i64 * v + 2 * j).map(|r| r.to_reg()))
            .collect::<Result<Vec<_>, _>>()?;
        emit(Matrix::Ldmatrix {
            num,
            trans,
            dsts,
            addr,
        });
    }
    Ok(())
}

/// CuTe's `copy(r2s_tiled_copy, src, dst)` with an `stmatrix` atom (sm_90): `src` is a register
/// fragment of 16-bit pairs retiled to the copy (`retile_S`), `dst` one thread's
/// `(CPY, CPY_M, CPY_N)` shared partition (`partition_D`); each value group is one
/// `stmatrix.x{n}` whose operand `j` holds values `2j, 2j + 1` of the group.
pub fn copy_r2s<T: DeviceType>(
    atom: &CopyAtom,
    src: &Fragment<u32>,
    dst: &STensor<T>,
) -> Result<(), LayoutError> {
    let CopyOp::StsmN { n } = atom.op() else {
        return Err(bad(
            "copy_r2s",
            dst.layout(),
            format!("{} is not an stmatrix atom", atom.op().cute_name()),
        ));
    };
    let (num, v, offs) = matrix_groups("copy_r2s", "stmatrix", n, dst, src)?;
    // Each thread's row address covers 8 values of one row of a matrix.
    let addrs = dst.addresses(&offs, 8)?;
    for (i, addr) in addrs.into_iter().enumerate() {
        let srcs = (0..i64::from(n))
            .map(|j| src.reg_at(i as i64 * v + 2 * j).map(|r| r.operand()))
            .collect::<Result<Vec<_>, _>>()?;
        emit(Matrix::Stmatrix {
            num,
            trans: false,
            addr,
            srcs,
        });
    }
    Ok(())
}

/// CuTe's `gemm(tiled_mma, acc, a, b, acc)` for one k-block: `a` is `(MMA, MMA_M)`, `b`
/// `(MMA, MMA_N)`, `acc` `(MMA, MMA_M, MMA_N)` (f16x2 pairs in u32 registers or f32 registers,
/// as [`Fragment::vals_per_reg`] says); one `mma.sync` per `(m, n)`, n outer and m serpentine as
/// CuTe orders them.
pub fn gemm<C: DeviceType>(
    mma: &TiledMma,
    acc: &Fragment<C>,
    a: &Fragment<u32>,
    b: &Fragment<u32>,
) -> Result<(), LayoutError> {
    let (_, ab, _, cv) = mma.atom.val_types();
    let ab_ty = match ab.bits() {
        16 if ab == crate::atom::ValType::BF16 => Type::BF16,
        _ => Type::F16,
    };
    let acc_ty = if cv == crate::atom::ValType::F32 {
        Type::F32
    } else {
        Type::F16
    };
    let (va, vb, vc) = (
        a.layout.mode(0)?.size(),
        b.layout.mode(0)?.size(),
        acc.layout.mode(0)?.size(),
    );
    let (mm, nn) = (a.layout.mode(1)?.size(), b.layout.mode(1)?.size());
    if acc.layout.mode(1)?.size() != mm || acc.layout.mode(2)?.size() != nn {
        return Err(bad(
            "gemm",
            &acc.layout,
            format!("does not match A {} and B {}", a.layout, b.layout),
        ));
    }
    for n in 0..nn {
        for mi in 0..mm {
            let m = if n % 2 == 1 { mm - 1 - mi } else { mi };
            let ar = (0..va / 2)
                .map(|j| a.reg_at(m * va + 2 * j).map(|r| r.to_reg()))
                .collect::<Result<Vec<_>, _>>()?;
            let br = (0..vb / 2)
                .map(|j| b.reg_at(n * vb + 2 * j).map(|r| r.to_reg()))
                .collect::<Result<Vec<_>, _>>()?;
            let step = acc.vals_per_reg;
            let cr = (0..vc / step)
                .map(|j| acc.reg_at((n * mm + m) * vc + step * j).map(|r| r.to_reg()))
                .collect::<Result<Vec<_>, _>>()?;
            emit(MmaSync {
                ab_ty,
                acc_ty,
                d: cr.clone(),
                a: ar,
                b: br,
                c: cr.into_iter().map(Operand::Reg).collect(),
            });
        }
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
pub fn store_fragment<C: DeviceType, T: DeviceType>(
    acc: &Fragment<C>,
    dst: &GTensor<T>,
) -> Result<(), LayoutError> {
    if acc.layout.size() != dst.layout().size() || T::TY.bits() != 16 {
        return Err(bad(
            "store_fragment",
            &acc.layout,
            format!("does not match the 16-bit output {}", dst.layout()),
        ));
    }
    let n = dst.layout().size();
    let offs = (0..n)
        .map(|i| Ok(dst.base() + dst.layout().eval(i)?))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    let singles = dst.accesses(&offs, 1, false)?;
    let aligned = dst.aligned_to(4);
    let vals = (0..n)
        .map(|i| acc.value(i))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    let reg_of = |v: i64| acc.regs[(v / acc.vals_per_reg) as usize];
    // The 16-bit value of accumulator value `v`.
    let half_of = |v: i64| -> Reg {
        let reg = reg_of(v).to_reg();
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
    };
    let st = |ty: Type, value: Reg, addr: Address| {
        emit(Memory::St {
            space: StateSpace::Global,
            ty,
            srcs: vec![Operand::Reg(value)],
            addr,
            cache: None,
            order: None,
        })
    };
    let single = |i: usize| {
        let a = &singles[i];
        let v = vals[i];
        match a.pred {
            Some(p) => p.if_(|_| st(Type::B16, half_of(v), a.addr.clone())),
            None => st(Type::B16, half_of(v), a.addr.clone()),
        }
    };
    let mut i = 0usize;
    while i < n as usize {
        let pairable = i + 1 < n as usize
            && offs[i + 1] == offs[i] + 1
            && offs[i] % 2 == 0
            && vals[i + 1] == vals[i] + 1
            && vals[i] % acc.vals_per_reg.max(2) == 0;
        if !pairable {
            single(i);
            i += 1;
            continue;
        }
        let pair = dst.accesses(&offs[i..i + 1], 2, false)?.remove(0);
        let ok = match pair.pred {
            Some(p) => p & aligned,
            None => aligned,
        };
        let (v0, j) = (vals[i], i);
        ok.if_else(|arm| match arm {
            Arm::Then => {
                let packed = if acc.vals_per_reg == 2 {
                    reg_of(v0).to_reg()
                } else {
                    pack_pair::<T>(
                        Var::from_reg(reg_of(v0).to_reg()),
                        Var::from_reg(reg_of(v0 + 1).to_reg()),
                    )
                };
                st(Type::B32, packed, pair.addr.clone());
            }
            Arm::Else => {
                single(j);
                single(j + 1);
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
/// tile, one 32-bit store per accumulator pair.
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
    let mut offs = Vec::new();
    let mut packed = Vec::new();
    for i in (0..n).step_by(2) {
        let (o0, o1) = (dst.layout().eval(i)?, dst.layout().eval(i + 1)?);
        let (v0, v1) = (acc.value(i)?, acc.value(i + 1)?);
        if o1 != o0 + 1 || v1 != v0 + 1 || v0 % 2 != 0 {
            return Err(bad(
                "store_fragment_smem",
                &acc.layout,
                format!("values {i}, {} are not a pair in {}", i + 1, dst.layout()),
            ));
        }
        offs.push(base + o0);
        packed.push(if acc.vals_per_reg == 2 {
            acc.regs[(v0 / 2) as usize].to_reg()
        } else {
            pack_pair::<T>(
                Var::from_reg(acc.regs[v0 as usize].to_reg()),
                Var::from_reg(acc.regs[v1 as usize].to_reg()),
            )
        });
    }
    for (addr, r) in dst.addresses(&offs, 2)?.into_iter().zip(packed) {
        emit(Memory::St {
            space: StateSpace::Shared,
            ty: Type::B32,
            srcs: vec![Operand::Reg(r)],
            addr,
            cache: None,
            order: None,
        });
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
    if atom.op() != (CopyOp::UniversalCopy { bits: 128 }) || T::TY.bits() != 16 {
        return Err(bad(
            "copy_s2g",
            src.layout(),
            format!(
                "{} is not UniversalCopy<uint128_t> of 16-bit values",
                atom.op().cute_name()
            ),
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
