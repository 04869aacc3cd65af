//! The Blackwell program's schedule: orthogonal parts, each a value whose wrong combinations
//! cannot be written ([`BlackwellConfig`]), the tutorial's three steps as named values of it
//! ([`Step`]), and what follows from a configuration: tile shapes, thread and role counts,
//! barrier counts, the bytes each stage's loads bring, shared memory and TMEM columns.

use dsl_core::ir::op::CtaGroup;
use thiserror::Error;

/// A-rows (and output rows) one block loads and writes back per MMA consumer: the rows of one
/// block's share of the MMA, 128 (the one-block M = 128, or each block's half of the pair's M
/// = 256); one TMEM lane each.
pub const BLOCK_M: u32 = 128;

/// K of one pipeline stage: 64 16-bit elements, one 128-byte swizzle row.
pub const BLOCK_K: u32 = 64;

/// Bytes of one 16-bit element.
pub const ELEM_BYTES: u32 = 2;

/// The shared memory a block of an sm_100 SM may have (227 KiB), static and dynamic together.
pub const SMEM_PER_BLOCK: u32 = 232_448;

/// Shared memory a block takes before its dynamic part: the barriers and the TMEM address (a
/// few hundred bytes), padded to the 1024-byte alignment of the dynamic part (the 128-byte
/// swizzle's atoms repeat every 1024 bytes).
pub const STATIC_SMEM_BYTES: u32 = 1024;

/// The deepest ring a configuration has (shared memory caps it lower: 6 stages of step 7).
pub const MAX_DEPTH: u32 = 16;

/// The first named barrier of the writeback warpgroups (`bar.sync 10 + c, 128`, as the tutorial's
/// `warpgroup_sync(wg_id + 10)`).
pub const WRITEBACK_BARRIER: u32 = 10;

/// The MMA consumers of each stage (the tutorial's `NUM_CONSUMER`): one, or two that compute
/// different rows of A against the same staged B tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumers {
    /// One MMA warp, one accumulator, one writeback warpgroup.
    One,
    /// Two MMA warps sharing each stage's B tile, each its own rows of A (a consumer axis of
    /// the A ring), accumulator (TMEM columns `[c * N, (c + 1) * N)`) and writeback warpgroup.
    TwoSharingB,
}

impl Consumers {
    /// 1 or 2.
    pub fn count(self) -> u32 {
        match self {
            Consumers::One => 1,
            Consumers::TwoSharingB => 2,
        }
    }
}

/// A bug planted on purpose, for the simulator's tests to find (not for programs).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlantedBug {
    /// The TMA producer's `PipelineState` starts at phase 0 like the MMA's (the tutorial's first
    /// exercise): both first waits block, on barriers nobody will complete.
    BothPhasesZero,
    /// The even block's arrival expects one block's bytes instead of the pair's (the tutorial's
    /// second exercise): its phase completes before the odd block's loads land. Only a
    /// configuration with [`CtaGroup::Two`] has the factor to drop.
    ExpectTxWithoutCtaGroup,
    /// The TMA producer leaves without its tail: it does not wait for the MMA's release of the
    /// last stages, so a block may exit before the last `tcgen05.commit`s land on its barriers
    /// (a pair's odd block before the even block's commits; one block alone before its own,
    /// whose arrivals the PTX ISA orders after no other commit's). CUTLASS's `load_tail` is
    /// what prevents it.
    NoProducerTail,
}

/// The tutorial's steps, each a configuration of [`BlackwellConfig`] ([`Step::config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Step 7: warp specialization in one block: a TMA producer warp, an MMA warp, a writeback
    /// warpgroup, a 128 x 128 tile.
    Seven,
    /// Step 8: the two-block cluster: one MMA for both blocks (`cta_group::2`), a 256 x 256
    /// tile, the epilogue in 128-column chunks.
    Eight,
    /// Step 9: two MMA consumers sharing B in the two-block cluster: a 512 x 256 tile, the
    /// epilogue 64 columns at a time.
    Nine,
}

impl Step {
    /// The three steps.
    pub const ALL: [Step; 3] = [Step::Seven, Step::Eight, Step::Nine];

    /// The step's configuration with a ring of `depth` stages (the tutorial: 2 for step 7, 4 for
    /// steps 8 and 9).
    pub fn config(self, depth: u32) -> BlackwellConfig {
        let (cta_group, consumers, epilogue_columns) = match self {
            Step::Seven => (CtaGroup::One, Consumers::One, 128),
            Step::Eight => (CtaGroup::Two, Consumers::One, 128),
            Step::Nine => (CtaGroup::Two, Consumers::TwoSharingB, 64),
        };
        BlackwellConfig {
            depth,
            tile_n: 128,
            cta_group,
            consumers,
            epilogue_columns,
            planted: None,
        }
    }

    /// The depth the tutorial gives the step.
    pub fn tutorial_depth(self) -> u32 {
        match self {
            Step::Seven => 2,
            Step::Eight | Step::Nine => 4,
        }
    }

    /// `step7`, `step8`, `step9`.
    pub fn name(self) -> &'static str {
        match self {
            Step::Seven => "step7",
            Step::Eight => "step8",
            Step::Nine => "step9",
        }
    }

    /// The step called `name` ([`Step::name`]).
    pub fn named(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The step's configuration at the depth the tutorial gives it.
    pub fn tutorial_config(self) -> BlackwellConfig {
        self.config(self.tutorial_depth())
    }
}

/// A configuration of the Blackwell program: the program's schedule, spelled as `rute gemm
/// --kernel blackwell_ws --config` takes it (`step8`, `step7_d4`, `d4_b2_c2_e64`: see
/// [`super::spelling`]). Every part is independent of the others: any pipeline depth, B tile,
/// CTA group, consumer count and epilogue chunk combine, and [`BlackwellConfig::check`] asks
/// only for ranges, divisibility and the fit in shared memory and TMEM. A value built from its
/// fields is checked where it is used ([`BlackwellPlan::new`](super::BlackwellPlan::new), the
/// program's `plan`); a parsed one at its parse.
///
/// ```
/// use kernels::blackwell::{BlackwellConfig, Consumers};
/// let cfg: BlackwellConfig = "step9".parse().unwrap();
/// assert_eq!(cfg, BlackwellConfig::step9(4));
/// assert_eq!((cfg.cluster_tile(), cfg.consumers), ((512, 256), Consumers::TwoSharingB));
/// assert_eq!(BlackwellConfig::step7(4).to_string(), "step7_d4");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlackwellConfig {
    /// Stages of the A/B ring (the tutorial's `PIPE_DEPTH`), 2 to [`MAX_DEPTH`].
    pub depth: u32,
    /// Rows of B one block loads per stage (the tutorial's `BLK_N`): the MMA's N is this times the
    /// CTA group. A multiple of 16, at most 256 / the group.
    pub tile_n: u32,
    /// One block per MMA, or the pair of a two-block cluster (the tutorial's `CTA_GROUP`).
    pub cta_group: CtaGroup,
    /// MMA consumers per stage (the tutorial's `NUM_CONSUMER`).
    pub consumers: Consumers,
    /// Accumulator columns a writeback warpgroup reads, converts and stores at a time (the
    /// tutorial's `EPI_N`): 16, 32, 64 or 128, dividing the MMA's N.
    pub epilogue_columns: u32,
    #[doc(hidden)]
    pub planted: Option<PlantedBug>,
}

/// Why a configuration is outside what the program supports, as a sentence naming the part.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The spelling is not read as a configuration (an unknown part, a number missing, a part
    /// given twice).
    #[error("{0}")]
    Spelling(String),
    /// A part is out of its range.
    #[error("{0}")]
    Range(String),
    /// The configuration does not fit a block's shared memory or TMEM.
    #[error("{0}")]
    Fit(String),
}

impl BlackwellConfig {
    /// Step 7 with `depth` stages.
    pub fn step7(depth: u32) -> BlackwellConfig {
        Step::Seven.config(depth)
    }

    /// Step 8 with `depth` stages.
    pub fn step8(depth: u32) -> BlackwellConfig {
        Step::Eight.config(depth)
    }

    /// Step 9 with `depth` stages.
    pub fn step9(depth: u32) -> BlackwellConfig {
        Step::Nine.config(depth)
    }

    /// The same configuration with `bug` planted (for the simulator's tests).
    #[doc(hidden)]
    pub fn with_planted(self, bug: PlantedBug) -> BlackwellConfig {
        BlackwellConfig {
            planted: Some(bug),
            ..self
        }
    }

    /// Whether the program supports the configuration: the ranges of each part and the fit of
    /// its shared memory (in an sm_100 block's [`SMEM_PER_BLOCK`]) and TMEM.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_fit(SMEM_PER_BLOCK)
    }

    /// [`BlackwellConfig::check`] with a device's limit of `smem_per_block` bytes of shared
    /// memory per block, static and dynamic together ([`BlackwellConfig::block_smem_bytes`]).
    pub fn check_fit(&self, smem_per_block: u32) -> Result<(), ConfigError> {
        self.check_parts()?;
        if self.block_smem_bytes() > smem_per_block {
            return Err(ConfigError::Fit(format!(
                "{} bytes of shared memory ({} stages of {} bytes, {} of staging and \
                 {STATIC_SMEM_BYTES} of barriers) do not fit the block's {smem_per_block}",
                self.block_smem_bytes(),
                self.depth,
                self.stage_bytes(),
                self.staging_bytes()
            )));
        }
        Ok(())
    }

    /// The ranges of each part, and TMEM's fit: what makes the byte counts safe to compute.
    fn check_parts(&self) -> Result<(), ConfigError> {
        let range = |why: String| Err(ConfigError::Range(why));
        if !(2..=MAX_DEPTH).contains(&self.depth) {
            return range(format!(
                "a ring of {} stage(s): 2 (the fewest for loads and MMAs to overlap) to \
                 {MAX_DEPTH}",
                self.depth
            ));
        }
        let max_n = 256 / self.cta_group.count();
        if !self.tile_n.is_multiple_of(16) || !(16..=max_n).contains(&self.tile_n) {
            return range(format!(
                "B tiles of {} rows: a multiple of 16 up to {max_n} (the MMA's N, {} times it, \
                 is at most 256)",
                self.tile_n,
                self.cta_group.count()
            ));
        }
        let e = self.epilogue_columns;
        if ![16, 32, 64, 128].contains(&e) || !self.mma_n().is_multiple_of(e) {
            return range(format!(
                "an epilogue of {e} columns at a time: 16, 32, 64 or 128, dividing the MMA's N \
                 = {}",
                self.mma_n()
            ));
        }
        let tmem = self.consumers.count() * self.mma_n();
        if tmem > dsl_core::tensor::TMEM_COLUMNS {
            return Err(ConfigError::Fit(format!(
                "{} accumulators of {} columns do not fit TMEM's 512",
                self.consumers.count(),
                self.mma_n()
            )));
        }
        Ok(())
    }

    /// The MMA's N: the B rows of every block of the group (the tutorial's `MMA_N`).
    pub fn mma_n(&self) -> u32 {
        self.tile_n * self.cta_group.count()
    }

    /// The MMA's M: every block's [`BLOCK_M`] rows.
    pub fn mma_m(&self) -> u32 {
        BLOCK_M * self.cta_group.count()
    }

    /// The output tile one cluster computes per step of its walk, `(rows, columns)`: every
    /// consumer's MMA rows, the MMA's columns (the tutorial's 128 x 128, 256 x 256, 512 x 256).
    pub fn cluster_tile(&self) -> (u32, u32) {
        (self.consumers.count() * self.mma_m(), self.mma_n())
    }

    /// Blocks per cluster (the CTA group's).
    pub fn cluster_blocks(&self) -> u32 {
        self.cta_group.count()
    }

    /// Warpgroups of a block: one writeback warpgroup per consumer, then the one whose warps
    /// are the TMA producer (warp 3) and the MMA consumers (warps 0, 1): the tutorial's
    /// `WG_NUMBER`.
    pub fn warpgroups(&self) -> u32 {
        self.consumers.count() + 1
    }

    /// Threads of a block.
    pub fn threads(&self) -> u32 {
        128 * self.warpgroups()
    }

    /// Bytes of A one block loads per stage (every consumer's rows).
    pub fn stage_a_bytes(&self) -> u32 {
        self.consumers.count() * BLOCK_M * BLOCK_K * ELEM_BYTES
    }

    /// Bytes of B one block loads per stage.
    pub fn stage_b_bytes(&self) -> u32 {
        self.tile_n * BLOCK_K * ELEM_BYTES
    }

    /// Bytes one block's loads bring per stage: `(NUM_CONSUMER * BLK_M * BLK_K + BLK_N * BLK_K)
    /// * F16_SIZE`.
    pub fn stage_bytes(&self) -> u32 {
        self.stage_a_bytes() + self.stage_b_bytes()
    }

    /// What the stage's one `arrive.expect_tx` announces: the bytes every load that completes
    /// on the barrier brings. With a pair both blocks' loads complete on the even block's
    /// barrier, so it is `CTA_GROUP` times [`BlackwellConfig::stage_bytes`] (the tutorial's second
    /// exercise: [`super::exercises::expect_tx_per_barrier`]).
    pub fn expect_tx_bytes(&self) -> u32 {
        match self.planted {
            Some(PlantedBug::ExpectTxWithoutCtaGroup) => self.stage_bytes(),
            _ => self.cta_group.count() * self.stage_bytes(),
        }
    }

    /// Bytes of one writeback warpgroup's staging tile (`BLK_M x EPI_N` of 16-bit elements).
    pub fn staging_tile_bytes(&self) -> u32 {
        BLOCK_M * self.epilogue_columns * ELEM_BYTES
    }

    /// Bytes of every writeback warpgroup's staging tile.
    pub fn staging_bytes(&self) -> u32 {
        self.consumers.count() * self.staging_tile_bytes()
    }

    /// Dynamic shared memory of a block: the ring's stages, then the staging tiles (the
    /// barriers and the TMEM address are static).
    pub fn smem_bytes(&self) -> u32 {
        self.depth * self.stage_bytes() + self.staging_bytes()
    }

    /// Shared memory of a block, static and dynamic: [`STATIC_SMEM_BYTES`] and
    /// [`BlackwellConfig::smem_bytes`].
    pub fn block_smem_bytes(&self) -> u32 {
        STATIC_SMEM_BYTES + self.smem_bytes()
    }

    /// TMEM columns the block allocates: every consumer's accumulator, rounded up to a power of
    /// two of at least 32 (what `tcgen05.alloc` takes).
    pub fn tmem_columns(&self) -> u32 {
        (self.consumers.count() * self.mma_n())
            .max(32)
            .next_power_of_two()
    }

    /// Arrivals each barrier's phase expects, as the program initializes them: `tma2mma` 1
    /// (the even block's producer, with the bytes), `mma2tma` one commit per consumer,
    /// `mma2ld` 1 per consumer slot, `ld2mma` every writeback thread of every block of the
    /// group (128, or 256 for a pair).
    pub fn barrier_counts(&self) -> BarrierCounts {
        BarrierCounts {
            tma2mma: 1,
            mma2tma: self.consumers.count(),
            mma2ld: 1,
            ld2mma: 128 * self.cta_group.count(),
        }
    }

    /// The multicast mask of the MMA's commits: both blocks of a pair (`0b11`), none (this
    /// block only) for one block.
    pub fn commit_mask(&self) -> Option<u32> {
        match self.cta_group {
            CtaGroup::One => None,
            CtaGroup::Two => Some(0b11),
        }
    }
}

/// The arrival counts the four barriers are initialized with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierCounts {
    /// TMA -> MMA, per stage.
    pub tma2mma: u32,
    /// MMA -> TMA, per stage.
    pub mma2tma: u32,
    /// MMA -> writeback, per consumer.
    pub mma2ld: u32,
    /// Writeback -> MMA, per consumer.
    pub ld2mma: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tutorial's numbers: tiles, threads, barrier counts, the expect-tx bytes and the shared
    /// memory of its "Pipeline Depth" section ((128 x 64 + 128 x 64) x 2 = 32 KiB a stage,
    /// 32 KiB of staging: depth 4 160 KiB, depth 6 224 KiB).
    #[test]
    fn the_steps_have_the_tutorials_numbers() {
        let s7 = BlackwellConfig::step7(2);
        assert_eq!((s7.cluster_tile(), s7.threads()), ((128, 128), 256));
        assert_eq!(s7.stage_bytes(), 32 * 1024);
        assert_eq!(BlackwellConfig::step7(4).smem_bytes(), 160 * 1024);
        assert_eq!(BlackwellConfig::step7(6).smem_bytes(), 224 * 1024);
        assert!(BlackwellConfig::step7(6).check().is_ok());
        assert!(BlackwellConfig::step7(7).check().is_err());
        assert_eq!(s7.expect_tx_bytes(), 32 * 1024);
        assert_eq!(
            s7.barrier_counts(),
            BarrierCounts {
                tma2mma: 1,
                mma2tma: 1,
                mma2ld: 1,
                ld2mma: 128
            }
        );
        let s8 = BlackwellConfig::step8(4);
        assert_eq!((s8.cluster_tile(), s8.mma_n()), ((256, 256), 256));
        assert_eq!(s8.expect_tx_bytes(), 2 * 32 * 1024);
        assert_eq!(s8.barrier_counts().ld2mma, 256);
        assert_eq!(s8.commit_mask(), Some(3));
        let s9 = BlackwellConfig::step9(4);
        assert_eq!((s9.cluster_tile(), s9.threads()), ((512, 256), 384));
        assert_eq!(s9.expect_tx_bytes(), 2 * (2 * 128 * 64 + 128 * 64) * 2);
        assert_eq!(s9.barrier_counts().mma2tma, 2);
        assert_eq!(s9.tmem_columns(), 512);
        assert_eq!(s9.smem_bytes(), 4 * 48 * 1024 + 32 * 1024);
        for step in Step::ALL {
            assert!(
                step.config(step.tutorial_depth()).check().is_ok(),
                "{step:?}"
            );
        }
    }

    #[test]
    fn parts_out_of_range_are_refused_with_a_sentence() {
        let e = BlackwellConfig {
            tile_n: 256,
            ..BlackwellConfig::step8(2)
        }
        .check()
        .unwrap_err()
        .to_string();
        assert!(e.contains("up to 128"), "{e}");
        let e = BlackwellConfig {
            epilogue_columns: 96,
            ..BlackwellConfig::step7(2)
        }
        .check()
        .unwrap_err()
        .to_string();
        assert!(e.contains("96 columns"), "{e}");
        assert!(BlackwellConfig::step9(1).check().is_err());
        // Two consumers of N = 256 in one block: 512 columns, the whole TMEM; deeper does not fit
        // shared memory.
        let one_block = BlackwellConfig {
            tile_n: 256,
            ..BlackwellConfig::step9(2)
        };
        let one_block = BlackwellConfig {
            cta_group: CtaGroup::One,
            ..one_block
        };
        assert!(one_block.check().is_ok(), "{:?}", one_block.check());
        assert_eq!(one_block.tmem_columns(), 512);
    }

    #[test]
    fn the_planted_byte_count_drops_the_cta_group() {
        let bug = BlackwellConfig::step8(4).with_planted(PlantedBug::ExpectTxWithoutCtaGroup);
        assert_eq!(bug.expect_tx_bytes(), 32 * 1024);
        assert_eq!(BlackwellConfig::step8(4).expect_tx_bytes(), 64 * 1024);
    }

    /// No value of the public fields makes the checks overflow: they refuse it with a sentence.
    #[test]
    fn any_field_values_are_refused_without_a_panic() {
        for depth in [0, 1, 17, u32::MAX] {
            let e = BlackwellConfig {
                depth,
                ..BlackwellConfig::step7(2)
            }
            .check()
            .unwrap_err();
            assert!(
                e.to_string().contains(&format!("a ring of {depth} stage")),
                "{e}"
            );
        }
        for tile_n in [0, 8, 264, u32::MAX] {
            let cfg = BlackwellConfig {
                tile_n,
                ..BlackwellConfig::step7(2)
            };
            assert!(cfg.check_fit(u32::MAX).is_err(), "{tile_n}");
        }
        let cfg = BlackwellConfig {
            epilogue_columns: u32::MAX,
            ..BlackwellConfig::step7(2)
        };
        assert!(cfg.check().is_err());
    }

    /// The block's shared memory counts the static kilobyte: a device with a kilobyte less than
    /// the dynamic part's need refuses it.
    #[test]
    fn the_fit_counts_the_static_barriers() {
        let cfg = BlackwellConfig::step7(6);
        assert_eq!(cfg.block_smem_bytes(), 224 * 1024 + 1024);
        assert_eq!(cfg.check_fit(225 * 1024), Ok(()));
        let e = cfg.check_fit(225 * 1024 - 1).unwrap_err().to_string();
        assert!(
            e.contains("1024 of barriers") && e.contains("230399"),
            "{e}"
        );
    }
}
