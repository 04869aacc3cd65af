//! A stream through shared memory with TMA (sm_90a): `D = A` for a row-major 16-bit matrix,
//! moved in the short-K GEMM's pattern without its math, to measure what that pattern itself
//! reaches beside a device copy of the same bytes.
//!
//! The matrix is walked in tiles of 64, 128 or 256 rows (the short-K GEMM's 64, cuBLAS's 128),
//! each in k-tiles of [`TILE_COLS`] columns (8 KiB for 64 rows, 128-byte swizzled: the GEMM's
//! stages of A), the tiles shared out over a persistent grid as the GEMM's walk shares them
//! (block `b` takes tiles `b`, `b + grid`, ...).
//! Two lanes of a 64-thread block run a ring of `stages` k-tiles:
//!
//! | warp | role | per k-tile |
//! |------|------|------------|
//! | 0 (one elected lane) | loader | waits `empty[ps]`, arrives on `full[ps]` expecting the k-tile's bytes, issues its TMA load |
//! | 1 (one elected lane) | storer | waits `full[cs]`, issues the TMA store of the stage to the same place of D and commits it; once `lag` newer stores are pending, the oldest has read its stage (`cp.async.bulk.wait_group.read lag`), which it frees on `empty` |
//!
//! TMA fills rows and columns past the matrix with zeros on the load and clips them on the
//! store, so any extents whose rows are a multiple of 16 bytes work.
//!
//! Parameters `(a_map, d_map, tiles, k_tiles)`; launch at most `tiles` blocks of [`THREADS`]
//! threads with [`TmaStream::smem_bytes`] of dynamic shared memory; the maps are
//! [`TmaStream::descriptors`] over A and D.
//!
//! ```
//! use kernels::examples::tma_stream::{tma_stream, TmaStream};
//! let cfg = TmaStream::new(64, 6, 2).unwrap();
//! assert_eq!(cfg.smem_bytes(), 6 * 8192);
//! let k = tma_stream(&cfg).unwrap();
//! let ptx = codegen_ptx::emit(&k, dsl_core::ir::Target::Sm90a).unwrap();
//! assert!(ptx.contains("cp.async.bulk.wait_group.read 2"));
//! // A store may only trail the loads by less than the ring.
//! assert!(TmaStream::new(64, 4, 4).is_err());
//! ```
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("tma_stream.rs"), "```")]

use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
use dsl_core::atom::tma::{make_tma_copy, L2Promotion, TmaCopy, TmaDescriptor, TmaGlobal, TmaKind};
use dsl_core::atom::ValType;
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::layout::{IntTuple, LayoutError};
use dsl_core::pipeline::{elect_one, Barriers, PipelineState, TmaBarriers};
use dsl_macros::{device, kernel};
use half::f16;
use thiserror::Error;

/// Columns of a k-tile: one 128-byte swizzled row of 16-bit elements.
pub const TILE_COLS: u32 = 64;

/// Threads per block: the loader's warp and the storer's.
pub const THREADS: u32 = 64;

/// The most shared memory a block may take on sm_90 (227 KiB).
pub const SMEM_LIMIT: u32 = 227 * 1024;

/// TMA: sm_90a and sm_100a.
pub const TARGETS: &[Target] = &[Target::Sm90a, Target::Sm100a];

/// Why a stream could not be configured or generated.
#[derive(Debug, Error)]
pub enum TmaStreamError {
    /// The ring cannot run: a store must free its stage before the loader needs it again.
    #[error(
        "a ring of {stages} stages of {rows} rows with stores {lag} behind: tiles have 64, 128 \
         or 256 rows, the ring as many stages as fit in {SMEM_LIMIT} bytes, the lag fewer than \
         the stages"
    )]
    Ring {
        /// Rows of a tile asked for.
        rows: u32,
        /// Stages asked for.
        stages: u32,
        /// Lag asked for.
        lag: u32,
    },
    /// A layout operation failed.
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
}

/// The host side: the ring's depth, how far the stores trail, and the TMA copies of a k-tile.
#[derive(Debug, Clone)]
pub struct TmaStream {
    /// Rows of a tile.
    pub rows: u32,
    /// k-tiles in the ring.
    pub stages: u32,
    /// Stores left pending before the oldest one's stage is freed.
    pub lag: u32,
    /// `SM90_TMA_LOAD` of a k-tile into a 128-byte swizzled stage (the GEMM's A stage).
    pub load: TmaCopy,
    /// `SM90_TMA_STORE` of a stage back out, the same box.
    pub store: TmaCopy,
}

impl TmaStream {
    /// A ring of `stages` k-tiles of `rows` rows whose stores trail by `lag`: an error unless
    /// `rows` is 64, 128 or 256, `0 < stages`, `lag < stages` and the ring fits in shared
    /// memory.
    pub fn new(rows: u32, stages: u32, lag: u32) -> Result<Self, TmaStreamError> {
        let stage_bytes = rows * TILE_COLS * 2;
        if !matches!(rows, 64 | 128 | 256)
            || stages == 0
            || lag >= stages
            || stages * stage_bytes > SMEM_LIMIT
        {
            return Err(TmaStreamError::Ring { rows, stages, lag });
        }
        let smem = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?.tile_to_shape(
            &IntTuple::ints(&[i64::from(rows), i64::from(TILE_COLS)]),
            None,
        )?;
        let global = TmaGlobal::row_major(ValType::F16);
        Ok(TmaStream {
            rows,
            stages,
            lag,
            load: make_tma_copy(TmaKind::Load, &global, &smem)?,
            store: make_tma_copy(TmaKind::Store, &global, &smem)?,
        })
    }

    /// Elements of one stage.
    pub fn stage_elems(&self) -> u32 {
        self.rows * TILE_COLS
    }

    /// Dynamic shared memory: the ring.
    pub fn smem_bytes(&self) -> u32 {
        self.stages * self.stage_elems() * 2
    }

    /// The tensor maps of A (the load's, with `promotion`) and D (the store's) for a
    /// `rows x cols` row-major matrix: an error unless a row is a multiple of 16 bytes.
    pub fn descriptors(
        &self,
        rows: u64,
        cols: u64,
        promotion: L2Promotion,
    ) -> Result<[TmaDescriptor; 2], LayoutError> {
        Ok([
            self.load
                .descriptor(&[rows, cols], &[cols, 1])?
                .with_l2_promotion(promotion),
            self.store.descriptor(&[rows, cols], &[cols, 1])?,
        ])
    }

    /// Tiles and k-tiles of an `m x cols` matrix: the kernel's last two parameters.
    pub fn tiles(&self, m: u32, cols: u32) -> (u32, u32) {
        (m.div_ceil(self.rows), cols.div_ceil(TILE_COLS))
    }
}

/// Where the two lanes meet: the ring (stages of `stage_elems`) and its barriers.
struct Ring<'a> {
    stages: SharedPtr<f16>,
    stage_elems: u32,
    full: &'a TmaBarriers,
    empty: &'a Barriers,
}

impl Ring<'_> {
    /// Stage `s`'s first element.
    fn stage(&self, s: Var<u32>) -> SharedPtr<f16> {
        self.stages + s * self.stage_elems
    }
}

/// The loader: every k-tile of the block's tiles into the ring.
#[device]
fn loader(cfg: &TmaStream, map: &TensorMap, ring: &Ring, (tiles, k_tiles): (Var<u32>, Var<u32>)) {
    let mut ps = PipelineState::producer(cfg.stages);
    let mut t = block_idx_x().fresh();
    while t.lt(tiles) {
        for kt in Var::konst(0u32)..k_tiles {
            ring.empty.wait(&ps);
            ring.full.arrive_expect_tx(&ps, cfg.load.bytes());
            let origin = [t * cfg.rows, kt * TILE_COLS];
            cfg.load.load(
                map,
                &origin,
                ring.stage(ps.stage()),
                ring.full.at(ps.stage()),
                None,
            );
            ps.advance();
        }
        t.set(t + grid_dim_x());
    }
}

/// The storer: every stage out to the same place of D, each freed once its store has read it.
#[device]
fn storer(cfg: &TmaStream, map: &TensorMap, ring: &Ring, (tiles, k_tiles): (Var<u32>, Var<u32>)) {
    let mut cs = PipelineState::consumer(cfg.stages);
    // The oldest stage whose store may still read it, and how many such stores there are.
    let mut oldest = PipelineState::consumer(cfg.stages);
    let mut pending = Var::konst(0u32).fresh();
    let mut t = block_idx_x().fresh();
    while t.lt(tiles) {
        for kt in Var::konst(0u32)..k_tiles {
            ring.full.wait(&cs);
            // TMA wrote the stage and TMA reads it: one proxy, ordered by the barrier, so no
            // `fence.proxy.async` between them (that is for the threads' own writes).
            cfg.store
                .store(map, &[t * cfg.rows, kt * TILE_COLS], ring.stage(cs.stage()));
            bulk_commit_group();
            cs.advance();
            if pending.ge(cfg.lag) {
                // All but the `lag` newest stores have read their stages: the oldest is free.
                bulk_wait_group_read(cfg.lag);
                ring.empty.arrive(&oldest);
                oldest.advance();
            } else {
                pending.set(pending + 1u32);
            }
        }
        t.set(t + grid_dim_x());
    }
    // D is written before the block exits.
    bulk_wait_group(0);
}

/// The kernel: parameters `(a_map, d_map, tiles, k_tiles)`.
#[kernel]
pub fn tma_stream(
    #[host] cfg: &TmaStream,
    kb: &KernelBuilder,
    a_map: ConstTensorMap,
    d_map: TensorMap,
    tiles: Var<u32>,
    k_tiles: Var<u32>,
) {
    kb.require_threads(THREADS, 1, 1);
    kb.min_blocks_per_sm(1);
    let stages = kb.dynamic_shared::<f16>(cfg.load.smem_alignment());
    let full = TmaBarriers::new(kb, "full", cfg.stages, 1);
    let empty = Barriers::new(kb, "empty", cfg.stages, 1);
    if thread_idx_x().eq_(0u32) {
        prefetch_tensor_map(&a_map);
        prefetch_tensor_map(&d_map);
        full.init();
        empty.init();
        fence_mbarrier_init();
    }
    sync_threads();
    let ring = Ring {
        stages,
        stage_elems: cfg.stage_elems(),
        full: &full,
        empty: &empty,
    };
    let warp = thread_idx_x() / 32u32;
    let lane_elected = elect_one();
    if warp.eq_(0u32) & lane_elected {
        loader(cfg, &a_map, &ring, (tiles, k_tiles));
    } else if warp.eq_(1u32) & lane_elected {
        storer(cfg, &d_map, &ring, (tiles, k_tiles));
    }
}

// SAFETY: the kernel reaches global memory only through its two maps, whose extents the
// encoder checked against their buffers (TMA clips boxes at them); it stores only through
// `d_map`, whose buffer the typed launch borrows mutably.
unsafe impl TrustedKernel for TmaStreamKernel {}

/// The registry's `tma_stream`: six stages of 64 rows (the short-K GEMM's ring), stores two
/// behind.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    let fail = |e: &dyn std::fmt::Display| super::config_error("tma_stream", e);
    let cfg = TmaStream::new(64, 6, 2).map_err(|e| fail(&e))?;
    tma_stream(&cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The load and the store move the same box, one per k-tile: 64 columns of the tile's rows.
    #[test]
    fn load_and_store_move_one_k_tile_each() {
        for rows in [64u32, 128, 256] {
            let cfg = TmaStream::new(rows, 4, 3).unwrap();
            assert_eq!(cfg.load.bytes(), cfg.stage_elems() * 2);
            assert_eq!(cfg.load.boxes.len(), 1);
            assert_eq!(cfg.store.boxes.len(), 1);
            assert_eq!(cfg.load.box_dims, vec![64, rows]);
            assert_eq!(cfg.store.box_dims, cfg.load.box_dims);
            assert_eq!(cfg.tiles(81920, 256), (81920 / rows, 4));
            assert_eq!(cfg.tiles(1000, 200), (1000u32.div_ceil(rows), 4));
        }
        let cfg = TmaStream::new(64, 8, 3).unwrap();
        let [a, d] = cfg.descriptors(81920, 256, L2Promotion::B256).unwrap();
        assert_eq!(a.l2_promotion, L2Promotion::B256);
        assert_eq!(a.global_dims, d.global_dims);
    }

    /// Rings that cannot run are refused with their numbers.
    #[test]
    fn rings_that_cannot_run_are_refused() {
        for (rows, stages, lag) in [
            (64, 0, 0),
            (64, 4, 4),
            (64, 4, 9),
            (64, 29, 1),
            (96, 4, 1),
            (256, 8, 1),
        ] {
            let e = TmaStream::new(rows, stages, lag).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "{stages} stages of {rows} rows with stores {lag} behind"
                )),
                "{e}"
            );
        }
        assert!(TmaStream::new(64, 28, 27).is_ok());
        assert!(TmaStream::new(256, 7, 1).is_ok());
    }

    /// The PTX has the protocol: TMA loads and stores, the barriers' waits, the lagged read
    /// waits and the final full wait.
    #[test]
    fn the_stream_emits_its_protocol() {
        let k = default_kernel().unwrap();
        let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        for needle in [
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
            "mbarrier.try_wait.parity",
            "cp.async.bulk.wait_group.read 2",
            "cp.async.bulk.wait_group 0",
        ] {
            assert!(ptx.contains(needle), "{needle}");
        }
        // Every tile height assembles without spills (ptxas: RUTE_PTXAS).
        for rows in [64, 128, 256] {
            let k = tma_stream(&TmaStream::new(rows, 3, 1).unwrap()).unwrap();
            let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
            let report = codegen_ptx::ptxas::assemble(&ptx, Target::Sm90a).unwrap();
            assert_eq!(
                report.spill_store_bytes + report.spill_load_bytes,
                0,
                "{rows} rows"
            );
        }
    }
}
