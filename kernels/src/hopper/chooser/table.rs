//! The table of defaults: each row a shape class (a few conditions on M, N, K and the device's
//! facts), the schedule measured best there, and the results file that measured it. The first
//! row whose conditions all hold gives the schedule; a shape no row holds goes to the cost model
//! ([`super::model`]). Why each row is what it is: `results/hopper_default_notes.md`.

use dsl_core::pipeline::StreamKSplit;

use crate::gemm::Device;

/// One condition of a row, on the problem `m x n x k` and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// `m <= v`.
    MAtMost(usize),
    /// `m > v`.
    MAbove(usize),
    /// `n == v`.
    NIs(usize),
    /// `n >= v`.
    NAtLeast(usize),
    /// `k <= v`.
    KAtMost(usize),
    /// `k > v`.
    KAbove(usize),
    /// `k >= v`.
    KAtLeast(usize),
    /// `n` in tiles of `v` rows (swapped, the weights' tiles) fit in one wave of the SMs.
    NTilesInOneWave(usize),
    /// `n` in tiles of `v` rows take more than one wave.
    NTilesPastOneWave(usize),
    /// `n` in tiles of `rows` rows fill at most `percent` percent of one wave.
    NTilesFillAtMost {
        /// The tile's rows along N.
        rows: usize,
        /// The share of the SMs, in percent.
        percent: usize,
    },
    /// `n` in tiles of `rows` rows fill more than `percent` percent of one wave.
    NTilesFillMoreThan {
        /// The tile's rows along N.
        rows: usize,
        /// The share of the SMs, in percent.
        percent: usize,
    },
    /// `n` in tiles of `rows` rows, each taken twice (two token tiles a weight tile), take
    /// twice the waves they take once: the pair's finer last wave leaves no fewer SMs idle.
    TwoTokenTilesTakeTwiceTheWaves(usize),
    /// The width of one row of tiles filling the SMs in one wave (N over the SMs, rounded up
    /// to 16) is in `lo..=hi`.
    OneWaveWidth(u32, u32),
    /// 128 x 64 tiles few enough for stream-K to share every one out
    /// ([`StreamKSplit::few_enough_to_share_all`]).
    FewTilesToShareOut,
    /// A, B and D (16-bit) together pass the L2.
    PastL2,
}

impl Cond {
    /// Whether the condition holds for `m x n x k` on `device`.
    pub fn holds(self, shape: (usize, usize, usize), device: &Device) -> bool {
        self.holds_batch(shape, 1, device)
    }

    /// Whether the condition holds for a strided batch of `batch` GEMMs of `m x n x k` on
    /// `device`, run in one launch: the conditions on the shape are each GEMM's; those on the
    /// waves (the tiles over the SMs) and on the L2 count the whole batch's tiles and bytes. A
    /// batch of 1 is [`Cond::holds`].
    ///
    /// ```
    /// use kernels::gemm::Device;
    /// use kernels::hopper::chooser::table::Cond;
    /// let h200 = Device::h200();
    /// // 2048 weight rows in 64-row tiles: 32 tiles, one wave; 8 GEMMs of them, two waves.
    /// assert!(Cond::NTilesInOneWave(64).holds((16, 2048, 4096), &h200));
    /// assert!(!Cond::NTilesInOneWave(64).holds_batch((16, 2048, 4096), 8, &h200));
    /// assert!(Cond::MAtMost(64).holds_batch((16, 2048, 4096), 8, &h200));
    /// ```
    pub fn holds_batch(
        self,
        (m, n, k): (usize, usize, usize),
        batch: usize,
        device: &Device,
    ) -> bool {
        let sms = device.sms.max(1) as usize;
        let b = batch.max(1);
        match self {
            Cond::MAtMost(v) => m <= v,
            Cond::MAbove(v) => m > v,
            Cond::NIs(v) => n == v,
            Cond::NAtLeast(v) => n >= v,
            Cond::KAtMost(v) => k <= v,
            Cond::KAbove(v) => k > v,
            Cond::KAtLeast(v) => k >= v,
            Cond::NTilesInOneWave(rows) => n.div_ceil(rows).saturating_mul(b) <= sms,
            Cond::NTilesPastOneWave(rows) => n.div_ceil(rows).saturating_mul(b) > sms,
            Cond::NTilesFillAtMost { rows, percent } => {
                n.div_ceil(rows).saturating_mul(b).saturating_mul(100) <= sms * percent
            }
            Cond::NTilesFillMoreThan { rows, percent } => {
                n.div_ceil(rows).saturating_mul(b).saturating_mul(100) > sms * percent
            }
            Cond::TwoTokenTilesTakeTwiceTheWaves(rows) => {
                let tiles = n.div_ceil(rows).saturating_mul(b);
                tiles.saturating_mul(2).div_ceil(sms) == 2 * tiles.div_ceil(sms)
            }
            Cond::OneWaveWidth(lo, hi) => {
                (lo as usize..=hi as usize).contains(&one_wave_width_batched(n, b, device))
            }
            Cond::FewTilesToShareOut => {
                let tiles = (m.div_ceil(128) * n.div_ceil(64)) as u64 * b as u64;
                StreamKSplit::few_enough_to_share_all(tiles, sms as u64)
            }
            Cond::PastL2 => {
                (m as u128) * ((k + n) as u128) * 2 * b as u128 > u128::from(device.l2_bytes)
            }
        }
    }
}

/// The width of one row of tiles that fills the device's SMs in one wave: N over the SMs,
/// rounded up to 16.
pub fn one_wave_width(n: usize, device: &Device) -> usize {
    one_wave_width_batched(n, 1, device)
}

/// [`one_wave_width`] for a batch of `batch` GEMMs in one launch, each a row of tiles: N over
/// the SMs each GEMM has (the SMs over the batch, at least one), rounded up to 16.
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::hopper::chooser::table::{one_wave_width, one_wave_width_batched};
/// let h200 = Device::h200();
/// assert_eq!(one_wave_width(6144, &h200), 48);
/// // 4 GEMMs: 33 SMs each, tiles 187 wide rounded up to 192.
/// assert_eq!(one_wave_width_batched(6144, 4, &h200), 192);
/// ```
pub fn one_wave_width_batched(n: usize, batch: usize, device: &Device) -> usize {
    let sms = (device.sms.max(1) as usize / batch.max(1)).max(1);
    n.div_ceil(sms).next_multiple_of(16)
}

/// The schedule a row gives: a spelling whose holes the shape fills, `{tokens8}` (a swapped
/// schedule's token tile, [`super::model::token_tile`]: M in as few tiles of at most 256 as
/// hold it, each rounded up to 8, at least 16), `{tokens16}` (the same rounded up to 16: a
/// token tile a cluster along the weights multicasts in halves), `{pair8}` (M in two token tiles,
/// [`super::model::token_pair_tile`]) and `{wave16}` ([`one_wave_width`]),
/// and whether its stages are as written or the most that fit up to a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// The spelling, with holes.
    pub spelling: &'static str,
    /// `Some(cap)`: the most stages that fit, up to `cap`, in place of the spelling's.
    pub most_stages: Option<u32>,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The shape class, in words.
    pub class: &'static str,
    /// The conditions that make a shape the row's (all of them).
    pub when: &'static [Cond],
    /// The schedule.
    pub schedule: Template,
    /// The results file that measured it.
    pub results: &'static str,
}

const fn spelled(spelling: &'static str) -> Template {
    Template {
        spelling,
        most_stages: None,
    }
}

const fn most_stages(spelling: &'static str, cap: u32) -> Template {
    Template {
        spelling,
        most_stages: Some(cap),
    }
}

/// The rows, in the order they are tried.
pub const TABLE: &[Row] = &[
    Row {
        class: "decode (M up to 64) whose 64-row weight tiles fit in one wave",
        when: &[Cond::MAtMost(64), Cond::NTilesInOneWave(64)],
        schedule: most_stages("64x{tokens8}x128s3_f1_vfln_t_z", 12),
        results: "results/midm.md",
    },
    Row {
        class: "decode 64 wide past a wave of 128-row weight tiles",
        when: &[
            Cond::MAtMost(64),
            Cond::MAbove(48),
            Cond::NTilesPastOneWave(128),
        ],
        schedule: spelled("128x64x64s8_c4x1_f1_vfln_t_z"),
        results: "results/h200_hopper_levers_2026-12-02b.md",
    },
    Row {
        class: "decode past a wave of 64-row weight tiles",
        when: &[Cond::MAtMost(64)],
        schedule: spelled("128x{tokens8}x64s8_vfln_t_z"),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 65 to 111 over weights whose one wave of tiles is 48 to 64 wide: the \
                tokens one tile wide, the weights in 64-row tiles, every tile's k-tiles \
                streamed over every SM",
        when: &[
            Cond::MAbove(64),
            Cond::MAtMost(111),
            Cond::OneWaveWidth(48, 64),
        ],
        schedule: most_stages("64x{tokens8}x64s3_f1_vfln_k_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "one row of tiles (M up to 128) 48 to 160 wide in one wave",
        when: &[Cond::MAtMost(128), Cond::OneWaveWidth(48, 160)],
        schedule: most_stages("128x{wave16}x64s3_f1_l256_vlfn", 8),
        results: "results/h200_hopper_levers_2026-12-01g.md",
    },
    Row {
        class: "a long K (8192 on) over one row of tiles, few enough to share out",
        when: &[
            Cond::MAtMost(128),
            Cond::KAtLeast(8192),
            Cond::FewTilesToShareOut,
        ],
        schedule: spelled("128x64x64s8_c1x2_f1_vlfn"),
        results: "results/h200_hopper_levers_2026-12-02b.md",
    },
    Row {
        class: "a short K (128 to 256) whose B is one 256-wide tile, past the L2",
        when: &[
            Cond::MAbove(128),
            Cond::NIs(256),
            Cond::KAbove(128),
            Cond::KAtMost(256),
            Cond::PastL2,
        ],
        schedule: spelled("64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf"),
        results: "results/h200_hopper_ws.md",
    },
    Row {
        class: "a short K (up to 256) whose B is one 256-wide tile",
        when: &[Cond::MAbove(128), Cond::NIs(256), Cond::KAtMost(256)],
        schedule: spelled("64x256x64s8_f1_e128_r4_p_l0_vfnf"),
        results: "results/h200_hopper_levers_2026-12-02b.md",
    },
    Row {
        class: "a short K (up to 512), N 256 or more",
        when: &[Cond::MAbove(128), Cond::KAtMost(512), Cond::NAtLeast(256)],
        schedule: spelled("128x256x64s4_e128"),
        results: "results/h200_hopper_levers_2026-12-01h.md",
    },
    Row {
        class: "a short K (up to 512), N below 256",
        when: &[Cond::MAbove(128), Cond::KAtMost(512)],
        schedule: spelled("128x128x64s5"),
        results: "results/h200_hopper_stream_k_levers.md",
    },
    Row {
        class: "few tokens (M 129 to 160) whose weights' 64-row tiles fill at most 3/4 of a \
                wave: the tokens one tile wide, the weights in 64-row tiles (a deeper ring), \
                every tile's k-tiles streamed over every SM",
        when: &[
            Cond::MAbove(128),
            Cond::MAtMost(160),
            Cond::NTilesFillAtMost {
                rows: 64,
                percent: 75,
            },
        ],
        schedule: most_stages("64x{tokens8}x64s3_f1_vfln_k_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 209 to 256 whose weights' 128-row tiles fit in one wave, over a long K \
                (16384 on): two 128-row token tiles, unswapped, in clusters of two along the \
                weights, every tile's k-tiles streamed over every SM",
        when: &[
            Cond::MAbove(208),
            Cond::MAtMost(256),
            Cond::NTilesInOneWave(128),
            Cond::KAtLeast(16384),
        ],
        schedule: spelled("128x128x64s6_c2x1_k"),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 209 to 256 whose weights' 128-row tiles fit in one wave: two 128-row \
                token tiles, unswapped, in clusters of two along the weights",
        when: &[
            Cond::MAbove(208),
            Cond::MAtMost(256),
            Cond::NTilesInOneWave(128),
        ],
        schedule: spelled("128x128x64s6_c2x1_n"),
        results: "results/midm.md",
    },
    Row {
        class: "few tokens (M 129 to 208) whose weights' 128-row tiles take at most 7/4 waves, \
                where two token tiles would take twice the waves of one: the tokens one tile \
                wide, in clusters of two along the weights, whole tiles",
        when: &[
            Cond::MAbove(128),
            Cond::MAtMost(208),
            Cond::NTilesFillAtMost {
                rows: 128,
                percent: 175,
            },
            Cond::TwoTokenTilesTakeTwiceTheWaves(128),
        ],
        schedule: most_stages("128x{tokens16}x64s3_c2x1_f1_l256_vfln_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "few tokens (M 129 to 208): the tokens in two tiles, in clusters of two along \
                the tokens that load each weight tile once for both (multicast), whole tiles",
        when: &[Cond::MAbove(128), Cond::MAtMost(208)],
        schedule: most_stages("128x{pair8}x64s3_c1x2_n_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 257 to 320: two token tiles, in clusters of two along the tokens that \
                load each weight tile once for both (multicast), whole tiles",
        when: &[Cond::MAbove(256), Cond::MAtMost(320)],
        schedule: most_stages("128x{pair8}x64s3_c1x2_n_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 321 to 352 (three 128-row token tiles would waste a tenth of their rows) \
                whose weights' 128-row tiles take more than one wave and at most 7/4, K 4096 to \
                8192: as 257 to 320 tokens, two token tiles in clusters of two along the tokens",
        when: &[
            Cond::MAbove(320),
            Cond::MAtMost(352),
            Cond::NTilesPastOneWave(128),
            Cond::NTilesFillAtMost {
                rows: 128,
                percent: 175,
            },
            Cond::KAtLeast(4096),
            Cond::KAtMost(8192),
        ],
        schedule: most_stages("128x{pair8}x64s3_c1x2_n_t_z", 8),
        results: "results/midm.md",
    },
    Row {
        class: "tokens 321 to 352 over weights whose 128-row tiles take more than five waves: \
                192-row weight tiles (three consumers) and two token tiles, in clusters of two \
                along the tokens",
        when: &[
            Cond::MAbove(320),
            Cond::MAtMost(352),
            Cond::NTilesFillMoreThan {
                rows: 128,
                percent: 500,
            },
        ],
        schedule: spelled("192x{pair8}x64s3_c1x2_n_t_z"),
        results: "results/midm.md",
    },
];

impl Template {
    /// The spelling with its holes filled for `m x n` on `device`.
    pub fn fill(&self, shape: (usize, usize), device: &Device) -> String {
        self.fill_for(shape, self.granules()[0], 1, device)
    }

    /// The spelling with its holes filled for a batch of `batch` GEMMs of `m x n` in one launch
    /// (`{wave16}` is [`one_wave_width_batched`]), with `{tokens8}` and `{pair8}` rounded up to
    /// `granule` (a multiple of 8) rather than to 8: a wider token tile, where an operand's
    /// staging needs its rows in larger blocks ([`super::choose_for`]).
    pub fn fill_for(
        &self,
        (m, n): (usize, usize),
        granule: usize,
        batch: usize,
        device: &Device,
    ) -> String {
        self.spelling
            .replace(
                "{tokens8}",
                &super::model::token_tile(m, granule).to_string(),
            )
            .replace(
                "{tokens16}",
                &super::model::token_tile(m, granule.max(16)).to_string(),
            )
            .replace(
                "{pair8}",
                &super::model::token_pair_tile(m, granule).to_string(),
            )
            .replace(
                "{wave16}",
                &one_wave_width_batched(n, batch, device).to_string(),
            )
    }

    /// What the spelling's token width may round M up to, narrowest first: 8 for `{tokens8}`
    /// and `{pair8}` (16 for `{tokens16}`), then wider ones where the narrower leaves an operand's shared-memory atom
    /// unswizzled ([`super::choose_for`]); one granule where the tile does not follow M.
    pub fn granules(&self) -> &'static [usize] {
        if self.spelling.contains("{tokens8}") || self.spelling.contains("{pair8}") {
            &M_GRANULES
        } else if self.spelling.contains("{tokens16}") {
            &M_GRANULES[1..]
        } else {
            &M_GRANULES[1..2]
        }
    }
}

/// The roundings of M a token tile may take, narrowest first ([`Template::granules`]).
pub const M_GRANULES: [usize; 4] = [8, 16, 32, 64];
