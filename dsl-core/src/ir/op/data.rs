//! Data movement between registers: `mov`, special-register reads, symbol addresses, and packing
//! narrow values into wider registers. Available on every target (cluster special registers need
//! sm_90, see [`SpecialReg::requires`]).

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::special::SpecialReg;
use crate::ir::target::{PtxVersion, Requirement};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// Register-to-register ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `mov.ty dst, src`.
    Mov {
        /// Type of `dst` and `src`.
        ty: Type,
        /// Destination.
        dst: Reg,
        /// Source.
        src: Operand,
    },
    /// `mov.u32 dst, %sreg` (or `.u64` for 64-bit registers).
    ReadSpecial {
        /// Destination, of type `sreg.ty()`.
        dst: Reg,
        /// The special register.
        sreg: SpecialReg,
    },
    /// `mov.u32/u64 dst, symbol`: the address of a kernel parameter or a shared allocation in its
    /// own state space (a shared address is 32 bits, a parameter's 64).
    AddressOf {
        /// Destination (u32 or u64).
        dst: Reg,
        /// The parameter or shared allocation's name.
        symbol: String,
    },
    /// `mov.bN dst, {p0, p1, ..}`: concatenate equal-width parts, `parts[0]` in the low bits.
    Pack {
        /// Destination; its width is the parts' widths summed (32 or 64 bits).
        dst: Reg,
        /// Two or four parts of one width.
        parts: Vec<Operand>,
    },
    /// `mov.bN {d0, d1, ..}, src`: split `src` into equal parts, `dsts[0]` from the low bits.
    Unpack {
        /// Two or four destinations of one width.
        dsts: Vec<Reg>,
        /// Source (32 or 64 bits).
        src: Reg,
    },
}

impl OpInfo for Data {
    fn mnemonic(&self) -> &'static str {
        "mov"
    }
    fn requires(&self) -> Requirement {
        match self {
            Data::ReadSpecial { sreg, .. } => sreg.requires(),
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Data::ReadSpecial { sreg, .. } => sreg.ptx_version(),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        match self {
            Data::Mov { ty, dst, .. } => {
                if dst.ty.bits() != ty.bits() {
                    return Err(IrError::bad(
                        "mov",
                        format!("{} register for a {ty} move", dst.ty),
                    ));
                }
            }
            Data::ReadSpecial { dst, sreg } => {
                if dst.ty.bits() != sreg.ty().bits() {
                    return Err(IrError::bad(
                        "mov",
                        format!("{sreg:?} needs a {} register", sreg.ty()),
                    ));
                }
            }
            Data::AddressOf { dst, .. } => {
                if !matches!(dst.ty.bits(), 32 | 64) || dst.ty == Type::F32 || dst.ty == Type::F64 {
                    return Err(IrError::bad(
                        "mov",
                        "an address goes into a 32- or 64-bit integer",
                    ));
                }
            }
            Data::Pack { dst, parts } => {
                if !matches!(parts.len(), 2 | 4) || !matches!(dst.ty.bits(), 32 | 64) {
                    return Err(IrError::bad(
                        "mov",
                        "packing makes 32 or 64 bits from 2 or 4 parts",
                    ));
                }
                let part_bits = dst.ty.bits() / parts.len() as u32;
                for p in parts {
                    if let Operand::Reg(r) = p {
                        if r.ty.bits() != part_bits {
                            return Err(IrError::bad(
                                "mov",
                                format!("part {} is not {part_bits} bits", r.ty),
                            ));
                        }
                    }
                }
            }
            Data::Unpack { dsts, src } => {
                if !matches!(dsts.len(), 2 | 4) || !matches!(src.ty.bits(), 32 | 64) {
                    return Err(IrError::bad(
                        "mov",
                        "unpacking splits 32 or 64 bits into 2 or 4 parts",
                    ));
                }
                let part_bits = src.ty.bits() / dsts.len() as u32;
                if dsts.iter().any(|d| d.ty.bits() != part_bits) || part_bits < 16 {
                    return Err(IrError::bad(
                        "mov",
                        format!("parts must be {part_bits} bits (16 or more)"),
                    ));
                }
            }
        }
        Ok(())
    }
}
