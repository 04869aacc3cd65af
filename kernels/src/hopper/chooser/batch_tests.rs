//! The chooser for a strided batch in one launch: the waves and the L2 count the whole batch,
//! a resident B the batch does not share is passed over, and one GEMM's choice is unchanged.

use super::table::{Cond, TABLE};
use super::*;
use crate::hopper::launch_batched;

fn batch(count: u32) -> StridedBatch {
    StridedBatch {
        count,
        ..StridedBatch::ONE
    }
}

/// The grid `s` launches for `count` GEMMs of `m x n x k` on `device`.
fn grid(s: &HopperSchedule, (m, n, k): (usize, usize, usize), count: u32, device: &Device) -> u32 {
    let (km, kn) = s.kernel_dims(m as u32, n as u32);
    let resident = device.sms / s.cluster.size();
    launch_batched(s, (km, kn, k as u32), count, resident, device.l2_bytes)
        .grid
        .0
}

/// The batch's shapes of the issue (16 x 1024^3, attention's 64 x 512 x 512 x 128): one GEMM
/// fills a fraction of the H200's SMs, the batch fills all of them in one launch, each GEMM's
/// tiles in a group of their own, in four stages.
#[test]
fn a_batch_of_small_gemms_fills_the_sms() {
    let h200 = Device::h200();
    for (count, shape, want) in [
        (16, (1024, 1024, 1024), "128x256x64s4_e128_n"),
        (64, (512, 512, 128), "128x256x64s4_e128"),
    ] {
        let (m, n, k) = shape;
        let one = choose(m, n, k, &h200).schedule;
        assert!(grid(&one, shape, 1, &h200) < 132, "{one}");
        let c = choose_batch(m, n, k, batch(count), &h200).schedule;
        assert_eq!(c.to_string(), want, "{count} x {shape:?}");
        // 512 tiles of 128 x 256: four waves, evened to 128 blocks where the schedule says so.
        let blocks = grid(&c, shape, count, &h200);
        assert!(blocks >= 128, "{c}: {blocks} blocks");
    }
}

/// The table's conditions on the waves count every GEMM's tiles: 16 tokens by 2048 weights is
/// one wave of 64-row weight tiles, 8 of them are past it; a row of tiles one wave wide is
/// narrower for one GEMM than for each of two.
#[test]
fn the_waves_count_the_whole_batch() {
    let h200 = Device::h200();
    let decode = (16, 2048, 4096);
    assert!(Cond::NTilesInOneWave(64).holds(decode, &h200));
    assert!(!Cond::NTilesInOneWave(64).holds_batch(decode, 8, &h200));
    assert!(Cond::NTilesPastOneWave(128).holds_batch(decode, 16, &h200));
    assert!(Cond::PastL2.holds_batch((4096, 4096, 4096), 2, &h200));
    assert!(!Cond::PastL2.holds_batch((1024, 1024, 1024), 2, &h200));
    let row = (128, 6144, 4096);
    assert_eq!(
        choose(row.0, row.1, row.2, &h200).schedule.to_string(),
        "128x48x64s8_f1_l256_vlfn"
    );
    let two = choose_batch(row.0, row.1, row.2, batch(2), &h200).schedule;
    assert_eq!(two.to_string(), "128x96x64s7_f1_l256_vlfn");
    // 64 tiles per GEMM, 128 for the two: one wave.
    assert_eq!(grid(&two, row, 2, &h200), 128);
}

/// A row whose B stays resident is passed over for a batch that does not share B, and kept
/// for one that does.
#[test]
fn a_resident_b_needs_a_shared_b() {
    let h200 = Device::h200();
    let (m, n, k) = (4096, 256, 256);
    let one = choose(m, n, k, &h200).schedule;
    assert!(one.resident_b().is_some(), "{one}");
    let own = choose_batch(m, n, k, batch(4), &h200).schedule;
    assert!(own.resident_b().is_none(), "{own}");
    assert_eq!(own.to_string(), "128x256x64s4_e128");
    let shared = StridedBatch {
        shared_b: true,
        ..batch(4)
    };
    assert_eq!(choose_batch(m, n, k, shared, &h200).schedule, one);
}

/// Every batched choice, over shapes, counts and devices, is a schedule the program takes for
/// each GEMM and for the batch; a batch of one is the unbatched choice.
#[test]
fn every_batched_choice_takes_its_batch() {
    let devices = [
        Device::h200(),
        Device {
            sms: 66,
            ..Device::h200()
        },
        Device::unknown(dsl_core::ir::Target::Sm90a),
    ];
    let mut rows_seen = std::collections::BTreeSet::new();
    for device in &devices {
        for &m in &[16, 64, 100, 128, 144, 200, 256, 300, 333, 512, 1024, 4096] {
            for &n in &[64, 256, 512, 2048, 6144] {
                for &k in &[64, 128, 256, 1024, 8192, 16384] {
                    let one = choose(m, n, k, device);
                    assert_eq!(choose_batch(m, n, k, StridedBatch::ONE, device), one);
                    for count in [2, 3, 16, 64] {
                        let c = choose_batch(m, n, k, batch(count), device);
                        let s = c.schedule;
                        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
                        assert_eq!(s.check(), Ok(()), "{m} x {n} x {k}");
                        assert!(s.takes(mu, nu, ku).is_ok(), "{s}: {m} x {n} x {k}");
                        let b = s.check_batch(mu, nu, ku, batch(count));
                        assert_eq!(b, Ok(()), "{count} x {m} x {n} x {k}");
                        if let Origin::Table { row, .. } = c.origin {
                            rows_seen.insert(row);
                        }
                    }
                }
            }
        }
    }
    // Every row serves some batch, but those that keep B resident: they are passed over.
    let resident: Vec<&str> = TABLE
        .iter()
        .filter(|r| r.schedule.spelling.contains("_r"))
        .map(|r| r.class)
        .collect();
    assert_eq!(resident.len(), 2);
    assert!(
        resident.iter().all(|r| !rows_seen.contains(r)),
        "{rows_seen:?}"
    );
    assert_eq!(
        rows_seen.len(),
        TABLE.len() - resident.len(),
        "{rows_seen:?}"
    );
}

/// A batch's GEMMs share no operand: the model's grouped walk of the 128x256 tile never spans
/// two of them.
#[test]
fn a_batch_walks_each_gemm_in_groups_of_its_own() {
    let h200 = Device::h200();
    for (count, (m, n, k), rows) in [
        (16, (1024, 1024, 1024), 8),
        (8, (2048, 2048, 2048), 16),
        (4, (4096, 4096, 1024), 16),
        (6, (768, 8192, 4096), 6),
    ] {
        let c = choose_batch(m, n, k, batch(count), &h200);
        assert_eq!(c.origin, Origin::Model, "{count} x {m}x{n}x{k}");
        let s = c.schedule;
        assert_eq!(s.tile.mnk(), (128, 256, 64), "{count} x {m}x{n}x{k}: {s}");
        assert_eq!(
            s.order,
            dsl_core::pipeline::Raster::Grouped { group: rows },
            "{count} x {m}x{n}x{k}: {s}"
        );
    }
}
