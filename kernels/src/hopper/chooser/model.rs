//! The cost model, for shapes between the table's rows: of a few tiles and two walks, the one
//! that takes least.
//!
//! A tile's wave takes its `bm x bn` tile's FLOPs at the rate its `wgmma` reaches (measured
//! against 128x256's on the H200), and a launch as many waves as its tiles over the device's
//! SMs: the rows and columns past M's and N's residue are paid in full. Where the whole
//! problem moves more bytes than the device's rates let it compute (A, B and D once each,
//! against its DRAM bandwidth), every tile waits on memory alike; the model keeps the faster
//! compute then. [`Estimate`] has both times.
//!
//! The tiles: the 128- and 256-row ones of [`CANDIDATES`], and where the tokens (M) fit in two
//! tiles of at most 256, the same problem swapped ([`swapped`]): the weights in 128-row tiles,
//! the tokens in one or two tiles as narrow as hold them, so that M's residue costs a multiple
//! of 16 rather than of 128 (at M = 333, 2 x 176 rows against 3 x 128).
//!
//! The walks: whole tiles in evened waves (`_n`; the 128x256 tile in Hilbert order, unless
//! stream-K shares its last wave out, grouped order then), or every tile's k-tiles streamed over
//! every SM (`_k`), which takes the same k-tiles on every SM (no part-full last wave) and pays
//! each SM's hand-over of partial sums ([`SHARE_FIXUP_K_TILES`] k-tiles, as stream-K's split
//! prices it). A streamed walk is weighed only for a tiling whose tiles do not fill one wave,
//! and chosen where it takes at most [`STREAMED_GAIN`] of the best whole walk's time: where the
//! one wave leaves many SMs idle, not to win a few percent the hand-over's cost takes back (on
//! the H200 every streamed walk of tiles past a wave ran 3-30% slower than the same tiles in
//! evened waves, whose last wave stream-K by shape shares out). A tiling whose tiles are few
//! enough for stream-K by shape to share every one out is priced as that launch runs, shared
//! (it is the streamed walk already), not as one whole wave.

use dsl_core::pipeline::stream_k::{MIN_SHARE_K_TILES, SHARE_FIXUP_K_TILES};
use dsl_core::pipeline::Raster;

use super::super::batch::StridedBatch;
use super::super::launch::launch_batched;
use super::super::schedule::{
    Buffers, Columns, Consumers, Cooperative, HopperSchedule, Store, SubTile, Waves,
};
use crate::gemm::Device;

/// A candidate tile: its rows and columns, the rest of its spelling (stages, staging), its
/// `wgmma`'s rate against the 128x256 one's, and the smallest M it is weighed for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Tile M.
    pub m: usize,
    /// Tile N.
    pub n: usize,
    /// The spelling after the tile: stages and staging.
    pub rest: &'static str,
    /// The rate its `wgmma` reaches against 128x256's (measured on the H200).
    pub efficiency: f64,
    /// The smallest M it is a candidate for: 1 for every M, 129 past one row of 128-row
    /// tiles, 513 past the tokens the swapped tilings take (where they, not it, serve).
    pub min_m: usize,
}

/// The candidates: 128 x {256, 224, 192, 160, 128, 64} and 256 x 160, each with the stages
/// that fit it; 128x224 and 256x160 only over more than one row of tiles, 128x160 only past 512
/// rows. 128x160 fills waves the others leave part-full (640 x 7680 x 5120: 240 tiles, 1.8
/// waves, 1.00 of cuBLAS on the H100 where 128x192's 200 tiles ran 0.76); over fewer rows the
/// swapped tiles serve better (333 x 6144 x 4096: 0.73 on it, 0.83 on two swapped 168-wide
/// token tiles), `results/midm.md`.
pub const CANDIDATES: [Candidate; 7] = [
    Candidate {
        m: 128,
        n: 256,
        rest: "s3_h",
        efficiency: 1.0,
        min_m: 1,
    },
    Candidate {
        m: 128,
        n: 224,
        rest: "s4_e112",
        efficiency: 0.95,
        min_m: 129,
    },
    Candidate {
        m: 128,
        n: 192,
        rest: "s4",
        efficiency: 0.97,
        min_m: 1,
    },
    Candidate {
        m: 256,
        n: 160,
        rest: "s3_e80",
        efficiency: 0.94,
        min_m: 129,
    },
    Candidate {
        m: 128,
        n: 160,
        rest: "s5",
        efficiency: 0.93,
        min_m: 513,
    },
    Candidate {
        m: 128,
        n: 128,
        rest: "s6",
        efficiency: 0.93,
        min_m: 1,
    },
    Candidate {
        m: 128,
        n: 64,
        rest: "s8",
        efficiency: 0.8,
        min_m: 1,
    },
];

/// A candidate's predicted time for a problem, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Its waves of tiles at its `wgmma`'s rate.
    pub compute: f64,
    /// A, B and D moved once at the device's DRAM bandwidth.
    pub memory: f64,
}

impl Estimate {
    /// The longer of the two: what the launch takes.
    pub fn time(&self) -> f64 {
        self.compute.max(self.memory)
    }
}

/// A streamed walk is chosen where its estimate is at most this fraction of the best whole
/// walk's: stream-K's hand-over ran slower on the H200 than its traffic explains (see
/// `dsl_core::pipeline::stream_k`), so a few percent on paper is no gain. At 0.95, 112 tiles of
/// 128x224 on 132 SMs streamed (the model's 0.86) ran 3.5% slower than whole
/// (`results/midm.md`).
pub const STREAMED_GAIN: f64 = 0.85;

/// The part of a swapped tile's `wgmma` rate its epilogue keeps: the swapped staging tile is
/// column-major, written one value at a time rather than by `stmatrix`, and whole (no
/// sub-tiles), so it holds fewer stages beside it. 0.97 before the staging was swizzled; with
/// `_z` (every swapped tiling here) the swapped tiles ran 2-3% faster, and at 0.99 the model
/// moves four grid shapes to them, each measured faster on the H100 (333 x 2048 x 14336 0.672
/// -> 0.846 of cuBLAS, 333 x 3072 x 8192 0.677 -> 0.845, 384 x 4096 x 14336 1.103 -> 1.159,
/// 384 x 4096 x 20480 0.666 -> 1.002), where 0.995 would also move 333 x 28672 x K, which ran
/// slower swapped (0.949 -> 0.887 at K = 14336; results/midm.md, 2026-12-06, fifth session).
pub const SWAPPED_EFFICIENCY: f64 = 0.99;

/// The rows (four 128-row tiles) for which the 128x256 tile, walked whole, takes a fourth stage
/// with its staging in 128-column halves (`s4_e128`, [`with_fourth_stage`]). Measured on the
/// H100 where the model takes 128x256 at 449-512 rows: 500 x 8192 x 6144 0.981 -> 1.000 of
/// cuBLAS, 512 x 16384 x 3072 0.970 -> 1.009, 480 x 14336 x 4096 0.956 -> 0.977, 449 x 7168 x
/// 8192 0.896 -> 0.920 (the same in two rounds of the session before), and in the midm suite
/// after the change +1.3% to +6.9% on its five such shapes in two runs; level at 1024 and 2048
/// rows, and 1-2% behind over one or two row tiles (65 to 256 rows on a wide N, seven shapes in
/// two rounds), where each weight tile is read by fewer blocks still: so not the memory stream
/// alone. Why four row tiles gain is not known (results/midm.md, 2026-12-06, fifth session).
pub const FOURTH_STAGE_ROWS: std::ops::RangeInclusive<usize> = 385..=512;

/// `c`'s estimate for `m x n x k` on `device` (16-bit operands), its tiles whole in waves.
pub fn estimate(c: &Candidate, shape: (usize, usize, usize), device: &Device) -> Estimate {
    Tiling::of(c).estimate(shape, device, Walk::Waves)
}

/// How a tiling's tiles are walked, in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// Whole tiles, in as many waves as they take (`_n`). Where stream-K by shape shares the
    /// last wave out, the model still counts its wave whole: the tables' and the suites'
    /// measurements were made, and the model fitted, that way.
    Waves,
    /// Every tile's k-tiles shared out over every SM (`_k`).
    Streamed,
}

/// A tiling of the problem as the model weighs it: the tile's extent along the problem's M and
/// N (swapped, the tokens' width and the weights' 128 rows) and its `wgmma` rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tiling {
    /// Rows of the problem's M per tile.
    pub along_m: usize,
    /// Columns of the problem's N per tile.
    pub along_n: usize,
    /// Its rate against 128x256's.
    pub efficiency: f64,
}

impl Tiling {
    fn of(c: &Candidate) -> Tiling {
        Tiling {
            along_m: c.m,
            along_n: c.n,
            efficiency: c.efficiency,
        }
    }

    /// Its tiles over a batch of `batch` GEMMs of `m x n x k`.
    pub fn tiles(&self, (m, n, _): (usize, usize, usize), batch: usize) -> usize {
        m.div_ceil(self.along_m) * n.div_ceil(self.along_n) * batch.max(1)
    }

    /// The estimate for `m x n x k` on `device` walked as `walk`: whole tiles take as many
    /// waves as they fill; streamed, every SM takes an equal share of all the k-tiles (at
    /// least stream-K's smallest share) and the hand-over's cost ([`SHARE_FIXUP_K_TILES`]).
    pub fn estimate(&self, shape: (usize, usize, usize), device: &Device, walk: Walk) -> Estimate {
        self.estimate_batch(shape, 1, device, walk)
    }

    /// [`Tiling::estimate`] for a strided batch of `batch` GEMMs of `m x n x k` in one launch:
    /// the waves are of every GEMM's tiles, and the bytes every GEMM's.
    ///
    /// ```
    /// use kernels::gemm::Device;
    /// use kernels::hopper::chooser::model::{Tiling, Walk};
    /// let h200 = Device::h200();
    /// let wide = Tiling { along_m: 128, along_n: 256, efficiency: 1.0 };
    /// let one = wide.estimate((1024, 1024, 1024), &h200, Walk::Waves);
    /// // 32 tiles fill a quarter of a wave; 16 GEMMs of them, four waves (3.9 full).
    /// let sixteen = wide.estimate_batch((1024, 1024, 1024), 16, &h200, Walk::Waves);
    /// assert!((sixteen.compute / one.compute - 4.0).abs() < 1e-9);
    /// assert!((sixteen.memory / one.memory - 16.0).abs() < 1e-9);
    /// ```
    pub fn estimate_batch(
        &self,
        (m, n, k): (usize, usize, usize),
        batch: usize,
        device: &Device,
        walk: Walk,
    ) -> Estimate {
        let sms = device.sms.max(1) as usize;
        let b = batch.max(1);
        let tiles = self.tiles((m, n, k), b);
        let per_sm = device.tensor_flops / sms as f64;
        let tile_flops = 2.0 * (self.along_m * self.along_n) as f64 * k as f64;
        let tiles_per_sm = match walk {
            Walk::Waves => tiles.div_ceil(sms) as f64,
            Walk::Streamed => {
                let k_tiles = k.div_ceil(64).max(1) as f64;
                let share = (tiles as f64 * k_tiles / sms as f64).max(f64::from(MIN_SHARE_K_TILES));
                (share + SHARE_FIXUP_K_TILES) / k_tiles
            }
        };
        let bytes = 2.0 * ((m * k) as f64 + (n * k) as f64 + (m * n) as f64) * b as f64;
        Estimate {
            compute: tiles_per_sm * tile_flops / (per_sm * self.efficiency),
            memory: bytes / device.dram_bytes_per_s,
        }
    }
}

/// The swapped tiling of a problem of `m` tokens, where they fit in two tiles of at most 256:
/// the tokens' tile width ([`token_tile`]: one or two tiles, each as narrow as holds them, a
/// multiple of 8) and its [`Tiling`], its rate the unswapped 128-row tile's of that width
/// (between the measured ones) kept by [`SWAPPED_EFFICIENCY`].
///
/// ```
/// use kernels::hopper::chooser::model::swapped;
/// assert_eq!(swapped(333).map(|(w, _)| w), Some(168)); // 2 x 168 rows, not 3 x 128
/// assert_eq!(swapped(150).map(|(w, _)| w), Some(152));
/// assert_eq!(swapped(600), None);
/// ```
pub fn swapped(m: usize) -> Option<(u32, Tiling)> {
    swapped_rows(m, 128)
}

/// [`swapped`] with the weights in 64-row tiles: one consumer warpgroup a tile, its rate
/// the 128-row tile's of the same width kept by [`ONE_CONSUMER_EFFICIENCY`]. Where the 128-row
/// tiles leave most SMs idle, twice as many tiles of half the work fill them: at 288 x 4096 x
/// 12800 (64 tiles of 128 x 144 on 132 SMs), 64 x 144 ran 0.98 of cuBLAS against 0.86 on the
/// H100 (`results/midm.md`, 2026-12-06).
///
/// ```
/// use kernels::hopper::chooser::model::{swapped, swapped_narrow};
/// let (w, narrow) = swapped_narrow(288).unwrap();
/// assert_eq!((w, narrow.along_n), (144, 64));
/// assert!(narrow.efficiency < swapped(288).unwrap().1.efficiency);
/// ```
pub fn swapped_narrow(m: usize) -> Option<(u32, Tiling)> {
    swapped_rows(m, 64)
}

/// The part of a tile's `wgmma` rate a 64-row tile keeps, with one consumer warpgroup where the
/// 128-row tile has two. One measurement stands behind it: at 288 x 4096 x 12800 on the H100,
/// one wave of 128 tiles of 64 x 144 ran in 0.87 of the time of one wave of 64 tiles of
/// 128 x 144 (444 against 387 TFLOP/s), where half the work per tile at this rate predicts
/// 0.63: the launch is partly bound by memory, which the model counts only as a whole.
pub const ONE_CONSUMER_EFFICIENCY: f64 = 0.8;

/// The swapped tiling of `m` tokens with the weights in tiles of `rows` (64 or 128).
fn swapped_rows(m: usize, rows: usize) -> Option<(u32, Tiling)> {
    if m == 0 || m > 512 {
        return None;
    }
    let width = token_tile(m, 8);
    // The 128-row tiles' measured rates (CANDIDATES), by width, in their evened waves.
    let measured = [(64.0, 0.8), (128.0, 0.93), (192.0, 0.97), (256.0, 1.0)];
    let w = width as f64;
    let rate = measured
        .windows(2)
        .find(|p| w <= p[1].0)
        .map_or(measured[0].1, |p| {
            let ((w0, r0), (w1, r1)) = (p[0], p[1]);
            r0 + (r1 - r0) * ((w - w0) / (w1 - w0)).max(0.0)
        });
    let consumers = if rows < 128 {
        ONE_CONSUMER_EFFICIENCY
    } else {
        1.0
    };
    Some((
        width as u32,
        Tiling {
            along_m: width,
            along_n: rows,
            efficiency: rate * SWAPPED_EFFICIENCY * consumers,
        },
    ))
}

/// The width of a swapped schedule's token tile for `m` tokens: M in as few tiles of at most
/// 256 as hold it, each rounded up to `granule`, and at least 16 (the narrowest tile measured).
/// Swapped tiles take widths that are multiples of 8; at 333 tokens two tiles of 168 against
/// 176 (rounded to 16) ran 5-10% faster on the H100, three shapes of the midm suite; in decode,
/// 40 tokens on 40 against 48 3.6% faster, 56 on 56 against 64 4.6% (`results/midm.md`,
/// 2026-12-06).
///
/// ```
/// use kernels::hopper::chooser::model::token_tile;
/// assert_eq!(token_tile(333, 8), 168);
/// assert_eq!(token_tile(100, 8), 104);
/// assert_eq!(token_tile(100, 16), 112);
/// assert_eq!(token_tile(40, 8), 40);
/// assert_eq!(token_tile(3, 8), 16);
/// ```
pub fn token_tile(m: usize, granule: usize) -> usize {
    m.div_ceil(m.div_ceil(256).max(1))
        .next_multiple_of(granule.max(1))
        .max(16)
}

/// The width of each of two token tiles that hold `m` tokens, rounded up to `granule`: the
/// table's swapped schedules in 2-block clusters along the tokens, where the two tiles of a
/// weight tile share its load (multicast), so that it comes from DRAM once and twice as many
/// SMs work on the weights as one token tile would keep busy.
///
/// ```
/// use kernels::hopper::chooser::model::token_pair_tile;
/// assert_eq!(token_pair_tile(200, 8), 104);
/// assert_eq!(token_pair_tile(333, 8), 168);
/// assert_eq!(token_pair_tile(150, 16), 80);
/// ```
pub fn token_pair_tile(m: usize, granule: usize) -> usize {
    m.div_ceil(2).next_multiple_of(granule.max(1))
}

/// The model's schedule for `m x n x k` on `device`: the tiling and walk of least time (the
/// faster compute among those that wait on memory alike; a streamed walk only where it takes
/// at most [`STREAMED_GAIN`] of the best whole one's), whole tiles in evened waves, the 128x256
/// tile in Hilbert order unless stream-K shares its last wave out or the order's table would be
/// past its size.
pub fn choose(m: usize, n: usize, k: usize, device: &Device) -> HopperSchedule {
    choose_batch(m, n, k, 1, device)
}

/// [`choose`] for a strided batch of `batch` GEMMs of `m x n x k` in one launch: each tiling's
/// waves and bytes are the whole batch's ([`Tiling::estimate_batch`]), and its launch the
/// batch's ([`launch_batched`]). A batch of 1 is [`choose`].
pub fn choose_batch(m: usize, n: usize, k: usize, batch: usize, device: &Device) -> HopperSchedule {
    choose_among(m, n, k, batch, device, &|_| true).unwrap_or_else(|| {
        let c = &CANDIDATES[CANDIDATES.len() - 1];
        let s: HopperSchedule = format!("{}x{}x64{}_n", c.m, c.n, c.rest)
            .parse()
            .expect("the model's candidates are schedules");
        super::fitted(s, device)
    })
}

/// [`choose_batch`] among the tilings whose schedules `accept` takes; `None` where it takes
/// none that fits the device.
pub fn choose_among(
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    device: &Device,
    accept: &dyn Fn(&HopperSchedule) -> bool,
) -> Option<HopperSchedule> {
    let shape = (m, n, k);
    let b = batch.max(1);
    // Each tiling's schedule, with as many stages as fit the device where its own do not.
    let parsed = |spelled: String| -> HopperSchedule {
        let s = spelled
            .parse()
            .expect("the model's candidates are schedules");
        super::fitted(s, device)
    };
    let mut tilings: Vec<(Tiling, HopperSchedule)> = CANDIDATES
        .iter()
        .filter(|c| m >= c.min_m)
        .map(|c| {
            (
                Tiling::of(c),
                parsed(format!("{}x{}x64{}_n", c.m, c.n, c.rest)),
            )
        })
        .collect();
    // Past 256 tokens (the table's rows take up to 320, where a batch or an operand's layout
    // does not pass them over), the tokens in two swapped tiles over the weights' 128-row and
    // 64-row tiles, each with as many stages as fit up to its cap.
    let swapped_tilings = [(128, "s2_n_t_z", 6), (64, "s4_f1_vfln_n_t_z", 8)];
    for (rows, rest, cap) in swapped_tilings.into_iter().filter(|_| m > 256) {
        if let Some((width, tiling)) = swapped_rows(m, rows) {
            let s = parsed(format!("{rows}x{width}x64{rest}"));
            tilings.push((tiling, s.with_most_stages(cap, device.smem_per_block)));
        }
    }
    tilings.retain(|(_, s)| s.check_fit(device.smem_per_block).is_ok() && accept(s));
    let fastest = |options: &mut dyn Iterator<Item = (Estimate, HopperSchedule)>| {
        options.min_by(|(ea, _), (eb, _)| {
            ea.time()
                .total_cmp(&eb.time())
                .then(ea.compute.total_cmp(&eb.compute))
        })
    };
    // A tiling whose launch by shape shares every tile out (few tiles) walks as streamed, and
    // is estimated so; the streamed walk of it is the same launch.
    let walk_of = |s: &HopperSchedule| {
        if shares_every_tile(s, shape, b, device) {
            Walk::Streamed
        } else {
            Walk::Waves
        }
    };
    let whole = fastest(
        &mut tilings
            .iter()
            .map(|(t, s)| (t.estimate_batch(shape, b, device, walk_of(s)), *s)),
    );
    // Streamed walks only of tilings whose tiles do not fill a wave: on the H200 (midm suite,
    // 2026-12-05, results/midm.md) every streamed walk of tiles past a wave ran slower than the
    // same tiles in evened waves, 3 to 30% (1200 x 5120 x 13824 on 128x256: 0.74 of cuBLAS
    // streamed, 0.85 whole; 448 x 7168 x 20480 on 128x224: 0.99 against 1.08), whatever the
    // model's wave count said: stream-K by shape already shares a part-full last wave out.
    let streamed = fastest(
        &mut tilings
            .iter()
            .filter(|(t, s)| walk_of(s) == Walk::Waves && t.tiles(shape, b) < device.sms as usize)
            .map(|(t, s)| {
                (
                    t.estimate_batch(shape, b, device, Walk::Streamed),
                    streamed_walk(s),
                )
            }),
    );
    let schedule = match (whole, streamed) {
        (Some((w, _)), Some((e, s))) if e.time() <= STREAMED_GAIN * w.time() => return Some(s),
        (Some((_, s)), _) => s,
        _ => return None,
    };
    if schedule.order != Raster::Hilbert {
        return Some(schedule);
    }
    let grouped = HopperSchedule {
        order: Raster::Grouped {
            group: balanced_group(&schedule, shape, b, device),
        },
        ..schedule
    };
    // Where stream-K shares the last wave out, grouped order: at 8192^3, timed in rotated
    // rounds beside cuBLAS, rute's own time ran 0.7-1.0% shorter grouped than in Hilbert order.
    let dims = (u32::try_from(m), u32::try_from(n), u32::try_from(k));
    let (Ok(m), Ok(n), Ok(k)) = dims else {
        return Some(grouped);
    };
    let count = u32::try_from(b).unwrap_or(u32::MAX);
    let split = launch_batched(&schedule, (m, n, k), count, device.sms, device.l2_bytes).split;
    let batch_refused = count > 1
        && schedule
            .check_batch(
                m,
                n,
                k,
                StridedBatch {
                    count,
                    ..StridedBatch::ONE
                },
            )
            .is_err();
    if split.sk_tiles > 0 || schedule.takes(m, n, k).is_err() || batch_refused {
        return Some(grouped);
    }
    // A batch walks each GEMM's tiles in groups, in four stages: at 16 x 1024^3 on the H100
    // (16 k-tiles a tile, 3.9 waves, every GEMM's operands from DRAM) `128x256x64s4_e128` read
    // 1.005-1.007 of cuBLAS's strided batch where the Hilbert walk in three read 0.964-0.971,
    // the same process (results/blas.md, 2026-12-06, tenth session); 64 x 512x512x128 ran so.
    let fourth = if b > 1 {
        with_fourth_stage(&grouped, device)
    } else if FOURTH_STAGE_ROWS.contains(&(m as usize)) {
        with_fourth_stage(&schedule, device)
    } else {
        None
    };
    Some(fourth.filter(|s| accept(s)).unwrap_or(schedule))
}

/// The rows of tiles a grouped walk (`_gG`) of `s` takes at a time for a batch of `batch`
/// GEMMs of `m x n x k` on `device`: the count that makes one wave's operands fewest bytes.
///
/// A wave of `W` cluster tiles walked in groups of `G` rows covers `G` row tiles of A and
/// `W / G` column tiles of B; its bytes, `G a + (W / G) b` for tiles of `a` and `b` bytes, are
/// fewest at `G = sqrt(W b / a)`: 16 for the 128x256 tile on 132 SMs, whose B tile is twice its
/// A tile. Each wave's bytes come from DRAM or a far L2 once and are read again from near by
/// the wave's other tiles. At 4096 x 28672 x 4096 (the Llama up and gate projection) on the
/// H100, the four transpose pairs read 0.940-0.956 of cuBLAS in groups of 8, 0.982-1.003 in
/// groups of 12, 0.986-1.008 in groups of 16, 0.979-0.981 in groups of 32 and 0.971-0.982
/// along M (all 32 row tiles, B read once from DRAM): the wave's bytes, not DRAM's, set the
/// pace (results/blas.md, 2026-12-06, tenth session). A batch's GEMMs share no operand, so
/// a group never spans two of them: at most one GEMM's row tiles.
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::hopper::chooser::model::balanced_group;
/// use kernels::hopper::HopperSchedule;
/// let wide: HopperSchedule = "128x256x64s3_n".parse().unwrap();
/// let h200 = Device::h200();
/// assert_eq!(balanced_group(&wide, (4096, 28672, 4096), 1, &h200), 16);
/// // A square tile's A and B tiles weigh the same: sqrt(132).
/// let square: HopperSchedule = "128x128x64s4_n".parse().unwrap();
/// assert_eq!(balanced_group(&square, (4096, 28672, 4096), 1, &h200), 11);
/// // A batch of 1024^3 GEMMs: one GEMM's 8 row tiles.
/// assert_eq!(balanced_group(&wide, (1024, 1024, 1024), 16, &h200), 8);
/// ```
pub fn balanced_group(
    s: &HopperSchedule,
    (m, n, _k): (usize, usize, usize),
    batch: usize,
    device: &Device,
) -> u32 {
    let (x, y) = s.cluster.blocks();
    let wave = f64::from((device.sms / s.cluster.size()).max(1));
    // A's and B's bytes per k-step of one cluster tile: its rows and its columns.
    let (rows_a, cols_b) = (f64::from(s.tile.m() * x), f64::from(s.tile.n() * y));
    let balanced = (wave * cols_b / rows_a).sqrt().round().max(1.0) as u32;
    if batch <= 1 {
        return balanced;
    }
    match (u32::try_from(m), u32::try_from(n)) {
        (Ok(m), Ok(n)) => {
            let (km, kn) = s.kernel_dims(m, n);
            balanced.min(s.cluster_tiles(km, kn).0.max(1))
        }
        _ => balanced,
    }
}

/// `s`, a 128x256 tile of 3 stages staged whole, with its staging in 128-column halves and the
/// shared memory that frees as a fourth stage (see [`FOURTH_STAGE_ROWS`]); `None` for any
/// other schedule, or where the fourth stage does not fit `device`.
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::hopper::chooser::model::with_fourth_stage;
/// use kernels::hopper::HopperSchedule;
/// let wide: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
/// let deeper = with_fourth_stage(&wide, &Device::h200()).unwrap();
/// let spelled: HopperSchedule = "128x256x64s4_e128_h_n".parse().unwrap();
/// assert_eq!(deeper, spelled);
/// let narrow: HopperSchedule = "128x192x64s4_n".parse().unwrap();
/// assert!(with_fourth_stage(&narrow, &Device::h200()).is_none());
/// ```
pub fn with_fourth_stage(s: &HopperSchedule, device: &Device) -> Option<HopperSchedule> {
    let wide_in_three = s.tile.mnk() == (128, 256, 64) && s.tile.stages() == 3;
    if !wide_in_three || s.store() != Store::Tma(SubTile::Whole) {
        return None;
    }
    let halves = Columns::new(s.tile.n() / 2, Buffers::One).ok()?;
    let staged = s.with_cooperative_store(Store::Tma(SubTile::Columns(halves)))?;
    let deeper = HopperSchedule {
        tile: staged.tile.with_stages(4).ok()?,
        ..staged
    };
    let fits = deeper.check().is_ok() && deeper.check_fit(device.smem_per_block).is_ok();
    fits.then_some(deeper)
}

/// `s` as it was before [`with_fourth_stage`]: the 128x256 tile in three stages, staged whole;
/// `None` for any other schedule. A form the epilogue warps finish needs the whole staging
/// tile that the fourth stage took.
///
/// ```
/// use kernels::hopper::chooser::model::without_fourth_stage;
/// use kernels::hopper::HopperSchedule;
/// let deeper: HopperSchedule = "128x256x64s4_e128_n".parse().unwrap();
/// let whole: HopperSchedule = "128x256x64s3_n".parse().unwrap();
/// assert_eq!(without_fourth_stage(&deeper), Some(whole));
/// assert!(without_fourth_stage(&whole).is_none());
/// ```
pub fn without_fourth_stage(s: &HopperSchedule) -> Option<HopperSchedule> {
    let halves = Columns::new(128, Buffers::One).ok()?;
    let fourth = s.tile.mnk() == (128, 256, 64)
        && s.tile.stages() == 4
        && s.store() == Store::Tma(SubTile::Columns(halves));
    if !fourth {
        return None;
    }
    let whole = s.with_cooperative_store(Store::Tma(SubTile::Whole))?;
    let three = HopperSchedule {
        tile: whole.tile.with_stages(3).ok()?,
        ..whole
    };
    three.check().is_ok().then_some(three)
}

/// Whether `s`'s launch for a batch of `batch` GEMMs of `m x n x k` on `device` shares every
/// tile's k-tiles out by shape (few tiles), as a streamed walk would.
fn shares_every_tile(
    s: &HopperSchedule,
    (m, n, k): (usize, usize, usize),
    batch: usize,
    device: &Device,
) -> bool {
    let dims = (u32::try_from(m), u32::try_from(n), u32::try_from(k));
    let (Ok(m), Ok(n), Ok(k)) = dims else {
        return false;
    };
    let count = u32::try_from(batch).unwrap_or(u32::MAX);
    let (km, kn) = s.kernel_dims(m, n);
    let (tiles_m, tiles_n) = s.batch_cluster_tiles(km, kn, count);
    let resident = device.sms / s.cluster.size();
    let split = launch_batched(s, (km, kn, k), count, resident, device.l2_bytes).split;
    u64::from(split.sk_tiles) == tiles_m * u64::from(tiles_n)
}

/// `s` with every tile's k-tiles streamed over every SM (`_k`), its shares walked in grouped
/// order.
fn streamed_walk(s: &HopperSchedule) -> HopperSchedule {
    HopperSchedule {
        order: match s.order {
            Raster::Hilbert => Raster::Grouped { group: 8 },
            order => order,
        },
        consumers: match s.consumers {
            Consumers::Cooperative(c) => Consumers::Cooperative(Cooperative {
                waves: Waves::Streamed,
                ..c
            }),
            other => other,
        },
        ..*s
    }
}
