//! The schedule's spelling, its refusals and its derived sizes.

use dsl_core::pipeline::{Raster, RegisterBudget, StreamKRegion};

use super::*;

/// The H200's L2, for the launches these tests make.
const L2: u64 = 60 << 20;

/// Each of `specs` is refused with a sentence containing `why`.
fn refused(specs: &[&str], why: &str) {
    for spec in specs {
        let e = spec.parse::<HopperSchedule>().unwrap_err().to_string();
        assert!(e.contains(why), "{spec}: {e}");
    }
}

#[test]
fn spellings_round_trip_and_refusals_say_why() {
    for s in HopperSchedule::SWEEP {
        let c: HopperSchedule = s.parse().unwrap();
        assert_eq!(c.to_string(), s);
    }
    assert_eq!(
        "wide".parse::<HopperSchedule>().unwrap(),
        HopperSchedule::WIDE
    );
    refused(&["128x256x64s5"], "shared memory");
    refused(&["96x256x64s3"], "tile M is 64, 128, 192 or 256");
    refused(&["128x256x64s3_c8x1"], "1x1, 2x1, 1x2, 4x1 or 1x4");
    refused(&["128x256x64s3_c2x2"], "4x1 or 1x4");
    // Four blocks share a 16-wide B: 4 rows each, not whole atoms.
    assert!("128x64x64s8_c4x1_t".parse::<HopperSchedule>().is_ok());
    refused(
        &["128x128x128s3_c2x1", "128x16x64s8_c4x1_t"],
        "multicast a slice",
    );
    refused(&["128x256x64s3_y"], "unknown part `_y`");
    // The list of parts names every one the spelling has.
    refused(
        &["128x256x64s3_y"],
        "_eE, _d2, _rR, _p, _q, _ql, _aN, _o, _lB, _vABD, _w, _uB, _x, _b, _n, _k, _t, _z)",
    );
    // Stream-K over every tile: cooperative consumers', swapped or not, in a cluster or not;
    // not beside evened waves, a region placed after the whole tiles, or ping-pong consumers.
    for ok in [
        "128x256x64s3_k",
        "128x160x64s5_c2x1_f1_l256_vfln_k_t",
        "128x256x64s4_f1_e128_l256_vlfn_k",
    ] {
        let s: HopperSchedule = ok.parse().unwrap();
        assert!(
            s.streamed() && !s.even_waves() && s.to_string() == ok,
            "{ok}"
        );
        assert!(s.describe().contains("stream-K over every tile"), "{ok}");
    }
    refused(
        &[
            "128x256x64s3_n_k",
            "128x256x64s3_w_k",
            "64x256x64s8_e128_r4_p_k",
            "128x256x64s3_k_k",
        ],
        "_k",
    );
    let mut streamed_last: HopperSchedule = "128x256x64s3_w".parse().unwrap();
    if let Consumers::Cooperative(c) = &mut streamed_last.consumers {
        c.waves = Waves::Streamed;
    }
    assert_eq!(streamed_last.check(), Err(Refusal::Streamed));
    let even: HopperSchedule = "128x256x64s3_n".parse().unwrap();
    assert!(even.even_waves() && even.to_string() == "128x256x64s3_n");
    refused(
        &["64x256x64s7_f1_e128_r4_p_ql_n", "64x256x64s8_r4_p_u16_b_n"],
        "evened waves (_n)",
    );
    refused(
        &[
            "128x256x64s4_e96",
            "128x256x64s4_e256",
            "128x64x64s8_e64",
            "256x160x64s4_e40",
        ],
        "multiple of 16 columns that divides tile N",
    );
    // Widths the 128-byte swizzle does not tile stage plain rows.
    refused(&["128x200x64s4"], "multiple of 16");
    for ok in ["128x160x64s5", "256x160x64s4_e32", "128x224x64s4_e112"] {
        assert!(ok.parse::<HopperSchedule>().is_ok(), "{ok}");
    }
    // Ping-pong: each consumer a tile of its own (64 or 128 rows), staged apart.
    let p: HopperSchedule = "64x256x64s8_e128_r4_p".parse().unwrap();
    assert_eq!(
        (p.consumers(), p.consumer_rows(), p.stage_consumers()),
        (2, 64, 1)
    );
    assert_eq!(p.threads(), 384);
    assert_eq!(p.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 2 * 64 * 128 * 2);
    let q: HopperSchedule = "128x128x64s5_p".parse().unwrap();
    assert_eq!((q.consumers(), q.consumer_rows()), (2, 128));
    assert_eq!(q.smem_bytes(), 5 * 256 * 128 + 2 * 128 * 128 * 2);
    // One staging tile for both: room for a stage more, or for a whole tile's store.
    let o: HopperSchedule = "128x128x64s6_f1_p_o".parse().unwrap();
    assert_eq!(o.staging_tiles(), 1);
    assert_eq!(o.smem_bytes(), 6 * 256 * 128 + 128 * 128 * 2);
    refused(&["128x128x64s6_f1_p"], "shared memory");
    let w: HopperSchedule = "64x256x64s8_f1_r4_p_o".parse().unwrap();
    assert_eq!(w.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 64 * 256 * 2);
    refused(
        &["128x256x64s3_o", "128x128x64s5_o"],
        "for ping-pong consumers",
    );
    refused(
        &[
            "128x256x64s3_p",
            "256x64x64s5_p",
            "64x64x64s8_p_t",
            "64x256x64s4_c2x1_p",
        ],
        "ping-pong",
    );
    refused(&["128x256x64s4_e128_t"], "stages its output whole");
    // A 192-row tile: three consumer warpgroups of 64 rows, 512 threads sharing the SM's
    // registers (128 each at entry), so at most 96 accumulators each, stored through the
    // staging tile.
    let three: HopperSchedule = "192x168x64s3_c1x2_n_t".parse().unwrap();
    assert_eq!(
        (
            three.consumers(),
            three.consumer_rows(),
            three.stage_consumers()
        ),
        (3, 64, 3)
    );
    assert_eq!((three.threads(), three.registers()), (512, (32, 160)));
    assert_eq!(three.registers().0 * 128 + three.registers().1 * 384, 65536);
    let two: HopperSchedule = "128x168x64s4_n_t".parse().unwrap();
    assert_eq!(two.registers(), (40, 232));
    refused(
        &["192x208x64s3_n", "192x96x64s4_u16"],
        "three consumer warpgroups",
    );
    refused(&["192x128x64s4_p"], "ping-pong");
    // A swapped tile's staging swizzled (`_t_z`): 64 rows per consumer, one swizzle row a
    // column; spelled back as read.
    for z in [
        "128x168x64s4_n_t_z",
        "64x136x64s8_f1_vfln_k_t_z",
        "192x168x64s3_c1x2_n_t_z",
    ] {
        let s: HopperSchedule = z.parse().unwrap();
        assert_eq!(
            s.transposed_staging(),
            Some(TransposedStaging::Swizzled),
            "{z}"
        );
        assert_eq!(s.to_string(), z);
    }
    assert_eq!(
        "128x168x64s4_n_t"
            .parse::<HopperSchedule>()
            .unwrap()
            .transposed_staging(),
        Some(TransposedStaging::Plain)
    );
    refused(&["256x112x64s3_n_t_z"], "64 rows per consumer");
    refused(
        &["128x256x64s3_z", "128x64x64s8_p_z"],
        "are not swapped here",
    );
    refused(&["128x168x64s4_t_z_z"], "given twice");
    refused(
        &["96x128x64s4", "320x128x64s2"],
        "tile M is 64, 128, 192 or 256",
    );
    // A resident B: one block's (or a cluster along M's, each block loading a slice), one
    // tile of N and at most its k-tiles of K.
    refused(&["128x256x64s5_e64_r4_c1x2"], "shared by a cluster along M");
    let shared: HopperSchedule = "64x256x64s8_c2x1_e128_r4_p".parse().unwrap();
    assert!(!shared.ring_shared() && shared.ring_sharers() == 1);
    let ring: HopperSchedule = "128x256x64s3_c2x1".parse().unwrap();
    assert!(ring.ring_shared() && ring.ring_sharers() == 2);
    refused(&["128x256x64s5_r4"], "shared memory");
    let r: HopperSchedule = "128x256x64s5_e64_r4".parse().unwrap();
    assert_eq!(r.smem_bytes(), (5 * 128 + 4 * 256) * 64 * 2 + 128 * 64 * 2);
    assert!(r.takes(81920, 256, 256).is_ok());
    let e = r.takes(81920, 264, 256).unwrap_err();
    assert!(e.contains("N = 264 and K = 256 do not fit"), "{e}");
    assert!(r.takes(100, 256, 320).is_err());
    // Sub-tiles leave room for a stage more: 4 stages of 128x256 do not fit staged whole.
    refused(&["128x256x64s4"], "shared memory");
    // Two staging tiles per consumer, in turns over an even number of sub-tiles.
    let d: HopperSchedule = "64x256x64s8_f1_e64_d2_r4_p_l0_vfnf".parse().unwrap();
    assert_eq!((d.staging_buffers(), d.staging_tiles()), (2, 4));
    assert_eq!(d.smem_bytes(), (8 * 64 + 4 * 256) * 128 + 4 * 64 * 64 * 2);
    refused(&["64x256x64s6_f1_e128_d2_r4_p"], "shared memory");
    refused(
        &["128x256x64s3_d2", "128x192x64s4_e64_d2"],
        "an even number of sub-tiles",
    );
    // With one staging for both ping-pong consumers (`_o`), the two tiles are theirs in
    // turns: two in all, not four.
    let o: HopperSchedule = "64x256x64s10_f1_e64_d2_r4_p_o_l0_vfnf".parse().unwrap();
    assert_eq!(o.staging_tiles(), 2);
    assert_eq!(o.smem_bytes(), (10 * 64 + 4 * 256) * 128 + 2 * 64 * 64 * 2);
    refused(
        &["128x256x64s4_e64_d3", "128x256x64s4_e64_d0"],
        "one or two staging",
    );
    refused(&["128x256x64s4_e64_dx"], "a number of staging tiles");
    // The stream-K region last: not for ping-pong consumers, which have none.
    let w: HopperSchedule = "128x256x64s3_w".parse().unwrap();
    assert_eq!(w.stream_k_region(), Some(StreamKRegion::Last));
    refused(&["64x256x64s8_f1_e128_r4_p_w"], "no stream-K region");
    refused(
        &["128x80x64s7_l100", "128x80x64s7_l", "128x80x64s7_l512"],
        "0, 64, 128 or 256 bytes",
    );
    // `_g1` walks along N (Triton's group of one row), `_gm` along M.
    let g1: HopperSchedule = "128x256x64s3_g1".parse().unwrap();
    assert_eq!(g1.order, Raster::Grouped { group: 1 });
    let gm: HopperSchedule = "128x256x64s3_gm".parse().unwrap();
    assert_eq!(
        (gm.order, gm.to_string().as_str()),
        (Raster::AlongM, "128x256x64s3_gm")
    );
    refused(&["128x256x64s3_g0", "128x256x64s3_gx"], "group size");
}

/// Tiles from a queue: ping-pong consumers of one-block clusters, tiles walked whole; the
/// spelling round-trips, and the launch gives the queue its words.
#[test]
fn tiles_from_a_queue_go_to_pingpong_blocks_alone() {
    let q: HopperSchedule = "64x256x64s6_f1_e128_r4_p_q_l256_vnnf".parse().unwrap();
    assert_eq!(q.queue(), Some(Take::Early));
    assert_eq!(q.to_string(), "64x256x64s6_f1_e128_r4_p_q_l256_vnnf");
    let late: HopperSchedule = "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf".parse().unwrap();
    assert_eq!(late.queue(), Some(Take::Late));
    assert_eq!(late.to_string(), "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf");
    refused(&["128x256x64s3_ql"], "tiles from a queue (_q)");
    let l = crate::hopper::launch(&q, 81920, 256, 256, 132, L2);
    assert_eq!((l.grid.0, l.split.sk_tiles), (132, 0));
    assert_eq!(
        l.workspace_elems(&q),
        u64::from(dsl_core::pipeline::QUEUE_WORDS)
    );
    refused(
        &["128x256x64s3_q", "64x256x64s8_c2x1_f1_e128_r4_p_q"],
        "tiles from a queue (_q)",
    );
    // With the last wave's rows cut into pieces (_b), the queue hands out the pieces too:
    // the walk's units past the whole tiles, finer at the end.
    let pieces: HopperSchedule = "64x256x64s12_f1_r4_p_q_l256_vnnf_u16_b".parse().unwrap();
    assert!(pieces.queue().is_some() && pieces.row_split());
    assert_eq!(
        crate::hopper::launch(&pieces, 81920, 256, 256, 132, L2)
            .grid
            .0,
        132
    );
}

/// A resident B wider than the tile only where each block stays on one column of tiles:
/// ping-pong consumers walking along N, one block per cluster, whole tiles.
#[test]
fn a_resident_b_is_one_tile_or_one_column_per_block() {
    let column: HopperSchedule = "64x128x64s8_g1_f1_r4_p".parse().unwrap();
    assert!(column.b_column_resident());
    assert!(column.takes(81920, 256, 256).is_ok());
    assert!(column.takes(300, 520, 200).is_ok());
    assert!(column.takes(81920, 256, 320).is_err(), "K past the slots");
    for spec in [
        "64x128x64s8_f1_r4_p",          // grouped by 8: a block changes column
        "64x128x64s8_gm_f1_r4_p",       // along M: likewise
        "128x128x64s4_g1_r4",           // cooperative: stream-K may share tiles out
        "64x128x64s8_g1_f1_r4_p_u16_b", // the last wave cut into rows
        "64x128x64s8_c2x1_g1_f1_r4_p",  // a cluster
    ] {
        let cfg: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert!(!cfg.b_column_resident(), "{spec}");
        let e = cfg.takes(81920, 256, 256).unwrap_err();
        assert!(e.contains("N = 256 and K = 256 do not fit"), "{spec}: {e}");
        assert!(cfg.takes(81920, 128, 256).is_ok(), "{spec}");
    }
}

/// Each part at most once: a part given twice is refused, not taken at its last value.
#[test]
fn a_part_given_twice_is_refused() {
    for (spec, part) in [
        ("128x256x64s3_f1_f1", "`_f`"),
        ("128x256x64s4_e64_e128", "`_e`"),
        ("128x256x64s3_h_g4", "`_h, _gG or _gm`"),
        ("128x256x64s3_gm_gm", "`_h, _gG or _gm`"),
        ("64x256x64s7_r4_p_q_ql", "`_q`"),
        ("128x256x64s3_c2x1_c1x2", "`_c`"),
        ("128x256x64s3_vfnf_vnnn", "`_v`"),
        ("128x256x64s3_l0_l256", "`_l`"),
        ("64x256x64s8_r4_r4_p", "`_r`"),
        ("128x16x64s8_t_t", "`_t`"),
        ("64x256x64s8_r4_p_p", "`_p`"),
    ] {
        let e = spec.parse::<HopperSchedule>().unwrap_err().to_string();
        assert!(e.contains(&format!("{part} is given twice")), "{spec}: {e}");
    }
}

/// What only one kind of consumers has is under its variant: a spelling that puts it with the
/// other kind has no value to build, and says so.
#[test]
fn a_part_without_its_place_is_refused_by_the_types() {
    for (spec, why) in [
        ("128x256x64s3_o", Refusal::OneStaging),
        ("128x256x64s3_q", Refusal::Queue),
        ("128x256x64s3_b", Refusal::RowSplit),
        ("64x256x64s8_r4_p_w", Refusal::PingPongRegion),
        ("64x64x64s8_p_t", Refusal::PingPong),
        ("128x64x64s8_r4_t", Refusal::ResidentB),
        ("128x64x64s8_e32_t", Refusal::SwappedSubTile),
        ("128x64x64s8_u8_t", Refusal::DirectStaging),
        ("64x256x64s8_r4_p_o_u16", Refusal::DirectStaging),
        ("128x256x64s4_d2", Refusal::TwoBuffers(1)),
        ("128x256x64s3_a2", Refusal::Prefetch(2)),
        ("64x256x64s8_r4_p_n_b", Refusal::EvenedWaves),
    ] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert_eq!(e.refusal(), &why, "{spec}: {e}");
    }
}

/// The parts' constructors refuse the values that would make a launch divide by zero or
/// overflow: no tile, stage, cluster, sub-tile or resident B of zero or past its range.
#[test]
fn the_parts_constructors_refuse_out_of_range_values() {
    assert_eq!(Tile::new(0, 256, 64, 3), Err(Refusal::TileM(0)));
    assert_eq!(Tile::new(128, 0, 64, 3), Err(Refusal::TileN(0)));
    assert_eq!(Tile::new(128, 264, 64, 3), Err(Refusal::TileN(264)));
    assert_eq!(Tile::new(128, 12, 64, 3), Err(Refusal::TileN(12)));
    // A multiple of 8 is a tile; whether the schedule takes it is `check`'s (`_t` only).
    assert_eq!(Tile::new(128, 8, 64, 3).map(Tile::n), Ok(8));
    assert_eq!(Tile::new(128, 256, 0, 3), Err(Refusal::TileK(0)));
    assert_eq!(Tile::new(128, 256, 64, 0), Err(Refusal::Stages(0)));
    assert_eq!(
        Tile::new(128, 256, 64, u32::MAX),
        Err(Refusal::Stages(u32::MAX))
    );
    assert_eq!(Cluster::new(0, 1), Err(Refusal::Cluster(0, 1)));
    assert_eq!(Cluster::new(2, 2), Err(Refusal::Cluster(2, 2)));
    assert_eq!(Cluster::new(1, 4).unwrap().blocks(), (1, 4));
    assert_eq!(Columns::new(0, Buffers::One), Err(Refusal::SubTile(0)));
    assert_eq!(Columns::new(24, Buffers::One), Err(Refusal::SubTile(24)));
    assert_eq!(Columns::new(256, Buffers::Two), Err(Refusal::SubTile(256)));
    assert_eq!(ResidentB::new(0, 0), Err(Refusal::ResidentKTiles(0)));
    assert_eq!(ResidentB::new(17, 0), Err(Refusal::ResidentKTiles(17)));
    assert_eq!(ResidentB::new(4, 5), Err(Refusal::Prefetch(5)));
    // A value built from parts is checked as a parsed one is.
    let pingpong = HopperSchedule {
        tile: Tile::new(256, 128, 64, 4).unwrap(),
        consumers: Consumers::PingPong(PingPong {
            b: BPlacement::Ring,
            store: PingPongStore::Tma {
                sub_tile: SubTile::Whole,
                staging: Staging::Own,
            },
            source: TileSource::Static,
            last_wave: LastWave::AsIs,
        }),
        ..HopperSchedule::WIDE
    };
    assert_eq!(pingpong.check(), Err(Refusal::PingPongTile(256, 128)));
    let grouped_by_none = HopperSchedule {
        order: Raster::Grouped { group: 0 },
        ..HopperSchedule::WIDE
    };
    assert_eq!(grouped_by_none.check(), Err(Refusal::Group));
}

/// The shared-memory fit counts the static barriers before the dynamic memory (padded to its
/// 1 KiB alignment): a limit that holds the rings and the staging but not the barriers too is
/// refused.
#[test]
fn the_static_barriers_count_in_the_fit() {
    let s: HopperSchedule = "128x128x64s6_f1_p_o".parse().unwrap();
    assert_eq!(s.static_smem_bytes(), 2 * 8 * 6);
    assert_eq!(s.block_smem_bytes(), s.smem_bytes() + 1024);
    assert!(s.block_smem_bytes() <= SMEM_LIMIT);
    assert_eq!(s.check_fit(s.block_smem_bytes()), Ok(()));
    assert!(matches!(
        s.check_fit(s.smem_bytes()),
        Err(Refusal::SharedMemory { fixed: 1024, .. })
    ));
    // The tile queue's slots and barriers, and a resident B's barrier.
    let q: HopperSchedule = "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf".parse().unwrap();
    assert_eq!(q.static_smem_bytes(), 2 * 8 * 7 + 8 + 16 + 2 * 32);
}

/// A cooperative consumer's accumulators within what ptxas fits without spilling: 160 per
/// thread through the staging, 144 stored from the registers.
#[test]
fn a_consumer_holds_no_more_accumulators_than_fit() {
    assert!("256x160x64s3_e80".parse::<HopperSchedule>().is_ok());
    for (spec, accumulators) in [("256x176x64s2_e16", 176), ("256x160x64s2_u4", 160)] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert!(
            matches!(e.refusal(), Refusal::Accumulators(256, _, a) if *a == accumulators),
            "{spec}: {e}"
        );
    }
    assert!("256x128x64s3_u16".parse::<HopperSchedule>().is_ok());
}

/// The schedules the untyped spelling accepted and could not build: tiles N of 8, 24, 40 and
/// 56 not swapped (no `stmatrix` copy of them), cooperative 256-row tiles whose accumulators
/// spill.
#[test]
fn what_could_not_be_built_is_refused_at_the_parse() {
    for n in [8, 24, 40, 56] {
        for spec in [format!("64x{n}x64s4"), format!("128x{n}x64s8_f1_p")] {
            let e = spec.parse::<HopperSchedule>().unwrap_err();
            assert_eq!(e.refusal(), &Refusal::TileN(n), "{spec}");
        }
    }
    for spec in ["256x256x64s2_e64", "256x192x64s2_e64", "256x176x64s3_e16"] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert!(
            matches!(e.refusal(), Refusal::Accumulators(256, ..)),
            "{spec}: {e}"
        );
    }
}

/// Tile N is a multiple of 16, or of 8 where A and B are swapped (`_t`): a swapped tile's
/// staging is written one element at a time, so the 8-column widths cuBLAS takes for few tokens
/// (136, 152, 168) parse, round-trip and plan, with no `stmatrix` copy; the same widths not
/// swapped, and widths off 8, are refused with the rule in a sentence.
#[test]
fn swapped_tiles_take_n_a_multiple_of_8() {
    use crate::gemm::GemmDtype;
    use crate::hopper::HopperPlan;
    for spec in [
        "128x152x64s5_n_t",
        "128x136x64s5_f1_vfln_k_t",
        "64x136x64s8_f1_vfln_t",
        "128x168x64s4_n_t",
        "128x152x64s5_c1x2_f1_l256_vfln_k_t",
        "128x8x64s8_t",
        "64x40x128s6_f1_vfln_t",
        "128x24x64s8_c1x4_t",
        "128x248x64s3_t",
    ] {
        let s: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(s.to_string(), spec);
        assert_eq!(s.tile.n() % 16, 8, "{spec}");
        let plan = HopperPlan::new(s, GemmDtype::Bf16).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert!(plan.stmatrix().is_err(), "{spec}");
        assert_eq!(plan.epilogue_values(), s.consumer_rows() * s.tile.n() / 128);
    }
    // Not swapped: the epilogue's `stmatrix` copy takes 16 columns at a time.
    for (spec, n) in [
        ("128x152x64s5_n", 152),
        ("128x136x64s5_f1_vfln_k", 136),
        ("64x168x64s4_f1_p", 168),
        ("128x8x64s8", 8),
    ] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert_eq!(e.refusal(), &Refusal::TileN(n), "{spec}");
        assert!(
            e.to_string()
                .contains("a multiple of 16 up to 256 (one wgmma, whose accumulators"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("or of 8 up to 256 with A and B swapped (_t"),
            "{e}"
        );
    }
    // Off 8, or past 256, swapped or not.
    for (spec, n) in [
        ("128x12x64s8_t", 12),
        ("128x150x64s5_t", 150),
        ("128x264x64s3_t", 264),
        ("128x0x64s3_t", 0),
    ] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert_eq!(e.refusal(), &Refusal::TileN(n), "{spec}");
    }
    // Along M, each block of a cluster multicasts a half (a quarter) of B's N rows: of an N 8
    // off a multiple of 16, not whole 8-row swizzle atoms. Such a tile takes clusters along N.
    for spec in ["128x152x64s5_c2x1_f1_l256_vfln_k_t", "128x168x64s4_c4x1_t"] {
        let e = spec.parse::<HopperSchedule>().unwrap_err();
        assert!(
            matches!(e.refusal(), Refusal::Multicast(64, ..)),
            "{spec}: {e}"
        );
    }
    // The unswapped plans keep their `stmatrix` copy.
    let wide = HopperPlan::new(HopperSchedule::WIDE, GemmDtype::F16).unwrap();
    assert!(wide.stmatrix().is_ok());
}

/// The next device run's levers (`scripts/levers.txt`, `SHAPES LEVERS [DTYPE]` a line, each
/// lever `config[@split][!]`) are schedules that take their shapes: a spelling that no longer
/// parses would cost a device call to find out.
#[test]
fn the_next_device_runs_levers_parse_and_take_their_shapes() {
    let text = include_str!("../../../../scripts/levers.txt");
    let mut levers = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let configs = match line.strip_prefix("#configs:") {
            Some(c) => (c.trim(), None),
            None if line.starts_with('#') => continue,
            None => {
                let mut f = line.split_whitespace();
                let (shapes, configs) = (f.next().unwrap(), f.next().expect("levers"));
                (configs, Some(shapes))
            }
        };
        let shapes: Vec<(u32, u32, u32)> = configs
            .1
            .map(|s| {
                s.split(',')
                    .map(|shape| {
                        let d: Vec<u32> = shape.split('x').map(|v| v.parse().unwrap()).collect();
                        (d[0], d[1], d[2])
                    })
                    .collect()
            })
            .unwrap_or_default();
        for lever in configs.0.split(',') {
            let spec = lever.trim_end_matches('!');
            let spec = spec.split_once('@').map_or(spec, |(s, _)| s);
            let s: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("`{line}`: {e}"));
            for &(m, n, k) in &shapes {
                s.takes(m, n, k)
                    .unwrap_or_else(|e| panic!("{spec} at {m}x{n}x{k}: {e}"));
            }
            levers += 1;
        }
    }
    assert!(levers > 0, "scripts/levers.txt names no lever");
}

/// The epilogue warps (`_x`): a cooperative tile staged whole, not swapped; spelled back as read, described, the same shared
/// memory as the staging it replaces, and [`HopperSchedule::with_epilogue_warps`] adds it
/// only where it is spelled.
#[test]
fn epilogue_warps_take_a_whole_cooperative_staging() {
    for ok in [
        "128x256x64s3_h_x_n",
        "128x128x64s4_c2x1_x",
        "64x64x64s4_x",
        "128x192x64s3_x_k",
        "256x128x64s3_x",
        "128x224x64s3_x",
        "256x160x64s2_x",
    ] {
        let s: HopperSchedule = ok.parse().unwrap_or_else(|e| panic!("{ok}: {e}"));
        assert!(s.epilogue_warps(), "{ok}");
        assert_eq!(s.to_string().parse::<HopperSchedule>(), Ok(s), "{ok}");
        assert!(s
            .describe()
            .contains("finished and stored by the idle producer warps"));
        let staged = s.consumers().max(1) * s.staging_tile_elems() * 2;
        assert!(s.smem_bytes() >= staged, "{ok}");
    }
    let wide: HopperSchedule = "128x256x64s3_h_n".parse().unwrap();
    let handed = wide.with_epilogue_warps().unwrap();
    assert_eq!(handed.to_string(), "128x256x64s3_h_x_n");
    assert_eq!(handed.smem_bytes(), wide.smem_bytes());
    // Schedules with no whole cooperative staging have no place for them.
    for no in [
        "128x256x64s4_e128",
        "64x128x64s4_p",
        "128x16x64s8_t",
        "128x128x64s6_u16",
    ] {
        let s: HopperSchedule = no.parse().unwrap();
        assert_eq!(s.with_epilogue_warps(), None, "{no}");
    }
    refused(&["64x128x64s4_p_x"], "ping-pong consumers (_p) each finish");
    refused(&["128x64x64s4_x_t"], "A and B are swapped (_t)");
    refused(
        &["128x128x64s6_u16_x"],
        "D is stored from the registers (_u)",
    );
    refused(
        &["128x256x64s4_e128_x", "128x256x64s4_e128_d2_x"],
        "not sub-tiles (_e, _d2)",
    );
    refused(&["128x256x64s3_x_x"], "`_x` is given twice");
}

/// `setmaxnreg` moves registers within the block's own: what the producer warpgroup gives
/// back is all the consumers can take, so the budgets of every schedule (and of its epilogue
/// warps' variant) fit what the block holds at entry, the SM's 65536 over its threads in
/// multiples of 8, as ptxas allocates it; a larger sum would leave the consumers'
/// `setmaxnreg.inc` waiting for registers no warp frees.
#[test]
fn register_budgets_fit_the_block_at_entry() {
    let mut specs: Vec<HopperSchedule> = HopperSchedule::SWEEP
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let handed: Vec<HopperSchedule> = specs
        .iter()
        .filter_map(|s| s.with_epilogue_warps())
        .collect();
    specs.extend(handed);
    let mut kinds = std::collections::BTreeSet::new();
    for s in specs {
        let at_entry = dsl_core::pipeline::registers_at_entry(s.threads());
        let (producer, consumer) = s.registers();
        assert!(
            RegisterBudget::fits(producer, consumer, 1, s.consumers()),
            "{s}: {producer} for the producer, {consumer} for {} consumers: past {at_entry} x {}",
            s.consumers(),
            s.threads()
        );
        assert!(
            consumer >= at_entry.min(168),
            "{s}: consumers below their entry share"
        );
        kinds.insert(s.registers());
    }
    // Every budget is met: two consumers, three, and the epilogue warps.
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}
