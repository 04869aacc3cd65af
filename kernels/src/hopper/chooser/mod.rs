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
//! // 150 tokens over a long K: the weights in 128-row tiles, the tokens in two tiles 80 wide,
//! // in clusters of two along the tokens that load each weight tile once for both.
//! let few = choose(150, 7168, 20480, &h200);
//! assert_eq!(few.schedule.to_string(), "128x80x64s7_c1x2_n_t_z");
//! // A device with fewer SMs: one wave of a narrower tile is wider.
//! let fewer = kernels::gemm::Device { sms: 66, ..Device::h200() };
//! assert_eq!(choose(128, 6144, 4096, &fewer).schedule.to_string(), "128x96x64s7_f1_l256_vlfn");
//! ```

pub mod finish;
pub mod model;
pub mod table;

use super::batch::StridedBatch;
use super::operand::{swizzled, OperandMajors};
use super::schedule::HopperSchedule;
use crate::gemm::layout::{FormParts, Major};
use crate::gemm::{Device, Origin};

/// A default schedule and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The schedule.
    pub schedule: HopperSchedule,
    /// The table's row, or the model.
    pub origin: Origin,
}

/// How a problem's operands lie, as far as the default schedule weighs it: A's and B's majors
/// and the strided batch run in one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operands {
    /// A's major.
    pub a: Major,
    /// B's major.
    pub b: Major,
    /// The batch ([`StridedBatch::ONE`]: one GEMM).
    pub batch: StridedBatch,
}

impl Operands {
    /// The packed form's: both K-major, one GEMM.
    pub const PACKED: Operands = Operands {
        a: Major::K,
        b: Major::K,
        batch: StridedBatch::ONE,
    };

    /// A form's majors (`None`: the packed form) and `batch`.
    pub fn of(parts: Option<FormParts>, batch: StridedBatch) -> Operands {
        let (a, b) = parts.map_or((Major::K, Major::K), |f| (f.a, f.b));
        Operands { a, b, batch }
    }
}

/// The default schedule for `m x n x k` on `device`: the first table row that holds the shape
/// (and whose schedule fits the device's shared memory, with fewer stages if it must), else the
/// cost model's. The packed form's operands ([`choose_for`] takes others).
pub fn choose(m: usize, n: usize, k: usize, device: &Device) -> Choice {
    choose_for(m, n, k, Operands::PACKED, device)
}

/// [`choose`] for a strided batch of GEMMs of `m x n x k` run in one launch
/// ([`super::batch`]), both operands K-major ([`choose_for`]).
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::hopper::batch::StridedBatch;
/// use kernels::hopper::chooser::{choose, choose_batch};
/// let h200 = Device::h200();
/// // 16 tokens by 2048 weights: 32 swapped 64-row tiles, one wave; 8 such GEMMs take 256
/// // tiles, so the batch goes to the 128-row weight tiles of the rows past a wave.
/// let one = choose(16, 2048, 4096, &h200).schedule.to_string();
/// assert_eq!(one, "64x16x128s11_f1_vfln_t_z");
/// let eight = StridedBatch { count: 8, ..StridedBatch::ONE };
/// let batch = choose_batch(16, 2048, 4096, eight, &h200).schedule.to_string();
/// assert_eq!(batch, "128x16x64s8_vfln_t_z");
/// ```
pub fn choose_batch(m: usize, n: usize, k: usize, batch: StridedBatch, device: &Device) -> Choice {
    let ops = Operands {
        batch,
        ..Operands::PACKED
    };
    choose_for(m, n, k, ops, device)
}

/// [`choose`] for operands that lie as `ops` says.
///
/// A batch: the table's conditions on the waves and the L2 count the whole batch's tiles and
/// bytes ([`table::Cond::holds_batch`]), a row whose schedule the batch refuses
/// ([`HopperSchedule::check_batch`]: a resident B the batch does not share) is passed over, and
/// the model weighs the whole batch's waves ([`model::choose_batch`]).
///
/// An MN-major operand is staged in a swizzled atom only where its rows in a tile (or a block's
/// multicast slice of them) are a multiple of 16 ([`super::operand::swizzled`]); a schedule
/// that would leave it unswizzled (correct, but loaded 16 bytes per row and read with bank
/// conflicts) is passed over: a row whose token tile follows M rounds M up to 32 or 64 instead
/// of 16, and the model weighs only the tiles that stage it swizzled. Where nothing else
/// serves, the model's K-major choice stands.
///
/// The packed form's operands ([`Operands::PACKED`]) pass every schedule: the choice is
/// [`choose`]'s.
///
/// ```
/// use kernels::gemm::Device;
/// use kernels::gemm::layout::Major;
/// use kernels::hopper::chooser::{choose, choose_for, Operands};
/// let h200 = Device::h200();
/// // 136 tokens: two token tiles of 72 rows, in a pair of blocks along the tokens.
/// let k_major = choose(136, 8192, 4096, &h200).schedule;
/// assert!(k_major.to_string().starts_with("128x72x64"), "{k_major}");
/// // A transposed (M contiguous): 72 rows would stage unswizzled; tiles of 80 do not.
/// let a_mn = Operands { a: Major::MN, ..Operands::PACKED };
/// let mn = choose_for(136, 8192, 4096, a_mn, &h200).schedule;
/// assert!(mn.to_string().starts_with("128x80x64"), "{mn}");
/// ```
pub fn choose_for(m: usize, n: usize, k: usize, ops: Operands, device: &Device) -> Choice {
    let shape = (m, n, k);
    let batch = ops.batch;
    let count = batch.count.max(1) as usize;
    let dims = (u32::try_from(m), u32::try_from(n), u32::try_from(k));
    let takes_batch = |s: &HopperSchedule| match dims {
        _ if !batch.is_batched() => true,
        (Ok(m), Ok(n), Ok(k)) => s.check_batch(m, n, k, batch).is_ok(),
        _ => false,
    };
    let staged_well =
        |s: &HopperSchedule| swizzled(s, OperandMajors::of_kernel(ops.a, ops.b, s.swapped()));
    for row in table::TABLE {
        if !row.when.iter().all(|c| c.holds_batch(shape, count, device)) {
            continue;
        }
        // The row's own rounding first; the wider ones only where its tile follows M.
        let mut filled = None;
        for &g in row.schedule.granules() {
            let spelled = row.schedule.fill_for((m, n), g, count, device);
            let schedule: HopperSchedule = spelled
                .parse()
                .unwrap_or_else(|e| panic!("the table's row for {}: {e}", row.class));
            let schedule = match row.schedule.most_stages {
                Some(cap) => schedule.with_most_stages(cap, device.smem_per_block),
                None => fitted(schedule, device),
            };
            // A wider tile fits no better, nor serves a batch the row's tile does not: the row
            // is passed over.
            if schedule.check_fit(device.smem_per_block).is_err() || !takes_batch(&schedule) {
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
    let schedule = model::choose_among(m, n, k, count, device, &staged_well)
        .unwrap_or_else(|| model::choose_batch(m, n, k, count, device));
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
mod batch_tests;
#[cfg(test)]
mod tests;
