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
pub mod direct;
pub mod fixup;
pub mod program;
pub mod row_split;
pub mod seam;
pub mod trace;

pub use config::{HopperConfig, HopperPlan, PlanError, CONSUMERS, REGISTERS};
pub use fixup::workspace_elems;
pub use seam::{HopperGemm, HopperWs};

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use dsl_core::layout::LayoutError;
use dsl_core::pipeline::{StreamKSplit, TailReuse};
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

/// How to launch a configuration for an `m x n x k` problem: persistent, as many clusters as
/// the device runs at once (whole clusters, so that no block waits for a second wave), no more
/// than there are cluster tiles unless stream-K shares their k-tiles out.
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
    /// The stream-K split of the tiles between the clusters (the kernel's `sk_tiles` and
    /// `sk_blocks`).
    pub split: StreamKSplit,
    /// A programmatic dependent launch: the kernel waits for the stream's previous kernel
    /// (`griddepcontrol.wait`) after its barrier setup, so that the setup and the launch
    /// overlap that kernel's last blocks; on the H200, back to back, it took 1.1 us off 16 x 6144 x
    /// 4096 (17.6 us) and 4.2 us off 16 x 28672 x 4096 (60 us).
    pub programmatic: bool,
}

impl HopperLaunch {
    /// The shape [`launch`] gives for `cfg` before the grid is sized (one cluster): what to ask
    /// the driver's occupancy about (`JitFunction::max_active_clusters` in codegen-ptx's JIT).
    pub fn probe(cfg: &HopperConfig) -> HopperLaunch {
        launch(cfg, 1, 1, 1, 1)
    }

    /// f32 elements of the workspace the launch needs ([`workspace_elems`]; without a stream-K
    /// split, the tile queue's [`dsl_core::pipeline::QUEUE_WORDS`] or 0).
    pub fn workspace_elems(&self, cfg: &HopperConfig) -> u64 {
        if self.split.sk_tiles == 0 {
            // Tiles from a queue keep its words there (never with a split: ping-pong).
            return if cfg.tile_queue {
                u64::from(dsl_core::pipeline::QUEUE_WORDS)
            } else {
                0
            };
        }
        workspace_elems(cfg, self.split.sk_blocks * cfg.cluster_shape().size())
    }
}

/// The launch of `cfg` for `m x n x k` when the device runs `resident` of its clusters at once
/// (see [`HopperLaunch`]): [`StreamKSplit::choose`] over the cluster tiles and their k-tiles
/// decides whether the tiles are walked whole (one cluster per tile, up to `resident`) or the
/// last wave's k-tiles are shared out (all `resident` clusters). `resident` is the driver's
/// answer for the kernel (`cuOccupancyMaxActiveClusters`: 66 2-block clusters on the H200, where
/// clusters must fit in a GPC); for one-block clusters it is the SM count; a `resident` of 0
/// launches one cluster. At most [`fixup::MAX_BLOCKS`] blocks.
///
/// ```
/// use kernels::hopper::{launch, HopperConfig};
/// let l = launch(&HopperConfig::WIDE, 4096, 4096, 4096, 132);
/// assert_eq!((l.grid, l.split.sk_tiles), ((132, 1, 1), 0)); // 512 tiles walked whole
/// // 2048 tiles: the last 68 shared out (their operands, 54 MB, fit in L2).
/// assert_eq!(launch(&HopperConfig::WIDE, 8192, 8192, 8192, 132).split.sk_tiles, 68);
/// // 1152 tiles: walked whole (the last 96 would gain less than the split costs).
/// assert_eq!(launch(&HopperConfig::WIDE, 6144, 6144, 6144, 132).split.sk_tiles, 0);
/// let decode: HopperConfig = "128x64x64s8_t".parse().unwrap();
/// let l = launch(&decode, 6144, 64, 4096, 132);
/// assert_eq!((l.grid, l.split.sk_tiles), ((132, 1, 1), 48)); // 48 tiles shared by 132 SMs
/// let pairs: HopperConfig = "128x256x64s3_c2x1".parse().unwrap();
/// assert_eq!(launch(&pairs, 4096, 4096, 4096, 60).grid, (120, 1, 1)); // 60 resident pairs
/// // Ping-pong consumers own whole tiles: 1280 of them walked whole, never shared out.
/// let pingpong: HopperConfig = "64x256x64s8_e128_r4_p".parse().unwrap();
/// assert_eq!(launch(&pingpong, 81920, 256, 256, 132).split.sk_tiles, 0);
/// assert_eq!(launch(&pingpong, 64, 256, 4096, 132).split.sk_tiles, 0);
/// // B resident a column of tiles per block (5 columns of 128): 130 blocks, 26 per column.
/// let columns: HopperConfig = "64x128x64s8_g1_f1_e64_r4_p".parse().unwrap();
/// assert_eq!(launch(&columns, 81920, 640, 256, 132).grid, (130, 1, 1));
/// // Evened waves: 1152 tiles in 9 waves of 128 blocks, not 8 of 132 and one of 96.
/// let even: HopperConfig = "128x256x64s3_n".parse().unwrap();
/// assert_eq!(launch(&even, 6144, 6144, 6144, 132).grid, (128, 1, 1));
/// // In pairs, 576 cluster tiles in 9 waves of 64 of the 66 resident clusters.
/// let even_pairs: HopperConfig = "128x256x64s3_c2x1_n".parse().unwrap();
/// assert_eq!(launch(&even_pairs, 6144, 6144, 6144, 66).grid, (128, 1, 1));
/// // Where stream-K shares the last wave out, every SM takes part as before.
/// assert_eq!(launch(&even, 8192, 8192, 8192, 132).grid, (132, 1, 1));
/// let small = launch(&pairs, 256, 256, 64, 60);
/// assert_eq!((small.grid, small.cluster), ((2, 1, 1), Some((2, 1, 1)))); // one cluster tile
/// ```
pub fn launch(cfg: &HopperConfig, m: u32, n: u32, k: u32, resident: u32) -> HopperLaunch {
    let size = cfg.cluster_shape().size();
    let (tiles_m, tiles_n) = cluster_tiles(cfg, m, n);
    let tiles = u64::from(tiles_m) * u64::from(tiles_n);
    let resident = resident.clamp(1, fixup::MAX_BLOCKS / size);
    let k_tiles = k.div_ceil(cfg.tile.2).max(1);
    let split = match u32::try_from(tiles) {
        // Ping-pong consumers own whole tiles: no partial sums to hand over.
        _ if cfg.pingpong => StreamKSplit::DATA_PARALLEL,
        Ok(tiles) if u64::from(tiles) * u64::from(k_tiles) < 1 << 32 => {
            let tail = tail_reuse(cfg, (tiles_m, tiles_n), k, tiles % resident);
            StreamKSplit::choose(tiles, k_tiles, resident, tail)
        }
        _ => StreamKSplit::DATA_PARALLEL,
    };
    // With the last wave's rows shared out, every block takes a piece.
    let clusters = if split.sk_tiles > 0 || cfg.row_split {
        resident
    } else if cfg.even_waves {
        // As many waves with the fewest clusters: the longest walk is as long, the rest end
        // with it.
        let waves = tiles.max(1).div_ceil(u64::from(resident));
        tiles.max(1).div_ceil(waves) as u32
    } else {
        u64::from(resident).min(tiles.max(1)) as u32
    };
    // A block keeping one column's B walks tiles `b, b + grid, ...` along N: a grid of whole
    // rows of tiles keeps each block in its column.
    let clusters = if cfg.b_column_resident() {
        (clusters / tiles_n).max(1) * tiles_n
    } else {
        clusters
    };
    HopperLaunch {
        grid: (clusters * size, 1, 1),
        block: (cfg.threads(), 1, 1),
        cluster: (size > 1).then_some((size, 1, 1)),
        dynamic_smem_bytes: cfg.smem_bytes(),
        split,
        programmatic: true,
    }
}

/// The L2 the last partial wave's operands must fit in for [`TailReuse::InL2`]: the H200's.
pub const L2_BYTES: u64 = 60 << 20;

/// Whether the first `tail` cluster tiles in `cfg`'s order over `tiles` read rows of A and
/// columns of B (`k` deep, 16-bit) that fit in [`L2_BYTES`] together: the stream-K region, which
/// runs first, so that it has the L2 to itself. With the region last (`_w`) it is the last
/// tiles, which run after the whole ones; their extent is taken to be the first tiles'.
fn tail_reuse(cfg: &HopperConfig, (tiles_m, tiles_n): (u32, u32), k: u32, tail: u32) -> TailReuse {
    let (rows, cols) = cfg.raster.first_tiles_extent(tiles_m, tiles_n, tail);
    let cluster = cfg.cluster_shape();
    let (bm, bn, _) = cfg.tile;
    let a = u64::from(rows) * u64::from(bm * cluster.x);
    let b = u64::from(cols) * u64::from(bn * cluster.y);
    if (a + b) * u64::from(k) * 2 <= L2_BYTES {
        TailReuse::InL2
    } else {
        TailReuse::PastL2
    }
}

/// The tile order table a kernel of `cfg` reads for `m x n`: the Hilbert order of the cluster
/// tiles ([`dsl_core::pipeline::hilbert_order`]) for `Raster::Hilbert`; one entry otherwise
/// (the kernel does not read it, but the parameter is a buffer).
pub fn tile_order(cfg: &HopperConfig, m: u32, n: u32) -> Vec<u32> {
    let (tiles_m, tiles_n) = cluster_tiles(cfg, m, n);
    match cfg.raster {
        dsl_core::pipeline::Raster::Hilbert => {
            dsl_core::pipeline::hilbert_order(tiles_m, tiles_n).unwrap_or_else(|| vec![0])
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

/// The PTX entry name of a configuration: `hopper_ws_{dtype}_{config}`.
pub fn entry_name(cfg: &HopperConfig, dtype: GemmDtype) -> String {
    format!("hopper_ws_{dtype}_{cfg}")
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

/// The kernel of the configuration spelled `spec` for `dtype`, named [`entry_name`]: what `rute
/// ptx hopper_ws_{dtype} --config SPEC` prints. The error is a sentence (the spelling's, or the
/// plan's).
pub fn configured_kernel(spec: &str, dtype: GemmDtype) -> Result<Kernel, String> {
    let cfg: HopperConfig = spec.parse()?;
    hopper_kernel(cfg, dtype).map_err(|e| e.to_string())
}

/// The kernel of `cfg` for `dtype`, named [`entry_name`].
pub fn hopper_kernel(cfg: HopperConfig, dtype: GemmDtype) -> Result<Kernel, HopperError> {
    kernel_of(HopperPlan::new(cfg, dtype)?)
}

/// The diagnostic build of `cfg` for `dtype` that stamps each block's phases into the workspace
/// ([`trace`]), named [`entry_name`] with `_traced`: for a data-parallel launch (no stream-K
/// split, whose partial sums the workspace holds) with a workspace of
/// [`trace::WORDS_PER_BLOCK`] `u64`s per block.
pub fn traced_kernel(cfg: HopperConfig, dtype: GemmDtype) -> Result<Kernel, HopperError> {
    let plan = HopperPlan {
        trace: true,
        ..HopperPlan::new(cfg, dtype)?
    };
    let mut k = kernel_of(plan)?;
    k.name.push_str("_traced");
    Ok(k)
}

/// The kernel of `plan`, named [`entry_name`].
fn kernel_of(plan: HopperPlan) -> Result<Kernel, HopperError> {
    let (cfg, dtype) = (plan.cfg, plan.dtype);
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

    /// The contract of a programmatic launch (`HopperLaunch::programmatic`): the kernel may start
    /// while the previous one still runs, so no instruction before `griddepcontrol.wait` touches
    /// global memory (the tensor maps are parameters; their prefetch reads no tensor).
    #[test]
    fn nothing_touches_global_memory_before_the_grid_dependency_wait() {
        let global = [
            "ld.global",
            "st.global",
            "atom.global",
            "red.global",
            "cp.async.bulk",
            "ld.acquire",
            "st.relaxed",
        ];
        for spec in HopperConfig::SWEEP {
            let cfg: HopperConfig = spec.parse().unwrap();
            let k = hopper_kernel(cfg, GemmDtype::Bf16).unwrap();
            let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
            let wait = ptx
                .find("griddepcontrol.wait;")
                .unwrap_or_else(|| panic!("{spec}: no griddepcontrol.wait"));
            let before = &ptx[..wait];
            for access in global {
                assert!(!before.contains(access), "{spec}: {access} before the wait");
            }
            // The loads are there, after it.
            assert!(ptx[wait..].contains("cp.async.bulk.tensor"), "{spec}");
            assert!(
                ptx[wait..].contains("griddepcontrol.launch_dependents;"),
                "{spec}"
            );
            assert!(launch(&cfg, 4096, 4096, 4096, 132).programmatic, "{spec}");
        }
    }

    /// Only the diagnostic build stamps the phases: once each, `%globaltimer` and `%clock64`
    /// side by side, into the workspace.
    #[test]
    fn only_the_traced_build_stamps_its_phases() {
        for spec in ["64x256x64s6_f1_e128_r4_p_l256_vnnf", "128x256x64s3"] {
            let cfg: HopperConfig = spec.parse().unwrap();
            let emit = |k: Kernel| codegen_ptx::emit(&k, Target::Sm90a).unwrap();
            let plain = emit(hopper_kernel(cfg, GemmDtype::Bf16).unwrap());
            let traced = emit(traced_kernel(cfg, GemmDtype::Bf16).unwrap());
            assert!(!plain.contains("%globaltimer") && !plain.contains("%clock64"));
            assert_eq!(
                traced.matches("%globaltimer").count(),
                trace::Phase::ALL.len()
            );
            assert_eq!(traced.matches("%clock64").count(), trace::Phase::ALL.len());
            assert!(traced.contains(&format!("{}_traced", entry_name(&cfg, GemmDtype::Bf16))));
            // It assembles without spills, as the build it traces does.
            let report = codegen_ptx::ptxas::assemble(&traced, Target::Sm90a).unwrap();
            assert_eq!(report.spill_store_bytes, 0, "{spec}: {}", report.log);
        }
    }

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
                // Stream-K: the partials from the registers, 16 bytes at a time, the flags
                // released and acquired at gpu scope; ping-pong walks whole tiles, its main
                // loops taking turns on named barriers instead.
                let stream_k = [
                    "st.global.v4.f32",
                    "ld.global.v4.f32",
                    "fence.acq_rel.gpu",
                    "st.relaxed.gpu.global.u32",
                    "ld.acquire.gpu.global.u32",
                ];
                for needle in stream_k {
                    // The queue's count releases its takes (one fence.acq_rel.gpu) too.
                    let queue = cfg.tile_queue && needle == "fence.acq_rel.gpu";
                    assert_eq!(
                        ptx.contains(needle),
                        !cfg.pingpong || queue,
                        "{spec} {dtype}: {needle}"
                    );
                }
                // Tiles from a queue: taken from the counter, handed over in shared memory.
                assert_eq!(
                    ptx.contains("atom.global.add.u32") && ptx.contains("ld.shared.u32"),
                    cfg.tile_queue,
                    "{spec} {dtype}: the tile queue"
                );
                assert_eq!(
                    ptx.contains("bar.arrive 3, 256") && ptx.contains("bar.sync 4, 256"),
                    cfg.pingpong,
                    "{spec} {dtype}"
                );
                // One staging tile: each consumer waits for it on its own barrier (5 or 6), the
                // other arrives there.
                for hand_over in [
                    "bar.sync 5, 256",
                    "bar.arrive 5, 256",
                    "bar.sync 6, 256",
                    "bar.arrive 6, 256",
                ] {
                    assert_eq!(
                        ptx.contains(hand_over),
                        cfg.one_staging,
                        "{spec} {dtype}: {hand_over}"
                    );
                }
                for needle in [
                    "wgmma.mma_async",
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                    "mbarrier.try_wait.parity",
                    "setmaxnreg.dec.sync.aligned.u32 40",
                    "setmaxnreg.inc.sync.aligned.u32 232",
                    // A programmatic launch: the setup overlaps the previous kernel.
                    "griddepcontrol.wait",
                    "griddepcontrol.launch_dependents",
                ] {
                    assert!(ptx.contains(needle), "{spec} {dtype}: no {needle}");
                }
                // D through shared memory and a TMA store, or (`_u`) from the registers, the
                // quads exchanging their pairs for stores wider than one.
                let staged = cfg.direct_store == 0;
                assert_eq!(
                    ptx.contains("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"),
                    staged,
                    "{spec} {dtype}"
                );
                if !staged {
                    // D's evict-first hint makes them streaming stores.
                    let cs = if cfg.cache_hints[2].is_some() {
                        ".cs"
                    } else {
                        ""
                    };
                    let store = match cfg.direct_store {
                        4 => format!("st.global{cs}.u32"),
                        8 => format!("st.global{cs}.v2.u32"),
                        _ => format!("st.global{cs}.v4.u32"),
                    };
                    assert!(ptx.contains(&store), "{spec} {dtype}: no {store}");
                    assert_eq!(
                        ptx.contains("shfl.sync.bfly.b32"),
                        cfg.direct_store > 4,
                        "{spec} {dtype}"
                    );
                }
                // Two staging tiles: each sub-tile waits on the store before last, not the
                // last (one staging tile with `_o` also waits on its store's reads, at 0).
                assert_eq!(
                    ptx.contains("cp.async.bulk.wait_group.read 1;"),
                    cfg.staging_buffers == 2,
                    "{spec} {dtype}"
                );
                assert_eq!(
                    ptx.contains("cp.async.bulk.wait_group.read 0;"),
                    staged && (cfg.staging_buffers == 1 || cfg.one_staging),
                    "{spec} {dtype}"
                );
                // Swapped, the staging tile is transposed: 16-bit stores, not stmatrix.
                assert_eq!(
                    ptx.contains("stmatrix.sync.aligned"),
                    staged && !cfg.swap_ab,
                    "{spec} {dtype}"
                );
                assert_eq!(
                    ptx.contains(".multicast::cluster"),
                    cfg.cluster != (1, 1),
                    "{spec}"
                );
                // Eviction hints ride on the copies `_v` names, as CuTe's policy words.
                let [a, b, d] = cfg.cache_hints;
                assert_eq!(
                    ptx.contains("bytes.L2::cache_hint") || ptx.contains("cluster.L2::cache_hint"),
                    a.is_some() || b.is_some(),
                    "{spec}"
                );
                assert_eq!(
                    ptx.contains("bulk_group.L2::cache_hint"),
                    staged && d.is_some(),
                    "{spec}"
                );
                // (D's stores from the registers take no policy word.)
                for h in [a, b, d.filter(|_| staged)].into_iter().flatten() {
                    let word = format!("0x{:016X};", h.policy());
                    assert!(ptx.contains(&word), "{spec}: no {word}");
                }
                assert!(codegen_ptx::emit(&k, Target::Sm100a).is_err());
            }
        }
    }
}
