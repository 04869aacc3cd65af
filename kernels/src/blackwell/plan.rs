//! The host side of a configuration ([`BlackwellPlan`]): the MMA atom and its tiled MMA, the
//! shared-memory layouts of the ring and the staging tiles, the TMA copies made from them (the
//! tensor maps follow from the same values), the TMEM load and the staging copy, and the
//! launch: grid, cluster, block, shared memory and the kernel's arguments.

use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
use dsl_core::atom::tma::{make_tma_copy, TmaCopy, TmaGlobal, TmaKind};
use dsl_core::atom::{CopyAtom, MmaAtom, TmemCopy, TmemDirection, Umma, UniversalCopy, ValType};
use dsl_core::ir::op::{CtaGroup, TmemShape};
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError};
use dsl_core::tiled::{make_tiled_copy, make_tiled_mma, Idx, TiledCopy, TiledMma, View};

use super::config::{BlackwellConfig, ConfigError, BLOCK_K, BLOCK_M};
use super::BlackwellError;
use crate::gemm::{GemmArg, GemmDtype, GemmOperand, LaunchPlan};

/// A configuration made concrete for one element type (f32 accumulation in TMEM).
#[derive(Debug, Clone)]
pub struct BlackwellPlan {
    /// The configuration.
    pub cfg: BlackwellConfig,
    /// The element type of A, B and D.
    pub dtype: GemmDtype,
    /// The MMA instruction: `M = 128 x CTA group`, `N` the configuration's MMA N, K = 16.
    pub umma: Umma,
    /// The tiled MMA of one instruction (a pair's: two "threads", the blocks).
    pub mma: TiledMma,
    /// The A ring: `(BLOCK_M, BLOCK_K, consumers, depth)`, K-major, 128-byte swizzled.
    pub smem_a: ComposedLayout,
    /// The B ring: `(tile_n, BLOCK_K, depth)`.
    pub smem_b: ComposedLayout,
    /// Consumer `c`'s A of every stage as the MMA partitions it: `(MMA M, BLOCK_K, depth)`,
    /// where for a pair the other block's rows lie at the same offsets (of its own shared
    /// memory: a stride-0 mode).
    pub mma_a: Vec<ComposedLayout>,
    /// B of every stage as the MMA partitions it: `(MMA N, BLOCK_K, depth)`.
    pub mma_b: ComposedLayout,
    /// One writeback warpgroup's staging tile: `(BLOCK_M, epilogue columns)`, row-major,
    /// swizzled as wide as it is.
    pub smem_d: ComposedLayout,
    /// The TMA load of one consumer's A tile of a stage (a pair: `SM100_TMA_2SM_LOAD`).
    pub tma_a: TmaCopy,
    /// The TMA load of a stage's B tile.
    pub tma_b: TmaCopy,
    /// The TMA store of a staging tile.
    pub tma_d: TmaCopy,
    /// A writeback warp's TMEM load of its 32 lanes, one epilogue chunk's columns.
    pub tmem_load: TmemCopy,
    /// Registers -> staging tile: thread `t` of the warpgroup writes row `t`, 16 bytes a store.
    pub r2s: TiledCopy,
}

/// The tile one TMA load fills: `(rows, BLOCK_K)` of the ring's atom.
fn stage_tile(rows: u32) -> Result<ComposedLayout, LayoutError> {
    gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?.tile_to_shape(
        &IntTuple::ints(&[i64::from(rows), i64::from(BLOCK_K)]),
        None,
    )
}

/// `ring` seen with `rows * blocks` rows, each block's rows at the same offsets: what the MMA
/// of a group partitions (a block's own rows for one block).
fn group_view(
    ring: &ComposedLayout,
    rows: u32,
    blocks: u32,
    stages: u32,
) -> Result<ComposedLayout, LayoutError> {
    let (r, k, s) = (i64::from(rows), i64::from(BLOCK_K), i64::from(stages));
    let view = format!(
        "(({r},{}),{k},{s}):((1,0),{r},{})",
        i64::from(blocks),
        r * k
    );
    ring.compose(&view.parse()?)
}

impl BlackwellPlan {
    /// The plan of `cfg` for elements of `dtype`.
    pub fn new(cfg: BlackwellConfig, dtype: GemmDtype) -> Result<BlackwellPlan, BlackwellError> {
        cfg.check().map_err(BlackwellError::Config)?;
        let val = dtype.val_type();
        let umma = Umma::ss(cfg.mma_m(), cfg.mma_n(), cfg.cta_group, ValType::F32, val);
        umma.check()
            .map_err(|why| BlackwellError::Config(ConfigError::Range(why)))?;
        let mma = make_tiled_mma(MmaAtom::new(umma), &Layout::vector(1, 0)?, &[])?;
        let (nc, depth) = (i64::from(cfg.consumers.count()), i64::from(cfg.depth));
        let sw128 = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?;
        let (bm, bk) = (i64::from(BLOCK_M), i64::from(BLOCK_K));
        let smem_a = sw128.tile_to_shape(&IntTuple::ints(&[bm, bk, nc, depth]), None)?;
        let smem_b =
            sw128.tile_to_shape(&IntTuple::ints(&[i64::from(cfg.tile_n), bk, depth]), None)?;
        let blocks = cfg.cta_group.count();
        let mma_a = (0..nc)
            .map(|c| {
                // Consumer c's A of every stage (the ring's consumer mode at c).
                let ring = View::from(smem_a.clone())
                    .slice(&[Idx::All, Idx::All, Idx::At(c), Idx::All])?
                    .at(&[])?;
                group_view(&ring, BLOCK_M, blocks, cfg.depth)
            })
            .collect::<Result<Vec<_>, LayoutError>>()?;
        let mma_b = group_view(&smem_b, cfg.tile_n, blocks, cfg.depth)?;
        let global = TmaGlobal::row_major(val);
        let load_kind = match cfg.cta_group {
            CtaGroup::One => TmaKind::Load,
            CtaGroup::Two => TmaKind::Load2Sm,
        };
        let tma_a = make_tma_copy(load_kind, &global, &stage_tile(BLOCK_M)?)?;
        let tma_b = make_tma_copy(load_kind, &global, &stage_tile(cfg.tile_n)?)?;
        let epi = i64::from(cfg.epilogue_columns);
        // The widest swizzle whose span the chunk's rows fill (16 columns: 32 bytes).
        let swizzle = match epi * 2 {
            b if b >= 128 => GmmaLayoutType::B128,
            64 => GmmaLayoutType::B64,
            _ => GmmaLayoutType::B32,
        };
        let smem_d = gmma_atom(GmmaMajor::K, swizzle, 2)?
            .tile_to_shape(&IntTuple::ints(&[bm, epi]), None)?;
        let tma_d = make_tma_copy(TmaKind::Store, &global, &smem_d)?;
        let tmem_load = TmemCopy::new(
            TmemDirection::Load,
            TmemShape::S32x32b,
            cfg.epilogue_columns,
        );
        tmem_load
            .check()
            .map_err(|why| BlackwellError::Config(ConfigError::Range(why)))?;
        let r2s = make_tiled_copy(
            CopyAtom::new(UniversalCopy { bits: 128 }, val)?,
            &Layout::new(IntTuple::ints(&[bm, 1]), IntTuple::ints(&[1, 0]))?,
            &Layout::new(IntTuple::ints(&[1, 8]), IntTuple::ints(&[0, 1]))?,
        )?;
        Ok(BlackwellPlan {
            cfg,
            dtype,
            umma,
            mma,
            smem_a,
            smem_b,
            mma_a,
            mma_b,
            smem_d,
            tma_a,
            tma_b,
            tma_d,
            tmem_load,
            r2s,
        })
    }

    /// Elements of A one stage holds for one consumer (`BLOCK_M x BLOCK_K`).
    pub fn a_tile_elems(&self) -> u32 {
        BLOCK_M * BLOCK_K
    }

    /// Elements of A one stage holds (every consumer's tile).
    pub fn a_stage_elems(&self) -> u32 {
        self.cfg.consumers.count() * self.a_tile_elems()
    }

    /// Elements of B one stage holds.
    pub fn b_stage_elems(&self) -> u32 {
        self.cfg.tile_n * BLOCK_K
    }

    /// How to launch the plan's kernel for an `m x n x k` problem on a device of `sms`
    /// multiprocessors: persistent, as many clusters as run at once (no more than there are
    /// cluster tiles), each of [`BlackwellConfig::cluster_blocks`] blocks; the arguments are
    /// the tensor maps of A (`m x k`), B (`n x k`) and D (`m x n`), all row-major, then `m`, `n`,
    /// `k`. The maps need `k` and `n` to be multiples of 8 (16-byte rows: an error names the
    /// stride otherwise); `m`, `n` and `k` at least 1 (the runtime's checks refuse a zero
    /// dimension: with no k-tile the accumulator would not be written). Residues of the tiles
    /// are TMA's: loads past the matrices fill zeros, stores past them are dropped.
    pub fn launch(&self, m: u32, n: u32, k: u32, sms: u32) -> Result<LaunchPlan, LayoutError> {
        let cfg = &self.cfg;
        let (rows, cols) = cfg.cluster_tile();
        let tiles = u64::from(m.div_ceil(rows)) * u64::from(n.div_ceil(cols));
        let per_cluster = cfg.cluster_blocks();
        let clusters = u64::from((sms / per_cluster).max(1)).min(tiles.max(1)) as u32;
        let map = |operand, tma: &TmaCopy, dims: [u64; 2]| -> Result<GemmArg, LayoutError> {
            Ok(GemmArg::TensorMap {
                operand,
                descriptor: tma.descriptor(&dims, &[dims[1], 1])?,
            })
        };
        let (m64, n64, k64) = (u64::from(m), u64::from(n), u64::from(k));
        Ok(LaunchPlan {
            grid: (clusters * per_cluster, 1, 1),
            block: (cfg.threads(), 1, 1),
            cluster: (per_cluster > 1).then_some((per_cluster, 1, 1)),
            dynamic_smem_bytes: cfg.smem_bytes(),
            args: vec![
                map(GemmOperand::A, &self.tma_a, [m64, k64])?,
                map(GemmOperand::B, &self.tma_b, [n64, k64])?,
                map(GemmOperand::D, &self.tma_d, [m64, n64])?,
                GemmArg::M,
                GemmArg::N,
                GemmArg::K,
            ],
            workspace: 0,
            then: None,
            programmatic: false,
        })
    }
}
