//! [`HopperSchedule`]: the warp-specialized GEMM's schedule as a typed value, spelled as `rute
//! gemm --config` takes it.
//!
//! The schedule is a struct of parts ([`parts`]): the tile and its stages, the cluster, the
//! `wgmma` batches in flight, the consumers, the walk's order and the L2 policy. A choice
//! that only one kind of consumers has lives under it: cooperative consumers have the
//! stream-K region, evened waves or stream-K over every tile, and swapped operands; ping-pong
//! consumers have shared staging,
//! tiles from a queue and the last wave's rows shared out. So a spelling such as
//! `128x256x64s3_o` (one staging tile for cooperative consumers) has no value to parse into.
//! What is left to [`HopperSchedule::check`] is ranges that depend on the tile, the reach of a
//! cluster and of a resident B, and the shared-memory fit.
//!
//! The spelling ([`spelling`]) is `{M}x{N}x{K}s{STAGES}`, then `_c{X}x{Y}` (blocks per cluster
//! along M and N, default 1x1), `_h` (Hilbert-curve tile order instead of grouped), `_g{G}`
//! (groups of `G` cluster rows, default 8; `_g1` walks along N, row by row) or `_gm` (along M,
//! column by column), `_f1` (one `wgmma` batch kept in flight across k-tiles), `_e{E}` (the
//! epilogue stores the tile in sub-tiles of `E` columns through one staging tile of that
//! width, which leaves room for more stages), `_d2` (two staging tiles of that width per
//! consumer, so that one sub-tile is written while the store of the one before still reads the
//! other; with `_o`, two in all), `_r{R}` (B's `R` k-tiles resident in shared memory, for a B
//! of one tile), `_p` (ping-pong consumers, each owning whole tiles), `_q` (tiles from a queue
//! fed by an atomic counter, ping-pong only; `_ql` takes each once the last one's loads are
//! issued), `_a{N}` (A of the next `N` waves prefetched into L2 at the start), `_o`
//! (ping-pong consumers staging their output in one shared tile, in turns), `_l{B}` (the loads'
//! L2 promotion, 0, 64, 128 or 256 bytes; default 128), `_v{A}{B}{D}` (L2 eviction hints of
//! A's and B's loads and D's stores, each `n` none, `e` evict normal, `f` evict first or `l`
//! evict last), `_w` (the whole tiles walked before the stream-K region, not after), `_u{B}`
//! (D stored from the registers, `B` bytes per store: 4, 8 or 16, no staging tile), `_x` (the
//! producer warpgroup's three idle warps finish each staged tile: a fused epilogue and the TMA
//! store run under the next tile's main loop; cooperative, whole staging), `_b` (the
//! last wave's rows shared out, one piece per block), `_n` (as few blocks as take as many
//! waves, each walking as many tiles), `_k` (stream-K over every tile: each tile's k-tiles
//! shared out over every cluster the device runs), `_t` (A and B swapped, for decode and
//! few-token shapes) and `_z` (with `_t`: the transposed staging 128-byte swizzled, for 64 rows
//! per consumer), each at most once; e.g. `128x256x64s3_c2x1_h`, `128x256x64s4_e128`,
//! `64x256x64s8_e128_r4_p`, `128x16x64s8_t` or `128x160x64s5_f1_vfln_k_t`.
//!
//! ```
//! use kernels::hopper::schedule::{Consumers, HopperSchedule};
//! let s: HopperSchedule = "64x256x64s8_e128_r4_p".parse().unwrap();
//! assert!(matches!(s.consumers, Consumers::PingPong(_)));
//! assert_eq!((s.consumers(), s.consumer_rows(), s.threads()), (2, 64, 384));
//! assert_eq!(s.to_string(), "64x256x64s8_e128_r4_p");
//! let e = "128x256x64s3_p".parse::<HopperSchedule>().unwrap_err();
//! assert!(e.to_string().contains("ping-pong consumers (_p) each own a whole tile"));
//! // Each part at most once.
//! let e = "128x256x64s3_f1_f1".parse::<HopperSchedule>().unwrap_err();
//! assert!(e.to_string().contains("`_f` is given twice"), "{e}");
//! ```

pub mod check;
mod describe;
pub mod parts;
pub mod refusal;
pub mod spelling;
mod sweep;

pub use parts::{
    BPlacement, Buffers, CacheHints, Cluster, ClusterSize, Columns, Consumers, Cooperative,
    InFlight, L2Policy, LastWave, Operands, PingPong, PingPongStore, ResidentB, Staging, Store,
    StoreWidth, SubTile, Take, Tile, TileSource, TransposedStaging, Waves, MAX_PREFETCH_WAVES,
    MAX_RESIDENT_K_TILES, MAX_STAGES,
};
pub use refusal::{
    Refusal, ScheduleError, MAX_ACCUMULATORS, MAX_ACCUMULATORS_DIRECT,
    MAX_ACCUMULATORS_THREE_CONSUMERS,
};

use dsl_core::pipeline::{ClusterShape, Raster, StreamKRegion, QUEUE_SLOTS};

/// Largest shared memory a block may have on sm_90, static and dynamic together (227 KiB).
pub const SMEM_LIMIT: u32 = 227 * 1024;

/// The alignment of the dynamic shared memory: the static barriers before it take a whole
/// multiple of it.
pub const DYNAMIC_SMEM_ALIGN: u32 = 1024;

/// Rows of each TMA box of the staging tile where the last wave's rows are shared out and
/// stored through it: a piece's store is its boxes, so its rows are a multiple of these.
pub const STAGING_BLOCK_ROWS: u32 = 16;

/// Registers per thread of the producer and of the consumers after `setmaxnreg` in a block of
/// two consumer warpgroups (or one): together 64512 of the SM's 65536 (a block per SM).
pub const REGISTERS: (u32, u32) = (40, 232);

/// The same with the epilogue warps (`_x`), which run in the producer warpgroup and hold
/// [`AHEAD_CHUNKS`](super::epilogue_warps::AHEAD_CHUNKS) of C's and the residual's chunks in
/// registers: 64 x 128 + 216 x 256 = 63488, within the 64512 the block holds at entry (168 per
/// thread: what the producer gives back is all the consumers can take, so a larger sum would
/// leave their `setmaxnreg.inc` waiting). The consumers keep more than the 168 ptxas allocates
/// them within.
pub const REGISTERS_EPILOGUE_WARPS: (u32, u32) = (64, 216);

/// The same with three consumer warpgroups (a 192-row tile): 32 x 128 + 160 x 384, the SM's
/// 65536. ptxas allocates the whole kernel within what a block of 512 threads has at entry
/// (128 per thread), so the consumers' share past it is headroom, not more accumulators.
pub const REGISTERS_THREE_CONSUMERS: (u32, u32) = (32, 160);

/// Threads of the epilogue warps (`_x`): the producer warpgroup's warps 1 to 3, which the
/// producer (one lane of warp 0) leaves idle otherwise.
pub const EPILOGUE_THREADS: u32 = 96;

/// Columns of D's 16-bit type in one 16-byte chunk, the epilogue warps' access.
pub const EPILOGUE_CHUNK_COLS: u32 = 8;

/// The schedule of the warp-specialized GEMM (see the module's docs for its spelling).
///
/// Build one by parsing its spelling, or from its parts; [`HopperSchedule::check`] says
/// whether the program takes a value built from parts (parsing checks).
///
/// ```
/// use dsl_core::pipeline::{Raster, StreamKRegion};
/// use kernels::hopper::schedule::*;
/// let s = HopperSchedule {
///     tile: Tile::new(128, 256, 64, 4).unwrap(),
///     cluster: Cluster::AlongM(ClusterSize::Two),
///     in_flight: InFlight::Zero,
///     consumers: Consumers::Cooperative(Cooperative {
///         operands: Operands::AsGiven {
///             b: BPlacement::Ring,
///             store: Store::Tma(SubTile::Columns(Columns::new(64, Buffers::One).unwrap())),
///         },
///         stream_k: StreamKRegion::First,
///         waves: Waves::AsMany,
///     }),
///     order: Raster::Grouped { group: 8 },
///     l2: L2Policy::DEFAULT,
/// };
/// assert_eq!(s.check(), Ok(()));
/// assert_eq!(s.to_string(), "128x256x64s4_c2x1_e64");
/// assert_eq!("128x256x64s4_c2x1_e64".parse::<HopperSchedule>(), Ok(s));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HopperSchedule {
    /// The block tile and the ring's stages.
    pub tile: Tile,
    /// Blocks per cluster.
    pub cluster: Cluster,
    /// `wgmma` batches left in flight across k-tiles.
    pub in_flight: InFlight,
    /// The consumers, and what is theirs.
    pub consumers: Consumers,
    /// The order of the persistent walk over cluster tiles.
    pub order: Raster,
    /// The loads' L2 promotion and the copies' eviction hints.
    pub l2: L2Policy,
}

impl HopperSchedule {
    /// 128x256x64, 3 stages, one block per cluster, grouped order (fast.cu's kernel-12 tile):
    /// `wide`.
    pub const WIDE: HopperSchedule = HopperSchedule {
        tile: Tile {
            m: 128,
            n: 256,
            k: 64,
            stages: 3,
        },
        cluster: Cluster::One,
        in_flight: InFlight::Zero,
        consumers: Consumers::Cooperative(Cooperative {
            operands: Operands::AsGiven {
                b: BPlacement::Ring,
                store: Store::Tma(SubTile::Whole),
            },
            stream_k: StreamKRegion::First,
            waves: Waves::AsMany,
        }),
        order: Raster::Grouped { group: 8 },
        l2: L2Policy::DEFAULT,
    };

    /// The schedules the tuning sweep times, as spelled (the source's comments say why each is
    /// there); each has a PTX snapshot.
    pub const SWEEP: [&'static str; 76] = sweep::SWEEP;

    /// Consumer warpgroups: one for a cooperative 64-row tile, three for a 192-row one, else
    /// two, each with its share of the rows (or, ping-pong, each with tiles of its own).
    pub fn consumers(&self) -> u32 {
        match self.consumers {
            Consumers::Cooperative(_) if self.tile.m == 64 => 1,
            Consumers::Cooperative(_) if self.tile.m == 192 => 3,
            _ => 2,
        }
    }

    /// Registers per thread of the producer and of each consumer after `setmaxnreg`:
    /// [`REGISTERS`], with three consumers [`REGISTERS_THREE_CONSUMERS`], with the epilogue
    /// warps [`REGISTERS_EPILOGUE_WARPS`].
    pub fn registers(&self) -> (u32, u32) {
        if self.consumers() == 3 {
            REGISTERS_THREE_CONSUMERS
        } else if self.epilogue_warps() {
            REGISTERS_EPILOGUE_WARPS
        } else {
            REGISTERS
        }
    }

    /// Rows of a tile one consumer computes: its share (the whole tile's, ping-pong).
    pub fn consumer_rows(&self) -> u32 {
        match self.consumers {
            Consumers::PingPong(_) => self.tile.m,
            Consumers::Cooperative(_) => self.tile.m / self.consumers(),
        }
    }

    /// Consumers that read each stage and free it: all (cooperative), or its tile's owner.
    pub fn stage_consumers(&self) -> u32 {
        match self.consumers {
            Consumers::PingPong(_) => 1,
            Consumers::Cooperative(_) => self.consumers(),
        }
    }

    /// Threads per block: one producer warpgroup and the consumers.
    pub fn threads(&self) -> u32 {
        128 * (1 + self.consumers())
    }

    /// The cluster's shape.
    pub fn cluster_shape(&self) -> ClusterShape {
        self.cluster.shape()
    }

    /// Whether the kernel computes `D^T = B A^T` (`_t`).
    pub fn swapped(&self) -> bool {
        self.transposed_staging().is_some()
    }

    /// A swapped tile's staging (`_t`, `_t_z`); `None` where A and B are as given.
    pub fn transposed_staging(&self) -> Option<TransposedStaging> {
        match self.consumers {
            Consumers::Cooperative(Cooperative {
                operands: Operands::Swapped(staging),
                ..
            }) => Some(staging),
            _ => None,
        }
    }

    /// The kernel's `(M, N)` for a problem's `m x n`: swapped, `(n, m)`.
    pub fn kernel_dims(&self, m: u32, n: u32) -> (u32, u32) {
        if self.swapped() {
            (n, m)
        } else {
            (m, n)
        }
    }

    /// Where B lives.
    pub fn b(&self) -> BPlacement {
        match self.consumers {
            Consumers::Cooperative(Cooperative {
                operands: Operands::AsGiven { b, .. },
                ..
            })
            | Consumers::PingPong(PingPong { b, .. }) => b,
            Consumers::Cooperative(_) => BPlacement::Ring,
        }
    }

    /// A resident B, if B is resident.
    pub fn resident_b(&self) -> Option<ResidentB> {
        match self.b() {
            BPlacement::Resident(r) => Some(r),
            BPlacement::Ring => None,
        }
    }

    /// How D is stored (swapped: through one column-major staging tile of the whole tile).
    pub fn store(&self) -> Store {
        match self.consumers {
            Consumers::Cooperative(Cooperative {
                operands: Operands::AsGiven { store, .. },
                ..
            }) => store,
            Consumers::Cooperative(_) => Store::Tma(SubTile::Whole),
            Consumers::PingPong(p) => p.store.store(),
        }
    }

    /// Whether the producer warpgroup's idle warps finish each tile (`_x`).
    pub fn epilogue_warps(&self) -> bool {
        self.store() == Store::EpilogueWarps
    }

    /// The same schedule with the epilogue warps (`_x`), where it stages whole tiles through
    /// cooperative consumers (`Store::Tma` without sub-tiles) and the program takes it; else
    /// `None`.
    pub fn with_epilogue_warps(&self) -> Option<HopperSchedule> {
        if self.store() != Store::Tma(SubTile::Whole) {
            return None;
        }
        let s = self.with_cooperative_store(Store::EpilogueWarps)?;
        s.check().is_ok().then_some(s)
    }

    /// The same schedule with cooperative consumers storing D as `store` (unchecked), where
    /// its consumers are cooperative with operands as given; else `None`.
    pub(crate) fn with_cooperative_store(&self, store: Store) -> Option<HopperSchedule> {
        let Consumers::Cooperative(c) = self.consumers else {
            return None;
        };
        let Operands::AsGiven { b, .. } = c.operands else {
            return None;
        };
        Some(HopperSchedule {
            consumers: Consumers::Cooperative(Cooperative {
                operands: Operands::AsGiven { b, store },
                ..c
            }),
            ..*self
        })
    }

    /// The same schedule without its staging tile, for a form whose D goes from the registers
    /// and never through a staging tile (D in f32, a gated epilogue: `FormStore`'s `F32` and
    /// `Gated`): the store spelled `_u16`, and the staging's shared memory given to as many
    /// more stages as it holds and `limit` (the device's shared memory per block) takes. `None`
    /// where the schedule has no staging to free or the program takes no `_u` with it
    /// (ping-pong consumers, swapped A and B, sub-tiles, a resident B, an L2 hint on D other
    /// than evict-first).
    ///
    /// ```
    /// use kernels::hopper::schedule::HopperSchedule;
    /// let s: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
    /// // The 64 KB staging tile holds one more 48 KB stage.
    /// assert_eq!(s.without_staging(232_448).unwrap().to_string(), "128x256x64s4_h_u16_n");
    /// ```
    pub fn without_staging(&self, limit: u32) -> Option<HopperSchedule> {
        let Store::Tma(_) = self.store() else {
            return None;
        };
        let freed = self.with_cooperative_store(Store::Direct(StoreWidth::B16))?;
        let fits = |s: &HopperSchedule| s.check().is_ok() && s.check_fit(limit).is_ok();
        if !fits(&freed) {
            return None;
        }
        // Each stage more while the ring stays within the bytes the staging took, and fits.
        let with_stages = |n: u32| {
            let tile = self.tile.with_stages(n).ok()?;
            let s = HopperSchedule { tile, ..freed };
            (fits(&s) && s.smem_bytes() <= self.smem_bytes()).then_some(s)
        };
        Some(
            (self.tile.stages() + 1..)
                .map_while(with_stages)
                .last()
                .unwrap_or(freed),
        )
    }

    /// Whether the ping-pong consumers share their staging tiles in turns (`_o`).
    pub fn shared_staging(&self) -> bool {
        matches!(
            self.consumers,
            Consumers::PingPong(PingPong {
                store: PingPongStore::Tma {
                    staging: Staging::Shared,
                    ..
                },
                ..
            })
        )
    }

    /// The staging's sub-tiles (`None` where D is stored from the registers).
    pub fn sub_tile(&self) -> Option<SubTile> {
        match self.store() {
            Store::Tma(s) => Some(s),
            Store::EpilogueWarps => Some(SubTile::Whole),
            Store::Direct(_) => None,
        }
    }

    /// Columns the epilogue stages at a time: `_e{E}`'s, else the tile's N.
    pub fn epilogue_cols(&self) -> u32 {
        match self.sub_tile() {
            Some(SubTile::Columns(c)) => c.cols(),
            _ => self.tile.n,
        }
    }

    /// Staging tiles per consumer (or per pair, shared): 1, or 2 with `_d2`.
    pub fn staging_buffers(&self) -> u32 {
        match self.sub_tile() {
            Some(SubTile::Columns(c)) => c.buffers().count(),
            _ => 1,
        }
    }

    /// Where tiles come from: `Some(take)` from a queue (`_q`, `_ql`).
    pub fn queue(&self) -> Option<Take> {
        match self.consumers {
            Consumers::PingPong(PingPong {
                source: TileSource::Queue(take),
                ..
            }) => Some(take),
            _ => None,
        }
    }

    /// Whether the last wave's rows are shared out (`_b`).
    pub fn row_split(&self) -> bool {
        matches!(
            self.consumers,
            Consumers::PingPong(PingPong {
                last_wave: LastWave::RowsSharedOut,
                ..
            })
        )
    }

    /// Whether the blocks take as few as walk as many waves (`_n`).
    pub fn even_waves(&self) -> bool {
        matches!(
            self.consumers,
            Consumers::Cooperative(Cooperative {
                waves: Waves::Evened,
                ..
            }) | Consumers::PingPong(PingPong {
                last_wave: LastWave::Evened,
                ..
            })
        )
    }

    /// Whether every tile's k-tiles are shared out over every cluster the device runs (`_k`).
    pub fn streamed(&self) -> bool {
        matches!(
            self.consumers,
            Consumers::Cooperative(Cooperative {
                waves: Waves::Streamed,
                ..
            })
        )
    }

    /// Where the stream-K region runs (cooperative consumers; ping-pong ones walk whole tiles).
    pub fn stream_k_region(&self) -> Option<StreamKRegion> {
        match self.consumers {
            Consumers::Cooperative(c) => Some(c.stream_k),
            Consumers::PingPong(_) => None,
        }
    }

    /// Waves of A prefetched into L2 at the start (`_a{N}`; 0 for none).
    pub fn prefetch_waves(&self) -> u32 {
        self.resident_b().map_or(0, ResidentB::prefetch_waves)
    }

    /// Rows a piece of the last wave (`_b`) is a multiple of: 8 stored from the registers (an
    /// accumulator row group), else [`STAGING_BLOCK_ROWS`] (the staging tile's TMA boxes).
    pub fn piece_granule(&self) -> u32 {
        match self.store() {
            Store::Direct(_) => 8,
            Store::Tma(_) | Store::EpilogueWarps => STAGING_BLOCK_ROWS,
        }
    }

    /// Whether the blocks of the cluster share the ring's stages (a multicast load writes a
    /// stage in each of them, so each frees it in all): along N (A shared), or along M with B
    /// in the ring. A resident B is loaded once, so along M the ring holds each block's own A.
    pub fn ring_shared(&self) -> bool {
        match self.cluster {
            Cluster::One => false,
            Cluster::AlongN(_) => true,
            Cluster::AlongM(_) => self.b() == BPlacement::Ring,
        }
    }

    /// Blocks that free each stage of a block's ring: the cluster's where they share it, else
    /// the block alone.
    pub fn ring_sharers(&self) -> u32 {
        if self.ring_shared() {
            self.cluster.size()
        } else {
            1
        }
    }

    /// Stages of B in shared memory: the ring's, or the resident k-tiles (`_r`).
    pub fn b_slots(&self) -> u32 {
        self.resident_b()
            .map_or(self.tile.stages, ResidentB::k_tiles)
    }

    /// Elements of one staging tile: a consumer's rows by the epilogue's columns.
    pub fn staging_tile_elems(&self) -> u32 {
        self.consumer_rows() * self.epilogue_cols()
    }

    /// Staging tiles of the output in shared memory: one per consumer, or one in all (`_o`);
    /// each [`HopperSchedule::staging_buffers`] times; none where D is stored from the
    /// registers (`_u`).
    pub fn staging_tiles(&self) -> u32 {
        if self.sub_tile().is_none() {
            return 0;
        }
        let tiles = if self.shared_staging() {
            1
        } else {
            self.consumers()
        };
        tiles * self.staging_buffers()
    }

    /// Dynamic shared memory for 16-bit elements: the rings (or resident B) and the output's
    /// staging.
    pub fn smem_bytes(&self) -> u32 {
        let Tile { m, n, k, stages } = self.tile;
        (stages * m + self.b_slots() * n) * k * 2
            + self.staging_tiles() * self.staging_tile_elems() * 2
    }

    /// Static shared memory: the ring's `full` and `empty` barriers, the resident B's barrier,
    /// and the tile queue's slots and barriers.
    pub fn static_smem_bytes(&self) -> u32 {
        let barrier = 8;
        let ring = 2 * barrier * self.tile.stages;
        let resident = if self.resident_b().is_some() {
            barrier
        } else {
            0
        };
        let queue = if self.queue().is_some() {
            QUEUE_SLOTS * 4 + 2 * QUEUE_SLOTS * barrier
        } else {
            0
        };
        ring + resident + queue
    }

    /// Shared memory a block takes: the static barriers, padded to the dynamic memory's
    /// alignment, and the dynamic memory.
    pub fn block_smem_bytes(&self) -> u32 {
        self.static_smem_bytes()
            .next_multiple_of(DYNAMIC_SMEM_ALIGN)
            + self.smem_bytes()
    }

    /// Whether a resident B may be narrower than the problem's N: each block then keeps the B
    /// of one column of tiles. That needs a walk that never moves a block to another column:
    /// along N one tile at a time (`_g1`, tile `t` in column `t % tiles_n`) over a grid that is
    /// a multiple of the columns ([`super::launch()`] sizes it so), by ping-pong consumers (whole
    /// tiles, never shared out by stream-K), one block per cluster and whole tiles (no `_b`).
    /// Each block then reads `1 / tiles_n` of B from L2 at its start instead of all of it.
    pub fn b_column_resident(&self) -> bool {
        self.resident_b().is_some()
            && matches!(self.consumers, Consumers::PingPong(_))
            && self.order == (Raster::Grouped { group: 1 })
            && self.cluster == Cluster::One
            && !self.row_split()
    }

    /// Why the program cannot run an `m x n x k` problem with this schedule, if it cannot: a
    /// resident B (`_r`) holds K within its k-tiles, and N within one tile unless each block
    /// stays on one column of tiles ([`HopperSchedule::b_column_resident`]); the Hilbert order's
    /// table holds at most [`MAX_HILBERT_TILES`] cluster tiles, each side at most 65535.
    pub fn takes(&self, m: u32, n: u32, k: u32) -> Result<(), String> {
        let (bn, bk) = (self.tile.n, self.tile.k);
        if let Some(r) = self.resident_b() {
            let deep = r.k_tiles() * bk;
            if k > deep || (n > bn && !self.b_column_resident()) {
                return Err(format!(
                    "{self} keeps B resident as one {bn} x {deep} tile; N = {n} and K = {k} do \
                     not fit it (a B wider than the tile stays resident a column of tiles per \
                     block with ping-pong consumers walking along N, _p_g1, and neither _b nor \
                     a cluster)"
                ));
            }
        }
        if self.order == Raster::Hilbert {
            let (km, kn) = self.kernel_dims(m, n);
            let (tm, tn) = self.cluster_tiles(km, kn);
            if tm > 0xFFFF || tn > 0xFFFF || u64::from(tm) * u64::from(tn) > MAX_HILBERT_TILES {
                return Err(format!(
                    "{self} walks its {tm} x {tn} cluster tiles in a Hilbert order, whose table \
                     holds at most {MAX_HILBERT_TILES} tiles and 65535 along a side; a grouped \
                     order (_g) walks any number"
                ));
            }
        }
        Ok(())
    }

    /// The grid of cluster tiles over the kernel's `m x n` output: `(along M, along N)`, as the
    /// kernel walks it.
    pub fn cluster_tiles(&self, m: u32, n: u32) -> (u32, u32) {
        let (x, y) = self.cluster.blocks();
        (
            m.div_ceil(self.tile.m).div_ceil(x),
            n.div_ceil(self.tile.n).div_ceil(y),
        )
    }

    /// The same schedule with the most stages, up to `cap`, that the program takes and whose
    /// shared memory fits `limit` bytes (a device's, at most [`SMEM_LIMIT`]); itself where none
    /// does.
    pub fn with_most_stages(self, cap: u32, limit: u32) -> HopperSchedule {
        let with = |stages: u32| -> Option<HopperSchedule> {
            let s = HopperSchedule {
                tile: self.tile.with_stages(stages).ok()?,
                ..self
            };
            s.check().ok()?;
            s.check_fit(limit).ok().map(|()| s)
        };
        (2..=cap.min(parts::MAX_STAGES))
            .rev()
            .find_map(with)
            .unwrap_or(self)
    }
}

/// The most cluster tiles a Hilbert order's table holds (4 MiB of `u32`s, made on the host in
/// milliseconds).
pub const MAX_HILBERT_TILES: u64 = 1 << 20;

#[cfg(test)]
mod tests;
