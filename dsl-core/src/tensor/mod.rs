//! Device tensors: an engine (a global or shared base pointer, or a register fragment) seen
//! through a [`crate::tiled::View`], and the operations CuTe performs on them inside a kernel:
//! slicing with host and device coordinates, `copy` with a tiled copy's atom per value group,
//! `gemm` with `mma.sync`, `clear`, `cp_async_fence` and `cp_async_wait`.
//!
//! Offsets split into a static part (a host integer folded into the instruction's immediate
//! offset) and a dynamic part (registers computed once, where the tensor is partitioned or
//! sliced). For a swizzled shared tensor the swizzle applies to the *sum*; a dynamic index whose
//! strides are multiples of the swizzle's period `2^(M+S+B)` (a pipeline stage, say) commutes with
//! it and is added after, and so is the static part above the period. What is left inside the
//! swizzle, the thread's offset plus the static part below the period, costs one `add`, `and`,
//! `shr` and `xor` per distinct static remainder and copy.
//!
//! Global tensors have a row stride known only on the device (`K` of a GEMM): their views encode
//! an element `(row, col)` of the tile as `row * ROW + col` ([`ROW`]), which every layout
//! operation carries through linearly (CuTe's arithmetic-tuple strides), and the address is
//! computed with the runtime row stride. Bounds are checked per row and column for predication.
//!
//! A k-tile of a K-major A (`M x K`, row stride `k`) copied into a swizzled shared tile with the
//! seed's 16-byte `cp.async` partition, rows past `m` and columns past `k` zero-filled:
//!
//! ```
//! use dsl_core::atom::{CopyAtom, CpAsyncCacheGlobal, ValType};
//! use dsl_core::ir::{for_each_instr, op::CpAsync, Op};
//! use dsl_core::kernel::*;
//! use dsl_core::layout::{ComposedLayout, Layout, Swizzle};
//! use dsl_core::tensor::{copy, cp_async_fence, cp_async_wait, GTensor, Idx, STensor, ROW};
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
//!     // The (128, 32) tile at row 0, k-tiles as a third mode; element (r, c) is r * ROW + c.
//!     let strip: Layout = format!("(128,32,64):({ROW},1,32)").parse().unwrap();
//!     let ga = GTensor::tile(a, k, strip, Some((m.cast::<i32>(), k.cast::<i32>())));
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

pub use copy::{
    clear, copy, copy_s2g, cp_async_fence, cp_async_wait, cp_async_wait_n, store_fragment,
    store_fragment_smem, CopySide,
};
pub use dyn_eval::{eval_dyn, split_rows, swizzle_dyn};
pub use fragment::Fragment;
pub use global::{GTensor, ROW};
pub use mma::{
    gemm, gemm_accumulate, warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait,
    DescriptorFragment, MmaOperand,
};
pub use shared::STensor;

use crate::kernel::Var;

/// One item of a device slicing coordinate.
#[derive(Clone, Copy, Debug)]
pub enum Idx {
    /// A host coordinate, folded into the static offset.
    At(i64),
    /// A coordinate in a register (a k-tile, a pipeline stage), `< extent` of its mode.
    Dyn(Var<u32>),
    /// CuTe's `_`: the mode is kept.
    All,
}

#[cfg(test)]
mod tests;
