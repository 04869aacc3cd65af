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
//! - a **head** unit covers a tile's first k-tiles but not all: the cluster that owns it later
//!   adds its peers' partial sums to its own and writes the tile ([`StreamKScheduler::peers`]:
//!   the clusters whose shares cover the rest of the tile, which start their shares with it);
//! - a **tail** unit starts inside a tile: the cluster stores its partial sums for the head's
//!   owner and signals them. A tail is always a cluster's first unit, so each cluster stores
//!   at most one partial (its slot can be its own index), and a head waits only for work that
//!   its peers do first: with every cluster resident, the waits cannot deadlock.
//!
//! The partials' storage and the signals are the program's (see `kernels::hopper`); this module
//! owns the walk. [`StreamKSplit::choose`] is the host's choice of the split; [`stream_k_walk`]
//! the host model of a cluster's units, for tests.
//!
//! ```
//! use dsl_core::pipeline::{stream_k_walk, StreamKSplit, TailReuse};
//! // 48 tiles of 64 k-tiles over 132 SMs: every tile shared out, 23 or 24 k-tiles per SM.
//! let split = StreamKSplit::choose(48, 64, 132, TailReuse::InL2);
//! assert_eq!(split, StreamKSplit { sk_tiles: 48, sk_blocks: 132 });
//! let units = stream_k_walk(48, 64, split, 1, 132);
//! assert_eq!(units[0].tile, 0);
//! assert_eq!((units[0].k_begin, units[0].k_end), (24, 48)); // a tail of tile 0
//! ```

use super::cluster::ClusterShape;
use super::scheduler::{cluster_index, raster_tile, Raster};
use crate::kernel::{select, GlobalPtr, Var};

/// The fewest k-tiles [`StreamKSplit::choose`] gives a share: fewer would make a tile's head wait
/// for (and add up) many small partials.
pub const MIN_SHARE_K_TILES: u32 = 8;

/// A work unit's fixed cost in k-tiles (filling the ring, the epilogue) in
/// [`StreamKSplit::choose`]'s estimate; a tile split between clusters pays it twice more (the
/// tail's partial store, the head's loads of it).
pub const UNIT_OVERHEAD_K_TILES: u32 = 2;

/// [`StreamKSplit::choose`] shares every tile out where there are at most this fraction of the
/// clusters' tiles (as `numerator / denominator`): on the H200 sharing out 96 tiles over 132 SMs
/// was slower than walking them whole (a tile's head adds its peers' partials after its own
/// share), 80 and fewer faster.
pub const SHARE_ALL_BELOW: (u32, u32) = (5, 8);

/// Past a wave, [`StreamKSplit::choose`] shares out the last partial wave's tiles, where their
/// operands do not fit in L2 together ([`TailReuse::PastL2`]), only where the estimate gains
/// this much over the whole tiles: shares at different k of tiles that read the same rows of an
/// operand read them at different times, so from DRAM more often than whole tiles in step do
/// (on the H200: a 128x192-tile 512 x 10240 x 8192 product, estimated 16% faster shared out,
/// ran 17% slower; a 128x256-tile one, estimated 37% faster, ran 22% faster).
pub const MIN_TAIL_GAIN: f64 = 0.75;

/// Where the last partial wave's operands fit in L2 ([`TailReuse::InL2`]), a shared k-tile's
/// cost in [`StreamKSplit::choose`]'s estimate, in whole-tile k-tiles: with every SM busy and
/// the shares out of step, each runs slower than the same k-tile of a whole tile. Fitted on the
/// H200 to 128x256 tiles, where the last wave shared out ran 2.3% faster at 8192^3 (68 of 132
/// tiles shared: accepted below 1.88), and slower at 2048 x 28672 x 4096 (76: 2%, rejected above
/// 1.62), 8192 x 6144 x 4096 (84: 1.5%), 6144^3 (96: 0.8%) and 4096^3 (116: 6%).
pub const SHARED_SLOWDOWN: f64 = 1.75;

/// Whether the operands the last partial wave's tiles read fit in L2 together, which decides
/// how [`StreamKSplit::choose`] prices sharing them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TailReuse {
    /// They fit: shares out of step still find them in L2 ([`SHARED_SLOWDOWN`]).
    InL2,
    /// They do not, or the caller cannot tell ([`MIN_TAIL_GAIN`]).
    PastL2,
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
                let shares = (time - 3 * e) as f64 * SHARED_SLOWDOWN + (3 * e) as f64;
                (full * (kt + e)) as f64 + shares < whole
            }
        };
        if faster {
            split
        } else {
            StreamKSplit::DATA_PARALLEL
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
/// order, for `tiles` tiles of `k_tiles` k-tiles split as `split`.
pub fn stream_k_walk(
    tiles: u32,
    k_tiles: u32,
    split: StreamKSplit,
    cluster: u32,
    clusters: u32,
) -> Vec<StreamKUnit> {
    let kt = u64::from(k_tiles.max(1));
    let (start, len) = split.share(k_tiles, cluster);
    let mut out = Vec::new();
    let (mut it, end) = (start, start + len);
    while it < end {
        let tile = it / kt;
        let k_begin = it - tile * kt;
        let k_end = kt.min(k_begin + (end - it));
        out.push(StreamKUnit {
            tile: tile as u32,
            k_begin: k_begin as u32,
            k_end: k_end as u32,
        });
        it += k_end - k_begin;
    }
    let grid = u64::from(clusters.max(1));
    let dp_tiles = u64::from(tiles.saturating_sub(split.sk_tiles));
    let mut d = (u64::from(cluster) + grid - u64::from(split.sk_blocks) % grid) % grid;
    while d < dp_tiles {
        out.push(StreamKUnit {
            tile: split.sk_tiles + d as u32,
            k_begin: 0,
            k_end: k_tiles,
        });
        d += grid;
    }
    out
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
}

impl StreamKScheduler {
    /// The walk over `tiles_m x tiles_n` cluster tiles of `k_tiles` k-tiles each, `sk_tiles`
    /// of them shared out between the grid's first `sk_blocks` clusters (the host's
    /// [`StreamKSplit`]: `sk_blocks` at most the grid's clusters, and at most the region's
    /// k-tiles), the tiles numbered in `raster` order (`order` is the Hilbert table, as for
    /// [`super::PersistentScheduler`]).
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
    ) -> Self {
        let (id, clusters) = cluster_index(cluster);
        let iters = sk_tiles * k_tiles;
        let blocks = sk_blocks.max(1u32);
        let per = iters / blocks;
        let rem = iters - per * blocks;
        let sharing = id.lt(sk_blocks);
        let start = id * per + id.min(rem);
        let len = per + select(id.lt(rem), 1u32, 0u32);
        let mut s = StreamKScheduler {
            tiles_m,
            tiles_n,
            k_tiles,
            sk_tiles,
            per,
            rem,
            it: select(sharing, start, 0u32).fresh(),
            end: select(sharing, start + len, 0u32),
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

    /// The unit starts its tile's k-tiles: this cluster writes the tile (a whole unit, or a head
    /// that first adds its [`peers`](Self::peers)' partials). Otherwise it is a tail, which
    /// stores its partial for the head.
    pub fn writes_tile(&self) -> Var<bool> {
        self.k_begin.eq_(0u32)
    }

    /// For a head unit: the clusters `(first, end)` whose partials of the tile its owner adds,
    /// in order (the owners of the tile's later k-tiles). Empty for a whole unit.
    pub fn peers(&self) -> (Var<u32>, Var<u32>) {
        let last_iteration = self.tile * self.k_tiles + self.k_tiles - 1u32;
        let last = self.owner(last_iteration);
        let first = self.cluster_id + 1u32;
        (first, select(self.whole(), first, last + 1u32))
    }

    /// Steps to the cluster's next unit.
    pub fn next_unit(&mut self) {
        let done = self.k_end - self.k_begin;
        self.it.set(select(self.in_sk, self.it + done, self.it));
        self.dp
            .set(select(self.in_sk, self.dp, self.dp + self.clusters));
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
        let in_sk = self.it.lt(self.end);
        let kt = self.k_tiles;
        let sk_tile = self.it / kt;
        let sk_begin = self.it - sk_tile * kt;
        let sk_end = kt.min(sk_begin + (self.end - self.it));
        let tile = select(in_sk, sk_tile, self.sk_tiles + self.dp);
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

    /// Every iteration of every tile is walked once; a tail is its cluster's first unit; each
    /// head's peers are exactly the clusters with a tail of its tile, in order.
    fn check(tiles: u32, kt: u32, clusters: u32) {
        let split = StreamKSplit::choose(tiles, kt, clusters, TailReuse::PastL2);
        assert!(
            split.sk_tiles <= tiles && split.sk_blocks <= clusters,
            "{split:?}"
        );
        let mut seen = vec![0u32; (tiles * kt) as usize];
        let mut tails = vec![Vec::new(); tiles as usize];
        let mut heads = vec![None; tiles as usize];
        for c in 0..clusters {
            for (i, u) in stream_k_walk(tiles, kt, split, c, clusters)
                .into_iter()
                .enumerate()
            {
                assert!(u.k_begin < u.k_end && u.k_end <= kt, "{u:?}");
                for k in u.k_begin..u.k_end {
                    seen[(u.tile * kt + k) as usize] += 1;
                }
                if u.k_begin > 0 {
                    assert_eq!(i, 0, "cluster {c}: a tail that is not its first unit");
                    tails[u.tile as usize].push(c);
                } else if u.k_end < kt {
                    let it = u64::from(u.tile) * u64::from(kt);
                    assert_eq!(split.owner(kt, it), c);
                    let last = split.owner(kt, it + u64::from(kt) - 1);
                    heads[u.tile as usize] = Some((c + 1..=last).collect::<Vec<_>>());
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "{tiles}x{kt} on {clusters}");
        for t in 0..tiles as usize {
            match &heads[t] {
                Some(peers) => assert_eq!(peers, &tails[t], "tile {t}"),
                None => assert!(tails[t].is_empty(), "tile {t}: tails without a head"),
            }
        }
    }

    #[test]
    fn every_k_tile_is_walked_once_and_heads_know_their_tails() {
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
        // The squares on 128x256 tiles, their last waves in L2: shared out at 8192^3 (68 of
        // 132 tiles), whole at 6144^3 (96) and 4096^3 (116).
        use TailReuse::InL2;
        assert_eq!(StreamKSplit::choose(2048, 128, 132, InL2).sk_tiles, 68);
        assert_eq!(
            StreamKSplit::choose(1152, 96, 132, InL2),
            StreamKSplit::DATA_PARALLEL
        );
        assert_eq!(
            StreamKSplit::choose(512, 64, 132, InL2),
            StreamKSplit::DATA_PARALLEL
        );
        assert_eq!(
            StreamKSplit::choose(1536, 64, 132, InL2),
            StreamKSplit::DATA_PARALLEL
        );
        // 448 tiles of 64 (512 x 28672 x 4096 on 128x256): the last 52 shared out.
        assert_eq!(StreamKSplit::choose(448, 64, 132, InL2).sk_tiles, 52);
        // 1.6 waves (the H200's 512 x 10240 x 8192 on 128x192 tiles): whole tiles.
        assert_eq!(
            StreamKSplit::choose(216, 128, 132, TailReuse::PastL2),
            StreamKSplit::DATA_PARALLEL
        );
    }
}
