//! The parts of a [`HopperSchedule`](super::HopperSchedule), each a type of its own: the tile,
//! the cluster, the consumers (and, under them, where B lives, how D is stored and how the walk
//! ends), the L2 policy. A part whose values have a range is built by a constructor that checks
//! it ([`Tile::new`], [`Columns::new`], [`ResidentB::new`]), so that no value of these types
//! makes the launch divide by zero or overflow; a choice between variants is an enum, and a
//! variant that only one kind of consumers has lives under it.

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::pipeline::{ClusterShape, StreamKRegion};

use super::refusal::Refusal;

/// The block tile `(M, N, K)` and the depth of the shared-memory ring.
///
/// M is 64 (one consumer warpgroup), 128 or 256 (two), or 192 (three of 64 rows); N a multiple
/// of 8 up to 256 (one `wgmma` N); K 64 or 128 (one or two 128-byte swizzled rows of 16-bit
/// elements); 2 to 16 stages. What else a tile needs depends on the rest of the schedule
/// ([`HopperSchedule::check`](super::HopperSchedule::check)): N a multiple of 16 unless A and
/// B are swapped (`_t`), since the epilogue's `stmatrix` copy takes the accumulators 16 columns
/// at a time, where a swapped tile's staging is written one element at a time.
///
/// ```
/// use kernels::hopper::schedule::{HopperSchedule, Tile};
/// let t = Tile::new(128, 256, 64, 3).unwrap();
/// assert_eq!((t.m(), t.n(), t.k(), t.stages()), (128, 256, 64, 3));
/// assert!(Tile::new(0, 256, 64, 3).is_err());
/// assert!(Tile::new(128, 256, 64, u32::MAX).is_err());
/// // 152 tokens wide: a tile of a swapped schedule only.
/// assert!(Tile::new(128, 152, 64, 5).is_ok());
/// assert!("128x152x64s5_t".parse::<HopperSchedule>().is_ok());
/// assert!("128x152x64s5".parse::<HopperSchedule>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    pub(super) m: u32,
    pub(super) n: u32,
    pub(super) k: u32,
    pub(super) stages: u32,
}

/// The most stages a ring has.
pub const MAX_STAGES: u32 = 16;

impl Tile {
    /// The tile `m x n x k` with `stages` stages, or why the program has no such tile.
    pub fn new(m: u32, n: u32, k: u32, stages: u32) -> Result<Tile, Refusal> {
        if !matches!(m, 64 | 128 | 192 | 256) {
            return Err(Refusal::TileM(m));
        }
        if !(8..=256).contains(&n) || !n.is_multiple_of(8) {
            return Err(Refusal::TileN(n));
        }
        if !matches!(k, 64 | 128) {
            return Err(Refusal::TileK(k));
        }
        if !(2..=MAX_STAGES).contains(&stages) {
            return Err(Refusal::Stages(stages));
        }
        Ok(Tile { m, n, k, stages })
    }

    /// Rows of A and D per tile.
    pub fn m(self) -> u32 {
        self.m
    }

    /// Columns of D (rows of B) per tile.
    pub fn n(self) -> u32 {
        self.n
    }

    /// K per k-tile (one stage).
    pub fn k(self) -> u32 {
        self.k
    }

    /// Stages of the ring.
    pub fn stages(self) -> u32 {
        self.stages
    }

    /// `(M, N, K)`.
    pub fn mnk(self) -> (u32, u32, u32) {
        (self.m, self.n, self.k)
    }

    /// The same tile with `stages` stages.
    pub fn with_stages(self, stages: u32) -> Result<Tile, Refusal> {
        Tile::new(self.m, self.n, self.k, stages)
    }
}

/// Blocks per cluster: one, or two or four along M (sharing B, each multicasting its slice of
/// it) or along N (sharing A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cluster {
    /// One block.
    One,
    /// Blocks along M: they share B's tile.
    AlongM(ClusterSize),
    /// Blocks along N: they share A's tile.
    AlongN(ClusterSize),
}

/// Blocks of a cluster past one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterSize {
    /// Two blocks.
    Two,
    /// Four blocks.
    Four,
}

impl ClusterSize {
    /// The blocks.
    pub fn blocks(self) -> u32 {
        match self {
            ClusterSize::Two => 2,
            ClusterSize::Four => 4,
        }
    }
}

impl Cluster {
    /// The cluster of `x` blocks along M and `y` along N (`_c{X}x{Y}`).
    pub fn new(x: u32, y: u32) -> Result<Cluster, Refusal> {
        match (x, y) {
            (1, 1) => Ok(Cluster::One),
            (2, 1) => Ok(Cluster::AlongM(ClusterSize::Two)),
            (4, 1) => Ok(Cluster::AlongM(ClusterSize::Four)),
            (1, 2) => Ok(Cluster::AlongN(ClusterSize::Two)),
            (1, 4) => Ok(Cluster::AlongN(ClusterSize::Four)),
            _ => Err(Refusal::Cluster(x, y)),
        }
    }

    /// `(blocks along M, blocks along N)`.
    pub fn blocks(self) -> (u32, u32) {
        match self {
            Cluster::One => (1, 1),
            Cluster::AlongM(s) => (s.blocks(), 1),
            Cluster::AlongN(s) => (1, s.blocks()),
        }
    }

    /// The cluster's shape (`x` along M, `y` along N).
    pub fn shape(self) -> ClusterShape {
        let (x, y) = self.blocks();
        ClusterShape { x, y }
    }

    /// Blocks in the cluster.
    pub fn size(self) -> u32 {
        let (x, y) = self.blocks();
        x * y
    }
}

/// `wgmma` batches a consumer leaves in flight when it moves to the next k-tile (`_f{N}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InFlight {
    /// None: each k-tile's batch is waited for before its stage is freed.
    Zero,
    /// One: the previous k-tile's stage is freed once only the current batch is pending, so
    /// the tensor cores always have the next batch queued (CUTLASS's `K_PIPE_MMAS`). It holds
    /// a stage: at least 3.
    One,
}

impl InFlight {
    /// The batches.
    pub fn batches(self) -> u32 {
        match self {
            InFlight::Zero => 0,
            InFlight::One => 1,
        }
    }
}

/// The consumer warpgroups and what they own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumers {
    /// Each tile's rows split between the consumers (one for a 64-row tile), which stream-K
    /// may share out by k-tiles where whole tiles would leave SMs idle.
    Cooperative(Cooperative),
    /// Two consumers each owning whole tiles, the block's tiles alternating between them, so
    /// that one's epilogue (and the loads of its next tile) overlaps the other's `wgmma`
    /// (CUTLASS's ping-pong kernel; `_p`). For a short K, where a tile's epilogue costs as much
    /// as its main loop.
    PingPong(PingPong),
}

/// Cooperative consumers' part of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cooperative {
    /// The operands as given, or swapped.
    pub operands: Operands,
    /// Where the stream-K region runs in each block's walk (`_w`: after the whole tiles).
    pub stream_k: StreamKRegion,
    /// How many blocks walk the tiles where stream-K does not share the last wave out.
    pub waves: Waves,
}

/// Whether the kernel computes `D` from A and B as given, or `D^T = B A^T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operands {
    /// A and B as given: B in the ring or resident, D stored through staging or from the
    /// registers.
    AsGiven {
        /// Where B lives.
        b: BPlacement,
        /// How D is stored.
        store: Store,
    },
    /// A and B swapped (`_t`), for decode shapes: the few rows of A become the tile's narrow N
    /// (a 64x16 `wgmma`) and the weights B fill its rows, instead of 112 of 128 rows computing
    /// zeros. B's tile goes through the ring, and the output through one column-major staging
    /// tile of the whole tile and a TMA store of D seen transposed.
    Swapped(TransposedStaging),
}

/// A swapped tile's staging: D's transpose, the consumer's rows of each column contiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransposedStaging {
    /// Column after column (`_t`): the accumulators' four column pairs a warp writes at once lie
    /// a column's bytes apart, in the same banks (four-way conflicts where a column is 128 or
    /// 256 bytes).
    Plain,
    /// 128-byte swizzled (`_t_z`): each column's 16-byte chunks permuted by the column, so that
    /// the columns a warp writes at once meet in no bank; the TMA store reads the same swizzle.
    /// A column is one swizzle row: 64-row consumers (tile M 64, 128 or 192).
    Swizzled,
}

/// Ping-pong consumers' part of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PingPong {
    /// Where B lives.
    pub b: BPlacement,
    /// How D is stored.
    pub store: PingPongStore,
    /// Where each block's tiles come from.
    pub source: TileSource,
    /// How the last wave is spread over the blocks.
    pub last_wave: LastWave,
}

/// Where B's tiles live in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BPlacement {
    /// In the ring, a stage per k-tile beside A's.
    Ring,
    /// Loaded once per block and kept (`_r{R}`): the ring holds A only. For a B of one tile
    /// (N up to the tile's N, K up to the resident k-tiles), like 81920 x 256 x 256, where every
    /// tile would re-read the same B through L2; or one column of tiles per block where the walk
    /// keeps each block on one.
    Resident(ResidentB),
}

/// A resident B: its k-tiles, and the waves of A prefetched into L2 at the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResidentB {
    k_tiles: u32,
    prefetch_waves: u32,
}

/// The most k-tiles a resident B holds.
pub const MAX_RESIDENT_K_TILES: u32 = 16;

/// The most waves of A the start prefetches.
pub const MAX_PREFETCH_WAVES: u32 = 4;

impl ResidentB {
    /// B's `k_tiles` k-tiles resident (1 to 16), and the A tiles of the next `prefetch_waves`
    /// waves (0 to 4; `_a{N}`) prefetched into L2 once the first tile's loads are issued, so
    /// that DRAM works while B's load from L2 holds the consumers back.
    pub fn new(k_tiles: u32, prefetch_waves: u32) -> Result<ResidentB, Refusal> {
        if !(1..=MAX_RESIDENT_K_TILES).contains(&k_tiles) {
            return Err(Refusal::ResidentKTiles(k_tiles));
        }
        if prefetch_waves > MAX_PREFETCH_WAVES {
            return Err(Refusal::Prefetch(prefetch_waves));
        }
        Ok(ResidentB {
            k_tiles,
            prefetch_waves,
        })
    }

    /// B's k-tiles kept in shared memory.
    pub fn k_tiles(self) -> u32 {
        self.k_tiles
    }

    /// Waves of A prefetched into L2 at the start (0: none).
    pub fn prefetch_waves(self) -> u32 {
        self.prefetch_waves
    }
}

/// How cooperative consumers store D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Store {
    /// Through shared memory: `stmatrix` into staging tiles, then a TMA store of each.
    Tma(SubTile),
    /// From the registers, no staging tile (`_u{B}`): its shared memory holds more stages, and
    /// no consumer waits for a store to have read one.
    Direct(StoreWidth),
    /// Through one staging tile of the whole tile per consumer, handed to the producer
    /// warpgroup's three idle warps (`_x`, epilogue warps): the consumers write `alpha * acc`
    /// rounded to D's 16-bit type with `stmatrix` and go on to the next tile's main loop, while
    /// the epilogue warps apply a form's epilogue (C, the bias, the map, the residual: read 16
    /// bytes at a time) to the staged values in place and issue the TMA store. A fused
    /// epilogue's math then runs under the next tile's `wgmma` instead of between tiles, where
    /// no tensor core works (the cooperative consumers' epilogue is serial with their main
    /// loop). The values are rounded once more than on the registers' path (`alpha * acc` to
    /// D's type before the epilogue), as an unfused chain whose GEMM writes D first does: where
    /// no term cancels the product, D is within about one and a half units in its last place
    /// of the exact result rather than half of one. So the chooser gives them no form that
    /// reads C (whose `beta * C` may cancel the product), and the plan refuses a gated
    /// epilogue (whose product magnifies the gate's and up's rounding) and an f32 D.
    EpilogueWarps,
}

/// How ping-pong consumers store D: as [`Store`], and through staging tiles of their own or
/// shared in turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PingPongStore {
    /// Through shared memory and a TMA store.
    Tma {
        /// The staging's sub-tiles.
        sub_tile: SubTile,
        /// Whose staging tiles.
        staging: Staging,
    },
    /// From the registers (`_u{B}`).
    Direct(StoreWidth),
}

impl PingPongStore {
    /// The store, apart from whose staging it goes through.
    pub fn store(self) -> Store {
        match self {
            PingPongStore::Tma { sub_tile, .. } => Store::Tma(sub_tile),
            PingPongStore::Direct(w) => Store::Direct(w),
        }
    }
}

/// Whose staging tiles ping-pong consumers write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Staging {
    /// Each consumer its own.
    Own,
    /// One for both, in turns (`_o`), each after the other's stores have read it: their
    /// epilogues alternate anyway, and the shared memory it frees holds a stage more or a
    /// whole tile's store.
    Shared,
}

/// The staging tile's width: the whole tile, or sub-tiles of some columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubTile {
    /// The whole tile at once.
    Whole,
    /// Sub-tiles of some columns at a time (`_e{E}`), through one or two staging tiles each.
    Columns(Columns),
}

/// Sub-tiles of the staging: their columns (a multiple of 16 below 256) and how many staging
/// tiles of that width each consumer writes in turns (`_d2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Columns {
    cols: u32,
    buffers: Buffers,
}

impl Columns {
    /// Sub-tiles of `cols` columns through `buffers` staging tiles.
    pub fn new(cols: u32, buffers: Buffers) -> Result<Columns, Refusal> {
        if cols == 0 || !cols.is_multiple_of(16) || cols >= 256 {
            return Err(Refusal::SubTile(cols));
        }
        Ok(Columns { cols, buffers })
    }

    /// Columns of each sub-tile.
    pub fn cols(self) -> u32 {
        self.cols
    }

    /// Staging tiles per consumer.
    pub fn buffers(self) -> Buffers {
        self.buffers
    }
}

/// Staging tiles per consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buffers {
    /// One: each sub-tile waits for the last one's store to have read it.
    One,
    /// Two, in turns: each sub-tile is written while the store of the one before reads the
    /// other, waiting on the store before last. For a short K, where the epilogue is the longer
    /// part of a tile.
    Two,
}

impl Buffers {
    /// The staging tiles.
    pub fn count(self) -> u32 {
        match self {
            Buffers::One => 1,
            Buffers::Two => 2,
        }
    }
}

/// Bytes per thread and store of D stored from the registers. For 8 and 16 the accumulators
/// are first exchanged within each quad of lanes, so that each lane stores contiguous bytes
/// and a quad whole 32-byte sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreWidth {
    /// 4 bytes: the pairs as held.
    B4,
    /// 8 bytes.
    B8,
    /// 16 bytes.
    B16,
}

impl StoreWidth {
    /// The width of `bytes` (4, 8 or 16).
    pub fn from_bytes(bytes: u32) -> Option<StoreWidth> {
        match bytes {
            4 => Some(StoreWidth::B4),
            8 => Some(StoreWidth::B8),
            16 => Some(StoreWidth::B16),
            _ => None,
        }
    }

    /// Its bytes.
    pub fn bytes(self) -> u32 {
        match self {
            StoreWidth::B4 => 4,
            StoreWidth::B8 => 8,
            StoreWidth::B16 => 16,
        }
    }

    /// Columns of a row one quad of lanes stores at a time: 8 per 4 bytes.
    pub fn span(self) -> u32 {
        8 * (self.bytes() / 4)
    }
}

/// Where a ping-pong block's tiles come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileSource {
    /// Every grid-th tile of the order.
    Static,
    /// Its first tile by its index, then the next free one from a counter in the workspace
    /// (`_q`), which the producer hands to the consumers through a ring in shared memory: a
    /// block that runs faster takes more, so that the producers end within about a tile of
    /// each other.
    Queue(Take),
}

/// When a producer takes its next tile from the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Take {
    /// While this tile's loads are issued (`_q`).
    Early,
    /// Once this tile's loads are issued (`_ql`): it holds one tile fewer than it has yet to
    /// load when the queue runs dry.
    Late,
}

/// How a cooperative schedule's tiles are spread over the blocks: whole, stream-K sharing out
/// the last wave's k-tiles where the launch finds it pays ([`AsMany`](Waves::AsMany),
/// [`Evened`](Waves::Evened)), or every tile's k-tiles shared out ([`Streamed`](Waves::Streamed)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Waves {
    /// As many blocks as the device runs (the last wave maybe part-full) where stream-K does not
    /// share the last wave out.
    AsMany,
    /// As few blocks as take the same number of waves (`_n`), each walking as many tiles, where
    /// stream-K does not share the last wave out.
    Evened,
    /// Every tile's k-tiles shared out over every cluster the device runs (`_k`): stream-K over
    /// the whole problem, not only its last wave. Each cluster streams the same share of
    /// k-tiles (at least 8), whatever the tiles' count: for few tiles over a long K, where
    /// whole tiles would leave SMs idle and run each K serially, and for tiles a wave or two
    /// deep, whose last wave would be part-full. A tile whose k-tiles two clusters share pays
    /// the hand-over of one's partial sums to the other.
    Streamed,
}

/// How a ping-pong walk spreads its last wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LastWave {
    /// As many blocks as the device runs.
    AsIs,
    /// As few blocks as take the same number of waves (`_n`; a static walk only: a queue evens
    /// the blocks' ends already).
    Evened,
    /// The tiles past the last whole wave cut into one piece of rows per block (`_b`; B
    /// resident in one-block clusters, an order along N or M, D stored from the registers or
    /// through a swizzled staging tile), so that every block ends at about the same time.
    RowsSharedOut,
}

/// The loads' L2 promotion and the copies' eviction hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct L2Policy {
    /// The L2 promotion of A's and B's tensor maps (`_l{B}`): the granularity of the L2's
    /// fetches from DRAM for their loads.
    pub promotion: L2Promotion,
    /// The eviction priorities (`_v{A}{B}{D}`).
    pub hints: CacheHints,
}

impl L2Policy {
    /// CuTe's: 128-byte promotion, no hints.
    pub const DEFAULT: L2Policy = L2Policy {
        promotion: L2Promotion::B128,
        hints: CacheHints::NONE,
    };
}

/// The L2 eviction priority of A's loads, B's loads and D's stores, in the kernel's terms
/// (swapped, its A is the problem's B); `None` for no hint. Evict-first for an operand streamed
/// once keeps the L2 for what is re-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheHints {
    /// A's loads.
    pub a: Option<CacheHint>,
    /// B's loads.
    pub b: Option<CacheHint>,
    /// D's stores (from the registers: evict-first or none, as streaming stores).
    pub d: Option<CacheHint>,
}

impl CacheHints {
    /// No hints.
    pub const NONE: CacheHints = CacheHints {
        a: None,
        b: None,
        d: None,
    };

    /// `[A's, B's, D's]`.
    pub fn each(self) -> [Option<CacheHint>; 3] {
        [self.a, self.b, self.d]
    }
}
