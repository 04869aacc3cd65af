//! One warpgroup multiplies two 64x64 f16 tiles with `wgmma` (sm_90a): `D = A * B^T`, A (64x64,
//! M x K) and B (64x64, N x K) K-major in global memory, D (64x64) f32 row-major.
//!
//! Written as CuTe writes it, every piece from the atoms and the layout algebra: the tiles go to
//! shared memory through a tiled copy of 16-byte `UniversalCopy` atoms, laid out in CuTe's
//! 128-byte-swizzled K-major GMMA atom (`GMMA::Layout_K_SW128_Atom<half_t>`, written with
//! `layout!`); the product is a `TiledMMA` of the `SM90_64x64x16_F32F16F16_SS` atom
//! (`tiled_mma!`), whose A and B fragments are descriptor fragments of the shared partitions
//! (one `wgmma.mma_async` per k-block, the descriptors' static fields from `make_gmma_desc`);
//! the accumulators leave through `partition_C` of D with 8-byte stores. No instruction is
//! written by hand.
//!
//! It is the smallest program that puts a GMMA atom in front of the hardware; the Hopper GEMM
//! builds on the same pieces.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("wgmma_tile.rs"), "```")]

use dsl_core::atom::gmma::GmmaMajor;
use dsl_core::atom::{Accumulate, CopyAtom, UniversalCopy, ValType};
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::layout::{ComposedLayout, IntTuple, LayoutError};
use dsl_core::tensor::{
    copy, gemm_accumulate, warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait,
    DescriptorFragment, Fragment, GTensor, Idx, STensor,
};
use dsl_core::tiled::{Side, TiledCopy, TiledMma, View};
use dsl_macros::{kernel, layout, tiled_copy, tiled_mma};
use thiserror::Error;

/// The tile: M = N = K = 64.
pub const TILE: u32 = 64;

/// One warpgroup.
pub const THREADS: u32 = 128;

/// `wgmma` exists on sm_90a only.
pub const TARGETS: &[Target] = &[Target::Sm90a];

/// Why the tile's kernel could not be generated (a bug: the configuration is fixed).
#[derive(Debug, Error)]
pub enum WgmmaTileError {
    /// A layout operation failed.
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// What the program computes on the host: the tiled MMA, the load and store atoms, the shared
/// layout.
#[derive(Debug, Clone)]
pub struct WgmmaTile {
    /// One `SM90_64x64x16_F32F16F16_SS` atom: a 64x64x16 tile per instruction.
    pub mma: TiledMma,
    /// Global -> shared: 128 threads of 8 f16 each, 16 rows of 64 per pass.
    pub g2s: TiledCopy,
    /// D's store: two f32 (one accumulator pair) per access.
    pub store: CopyAtom,
    /// The tiles' shared layout: `Sw<3,3,3> o (8,64):(64,1)` tiled to 64x64.
    pub smem: ComposedLayout,
    /// `partition_fragment_C` of D: the accumulators.
    pub frag_c: dsl_core::layout::Layout,
}

impl WgmmaTile {
    /// The configuration.
    pub fn new() -> Result<Self, LayoutError> {
        let mma = tiled_mma!(SM90_64x64x16_F32F16F16_SS, atoms = (1, 1, 1));
        let g2s = tiled_copy!(UniversalCopy<u128>, f16, thr = (16,8):(8,1), val = (1,8));
        let atom = layout!(Sw<3,3,3> o (8,64):(64,1));
        let smem = atom.tile_to_shape(&IntTuple::ints(&[64, 64]), None)?;
        let d = View::from(layout!((64, 64):(64, 1)));
        let frag_c = mma.get_slice(0)?.partition_fragment_c(&d)?;
        Ok(WgmmaTile {
            mma,
            g2s,
            store: CopyAtom::new(UniversalCopy { bits: 64 }, ValType::F32)?,
            smem,
            frag_c,
        })
    }
}

/// The kernel; parameters `(d, a, b)`, one block of [`THREADS`].
#[kernel]
pub fn wgmma_tile(
    #[host] t: &WgmmaTile,
    kb: &KernelBuilder,
    #[len(TILE * TILE)] d: GlobalPtr<f32>,
    #[len(TILE * TILE)] a: ConstPtr<half::f16>,
    #[len(TILE * TILE)] b: ConstPtr<half::f16>,
) -> Result<(), WgmmaTileError> {
    kb.require_threads(THREADS, 1, 1);
    let tid = thread_idx_x();
    let n = Var::konst(TILE);
    // The whole matrices are one tile: every access is in bounds.
    let whole = |p: GlobalPtr<half::f16>| {
        GTensor::row_major(p, n, n)
            .local_tile(&[64, 64], &[Idx::At(0), Idx::At(0)])
            .map(|t| t.without_bounds())
    };
    // 1024-byte alignment: the swizzle pattern repeats every 8 rows of 128 bytes, and the
    // hardware applies it to address bits, so the tiles must start on a pattern boundary.
    let sa = STensor::new(
        kb.shared_array::<half::f16>("sa", 4096, 1024),
        t.smem.clone(),
    )?;
    let sb = STensor::new(
        kb.shared_array::<half::f16>("sb", 4096, 1024),
        t.smem.clone(),
    )?;
    let g2s_atom = &t.g2s.atom;
    copy(
        g2s_atom,
        &whole(a.cast_mut())?.partition(&t.g2s, Side::Src, tid)?,
        &sa.partition(&t.g2s, Side::Dst, tid)?,
    )?;
    copy(
        g2s_atom,
        &whole(b.cast_mut())?.partition(&t.g2s, Side::Src, tid)?,
        &sb.partition(&t.g2s, Side::Dst, tid)?,
    )?;
    // wgmma reads shared memory through the async proxy: make the generic stores visible.
    fence_proxy_async_shared();
    sync_threads();

    let acc = Fragment::<f32>::new(t.frag_c.clone(), 1)?;
    let ta = DescriptorFragment::new(&sa.partition_a(&t.mma, tid)?, GmmaMajor::K)?;
    let tb = DescriptorFragment::new(&sb.partition_b(&t.mma, tid)?, GmmaMajor::K)?;
    warpgroup_arrive();
    // The first k-block overwrites the accumulators (no clear), the next three add.
    gemm_accumulate(&t.mma, &acc, &ta, &tb, Accumulate::No)?;
    warpgroup_commit_batch();
    warpgroup_wait::<0>();

    let gd = GTensor::row_major(d, n, n)
        .local_tile(&[64, 64], &[Idx::At(0), Idx::At(0)])?
        .without_bounds();
    copy(&t.store, &acc, &gd.partition_c(&t.mma, tid)?)?;
    Ok(())
}

// SAFETY: the kernel loads the one 64 x 64 tile of `a` and `b` and stores the one 64 x 64 tile
// of `d` (4096 elements each, `#[len(TILE * TILE)]`, checked by the typed launch), writing only
// `d`.
unsafe impl TrustedKernel for WgmmaTileKernel {}

/// The registry's `wgmma_tile`.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    let fail = |e: &dyn std::fmt::Display| super::config_error("wgmma_tile", e);
    let t = WgmmaTile::new().map_err(|e| fail(&e))?;
    wgmma_tile(&t).map_err(|e| match e {
        WgmmaTileError::Build(b) => b,
        other => fail(&other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptors are the ones hand-written Hopper kernels use for this tile: 128-byte
    /// swizzle, SBO 1024 bytes, LBO 1; four k-blocks 32 bytes (2 descriptor units) apart.
    #[test]
    fn builds_and_emits_for_sm90a_only() {
        let k = default_kernel().unwrap();
        let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        assert_eq!(
            ptx.matches("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16")
                .count(),
            4
        );
        // The static bits: (1 << 62) | (64 << 32) | (1 << 16), then +2 (32 bytes) per k-block.
        assert_eq!(ptx.matches("0x4000004000010000").count(), 2, "{ptx}");
        for units in [2, 4, 6] {
            let adds = ptx
                .lines()
                .filter(|l| {
                    l.trim_start().starts_with("add.u64") && l.ends_with(&format!(", {units};"))
                })
                .count();
            assert_eq!(adds, 2, "k-block {}: {ptx}", units / 2);
        }
        assert_eq!(ptx.matches("wgmma.fence").count(), 1);
        assert_eq!(ptx.matches("st.global.v2.b32").count(), 16);
        assert!(codegen_ptx::emit(&k, Target::Sm80).is_err());
    }
}
