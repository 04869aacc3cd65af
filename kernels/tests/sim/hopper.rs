//! The warp-specialized Hopper GEMM (TMA loads into an mbarrier ring, wgmma, persistent blocks,
//! TMA or direct stores) at schedules chosen for what they exercise, beyond the sweep's one
//! shape each: the default plan, ping-pong consumers, clusters along M and N, stream-K,
//! swapped operands, direct stores and a tile queue, each on a shape with residues in M, N and
//! K and more than one tile per block, on a device of few SMs, over the four seeds.

use kernels::cases::{GemmCase, Values};
use kernels::gemm::{Accum, GemmDtype};
use kernels::hopper::{launch, HopperSchedule};

fn every_run(config: Option<&str>, shape: (usize, usize, usize), sms: u32) {
    super::gemm_runs("hopper_ws", config, shape, sms);
}

/// The H200's default plan at 512x256x256 (ping-pong consumers with B resident), on 8 SMs;
/// the same seed gives the same report.
#[test]
fn the_default_plan_at_512x256x256() {
    every_run(None, (512, 256, 256), 8);
    let c = GemmCase::program(
        "hopper_ws",
        None,
        (GemmDtype::F16, Accum::F32),
        (512, 256, 256),
        Values::SmallIntegers,
    )
    .unwrap();
    super::passes_and_repeats(&c);
}

/// Cooperative consumers and TMA stores, two blocks walking four tiles each.
#[test]
fn the_wide_tile_walks_several_tiles_per_block() {
    every_run(Some(&HopperSchedule::WIDE.to_string()), (500, 520, 136), 2);
}

/// Ping-pong consumers, each owning whole tiles.
#[test]
fn ping_pong_consumers() {
    every_run(Some("128x128x64s5_p"), (300, 264, 136), 2);
}

/// Clusters along M and along N, the shared operand multicast.
#[test]
fn clusters_of_two() {
    every_run(Some("128x128x64s5_c2x1"), (520, 136, 136), 2);
    every_run(Some("128x64x64s8_c1x2"), (136, 264, 136), 2);
}

/// Stream-K: the k-tiles of two tiles shared out over four blocks, the partial sums handed
/// over through the workspace.
#[test]
fn stream_k_shares_the_tiles_out() {
    let s = HopperSchedule::WIDE;
    let (m, n, k) = (200, 136, 1000);
    let l = launch(&s, m, n, k, 4, 60 << 20);
    assert!(
        l.split.sk_tiles > 0,
        "the shape must be split: {:?}",
        l.split
    );
    every_run(
        Some(&s.to_string()),
        (m as usize, n as usize, k as usize),
        4,
    );
}

/// A and B swapped (the kernel computes D^T).
#[test]
fn swapped_operands() {
    every_run(Some("128x64x64s8_t"), (136, 296, 136), 2);
}

/// Swapped tiles whose N (the tokens) is a multiple of 8 but not of 16, the widths cuBLAS takes
/// for few tokens (152 for 150, 136 for 130, 168 for two tiles of 333): the `wgmma` N and the
/// staging tile's columns odd multiples of 8, the staging written one element at a time (no
/// `stmatrix`); whole tiles in evened waves, stream-K over every tile (`_k`, partial sums
/// handed over), a batch in flight, a 64-row tile of one consumer and a cluster along N (A
/// multicast: along M each block's half of B would be 4 rows off whole swizzle atoms); the
/// tokens, the weights and K off the tiles, each block walking several units.
#[test]
fn swapped_tiles_eight_columns_wide() {
    for (config, shape) in [
        ("128x152x64s5_n_t", (150, 520, 200)),
        ("128x136x64s5_f1_vfln_k_t", (130, 520, 264)),
        ("64x136x64s8_f1_vfln_t", (130, 520, 200)),
        ("128x168x64s4_n_t", (333, 520, 264)),
        ("128x152x64s5_c1x2_f1_l256_vfln_k_t", (250, 520, 264)),
        ("128x168x64s4_f1_vfln_t", (65, 1000, 200)),
    ] {
        every_run(Some(config), shape, 4);
    }
}

/// D stored from the registers, no staging tile.
#[test]
fn direct_stores() {
    every_run(Some("128x256x64s4_f1_u8"), (264, 520, 136), 2);
}

/// Tiles taken from a queue (an atomic counter in the workspace).
#[test]
fn a_tile_queue() {
    every_run(
        Some("64x256x64s7_f1_e128_r4_p_q_l256_vnnf"),
        (200, 256, 256),
        2,
    );
}

/// The default plan and cluster schedules on larger shapes (`--ignored`).
#[test]
#[ignore = "minutes: a survey of larger shapes"]
fn larger_shapes() {
    for (config, shape) in [
        (None, (1000, 776, 264)),
        (Some("128x256x64s3_c2x1"), (1024, 1024, 1024)),
        (Some("128x256x64s3_c2x1_h"), (1000, 776, 520)),
    ] {
        every_run(config, shape, 8);
    }
}

/// The mid-size M schedules (the table's few-token rows, the model's swapped tiles and its
/// streamed walks, the tuner's swapped token tiles) on the tokens past a tile's residue, the
/// weights and K with residues.
#[test]
fn the_mid_size_schedules() {
    for (config, shape) in [
        ("128x160x64s5_c2x1_f1_l256_vfln_k_t", (150, 1032, 1032)),
        ("128x144x64s5_c2x1_f1_l256_vfln_k_t", (129, 1032, 1000)),
        ("128x208x64s4_c2x1_f1_l256_vfln_k_t", (209, 520, 1032)),
        ("128x256x64s4_f1_e128_l256_vlfn_k", (257, 520, 1000)),
        ("128x176x64s4_n_t", (333, 520, 1000)),
        ("128x256x64s3_k", (449, 520, 520)),
        ("128x64x64s8_k", (200, 1032, 1000)),
        ("64x160x128s3_f1_vfln_t", (150, 1032, 1000)),
    ] {
        every_run(Some(config), shape, 4);
    }
}
