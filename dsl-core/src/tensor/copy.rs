//! `copy`, `gemm`, `clear` and the `cp.async` group fences on device tensors.

use super::{Fragment, GTensor, STensor};
use crate::atom::{CopyAtom, CopyOp};
use crate::ir::op::{CpAsync, CpAsyncCache, Data, Matrix, MatrixCount, Memory, MmaSync};
use crate::ir::{Operand, StateSpace, Type};
use crate::kernel::{emit, select, Cond, DeviceType, Var};
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

/// Mode 0 must be `n` consecutive elements (`n:1` after coalescing).
fn check_contiguous(op: &'static str, l: &Layout, n: i64) -> Result<(), LayoutError> {
    let m = l.mode(0)?;
    let ok = m.size() == n && (0..n).all(|i| m.eval(i).ok() == Some(i));
    if ok {
        Ok(())
    } else {
        Err(bad(
            op,
            l,
            format!("mode 0 is not {n} consecutive elements"),
        ))
    }
}

/// CuTe's `copy(tiled_copy, src, dst)` from global to shared memory with a `cp.async` atom:
/// `src` and `dst` are one thread's `(CPY, CPY_M, CPY_K, ...)` partitions of the same shape; each
/// value group (mode 0) is one `cp.async` of the atom's width. Where `src` has bounds, a group
/// outside them reads nothing and zero-fills its destination (source size 0).
pub fn copy_g2s<T: DeviceType>(
    atom: &CopyAtom,
    src: &GTensor<T>,
    dst: &STensor<T>,
) -> Result<(), LayoutError> {
    let (bits, cache) = match atom.op() {
        CopyOp::CpAsyncCacheGlobal { bits } => (bits, CpAsyncCache::Cg),
        CopyOp::CpAsyncCacheAlways { bits } => (bits, CpAsyncCache::Ca),
        other => {
            return Err(bad(
                "copy_g2s",
                src.layout(),
                format!("{} is not a cp.async atom", other.cute_name()),
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
    check_contiguous("copy_g2s", src.layout(), vec)?;
    check_contiguous("copy_g2s", dst.layout(), vec)?;
    let (_, so) = group_offsets(src.base(), src.layout())?;
    let (_, d_off) = group_offsets(dst.view().base, dst.layout())?;
    let srcs = src.accesses(&so, vec)?;
    let dsts = dst.addresses(&d_off, vec)?;
    for (s, d) in srcs.into_iter().zip(dsts) {
        let src_size = s.pred.map(|p| select(p, bytes, 0u32).operand());
        emit(CpAsync::Copy {
            cache,
            bytes,
            dst: d,
            src: s.addr,
            src_size,
        });
    }
    Ok(())
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
    let num = match n {
        1 => MatrixCount::X1,
        2 => MatrixCount::X2,
        _ => MatrixCount::X4,
    };
    if T::TY.bits() != 16 || dst.vals_per_reg != 2 {
        return Err(bad(
            "copy_s2r",
            src.layout(),
            "ldmatrix moves 16-bit values in pairs",
        ));
    }
    let (v, so) = group_offsets(src.view().base, src.layout())?;
    if v != 2 * i64::from(n) || dst.layout.mode(0)?.size() != v {
        return Err(bad(
            "copy_s2r",
            src.layout(),
            format!(
                "x{n} moves {} values per thread; the groups have {v} and {}",
                2 * n,
                dst.layout
            ),
        ));
    }
    if src.layout().size() != dst.layout.size() {
        return Err(bad(
            "copy_s2r",
            src.layout(),
            format!("sizes differ from {}", dst.layout),
        ));
    }
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
    let offs = (0..dst.layout().size())
        .map(|i| Ok(dst.base() + dst.layout().eval(i)?))
        .collect::<Result<Vec<_>, LayoutError>>()?;
    let accs = dst.accesses(&offs, 1)?;
    let mut unpacked: std::collections::BTreeMap<u32, [crate::ir::Reg; 2]> = Default::default();
    for (i, a) in accs.into_iter().enumerate() {
        let v = acc.value(i as i64)?;
        let reg = acc.regs[(v / acc.vals_per_reg) as usize];
        let out = if acc.vals_per_reg == 2 {
            let r = reg.to_reg();
            let halves = *unpacked.entry(r.id).or_insert_with(|| {
                let lo = Var::<half::f16>::uninit().to_reg();
                let hi = Var::<half::f16>::uninit().to_reg();
                emit(Data::Unpack {
                    dsts: vec![lo, hi],
                    src: r,
                });
                [lo, hi]
            });
            halves[(v % 2) as usize]
        } else {
            let f: Var<f32> = Var::from_reg(reg.to_reg());
            if T::TY == Type::BF16 {
                f.cast::<half::bf16>().to_reg()
            } else {
                f.cast::<half::f16>().to_reg()
            }
        };
        let st = |addr| {
            emit(Memory::St {
                space: StateSpace::Global,
                ty: Type::B16,
                srcs: vec![Operand::Reg(out)],
                addr,
                cache: None,
                order: None,
            })
        };
        match a.pred {
            Some(p) => p.if_(|_| st(a.addr.clone())),
            None => st(a.addr),
        }
    }
    Ok(())
}
