//! Why a schedule is refused: [`Refusal`], one variant per rule, each carrying the values that
//! broke it and saying so in a sentence; and [`ScheduleError`], a refusal with the spelling it
//! came from.

use thiserror::Error;

/// The most accumulators a consumer thread holds: what ptxas fits beside the epilogue's
/// registers without spilling. ptxas allocates the whole kernel within what a block of 384
/// threads may have at entry (168 per thread), before `setmaxnreg` raises the consumers' share:
/// a 256 x 160 cooperative tile's 160 fit with its staging, 176 spill.
pub const MAX_ACCUMULATORS: u32 = 160;

/// The most accumulators a consumer thread holds where it stores D from the registers, whose
/// rounded pairs are all live at once: 144 (160 spill, whatever the store's width).
pub const MAX_ACCUMULATORS_DIRECT: u32 = 144;

/// The most accumulators a consumer thread of a 192-row tile holds: its block of 512 threads
/// has 128 registers per thread at entry, where ptxas allocates the whole kernel; 96 (a
/// 64 x 192 share) leave the rest of the consumer's registers room.
pub const MAX_ACCUMULATORS_THREE_CONSUMERS: u32 = 96;

/// A spelling refused, naming it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    /// The spelling and why it is not a schedule of the program.
    #[error("`{spelling}` is not a hopper_ws configuration: {refusal}")]
    Spelled {
        /// What was given.
        spelling: String,
        /// Why.
        refusal: Refusal,
    },
    /// A schedule built from its parts that the program does not take.
    #[error(transparent)]
    Refused(#[from] Refusal),
}

impl ScheduleError {
    /// The rule that refused it.
    pub fn refusal(&self) -> &Refusal {
        match self {
            ScheduleError::Spelled { refusal, .. } | ScheduleError::Refused(refusal) => refusal,
        }
    }
}

/// Why the program has no such schedule: a rule, with the values that broke it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    /// The spelling is not read as a schedule (an unknown part, a number missing, a part given
    /// twice).
    #[error("{0}")]
    Spelling(String),
    /// Tile M.
    #[error(
        "tile M is 64, 128, 192 or 256 (one consumer warpgroup of 64 rows, two of 64 or 128, or \
         three of 64), not {0}"
    )]
    TileM(u32),
    /// Tile N: a multiple of 16 up to 256, or of 8 where A and B are swapped (`_t`).
    #[error(
        "tile N is a multiple of 16 up to 256 (one wgmma, whose accumulators the epilogue's \
         `stmatrix` copy takes 16 columns at a time), or of 8 up to 256 with A and B swapped \
         (_t, whose staging is written one element at a time), not {0}"
    )]
    TileN(u32),
    /// Tile K.
    #[error("tile K is 64 or 128 (one or two 128-byte swizzled rows), not {0}")]
    TileK(u32),
    /// The ring's depth.
    #[error("stages is 2..=16, not {0}")]
    Stages(u32),
    /// The cluster's shape.
    #[error("the cluster is 1x1, 2x1, 1x2, 4x1 or 1x4, not {0}x{1}")]
    Cluster(u32, u32),
    /// The grouped order's group.
    #[error("_g takes a group size of at least 1")]
    Group,
    /// `wgmma` batches in flight.
    #[error("at most one wgmma batch stays in flight (_f1), not {0}")]
    InFlight(u32),
    /// A batch in flight holds a stage.
    #[error("a batch in flight holds a stage: at least 3 stages with _f1, not {0}")]
    InFlightStages(u32),
    /// The staging's sub-tile width.
    #[error(
        "the epilogue's sub-tiles (_eE) are a multiple of 16 columns that divides tile N and is \
         less than it, not {0}"
    )]
    SubTile(u32),
    /// Staging tiles per consumer.
    #[error("a consumer has one or two staging tiles (_d2), not {0}")]
    Buffers(u32),
    /// Two staging tiles take turns.
    #[error(
        "two staging tiles (_d2) take turns on an even number of sub-tiles (_eE) per tile, not {0}"
    )]
    TwoBuffers(u32),
    /// A resident B's k-tiles.
    #[error("a resident B (_rR) has 1 to 16 k-tiles, not {0}")]
    ResidentKTiles(u32),
    /// A resident B's reach.
    #[error(
        "a resident B (_rR) is one block's, or shared by a cluster along M, of a tile not swapped"
    )]
    ResidentB,
    /// The start's prefetch of A.
    #[error(
        "the start's prefetch of A (_a{0}) takes 1 to 4 waves of a B of one tile (_rR) in \
         one-block clusters, whole tiles (no _b)"
    )]
    Prefetch(u32),
    /// A ping-pong consumer's tile.
    #[error(
        "ping-pong consumers (_p) each own a whole tile of 64 or 128 rows, at most 128 x 128 \
         (its accumulators), not {0} x {1}"
    )]
    PingPongTile(u32, u32),
    /// Ping-pong consumers' reach.
    #[error(
        "ping-pong consumers (_p) work in one block (or, with B resident, a cluster along M), not \
         swapped"
    )]
    PingPong,
    /// Ping-pong consumers have no stream-K.
    #[error("ping-pong consumers (_p) walk whole tiles only: no stream-K region to place (_w)")]
    PingPongRegion,
    /// One staging tile for two.
    #[error(
        "one staging tile (_o) is for ping-pong consumers (_p), whose epilogues take turns, \
         storing through it"
    )]
    OneStaging,
    /// A cooperative consumer's accumulators.
    #[error(
        "a cooperative consumer of a {0} x {1} tile holds {2} accumulators per thread; at most \
         {MAX_ACCUMULATORS} fit its registers beside the epilogue's ({MAX_ACCUMULATORS_DIRECT} \
         where it stores D from the registers, _uB)"
    )]
    Accumulators(u32, u32, u32),
    /// A 192-row tile's consumer's accumulators, or a part it does not take.
    #[error(
        "a 192-row tile's three consumer warpgroups share 128 registers per thread: a {0} x {1} \
         tile holds {2} accumulators per thread, at most {MAX_ACCUMULATORS_THREE_CONSUMERS} fit \
         (and its D goes out through the staging tile: no _uB, no _x)"
    )]
    ThreeConsumers(u32, u32, u32),
    /// A swapped tile's staging.
    #[error("a swapped tile (_t) stages its output whole (no _eE)")]
    SwappedSubTile,
    /// `_z` without `_t`.
    #[error(
        "_z swizzles the transposed staging of a swapped tile (_t_z); A and B are not swapped here"
    )]
    SwizzledTranspose,
    /// `_z` where a consumer's rows are not one 128-byte swizzle row.
    #[error(
        "_z swizzles each staged column as one 128-byte row: 64 rows per consumer (tile M 64, \
         128 or 192), not {0}"
    )]
    SwizzledTransposeRows(u32),
    /// Direct stores' width.
    #[error("D stored from the registers (_uB) takes 4, 8 or 16 bytes per store, not {0}")]
    DirectWidth(u32),
    /// Direct stores have no staging.
    #[error(
        "D stored from the registers (_uB) has no staging tile to swap, split or share (no _t, \
         _eE, _d2 or _o)"
    )]
    DirectStaging,
    /// Epilogue warps where the schedule has no place for them.
    #[error("the epilogue warps (_x) finish a cooperative tile staged whole, and here {0}")]
    EpilogueWarps(&'static str),
    /// Direct stores' hint.
    #[error("D stored from the registers (_uB) takes D's hint f (streaming stores) or n")]
    DirectHint,
    /// Direct stores' span.
    #[error("D stored {0} bytes at a time (_u{0}) takes tile N a multiple of {1}")]
    DirectSpan(u32, u32),
    /// The last wave's rows shared out.
    #[error(
        "the last wave's rows shared out (_b) cut one column of tiles (B resident, _rR) walked \
         whole and in order (no _h) by ping-pong consumers (_p) in one block, each piece stored \
         from the registers (_uB) or through a swizzled staging tile (its columns a multiple of \
         64, not swapped) in blocks of 16 rows"
    )]
    RowSplit,
    /// Evened waves.
    #[error(
        "evened waves (_n) take fewer blocks for a walk in order; tiles from a queue (_q) or the \
         last wave's rows shared out (_b) even the blocks' ends already"
    )]
    EvenedWaves,
    /// Stream-K over every tile.
    #[error(
        "stream-K over every tile (_k) is cooperative consumers' walk (no _p), its region every \
         tile (nothing to place after the whole tiles, _w) on every cluster the device runs (no \
         evened waves, _n)"
    )]
    Streamed,
    /// Tiles from a queue.
    #[error(
        "tiles from a queue (_q) go to ping-pong consumers (_p, whole tiles, never shared out by \
         stream-K) of one-block clusters"
    )]
    Queue,
    /// A cluster's multicast slices.
    #[error(
        "a cluster's blocks each multicast a slice of whole 8-row swizzle atoms: tile K is 64, \
         and tile N a multiple of 8 per block of a cluster row, not {0} x {1} in a {2}x{3} cluster"
    )]
    Multicast(u32, u32, u32, u32),
    /// The shared-memory fit.
    #[error(
        "{stages} stages of {m}x{n}x{k} take {dynamic} bytes of shared memory with the output's \
         staging, and {fixed} of barriers before it; {limit} fit"
    )]
    SharedMemory {
        /// Stages.
        stages: u32,
        /// Tile M.
        m: u32,
        /// Tile N.
        n: u32,
        /// Tile K.
        k: u32,
        /// Dynamic shared memory.
        dynamic: u32,
        /// Static shared memory, padded to the dynamic memory's alignment.
        fixed: u32,
        /// The limit.
        limit: u32,
    },
}
