//! Tiled copies and MMAs: CuTe's `TiledCopy`/`TiledMMA` and their per-thread partitions, as pure
//! layout functions.
//!
//! Everything here runs while a kernel is generated. A partition takes a tensor's layout (a plain
//! or swizzled [`View`]) and returns a [`View`] that keeps the thread index dynamic: `indices` holds
//! `thread index -> offset`, `layout` the per-thread `(CPY/MMA, M, N/K, ...)` layout. A kernel
//! computes the offset of its thread in registers once and unrolls `layout` on the host;
//! `get_slice(t)` binds a host thread index instead, giving exactly CuTe's partition for thread `t`.
//!
//! The seed configuration of the multistage GEMM (128x128x32 tile, 2x2x1 atoms of
//! `SM80_16x8x16_F16F16F16F16_TN` with a 32x32x16 tile):
//!
//! ```
//! use dsl_core::atom::{CopyAtom, CopyOp, MmaAtom, MmaOp, ValType};
//! use dsl_core::layout::{tile_to_shape, ComposedLayout, IntTuple, Layout, Swizzle};
//! use dsl_core::tiled::{make_tiled_copy, make_tiled_copy_a, make_tiled_mma, View};
//!
//! let perm = ["32:1", "32:1", "16:1"].map(|s| Some(s.parse::<Layout>().unwrap()));
//! let mma = make_tiled_mma(MmaAtom::new(MmaOp::Sm80_16x8x16F16F16F16F16Tn),
//!                          &"(2,2,1)".parse().unwrap(), &perm).unwrap();
//! assert_eq!(mma.size(), 128);
//!
//! // Thread 5's accumulators of the 128x128 C tile (row-major, N = 128).
//! let c: Layout = "(128,128):(128,1)".parse().unwrap();
//! let t5 = mma.get_slice(5).unwrap();
//! let tcgc = t5.partition_c(&View::from(c)).unwrap();
//! assert_eq!(tcgc.layout.shape().to_string(), "((2,2),4,8)"); // (MMA, MMA_M, MMA_N)
//! // Its first value is row 5/4 = 1, column 2*(5%4) = 2 (the PTX fragment of mma.m16n8k16).
//! assert_eq!(tcgc.at(&[]).unwrap().eval(0).unwrap(), 1 * 128 + 2);
//!
//! // G2S: cp.async 128-bit, threads (32,4):(4,1), values (1,8), into swizzled smem.
//! let g2s = make_tiled_copy(CopyAtom::new(CopyOp::CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap(),
//!                           &"(32,4):(4,1)".parse().unwrap(), &"(1,8)".parse().unwrap()).unwrap();
//! let atom = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, "(8,32):(32,1)".parse().unwrap());
//! let sa = atom.tile_to_shape(&IntTuple::ints(&[128, 32, 3]), None).unwrap();
//! let tasa = g2s.partition(dsl_core::tiled::Side::Dst, &View::from(sa)).unwrap();
//! assert_eq!(tasa.layout.shape().to_string(), "((8,1),4,1,(1,3))"); // (CPY, CPY_M, CPY_K, stage)
//! assert_eq!(tasa.indices.len(), 1); // the thread index stays dynamic
//!
//! // S2R: ldmatrix x4 shaped by the MMA's A fragments.
//! let s2r = make_tiled_copy_a(CopyAtom::new(CopyOp::LdsmN { n: 4 }, ValType::F16).unwrap(), &mma).unwrap();
//! assert_eq!(s2r.tiler_mn, vec![32, 16]);
//! ```

mod copy;
mod local;
mod mma;
mod util;
mod view;

pub use copy::{
    make_tiled_copy, make_tiled_copy_a, make_tiled_copy_b, make_tiled_copy_c, make_tiled_copy_impl,
    Side, ThrCopy, TiledCopy,
};
pub use local::{local_partition, local_partition_at, local_tile};
pub use mma::{make_tiled_mma, Operand, ThrMma, TiledMma};
pub use util::{get_flat_coord, make_fragment_like};
pub use view::{Crd, View};

#[cfg(test)]
mod tests;
