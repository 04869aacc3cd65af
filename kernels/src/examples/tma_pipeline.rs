//! A warp-specialized pipeline (sm_90a): the row sums of a large f32 matrix, `out[r] =
//! sum_c X[r][c]`, read by one TMA producer warp into a ring of [`STAGES`] shared buffers and
//! consumed by two consumer warpgroups, in the vocabulary of warp-specialized kernels: full/empty barriers,
//! `PipelineState`, `elect_one`, named barriers and register budgets per role.
//!
//! Block `b` sums rows `64 b .. 64 b + 63` over every 64-column tile:
//!
//! | warpgroup | role | per tile |
//! |-----------|------|----------|
//! | 0 | producer: one elected lane of warp 0 (`setmaxnreg.dec` 40) | waits `empty[ps]`, arrives on `full[ps]` expecting the tile's bytes, issues the TMA load, advances |
//! | 1, 2 | consumers (`setmaxnreg.inc` 232): 256 threads, 16 columns of one row each | wait `full[cs]`, read their columns of the stage into registers, add them up; the warpgroup meets at its named barrier, then one elected lane arrives on `empty[cs]` |
//!
//! After the last tile the 256 partial sums of each row meet in shared memory (a named barrier
//! of both consumer warpgroups) and the first 64 consumer threads write the block's rows.
//! TMA fills columns and rows past the matrix with zeros, so any extents work.
//!
//! Parameters `(out, x_map, rows, cols)`; launch [`launch_grid`] blocks of [`THREADS`] threads
//! with [`SMEM_BYTES`] of dynamic shared memory; `x_map` is the tensor map
//! [`RowSum::tma`]`.descriptor([rows, cols], [cols, 1])` over X.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("tma_pipeline.rs"), "```")]

use dsl_core::atom::tma::{make_tma_copy, TmaCopy, TmaGlobal, TmaKind};
use dsl_core::atom::{CopyAtom, UniversalCopy, ValType};
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError, Swizzle};
use dsl_core::pipeline::{
    elect_one, warp_id_in_warpgroup, warpgroup_id, warpgroup_sync, Barriers, NamedBarrier,
    PipelineState, RegisterBudget, TmaBarriers,
};
use dsl_core::tensor::{copy, Fragment, Idx, STensor};
use dsl_core::tiled::{make_fragment_like, make_tiled_copy, Side, TiledCopy, View};
use dsl_macros::{device, kernel, layout};
use thiserror::Error;

/// Depth of the ring.
pub const STAGES: u32 = 4;

/// Rows and columns of a tile.
pub const TILE: u32 = 64;

/// Consumer warpgroups.
pub const CONSUMERS: u32 = 2;

/// Threads per block: the producer warpgroup and the consumers.
pub const THREADS: u32 = 128 * (1 + CONSUMERS);

/// Dynamic shared memory: the ring (the partial sums are static).
pub const SMEM_BYTES: u32 = STAGES * TILE * TILE * 4;

/// TMA and `setmaxnreg`: sm_90a and sm_100a.
pub const TARGETS: &[Target] = &[Target::Sm90a, Target::Sm100a];

/// Blocks for `rows` rows.
pub fn launch_grid(rows: u32) -> (u32, u32, u32) {
    (rows.div_ceil(TILE).max(1), 1, 1)
}

/// Why the kernel could not be generated (a bug: the configuration is fixed).
#[derive(Debug, Error)]
pub enum RowSumError {
    /// A layout operation failed.
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// The host side of the program: the TMA copy of one tile, the ring's shared layout and the
/// consumers' tiled copy out of it.
#[derive(Debug, Clone)]
pub struct RowSum {
    /// `SM90_TMA_LOAD` of a 64x64 f32 tile (row-major, no swizzle).
    pub tma: TmaCopy,
    /// The ring: `(64, 64, STAGES)`, each tile row-major.
    pub ring: Layout,
    /// Stage -> registers: 256 threads, thread `t` reading 16 columns `16 (t / 64)..` of row
    /// `t % 64`, four 16-byte loads.
    pub s2r: TiledCopy,
    /// A consumer thread's 16 values, shaped as its partition of a stage `(CPY, CPY_M, CPY_N)`.
    pub frag: Layout,
}

impl RowSum {
    /// The configuration.
    pub fn new() -> Result<Self, LayoutError> {
        let tile = layout!((64, 64):(64, 1));
        let smem = ComposedLayout::new(Swizzle::identity(), 0, tile.clone());
        let tma = make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F32), &smem)?;
        let ring = Layout::new(
            IntTuple::ints(&[64, 64, i64::from(STAGES)]),
            IntTuple::ints(&[64, 1, 64 * 64]),
        )?;
        let atom = CopyAtom::new(UniversalCopy { bits: 128 }, ValType::F32)?;
        let s2r = make_tiled_copy(atom, &layout!((64, 4):(1, 64)), &layout!((1, 16):(0, 1)))?;
        // CuTe's make_fragment_like of one thread's partition of a stage.
        let frag = make_fragment_like(&s2r.partition(Side::Src, &View::from(tile))?.layout)?;
        Ok(RowSum {
            tma,
            ring,
            s2r,
            frag,
        })
    }
}

/// The producer warpgroup: one elected lane of warp 0 streams the block's tiles into the ring.
#[device]
fn producer(
    cfg: &RowSum,
    map: &TensorMap,
    full: &TmaBarriers,
    empty: &Barriers,
    ring: SharedPtr<f32>,
    row0: Var<u32>,
    tiles: Var<u32>,
) {
    RegisterBudget::Release(40).apply();
    if warp_id_in_warpgroup().eq_(0u32) & elect_one() {
        let mut ps = PipelineState::producer(STAGES);
        for kt in 0u32..tiles {
            empty.wait(&ps);
            full.arrive_expect_tx(&ps, cfg.tma.bytes());
            let stage = ring + ps.stage() * (TILE * TILE);
            cfg.tma
                .load(map, &[row0, kt * TILE], stage, full.at(ps.stage()), None);
            ps.advance();
        }
    }
}

/// Consumer `c` (0 or 1, a host value: each has its own named barrier): sums its threads'
/// columns of every tile and returns the thread's partial sum.
#[device]
fn consumer(
    cfg: &RowSum,
    c: u32,
    full: &TmaBarriers,
    empty: &Barriers,
    ring: SharedPtr<f32>,
    tiles: Var<u32>,
) -> Result<Var<f32>, RowSumError> {
    RegisterBudget::Claim(232).apply();
    let t = thread_idx_x() - 128u32;
    let stages = STensor::new(ring, cfg.ring.clone())?;
    let mine = stages.partition(&cfg.s2r, Side::Src, t)?; // (CPY, 1, 4, stage)
    let mut sum = Var::konst(0.0f32).fresh();
    let mut cs = PipelineState::consumer(STAGES);
    for _kt in 0u32..tiles {
        full.wait(&cs);
        let vals = Fragment::<f32>::new(cfg.frag.clone(), 1)?;
        let stage = mine.slice(&[Idx::All, Idx::All, Idx::All, Idx::Dyn(cs.stage())])?;
        copy(&cfg.s2r.atom, &stage, &vals)?;
        for v in &vals.regs {
            sum = sum + *v;
        }
        // Every thread of the warpgroup has read the stage: one arrival frees it.
        warpgroup_sync(1 + c);
        if warp_id_in_warpgroup().eq_(0u32) & elect_one() {
            empty.arrive(&cs);
        }
        cs.advance();
    }
    Ok(sum)
}

/// The kernel: parameters `(out, x_map, rows, cols)`.
#[kernel]
pub fn tma_pipeline(
    #[host] cfg: &RowSum,
    kb: &KernelBuilder,
    #[len(rows)] out: GlobalPtr<f32>,
    x_map: ConstTensorMap,
    rows: Var<u32>,
    cols: Var<u32>,
) -> Result<(), RowSumError> {
    // One block per SM with a register cap at entry: what setmaxnreg needs to take effect.
    kb.require_threads(THREADS, 1, 1);
    kb.min_blocks_per_sm(1);
    let ring = kb.dynamic_shared::<f32>(cfg.tma.smem_alignment());
    let full = TmaBarriers::new(kb, "full", STAGES, 1);
    let empty = Barriers::new(kb, "empty", STAGES, CONSUMERS);
    let partial = kb.shared_array::<f32>("partial", u64::from(4 * TILE), 16);
    if thread_idx_x().eq_(0u32) {
        prefetch_tensor_map(&x_map);
        full.init();
        empty.init();
        fence_mbarrier_init();
    }
    sync_threads();

    let row0 = block_idx_x() * TILE;
    let tiles = (cols + (TILE - 1)) / TILE;
    let wg = warpgroup_id();
    if wg.eq_(0u32) {
        producer(cfg, &x_map, &full, &empty, ring, row0, tiles);
    } else {
        // Both consumers' threads: row `t % 64`, column group `t / 64` of the partial sums.
        let t = thread_idx_x() - 128u32;
        if wg.eq_(1u32) {
            let s = consumer(cfg, 0, &full, &empty, ring, tiles)?;
            partial.store_at(t, s);
        } else {
            let s = consumer(cfg, 1, &full, &empty, ring, tiles)?;
            partial.store_at(t, s);
        }
        NamedBarrier::new(3, 128 * CONSUMERS).sync();
        if t.lt(TILE) {
            let mut total = partial.load_at(t);
            for g in 1..4u32 {
                total = total + partial.load_at(t + g * TILE);
            }
            let r = row0 + t;
            if r.lt(rows) {
                out.store_at(r, total);
            }
        }
    }
    Ok(())
}

// SAFETY: X is read only through its map, whose extent the encoder checked against its buffer
// (TMA fills what lies past it with zeros), and `out` is written only at rows below `rows`,
// checked against its length (`#[len(rows)]`).
unsafe impl TrustedKernel for TmaPipelineKernel {}

/// The registry's `tma_pipeline`.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    let fail = |e: &dyn std::fmt::Display| super::config_error("tma_pipeline", e);
    let cfg = RowSum::new().map_err(|e| fail(&e))?;
    tma_pipeline(&cfg).map_err(|e| match e {
        RowSumError::Build(b) => b,
        other => fail(&other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consumer_thread_reads_16_columns_of_one_row() {
        let cfg = RowSum::new().unwrap();
        assert_eq!(cfg.frag.size(), 16);
        let tile = View::from(layout!((64, 64):(64, 1)));
        for t in [0i64, 63, 64, 200, 255] {
            let p = cfg.s2r.get_slice(t).unwrap().partition_s(&tile).unwrap();
            let mut offs: Vec<i64> = (0..16).map(|i| p.eval(&[], i).unwrap()).collect();
            offs.sort();
            let first = (t % 64) * 64 + 16 * (t / 64);
            assert_eq!(offs, (first..first + 16).collect::<Vec<_>>(), "thread {t}");
        }
    }

    #[test]
    fn the_pipeline_emits_the_protocol() {
        let k = default_kernel().unwrap();
        let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        for needle in [
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.try_wait.parity",
            "mbarrier.arrive.expect_tx",
            "elect.sync",
            "setmaxnreg.dec.sync.aligned.u32 40",
            "setmaxnreg.inc.sync.aligned.u32 232",
            "bar.sync 1, 128",
            "bar.sync 2, 128",
            "bar.sync 3, 256",
            "ld.shared.v4.b32",
        ] {
            assert!(ptx.contains(needle), "{needle} missing:\n{ptx}");
        }
        let cfg = RowSum::new().unwrap();
        assert_eq!(cfg.tma.box_dims, vec![64, 64]);
        assert_eq!(cfg.tma.bytes(), 64 * 64 * 4);
        assert!(codegen_ptx::emit(&k, Target::Sm80).is_err());
    }
}
