//! How the Hopper program holds an operand of either major: K-major (K contiguous, the packed
//! form's) or MN-major (M or N contiguous, as cuBLAS's transposed operands are). The global
//! tensor TMA reads, the shared-memory atom GMMA reads (CuTe's `ss_smem_selector` for 16-bit
//! elements) and the order its atoms tile the stage in, so that TMA fills a block of rows with
//! one box. The wgmma's transpose bits follow from the atom's major.

use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
use dsl_core::atom::tma::TmaGlobal;
use dsl_core::atom::ValType;
use dsl_core::layout::{ComposedLayout, IntTuple, LayoutError};

use super::plan::PlanError;
use super::schedule::HopperSchedule;
use crate::gemm::layout::Major;

/// The majors of the kernel's A and B: in global memory, so in shared memory (GMMA reads
/// either, its transpose bits set from the atom's majors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OperandMajors {
    /// The kernel's A's.
    pub a: GmmaMajor,
    /// The kernel's B's.
    pub b: GmmaMajor,
}

impl OperandMajors {
    /// Both K-major: the packed form's.
    pub const K: OperandMajors = OperandMajors {
        a: GmmaMajor::K,
        b: GmmaMajor::K,
    };

    /// The kernel's majors for the problem's A in `a` and B in `b`: exchanged where the
    /// schedule swaps A and B (the kernel's A is then the problem's B).
    pub fn of_kernel(a: Major, b: Major, swapped: bool) -> OperandMajors {
        let gmma = |m: Major| match m {
            Major::K => GmmaMajor::K,
            Major::MN => GmmaMajor::MN,
        };
        let (a, b) = if swapped { (b, a) } else { (a, b) };
        OperandMajors {
            a: gmma(a),
            b: gmma(b),
        }
    }
}

/// The rows each operand's shared-memory atom must divide under `schedule`, as `(A's, B's)`:
/// A's a consumer's rows and a block's multicast slice of the tile, B's its slice.
pub fn atom_rows(schedule: &HopperSchedule) -> (i64, i64) {
    let (bm, bn, _) = schedule.tile.mnk();
    let (cx, cy) = schedule.cluster.blocks();
    let rows = i64::from(schedule.consumer_rows());
    (gcd(i64::from(bm / cy), rows), i64::from(bn / cx))
}

/// Whether every MN-major operand of `schedule` (the kernel's, in `majors`) is staged in a
/// swizzled atom (rows a multiple of 16: [`operand_atom`]'s 32-byte swizzle or wider). An
/// unswizzled one is correct but slow: TMA fills it 16 bytes per row, and `wgmma` reads it with
/// bank conflicts; the default schedule avoids it where another tile serves.
pub fn swizzled(schedule: &HopperSchedule, majors: OperandMajors) -> bool {
    let (a, b) = atom_rows(schedule);
    [(majors.a, a), (majors.b, b)]
        .into_iter()
        .all(|(major, rows)| major == GmmaMajor::K || rows % 16 == 0)
}

/// The global tensor of an operand in `major`, `(rows, k)`: K-major rows are contiguous,
/// MN-major columns.
pub(crate) fn global_of(major: GmmaMajor, elem: ValType) -> TmaGlobal {
    let contiguous = match major {
        GmmaMajor::K => 1,
        GmmaMajor::MN => 0,
    };
    TmaGlobal {
        contiguous,
        ..TmaGlobal::row_major(elem)
    }
}

/// CuTe's `ss_smem_selector` for 16-bit operands of a tile `rows` deep in M or N (or the part
/// of it that must be whole atoms: a consumer's rows, a block's multicast slice): K-major, the
/// 128-byte swizzle (64 elements of K; `check()` asks tile K in multiples of 64); MN-major, the
/// widest swizzle whose atom's 64, 32 or 16 rows divide `rows`, else unswizzled core matrices
/// of 8 rows (correct, but loaded in boxes of 16 bytes per row and read with bank conflicts).
/// An error names the operand where not even 8 rows divide it.
pub fn operand_atom(
    major: GmmaMajor,
    rows: i64,
    operand: &'static str,
) -> Result<ComposedLayout, PlanError> {
    let layout_type = match major {
        GmmaMajor::K => GmmaLayoutType::B128,
        GmmaMajor::MN => [
            (64, GmmaLayoutType::B128),
            (32, GmmaLayoutType::B64),
            (16, GmmaLayoutType::B32),
            (8, GmmaLayoutType::Interleave),
        ]
        .into_iter()
        .find(|&(w, _)| rows % w == 0)
        .map(|(_, t)| t)
        .ok_or(PlanError::MnMajorRows { operand, rows })?,
    };
    Ok(gmma_atom(major, layout_type, 2)?)
}

/// `atom` tiled over `shape` (`(rows, k[, stages])`): K-major atoms along the rows first (as
/// CuTe's default order), MN-major along K first (CuTe's `Step<_2,_1,_3>`), so that a block of
/// the atom's rows is contiguous over the tile's whole K and TMA fills it with one box.
pub(crate) fn operand_tile(
    atom: &ComposedLayout,
    major: GmmaMajor,
    shape: &[i64],
) -> Result<ComposedLayout, LayoutError> {
    let order = match (major, shape.len()) {
        (GmmaMajor::K, _) => None,
        (GmmaMajor::MN, 2) => Some(IntTuple::ints(&[1, 0])),
        (GmmaMajor::MN, _) => Some(IntTuple::ints(&[1, 0, 2])),
    };
    atom.tile_to_shape(&IntTuple::ints(shape), order.as_ref())
}

/// The greatest common divisor of `a` and `b`.
pub(crate) fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
