//! Memory fences: `membar`, `fence.sc/acq_rel`, the async-proxy fence `fence.proxy.async`,
//! `fence.mbarrier_init.release.cluster` (sm_90), and the ordering between a kernel and the
//! stream's kernel before and after it under a programmatic dependent launch,
//! `griddepcontrol.{wait,launch_dependents}` (sm_90).

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::space::Scope;
use crate::ir::target::{PtxVersion, Requirement, Target};

/// Strength of a `fence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceSem {
    /// `.sc`: sequentially consistent.
    Sc,
    /// `.acq_rel`: acquire-release.
    AcqRel,
}

/// The state space `fence.proxy.async` orders between the generic and async proxies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AsyncProxySpace {
    /// No qualifier: every state space.
    All,
    /// `.global`
    Global,
    /// `.shared::cta`
    SharedCta,
    /// `.shared::cluster`
    SharedCluster,
}

/// Fence ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Fence {
    /// `membar.{cta,gl,sys}` (the `Cluster` scope is not a membar level and is refused).
    Membar {
        /// `Cta`, `Gpu` (= `.gl`) or `Sys`.
        scope: Scope,
    },
    /// `fence.sem.scope`.
    Fence {
        /// Strength.
        sem: FenceSem,
        /// Scope (`Cluster` needs sm_90).
        scope: Scope,
    },
    /// `fence.proxy.async{.space}` (sm_90): make generic-proxy writes visible to TMA/wgmma and
    /// back.
    ProxyAsync {
        /// Which state space.
        space: AsyncProxySpace,
    },
    /// `fence.mbarrier_init.release.cluster` (sm_90): publish `mbarrier.init` to the cluster.
    MbarrierInit,
    /// `griddepcontrol.wait` (sm_90): wait until the grids this one depends on (the stream's
    /// previous kernel, under a programmatic dependent launch) have completed and their memory
    /// is visible; returns at once without such a launch.
    GridDependencyWait,
    /// `griddepcontrol.launch_dependents` (sm_90): this block no longer holds back the launch
    /// of the stream's next kernel (which still waits for this one's completion in its own
    /// `griddepcontrol.wait`).
    LaunchDependents,
}

impl OpInfo for Fence {
    fn mnemonic(&self) -> &'static str {
        match self {
            Fence::Membar { .. } => "membar",
            Fence::Fence { .. } => "fence",
            Fence::ProxyAsync { .. } => "fence.proxy.async",
            Fence::MbarrierInit => "fence.mbarrier_init",
            Fence::GridDependencyWait => "griddepcontrol.wait",
            Fence::LaunchDependents => "griddepcontrol.launch_dependents",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            Fence::Fence {
                scope: Scope::Cluster,
                ..
            }
            | Fence::ProxyAsync { .. }
            | Fence::MbarrierInit
            | Fence::GridDependencyWait
            | Fence::LaunchDependents => Requirement::at_least(Target::Sm90a),
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Fence::Fence {
                scope: Scope::Cluster,
                ..
            }
            | Fence::GridDependencyWait
            | Fence::LaunchDependents => PtxVersion::new(7, 8),
            Fence::ProxyAsync { .. } | Fence::MbarrierInit => PtxVersion::new(8, 0),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        if let Fence::Membar {
            scope: Scope::Cluster,
        } = self
        {
            return Err(IrError::bad(
                "membar",
                "membar has no cluster level; use fence.acq_rel.cluster",
            ));
        }
        Ok(())
    }
}
