//! Device tensors: an engine (a global or shared base pointer, or a register fragment) seen
//! through a layout, and the operations CuTe performs on them inside a kernel: `local_tile`,
//! partitions by tiled copies and MMAs, slicing with host and device coordinates ([`Idx`], the
//! one slicing vocabulary), `copy` with a tiled copy's atom per value group, `gemm` with the
//! MMA atom per instruction (register fragments or GMMA descriptor fragments), `clear`, and the
//! `cp.async` and `wgmma` fences.
//!
//! Offsets split into a static part (a host integer folded into the instruction's immediate
//! offset) and a dynamic part (registers computed once, where the tensor is partitioned or
//! sliced). For a swizzled shared tensor the swizzle applies to the *sum*; a dynamic index whose
//! strides are multiples of the swizzle's period `2^(M+S+B)` (a pipeline stage, say) commutes with
//! it and is added after, and so is the static part above the period. What is left inside the
//! swizzle, the thread's offset plus the static part below the period, costs one `add`, `and`,
//! `shr` and `xor` per distinct static remainder and copy.
//!
//! Global tensors ([`GTensor`]) have a layout whose extents and strides may be device values
//! (`M`, `K`, the leading dimension); `local_tile` cuts a static tile from them, and the tile's
//! coordinates go through the layout algebra as coordinate vectors (CuTe's arithmetic-tuple
//! strides) while the addresses and bounds are computed with the device strides and extents.
//! [`CTensor`] is the same coordinate machinery without memory: CuTe's identity tensor, for
//! predicates and TMA coordinates.
//!
//! A k-tile of a K-major A (`M x K`, row stride `k`) copied into a swizzled shared tile with the
//! 16-byte `cp.async` partition of CuTe's multistage GEMM tutorial, rows past `m` and columns past `k` zero-filled:
//!
//! ```
//! use dsl_core::atom::{CopyAtom, CpAsyncCacheGlobal, ValType};
//! use dsl_core::ir::{for_each_instr, op::CpAsync, Op};
//! use dsl_core::kernel::*;
//! use dsl_core::layout::{ComposedLayout, Layout, Swizzle};
//! use dsl_core::tensor::{copy, cp_async_fence, cp_async_wait, GTensor, Idx, STensor};
//! use dsl_core::tiled::{make_tiled_copy, Side};
//! use half::f16;
//!
//! let atom = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
//! let g2s = make_tiled_copy(atom.clone(), &"(32,4):(4,1)".parse().unwrap(), &"(1,8)".parse().unwrap())
//!     .unwrap();
//! let kernel = build_kernel("load_tile", |kb| {
//!     let a = kb.param_ptr::<f16>("a");
//!     let (m, k) = (kb.param::<u32>("m"), kb.param::<u32>("k"));
//!     let tid = thread_idx_x();
//!     // A is (m, k):(k, 1); this block's (128, 32) tiles along K: (128, 32, ceil(k / 32)).
//!     let ma = GTensor::row_major(a, m, k);
//!     let ga = ma.local_tile(&[128, 32], &[Idx::Dyn(block_idx_y()), Idx::All]).unwrap();
//!     let sw = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, "(8,32):(32,1)".parse().unwrap());
//!     let sa = STensor::new(kb.dynamic_shared::<f16>(128), sw.tile_to_shape(&dsl_core::layout::IntTuple::ints(&[128, 32]), None).unwrap())
//!         .unwrap();
//!     let src = ga.partition(&g2s, Side::Src, tid).unwrap(); // (CPY, CPY_M, CPY_K, k-tile)
//!     let dst = sa.partition(&g2s, Side::Dst, tid).unwrap(); // (CPY, CPY_M, CPY_K)
//!     let itile = block_idx_x();
//!     copy(&atom, &src.slice(&[Idx::All, Idx::All, Idx::All, Idx::Dyn(itile)]).unwrap(), &dst).unwrap();
//!     cp_async_fence();
//!     cp_async_wait::<0>();
//! })
//! .unwrap();
//! let mut copies = 0;
//! for_each_instr(&kernel.body, &mut |i| {
//!     if let Op::CpAsync(CpAsync::Copy { bytes: 16, src_size: Some(_), .. }) = &i.op {
//!         copies += 1;
//!     }
//! });
//! assert_eq!(copies, 4); // 128 rows / 32 rows per pass
//! ```

/// The partition and slicing methods of a tensor type (global or shared) that has
/// `view(&self) -> View` (its static view) and
/// `with_view(&self, View, &[(Var<u32>, i64)]) -> Result<Self, LayoutError>` (the tensor of a
/// derived view, its new indices bound to the given device values below the given bounds).
macro_rules! view_methods {
    () => {
        /// CuTe's `thr_copy.partition_S/D(tensor)` for the device thread index `thread`
        /// (`< tiled.size()`): layout `(CPY, CPY_M, CPY_N, ...)`.
        pub fn partition(
            &self,
            tiled: &$crate::tiled::TiledCopy,
            side: $crate::tiled::Side,
            thread: $crate::kernel::Var<u32>,
        ) -> Result<Self, $crate::layout::LayoutError> {
            let v = tiled.partition(side, &self.view())?;
            self.with_view(v, &[(thread, tiled.size())])
        }

        /// CuTe's `thr_mma.partition_A(tensor)` for the device thread index `thread`:
        /// `(MMA, MMA_M, MMA_K, ...)`.
        pub fn partition_a(
            &self,
            mma: &$crate::tiled::TiledMma,
            thread: $crate::kernel::Var<u32>,
        ) -> Result<Self, $crate::layout::LayoutError> {
            let v = mma.partition($crate::tiled::Operand::A, &self.view())?;
            self.with_view(v, &[(thread, mma.size())])
        }

        /// CuTe's `thr_mma.partition_B(tensor)` for the device thread index `thread`:
        /// `(MMA, MMA_N, MMA_K, ...)`.
        pub fn partition_b(
            &self,
            mma: &$crate::tiled::TiledMma,
            thread: $crate::kernel::Var<u32>,
        ) -> Result<Self, $crate::layout::LayoutError> {
            let v = mma.partition($crate::tiled::Operand::B, &self.view())?;
            self.with_view(v, &[(thread, mma.size())])
        }

        /// CuTe's `thr_mma.partition_C(tensor)` for the device thread index `thread`:
        /// `(MMA, MMA_M, MMA_N)`.
        pub fn partition_c(
            &self,
            mma: &$crate::tiled::TiledMma,
            thread: $crate::kernel::Var<u32>,
        ) -> Result<Self, $crate::layout::LayoutError> {
            let v = mma.partition($crate::tiled::Operand::C, &self.view())?;
            self.with_view(v, &[(thread, mma.size())])
        }

        /// CuTe's slicing `tensor(c0, c1, ...)`: [`Idx::At`](crate::tensor::Idx::At) folds into
        /// the static offset, [`Idx::Dyn`](crate::tensor::Idx::Dyn) adds a device offset (the
        /// value must be below the mode's extent), [`Idx::All`](crate::tensor::Idx::All) keeps
        /// the mode.
        pub fn slice(
            &self,
            coord: &[$crate::tensor::Idx],
        ) -> Result<Self, $crate::layout::LayoutError> {
            let (crd, xs) = $crate::tensor::shared::host_coord(&self.layout, coord)?;
            let v = self.view().slice(&crd)?;
            self.with_view(v, &xs)
        }
    };
}

mod copy;
mod dyn_eval;
mod fragment;
mod global;
mod mma;
mod shared;
mod tmem;
mod umma;

pub use copy::{
    clear, copy, copy_s2g, cp_async_fence, cp_async_wait, cp_async_wait_n, store_fragment,
    store_fragment_smem, CopySide,
};
pub use dyn_eval::{eval_dyn, swizzle_dyn};
pub use fragment::Fragment;
pub use global::{CTensor, GTensor};
pub use mma::{
    gemm, gemm_accumulate, warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait,
    DescriptorFragment, MmaOperand,
};
pub use shared::STensor;
pub use tmem::{
    tmem_fence_after_sync, tmem_fence_before_sync, tmem_load, tmem_store, tmem_wait_ld,
    tmem_wait_st, TTensor, TmemAccumulator, TMEM_COLUMNS, TMEM_LANE, TMEM_LANES,
};
pub use umma::{gemm_tmem, UmmaDescriptorFragment};

pub use crate::tiled::Idx;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_half_fragments;
