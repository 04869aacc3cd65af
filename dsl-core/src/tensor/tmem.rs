//! Tensors in tensor memory (TMEM, sm_100a): a TMEM address and a layout from coordinates to
//! TMEM offsets in the address's own encoding, lane `<< 16 | column` (32-bit columns): CuTe's
//! `tmem_ptr` tensors. [`TTensor::accumulator`] lays out an MMA's accumulator as the hardware
//! writes it ([`TmemAccumulator`], CuTe's `tmem_frg`); slicing and [`TTensor::local_tile`] cut
//! it; [`tmem_load`] and [`tmem_store`] move a warp's tile between TMEM and registers with a
//! [`TmemCopy`] atom; the fences order TMEM accesses around thread synchronization.
//!
//! A warp reaches a quarter of the lanes (warp `w` of a warpgroup lanes `32 (w % 4) ..`), so an
//! epilogue warpgroup gives each warp the rows of its quarter:
//!
//! ```
//! use dsl_core::atom::{TmemCopy, TmemDirection, Umma, ValType};
//! use dsl_core::ir::op::{CtaGroup, TmemShape};
//! use dsl_core::kernel::*;
//! use dsl_core::tensor::{tmem_load, tmem_wait_ld, Fragment, Idx, TTensor};
//! build_kernel("epilogue", |kb| {
//!     let base = kb.param::<u32>("tmem");
//!     let mma = Umma::ss(128, 256, CtaGroup::One, ValType::F32, ValType::F16);
//!     // (128 rows, 256 columns, 1 tile): row r in lane r, column c in column c.
//!     let acc = TTensor::accumulator(base, &mma, 1).unwrap();
//!     let acc = acc.slice(&[Idx::All, Idx::All, Idx::At(0)]).unwrap();
//!     let warp = thread_idx_x() / 32u32;
//!     // This warp's 32 rows, columns 64..128.
//!     let tile = acc.local_tile(&[32, 64], &[Idx::Dyn(warp), Idx::At(1)]).unwrap();
//!     let atom = TmemCopy::new(TmemDirection::Load, TmemShape::S32x32b, 64);
//!     let regs = Fragment::<f32>::new("64:1".parse().unwrap(), 1).unwrap();
//!     tmem_load(&atom, &tile, &regs).unwrap();
//!     tmem_wait_ld();
//! })
//! .unwrap();
//! ```

use super::dyn_eval::{add, eval_dyn};
use super::{Fragment, Idx};
use crate::atom::{TmemCopy, Umma};
use crate::ir::op::{CtaGroup, Tcgen05};
use crate::kernel::{emit, DeviceType, Var};
use crate::layout::{IntTuple, Layout, LayoutError};
use crate::tiled::{local_tile, View};

/// A TMEM lane in the address encoding: lanes are bits 16-31.
pub const TMEM_LANE: i64 = 1 << 16;

/// TMEM lanes of a block.
pub const TMEM_LANES: u32 = 128;

/// TMEM columns of a block (32-bit each).
pub const TMEM_COLUMNS: u32 = 512;

/// How an MMA's accumulator lies in a block's TMEM (CuTe's `tmem_frg` for the UMMA atoms; PTX
/// ISA 9.7.16.10, "Data path layout organization").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmemAccumulator {
    /// All 128 lanes, one row each: one block's M = 128, or each block's 128 rows of a pair's
    /// M = 256.
    Rows128,
    /// One block's M = 64: rows in lanes `0..16` of each warp's quarter (row `r` in lane
    /// `r % 16 + 32 (r / 16)`).
    Rows64,
    /// Each block's 64 rows of a pair's M = 128: the first half of N in lanes `0..64`, the
    /// second in lanes `64..128`.
    Rows64Split,
}

impl TmemAccumulator {
    /// The layout of one instruction's D tile as the block holds it: `(rows, n) ->` TMEM offset.
    pub fn tile(self, n: u32) -> Result<Layout, LayoutError> {
        let n = i64::from(n);
        let l = TMEM_LANE;
        match self {
            TmemAccumulator::Rows128 => {
                Layout::new(IntTuple::ints(&[128, n]), IntTuple::ints(&[l, 1]))
            }
            TmemAccumulator::Rows64 => format!("((16,4),{n}):(({l},{}),1)", 32 * l).parse(),
            TmemAccumulator::Rows64Split => {
                format!("(64,({},2)):({l},(1,{}))", n / 2, 64 * l).parse()
            }
        }
    }

    /// The layout of `mma`'s accumulator in a block of its group.
    pub fn of(mma: &Umma) -> TmemAccumulator {
        match (mma.cta_group, mma.m) {
            (CtaGroup::One, 64) => TmemAccumulator::Rows64,
            (CtaGroup::Two, 128) => TmemAccumulator::Rows64Split,
            _ => TmemAccumulator::Rows128,
        }
    }

    /// TMEM columns one instruction's D tile takes.
    pub fn columns(self, n: u32) -> u32 {
        match self {
            TmemAccumulator::Rows128 | TmemAccumulator::Rows64 => n,
            TmemAccumulator::Rows64Split => n / 2,
        }
    }
}

/// A tensor in TMEM: the element at coordinate `i` is at TMEM address `address + layout(i)`, with
/// `address` a register (the allocation's base plus device offsets) and the offsets in the
/// address's encoding ([`TMEM_LANE`] per lane, 1 per 32-bit column).
#[derive(Clone, Debug)]
pub struct TTensor {
    address: Var<u32>,
    view: View,
}

impl TTensor {
    /// A tensor at TMEM address `address` (from the allocation: [`crate::pipeline::TmemAllocation`])
    /// through `layout`.
    pub fn new(address: Var<u32>, layout: Layout) -> TTensor {
        TTensor {
            address,
            view: View::from(layout),
        }
    }

    /// `tiles` accumulators of `mma` side by side along the columns, from `address`: `(rows, n,
    /// tiles)` as this block holds them (a pair's block: its rows), tile `j` starting
    /// [`TmemAccumulator::columns`]` * j` columns further. Errors where they do not fit the
    /// block's 512 columns.
    pub fn accumulator(address: Var<u32>, mma: &Umma, tiles: u32) -> Result<TTensor, LayoutError> {
        let acc = TmemAccumulator::of(mma);
        let cols = acc.columns(mma.n);
        if cols * tiles > TMEM_COLUMNS {
            return Err(LayoutError::precondition(
                "TTensor::accumulator",
                format!("{tiles} x {}", crate::atom::MmaOperation::name(mma)),
                format!("{tiles} accumulators of {cols} columns do not fit TMEM's {TMEM_COLUMNS}"),
            ));
        }
        let tile = acc.tile(mma.n)?;
        let tiles_mode = Layout::new(
            IntTuple::Int(i64::from(tiles)),
            IntTuple::Int(i64::from(cols)),
        )?;
        let mut modes = tile.modes();
        modes.push(tiles_mode);
        Ok(TTensor::new(address, Layout::from_modes(modes)))
    }

    /// The layout: coordinate -> TMEM offset from [`TTensor::address`].
    pub fn layout(&self) -> &Layout {
        &self.view.layout
    }

    /// The TMEM address of the tensor's first element (static offsets folded in).
    pub fn address(&self) -> Var<u32> {
        add(self.address, Var::konst(self.view.base as u32))
    }

    /// The TMEM address of the element at flat coordinate `i`.
    pub fn address_of(&self, i: i64) -> Result<Var<u32>, LayoutError> {
        Ok(self.address_of_offset(self.view.layout.eval(i)?))
    }

    /// The TMEM address `offset` (a value of the layout) past the tensor's origin.
    pub(crate) fn address_of_offset(&self, offset: i64) -> Var<u32> {
        add(self.address, Var::konst((self.view.base + offset) as u32))
    }

    /// CuTe's slicing: [`Idx::At`] folds into the static offset, [`Idx::Dyn`] adds its offset to
    /// the address register (the value must be below the mode's extent), [`Idx::All`] keeps the
    /// mode; missing trailing items are [`Idx::All`].
    pub fn slice(&self, coord: &[Idx]) -> Result<TTensor, LayoutError> {
        self.with_view(self.view.slice(coord)?, coord)
    }

    /// CuTe's `local_tile(tensor, tile, coord)`: the tensor cut into tiles of `tile` (one extent
    /// per mode), and the tile at `coord` (one item per mode; [`Idx::All`] keeps the tiles along
    /// that mode as a trailing mode).
    pub fn local_tile(&self, tile: &[i64], coord: &[Idx]) -> Result<TTensor, LayoutError> {
        self.with_view(local_tile(&self.view, tile, coord)?, coord)
    }

    /// The tensor of view `v`, its dynamic indices (those `coord` added, in order) folded into
    /// the address: TMEM has no swizzle, so every offset adds.
    fn with_view(&self, v: View, coord: &[Idx]) -> Result<TTensor, LayoutError> {
        let devices = coord.iter().filter_map(|c| match c {
            Idx::Dyn(x) => Some(*x),
            _ => None,
        });
        let mut address = self.address;
        for (index, x) in v.indices.iter().zip(devices) {
            address = add(address, eval_dyn(index, x, index.size())?);
        }
        Ok(TTensor {
            address,
            view: View {
                indices: Vec::new(),
                ..v
            },
        })
    }
}

fn bad(op: &'static str, l: &Layout, why: impl Into<String>) -> LayoutError {
    LayoutError::precondition(op, l.to_string(), why.into())
}

/// The instruction addresses of `atom` over a warp's TMEM `tile`: `(lanes, columns)`, its lanes
/// the atom's, consecutive (stride [`TMEM_LANE`]), and its columns a multiple of the atom's,
/// consecutive; one address per instruction, in column order.
fn instructions(atom: &TmemCopy, tile: &TTensor) -> Result<Vec<Var<u32>>, LayoutError> {
    let l = tile.layout();
    let (lanes, cols) = (i64::from(atom.lanes()), i64::from(atom.columns()));
    if l.rank() != 2 {
        return Err(bad("tmem copy", l, "a warp's tile is (lanes, columns)"));
    }
    let (lm, cm) = (l.mode(0)?, l.mode(1)?);
    let consecutive = |m: &Layout, step: i64| -> Result<bool, LayoutError> {
        for i in 0..m.size() {
            if m.eval(i)? != i * step {
                return Ok(false);
            }
        }
        Ok(true)
    };
    if lm.size() != lanes || !consecutive(&lm, TMEM_LANE)? {
        return Err(bad(
            "tmem copy",
            l,
            format!(
                "{} moves {lanes} consecutive lanes; the tile's rows are {lm}",
                atom.name()
            ),
        ));
    }
    if cm.size() % cols != 0 || !consecutive(&cm, 1)? {
        return Err(bad(
            "tmem copy",
            l,
            format!(
                "{} moves {cols} consecutive columns at a time; the tile's columns are {cm}",
                atom.name()
            ),
        ));
    }
    (0..cm.size() / cols)
        .map(|j| tile.address_of(lanes * cols * j))
        .collect()
}

/// The registers of `frag` in value order, 32-bit each.
fn words<R: DeviceType>(frag: &Fragment<R>) -> Result<Vec<crate::ir::Reg>, LayoutError> {
    if R::TY.bits() != 32 || frag.vals_per_reg != 1 {
        return Err(bad(
            "tmem copy",
            &frag.layout,
            "TMEM columns are 32-bit: one value per 32-bit register",
        ));
    }
    (0..frag.layout.size())
        .map(|i| frag.reg_at(i).map(|r| r.to_reg()))
        .collect()
}

/// CuTe's `copy(tmem_load_atom, tmem, regs)` for one warp: `tile` is the warp's `(lanes,
/// columns)` TMEM tile (its lanes in the warp's quarter), `dst` the thread's registers, as many
/// as `atom`'s per instruction times the instructions; instruction `j` moves columns
/// `j * atom.columns()..` into registers `j * atom.regs()..` ([`TmemCopy::thread_values`] says
/// which lane and column each is). Wait with [`tmem_wait_ld`] before reading them.
pub fn tmem_load<R: DeviceType>(
    atom: &TmemCopy,
    tile: &TTensor,
    dst: &Fragment<R>,
) -> Result<(), LayoutError> {
    tmem_copy(atom, tile, dst, crate::atom::TmemDirection::Load)
}

/// The store of [`tmem_load`]: `src`'s registers into the warp's TMEM `tile`. Wait with
/// [`tmem_wait_st`] before the registers are written again.
pub fn tmem_store<R: DeviceType>(
    atom: &TmemCopy,
    src: &Fragment<R>,
    tile: &TTensor,
) -> Result<(), LayoutError> {
    tmem_copy(atom, tile, src, crate::atom::TmemDirection::Store)
}

fn tmem_copy<R: DeviceType>(
    atom: &TmemCopy,
    tile: &TTensor,
    frag: &Fragment<R>,
    dir: crate::atom::TmemDirection,
) -> Result<(), LayoutError> {
    if atom.dir != dir {
        return Err(bad(
            "tmem copy",
            tile.layout(),
            format!("{} moves the other way", atom.name()),
        ));
    }
    let addrs = instructions(atom, tile)?;
    let regs = words(frag)?;
    let per = atom.regs();
    if regs.len() != per * addrs.len() {
        return Err(bad(
            "tmem copy",
            &frag.layout,
            format!(
                "{} instructions of {} take {} registers per thread",
                addrs.len(),
                atom.name(),
                per * addrs.len()
            ),
        ));
    }
    for (a, r) in addrs.into_iter().zip(regs.chunks(per)) {
        atom.call(a, r)?;
    }
    Ok(())
}

/// `tcgen05.wait::ld`: this thread's TMEM loads issued so far have written their registers.
pub fn tmem_wait_ld() {
    emit(Tcgen05::WaitLd);
}

/// `tcgen05.wait::st`: this thread's TMEM stores issued so far have read their registers.
pub fn tmem_wait_st() {
    emit(Tcgen05::WaitSt);
}

/// `tcgen05.fence::before_thread_sync`: this thread's tcgen05 operations before it are ordered
/// before the thread synchronization that follows (an mbarrier arrival, a barrier): what a
/// thread that read the accumulator runs before it tells the MMA that TMEM is free.
pub fn tmem_fence_before_sync() {
    emit(Tcgen05::FenceBeforeThreadSync);
}

/// `tcgen05.fence::after_thread_sync`: this thread's tcgen05 operations after it are ordered
/// after the thread synchronization before it (an mbarrier wait, a barrier): what a thread runs
/// after waiting for the MMA's commit and before it reads the accumulator.
pub fn tmem_fence_after_sync() {
    emit(Tcgen05::FenceAfterThreadSync);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{TmemDirection, ValType};
    use crate::ir::op::TmemShape;
    use crate::ir::{for_each_instr, Op};
    use crate::kernel::build_kernel;

    fn lane_col(off: i64) -> (i64, i64) {
        (off / TMEM_LANE, off % TMEM_LANE)
    }

    /// CuTe's `tmem_frg` atoms, entry by entry.
    #[test]
    fn accumulators_lie_as_the_hardware_writes_them() {
        let t = TmemAccumulator::Rows128.tile(64).unwrap();
        assert_eq!(
            lane_col(t.crd2idx(&IntTuple::ints(&[77, 5])).unwrap()),
            (77, 5)
        );
        let t = TmemAccumulator::Rows64.tile(32).unwrap();
        for (r, lane) in [(0, 0), (15, 15), (16, 32), (33, 65), (63, 111)] {
            let off = t.crd2idx(&IntTuple::ints(&[r, 3])).unwrap();
            assert_eq!(lane_col(off), (lane, 3), "row {r}");
        }
        let t = TmemAccumulator::Rows64Split.tile(128).unwrap();
        assert_eq!(
            lane_col(t.crd2idx(&IntTuple::ints(&[5, 63])).unwrap()),
            (5, 63)
        );
        assert_eq!(
            lane_col(t.crd2idx(&IntTuple::ints(&[5, 64])).unwrap()),
            (69, 0)
        );
        let one = Umma::ss(64, 8, CtaGroup::One, ValType::F32, ValType::F16);
        assert_eq!(TmemAccumulator::of(&one), TmemAccumulator::Rows64);
        let pair = Umma::ss(256, 256, CtaGroup::Two, ValType::F32, ValType::F16);
        assert_eq!(TmemAccumulator::of(&pair), TmemAccumulator::Rows128);
    }

    #[test]
    fn two_accumulators_side_by_side_and_no_more_than_fit() {
        build_kernel("acc", |kb| {
            let base = kb.param::<u32>("tmem");
            let mma = Umma::ss(256, 256, CtaGroup::Two, ValType::F32, ValType::F16);
            let acc = TTensor::accumulator(base, &mma, 2).unwrap();
            assert_eq!(acc.layout().to_string(), "(128,256,2):(65536,1,256)");
            let second = acc.slice(&[Idx::All, Idx::All, Idx::At(1)]).unwrap();
            assert_eq!(second.address_of(0).unwrap().as_const(), None);
            assert!(TTensor::accumulator(base, &mma, 3).is_err());
        })
        .unwrap();
    }

    /// A warp's 32 x 128 tile is one `32x32b.x128` or four `.x32`, at columns 0, 32, 64, 96
    /// past the warp's first lane.
    #[test]
    fn a_warp_tile_is_cut_into_instructions() {
        let k = build_kernel("ld", |kb| {
            let base = kb.param::<u32>("tmem");
            let acc = TTensor::new(base, "(128,256):(65536,1)".parse().unwrap());
            let warp = kb.param::<u32>("warp");
            let tile = acc
                .local_tile(&[32, 128], &[Idx::Dyn(warp), Idx::At(1)])
                .unwrap();
            assert_eq!(tile.layout().to_string(), "(32,128):(65536,1)");
            let atom = TmemCopy::new(TmemDirection::Load, TmemShape::S32x32b, 32);
            let regs = Fragment::<f32>::new("128:1".parse().unwrap(), 1).unwrap();
            tmem_load(&atom, &tile, &regs).unwrap();
            let wrong = TmemCopy::new(TmemDirection::Load, TmemShape::S16x256b, 1);
            assert!(tmem_load(&wrong, &tile, &regs).is_err());
            let store = TmemCopy::new(TmemDirection::Store, TmemShape::S32x32b, 32);
            assert!(tmem_load(&store, &tile, &regs).is_err());
            tmem_store(&store, &regs, &tile).unwrap();
            tmem_wait_ld();
        })
        .unwrap();
        let mut loads = 0;
        for_each_instr(&k.body, &mut |i| {
            if let Op::Tcgen05(Tcgen05::Ld { num: 32, dsts, .. }) = &i.op {
                assert_eq!(dsts.len(), 32);
                loads += 1;
            }
        });
        assert_eq!(loads, 4);
    }
}
