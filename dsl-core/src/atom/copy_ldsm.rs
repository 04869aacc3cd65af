//! `ldmatrix` (SM75, `include/cute/arch/copy_sm75.hpp`) and `stmatrix` (SM90,
//! `copy_sm90.hpp`): a warp moves 8x8 matrices of 16-bit elements between shared memory and
//! registers; each thread names one row of 8 elements and holds two elements of each matrix.

use super::copy::{constant, wrong_ends, CopyEnd, CopyOperation, CopyTraits, EndKind};
use super::value::ValType;
use crate::ir::op::{Matrix, MatrixCount};
use crate::ir::Operand;
use crate::kernel::emit;
use crate::layout::{Layout, LayoutError};

/// The source of `ldmatrix.x{n}`: one 128-bit row address per thread; threads past the rows
/// the instruction reads are broadcast with stride 0.
fn row_addresses(n: u32) -> Layout {
    match n {
        1 => constant("((8,4),128):((128,0),1)"),
        2 => constant("((16,2),128):((128,0),1)"),
        _ => constant("(32,128):(128,1)"),
    }
}

/// The registers of `ldmatrix.x{n}`: 32 bits per thread per matrix, matrix j at bit 1024 j.
fn fragments(n: u32) -> Layout {
    match n {
        1 => constant("(32,32):(32,1)"),
        2 => constant("(32,(32,2)):(32,(1,1024))"),
        _ => constant("(32,(32,4)):(32,(1,1024))"),
    }
}

/// The registers of `ldmatrix.x{n}.trans`.
fn fragments_transposed(n: u32) -> Layout {
    match n {
        1 => constant("((4,8),(16,2)):((256,16),(1,128))"),
        2 => constant("((4,8),(16,2,2)):((256,16),(1,128,1024))"),
        _ => constant("((4,8),(16,2,4)):((256,16),(1,128,1024))"),
    }
}

fn count(n: u32) -> Result<MatrixCount, String> {
    match n {
        1 => Ok(MatrixCount::X1),
        2 => Ok(MatrixCount::X2),
        4 => Ok(MatrixCount::X4),
        _ => Err(format!("moves 1, 2 or 4 matrices, not {n}")),
    }
}

fn sixteen_bit(name: &str, val: ValType) -> Result<(), LayoutError> {
    if val.bits() == 16 {
        Ok(())
    } else {
        Err(LayoutError::precondition(
            "copy",
            name.to_string(),
            format!("moves 16-bit values, not {val}"),
        ))
    }
}

fn load(n: u32, trans: bool, src: &CopyEnd, dst: &CopyEnd) -> Option<Result<(), String>> {
    let (CopyEnd::Shared { addr }, CopyEnd::Registers(dsts)) = (src, dst) else {
        return None;
    };
    Some(count(n).and_then(|num| {
        if dsts.len() != n as usize {
            return Err(format!("writes {n} registers, not {}", dsts.len()));
        }
        emit(Matrix::Ldmatrix {
            num,
            trans,
            dsts: dsts.clone(),
            addr: addr.clone(),
        });
        Ok(())
    }))
}

macro_rules! ldsm {
    ($(#[$doc:meta])* $name:ident, $trans:expr, $cute:expr, $dst:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name {
            /// Number of 8x8 matrices (1, 2, 4).
            pub n: u32,
        }

        impl CopyOperation for $name {
            fn name(&self) -> String {
                let f: fn(u32) -> String = $cute;
                f(self.n)
            }
            fn traits(&self) -> Result<CopyTraits, String> {
                count(self.n)?;
                let dst: fn(u32) -> Layout = $dst;
                Ok(CopyTraits {
                    thr_id: constant("32:1"),
                    src: row_addresses(self.n),
                    dst: dst(self.n),
                    reference: dst(self.n),
                })
            }
            fn src_kind(&self) -> EndKind {
                EndKind::Shared
            }
            fn dst_kind(&self) -> EndKind {
                EndKind::Registers
            }
            fn call(&self, val: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
                sixteen_bit(&self.name(), val)?;
                match load(self.n, $trans, src, dst) {
                    None => Err(wrong_ends(self, src, dst)),
                    Some(r) => r.map_err(|why| LayoutError::precondition("copy", self.name(), why)),
                }
            }
        }
    };
}

ldsm!(
    /// `SM75_U32x{1,2,4}_LDSM_N`: `ldmatrix.sync.aligned.x{n}.m8n8.shared.b16`.
    LdsmN,
    false,
    |n| format!("SM75_U32x{n}_LDSM_N"),
    fragments
);

ldsm!(
    /// `SM75_U16x{2,4,8}_LDSM_T`: `ldmatrix.sync.aligned.x{n}.trans.m8n8.shared.b16` (CuTe's name
    /// counts 16-bit values, `2n`).
    LdsmT,
    true,
    |n| format!("SM75_U16x{}_LDSM_T", 2 * n),
    fragments_transposed
);

/// `SM90_U32x{1,2,4}_STSM_N`: `stmatrix.sync.aligned.x{n}.m8n8.shared.b16`, ldmatrix reversed
/// (CuTe swaps `LDSM_N`'s source and destination).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StsmN {
    /// Number of 8x8 matrices (1, 2, 4).
    pub n: u32,
}

impl CopyOperation for StsmN {
    fn name(&self) -> String {
        format!("SM90_U32x{}_STSM_N", self.n)
    }
    fn traits(&self) -> Result<CopyTraits, String> {
        count(self.n)?;
        Ok(CopyTraits {
            thr_id: constant("32:1"),
            src: fragments(self.n),
            dst: row_addresses(self.n),
            reference: fragments(self.n),
        })
    }
    fn src_kind(&self) -> EndKind {
        EndKind::Registers
    }
    fn dst_kind(&self) -> EndKind {
        EndKind::Shared
    }
    fn call(&self, val: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        sixteen_bit(&self.name(), val)?;
        let (CopyEnd::Registers(srcs), CopyEnd::Shared { addr }) = (src, dst) else {
            return Err(wrong_ends(self, src, dst));
        };
        let num =
            count(self.n).map_err(|why| LayoutError::precondition("copy", self.name(), why))?;
        if srcs.len() != self.n as usize {
            return Err(LayoutError::precondition(
                "copy",
                self.name(),
                format!("reads {} registers, not {}", self.n, srcs.len()),
            ));
        }
        emit(Matrix::Stmatrix {
            num,
            trans: false,
            addr: addr.clone(),
            srcs: srcs.iter().map(|&r| Operand::Reg(r)).collect(),
        });
        Ok(())
    }
}
