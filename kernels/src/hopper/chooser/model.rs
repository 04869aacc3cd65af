//! The cost model, for shapes between the table's rows: of a few tiles, the one whose waves
//! take least.
//!
//! A tile's wave takes its `bm x bn` tile's FLOPs at the rate its `wgmma` reaches (measured
//! against 128x256's on the H200), and a launch as many waves as its tiles over the device's
//! SMs: the rows and columns past M's and N's residue are paid in full. Where the whole
//! problem moves more bytes than the device's rates let it compute (A, B and D once each,
//! against its DRAM bandwidth), every tile waits on memory alike; the model keeps the faster
//! compute then. [`Estimate`] has both times.
//!
//! Each candidate walks its tiles in evened waves (`_n`); the 128x256 tile in Hilbert order,
//! unless stream-K shares its last wave out (grouped order then).

use dsl_core::pipeline::Raster;

use super::super::launch::launch;
use super::super::schedule::HopperSchedule;
use crate::gemm::Device;

/// A candidate tile: its rows and columns, the rest of its spelling (stages, staging), its
/// `wgmma`'s rate against the 128x256 one's, and whether it takes problems of one row of
/// tiles.
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
    /// Whether it is a candidate where M fits one row of 128-row tiles.
    pub one_row: bool,
}

/// The candidates: 128 x {256, 224, 192, 128, 64} and 256 x 160, each with the stages that fit
/// it; 128x224 and 256x160 only over more than one row of tiles.
pub const CANDIDATES: [Candidate; 6] = [
    Candidate {
        m: 128,
        n: 256,
        rest: "s3_h",
        efficiency: 1.0,
        one_row: true,
    },
    Candidate {
        m: 128,
        n: 224,
        rest: "s4_e112",
        efficiency: 0.95,
        one_row: false,
    },
    Candidate {
        m: 128,
        n: 192,
        rest: "s4",
        efficiency: 0.97,
        one_row: true,
    },
    Candidate {
        m: 256,
        n: 160,
        rest: "s3_e80",
        efficiency: 0.94,
        one_row: false,
    },
    Candidate {
        m: 128,
        n: 128,
        rest: "s6",
        efficiency: 0.93,
        one_row: true,
    },
    Candidate {
        m: 128,
        n: 64,
        rest: "s8",
        efficiency: 0.8,
        one_row: true,
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

/// `c`'s estimate for `m x n x k` on `device` (16-bit operands).
pub fn estimate(c: &Candidate, (m, n, k): (usize, usize, usize), device: &Device) -> Estimate {
    let sms = device.sms.max(1) as usize;
    let tiles = m.div_ceil(c.m) * n.div_ceil(c.n);
    let waves = tiles.div_ceil(sms) as f64;
    let per_sm = device.tensor_flops / sms as f64;
    let tile_flops = 2.0 * (c.m * c.n) as f64 * k as f64;
    let bytes = 2.0 * ((m * k) as f64 + (n * k) as f64 + (m * n) as f64);
    Estimate {
        compute: waves * tile_flops / (per_sm * c.efficiency),
        memory: bytes / device.dram_bytes_per_s,
    }
}

/// The model's schedule for `m x n x k` on `device`: the candidate of least time (the faster
/// compute among those that wait on memory alike), in evened waves, the 128x256 tile in
/// Hilbert order unless stream-K shares its last wave out or the order's table would be past
/// its size.
pub fn choose(m: usize, n: usize, k: usize, device: &Device) -> HopperSchedule {
    let shape = (m, n, k);
    // Each candidate's schedule, with as many stages as fit the device where its own do not.
    let schedule_of = |c: &Candidate| -> HopperSchedule {
        let s = format!("{}x{}x64{}_n", c.m, c.n, c.rest)
            .parse()
            .expect("the model's candidates are schedules");
        super::fitted(s, device)
    };
    let fits = |c: &&Candidate| schedule_of(c).check_fit(device.smem_per_block).is_ok();
    let best = CANDIDATES
        .iter()
        .filter(|c| c.one_row || m > 128)
        .filter(fits)
        .min_by(|a, b| {
            let (ea, eb) = (estimate(a, shape, device), estimate(b, shape, device));
            ea.time()
                .total_cmp(&eb.time())
                .then(ea.compute.total_cmp(&eb.compute))
        })
        .unwrap_or(&CANDIDATES[CANDIDATES.len() - 1]);
    let schedule = schedule_of(best);
    if schedule.order != Raster::Hilbert {
        return schedule;
    }
    let grouped = HopperSchedule {
        order: Raster::Grouped { group: 8 },
        ..schedule
    };
    // Where stream-K shares the last wave out, grouped order: at 8192^3, timed in rotated
    // rounds beside cuBLAS, rute's own time ran 0.7-1.0% shorter grouped than in Hilbert order.
    let dims = (u32::try_from(m), u32::try_from(n), u32::try_from(k));
    let (Ok(m), Ok(n), Ok(k)) = dims else {
        return grouped;
    };
    let split = launch(&schedule, m, n, k, device.sms, device.l2_bytes).split;
    if split.sk_tiles > 0 || schedule.takes(m, n, k).is_err() {
        grouped
    } else {
        schedule
    }
}
