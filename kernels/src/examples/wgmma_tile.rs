//! One warpgroup multiplies two 64x64 f16 tiles with `wgmma` (sm_90a): `D = A * B^T`, A (64x64,
//! M x K) and B (64x64, N x K) K-major in global memory, D (64x64) f32 row-major.
//!
//! The tiles go to shared memory in CuTe's 128-byte-swizzled K-major GMMA layout
//! (`GMMA::Layout_K_SW128_Atom<half_t>`, [`dsl_core::atom::gmma::gmma_atom`]); each of the four
//! k-blocks is one `wgmma.mma_async.m64n64k16.f32.f16.f16` whose descriptors come from
//! [`dsl_core::atom::gmma::make_gmma_desc`] (static fields on the host, the start address on the
//! device, 32 bytes further per k-block). The accumulators leave in the wgmma D fragment's
//! order: warp `w`, lane `l` holds rows `16w + l/4` and `+8`, columns `8j + 2(l%4)` and `+1`.
//!
//! It is the smallest program that puts a GMMA descriptor in front of the hardware; the Hopper
//! GEMM builds on the same pieces.

use dsl_core::atom::gmma::{gmma_atom, make_gmma_desc, GmmaLayoutType, GmmaMajor};
use dsl_core::ir::op::{ScaleD, Wgmma, WgmmaA, WgmmaMma};
use dsl_core::ir::{Target, Type};
use dsl_core::kernel::*;
use dsl_core::layout::{IntTuple, LayoutError, Swizzle};
use dsl_core::tensor::swizzle_dyn;
use dsl_macros::kernel;

/// The tile: M = N = K = 64.
pub const TILE: u32 = 64;

/// One warpgroup.
pub const THREADS: u32 = 128;

/// `wgmma` exists on sm_90a only.
pub const TARGETS: &[Target] = &[Target::Sm90a];

/// The tiles' shared layout, K-major SW128 f16 (`Sw<3,3,3> o (8,64):(64,1)` tiled to 64x64:
/// rows of 128 bytes, each row's 16-byte chunks XORed with its low 3 bits), and the static
/// fields of the descriptor of its k-block 0.
fn smem_swizzle_and_descriptor() -> Result<(Swizzle, u64), LayoutError> {
    let atom = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?;
    let tile = atom.tile_to_shape(&IntTuple::ints(&[64, 64]), None)?;
    let k_block = tile.compose(&"(64,16):(1,64)".parse()?)?;
    let desc = make_gmma_desc(GmmaMajor::K, &k_block, 2)?.static_bits();
    Ok((atom.swizzle, desc))
}

/// The kernel; parameters `(d, a, b)`, one block of [`THREADS`].
#[kernel]
pub fn wgmma_tile(
    #[host] swizzle: Swizzle,
    #[host] desc_bits: u64,
    kb: &KernelBuilder,
    d: GlobalPtr<f32>,
    a: GlobalPtr<half::f16>,
    b: GlobalPtr<half::f16>,
) {
    kb.require_threads(THREADS, 1, 1);
    // 1024-byte alignment: the swizzle pattern repeats every 8 rows of 128 bytes, and the
    // hardware applies it to address bits, so the tiles must start on a pattern boundary.
    let sa = kb.shared_array::<half::f16>("sa", u64::from(TILE * TILE), 1024);
    let sb = kb.shared_array::<half::f16>("sb", u64::from(TILE * TILE), 1024);
    let t = thread_idx_x();
    for i in 0..(TILE * TILE / THREADS) {
        // Element (row, col) = (idx / 64, idx % 64) sits at swizzle(64 row + col) = swizzle(idx).
        let idx = t + i * THREADS;
        let at = swizzle_dyn(&swizzle, idx);
        sa.store_at(at, a.load_at(idx));
        sb.store_at(at, b.load_at(idx));
    }
    // wgmma reads shared memory through the async proxy: make the generic stores visible.
    fence_proxy_async_shared();
    sync_threads();

    let acc: Vec<Var<f32>> = (0..TILE / 2).map(|_| Var::konst(0.0f32).fresh()).collect();
    emit(Wgmma::Fence);
    let desc = |base: Var<u32>, k_block: u32| -> Var<u64> {
        let start = ((base + k_block * 32) >> 4u32) & 0x3FFFu32;
        Var::konst(desc_bits) | start.cast::<u64>()
    };
    for k_block in 0..TILE / 16 {
        emit(Wgmma::MmaAsync(WgmmaMma {
            n: TILE,
            d_ty: Type::F32,
            ab_ty: Type::F16,
            d: acc.iter().map(|r| r.to_reg()).collect(),
            a: WgmmaA::Desc(desc(sa.addr(), k_block).operand()),
            b_desc: desc(sb.addr(), k_block).operand(),
            scale_d: ScaleD::Const(k_block > 0),
            scale_a: 1,
            scale_b: 1,
            tnsp_a: false,
            tnsp_b: false,
        }));
    }
    emit(Wgmma::CommitGroup);
    emit(Wgmma::WaitGroup(0));

    let (warp, lane) = (t >> 5u32, t & 31u32);
    for (i, v) in acc.iter().enumerate() {
        let i = i as u32;
        let row = warp * 16 + (lane >> 2u32) + 8 * ((i >> 1) & 1);
        let col = 8 * (i >> 2) + 2 * (lane & 3u32) + (i & 1);
        d.store_at(row * TILE + col, *v);
    }
}

/// The registry's `wgmma_tile`.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    let (swizzle, bits) = smem_swizzle_and_descriptor().map_err(|e| BuildError::BadArgument {
        kernel: "wgmma_tile".into(),
        message: e.to_string(),
    })?;
    wgmma_tile(swizzle, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptor is the one hand-written Hopper kernels use for this tile: 128-byte
    /// swizzle, SBO 1024 bytes, LBO 1.
    #[test]
    fn the_descriptor_is_the_known_one() {
        let (swizzle, desc) = smem_swizzle_and_descriptor().unwrap();
        assert_eq!(desc, (1u64 << 62) | (64u64 << 32) | (1 << 16));
        assert_eq!(swizzle.to_string(), "Sw<3,3,3>");
    }

    #[test]
    fn builds_and_emits_for_sm90a() {
        let k = default_kernel().unwrap();
        let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        assert_eq!(
            ptx.matches("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16")
                .count(),
            4
        );
        assert!(codegen_ptx::emit(&k, Target::Sm80).is_err());
    }
}
