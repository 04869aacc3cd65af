//! The default schedule for a problem on a device: the first row of a table of shape classes
//! that holds the shape ([`table`]), each row's schedule measured in a results file, and a cost
//! model for the shapes between the rows ([`model`]). The device's facts come from the device
//! ([`Device`]); a tuning record, where there is one, comes before both (the runtime's choice:
//! `kernels::gemm::tuning`).
//!
//! ```
//! use kernels::gemm::{Device, Origin};
//! use kernels::hopper::chooser::choose;
//! let h200 = Device::h200();
//! let short_k = choose(81920, 256, 256, &h200);
//! assert_eq!(short_k.schedule.to_string(), "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf");
//! assert!(matches!(short_k.origin, Origin::Table { .. }));
//! let square = choose(4096, 4096, 4096, &h200);
//! assert_eq!((square.schedule.to_string(), square.origin), ("128x256x64s3_h_n".into(), Origin::Model));
//! // 150 tokens over a long K: the weights in 128-row tiles, the tokens one tile 160 wide,
//! // every tile's k-tiles streamed over every SM.
//! let few = choose(150, 7168, 20480, &h200);
//! assert_eq!(few.schedule.to_string(), "128x160x64s5_c2x1_f1_l256_vfln_k_t");
//! // A device with fewer SMs: one wave of a narrower tile is wider.
//! let fewer = kernels::gemm::Device { sms: 66, ..Device::h200() };
//! assert_eq!(choose(128, 6144, 4096, &fewer).schedule.to_string(), "128x96x64s7_f1_l256_vlfn");
//! ```

pub mod model;
pub mod table;

use super::operand::{swizzled, OperandMajors};
use super::schedule::HopperSchedule;
use crate::gemm::layout::Major;
use crate::gemm::{Device, Origin};

/// A default schedule and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The schedule.
    pub schedule: HopperSchedule,
    /// The table's row, or the model.
    pub origin: Origin,
}

/// The default schedule for `m x n x k` on `device`: the first table row that holds the shape
/// (and whose schedule fits the device's shared memory, with fewer stages if it must), else the
/// cost model's. Both operands K-major (the packed form's); [`choose_for`] takes other majors.
pub fn choose(m: usize, n: usize, k: usize, device: &Device) -> Choice {
    choose_for(m, n, k, (Major::K, Major::K), device)
}

/// [`choose`] for the problem's A and B in `majors`. An MN-major operand is staged in a
/// swizzled atom only where its rows in a tile (or a block's multicast slice of them) are a
/// multiple of 16 ([`super::operand::swizzled`]); a schedule that would leave it unswizzled
/// (correct, but loaded 16 bytes per row and read with bank conflicts) is passed over: a row
/// whose token tile follows M rounds M up to 32 or 64 instead of 16, and the model weighs only
/// the tiles that stage it swizzled. Where nothing else serves, the K-major choice stands. With
/// both operands K-major every schedule passes: the choice is [`choose`]'s.
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::gemm::layout::Major;
/// use kernels::hopper::chooser::{choose, choose_for};
/// let h200 = Device::h200();
/// // 136 tokens: one 144-wide token tile, each block of the pair loading 72 of its rows.
/// let k_major = choose(136, 4096, 4096, &h200).schedule;
/// assert!(k_major.to_string().starts_with("128x144x64"), "{k_major}");
/// // A transposed (M contiguous): 72 rows would stage unswizzled; 160 gives blocks of 80.
/// let mn = choose_for(136, 4096, 4096, (Major::MN, Major::K), &h200).schedule;
/// assert!(mn.to_string().starts_with("128x160x64"), "{mn}");
/// ```
pub fn choose_for(m: usize, n: usize, k: usize, majors: (Major, Major), device: &Device) -> Choice {
    let shape = (m, n, k);
    let staged_well =
        |s: &HopperSchedule| swizzled(s, OperandMajors::of_kernel(majors.0, majors.1, s.swapped()));
    for row in table::TABLE {
        if !row.when.iter().all(|c| c.holds(shape, device)) {
            continue;
        }
        // The row's own rounding first; the wider ones only where its tile follows M.
        let granules = if row.schedule.follows_m() {
            &table::M_GRANULES[..]
        } else {
            &table::M_GRANULES[..1]
        };
        let mut filled = None;
        for &g in granules {
            let spelled = row.schedule.fill_rounding(g, (m, n), device);
            let schedule: HopperSchedule = spelled
                .parse()
                .unwrap_or_else(|e| panic!("the table's row for {}: {e}", row.class));
            let schedule = match row.schedule.most_stages {
                Some(cap) => schedule.with_most_stages(cap, device.smem_per_block),
                None => fitted(schedule, device),
            };
            // A wider tile fits no better: the row is passed over, as where it does not fit.
            if schedule.check_fit(device.smem_per_block).is_err() {
                break;
            }
            if staged_well(&schedule) {
                filled = Some(schedule);
                break;
            }
        }
        if let Some(schedule) = filled {
            return Choice {
                schedule,
                origin: Origin::Table {
                    row: row.class,
                    results: row.results,
                },
            };
        }
    }
    let schedule = model::choose_among(m, n, k, device, &staged_well)
        .unwrap_or_else(|| model::choose(m, n, k, device));
    Choice {
        schedule,
        origin: Origin::Model,
    }
}

/// `schedule`, or on a device with less shared memory per block than it takes, the same with
/// as many of its stages as fit there.
pub(super) fn fitted(schedule: HopperSchedule, device: &Device) -> HopperSchedule {
    match schedule.check_fit(device.smem_per_block) {
        Ok(()) => schedule,
        Err(_) => schedule.with_most_stages(schedule.tile.stages(), device.smem_per_block),
    }
}

#[cfg(test)]
mod tests;
