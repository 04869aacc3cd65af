//! Tiled copies and MMAs: CuTe's `TiledCopy`/`TiledMMA` and their per-thread partitions, as pure
//! layout functions.
//!
//! Everything here runs while a kernel is generated. A partition takes a tensor's layout (a plain
//! or swizzled [`View`]) and returns a [`View`] that keeps the thread index dynamic: `indices` holds
//! `thread index -> offset`, `layout` the per-thread `(CPY/MMA, M, N/K, ...)` layout. A kernel
//! computes the offset of its thread in registers once and unrolls `layout` on the host;
//! `get_slice(t)` binds a host thread index instead, giving exactly CuTe's partition for thread `t`.
//!
//! The seed configuration of the multistage GEMM (128x128x32 tile, 3 stages, 2x2x1 atoms of
//! `SM80_16x8x16_F16F16F16F16_TN` with a 32x32x16 tile), as the kernel generator would write it:
//!
//! ```
//! use dsl_core::atom::{CopyAtom, CpAsyncCacheGlobal, LdsmN, MmaAtom, Sm80Mma, ValType};
//! use dsl_core::layout::{ComposedLayout, IntTuple, Layout, Swizzle};
//! use dsl_core::tiled::{make_tiled_copy, make_tiled_copy_a, make_tiled_mma, local_tile, Idx, Side, View};
//! let lay = |s: &str| s.parse::<Layout>().unwrap();
//!
//! let perm = ["32:1", "32:1", "16:1"].map(|s| Some(lay(s)));
//! let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F16F16F16F16), &lay("(2,2,1)"), &perm)
//!     .unwrap();
//! assert_eq!(mma.size(), 128); // threads per block
//!
//! // gA = local_tile(A, (128, 32), (by, _)) for A of M=512, K=256, K-major; `by` is blockIdx.y.
//! let a = View::from(lay("(512,256):(256,1)"));
//! let ga = local_tile(&a, &[128, 32], &[Idx::dynamic(), Idx::All]).unwrap(); // (128, 32, k)
//! assert_eq!(ga.layout.to_string(), "(128,32,8):(256,1,32)");
//!
//! // Shared memory: Swizzle<3,3,3> o (8,32):(32,1) tiled to (128, 32, 3 stages).
//! let atom = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, lay("(8,32):(32,1)"));
//! let sa = View::from(atom.tile_to_shape(&IntTuple::ints(&[128, 32, 3]), None).unwrap());
//!
//! // G2S: cp.async 128-bit, threads (32,4):(4,1), values (1,8).
//! let cp = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
//! let g2s = make_tiled_copy(cp, &lay("(32,4):(4,1)"), &lay("(1,8)")).unwrap();
//! let tag_a = g2s.partition(Side::Src, &ga).unwrap(); // indices: [by, thread]
//! let tasa = g2s.partition(Side::Dst, &sa).unwrap(); // indices: [thread]
//! assert_eq!(tag_a.layout.shape().to_string(), "((8,1),4,1,8)"); // (CPY, CPY_M, CPY_K, k)
//! assert_eq!(tasa.layout.shape().to_string(), "((8,1),4,1,(1,3))"); // (CPY, CPY_M, CPY_K, stage)
//! // tAgA(_, _, _, itile) with itile in a register: one more dynamic index.
//! let tile = tag_a.slice(&[Idx::All, Idx::All, Idx::All, Idx::dynamic()]).unwrap();
//! // Block 1, thread 6, k-tile 2: element (v=0, CPY_M=0) is row 128 + 6/4, column 64 + 8*(6%4).
//! assert_eq!(tile.at(&[1, 6, 2]).unwrap().eval(0).unwrap(), (128 + 1) * 256 + 64 + 16);
//!
//! // MMA fragments of thread 5, and the ldmatrix copy that fills A's.
//! let thr = mma.get_slice(5).unwrap();
//! let tcra = thr.partition_fragment_a(&ga.slice(&[Idx::All, Idx::All, Idx::At(0)]).unwrap()).unwrap();
//! assert_eq!(tcra.to_string(), "((2,2,2),4,2):((1,2,4),16,8)"); // (MMA, MMA_M, MMA_K)
//! let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
//! let s2r = make_tiled_copy_a(ldsm, &mma).unwrap().get_slice(5).unwrap();
//! let tasa_s2r = s2r.partition_s(&sa).unwrap(); // (CPY, CPY_M, CPY_K, stage), thread bound
//! assert_eq!(tasa_s2r.layout.size(), 8 * 4 * 2 * 3);
//! assert_eq!(s2r.retile_d(&tcra).unwrap().shape().to_string(), "((8,1),4,2)");
//!
//! // Accumulators of the 128x128 D tile (row-major): first value at row 5/4, column 2*(5%4).
//! let tcgc = thr.partition_c(&View::from(lay("(128,128):(128,1)"))).unwrap();
//! assert_eq!(tcgc.layout.shape().to_string(), "((2,2),4,8)"); // (MMA, MMA_M, MMA_N)
//! assert_eq!(tcgc.at(&[]).unwrap().eval(0).unwrap(), 128 + 2);
//! ```
//!
//! Left out of CuTe: `make_tiled_copy_S/D`, `make_tiled_copy_C_atom`, `make_cotiled_copy`, tensors
//! with arithmetic-tuple (identity) strides, and the `Step` projections of `local_tile`.

mod copy;
mod identity;
mod local;
mod mma;
mod util;
mod view;

pub use copy::{
    make_tiled_copy, make_tiled_copy_a, make_tiled_copy_b, make_tiled_copy_c, make_tiled_copy_impl,
    Side, ThrCopy, TiledCopy,
};
pub use identity::{make_identity_tensor, IdentityTensor};
pub use local::{local_partition, local_partition_at, local_tile};
pub use mma::{make_tiled_mma, Operand, ThrMma, TiledMma};
pub use util::{get_flat_coord, make_fragment_like};
pub use view::{Idx, View};

#[cfg(test)]
mod tests;
