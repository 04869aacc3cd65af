//! `gemm` on device fragments, and the GMMA descriptor fragments and warpgroup fences of
//! Hopper's asynchronous MMA.

use super::{Fragment, STensor};
use crate::atom::gmma::{make_gmma_desc, GmmaMajor};
use crate::atom::{Accumulate, MmaCall, MmaSource, MmaSourceKind};
use crate::ir::op::Wgmma;
use crate::kernel::{emit, DeviceType, Var};
use crate::layout::{ComposedLayout, Layout, LayoutError};
use crate::tiled::TiledMma;

fn bad(op: &'static str, l: &Layout, msg: impl Into<String>) -> LayoutError {
    LayoutError::precondition(op, l.to_string(), msg.into())
}

/// An MMA operand fragment: `(MMA, MMA_M|N[, MMA_K])`, one instruction's worth of values in
/// mode 0, instruction `(i, k)` at coordinate `(_, i, k)`.
pub trait MmaOperand {
    /// The fragment's layout.
    fn fragment_layout(&self) -> &Layout;
    /// The operand of instruction `(i, k)`.
    fn source(&self, i: i64, k: i64) -> Result<MmaSource, LayoutError>;
    /// Where it comes from (registers or a descriptor), to check against the atom.
    fn kind(&self) -> MmaSourceKind;
}

impl MmaOperand for Fragment<u32> {
    fn fragment_layout(&self) -> &Layout {
        &self.layout
    }
    fn source(&self, i: i64, k: i64) -> Result<MmaSource, LayoutError> {
        let v = self.layout.mode(0)?.size();
        let mm = self.layout.mode(1)?.size();
        let first = v * (i + mm * k);
        let regs = (0..v / self.vals_per_reg)
            .map(|j| {
                self.reg_at(first + self.vals_per_reg * j)
                    .map(|r| r.to_reg())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MmaSource::Registers(regs))
    }
    fn kind(&self) -> MmaSourceKind {
        MmaSourceKind::Registers
    }
}

/// CuTe's GMMA descriptor fragment (`make_fragment_A/B` of a shared partition with a GMMA atom,
/// `GMMA::DescriptorIterator`): one 64-bit matrix descriptor per instruction, all sharing the
/// static fields [`make_gmma_desc`] computes from the first block, each starting at its block's
/// (unswizzled) address.
///
/// Made by [`DescriptorFragment::new`] from one thread's `(MMA, MMA_M|N, MMA_K)` partition of a
/// shared tile in a canonical GMMA layout (`gmma_atom` tiled with `tile_to_shape`), the pipeline
/// stage already sliced away. The descriptor of the first block is computed once in a register
/// (`static | address >> 4`); every other block adds its static offset (in 16-byte units) to it,
/// which ptxas folds into one 64-bit add.
#[derive(Clone, Debug)]
pub struct DescriptorFragment {
    base: Var<u64>,
    layout: Layout,
    elem_bytes: i64,
    major: GmmaMajor,
}

impl DescriptorFragment {
    /// The descriptors of `part` (`(MMA, MMA_M|N, MMA_K)` of a shared tile), whose blocks are
    /// `major`-major.
    ///
    /// Errors: the block is not a canonical GMMA layout ([`make_gmma_desc`]'s sentence), the
    /// first block does not start on a swizzle-pattern boundary (its descriptor's base offset
    /// would not be 0), or a block's offset is not a multiple of 16 bytes.
    pub fn new<T: DeviceType>(part: &STensor<T>, major: GmmaMajor) -> Result<Self, LayoutError> {
        let layout = part.layout().clone();
        let elem_bytes = i64::from(T::TY.bytes());
        let block = ComposedLayout::new(part.swizzle(), 0, layout.mode(0)?);
        let desc = make_gmma_desc(major, &block, elem_bytes)?;
        let period = part.period();
        if part.view().base % period != 0 || part.inner_align() % period != 0 {
            return Err(bad(
                "make_gmma_desc",
                &layout,
                format!(
                    "the first block starts at element {} (+ thread offsets aligned to {}) inside \
                     a swizzle pattern of {period} elements; descriptors here start on a pattern",
                    part.view().base,
                    part.inner_align()
                ),
            ));
        }
        let origin = part.unswizzled_origin_bytes();
        let start = ((origin >> 4u32) & 0x3FFFu32).cast::<u64>();
        let base = Var::konst(desc.static_bits()) | start;
        Ok(DescriptorFragment {
            base,
            layout,
            elem_bytes,
            major,
        })
    }

    /// The descriptor of block `(i, k)`.
    pub fn at(&self, i: i64, k: i64) -> Result<Var<u64>, LayoutError> {
        let mm = self.layout.mode(1)?;
        let offset = if self.layout.rank() > 2 {
            mm.eval(i)? + self.layout.mode(2)?.eval(k)?
        } else if k == 0 {
            mm.eval(i)?
        } else {
            return Err(bad("gemm", &self.layout, format!("has no k-block {k}")));
        };
        let bytes = offset * self.elem_bytes;
        if bytes % 16 != 0 {
            return Err(bad(
                "gemm",
                &self.layout,
                format!("block ({i}, {k}) starts {bytes} bytes in, not a multiple of 16"),
            ));
        }
        Ok(if bytes == 0 {
            self.base
        } else {
            self.base + (bytes / 16) as u64
        })
    }
}

impl MmaOperand for DescriptorFragment {
    fn fragment_layout(&self) -> &Layout {
        &self.layout
    }
    fn source(&self, i: i64, k: i64) -> Result<MmaSource, LayoutError> {
        Ok(MmaSource::Descriptor(self.at(i, k)?))
    }
    fn kind(&self) -> MmaSourceKind {
        MmaSourceKind::Descriptor(self.major)
    }
}

/// The instructions `a` and `b` make for `mma`, `(MMA_M, MMA_N, A's MMA_K, B's MMA_K)`, once
/// the fragments are checked to be what the atom reads (registers or descriptors); `op` and
/// `acc` (the accumulator's layout) name the call in the error.
pub(crate) fn instruction_grid(
    op: &'static str,
    mma: &TiledMma,
    acc: &Layout,
    a: &impl MmaOperand,
    b: &impl MmaOperand,
) -> Result<(i64, i64, i64, i64), LayoutError> {
    let (sa, sb) = mma.atom.sources();
    if (a.kind(), b.kind()) != (sa, sb) {
        return Err(bad(
            op,
            acc,
            format!(
                "{} reads A from {sa:?} and B from {sb:?}; the fragments are {:?} and {:?}",
                mma.atom.name(),
                a.kind(),
                b.kind()
            ),
        ));
    }
    let (al, bl) = (a.fragment_layout(), b.fragment_layout());
    let (mm, nn) = (al.mode(1)?.size(), bl.mode(1)?.size());
    let kk = if al.rank() > 2 { al.mode(2)?.size() } else { 1 };
    let kb = if bl.rank() > 2 { bl.mode(2)?.size() } else { 1 };
    Ok((mm, nn, kk, kb))
}

/// CuTe's `gemm(tiled_mma, acc, a, b, acc)`: `a` is `(MMA, MMA_M[, MMA_K])`, `b`
/// `(MMA, MMA_N[, MMA_K])`, `acc` `(MMA, MMA_M, MMA_N)` (f16 pairs in u32 registers or f32
/// registers, as [`Fragment::vals_per_reg`] says); one atom call per `(m, n, k)`: k outer, then n,
/// m serpentine, as CuTe orders them. Every instruction accumulates.
pub fn gemm<C: DeviceType>(
    mma: &TiledMma,
    acc: &Fragment<C>,
    a: &impl MmaOperand,
    b: &impl MmaOperand,
) -> Result<(), LayoutError> {
    gemm_accumulate(mma, acc, a, b, Accumulate::Yes)
}

/// [`gemm`] whose first k-block accumulates as `first` says (`Accumulate::No` overwrites the
/// accumulators: the first k-tile of an output tile, without clearing them), the others adding.
/// Only atoms that can overwrite take `No` (GMMA; `mma.sync` always adds).
pub fn gemm_accumulate<C: DeviceType>(
    mma: &TiledMma,
    acc: &Fragment<C>,
    a: &impl MmaOperand,
    b: &impl MmaOperand,
    first: Accumulate,
) -> Result<(), LayoutError> {
    let (mm, nn, kk, kb) = instruction_grid("gemm", mma, &acc.layout, a, b)?;
    let (al, bl) = (a.fragment_layout(), b.fragment_layout());
    if acc.layout.mode(1)?.size() != mm || acc.layout.mode(2)?.size() != nn || kk != kb {
        return Err(bad(
            "gemm",
            &acc.layout,
            format!("does not match A {al} and B {bl}"),
        ));
    }
    let vc = acc.layout.mode(0)?.size();
    let step = acc.vals_per_reg;
    for k in 0..kk {
        let accumulate = if k == 0 { first } else { Accumulate::Yes };
        for n in 0..nn {
            for mi in 0..mm {
                let m = if n % 2 == 1 { mm - 1 - mi } else { mi };
                let d = (0..vc / step)
                    .map(|j| acc.reg_at((n * mm + m) * vc + step * j).map(|r| r.to_reg()))
                    .collect::<Result<Vec<_>, _>>()?;
                mma.atom.call(&MmaCall {
                    d,
                    a: a.source(m, k)?,
                    b: b.source(n, k)?,
                    accumulate,
                })?;
            }
        }
    }
    Ok(())
}

/// CuTe's `warpgroup_arrive()`: `wgmma.fence`, ordering this warpgroup's register and shared
/// memory accesses before the `wgmma` that follow (before the first MMA of a tile, and whenever
/// registers an MMA reads were written since).
pub fn warpgroup_arrive() {
    emit(Wgmma::Fence);
}

/// CuTe's `warpgroup_commit_batch()`: `wgmma.commit_group`, closing a group of `wgmma` issued
/// since the last one.
pub fn warpgroup_commit_batch() {
    emit(Wgmma::CommitGroup);
}

/// CuTe's `warpgroup_wait<N>()`: `wgmma.wait_group N`, until at most `N` groups are in flight
/// (their accumulators and shared operands may be touched once their group retired).
pub fn warpgroup_wait<const N: u32>() {
    emit(Wgmma::WaitGroup(N));
}
