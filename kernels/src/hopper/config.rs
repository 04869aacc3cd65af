//! [`HopperConfig`]: the warp-specialized GEMM's levers, spelled as `rute gemm --config` takes
//! them, and [`HopperPlan`]: everything the program computes from them on the host.

use std::fmt;
use std::str::FromStr;

use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
use dsl_core::atom::tma::{
    make_tma_copy, CacheHint, L2Promotion, TmaCopy, TmaDescriptor, TmaGlobal, TmaKind,
};
use dsl_core::atom::{CopyAtom, Gmma, MmaAtom, StsmN, ValType};
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError};
use dsl_core::pipeline::{ClusterShape, Raster, StreamKRegion};
use dsl_core::tiled::{
    local_tile, make_tiled_copy_c, make_tiled_mma, Idx, TiledCopy, TiledMma, View,
};

use crate::gemm::GemmDtype;

/// Largest dynamic shared memory a block may have on sm_90 (227 KiB).
pub const SMEM_LIMIT: u32 = 227 * 1024;

/// The levers of the warp-specialized GEMM.
///
/// Spelled `{M}x{N}x{K}s{STAGES}`, then `_c{X}x{Y}` (blocks per cluster along M and N, default
/// 1x1), `_h` (Hilbert-curve tile order instead of grouped), `_g{G}` (groups of `G` cluster
/// rows, default 8; `_g1` walks along N, row by row) or `_gm` (along M, column by column),
/// `_f1` (one `wgmma` batch kept in flight across k-tiles), `_e{E}` (the epilogue stores the
/// tile in sub-tiles of `E` columns through one staging tile of that width, which leaves room
/// for more stages), `_d2` (two staging tiles of that width per consumer, so that one sub-tile
/// is written while the store of the one before still reads the other; with `_o`, two in all),
/// `_r{R}` (B's `R` k-tiles resident in shared memory, for a B of one tile), `_p` (ping-pong
/// consumers, each owning whole tiles), `_q` (tiles from a queue fed by an atomic counter,
/// ping-pong only; `_ql` takes each once the last one's loads are issued), `_a{N}` (A of the
/// next `N` waves prefetched into L2 at the start), `_o` (ping-pong consumers staging their
/// output in one shared tile, in turns), `_l{B}` (the loads' L2 promotion, 0, 64, 128 or 256
/// bytes; default 128), `_v{A}{B}{D}` (L2 eviction hints of A's and B's loads and D's stores,
/// each `n` none, `e` evict normal, `f` evict first or `l` evict last), `_w` (the whole tiles
/// walked before the stream-K region, not after), `_u{B}` (D stored from the registers, `B`
/// bytes per store: 4, 8 or 16, no staging tile), `_b` (the last wave's rows shared out, one
/// piece per block), `_n` (as few blocks as take as many waves, each walking as many tiles)
/// and `_t` (A and B swapped, for decode shapes),
/// e.g. `128x256x64s3_c2x1_h`, `128x256x64s4_e128`, `64x256x64s8_e128_r4_p` or
/// `128x16x64s8_t`.
///
/// ```
/// use kernels::hopper::HopperConfig;
/// let cfg: HopperConfig = "64x256x64s8_e128_r4_p".parse().unwrap();
/// assert_eq!((cfg.consumers(), cfg.consumer_rows(), cfg.threads()), (2, 64, 384));
/// assert_eq!(cfg.to_string(), "64x256x64s8_e128_r4_p");
/// let e = "128x256x64s3_p".parse::<HopperConfig>().unwrap_err();
/// assert!(e.contains("ping-pong consumers (_p) each own a whole tile"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HopperConfig {
    /// The block tile `(M, N, K)`: M is 64 (one consumer warpgroup), 128 or 256 (two, of 64 or
    /// 128 rows each; ping-pong, two each owning whole tiles of 64 or 128 rows), N a multiple of
    /// 8 up to 256 (one `wgmma` N; above 64, a multiple of 16), K 64 or 128 (one or two 128-byte
    /// swizzled rows of 16-bit elements).
    pub tile: (u32, u32, u32),
    /// Depth of the shared-memory ring.
    pub stages: u32,
    /// Blocks per cluster along M and N (1x1, 2x1, 1x2, 4x1 or 1x4): the blocks of a cluster row
    /// share B (each multicasts its slice of it), those of a column share A.
    pub cluster: (u32, u32),
    /// The order of the persistent walk over cluster tiles.
    pub raster: Raster,
    /// `wgmma` batches a consumer leaves in flight when it moves to the next k-tile: 0 waits
    /// for each k-tile's before freeing its stage; 1 frees the previous k-tile's stage once
    /// only the current batch is pending, so the tensor cores always have the next batch queued
    /// (CUTLASS's `K_PIPE_MMAS`).
    pub in_flight: u32,
    /// Swap A and B (`_t`): the kernel computes `D^T = B A^T`, so that a decode GEMM's few rows
    /// of A become the tile's narrow N (a 64x16 `wgmma`) and the weights B fill its 128 rows,
    /// instead of 112 of 128 rows computing zeros. The output goes out through a column-major
    /// staging tile and a TMA store of D seen transposed.
    pub swap_ab: bool,
    /// Columns of the epilogue's sub-tiles (`_e{E}`), 0 for the whole tile N: each consumer
    /// stages and stores its rows `E` columns at a time through one shared tile of that width.
    pub epilogue_n: u32,
    /// Staging tiles per consumer (`_d{N}`, 1 or 2; 2 with `_e` only; with `_o`, the two are
    /// both consumers' in turns): with two, the epilogue writes each sub-tile to the tile the
    /// store before last read, so that it waits on that store's reads rather than the last
    /// one's (which overlap the writes). For a short K, where the epilogue is the longer part
    /// of a tile.
    pub staging_buffers: u32,
    /// B resident (`_r{R}`), 0 for B in the ring: B's `R` k-tiles are loaded once per block and
    /// stay in shared memory, the ring holds A only. For problems whose B is one tile (N up to
    /// the tile's N, K up to `R` k-tiles), like 81920 x 256 x 256, where every tile re-reads the
    /// same B through L2; or one column of tiles per block where the walk keeps each block on
    /// one ([`HopperConfig::b_column_resident`]).
    pub b_resident: u32,
    /// Ping-pong consumers (`_p`): each of the two consumer warpgroups owns whole tiles (of 64
    /// or 128 rows, up to 128 x 128), the block's units alternating between them, so that one's
    /// epilogue (and the loads of its next tile) overlaps the other's `wgmma` (CUTLASS's
    /// ping-pong kernel); the cooperative default splits each tile's rows between them. For a
    /// short K, where a tile's epilogue costs as much as its main loop.
    pub pingpong: bool,
    /// One staging tile (`_o`, ping-pong only): the two consumers stage their output through
    /// the same shared tile (with `_d2`, the same pair), each after the other's stores have
    /// read it, instead of one tile each. Their epilogues alternate anyway (each runs under the
    /// other's main loop), and the half of the staging it frees holds a whole tile's store
    /// where two took halves (`_e`): in lever loops that wrote one D for every launch, the
    /// short K ran faster the wider each store was (64x256 ping-pong at 81920 x 256 x 256:
    /// 1.085 with 128-column stores, 1.060 with 64, 0.966 with 32).
    pub one_staging: bool,
    /// The L2 promotion of A's and B's tensor maps (`_l{B}`): the granularity of the L2's
    /// fetches from DRAM for their loads.
    pub l2_promotion: L2Promotion,
    /// The L2 eviction priority of A's loads, B's loads and D's stores (`_v{A}{B}{D}`, in the
    /// kernel's terms: swapped, its A is the problem's B), `None` for no hint: evict-first for
    /// an operand streamed once keeps the L2 for what is re-read.
    pub cache_hints: [Option<CacheHint>; 3],
    /// Where the stream-K region runs in each block's walk (`_w`: after the whole tiles, the
    /// region the last tiles of the order), so that the whole tiles start together; a region
    /// first may end at different times in different blocks. On the H200, in one lever run,
    /// within 2.5% of the region first either way on the squares.
    pub stream_k_region: StreamKRegion,
    /// D stored from the registers (`_u{B}`, `B` bytes per thread and store: 4, 8 or 16), 0
    /// for the epilogue through shared memory and a TMA store: no staging tile, so its shared
    /// memory holds more stages, and no wait for a store to have read one. For 8 and 16 the
    /// accumulators are first exchanged within each quad of lanes (which hold one row's
    /// columns in pairs), so that each lane stores `B` contiguous bytes and a quad whole
    /// 32-byte sectors. For a short K, whose epilogue waits on D's writes.
    pub direct_store: u32,
    /// The last wave's rows shared out (`_b`, with B resident and ping-pong, D stored from the
    /// registers or through a swizzled staging tile in boxes of [`STAGING_BLOCK_ROWS`]): the
    /// tiles past the last whole wave are cut into one piece of rows per block
    /// ([`super::row_split`]), so that every block ends at about the same time.
    pub row_split: bool,
    /// Tiles from a queue (`_q`, ping-pong consumers in one-block clusters; with `_b`, the last
    /// wave's pieces of rows too): each block takes its first tile by its index, then the next
    /// free one from a counter in the workspace (`atom.add`), which its producer hands to the
    /// consumers through a ring in shared memory ([`dsl_core::pipeline::TileQueue`]). A block
    /// that runs faster takes more tiles, so that the producers end within about a tile of each
    /// other, where the static walk's every `grid`-th tile ends a launch when its slowest block
    /// does (at 81920 x 256 x 256 on the H200, 2.5 us against 5 of a 26 us launch).
    pub tile_queue: bool,
    /// Tiles from a queue taken late (`_ql`): the producer takes its next tile when it is
    /// done issuing this one's loads, not when it begins them, so that it holds one tile fewer
    /// than it has yet to load when the queue runs dry (the atomic's round trip then under the
    /// ring's full stages instead of under the loads).
    pub queue_take_late: bool,
    /// Waves of A prefetched into L2 at the start (`_a{N}`, B resident in one-block clusters,
    /// whole tiles): once its first tile's loads are issued, the producer of block `b` issues
    /// `cp.async.bulk.prefetch.tensor` of the A tiles `b + grid * j` for `j` in `1..=N`, the
    /// tiles the next waves take (with a queue, some block of them), so that DRAM works while
    /// B's load from L2 holds the consumers back and the ring is full.
    pub prefetch_ahead: u32,
    /// Waves evened out (`_n`, whole tiles walked in order): as few blocks as take the same
    /// number of waves, each walking as many tiles, where the SM count would leave the last
    /// wave part-full (at 6144^3 with 128x256 tiles, 128 blocks of 9 tiles instead of 132
    /// blocks of which 36 walk only 8). The longest walk is as long. As the suites time it on
    /// the H200, 6144^3 ran 1.011-1.013 of cuBLAS against 0.997-1.000; in a lever loop that
    /// runs every lever back to back (the GPU at its power limit throughout), level. Why the
    /// two differ was not measured.
    pub even_waves: bool,
}

/// Rows of each TMA box of the staging tile where the last wave's rows are shared out (`_b`)
/// and stored through it: a piece's store is its boxes, so its rows are a multiple of these.
pub const STAGING_BLOCK_ROWS: u32 = 16;

/// The most consumer warpgroups a block has: two, each computing half of the tile's rows; a
/// 64-row tile has one ([`HopperConfig::consumers`]).
pub const CONSUMERS: u32 = 2;

/// Registers per thread of the producer and of the consumers after `setmaxnreg`: together
/// 64512 of the SM's 65536 (a block per SM).
pub const REGISTERS: (u32, u32) = (40, 232);

impl HopperConfig {
    /// 128x256x64, 3 stages, one block per cluster, grouped order (fast.cu's kernel-12 tile).
    pub const WIDE: HopperConfig = HopperConfig {
        tile: (128, 256, 64),
        stages: 3,
        cluster: (1, 1),
        raster: Raster::Grouped { group: 8 },
        in_flight: 0,
        swap_ab: false,
        epilogue_n: 0,
        staging_buffers: 1,
        b_resident: 0,
        pingpong: false,
        one_staging: false,
        l2_promotion: L2Promotion::B128,
        cache_hints: [None; 3],
        stream_k_region: StreamKRegion::First,
        direct_store: 0,
        row_split: false,
        tile_queue: false,
        queue_take_late: false,
        prefetch_ahead: 0,
        even_waves: false,
    };

    /// The configurations the tuning sweep times.
    pub const SWEEP: [&'static str; 60] = [
        "128x256x64s3",
        // The default over many tiles: in Hilbert order, in evened waves (the same kernel as
        // `_h`'s, on a grid of as few blocks as take as many waves).
        "128x256x64s3_h_n",
        "128x256x64s3_c2x1",
        "128x256x64s3_c2x1_h",
        "128x256x64s3_c1x2",
        "256x128x64s3",
        "256x128x64s3_c1x2",
        "128x128x64s5",
        "128x128x64s5_c2x1",
        "128x256x64s3_f1",
        "128x128x64s5_f1",
        "128x192x64s4",
        "128x64x64s8",
        "128x16x64s8_t",
        "128x64x64s8_t",
        // A stage more, the output staged in sub-tiles (128x256x64s4_e128: the default for a
        // short K).
        "128x256x64s4_e128",
        "128x256x64s4_e64",
        "128x128x64s6_e64",
        // The same stage more for a cluster, whose ring waits on the other block too.
        "128x256x64s4_c2x1_e64",
        // One consumer of 64 rows with 128-deep k-tiles: the decode defaults where 64-row
        // weight tiles fit in one wave.
        "64x16x128s11_t",
        "64x64x128s6_t",
        // B resident, for a B of one tile (81920 x 256 x 256): the ring holds A only.
        "128x256x64s5_e64_r4",
        "128x256x64s4_e128_r4",
        // Widths the 128-byte swizzle does not tile, staged in plain rows: the defaults where
        // they fill one wave (128 x 10240, 128 x 6144, 512 x 28672, 512 x 10240).
        "128x80x64s7",
        "128x48x64s8",
        "128x224x64s4_e112",
        "256x160x64s3_e80",
        // Clusters sharing the activations (decode) or A (M = 128 over a long K).
        "128x64x64s8_c4x1_t",
        "128x64x64s8_c1x2",
        // The same with one wave's hints and a batch in flight (the default over a long K).
        "128x64x64s8_c1x2_f1_vlfn",
        // A sixth stage for 128x128 (the default over a long K).
        "128x128x64s6",
        // Ping-pong consumers of 64-row tiles, for a short K: B resident, and in the ring.
        "64x256x64s8_e128_r4_p",
        "64x256x64s5_e64_p",
        // Ping-pong consumers of 128x128 tiles, each epilogue under the other's main loop:
        // CUTLASS's ping-pong tile (on the H200 0.77-0.81 of cuBLAS on the squares; with a
        // batch in flight 0.95-0.97).
        "128x128x64s5_p",
        "128x128x64s5_f1_p",
        // The stream-K region after the whole tiles (`_w`), for the squares' last waves (on
        // the H200 within 2.5% of the region first, behind whole tiles at 4096^3).
        "128x256x64s3_w",
        // Two staging tiles per consumer (`_d2`), each sub-tile's writes beside the store of
        // the one before: the short K's ping-pong tile and the cooperative one; and two for
        // both ping-pong consumers in turns (`_o`), 128 columns each (on the H200 1-2% behind
        // the short K's default at 40960 and 81920 x 256 x 256).
        "64x256x64s8_f1_e64_d2_r4_p_l0_vfnf",
        "128x256x64s4_e64_d2",
        "64x256x64s8_f1_e128_d2_r4_p_o_l0_vfnf",
        // A wgmma batch in flight with L2 eviction hints: the defaults for decode (the
        // weights evicted first, the activations last), M = 128 in one wave (the same, A and B
        // the other way round) and a short K (A and D evicted first; no L2 promotion).
        "64x16x128s11_f1_vfln_t",
        "64x64x128s6_f1_vfln_t",
        "128x64x64s8_c4x1_f1_vfln_t",
        "128x48x64s8_f1_l256_vlfn",
        "128x80x64s7_f1_l256_vlfn",
        "64x256x64s8_f1_e128_r4_p_l0_vfnf",
        // One staging tile for both ping-pong consumers: whole-tile stores beside 8 stages
        // with B resident (on the H200 1.6-2.8% behind the default at 40960-81920 x 256 x
        // 256), and a sixth stage for 128x128 (level with five).
        "64x256x64s8_f1_r4_p_o",
        "128x128x64s6_f1_p_o",
        // L2 eviction hints beside the defaults': eight stages of the short K (level with
        // unhinted at 81920 x 256 x 256); the squares' re-read A and B evicted last (level
        // with unhinted); decode past a wave of 128-row weight tiles (the default at 64 x
        // 10240 x 8192).
        "64x256x64s8_f1_e128_r4_p_vfnf",
        "128x256x64s3_vllf",
        "128x64x64s8_vfln_t",
        // D stored from the registers (`_u`): the short K's ping-pong tile with the staging's
        // 32 KB as four more stages, 16-byte stores; and a cooperative tile with stream-K,
        // 8-byte stores.
        "64x256x64s12_f1_r4_p_l0_vfnf_u16",
        "128x256x64s4_f1_u8",
        // The short K's default in 2-block clusters along M, B resident and multicast: each
        // block loads half of it, the L2 serves it once per cluster.
        "64x256x64s8_c2x1_f1_e128_r4_p_l0_vfnf",
        // The short K's last wave cut into one piece of rows per block (`_b`), D from the
        // registers.
        "64x256x64s6_f1_r4_p_l0_vnnf_u16_b",
        // The short K's default past the L2 before 2026-12-02: six stages, no hint for A, no
        // L2 promotion.
        "64x256x64s6_f1_e128_r4_p_l0_vnnf",
        // The short K's default past the L2 before: the same with 256-byte L2 promotion.
        "64x256x64s6_f1_e128_r4_p_l256_vnnf",
        // B resident a column of tiles per block (half of a 256-wide B each): half of the L2
        // reads at the start, tiles half as long at the end.
        "64x128x64s8_g1_f1_r4_p_l256_vnnf",
        // The short K's default past the L2 before 2026-12-02's last: tiles from a queue
        // (blocks that run faster take more), seven stages.
        "64x256x64s7_f1_e128_r4_p_q_l256_vnnf",
        // The short K's default past the L2 after it: each tile taken from the queue once the
        // last one's loads are issued (`_ql`).
        "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf",
        // The same since 2026-12-02's fifteenth session: two staging tiles of 64 columns per
        // consumer, each sub-tile written beside the store of the one before.
        "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf",
    ];

    /// Consumer warpgroups: one for a 64-row tile, else two, each with half of the rows (or,
    /// ping-pong, each with tiles of its own).
    pub fn consumers(&self) -> u32 {
        if self.tile.0 == 64 && !self.pingpong {
            1
        } else {
            CONSUMERS
        }
    }

    /// Rows of a tile one consumer computes: its half (the whole tile's, ping-pong).
    pub fn consumer_rows(&self) -> u32 {
        if self.pingpong {
            self.tile.0
        } else {
            self.tile.0 / self.consumers()
        }
    }

    /// Consumers that read each stage and free it: both (cooperative), or its tile's owner.
    pub fn stage_consumers(&self) -> u32 {
        if self.pingpong {
            1
        } else {
            self.consumers()
        }
    }

    /// Threads per block: one producer warpgroup and the consumers.
    pub fn threads(&self) -> u32 {
        128 * (1 + self.consumers())
    }

    /// The cluster's shape.
    pub fn cluster_shape(&self) -> ClusterShape {
        ClusterShape {
            x: self.cluster.0,
            y: self.cluster.1,
        }
    }

    /// The kernel's `(M, N)` for a problem's `m x n`: swapped (`_t`), `(n, m)`.
    pub fn kernel_dims(&self, m: u32, n: u32) -> (u32, u32) {
        if self.swap_ab {
            (n, m)
        } else {
            (m, n)
        }
    }

    /// Columns the epilogue stages at a time: `_e{E}`'s, else the tile's N.
    pub fn epilogue_cols(&self) -> u32 {
        if self.epilogue_n > 0 {
            self.epilogue_n
        } else {
            self.tile.1
        }
    }

    /// Rows a piece of the last wave (`_b`) is a multiple of: 8 stored from the registers (an
    /// accumulator row group), else [`STAGING_BLOCK_ROWS`] (the staging tile's TMA boxes).
    pub fn piece_granule(&self) -> u32 {
        if self.direct_store > 0 {
            8
        } else {
            STAGING_BLOCK_ROWS
        }
    }

    /// The same configuration with the most stages, up to `cap`, whose shared memory fits
    /// ([`SMEM_LIMIT`]); at least 2.
    pub fn with_most_stages(self, cap: u32) -> HopperConfig {
        let fits = |stages: &u32| {
            HopperConfig {
                stages: *stages,
                ..self
            }
            .smem_bytes()
                <= SMEM_LIMIT
        };
        let stages = (2..=cap).rev().find(fits).unwrap_or(2);
        HopperConfig { stages, ..self }
    }

    /// Whether the blocks of the cluster share the ring's stages (a multicast load writes a
    /// stage in each of them, so each frees it in all): along N (A shared), or along M with B
    /// in the ring. A resident B is loaded once, so along M the ring holds each block's own A.
    pub fn ring_shared(&self) -> bool {
        let (cx, cy) = self.cluster;
        cy > 1 || (cx > 1 && self.b_resident == 0)
    }

    /// Blocks that free each stage of a block's ring: the cluster's where they share it, else
    /// the block alone.
    pub fn ring_sharers(&self) -> u32 {
        if self.ring_shared() {
            self.cluster_shape().size()
        } else {
            1
        }
    }

    /// Stages of B in shared memory: the ring's, or the resident k-tiles (`_r`).
    pub fn b_slots(&self) -> u32 {
        if self.b_resident > 0 {
            self.b_resident
        } else {
            self.stages
        }
    }

    /// Elements of one staging tile: a consumer's rows by the epilogue's columns.
    pub fn staging_tile_elems(&self) -> u32 {
        self.consumer_rows() * self.epilogue_cols()
    }

    /// Staging tiles of the output in shared memory: one per consumer, or one in all (`_o`);
    /// each [`HopperConfig::staging_buffers`] times; none where D is stored from the registers
    /// (`_u`).
    pub fn staging_tiles(&self) -> u32 {
        if self.direct_store > 0 {
            return 0;
        }
        let tiles = if self.one_staging {
            1
        } else {
            self.consumers()
        };
        tiles * self.staging_buffers
    }

    /// Dynamic shared memory for 16-bit elements: the rings (or resident B) and the output's
    /// staging.
    pub fn smem_bytes(&self) -> u32 {
        let (m, n, k) = self.tile;
        (self.stages * m + self.b_slots() * n) * k * 2
            + self.staging_tiles() * self.staging_tile_elems() * 2
    }

    /// Why the program cannot run an `m x n x k` problem with this configuration, if it cannot:
    /// a resident B (`_r`) holds K within its k-tiles, and N within one tile unless each block
    /// stays on one column of tiles ([`HopperConfig::b_column_resident`]).
    pub fn takes(&self, _m: u32, n: u32, k: u32) -> Result<(), String> {
        let (_, bn, bk) = self.tile;
        if self.b_resident == 0 {
            return Ok(());
        }
        if k > self.b_resident * bk || (n > bn && !self.b_column_resident()) {
            return Err(format!(
                "{self} keeps B resident as one {bn} x {} tile; N = {n} and K = {k} do not fit it \
                 (a B wider than the tile stays resident a column of tiles per block with \
                 ping-pong consumers walking along N, _p_g1, and neither _b nor a cluster)",
                self.b_resident * bk
            ));
        }
        Ok(())
    }

    /// Whether a resident B (`_r`) may be narrower than the problem's N: each block then keeps
    /// the B of one column of tiles. That needs a walk that never moves a block to another
    /// column: along N one tile at a time (`_g1`, tile `t` in column `t % tiles_n`) over a grid
    /// that is a multiple of the columns ([`super::launch`] sizes it so), by ping-pong
    /// consumers (whole tiles, never shared out by stream-K), one block per cluster and whole
    /// tiles (no `_b`). Each block then reads `1 / tiles_n` of B from L2 at its start instead
    /// of all of it.
    pub fn b_column_resident(&self) -> bool {
        self.b_resident > 0
            && self.pingpong
            && self.raster == Raster::Grouped { group: 1 }
            && self.cluster == (1, 1)
            && !self.row_split
    }

    /// Why the program does not support this configuration, if it does not.
    pub fn check(&self) -> Result<(), String> {
        let (m, n, k) = self.tile;
        if !matches!(m, 64 | 128 | 256) {
            return Err(
                "tile M is 64, 128 or 256 (one consumer warpgroup of 64 rows, or two of 64 or 128)"
                    .into(),
            );
        }
        if !(8..=256).contains(&n) || n % 8 != 0 {
            return Err("tile N is a multiple of 8 up to 256 (one wgmma)".into());
        }
        if n % 64 != 0 && n > 64 && n % 16 != 0 {
            return Err(
                "tile N above 64 is a multiple of 16 (the output's `stmatrix` writes 16 columns \
                 at a time)"
                    .into(),
            );
        }
        if k != 64 && k != 128 {
            return Err("tile K is 64 or 128 (one or two 128-byte swizzled rows)".into());
        }
        if !(2..=16).contains(&self.stages) {
            return Err("stages is 2..=16".into());
        }
        if self.in_flight > 1 {
            return Err("at most one wgmma batch stays in flight (_f1)".into());
        }
        if self.in_flight + 1 >= self.stages {
            return Err("a batch in flight holds a stage: at least 3 stages with _f1".into());
        }
        let e = self.epilogue_n;
        if e > 0 && (!e.is_multiple_of(16) || e >= n || !n.is_multiple_of(e)) {
            return Err(
                "the epilogue's sub-tiles (_eE) are a multiple of 16 columns that divides tile N \
                 and is less than it"
                    .into(),
            );
        }
        if e > 0 && self.swap_ab {
            return Err("a swapped tile (_t) stages its output whole (no _eE)".into());
        }
        if !(1..=2).contains(&self.staging_buffers) {
            return Err("a consumer has one or two staging tiles (_d2)".into());
        }
        if self.staging_buffers == 2 && (e == 0 || !(n / e).is_multiple_of(2)) {
            return Err(
                "two staging tiles (_d2) take turns on an even number of sub-tiles (_eE) per tile"
                    .into(),
            );
        }
        if self.b_resident > 16 {
            return Err("a resident B (_rR) has at most 16 k-tiles".into());
        }
        let (cx, cy) = self.cluster;
        if !matches!((cx, cy), (1, 1) | (2, 1) | (1, 2) | (4, 1) | (1, 4)) {
            return Err("the cluster is 1x1, 2x1, 1x2, 4x1 or 1x4".into());
        }
        // A ping-pong consumer holds a whole tile's accumulators: at most 128 per thread.
        if self.pingpong && (!matches!(m, 64 | 128) || m * n > 128 * 128) {
            return Err(
                "ping-pong consumers (_p) each own a whole tile of 64 or 128 rows, at most 128 x \
                 128 (its accumulators)"
                    .into(),
            );
        }
        if self.one_staging && !self.pingpong {
            return Err(
                "one staging tile (_o) is for ping-pong consumers (_p), whose epilogues take turns"
                    .into(),
            );
        }
        if self.pingpong && self.stream_k_region == StreamKRegion::Last {
            return Err(
                "ping-pong consumers (_p) walk whole tiles only: no stream-K region to place \
                 (_w)"
                    .into(),
            );
        }
        if self.direct_store > 0 {
            if !matches!(self.direct_store, 4 | 8 | 16) {
                return Err(
                    "D stored from the registers (_uB) takes 4, 8 or 16 bytes per store".into(),
                );
            }
            if self.swap_ab || e > 0 || self.staging_buffers > 1 || self.one_staging {
                return Err(
                    "D stored from the registers (_uB) has no staging tile to swap, split or \
                     share (no _t, _eE, _d2 or _o)"
                        .into(),
                );
            }
            if matches!(
                self.cache_hints[2],
                Some(CacheHint::EvictNormal | CacheHint::EvictLast)
            ) {
                return Err(
                    "D stored from the registers (_uB) takes D's hint f (streaming stores) or n"
                        .into(),
                );
            }
            // A quad's lanes exchange B / 4 blocks of 8 columns each.
            let span = 8 * (self.direct_store / 4);
            if !n.is_multiple_of(span) {
                return Err(format!(
                    "D stored {} bytes at a time (_u{}) takes tile N a multiple of {span}",
                    self.direct_store, self.direct_store
                ));
            }
        }
        if self.prefetch_ahead > 0
            && (self.prefetch_ahead > 4
                || self.b_resident == 0
                || (cx, cy) != (1, 1)
                || self.row_split
                || self.b_column_resident())
        {
            return Err(format!(
                "the start's prefetch of A (_a{}) takes 1 to 4 waves of a B of one tile (_rR) in \
                 one-block clusters, whole tiles (no _b)",
                self.prefetch_ahead
            ));
        }
        if self.row_split
            && (!self.pingpong
                || self.b_resident == 0
                || (cx, cy) != (1, 1)
                || self.raster == Raster::Hilbert
                || (self.direct_store == 0
                    && (self.swap_ab || !self.epilogue_cols().is_multiple_of(64))))
        {
            return Err(
                "the last wave's rows shared out (_b) cut one column of tiles (B resident, _rR) \
                 walked whole and in order (no _h) by ping-pong consumers (_p) in one block, each \
                 piece stored from the registers (_uB) or through a swizzled staging tile (its \
                 columns a multiple of 64, not swapped) in blocks of 16 rows"
                    .into(),
            );
        }
        if self.even_waves && (self.tile_queue || self.row_split) {
            return Err(
                "evened waves (_n) take fewer blocks for a walk in order; tiles from a queue (_q) \
                 or the last wave's rows shared out (_b) even the blocks' ends already"
                    .into(),
            );
        }
        if self.tile_queue && (!self.pingpong || (cx, cy) != (1, 1)) {
            return Err(
                "tiles from a queue (_q) go to ping-pong consumers (_p, whole tiles, never shared \
                 out by stream-K) of one-block clusters"
                    .into(),
            );
        }
        // Each ping-pong consumer owns a ring stage: a stage that the cluster shares would be
        // freed by one block's owner while the other's still reads it.
        if self.pingpong && (self.ring_shared() || self.swap_ab) {
            return Err(
                "ping-pong consumers (_p) work in one block (or, with B resident, a cluster along \
                 M), not swapped"
                    .into(),
            );
        }
        if self.b_resident > 0 && (cy != 1 || self.swap_ab) {
            return Err(
                "a resident B (_rR) is one block's, or shared by a cluster along M, of a tile not \
                 swapped"
                    .into(),
            );
        }
        if (cx, cy) != (1, 1) && (k != 64 || n % (8 * cx) != 0) {
            return Err(
                "a cluster's blocks each multicast a slice of whole 8-row swizzle atoms: tile K \
                 is 64, and tile N a multiple of 8 per block of a cluster row"
                    .into(),
            );
        }
        if self.smem_bytes() > SMEM_LIMIT {
            return Err(format!(
                "{} stages of {}x{}x{} take {} bytes of shared memory with the output's staging; \
                 {SMEM_LIMIT} fit",
                self.stages,
                m,
                n,
                k,
                self.smem_bytes()
            ));
        }
        Ok(())
    }
}

impl fmt::Display for HopperConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, n, k) = self.tile;
        write!(f, "{m}x{n}x{k}s{}", self.stages)?;
        if self.cluster != (1, 1) {
            write!(f, "_c{}x{}", self.cluster.0, self.cluster.1)?;
        }
        match self.raster {
            Raster::Hilbert => write!(f, "_h"),
            Raster::Grouped { group: 8 } => Ok(()),
            Raster::Grouped { group } => write!(f, "_g{group}"),
            Raster::AlongM => write!(f, "_gm"),
        }?;
        if self.in_flight > 0 {
            write!(f, "_f{}", self.in_flight)?;
        }
        if self.epilogue_n > 0 {
            write!(f, "_e{}", self.epilogue_n)?;
        }
        if self.staging_buffers > 1 {
            write!(f, "_d{}", self.staging_buffers)?;
        }
        if self.b_resident > 0 {
            write!(f, "_r{}", self.b_resident)?;
        }
        if self.pingpong {
            write!(f, "_p")?;
        }
        if self.tile_queue {
            write!(f, "{}", if self.queue_take_late { "_ql" } else { "_q" })?;
        }
        if self.prefetch_ahead > 0 {
            write!(f, "_a{}", self.prefetch_ahead)?;
        }
        if self.one_staging {
            write!(f, "_o")?;
        }
        if self.l2_promotion != L2Promotion::B128 {
            write!(f, "_l{}", self.l2_promotion.bytes())?;
        }
        if self.cache_hints != [None; 3] {
            write!(f, "_v")?;
            for h in self.cache_hints {
                write!(f, "{}", hint_letter(h))?;
            }
        }
        if self.stream_k_region == StreamKRegion::Last {
            write!(f, "_w")?;
        }
        if self.direct_store > 0 {
            write!(f, "_u{}", self.direct_store)?;
        }
        if self.row_split {
            write!(f, "_b")?;
        }
        if self.even_waves {
            write!(f, "_n")?;
        }
        if self.swap_ab {
            write!(f, "_t")?;
        }
        Ok(())
    }
}

impl FromStr for HopperConfig {
    type Err = String;

    /// The spelling of [`HopperConfig`]'s docs; `wide` is [`HopperConfig::WIDE`]. The error is
    /// a sentence naming what is wrong.
    fn from_str(spec: &str) -> Result<Self, String> {
        if spec == "wide" {
            return Ok(HopperConfig::WIDE);
        }
        let bad = |why: &str| format!("`{spec}` is not a hopper_ws configuration: {why}");
        let mut parts = spec.split('_');
        let head = parts.next().unwrap_or("");
        let (dims, stages) = head
            .split_once('s')
            .ok_or_else(|| bad("it starts with MxNxKsS, e.g. 128x256x64s3"))?;
        let dims: Vec<u32> = dims
            .split('x')
            .map(|d| d.parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad("it starts with MxNxKsS, e.g. 128x256x64s3"))?;
        let [m, n, k] = dims[..] else {
            return Err(bad("the tile has three extents, MxNxK"));
        };
        let stages = stages.parse().map_err(|_| bad("S (stages) is a number"))?;
        let mut cfg = HopperConfig {
            tile: (m, n, k),
            stages,
            ..HopperConfig::WIDE
        };
        for p in parts {
            if let Some(c) = p.strip_prefix('c') {
                let (x, y) = c
                    .split_once('x')
                    .and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
                    .ok_or_else(|| bad("the cluster is _c{X}x{Y}"))?;
                cfg.cluster = (x, y);
            } else if let Some(d) = p.strip_prefix('f') {
                cfg.in_flight = d.parse().map_err(|_| bad("_f takes a number of batches"))?;
            } else if p == "t" {
                cfg.swap_ab = true;
            } else if p == "p" {
                cfg.pingpong = true;
            } else if p == "o" {
                cfg.one_staging = true;
            } else if p == "b" {
                cfg.row_split = true;
            } else if p == "q" {
                cfg.tile_queue = true;
            } else if p == "ql" {
                cfg.tile_queue = true;
                cfg.queue_take_late = true;
            } else if p == "n" {
                cfg.even_waves = true;
            } else if p == "w" {
                cfg.stream_k_region = StreamKRegion::Last;
            } else if let Some(a) = p.strip_prefix('a') {
                cfg.prefetch_ahead = a
                    .parse()
                    .map_err(|_| bad("_a takes a number of waves to prefetch"))?;
            } else if let Some(e) = p.strip_prefix('e') {
                cfg.epilogue_n = e.parse().map_err(|_| bad("_e takes a number of columns"))?;
            } else if let Some(d) = p.strip_prefix('d') {
                cfg.staging_buffers = d
                    .parse()
                    .map_err(|_| bad("_d takes a number of staging tiles"))?;
            } else if let Some(u) = p.strip_prefix('u') {
                cfg.direct_store = u
                    .parse()
                    .map_err(|_| bad("_u takes the bytes of each store of D: 4, 8 or 16"))?;
            } else if let Some(r) = p.strip_prefix('r') {
                cfg.b_resident = r.parse().map_err(|_| bad("_r takes a number of k-tiles"))?;
            } else if let Some(l) = p.strip_prefix('l') {
                cfg.l2_promotion = l
                    .parse()
                    .ok()
                    .and_then(L2Promotion::from_bytes)
                    .ok_or_else(|| bad("_l takes an L2 promotion of 0, 64, 128 or 256 bytes"))?;
            } else if let Some(v) = p.strip_prefix('v') {
                let hints: Vec<Option<Option<CacheHint>>> = v.chars().map(hint_of).collect();
                let [Some(a), Some(b), Some(d)] = hints[..] else {
                    return Err(bad(
                        "_v takes three letters, A's, B's and D's L2 eviction hint: n (none), e \
                         (evict normal), f (evict first) or l (evict last), e.g. _vfnf",
                    ));
                };
                cfg.cache_hints = [a, b, d];
            } else if p == "h" {
                cfg.raster = Raster::Hilbert;
            } else if p == "gm" {
                cfg.raster = Raster::AlongM;
            } else if let Some(g) = p.strip_prefix('g') {
                let group: u32 = g.parse().map_err(|_| bad("_g takes a group size, or m"))?;
                if group == 0 {
                    return Err(bad("_g takes a group size of at least 1"));
                }
                cfg.raster = Raster::Grouped { group };
            } else {
                return Err(bad(&format!(
                    "unknown part `_{p}` (known: _cXxY, _h, _gG, _fN, _eE, _d2, _rR, _p, _q, \
                     _ql, _aN, _o, _lB, _vABD, _w, _uB, _b, _n, _t)"
                )));
            }
        }
        cfg.check().map_err(|why| bad(&why))?;
        Ok(cfg)
    }
}

/// `_v`'s letters and the eviction hints they spell: one table for the spelling and its parse.
const HINT_LETTERS: [(char, Option<CacheHint>); 4] = [
    ('n', None),
    ('e', Some(CacheHint::EvictNormal)),
    ('f', Some(CacheHint::EvictFirst)),
    ('l', Some(CacheHint::EvictLast)),
];

/// `_v`'s letter for an eviction hint.
fn hint_letter(h: Option<CacheHint>) -> char {
    HINT_LETTERS
        .iter()
        .find(|(_, hint)| *hint == h)
        .map(|(c, _)| *c)
        .expect("every hint has a letter")
}

/// The eviction hint `_v`'s letter spells, if it is one.
fn hint_of(c: char) -> Option<Option<CacheHint>> {
    HINT_LETTERS
        .iter()
        .find(|(letter, _)| *letter == c)
        .map(|(_, h)| *h)
}

/// What the program computes on the host from a configuration and the element type: the atoms,
/// the tiled MMA of one consumer, the shared layouts and the TMA copies.
#[derive(Debug, Clone)]
pub struct HopperPlan {
    /// The configuration.
    pub cfg: HopperConfig,
    /// The element type of A, B and D.
    pub dtype: GemmDtype,
    /// One consumer's tiled MMA: `SM90_64x{N}x16_F32{T}{T}_SS` over its `(consumer_rows, tile_n)`.
    pub mma: TiledMma,
    /// The ring of A: `(tile_m, tile_k, stages)`, K-major, 128-byte swizzled.
    pub smem_a: ComposedLayout,
    /// The ring of B: `(tile_n, tile_k, stages)`.
    pub smem_b: ComposedLayout,
    /// Consumer `c`'s rows of the ring of A (`View` of `smem_a` offset to them).
    pub smem_a_consumer: Vec<View>,
    /// One consumer's output staging tile in shared memory, `(consumer_rows, E)` for the epilogue's
    /// `E` columns, 128-byte swizzled (or plain where `E` is not a multiple of 64; column-major
    /// when A and B are swapped).
    pub smem_d: ComposedLayout,
    /// TMA loads of one stage of A and of B.
    pub tma_a: TmaCopy,
    /// The B load (multicast in a cluster along M).
    pub tma_b: TmaCopy,
    /// A block's slice of the A load, multicast (a cluster along N): each of the `cluster.y`
    /// blocks that share the A tile loads `tile_m / cluster.y` of its rows into all of them.
    pub tma_a_multicast: TmaCopy,
    /// A block's slice of the B load, multicast (a cluster along M): `tile_n / cluster.x` rows
    /// of the shared B tile each.
    pub tma_b_multicast: TmaCopy,
    /// The TMA store of one consumer's output tile (in the kernel's coordinates: swapped, D is
    /// seen column-major).
    pub tma_d: TmaCopy,
    /// The accumulators of a consumer thread: `(MMA, MMA_M, MMA_N)`.
    pub frag_c: Layout,
    /// Registers -> shared (`stmatrix.x4`) of one epilogue sub-tile (the whole tile without
    /// `_eE`): `make_tiled_copy_C` of an MMA as wide as the sub-tile.
    pub r2s: TiledCopy,
    /// `retile_S` of a sub-tile's accumulators for that copy: sub-tile `j`'s values are the
    /// tile's [`HopperPlan::epilogue_source`] names ([`check_epilogue_slices`] proves it per plan).
    pub retile_c: Layout,
    /// With D stored from the registers (`_u`), a consumer thread's stores
    /// ([`super::direct::direct_stores`]); empty otherwise.
    pub direct: Vec<super::direct::DirectStore>,
    /// Whether the kernel stamps its phases into the workspace ([`super::trace`]): false
    /// except in [`super::traced_kernel`]'s diagnostic build.
    pub trace: bool,
}

impl HopperPlan {
    /// The plan of `cfg` for elements of `dtype` (f32 accumulation).
    pub fn new(cfg: HopperConfig, dtype: GemmDtype) -> Result<HopperPlan, PlanError> {
        cfg.check().map_err(PlanError::Config)?;
        let (bm, bn, bk) = (
            i64::from(cfg.tile.0),
            i64::from(cfg.tile.1),
            i64::from(cfg.tile.2),
        );
        let st = i64::from(cfg.stages);
        let val = match dtype {
            GemmDtype::F16 => ValType::F16,
            GemmDtype::Bf16 => ValType::BF16,
        };
        let rows = i64::from(cfg.consumer_rows());
        let atom = MmaAtom::new(Gmma::ss(cfg.tile.1, ValType::F32, val));
        let perm = [
            Some(Layout::vector(rows, 1)?),
            Some(Layout::vector(bn, 1)?),
            Some(Layout::vector(16, 1)?),
        ];
        let mma = make_tiled_mma(atom, &Layout::col_major(IntTuple::ints(&[1, 1, 1]))?, &perm)?;
        let sw128 = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?;
        let smem_a = sw128.tile_to_shape(&IntTuple::ints(&[bm, bk, st]), None)?;
        let b_slots = i64::from(cfg.b_slots());
        let smem_b = sw128.tile_to_shape(&IntTuple::ints(&[bn, bk, b_slots]), None)?;
        // Ping-pong, each consumer reads the whole stage of its own tile.
        let smem_a_consumer = (0..i64::from(cfg.consumers()))
            .map(|c| {
                let half = if cfg.pingpong { 0 } else { c };
                local_tile(
                    &View::from(smem_a.clone()),
                    &[rows, bk, st],
                    &[Idx::At(half), Idx::At(0), Idx::At(0)],
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        // One stage of A and of B, the tile each TMA load fills.
        let stage = |rows: i64| sw128.tile_to_shape(&IntTuple::ints(&[rows, bk]), None);
        let global = TmaGlobal::row_major(val);
        let (a_stage, b_stage) = (stage(bm)?, stage(bn)?);
        let [hint_a, hint_b, hint_d] = cfg.cache_hints;
        let tma_a = make_tma_copy(TmaKind::Load, &global, &a_stage)?.with_cache_hint(hint_a);
        let tma_b = make_tma_copy(TmaKind::Load, &global, &b_stage)?.with_cache_hint(hint_b);
        // A slice of a shared tile is whole 8-row swizzle atoms, contiguous in the stage (K is
        // one atom deep in a cluster: check() asks it), so it lands at its rows' offset.
        let (cx, cy) = (i64::from(cfg.cluster.0), i64::from(cfg.cluster.1));
        let tma_a_multicast = make_tma_copy(TmaKind::LoadMulticast, &global, &stage(bm / cy)?)?
            .with_cache_hint(hint_a);
        let tma_b_multicast = make_tma_copy(TmaKind::LoadMulticast, &global, &stage(bn / cx)?)?
            .with_cache_hint(hint_b);
        let epi = i64::from(cfg.epilogue_cols());
        let plain = |stride: [i64; 2]| -> Result<ComposedLayout, LayoutError> {
            Ok(ComposedLayout::new(
                dsl_core::layout::Swizzle::identity(),
                0,
                Layout::new(IntTuple::ints(&[rows, epi]), IntTuple::ints(&stride))?,
            ))
        };
        // Swapped, the kernel's tile is D's transposed: its rows run along D's rows, so the
        // staging tile is column-major and D, seen in the kernel's coordinates, too.
        let (smem_d, d_global) = if cfg.swap_ab {
            let column_major = TmaGlobal {
                contiguous: 0,
                ..global
            };
            (plain([1, rows])?, column_major)
        } else if epi % 64 == 0 {
            (
                sw128.tile_to_shape(&IntTuple::ints(&[rows, epi]), None)?,
                global,
            )
        } else {
            // Rows of a width the 128-byte swizzle does not tile: plain rows, whose `stmatrix`
            // stores meet some bank conflicts (an epilogue's cost, not the main loop's).
            (plain([epi, 1])?, global)
        };
        let tma_d = make_tma_copy(TmaKind::Store, &d_global, &smem_d)?.with_cache_hint(hint_d);
        // Pieces of the last wave end inside D: boxes of 16 rows, so that a piece's store stops
        // at its last (check() took the swizzled, unswapped staging tile).
        let tma_d = if cfg.row_split && cfg.direct_store == 0 {
            tma_d.split_boxes(0, STAGING_BLOCK_ROWS)?
        } else {
            tma_d
        };
        let row_major = |cols: i64| -> Result<View, LayoutError> {
            Ok(View::from(Layout::new(
                IntTuple::ints(&[rows, cols]),
                IntTuple::ints(&[cols, 1]),
            )?))
        };
        let frag_c = mma.get_slice(0)?.partition_fragment_c(&row_major(bn)?)?;
        // The epilogue's sub-tile: the same accumulators, `epi` columns of them at a time, seen
        // as the fragment of a consumer MMA that is `epi` wide.
        let epi_mma = if epi == bn {
            mma.clone()
        } else {
            let atom = MmaAtom::new(Gmma::ss(epi as u32, ValType::F32, val));
            let perm = [
                Some(Layout::vector(rows, 1)?),
                Some(Layout::vector(epi, 1)?),
                Some(Layout::vector(16, 1)?),
            ];
            make_tiled_mma(atom, &Layout::col_major(IntTuple::ints(&[1, 1, 1]))?, &perm)?
        };
        let frag_epi = epi_mma
            .get_slice(0)?
            .partition_fragment_c(&row_major(epi)?)?;
        check_epilogue_slices(&mma, &epi_mma, &frag_c, &frag_epi, (rows, bn, epi))?;
        let r2s = make_tiled_copy_c(CopyAtom::new(StsmN { n: 4 }, val)?, &epi_mma)?;
        let retile_c = r2s.get_slice(0)?.retile_s(&frag_epi)?;
        let direct = match cfg.direct_store {
            0 => Vec::new(),
            bytes => super::direct::direct_stores(&mma, &frag_c, (rows, bn), bytes)?,
        };
        Ok(HopperPlan {
            cfg,
            dtype,
            mma,
            smem_a,
            smem_b,
            smem_a_consumer,
            smem_d,
            tma_a,
            tma_b,
            tma_a_multicast,
            tma_b_multicast,
            tma_d,
            frag_c,
            r2s,
            retile_c,
            direct,
            trace: false,
        })
    }

    /// Bytes a stage's loads bring to one block (A's and B's tiles; A's alone with B resident).
    pub fn stage_bytes(&self) -> u32 {
        if self.cfg.b_resident > 0 {
            self.tma_a.bytes()
        } else {
            self.tma_a.bytes() + self.tma_b.bytes()
        }
    }

    /// The fields of the kernel's three tensor maps for its `km x kn x k` (the problem's, with
    /// M and N swapped for a `_t` configuration: [`HopperConfig::kernel_dims`]): its A (`km x
    /// k`), its B (`kn x k`), and D in its coordinates (`km x kn`; swapped, D's transposed, so
    /// column-major), each row-major with rows of `k` (or D's row) elements. An error where a
    /// row is not a multiple of 16 bytes.
    pub fn descriptors(&self, km: u32, kn: u32, k: u32) -> Result<[TmaDescriptor; 3], LayoutError> {
        let (mu, nu, ku) = (u64::from(km), u64::from(kn), u64::from(k));
        let d_strides = if self.cfg.swap_ab { [1, mu] } else { [nu, 1] };
        // A shared tile's loads are its blocks' slices: the tensor map holds the slice's box.
        let (cx, cy) = self.cfg.cluster;
        let a = if cy > 1 {
            &self.tma_a_multicast
        } else {
            &self.tma_a
        };
        let b = if cx > 1 {
            &self.tma_b_multicast
        } else {
            &self.tma_b
        };
        let promotion = self.cfg.l2_promotion;
        Ok([
            a.descriptor(&[mu, ku], &[ku, 1])?
                .with_l2_promotion(promotion),
            b.descriptor(&[nu, ku], &[ku, 1])?
                .with_l2_promotion(promotion),
            self.tma_d.descriptor(&[mu, nu], &d_strides)?,
        ])
    }

    /// Accumulator values of one thread in one epilogue sub-tile.
    pub fn epilogue_values(&self) -> u32 {
        (self.frag_c.cosize() as u32) * self.cfg.epilogue_cols() / self.cfg.tile.1
    }

    /// The accumulator that value `v` of epilogue sub-tile `j` is ([`epilogue_source`] for
    /// this plan's fragment).
    pub fn epilogue_source(&self, j: u32, v: u32) -> u32 {
        let rows = self.cfg.consumer_rows();
        epilogue_source(
            self.frag_c.cosize() as u32,
            self.epilogue_values(),
            rows / 64,
            j,
            v,
        )
    }

    /// This block's slice of a stage's A and B tiles, shared in a cluster: the rows each loads
    /// for all the blocks that share the tile (0 for an unshared tile), as `(A's, B's)`.
    pub fn multicast_slice_rows(&self) -> (u32, u32) {
        let (m, n, _) = self.cfg.tile;
        let (cx, cy) = self.cfg.cluster;
        (m / cy, n / cx)
    }

    /// Elements of one stage of A and of B.
    pub fn stage_elems(&self) -> (u32, u32) {
        let (m, n, k) = self.cfg.tile;
        (m * k, n * k)
    }
}

/// The accumulator that value `v` of epilogue sub-tile `j` is, for a thread holding `full`
/// accumulators, `per` of them in each sub-tile, over `blocks` 64-row `wgmma` blocks: each
/// block's values run along the columns, so a sub-tile is the same run of `per / blocks` values
/// in every block ([`check_epilogue_slices`] proves it per plan).
pub fn epilogue_source(full: u32, per: u32, blocks: u32, j: u32, v: u32) -> u32 {
    let (in_block, sub_in_block) = (full / blocks, per / blocks);
    (v / sub_in_block) * in_block + j * sub_in_block + v % sub_in_block
}

/// That sub-tile `j` of `epi` columns of every thread's accumulators (the fragment `frag_c` of
/// the consumer's `mma` over `rows x bn`) is the fragment `frag_epi` of `epi_mma` over `rows x
/// epi`, its value `v` being accumulator [`epilogue_source`]`(j, v)`: the epilogue copies it to
/// column `j * epi` on. An error names the first
/// value that lands elsewhere.
pub fn check_epilogue_slices(
    mma: &TiledMma,
    epi_mma: &TiledMma,
    frag_c: &Layout,
    frag_epi: &Layout,
    (rows, bn, epi): (i64, i64, i64),
) -> Result<(), PlanError> {
    let view = |cols: i64| -> Result<View, LayoutError> {
        Ok(View::from(Layout::new(
            IntTuple::ints(&[rows, cols]),
            IntTuple::ints(&[cols, 1]),
        )?))
    };
    let (full_view, epi_view) = (view(bn)?, view(epi)?);
    let per = frag_epi.cosize();
    for t in 0..mma.size() {
        let full = mma.get_slice(t)?.partition_c(&full_view)?;
        let sub = epi_mma.get_slice(t)?.partition_c(&epi_view)?;
        // Value -> (row, column) of this thread's accumulators.
        let mut at = vec![(0i64, 0i64); frag_c.cosize() as usize];
        for i in 0..frag_c.size() {
            let off = full.base + full.layout.eval(i)?;
            at[frag_c.eval(i)? as usize] = (off / bn, off % bn);
        }
        for j in 0..bn / epi {
            for i in 0..frag_epi.size() {
                let off = sub.base + sub.layout.eval(i)?;
                let want = (off / epi, off % epi + j * epi);
                let v = epilogue_source(
                    frag_c.cosize() as u32,
                    per as u32,
                    (rows / 64) as u32,
                    j as u32,
                    frag_epi.eval(i)? as u32,
                );
                if at.get(v as usize) != Some(&want) {
                    return Err(PlanError::Config(format!(
                        "epilogue sub-tile {j} of {epi} columns: thread {t}'s value {v} is not at \
                         {want:?} of the tile"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The configuration is outside what the program supports.
    #[error("{0}")]
    Config(String),
    /// A layout operation failed (a bug for a configuration that passed the checks).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of `specs` is refused with a sentence containing `why`.
    fn refused(specs: &[&str], why: &str) {
        for spec in specs {
            let e = spec.parse::<HopperConfig>().unwrap_err();
            assert!(e.contains(why), "{spec}: {e}");
        }
    }

    #[test]
    fn spellings_round_trip_and_refusals_say_why() {
        for s in HopperConfig::SWEEP {
            let c: HopperConfig = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
        assert_eq!("wide".parse::<HopperConfig>().unwrap(), HopperConfig::WIDE);
        refused(&["128x256x64s5"], "shared memory");
        refused(&["96x256x64s3"], "tile M is 64, 128 or 256");
        refused(&["128x256x64s3_c8x1"], "1x1, 2x1, 1x2, 4x1 or 1x4");
        refused(&["128x256x64s3_c2x2"], "4x1 or 1x4");
        // Four blocks share a 16-wide B: 4 rows each, not whole atoms.
        assert!("128x64x64s8_c4x1_t".parse::<HopperConfig>().is_ok());
        refused(
            &["128x128x128s3_c2x1", "128x16x64s8_c4x1_t"],
            "multicast a slice",
        );
        refused(&["128x256x64s3_z"], "unknown part `_z`");
        // The list of parts names every one the spelling has.
        refused(
            &["128x256x64s3_z"],
            "_eE, _d2, _rR, _p, _q, _ql, _aN, _o, _lB, _vABD, _w, _uB, _b, _n, _t)",
        );
        let even: HopperConfig = "128x256x64s3_n".parse().unwrap();
        assert!(even.even_waves && even.to_string() == "128x256x64s3_n");
        refused(
            &["64x256x64s7_f1_e128_r4_p_ql_n", "64x256x64s8_r4_p_u16_b_n"],
            "evened waves (_n)",
        );
        refused(
            &[
                "128x256x64s4_e96",
                "128x256x64s4_e256",
                "128x64x64s8_e64",
                "256x160x64s4_e40",
            ],
            "multiple of 16 columns that divides tile N",
        );
        // Widths the 128-byte swizzle does not tile stage plain rows.
        refused(&["128x200x64s4"], "multiple of 16");
        for ok in ["128x160x64s5", "256x160x64s4_e32", "128x224x64s4_e112"] {
            assert!(ok.parse::<HopperConfig>().is_ok(), "{ok}");
        }
        // Ping-pong: each consumer a tile of its own (64 or 128 rows), staged apart.
        let p: HopperConfig = "64x256x64s8_e128_r4_p".parse().unwrap();
        assert_eq!(
            (p.consumers(), p.consumer_rows(), p.stage_consumers()),
            (2, 64, 1)
        );
        assert_eq!(p.threads(), 384);
        assert_eq!(p.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 2 * 64 * 128 * 2);
        let q: HopperConfig = "128x128x64s5_p".parse().unwrap();
        assert_eq!((q.consumers(), q.consumer_rows()), (2, 128));
        assert_eq!(q.smem_bytes(), 5 * 256 * 128 + 2 * 128 * 128 * 2);
        // One staging tile for both: room for a stage more, or for a whole tile's store.
        let o: HopperConfig = "128x128x64s6_f1_p_o".parse().unwrap();
        assert_eq!(o.staging_tiles(), 1);
        assert_eq!(o.smem_bytes(), 6 * 256 * 128 + 128 * 128 * 2);
        refused(&["128x128x64s6_f1_p"], "shared memory");
        let w: HopperConfig = "64x256x64s8_f1_r4_p_o".parse().unwrap();
        assert_eq!(w.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 64 * 256 * 2);
        refused(
            &["128x256x64s3_o", "128x128x64s5_o"],
            "for ping-pong consumers",
        );
        refused(
            &[
                "128x256x64s3_p",
                "256x64x64s5_p",
                "64x64x64s8_p_t",
                "64x256x64s4_c2x1_p",
            ],
            "ping-pong",
        );
        refused(&["128x256x64s4_e128_t"], "stages its output whole");
        // A resident B: one block's (or a cluster along M's, each block loading a slice), one
        // tile of N and at most its k-tiles of K.
        refused(&["128x256x64s5_e64_r4_c1x2"], "shared by a cluster along M");
        let shared: HopperConfig = "64x256x64s8_c2x1_e128_r4_p".parse().unwrap();
        assert!(!shared.ring_shared() && shared.ring_sharers() == 1);
        let ring: HopperConfig = "128x256x64s3_c2x1".parse().unwrap();
        assert!(ring.ring_shared() && ring.ring_sharers() == 2);
        refused(&["128x256x64s5_r4"], "shared memory");
        let r: HopperConfig = "128x256x64s5_e64_r4".parse().unwrap();
        assert_eq!(r.smem_bytes(), (5 * 128 + 4 * 256) * 64 * 2 + 128 * 64 * 2);
        assert!(r.takes(81920, 256, 256).is_ok());
        let e = r.takes(81920, 264, 256).unwrap_err();
        assert!(e.contains("N = 264 and K = 256 do not fit"), "{e}");
        assert!(r.takes(100, 256, 320).is_err());
        // Sub-tiles leave room for a stage more: 4 stages of 128x256 do not fit staged whole.
        refused(&["128x256x64s4"], "shared memory");
        // Two staging tiles per consumer, in turns over an even number of sub-tiles.
        let d: HopperConfig = "64x256x64s8_f1_e64_d2_r4_p_l0_vfnf".parse().unwrap();
        assert_eq!((d.staging_buffers, d.staging_tiles()), (2, 4));
        assert_eq!(d.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 4 * 64 * 64 * 2);
        refused(&["64x256x64s6_f1_e128_d2_r4_p"], "shared memory");
        refused(
            &["128x256x64s3_d2", "128x192x64s4_e64_d2"],
            "an even number of sub-tiles",
        );
        // With one staging for both ping-pong consumers (`_o`), the two tiles are theirs in
        // turns: two in all, not four.
        let o: HopperConfig = "64x256x64s10_f1_e64_d2_r4_p_o_l0_vfnf".parse().unwrap();
        assert_eq!(o.staging_tiles(), 2);
        assert_eq!(o.smem_bytes(), (10 * 64 + 4 * 256) * 128 + 2 * 64 * 64 * 2);
        refused(
            &["128x256x64s4_e64_d3", "128x256x64s4_e64_d0"],
            "one or two staging",
        );
        refused(&["128x256x64s4_e64_dx"], "a number of staging tiles");
        // The stream-K region last: not for ping-pong consumers, which have none.
        let w: HopperConfig = "128x256x64s3_w".parse().unwrap();
        assert_eq!(w.stream_k_region, StreamKRegion::Last);
        refused(&["64x256x64s8_f1_e128_r4_p_w"], "no stream-K region");
        refused(
            &["128x80x64s7_l100", "128x80x64s7_l", "128x80x64s7_l512"],
            "0, 64, 128 or 256 bytes",
        );
        // `_g1` walks along N (Triton's group of one row), `_gm` along M.
        let g1: HopperConfig = "128x256x64s3_g1".parse().unwrap();
        assert_eq!(g1.raster, Raster::Grouped { group: 1 });
        let gm: HopperConfig = "128x256x64s3_gm".parse().unwrap();
        assert_eq!(
            (gm.raster, gm.to_string().as_str()),
            (Raster::AlongM, "128x256x64s3_gm")
        );
        refused(&["128x256x64s3_g0", "128x256x64s3_gx"], "group size");
    }

    /// Tiles from a queue: ping-pong consumers of one-block clusters, tiles walked whole; the
    /// spelling round-trips, and the launch gives the queue its words.
    #[test]
    fn tiles_from_a_queue_go_to_pingpong_blocks_alone() {
        let q: HopperConfig = "64x256x64s6_f1_e128_r4_p_q_l256_vnnf".parse().unwrap();
        assert!(q.tile_queue);
        assert_eq!(q.to_string(), "64x256x64s6_f1_e128_r4_p_q_l256_vnnf");
        let late: HopperConfig = "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf".parse().unwrap();
        assert!(late.tile_queue && late.queue_take_late);
        assert_eq!(late.to_string(), "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf");
        refused(&["128x256x64s3_ql"], "tiles from a queue (_q)");
        let l = super::super::launch(&q, 81920, 256, 256, 132);
        assert_eq!((l.grid.0, l.split.sk_tiles), (132, 0));
        assert_eq!(
            l.workspace_elems(&q),
            u64::from(dsl_core::pipeline::QUEUE_WORDS)
        );
        refused(
            &["128x256x64s3_q", "64x256x64s8_c2x1_f1_e128_r4_p_q"],
            "tiles from a queue (_q)",
        );
        // With the last wave's rows cut into pieces (_b), the queue hands out the pieces too:
        // the walk's units past the whole tiles, finer at the end.
        let pieces: HopperConfig = "64x256x64s12_f1_r4_p_q_l256_vnnf_u16_b".parse().unwrap();
        assert!(pieces.tile_queue && pieces.row_split);
        assert_eq!(
            super::super::launch(&pieces, 81920, 256, 256, 132).grid.0,
            132
        );
    }

    /// A resident B wider than the tile only where each block stays on one column of tiles:
    /// ping-pong consumers walking along N, one block per cluster, whole tiles.
    #[test]
    fn a_resident_b_is_one_tile_or_one_column_per_block() {
        let column: HopperConfig = "64x128x64s8_g1_f1_r4_p".parse().unwrap();
        assert!(column.b_column_resident());
        assert!(column.takes(81920, 256, 256).is_ok());
        assert!(column.takes(300, 520, 200).is_ok());
        assert!(column.takes(81920, 256, 320).is_err(), "K past the slots");
        for spec in [
            "64x128x64s8_f1_r4_p",          // grouped by 8: a block changes column
            "64x128x64s8_gm_f1_r4_p",       // along M: likewise
            "128x128x64s4_g1_r4",           // cooperative: stream-K may share tiles out
            "64x128x64s8_g1_f1_r4_p_u16_b", // the last wave cut into rows
            "64x128x64s8_c2x1_g1_f1_r4_p",  // a cluster
        ] {
            let cfg: HopperConfig = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert!(!cfg.b_column_resident(), "{spec}");
            let e = cfg.takes(81920, 256, 256).unwrap_err();
            assert!(e.contains("N = 256 and K = 256 do not fit"), "{spec}: {e}");
            assert!(cfg.takes(81920, 128, 256).is_ok(), "{spec}");
        }
    }

    /// `_l{B}` sets the L2 promotion of A's and B's tensor maps, not D's (a store), and is
    /// spelled only where it is not CuTe's default of 128 bytes.
    #[test]
    fn l2_promotion_goes_to_the_loads_maps() {
        for (spec, want) in [
            ("128x80x64s7_l256", L2Promotion::B256),
            ("128x16x64s8_l0_t", L2Promotion::None),
            ("128x256x64s3", L2Promotion::B128),
        ] {
            let cfg: HopperConfig = spec.parse().unwrap();
            assert_eq!(cfg.to_string(), spec);
            let plan = HopperPlan::new(cfg, GemmDtype::Bf16).unwrap();
            let [a, b, d] = plan.descriptors(1000, 2048, 512).unwrap();
            assert_eq!((a.l2_promotion, b.l2_promotion), (want, want), "{spec}");
            assert_eq!(d.l2_promotion, L2Promotion::B128, "{spec}");
        }
        assert_eq!(
            "128x80x64s7_l128"
                .parse::<HopperConfig>()
                .unwrap()
                .to_string(),
            "128x80x64s7"
        );
    }

    /// `_v{A}{B}{D}` puts its hints on the copies it names (the multicast loads too), and is
    /// spelled only where some copy has one.
    #[test]
    fn cache_hints_go_to_the_copies_they_name() {
        let (f, l, e) = (
            Some(CacheHint::EvictFirst),
            Some(CacheHint::EvictLast),
            Some(CacheHint::EvictNormal),
        );
        for (spec, want) in [
            ("64x256x64s8_f1_e128_r4_p_vfnf", [f, None, f]),
            ("128x256x64s3_c2x1_vlle", [l, l, e]),
            ("128x64x64s8_vfln_t", [f, l, None]),
            ("128x256x64s3", [None; 3]),
        ] {
            let cfg: HopperConfig = spec.parse().unwrap();
            assert_eq!(cfg.cache_hints, want, "{spec}");
            assert_eq!(cfg.to_string(), spec);
            let p = HopperPlan::new(cfg, GemmDtype::F16).unwrap();
            let got = [p.tma_a.cache_hint, p.tma_b.cache_hint, p.tma_d.cache_hint];
            assert_eq!(got, want, "{spec}");
            assert_eq!(
                (p.tma_a_multicast.cache_hint, p.tma_b_multicast.cache_hint),
                (want[0], want[1]),
                "{spec}"
            );
        }
        assert_eq!(
            "128x256x64s3_vnnn"
                .parse::<HopperConfig>()
                .unwrap()
                .to_string(),
            "128x256x64s3"
        );
        refused(
            &[
                "128x256x64s3_vff",
                "128x256x64s3_vffff",
                "128x256x64s3_vfxf",
            ],
            "_v takes three letters",
        );
    }

    /// The sub-tile check passes the plans' own fragments and names the value that a wrong
    /// sub-tile width would put elsewhere.
    #[test]
    fn epilogue_slices_are_checked() {
        let p = HopperPlan::new("128x256x64s4_e64".parse().unwrap(), GemmDtype::F16).unwrap();
        assert_eq!(p.epilogue_values(), 32);
        let plan = |spec: &str| HopperPlan::new(spec.parse().unwrap(), GemmDtype::F16).unwrap();
        let (wide, narrow) = (plan("128x256x64s3"), plan("128x128x64s6_e64"));
        let narrow_mma_frag = HopperPlan::new("128x64x64s8".parse().unwrap(), GemmDtype::F16)
            .unwrap()
            .frag_c;
        // The 64-wide fragment seen as 128-wide sub-tiles of the 256-wide tile: misplaced.
        let e = check_epilogue_slices(
            &wide.mma,
            &narrow.mma,
            &wide.frag_c,
            &narrow_mma_frag,
            (64, 256, 128),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not at"), "{e}");
    }

    /// A 256-row tile's consumer holds two 64-row `wgmma` blocks: a sub-tile is the same run of
    /// values in each block, not one run of the whole fragment.
    #[test]
    fn epilogue_sub_tiles_take_their_run_in_every_block() {
        // One block: sub-tile 1 of 2 is the second half of the values.
        assert_eq!(epilogue_source(64, 32, 1, 1, 5), 37);
        // Two blocks of 80 values, sub-tiles of 40 (20 per block): value 25 of sub-tile 1 is
        // value 5 of block 1's second run.
        assert_eq!(epilogue_source(160, 40, 2, 1, 25), 80 + 20 + 5);
        let plan = HopperPlan::new("256x160x64s3_e80".parse().unwrap(), GemmDtype::Bf16).unwrap();
        assert_eq!(plan.epilogue_values(), 80);
        let sources: Vec<u32> = (0..80).map(|v| plan.epilogue_source(1, v)).collect();
        assert_eq!(&sources[..3], &[40, 41, 42]);
        assert_eq!(&sources[40..43], &[120, 121, 122]);
    }

    #[test]
    fn plans_of_every_sweep_configuration() {
        for s in HopperConfig::SWEEP {
            let cfg: HopperConfig = s.parse().unwrap();
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let p = HopperPlan::new(cfg, dtype).unwrap();
                let (m, n, k) = cfg.tile;
                // One box per 64 of K (a 128-byte swizzled row each).
                assert_eq!(p.tma_a.box_dims, vec![64, m.min(256)], "{s}");
                assert_eq!(p.tma_b.box_dims, vec![64, n], "{s}");
                assert_eq!(p.tma_a.boxes.len() as u32, k / 64, "{s}");
                // In a cluster each block multicasts its slice of the shared tile's rows.
                let (cx, cy) = cfg.cluster;
                assert_eq!(p.multicast_slice_rows(), (m / cy, n / cx), "{s}");
                assert_eq!(p.tma_b_multicast.box_dims, vec![64, n / cx], "{s}");
                assert_eq!(
                    p.tma_a_multicast.box_dims,
                    vec![64, (m / cy).min(256)],
                    "{s}"
                );
                let b_in_ring = if cfg.b_resident > 0 { 0 } else { n };
                assert_eq!(p.stage_bytes(), (m + b_in_ring) * k * 2, "{s}");
                assert_eq!(p.mma.size(), 128);
                let rows = cfg.consumer_rows();
                assert_eq!(p.tma_d.bytes(), rows * cfg.epilogue_cols() * 2, "{s}");
                assert_eq!(p.smem_a_consumer.len() as u32, cfg.consumers(), "{s}");
                if let Some(second) = p.smem_a_consumer.get(1) {
                    let offset = if cfg.pingpong { 0 } else { rows * 64 };
                    assert_eq!(second.base, i64::from(offset), "{s}");
                }
            }
        }
    }
}
