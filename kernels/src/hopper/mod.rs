//! The warp-specialized Hopper GEMM (sm_90a): TMA loads into an mbarrier ring, `wgmma` from
//! shared memory, persistent blocks (or clusters) walking the output tiles, an epilogue through
//! `stmatrix` and a TMA store (see [`program`] for the roles and their protocol).
//!
//! `D = A * B^T` with A (`M x K`), B (`N x K`) and D (`M x N`) row-major, f16 or bf16 in and out,
//! f32 accumulation. Any M, N and K whose rows are 16-byte aligned (K and N multiples of 8):
//! TMA fills what lies past A and B with zeros and clips the stores of D.
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::gemm::GemmDtype;
//! use kernels::hopper::{hopper_kernel, HopperConfig};
//! let kernel = hopper_kernel(HopperConfig::WIDE, GemmDtype::Bf16).unwrap();
//! let ptx = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
//! assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
//! assert!(codegen_ptx::emit(&kernel, Target::Sm80).is_err());
//! ```

pub mod config;
pub mod program;
pub mod reduce;
pub mod seam;

pub use config::{HopperConfig, HopperPlan, PlanError, CONSUMERS, REGISTERS, THREADS};
pub use seam::{HopperGemm, HopperWs};

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use dsl_core::layout::LayoutError;
use thiserror::Error;

use crate::gemm::GemmDtype;

/// wgmma and setmaxnreg: sm_90a.
pub const TARGETS: &[Target] = &[Target::Sm90a];

/// Why a kernel of the program could not be generated.
#[derive(Debug, Error)]
pub enum HopperError {
    /// The configuration is outside what the program supports, or its plan failed.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// A layout operation failed while generating (a bug for a plan that was made).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// How to launch a configuration for an `m x n` output: persistent, as many clusters as the
/// device runs at once (whole clusters, so that no block waits for a second wave), no more than
/// there are cluster tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopperLaunch {
    /// Blocks, along x.
    pub grid: (u32, u32, u32),
    /// Threads per block.
    pub block: (u32, u32, u32),
    /// Blocks per cluster (along x), if more than one.
    pub cluster: Option<(u32, u32, u32)>,
    /// Dynamic shared memory per block.
    pub dynamic_smem_bytes: u32,
}

impl HopperLaunch {
    /// The shape [`launch`] gives for `cfg` before the grid is sized (one cluster): what to ask
    /// the driver's occupancy about (`JitFunction::max_active_clusters` in codegen-ptx's JIT).
    pub fn probe(cfg: &HopperConfig) -> HopperLaunch {
        launch(cfg, 1, 1, 1, 1)
    }
}

/// The launch of `cfg` for `m x n` split `splits` ways along K when the device runs `resident`
/// of its clusters at once (see [`HopperLaunch`]): one cluster per work unit (a cluster tile's
/// split) up to `resident`. `resident` is the driver's answer for the kernel
/// (`cuOccupancyMaxActiveClusters`: 66 2-block clusters on the H200, where clusters must fit in
/// a GPC); for one-block clusters it is the SM count. A `resident` of 0 launches one cluster.
///
/// ```
/// use kernels::hopper::{launch, HopperConfig};
/// let l = launch(&HopperConfig::WIDE, 4096, 4096, 1, 132);
/// assert_eq!(l.grid, (132, 1, 1)); // 512 tiles walked by one block per SM
/// let decode = launch(&HopperConfig::WIDE, 16, 4096, 8, 132);
/// assert_eq!(decode.grid, (128, 1, 1)); // 16 tiles, 8 splits each
/// let pairs: HopperConfig = "128x256x64s3_c2x1".parse().unwrap();
/// assert_eq!(launch(&pairs, 4096, 4096, 1, 60).grid, (120, 1, 1)); // 60 resident pairs
/// let small = launch(&pairs, 256, 256, 1, 60);
/// assert_eq!((small.grid, small.cluster), ((2, 1, 1), Some((2, 1, 1)))); // one cluster tile
/// ```
pub fn launch(cfg: &HopperConfig, m: u32, n: u32, splits: u32, resident: u32) -> HopperLaunch {
    let size = cfg.cluster_shape().size();
    let (tiles_m, tiles_n) = cluster_tiles(cfg, m, n);
    let units = u64::from(tiles_m) * u64::from(tiles_n) * u64::from(splits.max(1));
    let clusters = u64::from(resident.max(1)).min(units.max(1)) as u32;
    HopperLaunch {
        grid: (clusters * size, 1, 1),
        block: (THREADS, 1, 1),
        cluster: (size > 1).then_some((size, 1, 1)),
        dynamic_smem_bytes: cfg.smem_bytes(),
    }
}

/// The tile order table a kernel of `cfg` reads for `m x n` split `splits` ways along K: the
/// Hilbert order of the work units ([`dsl_core::pipeline::hilbert_order`] over the cluster tiles,
/// with the splits as more rows of them) for `Raster::Hilbert`; one entry otherwise (the kernel
/// does not read it, but the parameter is a buffer).
pub fn tile_order(cfg: &HopperConfig, m: u32, n: u32, splits: u32) -> Vec<u32> {
    let (tiles_m, tiles_n) = cluster_tiles(cfg, m, n);
    match cfg.raster {
        dsl_core::pipeline::Raster::Hilbert => {
            dsl_core::pipeline::hilbert_order(tiles_m.saturating_mul(splits.max(1)), tiles_n)
                .unwrap_or_else(|| vec![0])
        }
        _ => vec![0],
    }
}

/// The grid of cluster tiles of `cfg` over an `m x n` output: `(along M, along N)`, as the
/// kernel walks it.
pub fn cluster_tiles(cfg: &HopperConfig, m: u32, n: u32) -> (u32, u32) {
    let (bm, bn, _) = cfg.tile;
    let cluster = cfg.cluster_shape();
    (
        m.div_ceil(bm).div_ceil(cluster.x),
        n.div_ceil(bn).div_ceil(cluster.y),
    )
}

/// Most ways [`split_k`] splits K.
pub const MAX_SPLITS: u32 = 16;

/// Fewest k-tiles [`split_k`] leaves a split: fewer would spend more of each split filling and
/// draining the ring than streaming through it.
pub const MIN_SPLIT_K_TILES: u32 = 4;

/// A work unit's fixed cost (filling the ring, the epilogue) as a fraction of one unsplit
/// tile's time, in [`split_k`]'s estimate.
pub const UNIT_OVERHEAD: f64 = 0.05;

/// How many ways to split K for `m x n x k` (the kernel's operands: swapped ones for a `_t`
/// configuration) when the device runs `resident` clusters of `cfg` at once.
///
/// The estimate it minimises: waves of work units (`tiles x splits` over `resident`) times a
/// unit's time (its share of K plus [`UNIT_OVERHEAD`]). Each split keeps at least
/// [`MIN_SPLIT_K_TILES`] k-tiles, at most [`MAX_SPLITS`] splits, evened out so that every split
/// has a k-tile (split `s` takes `s * per .. min((s + 1) * per, k_tiles)`, `per = ceil(k_tiles /
/// splits)`). Unswapped, the partial sums of 128-row tiles cost as much traffic as the operands
/// once M is a few hundred, so K is split only where the tiles would leave three quarters of
/// the device idle.
///
/// ```
/// use kernels::hopper::{split_k, HopperConfig};
/// let wide = HopperConfig::WIDE; // 128x256 tiles
/// assert_eq!(split_k(&wide, 4096, 4096, 4096, 132), 1); // 512 tiles
/// assert_eq!(split_k(&wide, 128, 2048, 8192, 132), 16); // 8 tiles, 128 k-tiles: 128 units
/// let decode: HopperConfig = "128x16x64s8_t".parse().unwrap();
/// assert_eq!(split_k(&decode, 6144, 16, 4096, 132), 5); // 48 weight tiles: 240 units
/// assert_eq!(split_k(&decode, 6144, 16, 256, 132), 1); // 4 k-tiles: nothing to split
/// ```
pub fn split_k(cfg: &HopperConfig, m: u32, n: u32, k: u32, resident: u32) -> u32 {
    let (tiles_m, tiles_n) = cluster_tiles(cfg, m, n);
    let tiles = u64::from(tiles_m) * u64::from(tiles_n);
    let k_tiles = k.div_ceil(cfg.tile.2).max(1);
    let resident = u64::from(resident.max(1));
    if tiles == 0 || (!cfg.swap_ab && tiles * 4 >= resident) {
        return 1;
    }
    let mut best = (f64::INFINITY, 1);
    for ways in 1..=MAX_SPLITS {
        if ways > 1 && k_tiles / ways < MIN_SPLIT_K_TILES {
            break;
        }
        let per = k_tiles.div_ceil(ways);
        let splits = k_tiles.div_ceil(per);
        let waves = (tiles * u64::from(splits)).div_ceil(resident);
        let time = waves as f64 * (f64::from(per) / f64::from(k_tiles) + UNIT_OVERHEAD);
        if time < best.0 - 1e-9 {
            best = (time, splits);
        }
    }
    best.1
}

/// f32 elements of the split-K workspace for `m x n` in `splits` ways: one `m x n` slice per
/// split (none without a split), or `None` when the slices would not be addressable by the
/// kernel's 32-bit offsets.
pub fn workspace_elems(m: u32, n: u32, splits: u32) -> Option<u64> {
    if splits <= 1 {
        return Some(0);
    }
    let elems = u64::from(m) * u64::from(n) * u64::from(splits);
    (elems < 1 << 32).then_some(elems)
}

/// The PTX entry name of a configuration: `hopper_ws_{dtype}_{config}`.
pub fn entry_name(cfg: &HopperConfig, dtype: GemmDtype) -> String {
    format!("hopper_ws_{dtype}_{cfg}")
}

/// The split-K reduction's kernel for `dtype`, named `splitk_reduce_{dtype}`.
pub fn reduce_kernel(dtype: GemmDtype) -> Result<Kernel, BuildError> {
    let mut k = match dtype {
        GemmDtype::F16 => reduce::splitk_reduce::<half::f16>()?,
        GemmDtype::Bf16 => reduce::splitk_reduce::<half::bf16>()?,
    };
    k.name = format!("splitk_reduce_{dtype}");
    Ok(k)
}

/// The registry's `hopper_ws_f16` / `hopper_ws_bf16`: [`HopperConfig::WIDE`].
pub fn default_kernel(dtype: GemmDtype) -> Result<Kernel, BuildError> {
    let mut k = hopper_kernel(HopperConfig::WIDE, dtype).map_err(|e| match e {
        HopperError::Build(b) => b,
        other => BuildError::BadArgument {
            kernel: format!("hopper_ws_{dtype}"),
            message: other.to_string(),
        },
    })?;
    k.name = format!("hopper_ws_{dtype}");
    Ok(k)
}

/// The kernel of `cfg` for `dtype`, named [`entry_name`].
pub fn hopper_kernel(cfg: HopperConfig, dtype: GemmDtype) -> Result<Kernel, HopperError> {
    let plan = HopperPlan::new(cfg, dtype)?;
    let mut k = match dtype {
        GemmDtype::F16 => program::hopper_ws::<half::f16>(&plan)?,
        GemmDtype::Bf16 => program::hopper_ws::<half::bf16>(&plan)?,
    };
    k.name = entry_name(&cfg, dtype);
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sweep configuration generates and emits for sm_90a with the instructions the design
    /// names (multicast only in clusters), and is refused for the other targets.
    #[test]
    fn every_sweep_configuration_emits_its_protocol() {
        for spec in HopperConfig::SWEEP {
            let cfg: HopperConfig = spec.parse().unwrap();
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let k = hopper_kernel(cfg, dtype).unwrap_or_else(|e| panic!("{spec}: {e}"));
                let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
                if let Ok(dir) = std::env::var("RUTE_DUMP_PTX") {
                    std::fs::write(format!("{dir}/{}.ptx", k.name), &ptx).unwrap();
                }
                for needle in [
                    "wgmma.mma_async",
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                    "mbarrier.try_wait.parity",
                    "setmaxnreg.dec.sync.aligned.u32 40",
                    "setmaxnreg.inc.sync.aligned.u32 232",
                    // The split-K partials, straight from the registers.
                    "st.global",
                ] {
                    assert!(ptx.contains(needle), "{spec} {dtype}: no {needle}");
                }
                // Swapped, the output always goes through the partials: no TMA store.
                for needle in [
                    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
                    "stmatrix.sync.aligned",
                ] {
                    assert_eq!(
                        ptx.contains(needle),
                        !cfg.swap_ab,
                        "{spec} {dtype}: {needle}"
                    );
                }
                assert_eq!(
                    ptx.contains(".multicast::cluster"),
                    cfg.cluster != (1, 1),
                    "{spec}"
                );
                assert!(codegen_ptx::emit(&k, Target::Sm100a).is_err());
            }
        }
    }
}
