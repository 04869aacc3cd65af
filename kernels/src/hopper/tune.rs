//! The tuner: for one problem on the device, time a few dozen candidate schedules against each
//! other and record the fastest as a tuning record, which the runtime then prefers to the
//! table and the model ([`crate::gemm::tuning`]). What Triton's `autotune` and cuTile's tuner give
//! their users, as `rute tune --m M --n N --k K` or `tune` (feature `gpu`).
//!
//! The candidates ([`candidates`], on the host) are the default's schedule and its neighbours:
//! the cost model's tiles in both orders, the tokens in swapped tiles (M up to 512: over the
//! weights' 128-row tiles, in pairs along the tokens, with their staging swizzled, and over
//! 192-row tiles of three consumer warpgroups), 192-row tiles as given, the table's rows that
//! take the problem, and the default with each lever moved (a batch in
//! flight, stages, evened waves or stream-K over every tile, the order, the L2's hints and
//! promotion, a cluster). On the device (`tune`, feature `gpu`) each is run on the same rotating
//! input sets, in interleaved rounds so that clocks and heat weigh on all
//! alike; the fastest whose result matches cuBLAS's wins.
//!
//! ```
//! use kernels::gemm::Device;
//! use kernels::hopper::tune::candidates;
//! let c = candidates(512, 6144, 4096, &Device::h200());
//! assert_eq!(c[0].to_string(), "128x192x64s4_n"); // the default first
//! assert!(c.len() > 10 && c.len() <= kernels::hopper::tune::MAX_CANDIDATES);
//! assert!(c.iter().all(|s| s.takes(512, 6144, 4096).is_ok()));
//! ```

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::pipeline::Raster;

use super::chooser::{self, model, table};
use super::schedule::{
    Cluster, ClusterSize, Consumers, Cooperative, HopperSchedule, InFlight, Waves, MAX_STAGES,
};
use crate::gemm::Device;

/// The most candidates one tuning times.
pub const MAX_CANDIDATES: usize = 32;

/// The candidate schedules for `m x n x k` on `device`, the default first: each checked and
/// taking the problem, none twice, at most [`MAX_CANDIDATES`].
pub fn candidates(m: usize, n: usize, k: usize, device: &Device) -> Vec<HopperSchedule> {
    let base = chooser::choose(m, n, k, device).schedule;
    let mut out: Vec<HopperSchedule> = Vec::new();
    let dims = (
        u32::try_from(m).unwrap_or(u32::MAX),
        u32::try_from(n).unwrap_or(u32::MAX),
        u32::try_from(k).unwrap_or(u32::MAX),
    );
    let mut add = |s: HopperSchedule| {
        let fits = s.check().is_ok() && s.check_fit(device.smem_per_block).is_ok();
        if fits && s.takes(dims.0, dims.1, dims.2).is_ok() && !out.contains(&s) {
            out.push(s);
        }
    };
    add(base);
    for s in neighbours(&base, device.smem_per_block) {
        add(s);
    }
    // The cost model's tiles, each in evened waves, grouped and in Hilbert order.
    for c in model::CANDIDATES {
        let spelled = format!("{}x{}x64{}_n", c.m, c.n, c.rest);
        if let Ok(s) = spelled.parse::<HopperSchedule>() {
            add(s);
            add(HopperSchedule {
                order: Raster::Grouped { group: 8 },
                ..s
            });
        }
    }
    // The tokens in one or two swapped tiles as narrow as hold them, their staging swizzled
    // (the defaults' since results/midm.md's fourth 2026-12-06 session), in evened waves and
    // streamed over every SM (the model weighs them from M = 257; the few-token rows below);
    // then the tokens in a pair of tiles sharing each weight tile (the table's rows for 129 to
    // 320 tokens, first here for every M), the staging plain as before, and what only levers
    // have measured: 192-row weight tiles of three consumers.
    if let Some((width, _)) = model::swapped(m) {
        if let Ok(s) = format!("128x{width}x64s2_n_t_z").parse::<HopperSchedule>() {
            let s = s.with_most_stages(MAX_STAGES, device.smem_per_block);
            add(s);
            if let Consumers::Cooperative(c) = s.consumers {
                add(HopperSchedule {
                    consumers: Consumers::Cooperative(Cooperative {
                        waves: Waves::Streamed,
                        ..c
                    }),
                    ..s
                });
            }
        }
        let pair = model::token_pair_tile(m, 8);
        for spelled in [
            format!("128x{pair}x64s2_c1x2_n_t_z"),
            format!("128x{width}x64s2_n_t"),
            format!("192x{width}x64s2_n_t_z"),
            // cuBLAS's tiling at 333 x 100352 x 4096 (ncu, results/midm.md, fifth 2026-12-06
            // session): 192-row weight tiles in pairs of token tiles.
            format!("192x{pair}x64s2_c1x2_n_t_z"),
        ] {
            if let Ok(s) = spelled.parse::<HopperSchedule>() {
                add(s.with_most_stages(MAX_STAGES, device.smem_per_block));
            }
        }
    }
    // 192-row tiles as given, past one row of 128-row tiles; the 128x256 tile with a fourth
    // stage where its staging goes in 128-column halves (2-4% over three stages at 449 to 512
    // tokens in levers, level at 1024: results/midm.md).
    // And cuBLAS's tiling at 256 x 6144 x 24576 (ncu, results/midm.md, fifth 2026-12-06
    // session): whole 128x96 tiles whose two token tiles share each weight tile (2x1 clusters),
    // as many stages as fit.
    if m > 128 {
        for spelled in [
            "192x176x64s3_n",
            "192x192x64s3_h_n",
            "128x256x64s4_e128_h_n",
        ] {
            if let Ok(s) = spelled.parse::<HopperSchedule>() {
                add(s);
            }
        }
        if let Ok(s) = "128x96x64s2_c2x1_n".parse::<HopperSchedule>() {
            add(s.with_most_stages(MAX_STAGES, device.smem_per_block));
        }
    }
    // The table's rows, filled for this shape, whether or not their conditions hold.
    for row in table::TABLE {
        if let Ok(s) = row.schedule.fill((m, n), device).parse::<HopperSchedule>() {
            add(match row.schedule.most_stages {
                Some(cap) => s.with_most_stages(cap, device.smem_per_block),
                None => s,
            });
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// `base` with one lever moved at a time (some of them invalid; [`candidates`] keeps the valid
/// ones), its stages fitting `smem_per_block`.
fn neighbours(base: &HopperSchedule, smem_per_block: u32) -> Vec<HopperSchedule> {
    let mut out = Vec::new();
    let flip = match base.in_flight {
        InFlight::Zero => InFlight::One,
        InFlight::One => InFlight::Zero,
    };
    out.push(HopperSchedule {
        in_flight: flip,
        ..*base
    });
    // The most stages that fit, and one fewer.
    out.push(base.with_most_stages(MAX_STAGES, smem_per_block));
    if let Ok(tile) = base.tile.with_stages(base.tile.stages().saturating_sub(1)) {
        out.push(HopperSchedule { tile, ..*base });
    }
    for order in [
        Raster::Hilbert,
        Raster::Grouped { group: 8 },
        Raster::Grouped { group: 1 },
        Raster::AlongM,
    ] {
        out.push(HopperSchedule { order, ..*base });
    }
    if let Consumers::Cooperative(c) = base.consumers {
        // The other spreads of the tiles: whole in as many or evened waves, or all streamed.
        for waves in [Waves::AsMany, Waves::Evened, Waves::Streamed] {
            if waves != c.waves {
                out.push(HopperSchedule {
                    consumers: Consumers::Cooperative(Cooperative { waves, ..c }),
                    ..*base
                });
            }
        }
    }
    let (first, last) = (Some(CacheHint::EvictFirst), Some(CacheHint::EvictLast));
    for (a, b, d) in [
        (None, None, None),
        (last, first, None),
        (first, last, None),
        (first, None, first),
    ] {
        let mut s = *base;
        (s.l2.hints.a, s.l2.hints.b, s.l2.hints.d) = (a, b, d);
        out.push(s);
    }
    for promotion in [L2Promotion::B256, L2Promotion::B128, L2Promotion::None] {
        let mut s = *base;
        s.l2.promotion = promotion;
        out.push(s);
    }
    for cluster in [
        Cluster::One,
        Cluster::AlongM(ClusterSize::Two),
        Cluster::AlongN(ClusterSize::Two),
    ] {
        out.push(HopperSchedule { cluster, ..*base });
    }
    out
}

#[cfg(feature = "gpu")]
mod device;

#[cfg(feature = "gpu")]
pub use device::{record, tune, Timed, TuneOutcome, TuneRequest};

#[cfg(test)]
mod tests {
    use super::*;

    /// The default first, then its neighbours and the model's and table's tiles: every one
    /// checked, taking the problem and fitting the device, none twice.
    #[test]
    fn candidates_are_valid_distinct_and_start_with_the_default() {
        let h200 = Device::h200();
        for (m, n, k) in [
            (16, 4096, 4096),
            (128, 6144, 4096),
            (128, 4096, 14336),
            (200, 7168, 20480),
            (512, 28672, 4096),
            (333, 100352, 4096),
            (4096, 4096, 4096),
            (81920, 256, 256),
            (100, 57344, 64),
        ] {
            let c = candidates(m, n, k, &h200);
            assert_eq!(
                c[0],
                chooser::choose(m, n, k, &h200).schedule,
                "{m} {n} {k}"
            );
            assert!(
                c.len() >= 6 && c.len() <= MAX_CANDIDATES,
                "{m} {n} {k}: {}",
                c.len()
            );
            for (i, s) in c.iter().enumerate() {
                assert_eq!(s.check(), Ok(()), "{s}");
                assert!(s.takes(m as u32, n as u32, k as u32).is_ok(), "{s}");
                assert!(!c[..i].contains(s), "{s} twice");
            }
        }
        // 333 tokens over 100352 weights: the table's 192-row weight tiles in pairs along the
        // tokens (cuBLAS's tiling there) first, and the tuner still tries 128-row weight tiles,
        // one swapped tile a block (the model's, before that row) and in pairs.
        let at333: Vec<String> = candidates(333, 100352, 4096, &h200)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(
            at333[0].starts_with("192x168x64") && at333[0].contains("_c1x2"),
            "{}",
            at333[0]
        );
        assert!(
            at333
                .iter()
                .any(|s| s.starts_with("128x168x64") && !s.contains("_c1x2")),
            "{at333:?}"
        );
        assert!(
            at333
                .iter()
                .any(|s| s.starts_with("128x168x64") && s.contains("_c1x2")),
            "{at333:?}"
        );
        // cuBLAS's own tiling where rute trails it: whole 128x96 tiles in 2x1 clusters at 256
        // tokens over a long K.
        let at256: Vec<String> = candidates(256, 6144, 24576, &h200)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(
            at256
                .iter()
                .any(|s| s.starts_with("128x96x64") && s.contains("_c2x1") && s.ends_with("_n")),
            "{at256:?}"
        );
        // A device with less shared memory: every candidate fits it.
        let small = Device {
            smem_per_block: 160 * 1024,
            ..Device::h200()
        };
        for s in candidates(4096, 4096, 4096, &small).iter().skip(1) {
            assert!(s.block_smem_bytes() <= 160 * 1024, "{s}");
        }
    }
}
