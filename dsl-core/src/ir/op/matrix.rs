//! Warp-wide 8x8 matrix loads from shared memory (`ldmatrix`, sm_75 and so every rute target) and
//! stores to it (`stmatrix`, sm_90), 16-bit elements.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::value::{Address, Operand, Reg};

/// How many 8x8 matrices one instruction moves (one 32-bit register per thread per matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixCount {
    /// `.x1`
    X1,
    /// `.x2`
    X2,
    /// `.x4`
    X4,
}

impl MatrixCount {
    /// 1, 2 or 4.
    pub fn count(self) -> usize {
        match self {
            MatrixCount::X1 => 1,
            MatrixCount::X2 => 2,
            MatrixCount::X4 => 4,
        }
    }
}

/// Matrix ops (`.m8n8`, `.b16`, `.shared`).
#[derive(Debug, Clone, PartialEq)]
pub enum Matrix {
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {dsts}, [addr]`: threads 8i..8i+8 give
    /// the row addresses of matrix i.
    Ldmatrix {
        /// Number of matrices.
        num: MatrixCount,
        /// Transpose each 8x8 matrix.
        trans: bool,
        /// One b32 register per matrix.
        dsts: Vec<Reg>,
        /// This thread's row address (shared).
        addr: Address,
    },
    /// `stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [addr], {srcs}` (sm_90).
    Stmatrix {
        /// Number of matrices.
        num: MatrixCount,
        /// Transpose each 8x8 matrix.
        trans: bool,
        /// This thread's row address (shared).
        addr: Address,
        /// One b32 operand per matrix.
        srcs: Vec<Operand>,
    },
}

impl OpInfo for Matrix {
    fn mnemonic(&self) -> &'static str {
        match self {
            Matrix::Ldmatrix { .. } => "ldmatrix",
            Matrix::Stmatrix { .. } => "stmatrix",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            Matrix::Ldmatrix { .. } => Requirement::ANY,
            Matrix::Stmatrix { .. } => Requirement::at_least(Target::Sm90a),
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Matrix::Ldmatrix { .. } => PtxVersion::new(6, 5),
            Matrix::Stmatrix { .. } => PtxVersion::new(7, 8),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let (num, n, bad_reg) = match self {
            Matrix::Ldmatrix { num, dsts, .. } => {
                (*num, dsts.len(), dsts.iter().any(|r| r.ty.bits() != 32))
            }
            Matrix::Stmatrix { num, srcs, .. } => (
                *num,
                srcs.len(),
                srcs.iter()
                    .any(|o| o.reg().is_some_and(|r| r.ty.bits() != 32)),
            ),
        };
        if n != num.count() || bad_reg {
            return Err(IrError::bad(
                self.mnemonic(),
                format!(
                    "x{} moves {} 32-bit registers, got {n}",
                    num.count(),
                    num.count()
                ),
            ));
        }
        Ok(())
    }
}
