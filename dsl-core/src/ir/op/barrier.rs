//! Block barriers (`bar.sync` / `barrier.sync` with an id and a thread count, `bar.arrive`) and
//! cluster barriers (`barrier.cluster.arrive/wait`, sm_90).

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::value::Operand;

/// Ordering of `barrier.cluster.arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterArriveSem {
    /// Default: release semantics.
    Default,
    /// `.release`, spelled out.
    Release,
    /// `.relaxed`: no memory ordering (PTX 8.0).
    Relaxed,
}

/// Barrier ops. Ids are 0..16 (0 is `__syncthreads`); counts are multiples of 32 threads.
#[derive(Debug, Clone, PartialEq)]
pub enum Barrier {
    /// `bar.sync id{, count}` (= `barrier.sync.aligned`): wait until `count` threads (default:
    /// the whole block) arrived at barrier `id`. All threads of a warp execute it together.
    Sync {
        /// Barrier id (u32).
        id: Operand,
        /// Threads expected, or the whole block.
        count: Option<Operand>,
    },
    /// `barrier.sync id{, count}`: like `Sync` without the warp-uniform requirement.
    SyncUnaligned {
        /// Barrier id.
        id: Operand,
        /// Threads expected.
        count: Option<Operand>,
    },
    /// `bar.arrive id, count` (= `barrier.arrive.aligned`): arrive without waiting (producer
    /// side of a named barrier). All threads of a warp execute it together.
    Arrive {
        /// Barrier id.
        id: Operand,
        /// Threads expected (required for arrive).
        count: Operand,
    },
    /// `barrier.arrive id, count`: like `Arrive` without the warp-uniform requirement.
    ArriveUnaligned {
        /// Barrier id.
        id: Operand,
        /// Threads expected (required for arrive).
        count: Operand,
    },
    /// `barrier.cluster.arrive{.sem}{.aligned}` (sm_90).
    ClusterArrive {
        /// Memory ordering.
        sem: ClusterArriveSem,
        /// All threads of the warp execute it together (`.aligned`).
        aligned: bool,
    },
    /// `barrier.cluster.wait{.acquire}{.aligned}` (sm_90): wait for every thread of the cluster
    /// to arrive.
    ClusterWait {
        /// `.acquire` spelled out (it is the default).
        acquire: bool,
        /// `.aligned`.
        aligned: bool,
    },
}

impl OpInfo for Barrier {
    fn mnemonic(&self) -> &'static str {
        match self {
            Barrier::Sync { .. } => "bar.sync",
            Barrier::SyncUnaligned { .. } => "barrier.sync",
            Barrier::Arrive { .. } => "bar.arrive",
            Barrier::ArriveUnaligned { .. } => "barrier.arrive",
            Barrier::ClusterArrive { .. } => "barrier.cluster.arrive",
            Barrier::ClusterWait { .. } => "barrier.cluster.wait",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            Barrier::ClusterArrive { .. } | Barrier::ClusterWait { .. } => {
                Requirement::at_least(Target::Sm90a)
            }
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Barrier::ClusterArrive {
                sem: ClusterArriveSem::Default,
                ..
            } => PtxVersion::new(7, 8),
            Barrier::ClusterArrive { .. } | Barrier::ClusterWait { acquire: true, .. } => {
                PtxVersion::new(8, 0)
            }
            Barrier::ClusterWait { .. } => PtxVersion::new(7, 8),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let id = match self {
            Barrier::Sync { id, .. }
            | Barrier::SyncUnaligned { id, .. }
            | Barrier::Arrive { id, .. }
            | Barrier::ArriveUnaligned { id, .. } => id,
            _ => return Ok(()),
        };
        if let Operand::Imm(i) = id {
            if !(0..16).contains(i) {
                return Err(IrError::bad(m, format!("barrier id {i} is not in 0..16")));
            }
        }
        let count = match self {
            Barrier::Sync { count, .. } | Barrier::SyncUnaligned { count, .. } => *count,
            Barrier::Arrive { count, .. } | Barrier::ArriveUnaligned { count, .. } => Some(*count),
            _ => None,
        };
        if let Some(Operand::Imm(c)) = count {
            if c <= 0 || c % 32 != 0 {
                return Err(IrError::bad(
                    m,
                    format!("thread count {c} is not a positive multiple of 32"),
                ));
            }
        }
        Ok(())
    }
}
