//! The warp-specialized Blackwell GEMM (the tutorial's steps 7, 8 and 9: TMA into an mbarrier
//! ring, `tcgen05.mma` into tensor memory, one block or a pair, one MMA consumer or two, the
//! writeback through `tcgen05.ld` and TMA stores), each step on shapes where one block or pair
//! walks several tiles with residues in M, N and K, over the four seeds; and the tutorial's
//! first two exercises planted in the real program, caught with the Rust line.

use dsl_core::sim::FindingKind;
use kernels::cases::simulate::Simulated;
use kernels::cases::Values;
use kernels::gemm::GemmDtype;

/// Step 7 (one block: TMA producer, MMA warp, writeback warpgroup): one block walks six tiles.
#[test]
fn step7_walks_several_tiles() {
    super::gemm_runs("blackwell_ws", Some("step7_d4"), (200, 264, 136), 1);
}

/// Step 8 (a pair of blocks, one `cta_group::2` MMA): one pair walks several cluster tiles.
#[test]
fn step8_walks_several_cluster_tiles() {
    super::gemm_runs("blackwell_ws", Some("step8"), (520, 264, 136), 2);
}

/// Step 9 (two MMA consumers sharing B in the pair).
#[test]
fn step9_walks_several_cluster_tiles() {
    super::gemm_runs("blackwell_ws", Some("step9"), (1000, 264, 136), 2);
}

/// The three steps at the shapes, 512x256x256, 1024x768x320 and one with residues and
/// more than one tile per cluster, on 8 SMs.
#[test]
fn the_steps_at_the_held_shapes() {
    for config in ["step7", "step8", "step9"] {
        for shape in [(512, 256, 256), (1024, 768, 320), (1000, 776, 264)] {
            super::gemm_runs("blackwell_ws", Some(config), shape, 8);
        }
    }
}

/// The findings of `config` on a small shape over the four seeds: each run's kinds and the
/// files of their Rust lines.
fn findings(config: &str) -> Vec<(FindingKind, String)> {
    let case = super::gemm_case(
        "blackwell_ws",
        Some(config),
        (256, 256, 256),
        2,
        GemmDtype::F16,
        Values::SmallIntegers,
    );
    let sim = Simulated::new(&case).unwrap();
    super::SEEDS
        .iter()
        .flat_map(|&(seed, schedule)| {
            let o = sim.run(seed, schedule).unwrap();
            assert!(!o.passed(), "{config} seed {seed} passed: {o}");
            o.findings()
                .map(|f| {
                    let at = f.location.map(|l| l.to_string()).unwrap_or_default();
                    (f.kind, at)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Exercise 1: the producer's and the MMA warp's `PipelineState`s both at phase 0. The
/// producer's first wait on `mma2tma` wants a phase nobody completes: every role parks, a
/// deadlock named at a wait in the program's source, under every seed.
#[test]
fn both_phases_at_zero_deadlock_at_a_wait_of_the_program() {
    for config in ["step7_bugphases", "step9_bugphases"] {
        let found = findings(config);
        let deadlocks: Vec<_> = found
            .iter()
            .filter(|(k, _)| *k == FindingKind::Deadlock)
            .collect();
        assert_eq!(deadlocks.len(), super::SEEDS.len(), "{config}: {found:?}");
        for (_, at) in deadlocks {
            assert!(at.contains("kernels/src/blackwell/"), "{config}: {at}");
        }
    }
}

/// A producer that leaves without its tail: the MMA's last `tcgen05.commit`s to the stages'
/// `mma2tma` barriers arrive when their MMAs complete, and nothing the block waits for orders
/// them before its exit (a commit's arrival is ordered after no other commit's, not even the
/// accumulator's commit the writeback waits on). The simulator finds the commit reaching a
/// block that may have exited, at the program's line: a pair's odd block, and one block alone
/// (its own commits into its own shared memory).
#[test]
fn a_producer_that_skips_its_tail_lets_a_commit_land_past_an_exit() {
    for config in ["step7_bugtail", "step8_bugtail", "step9_bugtail"] {
        let found = findings(config);
        let late: Vec<_> = found
            .iter()
            .filter(|(k, at)| {
                *k == FindingKind::PeerExited && at.contains("kernels/src/blackwell/program.rs")
            })
            .collect();
        assert!(!late.is_empty(), "{config}: {found:?}");
    }
}

/// Exercise 2: the pair's `arrive.expect_tx` announcing one block's bytes, not the pair's. The
/// phase completes when the even block's bytes have landed and the odd block's count against
/// the next: the simulator reports the barrier's transaction count running past zero (or the
/// MMA reading a stage not yet written) at the program's Rust line.
#[test]
fn expect_tx_without_the_cta_group_is_barrier_misuse() {
    for config in ["step8_bugtx", "step9_bugtx"] {
        let found = findings(config);
        assert!(
            found.iter().any(|(k, at)| matches!(
                k,
                FindingKind::Mbarrier | FindingKind::AsyncProxyRace | FindingKind::DataRace
            ) && at.contains("kernels/src/blackwell/")),
            "{config}: {found:?}"
        );
    }
}
