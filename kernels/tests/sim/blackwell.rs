//! The warp-specialized Blackwell GEMM (the tutorial's steps 7, 8 and 9: TMA into an mbarrier
//! ring, `tcgen05.mma` into tensor memory, one block or a pair, one MMA consumer or two, the
//! writeback through `tcgen05.ld` and TMA stores), each step on shapes where one block or pair
//! walks several tiles with residues in M, N and K, over the four seeds.

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
