//! A tile GEMM with its epilogue written in the kernel body (sm_90a): `D = relu(A B^T + bias)`,
//! A `m x k` and B `n x k` f16 row-major, `bias` `n` f32, D `m x n` f32 row-major.
//!
//! Each block of one warpgroup (128 threads) computes a 64 x 64 tile of D:
//!
//! - mainloop, per 64-column k-tile: the A and B tiles go to 128-byte-swizzled shared memory
//!   with `cp.async` (16 bytes per thread per row piece; what lies past `m`, `n` or `k` is filled
//!   with zeros, so any extents work), then one `wgmma` per 16-wide k-block adds `A_tile B_tile^T`
//!   into the accumulators;
//! - epilogue, the user's code: each thread walks its accumulators beside the coordinates the
//!   same partition gives of an identity tensor (CuTe's `make_identity_tensor`), adds the bias of
//!   its column, applies ReLU, and stores where the element lies inside D.
//!
//! `k` must be a multiple of 8 (16-byte rows for `cp.async`).
//!
//! Run it with `cargo run --example gemm_bias_relu`: it prints the kernel's PTX, then, on an
//! sm_90 GPU, runs it through its typed launch at 300 x 200 x 136 and prints `PASS` when every
//! element of D is within 1e-5 of the f64 result (relative to the magnitude of its terms).

use codegen_ptx::jit::{Jit, Launch};
use dsl_core::atom::gmma::GmmaMajor;
use dsl_core::atom::Accumulate;
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError};
use dsl_core::tensor::{
    clear, copy, cp_async_fence, cp_async_wait, gemm_accumulate, warpgroup_arrive,
    warpgroup_commit_batch, warpgroup_wait, CTensor, DescriptorFragment, Fragment, GTensor, Idx,
    STensor,
};
use dsl_core::tiled::{Side, TiledCopy, TiledMma, View};
use dsl_macros::{kernel, layout, tiled_copy, tiled_mma};
use half::f16;

/// The block's tile of D, and the k-tile.
const TILE: u32 = 64;
/// One warpgroup.
const THREADS: u32 = 128;

/// What the host computes once: the tiled MMA, the global-to-shared copy, the shared layout and
/// the accumulator fragment.
struct Plan {
    mma: TiledMma,
    g2s: TiledCopy,
    smem: ComposedLayout,
    frag_c: Layout,
}

impl Plan {
    fn new() -> Result<Plan, LayoutError> {
        let mma = tiled_mma!(SM90_64x64x16_F32F16F16_SS, atoms = (1, 1, 1));
        // 128 threads of 8 halves (16 bytes) each: 16 rows of 64 per pass, zero-filled past
        // the matrix.
        let g2s =
            tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (16,8):(8,1), val = (1,8));
        let smem =
            layout!(Sw<3,3,3> o (8,64):(64,1)).tile_to_shape(&IntTuple::ints(&[64, 64]), None)?;
        let frag_c = mma
            .get_slice(0)?
            .partition_fragment_c(&View::from(layout!((64, 64):(64, 1))))?;
        Ok(Plan {
            mma,
            g2s,
            smem,
            frag_c,
        })
    }
}

/// Why the kernel could not be generated.
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// `d = relu(a b^T + bias)`; launch a grid of `(ceil(n / 64), ceil(m / 64))` blocks of 128
/// threads.
#[kernel]
#[allow(clippy::too_many_arguments)]
fn gemm_bias_relu(
    #[host] plan: &Plan,
    kb: &KernelBuilder,
    #[len(m * n)] d: GlobalPtr<f32>,
    #[len(m * k)] a: ConstPtr<f16>,
    #[len(n * k)] b: ConstPtr<f16>,
    #[len(n)] bias: ConstPtr<f32>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) -> Result<(), Error> {
    kb.require_threads(THREADS, 1, 1);
    let tid = thread_idx_x();
    let (bn, bm) = (block_idx_x(), block_idx_y());
    // The swizzle applies to address bits: each tile starts on a 1024-byte boundary.
    let sa = STensor::new(kb.shared_array::<f16>("sa", 4096, 1024), plan.smem.clone())?;
    let sb = STensor::new(kb.shared_array::<f16>("sb", 4096, 1024), plan.smem.clone())?;
    // This block's rows of A and B, k-tiles as the last mode.
    let ga =
        GTensor::row_major(a.cast_mut(), m, k).local_tile(&[64, 64], &[Idx::Dyn(bm), Idx::All])?;
    let gb =
        GTensor::row_major(b.cast_mut(), n, k).local_tile(&[64, 64], &[Idx::Dyn(bn), Idx::All])?;
    let (copy_a, copy_b) = (
        ga.partition(&plan.g2s, Side::Src, tid)?,
        gb.partition(&plan.g2s, Side::Src, tid)?,
    );
    let (to_a, to_b) = (
        sa.partition(&plan.g2s, Side::Dst, tid)?,
        sb.partition(&plan.g2s, Side::Dst, tid)?,
    );
    let acc = Fragment::<f32>::new(plan.frag_c.clone(), 1)?;
    clear(&acc);
    let ta = DescriptorFragment::new(&sa.partition_a(&plan.mma, tid)?, GmmaMajor::K)?;
    let tb = DescriptorFragment::new(&sb.partition_b(&plan.mma, tid)?, GmmaMajor::K)?;

    // ---- Mainloop ----
    let k_tiles = (k + (TILE - 1)) / TILE;
    for kt in 0..k_tiles {
        let at = |t: &GTensor<f16>| t.slice(&[Idx::All, Idx::All, Idx::All, Idx::Dyn(kt)]);
        copy(&plan.g2s.atom, &at(&copy_a)?, &to_a)?;
        copy(&plan.g2s.atom, &at(&copy_b)?, &to_b)?;
        cp_async_fence();
        cp_async_wait::<0>();
        // wgmma reads shared memory through the async proxy: make the copies visible to it.
        fence_proxy_async_shared();
        sync_threads();
        warpgroup_arrive();
        gemm_accumulate(&plan.mma, &acc, &ta, &tb, Accumulate::Yes)?;
        warpgroup_commit_batch();
        warpgroup_wait::<0>();
        // The next k-tile's copies overwrite the tiles this one read.
        sync_threads();
    }

    // ---- Epilogue: bias, ReLU, bounded stores ----
    let coords = CTensor::new(&[m, n])
        .local_tile(&[64, 64], &[Idx::Dyn(bm), Idx::Dyn(bn)])?
        .partition_c(&plan.mma, tid)?;
    for i in 0..acc.layout.size() {
        let (rc, inside) = coords.element(i)?;
        let (row, col) = (rc[0], rc[1]);
        if inside {
            let v = acc.reg_at(i)? + bias.load_at(col);
            d.store_at(row * n + col, v.max(0.0));
        }
    }
    Ok(())
}

// SAFETY: A and B are read only inside `m x k` and `n x k` (the copies' sources are bounded and
// zero-fill what lies past them), `bias` below `n` and `d` is written only at (row, col) inside
// `m x n`: index `row * n + col < m * n`; the typed launch checks all four lengths. Only `d` is
// written.
unsafe impl TrustedKernel for GemmBiasReluKernel {}

/// Pseudo-random values in [-1, 1), exact in f16.
fn values(n: usize, mut seed: u64) -> Vec<f16> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            f16::from_f32(((seed >> 40) % 2048) as f32 / 1024.0 - 1.0)
        })
        .collect()
}

/// Runs the kernel on `jit`; `Ok(worst error)` against f64, relative to the terms' magnitude.
fn run(
    jit: &Jit,
    plan: &Plan,
    (m, n, k): (usize, usize, usize),
) -> Result<f64, Box<dyn std::error::Error>> {
    let f = jit.compile(&GemmBiasReluKernel::build(plan)?, Target::Sm90a)?;
    let (a, b) = (values(m * k, 1), values(n * k, 2));
    let bias: Vec<f32> = values(n, 3).iter().map(|v| v.to_f32()).collect();
    let (da, db, dbias) = (jit.upload(&a)?, jit.upload(&b)?, jit.upload(&bias)?);
    let mut dd = jit.alloc_zeros::<f32>(m * n)?;
    let grid = ((n as u32).div_ceil(TILE), (m as u32).div_ceil(TILE), 1);
    let cfg = Launch::new(grid, (THREADS, 1, 1));
    GemmBiasReluKernel::launch(
        f.with(&cfg),
        &mut dd,
        &da,
        &db,
        &dbias,
        m as u32,
        n as u32,
        k as u32,
    )?;
    let got = jit.download(&dd)?;
    let mut worst = 0f64;
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|l| f64::from(a[i * k + l]) * f64::from(b[j * k + l]));
            let (sum, mag) = terms.fold(
                (f64::from(bias[j]), f64::from(bias[j]).abs()),
                |(s, g), t| (s + t, g + t.abs()),
            );
            let err = (f64::from(got[i * n + j]) - sum.max(0.0)).abs() / mag.max(1e-30);
            worst = worst.max(err);
        }
    }
    Ok(worst)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plan = Plan::new()?;
    let kernel = GemmBiasReluKernel::build(&plan)?;
    println!("{}", codegen_ptx::emit(&kernel, Target::Sm90a)?);
    let jit = match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => {
            println!("no GPU ({e}): the PTX above is the whole result");
            return Ok(());
        }
    };
    if jit.target()? != Target::Sm90a {
        println!(
            "wgmma and this kernel need an sm_90 GPU; this one is {:?}",
            jit.limits().compute_capability
        );
        return Ok(());
    }
    // No extent a multiple of the tile; k a multiple of 8.
    let shape = (300, 200, 136);
    let worst = run(&jit, &plan, shape)?;
    if worst < 1e-5 {
        println!("PASS: relu(A B^T + bias) at {shape:?}, worst error {worst:.2e} of the terms' magnitude");
        Ok(())
    } else {
        Err(format!("FAIL: worst error {worst:.2e}").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel assembles for sm_90a without spills (needs `RUTE_PTXAS`); the GPU run is
    /// `cargo run --example gemm_bias_relu`.
    #[test]
    fn the_kernel_assembles_without_spills() {
        let plan = Plan::new().unwrap();
        let ptx =
            codegen_ptx::emit(&GemmBiasReluKernel::build(&plan).unwrap(), Target::Sm90a).unwrap();
        let report = codegen_ptx::ptxas::assemble(&ptx, Target::Sm90a).unwrap();
        assert_eq!((report.spill_store_bytes, report.spill_load_bytes), (0, 0));
    }
}
