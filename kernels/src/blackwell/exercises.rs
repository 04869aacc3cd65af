//! The tutorial's three exercises, answered with the program's own numbers.
//!
//! # 1. Both `PipelineState`s at phase 0
//!
//! A barrier starts in phase 0, not yet complete. `try_wait.parity p` passes once the phase of
//! parity `p` has completed, and "the phase before phase 0" counts as a completed phase of
//! parity 1: so a first wait for parity 1 passes at once, a first wait for parity 0 blocks until
//! phase 0 completes. That is why the producer starts at phase 1 (its buffers start empty) and
//! the consumer at phase 0 (nothing is loaded yet). With both at 0 (two stages):
//!
//! ```text
//!              t0                      t1                        ...
//! TMA  (ps 0/0) mma2tma[0].wait(0) ---- blocks: mma2tma[0] completes only when the MMA
//!               |                       commits stage 0, which it has not read yet
//!               v                                                  (waits forever)
//! MMA  (ps 0/0) tma2mma[0].wait(0) ---- blocks: tma2mma[0] completes only when the TMA
//!                                       loads stage 0, which waits for mma2tma[0]
//!                                                                  (waits forever)
//! writeback     mma2ld[0].wait(0) ----- blocks: the MMA never commits the tile
//! ```
//!
//! Every role waits on a barrier that only another waiting role can complete: a deadlock, with
//! no load issued. (With both at 1 instead, the MMA's first wait passes on an empty stage and it
//! multiplies whatever the shared memory holds: the other failure the tutorial names.)
//! [`ring_model`] runs the ring's two ends on the host and reports either outcome;
//! [`PlantedBug::BothPhasesZero`](super::PlantedBug) builds the real program with it, for the
//! simulator (spelled `step7_bugphases`).
//!
//! # 2. Why the expect-tx count is multiplied by the CTA group
//!
//! A phase of `tma2mma[s]` completes when its pending arrivals reach 0 *and* its transaction
//! count is back to 0. With a pair, both blocks' TMA loads (`SM100_TMA_2SM_LOAD`) complete their
//! bytes on the *even* block's barrier, and only the even block arrives (once, with
//! `arrive.expect_tx`). So that one arrival must announce the bytes of both blocks: `CTA_GROUP x
//! (NUM_CONSUMER x BLK_M x BLK_K + BLK_N x BLK_K) x 2`. Announce one block's and the phase
//! completes as soon as as many bytes have landed, typically the even block's own, while the
//! odd block's are still in flight: the MMA reads the odd block's stage before it is written,
//! and the late bytes count against the next phase. [`expect_tx_per_barrier`] computes what each
//! block's loads bring to the barrier and what the arrival announces;
//! [`PlantedBug::ExpectTxWithoutCtaGroup`](super::PlantedBug) builds the program without the
//! factor, for the simulator (spelled `step8_bugtx`).
//!
//! # 3. Why the consumers share B and not A
//!
//! [`bytes_per_output_tile`] counts, for a configuration, what the cluster loads per stage and
//! per output element for three choices: two consumers sharing B (the tutorial's, a `2*G*128 x
//! G*BLK_N` tile), two sharing A (a `G*128 x 2*G*BLK_N` tile) and two independent consumers.
//! With the tutorial's square blocks (`BLK_M = BLK_N = 128`) sharing either operand loads the same
//! bytes per output element, 25% fewer than not sharing (48 KiB a stage per block instead of 64
//! for the same output): the bytes decide *that* an operand is shared, not *which*; each
//! shared stage saves one block of the shared operand per extra consumer, so the operand with
//! the larger block is the one to share. In this program a block of A is always 128 rows (one
//! TMEM lane per output row) and a block of B `tile_n <= 128`, so sharing B never saves more than
//! sharing A would; the tutorial shares B because the consumer then owns output *rows* (its A rows,
//! its TMEM lanes, its writeback warpgroup's rows), which is how the pair already splits the
//! MMA, and the tests show the two choices' bytes are equal at its configuration.

use dsl_core::ir::op::CtaGroup;

use super::config::{BlackwellConfig, BLOCK_K, BLOCK_M, ELEM_BYTES};

/// How the host model of a ring ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RingOutcome {
    /// Every k-tile was loaded and consumed.
    Completed,
    /// Neither end can move: each waits on a barrier phase only the other could complete.
    Deadlock {
        /// The producer's stage and the parity it waits for (on `empty`, the tutorial's `mma2tma`).
        producer: (u32, u32),
        /// The consumer's stage and parity (on `full`, `tma2mma`).
        consumer: (u32, u32),
    },
    /// The consumer's wait passed on a stage the producer had not filled for that lap: it read
    /// the stage before the data landed.
    ReadBeforeFilled {
        /// The stage.
        stage: u32,
        /// The k-tile the consumer thought it was reading.
        k_tile: u32,
    },
}

/// One barrier's phases in the host model: how many have completed.
#[derive(Clone, Copy, Default)]
struct Phases(u32);

impl Phases {
    /// `try_wait.parity(p)`: the phase of parity `p` before the current one has completed, i.e.
    /// the current (incomplete) phase's parity is not `p`.
    fn passes(self, parity: u32) -> bool {
        self.0 % 2 != parity
    }
}

/// The ring's two ends on the host: a producer filling `depth` stages and a consumer emptying
/// them, for `k_tiles` k-tiles, their `PipelineState`s starting at `producer_phase` and
/// `consumer_phase`, each stage guarded by a `full` (producer -> consumer) and an `empty`
/// (consumer -> producer) barrier completing one phase per arrival; the two ends take turns
/// (the consumer first), each moving as far as its waits let it.
pub fn ring_model(
    depth: u32,
    (producer_phase, consumer_phase): (u32, u32),
    k_tiles: u32,
) -> RingOutcome {
    let depth = depth.max(1) as usize;
    let (mut full, mut empty) = (
        vec![Phases::default(); depth],
        vec![Phases::default(); depth],
    );
    let mut fills = vec![0u32; depth];
    let (mut p, mut c) = (0u32, 0u32); // k-tiles produced / consumed
    let (mut pp, mut cp) = (producer_phase, consumer_phase);
    loop {
        let mut moved = false;
        // The consumer moves first: a wait that passes too early shows before the producer
        // could fill the stage.
        while c < k_tiles {
            let s = c as usize % depth;
            if !full[s].passes(cp) {
                break;
            }
            // The lap this read belongs to must have been filled.
            if fills[s] <= c / depth as u32 {
                return RingOutcome::ReadBeforeFilled {
                    stage: s as u32,
                    k_tile: c,
                };
            }
            empty[s].0 += 1;
            c += 1;
            if (c as usize).is_multiple_of(depth) {
                cp ^= 1;
            }
            moved = true;
        }
        while p < k_tiles {
            let s = p as usize % depth;
            if !empty[s].passes(pp) {
                break;
            }
            fills[s] += 1;
            full[s].0 += 1;
            p += 1;
            if (p as usize).is_multiple_of(depth) {
                pp ^= 1;
            }
            moved = true;
        }
        if p == k_tiles && c == k_tiles {
            return RingOutcome::Completed;
        }
        if !moved {
            return RingOutcome::Deadlock {
                producer: (p % depth as u32, pp),
                consumer: (c % depth as u32, cp),
            };
        }
    }
}

/// What the stage barrier `tma2mma[s]` of the even block (the only one the MMA waits on) is
/// told and what lands on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectTx {
    /// The bytes the stage's one `arrive.expect_tx` announces.
    pub announced: u32,
    /// The bytes each block's loads complete on it, block by block of the group.
    pub landing: Vec<u32>,
}

impl ExpectTx {
    /// Whether the phase can complete before every load has landed: the announcement is less
    /// than what lands, so it reaches 0 with some bytes still in flight.
    pub fn completes_early(&self) -> bool {
        self.announced < self.landing.iter().sum::<u32>()
    }
}

/// The tutorial's second exercise for `cfg`: every block of the group loads
/// [`BlackwellConfig::stage_bytes`] per stage onto the even block's barrier, and the even block
/// announces [`BlackwellConfig::expect_tx_bytes`].
pub fn expect_tx_per_barrier(cfg: &BlackwellConfig) -> ExpectTx {
    ExpectTx {
        announced: cfg.expect_tx_bytes(),
        landing: vec![cfg.stage_bytes(); cfg.cta_group.count() as usize],
    }
}

/// Which operand two MMA consumers share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Both read the stage's B tile; each has its own A rows (the tutorial's step 9).
    B,
    /// Both read the stage's A tile; each has its own B rows.
    A,
    /// Neither: each has its own A and B (two independent tiles).
    Nothing,
}

/// The loads of one choice of [`Sharing`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileBytes {
    /// The cluster's output tile, rows x columns.
    pub tile: (u32, u32),
    /// Bytes the cluster's loads bring per stage (every block).
    pub per_stage: u32,
    /// Bytes loaded per output element per k-tile of 64.
    pub per_output_element: f64,
}

/// The tutorial's third exercise: what two consumers in `cfg`'s cluster (its CTA group, its
/// `tile_n`, 128-row A blocks) load per stage for an output tile, for each [`Sharing`].
pub fn bytes_per_output_tile(cfg: &BlackwellConfig, sharing: Sharing) -> TileBytes {
    let g = cfg.cta_group.count();
    let consumers = 2;
    let (a_block, b_block) = (
        BLOCK_M * BLOCK_K * ELEM_BYTES,
        cfg.tile_n * BLOCK_K * ELEM_BYTES,
    );
    // Per block of the group: the A and B blocks it loads, and the output it computes.
    let (a_blocks, b_blocks, rows, cols) = match sharing {
        Sharing::B => (consumers, 1, consumers * BLOCK_M, cfg.tile_n),
        Sharing::A => (1, consumers, BLOCK_M, consumers * cfg.tile_n),
        // Two independent tiles: twice one consumer's tile, reported as its union.
        Sharing::Nothing => (consumers, consumers, consumers * BLOCK_M, cfg.tile_n),
    };
    let per_stage = g * (a_blocks * a_block + b_blocks * b_block);
    let tile = (g * rows, g * cols);
    TileBytes {
        tile,
        per_stage,
        per_output_element: f64::from(per_stage) / (f64::from(tile.0) * f64::from(tile.1)),
    }
}

/// Whether a planted byte count without the CTA-group factor would change anything: only a
/// pair has the factor.
pub fn has_cta_group_factor(cfg: &BlackwellConfig) -> bool {
    cfg.cta_group == CtaGroup::Two
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blackwell::{BlackwellConfig, PlantedBug};

    /// The tutorial's phases (producer 1, consumer 0) run every k-tile through any depth; both at 0
    /// deadlock at once, each end waiting on stage 0 for parity 0; both at 1 read stage 0
    /// before it was filled.
    #[test]
    fn exercise_1_the_phases() {
        for depth in 1..=6 {
            for k in [1, 2, 7, 40] {
                assert_eq!(ring_model(depth, (1, 0), k), RingOutcome::Completed);
            }
            assert_eq!(
                ring_model(depth, (0, 0), 5),
                RingOutcome::Deadlock {
                    producer: (0, 0),
                    consumer: (0, 0)
                }
            );
            assert_eq!(
                ring_model(depth, (1, 1), 5),
                RingOutcome::ReadBeforeFilled {
                    stage: 0,
                    k_tile: 0
                }
            );
        }
    }

    /// One block: its loads bring what it announces. A pair: each block's loads land on the
    /// even block's barrier, the announcement is both (2 x 32 KiB in step 8, 2 x 48 KiB in step
    /// 9); without the factor the phase completes with one block's bytes still in flight.
    #[test]
    fn exercise_2_the_bytes_each_barrier_sees() {
        let s7 = expect_tx_per_barrier(&BlackwellConfig::step7(2));
        assert_eq!((s7.announced, s7.landing.clone()), (32768, vec![32768]));
        assert!(!s7.completes_early());
        let s8 = expect_tx_per_barrier(&BlackwellConfig::step8(4));
        assert_eq!(
            (s8.announced, s8.landing.clone()),
            (65536, vec![32768, 32768])
        );
        assert!(!s8.completes_early());
        let s9 = expect_tx_per_barrier(&BlackwellConfig::step9(4));
        assert_eq!(s9.announced, 98304);
        for step in [BlackwellConfig::step8(4), BlackwellConfig::step9(4)] {
            let bug = step.with_planted(PlantedBug::ExpectTxWithoutCtaGroup);
            assert!(expect_tx_per_barrier(&bug).completes_early(), "{bug}");
            assert!(has_cta_group_factor(&bug));
        }
        // One block has no factor to drop.
        let one = BlackwellConfig::step7(2).with_planted(PlantedBug::ExpectTxWithoutCtaGroup);
        assert!(!expect_tx_per_barrier(&one).completes_early());
    }

    /// Step 9's cluster: sharing B loads 2 x (2 x 16 + 16) KiB = 96 KiB a stage for 512 x 256,
    /// sharing A 96 KiB for 256 x 512, not sharing 128 KiB for the same 512 x 256: the same
    /// bytes per output element either way at 128 x 128 blocks, 25% fewer than not sharing.
    /// With narrower B blocks (64 rows) sharing A would load fewer.
    #[test]
    fn exercise_3_the_bytes_per_output_tile() {
        let cfg = BlackwellConfig::step9(4);
        let b = bytes_per_output_tile(&cfg, Sharing::B);
        let a = bytes_per_output_tile(&cfg, Sharing::A);
        let none = bytes_per_output_tile(&cfg, Sharing::Nothing);
        assert_eq!((b.tile, b.per_stage), ((512, 256), 98304));
        assert_eq!((a.tile, a.per_stage), ((256, 512), 98304));
        assert_eq!((none.tile, none.per_stage), ((512, 256), 131072));
        assert_eq!(b.per_output_element, a.per_output_element);
        assert_eq!(b.per_output_element / none.per_output_element, 0.75);
        // The program's step 9 loads exactly the shared-B bytes.
        assert_eq!(cfg.expect_tx_bytes(), b.per_stage);
        let narrow = BlackwellConfig { tile_n: 64, ..cfg };
        let (b, a) = (
            bytes_per_output_tile(&narrow, Sharing::B),
            bytes_per_output_tile(&narrow, Sharing::A),
        );
        assert!(a.per_output_element < b.per_output_element);
    }
}
