//! A strided batch of GEMMs in one launch of the program: the batch is the third coordinate of
//! the tensor maps of A, B and D, and the walk runs over every GEMM's tiles.
//!
//! - The maps: each operand's and D's map has the batch as its outermost dimension (rank 3, the
//!   shared tile one deep along it), its stride the form's batch stride. TMA then fills what lies
//!   past each GEMM's A and B with zeros and clips each GEMM's stores of D as it does for one
//!   GEMM: a GEMM's tiles never read or write another's, and the gaps between the matrices
//!   are never written. An operand whose batch stride is 0 (one matrix shared by the batch) has
//!   a map one deep along the batch, and the kernel asks it for matrix 0 ([`batch_dim`]).
//! - The walk: the persistent walk's tiles along M are the batch's GEMMs' cluster tiles along M
//!   one after the other (GEMM `z`'s tile row `i` is the walk's row `z * rows + i`), so that a
//!   batch of small GEMMs fills the SMs as one large GEMM does, and stream-K, evened waves, the
//!   tile queue, the Hilbert order, clusters and ping-pong consumers walk it as they walk one
//!   GEMM. A unit knows its GEMM `z` from its tile row; its loads, its TMA store, its stores
//!   from the registers and its epilogue's operands take GEMM `z`'s. Along M rather than N, or
//!   a walk per GEMM: the grouped order's groups run along M, so a GEMM whose tile rows are a
//!   multiple of the group is walked exactly as it is alone, the GEMMs one after the other (the
//!   tiles in flight share A's rows and B's columns of one GEMM); a cluster's blocks, which lie
//!   along one cluster tile, are always in one GEMM; and the walk's split, queue and waves need
//!   nothing new. The one cost is a division per unit (the GEMM of a tile row).
//! - Why the maps and not pointers: TMA clips each GEMM's boxes at its own extents only if the
//!   GEMM is a slice of the map, and a map per GEMM would take a descriptor per GEMM in global
//!   memory (CUTLASS's grouped GEMM does that, for GEMMs of different shapes).
//! - The refusals ([`HopperSchedule::check_batch`]): what holds one GEMM's operand through the
//!   walk or cuts one GEMM's last wave: a resident B (`_r`) unless the batch shares B, the last
//!   wave's rows shared out (`_b`), the start's prefetch of A (`_a`); and a walk longer than the
//!   kernel's 32-bit tile index. TMA's rules for the strides are [`check_tma_strides`]'s.
//!
//! ```
//! use kernels::hopper::batch::{StridedBatch, BatchRefusal};
//! use kernels::hopper::HopperSchedule;
//! let wide: HopperSchedule = "128x256x64s3".parse().unwrap();
//! let batch = StridedBatch { count: 16, ..StridedBatch::ONE };
//! assert_eq!(wide.check_batch(1024, 1024, 1024, batch), Ok(()));
//! let resident: HopperSchedule = "64x256x64s8_f1_e128_r4_p_l0_vfnf".parse().unwrap();
//! let e = resident.check_batch(4096, 256, 256, batch).unwrap_err();
//! assert!(matches!(e, BatchRefusal::ResidentB { .. }));
//! // One B shared by the batch stays resident.
//! let shared = StridedBatch { shared_b: true, ..batch };
//! assert_eq!(resident.check_batch(4096, 256, 256, shared), Ok(()));
//! ```

use thiserror::Error;

use super::schedule::{HopperSchedule, MAX_HILBERT_TILES};
use crate::gemm::layout::{Form, Major, OperandLayout};
use dsl_core::pipeline::Raster;

/// How many GEMMs a kernel of the program computes in one launch: what the kernel is generated
/// for (the rank of its tensor maps, its walk, its parameters), not the count, which the launch
/// passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Batching {
    /// One GEMM: the maps are matrices (rank 2), the kernel as it always was.
    #[default]
    Single,
    /// A strided batch: the maps have the batch as their third dimension, the walk covers every
    /// GEMM's tiles, and the kernel takes the batch's count after the form's parameters.
    Strided,
}

impl Batching {
    /// The batching of a form: strided where it is more than one GEMM.
    pub fn of(form: &Form) -> Batching {
        if form.batch.is_batched() {
            Batching::Strided
        } else {
            Batching::Single
        }
    }

    /// The suffix of a kernel's name: `_batch` for a strided batch, nothing for one GEMM.
    pub fn tag(self) -> &'static str {
        match self {
            Batching::Single => "",
            Batching::Strided => "_batch",
        }
    }
}

/// What a schedule's walk must know of a strided batch: how many GEMMs, and whether they share
/// the problem's A or B (its batch stride is 0): a resident B (`_r`) can hold a shared B through
/// the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StridedBatch {
    /// GEMMs in the batch.
    pub count: u32,
    /// Whether every GEMM reads the same A.
    pub shared_a: bool,
    /// Whether every GEMM reads the same B.
    pub shared_b: bool,
}

impl StridedBatch {
    /// One GEMM.
    pub const ONE: StridedBatch = StridedBatch {
        count: 1,
        shared_a: false,
        shared_b: false,
    };

    /// The batch of `form` (its count, at most `u32::MAX`, and which operands it shares).
    pub fn of(form: &Form) -> StridedBatch {
        let batched = form.batch.is_batched();
        StridedBatch {
            count: u32::try_from(form.batch.count).unwrap_or(u32::MAX),
            shared_a: batched && form.batch.a == 0,
            shared_b: batched && form.batch.b == 0,
        }
    }

    /// Whether it is more than one GEMM.
    pub fn is_batched(&self) -> bool {
        self.count > 1
    }
}

/// Why a schedule cannot run a strided batch in one launch, with the values that broke it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BatchRefusal {
    /// A resident B of GEMMs that each have their own.
    #[error(
        "{schedule} keeps B resident (_rR) through its walk, and the batch's GEMMs each read a B \
         of their own (B's batch stride is not 0)"
    )]
    ResidentB {
        /// The schedule, spelled.
        schedule: String,
    },
    /// The last wave's rows shared out.
    #[error(
        "{schedule} shares one GEMM's last wave of rows out (_b), and a batch's walk runs over \
         every GEMM's tiles"
    )]
    RowSplit {
        /// The schedule, spelled.
        schedule: String,
    },
    /// The start's prefetch of A.
    #[error(
        "{schedule} prefetches the next waves of one GEMM's A at the start (_aN), and a batch's \
         waves run over every GEMM's tiles"
    )]
    Prefetch {
        /// The schedule, spelled.
        schedule: String,
    },
    /// More tiles than the kernel's walk counts.
    #[error(
        "a batch of {count} GEMMs of {tiles_m} x {tiles_n} cluster tiles each under {schedule} is \
         {total} tiles, and the kernel's walk counts at most {max}"
    )]
    TooManyTiles {
        /// The schedule, spelled.
        schedule: String,
        /// GEMMs.
        count: u32,
        /// One GEMM's cluster tiles along M.
        tiles_m: u32,
        /// Along N.
        tiles_n: u32,
        /// All of them.
        total: u64,
        /// The most the walk counts.
        max: u64,
    },
    /// A Hilbert order's table past its size.
    #[error(
        "{schedule} walks the batch's {tiles_m} x {tiles_n} cluster tiles in a Hilbert order, \
         whose table holds at most {MAX_HILBERT_TILES} tiles and 65535 along a side; a grouped \
         order (_g) walks any number"
    )]
    Hilbert {
        /// The schedule, spelled.
        schedule: String,
        /// The batch's cluster tiles along M (every GEMM's, one after the other).
        tiles_m: u64,
        /// Along N.
        tiles_n: u32,
    },
}

impl HopperSchedule {
    /// The grid of cluster tiles the walk covers for a batch of `count` GEMMs of `m x n` (the
    /// kernel's: swapped, the problem's `n x m`): every GEMM's cluster tiles along M one after
    /// the other, as `(along M, along N)` in 64 bits.
    ///
    /// ```
    /// use kernels::hopper::HopperSchedule;
    /// let pairs: HopperSchedule = "128x256x64s3_c2x1".parse().unwrap();
    /// // 1000 rows: 8 tiles, 4 pairs of them, per GEMM; 3 GEMMs.
    /// assert_eq!(pairs.batch_cluster_tiles(1000, 512, 3), (12, 2));
    /// ```
    pub fn batch_cluster_tiles(&self, m: u32, n: u32, count: u32) -> (u64, u32) {
        let (tiles_m, tiles_n) = self.cluster_tiles(m, n);
        (u64::from(tiles_m) * u64::from(count.max(1)), tiles_n)
    }

    /// Why the program cannot run `batch` GEMMs of `m x n x k` (the problem's) in one launch of
    /// this schedule, if it cannot (see the module's docs); [`HopperSchedule::takes`] is asked
    /// of each GEMM apart.
    pub fn check_batch(
        &self,
        m: u32,
        n: u32,
        _k: u32,
        batch: StridedBatch,
    ) -> Result<(), BatchRefusal> {
        let schedule = self.to_string();
        if self.row_split() {
            return Err(BatchRefusal::RowSplit { schedule });
        }
        if self.prefetch_waves() > 0 {
            return Err(BatchRefusal::Prefetch { schedule });
        }
        // The kernel's B: swapped, the problem's A.
        let shared_b = if self.swapped() {
            batch.shared_a
        } else {
            batch.shared_b
        };
        if self.resident_b().is_some() && !shared_b {
            return Err(BatchRefusal::ResidentB { schedule });
        }
        let (km, kn) = self.kernel_dims(m, n);
        let (tiles_m, tiles_n) = self.cluster_tiles(km, kn);
        let (batch_m, _) = self.batch_cluster_tiles(km, kn, batch.count);
        let total = batch_m * u64::from(tiles_n);
        // The walk's tile index and its stream-K iterations are 32-bit on the device.
        let max = u64::from(u32::MAX);
        if batch_m > max || total > max {
            return Err(BatchRefusal::TooManyTiles {
                schedule,
                count: batch.count,
                tiles_m,
                tiles_n,
                total,
                max,
            });
        }
        if self.order == Raster::Hilbert
            && (batch_m > 0xFFFF || tiles_n > 0xFFFF || total > MAX_HILBERT_TILES)
        {
            return Err(BatchRefusal::Hilbert {
                schedule,
                tiles_m: batch_m,
                tiles_n,
            });
        }
        Ok(())
    }
}

/// The batch's dimension of one operand's tensor map, `(extent, stride)` in elements: the
/// batch's `count` GEMMs `stride` apart, or for a stride of 0 (one matrix shared by the batch)
/// one deep, its stride `covered` (the elements one matrix's map covers: any stride serves a
/// dimension of extent 1, and TMA takes one that steps past the matrix), the kernel's batch
/// coordinate for it then 0.
///
/// ```
/// use kernels::hopper::batch::batch_dim;
/// assert_eq!(batch_dim(16, 1 << 20, 1 << 20), (16, 1 << 20));
/// assert_eq!(batch_dim(16, 0, 4096), (1, 4096));
/// ```
pub fn batch_dim(count: u64, stride: u64, covered: u64) -> (u64, u64) {
    if stride == 0 {
        (1, covered.max(1))
    } else {
        (count, stride)
    }
}

/// The elements the tensor map of a `rows x k` operand laid out as `layout` covers: its outer
/// dimension's extent times its stride (K-major, the rows `ld` apart; MN-major, the k). TMA
/// takes a batch stride at least that: each matrix starts past the one before.
pub fn covered(layout: &OperandLayout, rows: usize, k: usize) -> u64 {
    let outer = match layout.major {
        Major::K => rows,
        Major::MN => k,
    };
    outer as u64 * layout.ld as u64
}

/// Whether TMA can step through a batch of a matrix (`what`, as the clause names it) by `stride`
/// elements of `size` bytes, each matrix covering `cover` elements ([`covered`]): a multiple
/// of 16 bytes, below 2^40 bytes and at least `cover`, or 0 where the batch may share one
/// matrix (`shares`).
pub fn check_tma_stride(
    what: &str,
    (stride, cover): (usize, u64),
    size: usize,
    shares: bool,
) -> Result<(), String> {
    let s = stride as u64;
    if s == 0 && shares {
        return Ok(());
    }
    let b = s.saturating_mul(size as u64);
    if !b.is_multiple_of(16) {
        return Err(format!(
            "TMA steps from one GEMM of the batch to the next by a multiple of 16 bytes, and \
             {what}'s batch stride of {s} elements is {b} bytes"
        ));
    }
    if b >= 1 << 40 {
        return Err(format!(
            "TMA steps by less than 2^40 bytes, and {what}'s batch stride of {s} elements is \
             {b} bytes"
        ));
    }
    if s < cover {
        return Err(format!(
            "TMA's map of a batch starts each of {what}'s matrices past the one before, and \
             {what}'s batch stride of {s} elements is less than the {cover} one matrix's rows \
             cover"
        ));
    }
    Ok(())
}

/// Whether TMA can step through a batch of `form` over an `m x n x k` problem with elements of
/// `bytes` (inputs) and `out_bytes` (D), as a clause where it cannot: each of A's, B's and D's
/// batch strides a multiple of 16 bytes, below 2^40 bytes, and at least the elements one
/// matrix's map covers ([`covered`]: TMA's dimensions do not overlap); A's and B's may be 0
/// (one matrix shared by the batch). At most `u32::MAX` GEMMs (the kernel's count).
pub fn check_tma_strides(
    form: &Form,
    (m, n, k): (usize, usize, usize),
    bytes: usize,
    out_bytes: usize,
) -> Result<(), String> {
    let count = form.batch.count as u64;
    if count > u64::from(u32::MAX) {
        return Err(format!(
            "the kernel counts a batch's GEMMs in 32 bits, at most {}, not {count}",
            u32::MAX
        ));
    }
    let d_covered = m as u64 * form.ldd as u64;
    for (what, stride, cover, size, shares) in [
        ("A", form.batch.a, covered(&form.a, m, k), bytes, true),
        ("B", form.batch.b, covered(&form.b, n, k), bytes, true),
        ("D", form.batch.d, d_covered, out_bytes, false),
    ] {
        check_tma_stride(what, (stride, cover), size, shares)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::layout::Batch;

    fn form(m: usize, n: usize, k: usize, batch: Batch) -> Form {
        Form {
            batch,
            ..Form::packed(m, n, k)
        }
    }

    /// Strides a multiple of 16 bytes that step past a matrix pass; each rule's refusal names
    /// the operand and its stride.
    #[test]
    fn tma_strides_are_checked_by_operand() {
        let (m, n, k) = (64, 48, 32);
        let packed = Batch {
            count: 3,
            a: m * k,
            b: n * k,
            c: 0,
            d: m * n,
            residual: 0,
        };
        assert_eq!(
            check_tma_strides(&form(m, n, k, packed), (m, n, k), 2, 2),
            Ok(())
        );
        // A shared A and B, gaps between the matrices.
        let shared = Batch {
            a: 0,
            b: 0,
            d: m * n + 8,
            ..packed
        };
        assert_eq!(
            check_tma_strides(&form(m, n, k, shared), (m, n, k), 2, 2),
            Ok(())
        );
        let odd = Batch {
            b: n * k + 4,
            ..packed
        };
        let e = check_tma_strides(&form(m, n, k, odd), (m, n, k), 2, 2).unwrap_err();
        assert!(
            e.contains("B's batch stride of 1540 elements is 3080 bytes"),
            "{e}"
        );
        // D's stride 0 would have the GEMMs write over each other; Form::check refuses it
        // before, and TMA's rule does too.
        let short = Batch {
            a: m * k - 8,
            ..packed
        };
        let e = check_tma_strides(&form(m, n, k, short), (m, n, k), 2, 2).unwrap_err();
        assert!(
            e.contains("A's batch stride of 2040 elements is less than the 2048"),
            "{e}"
        );
        // D spans (m - 1) * ldd + n, but its map covers m * ldd.
        let padded = Form {
            ldd: n + 8,
            batch: Batch {
                d: (m - 1) * (n + 8) + n,
                ..packed
            },
            ..Form::packed(m, n, k)
        };
        assert_eq!(padded.check(m, n, k), Ok(()));
        let e = check_tma_strides(&padded, (m, n, k), 2, 2).unwrap_err();
        assert!(
            e.contains("D's batch stride of 3576 elements is less than the 3584"),
            "{e}"
        );
        // An f32 D steps in 4-byte elements: 4 of them are 16 bytes.
        let f32_d = Batch {
            d: m * n + 4,
            ..packed
        };
        assert_eq!(
            check_tma_strides(&form(m, n, k, f32_d), (m, n, k), 2, 4),
            Ok(())
        );
        let huge = Batch {
            a: 1 << 40,
            ..packed
        };
        let e = check_tma_strides(&form(m, n, k, huge), (m, n, k), 2, 2).unwrap_err();
        assert!(e.contains("less than 2^40 bytes"), "{e}");
        let many = Batch {
            count: 1 << 32,
            ..packed
        };
        let e = check_tma_strides(&form(m, n, k, many), (m, n, k), 2, 2).unwrap_err();
        assert!(e.contains("at most 4294967295, not 4294967296"), "{e}");
    }

    /// An MN-major operand's map covers its k columns `ld` apart.
    #[test]
    fn an_mn_major_operand_covers_its_columns() {
        let mn = OperandLayout {
            major: Major::MN,
            ld: 72,
        };
        assert_eq!(covered(&mn, 64, 40), 40 * 72);
        assert_eq!(covered(&OperandLayout::k_major(40), 64, 40), 64 * 40);
        assert_eq!(batch_dim(5, 0, 40 * 72), (1, 40 * 72));
        assert_eq!(batch_dim(5, 0, 0), (1, 1));
    }

    /// A batch's plan: rank-3 copies whose boxes are one GEMM's tiles (the same boxes, bytes
    /// and shared offsets as one GEMM's, one deep along the batch), and maps with the batch as
    /// the third dimension: its count and stride, or for a shared operand one deep; swapped,
    /// the kernel's A is the problem's B.
    #[test]
    fn a_batch_maps_its_gemms_as_the_third_dimension() {
        use crate::gemm::epilogue::Epilogue;
        use crate::gemm::layout::{FormParts, OutType};
        use crate::gemm::GemmDtype;
        use crate::hopper::HopperPlan;
        let parts = FormParts {
            a: Major::MN,
            b: Major::K,
            epilogue: Epilogue::Plain,
            out: OutType::F16,
        };
        let (m, n, k) = (200, 136, 72);
        let a = OperandLayout {
            major: Major::MN,
            ld: 208,
        };
        let b = OperandLayout::k_major(80);
        let form = Form {
            a,
            b,
            ldd: 144,
            batch: Batch {
                count: 3,
                a: 72 * 208 + 8,
                b: 0,
                c: 0,
                d: 200 * 144,
                residual: 0,
            },
            ..Form::packed(m, n, k)
        };
        for spec in ["128x128x64s4_c2x1", "128x80x64s4_t"] {
            let s: HopperSchedule = spec.parse().unwrap();
            let one = HopperPlan::with_form(s, GemmDtype::F16, Some(parts)).unwrap();
            let plan = HopperPlan::for_batch(s, GemmDtype::F16, parts).unwrap();
            assert_eq!(plan.batching, Batching::Strided);
            for (c, o) in [
                (&plan.tma_a, &one.tma_a),
                (&plan.tma_b_multicast, &one.tma_b_multicast),
                (&plan.tma_d, &one.tma_d),
            ] {
                assert_eq!(c.global.rank, 3, "{spec}");
                assert_eq!(c.box_dims[..2], o.box_dims[..], "{spec}");
                assert_eq!(c.box_dims[2], 1, "{spec}");
                assert_eq!(c.bytes(), o.bytes(), "{spec}");
                let offsets = |t: &dsl_core::atom::tma::TmaCopy| -> Vec<i64> {
                    t.boxes.iter().map(|b| b.smem_offset).collect()
                };
                assert_eq!(offsets(c), offsets(o), "{spec}");
                assert!(c
                    .boxes
                    .iter()
                    .all(|b| b.coord.len() == 3 && b.coord[2] == 0));
            }
            let (km, kn) = s.kernel_dims(m as u32, n as u32);
            let [da, db, dd] = plan.descriptors_form((km, kn, k as u32), &form).unwrap();
            // The problem's A: MN-major, M contiguous, 3 GEMMs 72 * 208 + 8 apart; its B one
            // matrix the batch shares, one deep, stepping past its 136 rows of 80.
            let (pa, pb) = if s.swapped() { (db, da) } else { (da, db) };
            assert_eq!(pa.global_dims, vec![200, 72, 3], "{spec}");
            assert_eq!(pa.global_strides_bytes, vec![208 * 2, (72 * 208 + 8) * 2]);
            assert_eq!(pb.global_dims, vec![72, 136, 1], "{spec}");
            assert_eq!(pb.global_strides_bytes, vec![80 * 2, 136 * 80 * 2]);
            // D's rows are contiguous either way (swapped, D's transposed is column-major).
            assert_eq!(dd.global_dims, vec![136, 200, 3], "{spec}");
            assert_eq!(dd.global_strides_bytes, vec![144 * 2, 200 * 144 * 2]);
            assert_eq!(one.batching, Batching::Single);
            let [oa, ..] = one.descriptors_form((km, kn, k as u32), &form).unwrap();
            assert_eq!(oa.global_dims.len(), 2);
        }
    }

    /// Each schedule feature a batch refuses, with its sentence; the rest pass, and a long
    /// walk is counted over the whole batch.
    #[test]
    fn schedules_a_batch_refuses() {
        let batch = StridedBatch {
            count: 4,
            ..StridedBatch::ONE
        };
        let s = |spec: &str| spec.parse::<HopperSchedule>().unwrap();
        for ok in [
            "128x256x64s3",
            "128x256x64s3_c2x1_h",
            "128x64x64s4_c1x2_t",
            "64x128x64s4_p_q",
            "128x128x64s4_u8",
            "128x256x64s4_f1_e128_l256_vlfn_k",
            "128x160x64s5_f1_k_t",
            "128x256x64s3_n",
        ] {
            assert_eq!(s(ok).check_batch(1000, 1000, 512, batch), Ok(()), "{ok}");
        }
        let e = s("64x256x64s8_e128_r4_p_b")
            .check_batch(81920, 256, 256, batch)
            .unwrap_err();
        assert!(e.to_string().contains("shares one GEMM's last wave"), "{e}");
        let e = s("64x256x64s8_e128_r4_a2")
            .check_batch(
                81920,
                256,
                256,
                StridedBatch {
                    shared_b: true,
                    ..batch
                },
            )
            .unwrap_err();
        assert!(e.to_string().contains("(_aN)"), "{e}");
        let e = s("64x256x64s8_f1_e128_r4_p_l0_vfnf")
            .check_batch(4096, 256, 256, batch)
            .unwrap_err();
        assert!(e.to_string().contains("keeps B resident"), "{e}");
        // 65536 GEMMs of 256 x 256 tiles of one row: 2^16 x 2^16 tiles, one past the walk.
        let many = StridedBatch {
            count: 1 << 16,
            ..StridedBatch::ONE
        };
        let e = s("128x256x64s3")
            .check_batch(256, 1 << 24, 64, many)
            .unwrap_err();
        assert!(
            e.to_string().contains("the kernel's walk counts at most"),
            "{e}"
        );
        // The Hilbert table over the batch's tiles: 2^12 GEMMs of 16 tile rows.
        let hilbert = StridedBatch {
            count: 1 << 12,
            ..StridedBatch::ONE
        };
        let e = s("128x256x64s3_h")
            .check_batch(2048, 256, 64, hilbert)
            .unwrap_err();
        assert!(e.to_string().contains("Hilbert order"), "{e}");
        assert_eq!(
            s("128x256x64s3").check_batch(2048, 256, 64, hilbert),
            Ok(())
        );
    }
}
