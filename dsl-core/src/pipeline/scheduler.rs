//! A persistent tile scheduler: a grid of about one block (or cluster) per SM walks the output
//! tiles, `tile = cluster_id, cluster_id + clusters, ...`, in an order that keeps the tiles in
//! flight at one time close together so that their A and B tiles are reused from L2 (a
//! 2-D persistent tile scheduler over clusters, as CUTLASS's Hopper GEMMs have).
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::pipeline::{PersistentScheduler, Raster, ClusterShape};
//! let k = build_kernel("walk", |kb| {
//!     let (tm, tn) = (kb.param::<u32>("tiles_m"), kb.param::<u32>("tiles_n"));
//!     let mut tiles = PersistentScheduler::new(tm, tn, Raster::Grouped { group: 8 }, ClusterShape::ONE, None);
//!     // `while tiles.valid() { tiles.next_tile() }` in a #[kernel] body.
//!     LoopCond::run_while(|part| match part {
//!         LoopPart::Cond => Some(tiles.valid()),
//!         LoopPart::Body => { tiles.next_tile(); None }
//!     });
//! })
//! .unwrap();
//! assert_eq!(k.params.len(), 2);
//! ```

use super::cluster::ClusterShape;
use crate::kernel::{block_idx_x, grid_dim_x, select, GlobalPtr, Var};

/// The order in which consecutive tiles of the walk cover the `(M, N)` grid of cluster tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Raster {
    /// M fastest: tile `t` is `(t % tiles_m, t / tiles_m)`. The tiles in flight share a few
    /// columns of B and sweep all of A.
    AlongM,
    /// Triton's grouped order: groups of `group` M tiles; inside a group M runs fastest, then N.
    /// The tiles in flight cover about `group` rows of A and `clusters / group` columns of B.
    Grouped {
        /// M tiles per group (at least 1).
        group: u32,
    },
    /// A Hilbert curve over the grid (clipped to it), read from a table the host computes with
    /// [`hilbert_order`] and passes to the kernel: consecutive tiles are neighbours, so the
    /// tiles in flight form a compact patch.
    Hilbert,
}

impl Raster {
    /// The rows and columns of the `tiles_m x tiles_n` grid that the first `count` tiles of this
    /// order cover (an upper bound for a Hilbert curve: the square patch around them): what
    /// the tiles that run at once read of A (rows) and of B (columns).
    ///
    /// ```
    /// use dsl_core::pipeline::Raster;
    /// let grouped = Raster::Grouped { group: 8 };
    /// assert_eq!(grouped.first_tiles_extent(64, 32, 68), (8, 9));
    /// assert_eq!(Raster::AlongM.first_tiles_extent(4, 40, 28), (4, 7));
    /// ```
    pub fn first_tiles_extent(self, tiles_m: u32, tiles_n: u32, count: u32) -> (u32, u32) {
        let (tiles_m, tiles_n) = (tiles_m.max(1), tiles_n.max(1));
        let count = count.min(tiles_m.saturating_mul(tiles_n));
        let rows = match self {
            Raster::AlongM => tiles_m.min(count),
            Raster::Grouped { group } => group.max(1).min(tiles_m).min(count),
            Raster::Hilbert => (f64::from(count).sqrt().ceil() as u32)
                .next_power_of_two()
                .min(tiles_m),
        };
        let rows = rows.max(1);
        (rows, count.div_ceil(rows).min(tiles_n))
    }
}

/// The walk over output tiles for this block. Its registers hold the current linear tile and
/// its `(m, n)` coordinates in cluster tiles; [`PersistentScheduler::next_tile`] steps to the
/// next one this block's cluster computes.
#[derive(Debug, Clone, Copy)]
pub struct PersistentScheduler {
    tiles_m: Var<u32>,
    tiles_n: Var<u32>,
    total: Var<u32>,
    stride: Var<u32>,
    tile: Var<u32>,
    m: Var<u32>,
    n: Var<u32>,
    raster: Raster,
    cluster: ClusterShape,
    order: Option<GlobalPtr<u32>>,
}

impl PersistentScheduler {
    /// A walk over `tiles_m x tiles_n` cluster tiles in `raster` order, for grids launched with
    /// clusters of `cluster` blocks (blocks of one cluster walk together). `order` is the
    /// [`hilbert_order`] table, required by [`Raster::Hilbert`] (and ignored otherwise).
    pub fn new(
        tiles_m: Var<u32>,
        tiles_n: Var<u32>,
        raster: Raster,
        cluster: ClusterShape,
        order: Option<GlobalPtr<u32>>,
    ) -> Self {
        if raster == Raster::Hilbert && order.is_none() {
            crate::kernel::context::record_error(|kernel| crate::kernel::BuildError::BadArgument {
                kernel,
                message: "Raster::Hilbert reads its order from a table: pass the hilbert_order \
                          buffer as `order`"
                    .into(),
            });
        }
        let (first, stride) = cluster_index(cluster);
        let mut s = PersistentScheduler {
            tiles_m,
            tiles_n,
            total: tiles_m * tiles_n,
            stride,
            tile: first.fresh(),
            m: Var::konst(0u32).fresh(),
            n: Var::konst(0u32).fresh(),
            raster,
            cluster,
            order,
        };
        s.locate();
        s
    }

    /// Whether the current tile exists (the walk is not over).
    pub fn valid(&self) -> Var<bool> {
        self.tile.lt(self.total)
    }

    /// The current cluster tile's M index.
    pub fn m(&self) -> Var<u32> {
        self.m
    }

    /// The current cluster tile's N index.
    pub fn n(&self) -> Var<u32> {
        self.n
    }

    /// The linear index of the current tile in the walk's order.
    pub fn linear(&self) -> Var<u32> {
        self.tile
    }

    /// The cluster's shape.
    pub fn cluster(&self) -> ClusterShape {
        self.cluster
    }

    /// Steps to this cluster's next tile.
    pub fn next_tile(&mut self) {
        self.tile.set(self.tile + self.stride);
        self.locate();
    }

    /// Writes `(m, n)` of the current tile (anything for a tile past the end).
    fn locate(&mut self) {
        let (m, n) = raster_tile(
            self.raster,
            self.tiles_m,
            self.tiles_n,
            self.total,
            self.order,
            self.tile,
        );
        self.m.set(m);
        self.n.set(n);
    }
}

/// This block's cluster's index in the grid and the grid's clusters (blocks of a cluster are
/// consecutive along x): where both walks start and how they stride.
pub(crate) fn cluster_index(cluster: ClusterShape) -> (Var<u32>, Var<u32>) {
    let size = cluster.size();
    if size == 1 {
        (block_idx_x(), grid_dim_x())
    } else {
        (block_idx_x() / size, grid_dim_x() / size)
    }
}

/// The `(m, n)` cluster tile at index `t` of `raster`'s order over `tiles_m x tiles_n` (`total`
/// tiles; anything for `t` past the end): what [`PersistentScheduler`] and
/// [`super::StreamKScheduler`] walk.
pub(crate) fn raster_tile(
    raster: Raster,
    tiles_m: Var<u32>,
    tiles_n: Var<u32>,
    total: Var<u32>,
    order: Option<GlobalPtr<u32>>,
    t: Var<u32>,
) -> (Var<u32>, Var<u32>) {
    match raster {
        Raster::AlongM => (t % tiles_m, t / tiles_m),
        Raster::Grouped { group } => {
            let group = group.max(1);
            let per_group = tiles_n * group;
            let g = t / per_group;
            let first_m = g * group;
            let size = (tiles_m - first_m).min(group);
            let size = select(tiles_m.gt(first_m), size, 1u32);
            let within = t % per_group;
            (first_m + within % size, within / size)
        }
        Raster::Hilbert => match order {
            Some(order) => {
                let inside = t.lt(total);
                let packed = order.load_at(select(inside, t, 0u32));
                (packed >> 16u32, packed & 0xFFFFu32)
            }
            None => (Var::konst(0), Var::konst(0)),
        },
    }
}

/// The host's [`Raster::Hilbert`] table for `tiles_m x tiles_n` tiles: entry `t` is
/// `(m << 16) | n` of the `t`-th tile along a Hilbert curve over the smallest power-of-two
/// square holding the grid, with the points outside the grid left out (so every tile appears
/// once, and consecutive entries are neighbours except where the curve left the grid).
///
/// The walk is linear in the tiles it visits, not in the square's points: the curve's first
/// `4^j` points from any multiple of `4^j` fill one aligned `2^j x 2^j` square, so a square
/// wholly outside the grid is stepped over at once (`hilbert_order(1, 65535)` visits 65535
/// tiles and a few hundred squares, not the 2^32 points of its square).
///
/// `None` when a side is 0 or above 65535 (the packing's 16 bits).
///
/// ```
/// use dsl_core::pipeline::hilbert_order;
/// let order = hilbert_order(2, 2).unwrap();
/// assert_eq!(order, vec![0, 1, (1 << 16) | 1, 1 << 16]);
/// // One row of 65535 tiles: every tile once, in a blink.
/// assert_eq!(hilbert_order(1, 65535).unwrap().len(), 65535);
/// ```
pub fn hilbert_order(tiles_m: u32, tiles_n: u32) -> Option<Vec<u32>> {
    if tiles_m == 0 || tiles_n == 0 || tiles_m > 0xFFFF || tiles_n > 0xFFFF {
        return None;
    }
    let side = tiles_m.max(tiles_n).next_power_of_two() as u64;
    let levels = side.trailing_zeros();
    let (rows, cols) = (u64::from(tiles_m), u64::from(tiles_n));
    let mut out = Vec::with_capacity(tiles_m as usize * tiles_n as usize);
    let mut d = 0u64;
    while d < side * side {
        let (x, y) = hilbert_d2xy(side, d);
        // The largest aligned square the curve fills from `d` on that lies outside the grid.
        let aligned = (d.trailing_zeros() / 2).min(levels);
        let outside = (1..=aligned)
            .rev()
            .find(|&j| ((x >> j) << j) >= rows || ((y >> j) << j) >= cols);
        match outside {
            Some(j) => d += 1 << (2 * j),
            None => {
                if x < rows && y < cols {
                    out.push(((x as u32) << 16) | y as u32);
                }
                d += 1;
            }
        }
    }
    Some(out)
}

/// Point `d` of the Hilbert curve over a `side x side` grid (`side` a power of two): the
/// classic iterative conversion, quadrant by quadrant from the smallest.
fn hilbert_d2xy(side: u64, d: u64) -> (u64, u64) {
    let (mut x, mut y, mut t) = (0u64, 0u64, d);
    let mut s = 1u64;
    while s < side {
        let rx = 1 & (t / 2);
        let ry = 1 & (t ^ rx);
        if ry == 0 {
            if rx == 1 {
                x = s - 1 - x;
                y = s - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        x += s * rx;
        y += s * ry;
        t /= 4;
        s *= 2;
    }
    (x, y)
}

/// The host model of the walk: the `(m, n)` cluster tiles a cluster with id `first` visits, in
/// order, for a grid of `clusters` clusters. What the device computes, for tests and for
/// choosing a raster.
pub fn walk(
    tiles_m: u32,
    tiles_n: u32,
    raster: Raster,
    first: u32,
    clusters: u32,
) -> Vec<(u32, u32)> {
    let total = tiles_m as u64 * tiles_n as u64;
    let table = match raster {
        Raster::Hilbert => hilbert_order(tiles_m, tiles_n),
        _ => None,
    };
    let mut out = Vec::new();
    let mut t = u64::from(first);
    while t < total && clusters > 0 {
        let t32 = t as u32;
        out.push(match raster {
            Raster::AlongM => (t32 % tiles_m, t32 / tiles_m),
            Raster::Grouped { group } => {
                let group = group.max(1);
                let per_group = tiles_n * group;
                let first_m = (t32 / per_group) * group;
                let size = (tiles_m - first_m).min(group);
                let within = t32 % per_group;
                (first_m + within % size, within / size)
            }
            Raster::Hilbert => {
                let p = table.as_ref().map_or(0, |o| o[t as usize]);
                (p >> 16, p & 0xFFFF)
            }
        });
        t += u64::from(clusters);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn covers_once(tm: u32, tn: u32, raster: Raster) {
        let clusters = 7;
        let mut seen = HashSet::new();
        for c in 0..clusters {
            for t in walk(tm, tn, raster, c, clusters) {
                assert!(t.0 < tm && t.1 < tn, "{raster:?} {t:?} outside {tm}x{tn}");
                assert!(seen.insert(t), "{raster:?}: {t:?} twice");
            }
        }
        assert_eq!(seen.len() as u32, tm * tn, "{raster:?} {tm}x{tn}");
    }

    #[test]
    fn every_raster_visits_every_tile_once() {
        for (tm, tn) in [(1, 1), (3, 5), (16, 16), (33, 7), (7, 33), (64, 2)] {
            for r in [
                Raster::AlongM,
                Raster::Grouped { group: 8 },
                Raster::Grouped { group: 1 },
                Raster::Grouped { group: 40 },
                Raster::Hilbert,
            ] {
                covers_once(tm, tn, r);
            }
        }
    }

    #[test]
    fn hilbert_steps_are_neighbours_on_a_square() {
        let o = hilbert_order(16, 16).unwrap();
        for w in o.windows(2) {
            let (a, b) = ((w[0] >> 16, w[0] & 0xFFFF), (w[1] >> 16, w[1] & 0xFFFF));
            assert_eq!(a.0.abs_diff(b.0) + a.1.abs_diff(b.1), 1, "{a:?} -> {b:?}");
        }
        assert!(hilbert_order(0, 3).is_none() && hilbert_order(70000, 1).is_none());
    }

    /// The brute walk over every point of the square, as the table was first made.
    fn hilbert_order_by_every_point(tiles_m: u32, tiles_n: u32) -> Vec<u32> {
        let side = tiles_m.max(tiles_n).next_power_of_two() as u64;
        (0..side * side)
            .map(|d| hilbert_d2xy(side, d))
            .filter(|&(x, y)| x < u64::from(tiles_m) && y < u64::from(tiles_n))
            .map(|(x, y)| ((x as u32) << 16) | y as u32)
            .collect()
    }

    #[test]
    fn hilbert_squares_outside_the_grid_are_stepped_over_in_order() {
        for tm in 1..=20 {
            for tn in 1..=20 {
                assert_eq!(
                    hilbert_order(tm, tn).unwrap(),
                    hilbert_order_by_every_point(tm, tn),
                    "{tm} x {tn}"
                );
            }
        }
        for (tm, tn) in [(1, 300), (300, 1), (33, 257), (129, 64), (1000, 3)] {
            assert_eq!(
                hilbert_order(tm, tn).unwrap(),
                hilbert_order_by_every_point(tm, tn),
                "{tm} x {tn}"
            );
        }
    }

    /// Linear in the tiles: the longest rows and columns the packing holds take milliseconds.
    #[test]
    fn hilbert_order_of_one_long_row_is_fast() {
        let start = std::time::Instant::now();
        for (tm, tn) in [(1, 65535), (65535, 1), (2, 65535), (65535, 3)] {
            let o = hilbert_order(tm, tn).unwrap();
            assert_eq!(o.len() as u32, tm * tn);
        }
        assert!(start.elapsed().as_secs_f64() < 1.0, "{:?}", start.elapsed());
    }

    #[test]
    fn grouped_order_is_tritons() {
        // 4 M tiles, 3 N tiles, groups of 2: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) (2,0) ...
        let w = walk(4, 3, Raster::Grouped { group: 2 }, 0, 1);
        assert_eq!(
            &w[..7],
            &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 0)]
        );
    }
}
