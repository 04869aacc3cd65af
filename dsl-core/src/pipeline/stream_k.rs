//! Stream-K: a persistent walk that deals out k-tiles rather than whole tiles, so that a problem
//! with fewer tiles than the device has SMs (or a last wave nearly empty) still keeps every SM
//! busy (Osama et al., "Stream-K", 2023; CUTLASS's `PersistentTileSchedulerSm90StreamK`).
//!
//! The output tiles are numbered in the raster's order. The first `sk_tiles` of them are the
//! stream-K region: their `sk_tiles * k_tiles` k-tile iterations are cut into `sk_blocks`
//! contiguous shares, one per cluster of the grid's first `sk_blocks` clusters (shares differ by
//! at most one iteration). The remaining tiles are data-parallel: whole tiles dealt round-robin
//! to every cluster, starting with those that have no share, so that each cluster does the same
//! number of them.
//!
//! A share cut at tile boundaries gives a cluster's work units, [`StreamKScheduler`]'s walk:
//! - a **whole** unit covers all of a tile's k-tiles: the cluster writes the tile;
//! - an **end** unit covers a tile's last k-tiles but not all: the cluster that owns it adds its
//!   peers' partial sums to its own and writes the tile ([`StreamKScheduler::peers`]: the
//!   clusters whose shares cover the tile's earlier k-tiles);
//! - a **start** unit covers a share's piece of a tile that stops short of the tile's end (its
//!   first k-tiles, or a middle run of them): the cluster stores its partial sums for the end's
//!   owner and signals them.
//!
//! A share walks its last piece first, then the rest in order: every cluster's k-tiles then rise
//! together from the start of the region (a cluster's piece of the next tile from k-tile 0, then
//! its piece of the first tile from where the share began), so that at any time the clusters read
//! k-tiles within a share's shortfall of a tile (`k_tiles` minus the share) of each other, as whole
//! tiles in step do. A share's piece that stops short of a tile's end is thus always the first unit
//! of its cluster's share, so each cluster stores at most one partial (its slot can be its own
//! index), and an end waits only for starts, which come right after work that waits for nothing
//! (whole tiles, or none): with every cluster resident, the waits cannot deadlock. Walked in plain
//! order, shares start at every k, and the tiles that read one panel of an operand read it at up to
//! `k_tiles / shortfall` k-tiles at once: the L2 must hold whole panels, and where it cannot the
//! region runs from DRAM (on the H200 the last wave of 4096^3 on 128x256 tiles shared out that way
//! ran 6% slower than whole tiles, where it is 3% less work). In step it still ran 5% slower there:
//! not from DRAM (ncu at 6144^3 reads 1% more than whole tiles do) but at a clock 4% lower, with
//! 60% more L2 traffic; [`SHARE_FIXUP_K_TILES`] prices that.
//!
//! Where the region runs is [`StreamKRegion`]'s: first (the first `sk_tiles` tiles, before the
//! whole ones) or last (the last `sk_tiles`, after them). On the H200, ncu at 6144^3 read 60%
//! more L2 traffic for the same DRAM bytes, and a lower clock, with the region first than with
//! whole tiles only; clusters leaving the region at different times and walking their whole
//! tiles out of step is the reading that the region last tested: in one lever run it came
//! within 2.5% of the region first either way on the squares (4096^3 to 8192^3, both types),
//! not the gain that reading predicts.
//!
//! The partials' storage and the signals are the program's (see `kernels::hopper`); this module
//! owns the walk. [`StreamKSplit::choose`] is the host's choice of the split; [`stream_k_walk`]
//! the host model of a cluster's units, for tests.
//!
//! ```
//! use dsl_core::pipeline::{stream_k_walk, StreamKRegion, StreamKSplit, TailReuse};
//! // 48 tiles of 64 k-tiles over 132 SMs: every tile shared out, 23 or 24 k-tiles per SM.
//! let split = StreamKSplit::choose(48, 64, 132, TailReuse::InL2);
//! assert_eq!(split, StreamKSplit { sk_tiles: 48, sk_blocks: 132 });
//! // Cluster 2's share is k-tiles 48..64 of tile 0 and 0..8 of tile 1: tile 1's first.
//! let units = stream_k_walk(48, 64, split, (2, 132), StreamKRegion::First);
//! assert_eq!((units[0].tile, units[0].k_begin, units[0].k_end), (1, 0, 8)); // a start
//! assert_eq!((units[1].tile, units[1].k_begin, units[1].k_end), (0, 48, 64)); // tile 0's end
//! ```

use super::cluster::ClusterShape;
use super::scheduler::{cluster_index, raster_tile, Raster};
use crate::kernel::{select, GlobalPtr, Var};

/// The fewest k-tiles [`StreamKSplit::choose`] gives a share: fewer would make a tile's end wait
/// for (and add up) many small partials.
pub const MIN_SHARE_K_TILES: u32 = 8;

/// A work unit's fixed cost in k-tiles (filling the ring, the epilogue) in
/// [`StreamKSplit::choose`]'s estimate; a tile split between clusters pays it twice more (the
/// start's partial store, the end's loads of it).
pub const UNIT_OVERHEAD_K_TILES: u32 = 2;

/// [`StreamKSplit::choose`] shares every tile out where there are at most this fraction of the
/// clusters' tiles (as `numerator / denominator`): on the H200 sharing out 96 tiles over 132 SMs
/// was slower than walking them whole (a tile's end adds its peers' partials after its own
/// share), 80 and fewer faster.
pub const SHARE_ALL_BELOW: (u32, u32) = (5, 8);

/// Past a wave, [`StreamKSplit::choose`] shares out the last partial wave's tiles, where their
/// operands do not fit in L2 together ([`TailReuse::PastL2`]), only where the estimate gains
/// this much over the whole tiles: shares at different k of tiles that read the same rows of an
/// operand read them at different times, so from DRAM more often than whole tiles in step do
/// (on the H200: a 128x192-tile 512 x 10240 x 8192 product, estimated 16% faster shared out,
/// ran 17% slower; a 128x256-tile one, estimated 37% faster, ran 22% faster). Measured with
/// shares walked in plain order, each cluster at its own k; walked in step (see the module's
/// docs) the 128x256-tile one ran 25% faster (0.837 of cuBLAS against 0.668 whole), and the
/// 128x192-tile one, which this rejects, has not run again.
pub const MIN_TAIL_GAIN: f64 = 0.75;

/// Where the last partial wave's operands fit in L2 ([`TailReuse::InL2`]), a shared k-tile's
/// cost in [`StreamKSplit::choose`]'s estimate, in whole-tile k-tiles: walked in step, the
/// shares run as fast as a whole tile's k-tiles, and what the split costs is a fixed sum
/// ([`SHARE_FIXUP_K_TILES`]).
///
/// Fitted with it on the H200 to 128x256 tiles (three device runs, results/): the last wave
/// shared out ran faster at 8192^3 (68 of 132 tiles shared, 66 k-tiles of 128 each: +2.6% to
/// +2.8% in both types), and slower at 6144^3 (96, 70 of 96: -1.3% to -3.7% in five of seven
/// samples, +0.2% and +1.4% in two), 4096^3 (116, 57 of 64: -4.8% to -5.9%), 2048 x 28672 x
/// 4096 (76, 37 of 64: -1.8%), 8192 x 6144 x 4096 (84, 41 of 64: -2.7%) and 2048 x 10240 x
/// 8192 (112, 109 of 128: -0.6%).
pub const SHARED_SLOWDOWN: f64 = 1.0;

/// What sharing out the last wave costs a cluster in [`StreamKSplit::choose`]'s estimate, in
/// k-tiles (fitted with [`SHARED_SLOWDOWN`]): with 128x256 tiles about 22 us, far more than the
/// traffic of a partial tile (128 KB written, read back from L2). Part of it is likely the
/// clock: a last wave on fewer SMs draws less power, and a power-capped H200 runs it faster.
/// A tail is shared out where `share * SHARED_SLOWDOWN + SHARE_FIXUP_K_TILES` k-tiles beat a
/// whole tile's.
pub const SHARE_FIXUP_K_TILES: f64 = 32.0;

/// Whether the operands the last partial wave's tiles read fit in L2 together, which decides
/// how [`StreamKSplit::choose`] prices sharing them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TailReuse {
    /// They fit: the shares find them in L2 ([`SHARED_SLOWDOWN`], [`SHARE_FIXUP_K_TILES`]).
    InL2,
    /// They do not, or the caller cannot tell ([`MIN_TAIL_GAIN`]).
    PastL2,
}

/// Where the stream-K region runs in each cluster's walk, and which tiles it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StreamKRegion {
    /// Before the whole tiles: the region is the first `sk_tiles` tiles in the walk's order.
    #[default]
    First,
    /// After them: the region is the last `sk_tiles`, so that every cluster's whole tiles start
    /// together (a region first may end at different times in different clusters, which then
    /// walk their whole tiles out of step), and the region starts when they are done.
    Last,
}

impl StreamKRegion {
    /// The first tile of the region, and of the whole tiles, in the walk's order.
    fn bases(self, tiles: u64, sk_tiles: u64) -> (u64, u64) {
        match self {
            StreamKRegion::First => (0, sk_tiles),
            StreamKRegion::Last => (tiles - sk_tiles, 0),
        }
    }
}

/// The host's split of a problem between stream-K shares and whole tiles (see the module's
/// docs). `sk_tiles == 0` is the data-parallel walk of every tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamKSplit {
    /// Tiles, the first in the walk's order, whose k-tiles are shared out.
    pub sk_tiles: u32,
    /// Clusters, the first of the grid, that share them (at most the grid's clusters, and no
    /// more than the region's k-tiles).
    pub sk_blocks: u32,
}

impl StreamKSplit {
    /// Every tile whole, dealt round-robin.
    pub const DATA_PARALLEL: StreamKSplit = StreamKSplit {
        sk_tiles: 0,
        sk_blocks: 0,
    };

    /// The split for `tiles` tiles of `k_tiles` k-tiles walked by `clusters` resident clusters:
    /// every tile shared out where the tiles are few ([`SHARE_ALL_BELOW`]); past a wave, the last
    /// partial wave's tiles shared out where the estimate (in k-tiles, with
    /// [`UNIT_OVERHEAD_K_TILES`] per unit) is faster than whole tiles, priced as `tail` says
    /// ([`TailReuse`]); otherwise whole tiles. A share has at least [`MIN_SHARE_K_TILES`]
    /// k-tiles.
    ///
    /// ```
    /// use dsl_core::pipeline::{StreamKSplit, TailReuse::{InL2, PastL2}};
    /// // 512 tiles on 132 SMs: 3.9 waves, whole tiles.
    /// assert_eq!(StreamKSplit::choose(512, 64, 132, InL2), StreamKSplit::DATA_PARALLEL);
    /// // 160 tiles of 128 k-tiles: 1.2 waves; the 28 of the second shared out.
    /// assert_eq!(StreamKSplit::choose(160, 128, 132, PastL2).sk_tiles, 28);
    /// // 2048 tiles of 128 k-tiles (8192^3 on 128x256): the last 68 shared out if in L2;
    /// // 1792 of 64 (2048 x 28672 x 4096), whose last 76 gain too little: whole.
    /// // 1152 of 96 (6144^3): whole.
    /// assert_eq!(StreamKSplit::choose(1152, 96, 132, InL2).sk_tiles, 0);
    /// assert_eq!(StreamKSplit::choose(2048, 128, 132, InL2).sk_tiles, 68);
    /// assert_eq!(StreamKSplit::choose(2048, 128, 132, PastL2).sk_tiles, 0);
    /// assert_eq!(StreamKSplit::choose(1792, 64, 132, InL2).sk_tiles, 0);
    /// // 96 tiles: whole; 48: shared out over every SM.
    /// assert_eq!(StreamKSplit::choose(96, 64, 132, InL2), StreamKSplit::DATA_PARALLEL);
    /// assert_eq!(StreamKSplit::choose(48, 64, 132, InL2).sk_blocks, 132);
    /// ```
    pub fn choose(tiles: u32, k_tiles: u32, clusters: u32, tail: TailReuse) -> StreamKSplit {
        let (tiles, kt, grid) = (
            u64::from(tiles),
            u64::from(k_tiles.max(1)),
            u64::from(clusters.max(1)),
        );
        let e = u64::from(UNIT_OVERHEAD_K_TILES);
        let share_out = |sk_tiles: u64| {
            let blocks = grid
                .min(sk_tiles * kt / u64::from(MIN_SHARE_K_TILES))
                .max(1);
            let split = StreamKSplit {
                sk_tiles: sk_tiles as u32,
                sk_blocks: blocks as u32,
            };
            (split, (sk_tiles * kt).div_ceil(blocks) + 3 * e)
        };
        if tiles == 0 || tiles > u64::from(u32::MAX) {
            return StreamKSplit::DATA_PARALLEL;
        }
        if Self::few_enough_to_share_all(tiles, grid) {
            let (split, time) = share_out(tiles);
            return if time < kt + e {
                split
            } else {
                StreamKSplit::DATA_PARALLEL
            };
        }
        let full = tiles / grid;
        let rest = tiles - full * grid;
        if full == 0 || rest == 0 {
            return StreamKSplit::DATA_PARALLEL;
        }
        let whole = ((full + 1) * (kt + e)) as f64;
        let (split, time) = share_out(rest);
        let faster = match tail {
            TailReuse::PastL2 => ((full * (kt + e) + time) as f64) < whole * MIN_TAIL_GAIN,
            TailReuse::InL2 => {
                let share = (time - 3 * e) as f64;
                share * SHARED_SLOWDOWN + SHARE_FIXUP_K_TILES < (kt + e) as f64
            }
        };
        if faster {
            split
        } else {
            StreamKSplit::DATA_PARALLEL
        }
    }

    /// Every one of `tiles` tiles of `k_tiles` k-tiles shared out over `clusters` clusters
    /// (stream-K over the whole problem): as many shares as clusters, each of at least
    /// [`MIN_SHARE_K_TILES`] k-tiles where there are enough (one share otherwise); no tile is
    /// walked whole but as a share's piece. Data-parallel for no tiles.
    ///
    /// ```
    /// use dsl_core::pipeline::StreamKSplit;
    /// // 56 tiles of 320 k-tiles over 132 SMs: about 136 k-tiles each.
    /// assert_eq!(StreamKSplit::every_tile(56, 320, 132), StreamKSplit { sk_tiles: 56, sk_blocks: 132 });
    /// // 230 tiles, 1.7 waves of whole tiles: every SM streams 1.7 tiles' k-tiles.
    /// assert_eq!(StreamKSplit::every_tile(230, 216, 132).sk_blocks, 132);
    /// // 2 tiles of 4 k-tiles: one share of 8.
    /// assert_eq!(StreamKSplit::every_tile(2, 4, 132), StreamKSplit { sk_tiles: 2, sk_blocks: 1 });
    /// assert_eq!(StreamKSplit::every_tile(0, 64, 132), StreamKSplit::DATA_PARALLEL);
    /// ```
    pub fn every_tile(tiles: u32, k_tiles: u32, clusters: u32) -> StreamKSplit {
        if tiles == 0 {
            return StreamKSplit::DATA_PARALLEL;
        }
        let iters = u64::from(tiles) * u64::from(k_tiles.max(1));
        let blocks = u64::from(clusters.max(1)).min(iters / u64::from(MIN_SHARE_K_TILES));
        StreamKSplit {
            sk_tiles: tiles,
            sk_blocks: blocks.max(1) as u32,
        }
    }

    /// Whether `tiles` tiles are few enough for [`StreamKSplit::choose`] to share every one of
    /// them out over `clusters` clusters ([`SHARE_ALL_BELOW`]).
    pub fn few_enough_to_share_all(tiles: u64, clusters: u64) -> bool {
        let (num, den) = SHARE_ALL_BELOW;
        tiles.saturating_mul(u64::from(den)) <= clusters.saturating_mul(u64::from(num))
    }

    /// The first iteration of `cluster`'s share and the share's length (0 past `sk_blocks`).
    fn share(self, k_tiles: u32, cluster: u32) -> (u64, u64) {
        if cluster >= self.sk_blocks {
            return (0, 0);
        }
        let iters = u64::from(self.sk_tiles) * u64::from(k_tiles);
        let blocks = u64::from(self.sk_blocks);
        let (per, rem) = (iters / blocks, iters % blocks);
        let c = u64::from(cluster);
        (c * per + c.min(rem), per + u64::from(c < rem))
    }

    /// The cluster whose share holds iteration `it` of the stream-K region.
    pub fn owner(self, k_tiles: u32, it: u64) -> u32 {
        let iters = u64::from(self.sk_tiles) * u64::from(k_tiles);
        let blocks = u64::from(self.sk_blocks.max(1));
        let (per, rem) = ((iters / blocks).max(1), iters % blocks);
        let long = rem * (per + 1);
        (if it < long {
            it / (per + 1)
        } else {
            rem + (it - long) / per
        }) as u32
    }
}

/// One unit of a cluster's stream-K walk: a tile (in the walk's order) and its k-tiles
/// `k_begin..k_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamKUnit {
    /// The tile's index in the walk's order.
    pub tile: u32,
    /// Its first k-tile in this unit.
    pub k_begin: u32,
    /// One past its last.
    pub k_end: u32,
}

/// The host model of [`StreamKScheduler`]: the units cluster `cluster` of `clusters` walks, in
/// order, for `tiles` tiles of `k_tiles` k-tiles split as `split`, the region where `region`
/// says.
pub fn stream_k_walk(
    tiles: u32,
    k_tiles: u32,
    split: StreamKSplit,
    (cluster, clusters): (u32, u32),
    region: StreamKRegion,
) -> Vec<StreamKUnit> {
    let kt = u64::from(k_tiles.max(1));
    let (start, len) = split.share(k_tiles, cluster);
    let dp_tiles = u64::from(tiles.saturating_sub(split.sk_tiles));
    let (sk_base, dp_base) = region.bases(u64::from(tiles), u64::from(split.sk_tiles));
    let mut share = Vec::new();
    let end = start + len;
    // The share's last piece first (from the start of its tile, or of the share), then the
    // rest in order.
    let last = start.max(end.saturating_sub(1) / kt * kt);
    for (mut it, stop) in [(last, end), (start, last)] {
        while it < stop {
            let tile = it / kt;
            let k_begin = it - tile * kt;
            let k_end = kt.min(k_begin + (stop - it));
            share.push(StreamKUnit {
                tile: (sk_base + tile) as u32,
                k_begin: k_begin as u32,
                k_end: k_end as u32,
            });
            it += k_end - k_begin;
        }
    }
    let grid = u64::from(clusters.max(1));
    let mut whole = Vec::new();
    let mut d = (u64::from(cluster) + grid - u64::from(split.sk_blocks) % grid) % grid;
    while d < dp_tiles {
        whole.push(StreamKUnit {
            tile: (dp_base + d) as u32,
            k_begin: 0,
            k_end: k_tiles,
        });
        d += grid;
    }
    let (mut walk, then) = match region {
        StreamKRegion::First => (share, whole),
        StreamKRegion::Last => (whole, share),
    };
    walk.extend(then);
    walk
}

/// The device walk of this block's cluster over its stream-K units (see the module's docs):
/// `while s.valid() { ...; s.next_unit() }`. Registers hold the unit: its tile and `(m, n)` in
/// cluster tiles, its k-tiles, and where the walk is.
#[derive(Debug, Clone, Copy)]
pub struct StreamKScheduler {
    tiles_m: Var<u32>,
    tiles_n: Var<u32>,
    k_tiles: Var<u32>,
    sk_tiles: Var<u32>,
    /// Iterations per share, and how many shares have one more.
    per: Var<u32>,
    rem: Var<u32>,
    it: Var<u32>,
    end: Var<u32>,
    /// The share's start and where its last piece begins: the walk takes `last..` first, then
    /// `start..last` (`second` once it has).
    start: Var<u32>,
    last: Var<u32>,
    second: Var<bool>,
    dp: Var<u32>,
    dp_total: Var<u32>,
    clusters: Var<u32>,
    cluster_id: Var<u32>,
    in_sk: Var<bool>,
    tile: Var<u32>,
    m: Var<u32>,
    n: Var<u32>,
    k_begin: Var<u32>,
    k_end: Var<u32>,
    raster: Raster,
    cluster: ClusterShape,
    order: Option<GlobalPtr<u32>>,
    region: StreamKRegion,
}

impl StreamKScheduler {
    /// The walk over `tiles_m x tiles_n` cluster tiles of `k_tiles` k-tiles each, `sk_tiles`
    /// of them shared out between the grid's first `sk_blocks` clusters (the host's
    /// [`StreamKSplit`]: `sk_blocks` at most the grid's clusters, and at most the region's
    /// k-tiles), the tiles numbered in `raster` order (`order` is the Hilbert table, as for
    /// [`super::PersistentScheduler`]), the region where `region` says.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tiles_m: Var<u32>,
        tiles_n: Var<u32>,
        k_tiles: Var<u32>,
        sk_tiles: Var<u32>,
        sk_blocks: Var<u32>,
        raster: Raster,
        cluster: ClusterShape,
        order: Option<GlobalPtr<u32>>,
        region: StreamKRegion,
    ) -> Self {
        let (id, clusters) = cluster_index(cluster);
        let iters = sk_tiles * k_tiles;
        let blocks = sk_blocks.max(1u32);
        let per = iters / blocks;
        let rem = iters - per * blocks;
        let sharing = id.lt(sk_blocks);
        let len = per + select(id.lt(rem), 1u32, 0u32);
        let start = select(sharing, id * per + id.min(rem), 0u32);
        let end = select(sharing, start + len, 0u32);
        // The start of the tile that holds the share's last iteration, within the share.
        let kt = k_tiles.max(1u32);
        let last = start.max(select(end.gt(0u32), (end - 1u32) / kt * kt, 0u32));
        let mut s = StreamKScheduler {
            tiles_m,
            tiles_n,
            k_tiles,
            sk_tiles,
            per,
            rem,
            it: last.fresh(),
            end: end.fresh(),
            start,
            last,
            second: Var::konst(false).fresh(),
            dp: ((id + clusters - sk_blocks) % clusters).fresh(),
            dp_total: tiles_m * tiles_n - sk_tiles,
            clusters,
            cluster_id: id,
            in_sk: Var::konst(false).fresh(),
            tile: Var::konst(0u32).fresh(),
            m: Var::konst(0u32).fresh(),
            n: Var::konst(0u32).fresh(),
            k_begin: Var::konst(0u32).fresh(),
            k_end: Var::konst(0u32).fresh(),
            raster,
            cluster,
            order,
            region,
        };
        s.locate();
        s
    }

    /// Whether there is a current unit (the walk is not over).
    pub fn valid(&self) -> Var<bool> {
        self.in_sk | self.dp.lt(self.dp_total)
    }

    /// The current unit's cluster tile, M index.
    pub fn m(&self) -> Var<u32> {
        self.m
    }

    /// The current unit's cluster tile, N index.
    pub fn n(&self) -> Var<u32> {
        self.n
    }

    /// The current unit's k-tiles `(begin, end)`.
    pub fn k_tiles(&self) -> (Var<u32>, Var<u32>) {
        (self.k_begin, self.k_end)
    }

    /// The cluster's shape.
    pub fn cluster(&self) -> ClusterShape {
        self.cluster
    }

    /// This block's cluster's index in the grid: the slot of the one partial it may store.
    pub fn cluster_id(&self) -> Var<u32> {
        self.cluster_id
    }

    /// The unit covers its tile's every k-tile.
    pub fn whole(&self) -> Var<bool> {
        self.k_begin.eq_(0u32) & self.k_end.eq_(self.k_tiles)
    }

    /// The unit ends its tile's k-tiles: this cluster writes the tile (a whole unit, or an end
    /// that first adds its [`peers`](Self::peers)' partials). Otherwise it is a start, which
    /// stores its partial for the end's owner.
    pub fn writes_tile(&self) -> Var<bool> {
        self.k_end.eq_(self.k_tiles)
    }

    /// For an end unit: the clusters `(first, end)` whose partials of the tile its owner adds,
    /// in order (the owners of the tile's earlier k-tiles). Empty for a whole unit.
    pub fn peers(&self) -> (Var<u32>, Var<u32>) {
        // The tile's index in the region.
        let region_tile = match self.region {
            StreamKRegion::First => self.tile,
            StreamKRegion::Last => self.tile - self.dp_total,
        };
        let first_iteration = region_tile * self.k_tiles;
        let first = select(self.whole(), self.cluster_id, self.owner(first_iteration));
        (first, self.cluster_id)
    }

    /// Whether the cluster's walk ends with the current unit, a whole tile: no whole tile
    /// follows it, nor (with the region last) a share of the stream-K region. False on a
    /// stream-K unit. Every role that walks the same tiles sees the same value.
    pub fn ends_after(&self) -> Var<bool> {
        let no_whole_tile_follows = (self.dp + self.clusters).ge(self.dp_total);
        let ends = !self.in_sk & no_whole_tile_follows;
        match self.region {
            StreamKRegion::First => ends,
            StreamKRegion::Last => ends & self.it.ge(self.end),
        }
    }

    /// Steps to the cluster's next unit.
    pub fn next_unit(&mut self) {
        let done = self.k_end - self.k_begin;
        let it = self.it + done;
        // The share's last piece done: the rest of the share, from its start.
        let turn = self.in_sk & it.ge(self.end) & !self.second;
        self.it
            .set(select(self.in_sk, select(turn, self.start, it), self.it));
        self.end.set(select(turn, self.last, self.end));
        self.second.set(self.second | turn);
        self.dp
            .set(select(self.in_sk, self.dp, self.dp + self.clusters));
        self.locate();
    }

    /// Makes whole tile `dp` (its index among the whole tiles, in the raster's order) the
    /// current unit, for a walk whose tiles are handed out at run time (a queue fed by an
    /// atomic counter) rather than every `clusters`-th: `valid` is false from `dp` = the whole
    /// tiles' count on. Only for a walk without a stream-K region (`sk_tiles` 0).
    pub fn jump_to(&mut self, dp: Var<u32>) {
        self.dp.set(dp);
        self.locate();
    }

    /// The cluster whose share holds stream-K iteration `it` ([`StreamKSplit::owner`]).
    fn owner(&self, it: Var<u32>) -> Var<u32> {
        let per = self.per.max(1u32);
        let long = self.rem * (per + 1u32);
        select(it.lt(long), it / (per + 1u32), self.rem + (it - long) / per)
    }

    /// Writes the current unit from `it` (a share's iteration) or `dp` (a whole tile).
    fn locate(&mut self) {
        let in_sk = match self.region {
            StreamKRegion::First => self.it.lt(self.end),
            // The share once the whole tiles are done.
            StreamKRegion::Last => self.dp.ge(self.dp_total) & self.it.lt(self.end),
        };
        let kt = self.k_tiles;
        let sk_tile = self.it / kt;
        let sk_begin = self.it - sk_tile * kt;
        let sk_end = kt.min(sk_begin + (self.end - self.it));
        let tile = match self.region {
            StreamKRegion::First => select(in_sk, sk_tile, self.sk_tiles + self.dp),
            StreamKRegion::Last => select(in_sk, self.dp_total + sk_tile, self.dp),
        };
        self.in_sk.set(in_sk);
        self.tile.set(tile);
        self.k_begin.set(select(in_sk, sk_begin, 0u32));
        self.k_end.set(select(in_sk, sk_end, kt));
        let total = self.tiles_m * self.tiles_n;
        let (m, n) = raster_tile(
            self.raster,
            self.tiles_m,
            self.tiles_n,
            total,
            self.order,
            tile,
        );
        self.m.set(m);
        self.n.set(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every iteration of every tile is walked once; a start (a piece short of its tile's end)
    /// is the first unit of its cluster's share (its first unit with the region first, its
    /// first after the whole tiles with the region last); each end's peers are exactly the
    /// clusters with a start of its tile, in order; and in the stream-K region every cluster's
    /// k-tiles rise together: at each step of the walk (one k-tile each, in lockstep) they lie
    /// within a share's shortfall of a tile of each other. Both places of the region.
    fn check(tiles: u32, kt: u32, clusters: u32) {
        let split = StreamKSplit::choose(tiles, kt, clusters, TailReuse::PastL2);
        check_split(tiles, kt, clusters, split);
    }

    fn check_split(tiles: u32, kt: u32, clusters: u32, split: StreamKSplit) {
        for region in [StreamKRegion::First, StreamKRegion::Last] {
            check_region(tiles, kt, clusters, split, region);
        }
    }

    fn check_region(
        tiles: u32,
        kt: u32,
        clusters: u32,
        split: StreamKSplit,
        region: StreamKRegion,
    ) {
        assert!(
            split.sk_tiles <= tiles && split.sk_blocks <= clusters,
            "{split:?}"
        );
        let (base, _) = region.bases(u64::from(tiles), u64::from(split.sk_tiles));
        let base = base as u32;
        // The tile's index in the region, if it is in the region.
        let in_region = |t: u32| (base..base + split.sk_tiles).contains(&t).then(|| t - base);
        let mut seen = vec![0u32; (tiles * kt) as usize];
        let mut starts = vec![Vec::new(); tiles as usize];
        let mut ends = vec![None; tiles as usize];
        let mut ks: Vec<Vec<u32>> = Vec::new();
        for c in 0..clusters {
            let units = stream_k_walk(tiles, kt, split, (c, clusters), region);
            let first_of_share = units.iter().position(|u| in_region(u.tile).is_some());
            // The region last, with as many whole tiles for every cluster: every share starts
            // after the same number of them, so the region starts together.
            let dp_tiles = tiles - split.sk_tiles;
            if region == StreamKRegion::Last && dp_tiles.is_multiple_of(clusters) {
                if let Some(i) = first_of_share {
                    assert_eq!(i as u32, dp_tiles / clusters, "cluster {c}");
                }
            }
            let mut k_steps = Vec::new();
            for (i, u) in units.into_iter().enumerate() {
                assert!(u.k_begin < u.k_end && u.k_end <= kt, "{u:?}");
                for k in u.k_begin..u.k_end {
                    seen[(u.tile * kt + k) as usize] += 1;
                    if in_region(u.tile).is_some() {
                        k_steps.push(k);
                    }
                }
                if u.k_end < kt {
                    assert_eq!(
                        Some(i),
                        first_of_share,
                        "{region:?}, cluster {c}: a start that is not its share's first unit"
                    );
                    starts[u.tile as usize].push(c);
                } else if u.k_begin > 0 {
                    let r = in_region(u.tile).expect("an end in the region");
                    let it = u64::from(r) * u64::from(kt);
                    assert_eq!(split.owner(kt, it + u64::from(u.k_begin)), c);
                    let first = split.owner(kt, it);
                    ends[u.tile as usize] = Some((first..c).collect::<Vec<_>>());
                }
            }
            ks.push(k_steps);
        }
        assert!(seen.iter().all(|&s| s == 1), "{tiles}x{kt} on {clusters}");
        for t in 0..tiles as usize {
            match &ends[t] {
                Some(peers) => assert_eq!(peers, &starts[t], "tile {t}"),
                None => assert!(starts[t].is_empty(), "tile {t}: starts without an end"),
            }
        }
        // Shares shorter than a tile: the clusters' k-tiles at each step differ by at most the
        // shortfall.
        let iters = u64::from(split.sk_tiles) * u64::from(kt);
        if split.sk_blocks > 0 && iters / u64::from(split.sk_blocks) < u64::from(kt) {
            let share = (iters / u64::from(split.sk_blocks)) as u32;
            let steps = ks.iter().map(Vec::len).max().unwrap_or(0);
            for step in 0..steps {
                let at: Vec<u32> = ks.iter().filter_map(|k| k.get(step).copied()).collect();
                let (lo, hi) = (at.iter().min().unwrap(), at.iter().max().unwrap());
                assert!(
                    hi - lo <= kt - share,
                    "{tiles}x{kt} on {clusters}, step {step}: k-tiles {lo}..={hi}"
                );
            }
        }
    }

    #[test]
    fn every_k_tile_is_walked_once_and_ends_know_their_starts() {
        for (tiles, kt, clusters) in [
            (48, 64, 132),
            (1, 64, 132),
            (1, 4, 132),
            (96, 64, 132),
            (216, 128, 132),
            (133, 64, 132),
            (7, 1, 5),
            (512, 64, 132),
            (300, 17, 66),
            (5, 1000, 3),
        ] {
            check(tiles, kt, clusters);
        }
        // The last partial waves of 4096^3, 6144^3 and 8192^3 on 128x256 tiles shared out
        // (116, 96 and 68 of 132), and every tile of a decode product (80 of 128 k-tiles).
        for (tiles, kt, sk_tiles) in [
            (512, 64, 116),
            (1152, 96, 96),
            (2048, 128, 68),
            (80, 128, 80),
        ] {
            let split = StreamKSplit {
                sk_tiles,
                sk_blocks: 132,
            };
            check_split(tiles, kt, 132, split);
        }
    }

    /// Stream-K over every tile walks every k-tile once with the hand-over's order, on as many
    /// clusters as it has shares (the launch's grid), whatever the tiles' count against the
    /// clusters: few tiles of a long K, a wave and a part, many waves, fewer k-tiles than
    /// clusters. Every cluster has a share, of at least the smallest one where there are
    /// k-tiles enough, and the shares differ by at most one k-tile.
    #[test]
    fn every_tile_shared_out_walks_each_k_tile_once() {
        for (tiles, kt, clusters) in [
            (56, 320, 132),
            (32, 200, 66),
            (230, 216, 132),
            (1, 4, 132),
            (3, 5, 132),
            (133, 64, 132),
            (2048, 128, 132),
            (508, 71, 132),
            (7, 1, 5),
            (14, 320, 33),
        ] {
            let split = StreamKSplit::every_tile(tiles, kt, clusters);
            assert_eq!(split.sk_tiles, tiles);
            let iters = u64::from(tiles) * u64::from(kt);
            let blocks = u64::from(split.sk_blocks);
            assert!(blocks >= 1 && blocks <= u64::from(clusters));
            if iters >= u64::from(MIN_SHARE_K_TILES) {
                assert!(iters / blocks >= u64::from(MIN_SHARE_K_TILES), "{split:?}");
            }
            let shares: Vec<u64> = (0..split.sk_blocks).map(|c| split.share(kt, c).1).collect();
            let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(
                hi - lo <= 1 && *lo > 0,
                "{tiles}x{kt} on {clusters}: {lo}..{hi}"
            );
            check_region(tiles, kt, split.sk_blocks, split, StreamKRegion::First);
        }
    }

    #[test]
    fn the_split_follows_the_waves() {
        // Full waves: whole tiles.
        assert_eq!(
            StreamKSplit::choose(264, 64, 132, TailReuse::PastL2),
            StreamKSplit::DATA_PARALLEL
        );
        // Few tiles with a long K: shared out over every SM.
        let s = StreamKSplit::choose(16, 128, 132, TailReuse::PastL2);
        assert_eq!((s.sk_tiles, s.sk_blocks), (16, 132));
        // Up to 5/8 of the SMs' tiles shared out, more walked whole.
        assert_eq!(
            StreamKSplit::choose(82, 128, 132, TailReuse::PastL2).sk_tiles,
            82
        );
        assert_eq!(
            StreamKSplit::choose(83, 128, 132, TailReuse::PastL2),
            StreamKSplit::DATA_PARALLEL
        );
        // Few k-tiles: a share keeps at least MIN_SHARE_K_TILES.
        let s = StreamKSplit::choose(4, 16, 132, TailReuse::PastL2);
        assert_eq!((s.sk_tiles, s.sk_blocks), (4, 8));
        // Nothing to share: one k-tile per tile is best walked whole.
        assert_eq!(
            StreamKSplit::choose(8, 1, 132, TailReuse::PastL2),
            StreamKSplit::DATA_PARALLEL
        );
        // The shapes SHARED_SLOWDOWN was fitted to, on 128x256 tiles, their last waves in
        // L2: shared out at 8192^3 (68 of 132 tiles), whole at 6144^3 (96), 4096^3 (116),
        // 8192 x 6144 x 4096 (84), 2048 x 28672 x 4096 (76) and 2048 x 10240 x 8192 (112).
        use TailReuse::InL2;
        assert_eq!(StreamKSplit::choose(2048, 128, 132, InL2).sk_tiles, 68);
        for (tiles, kt) in [(1152, 96), (1792, 64), (640, 128), (512, 64), (1536, 64)] {
            assert_eq!(
                StreamKSplit::choose(tiles, kt, 132, InL2),
                StreamKSplit::DATA_PARALLEL,
                "{tiles} tiles of {kt} k-tiles"
            );
        }
        // 448 tiles of 64 (512 x 28672 x 4096 on 128x256): the last 52 shared out.
        assert_eq!(StreamKSplit::choose(448, 64, 132, InL2).sk_tiles, 52);
        // 1.6 waves (the H200's 512 x 10240 x 8192 on 128x192 tiles): whole tiles.
        assert_eq!(
            StreamKSplit::choose(216, 128, 132, TailReuse::PastL2),
            StreamKSplit::DATA_PARALLEL
        );
    }
}
