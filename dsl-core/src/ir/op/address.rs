//! Address-space conversions: `cvta` between generic and a specific space, and `mapa` (sm_90),
//! which maps a shared address to the same offset in another block of the cluster.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::space::StateSpace;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::value::{Operand, Reg};

/// Address conversion ops.
#[derive(Debug, Clone, PartialEq)]
pub enum AddressOp {
    /// `cvta.space.size dst, src` (to generic) or `cvta.to.space.size dst, src` (from generic).
    Cvta {
        /// `true`: `src` is in `space`, `dst` generic; `false`: the reverse.
        to_generic: bool,
        /// `Global`, `Shared`, `SharedCluster`, `Local`, `Param` or `Const`.
        space: StateSpace,
        /// Result (u32 or u64).
        dst: Reg,
        /// Address to convert.
        src: Operand,
    },
    /// `mapa{.space}.size dst, src, cta_rank`: the address of `src`'s shared variable in block
    /// `cta_rank` of the cluster.
    Mapa {
        /// `SharedCluster` (shared addresses, u32) or `Generic` (u64).
        space: StateSpace,
        /// Result.
        dst: Reg,
        /// A shared::cta (or generic) address.
        src: Operand,
        /// Target block's rank in the cluster (u32).
        cta_rank: Operand,
    },
}

impl OpInfo for AddressOp {
    fn mnemonic(&self) -> &'static str {
        match self {
            AddressOp::Cvta { .. } => "cvta",
            AddressOp::Mapa { .. } => "mapa",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            AddressOp::Cvta {
                space: StateSpace::SharedCluster,
                ..
            }
            | AddressOp::Mapa { .. } => Requirement::at_least(Target::Sm90a),
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            AddressOp::Cvta {
                space: StateSpace::SharedCluster,
                ..
            }
            | AddressOp::Mapa { .. } => PtxVersion::new(7, 8),
            AddressOp::Cvta {
                space: StateSpace::Param,
                ..
            } => PtxVersion::new(7, 7),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        match self {
            AddressOp::Cvta { space, dst, .. } => {
                if *space == StateSpace::Generic {
                    return Err(IrError::bad(
                        "cvta",
                        "converts between generic and a named space",
                    ));
                }
                if !matches!(dst.ty.bits(), 32 | 64) || dst.ty.is_float() {
                    return Err(IrError::bad("cvta", "addresses are u32 or u64"));
                }
            }
            AddressOp::Mapa { space, dst, .. } => {
                if !matches!(space, StateSpace::SharedCluster | StateSpace::Generic) {
                    return Err(IrError::bad(
                        "mapa",
                        "maps shared::cluster or generic addresses",
                    ));
                }
                if !matches!(dst.ty.bits(), 32 | 64) || dst.ty.is_float() {
                    return Err(IrError::bad("mapa", "addresses are u32 or u64"));
                }
            }
        }
        Ok(())
    }
}
