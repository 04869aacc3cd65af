//! Special registers: thread, block and cluster coordinates, lane and warp ids, clocks.

use super::target::{PtxVersion, Requirement, Target};
use super::types::Type;

/// One of the three grid dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    /// `x`, `y` or `z`.
    pub fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// A read-only special register; the op [`crate::ir::op::Data::ReadSpecial`] copies it into a
/// virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// `%tid`: thread index in the block.
    Tid(Dim),
    /// `%ntid`: block dimensions.
    Ntid(Dim),
    /// `%ctaid`: block index in the grid.
    Ctaid(Dim),
    /// `%nctaid`: grid dimensions.
    Nctaid(Dim),
    /// `%laneid`: lane in the warp, 0..32.
    LaneId,
    /// `%warpid`: the hardware warp slot (not `tid / 32`; it can change under preemption).
    WarpId,
    /// `%clusterid`: cluster index in the grid.
    ClusterId(Dim),
    /// `%nclusterid`: grid dimensions in clusters.
    NclusterId(Dim),
    /// `%cluster_ctaid`: block index in its cluster.
    ClusterCtaid(Dim),
    /// `%cluster_nctaid`: cluster dimensions in blocks.
    ClusterNctaid(Dim),
    /// `%cluster_ctarank`: linear rank of the block in its cluster.
    ClusterCtarank,
    /// `%cluster_nctarank`: number of blocks in the cluster.
    ClusterNctarank,
    /// `%clock`: 32-bit cycle counter.
    Clock,
    /// `%clock64`: 64-bit cycle counter.
    Clock64,
    /// `%globaltimer`: nanosecond timer.
    GlobalTimer,
    /// `%dynamic_smem_size`: bytes of dynamic shared memory the launch gave.
    DynamicSmemSize,
    /// `%total_smem_size`: static plus dynamic shared memory bytes.
    TotalSmemSize,
    /// `%smid`: the SM the thread runs on.
    SmId,
}

impl SpecialReg {
    /// The type of the value it holds.
    pub fn ty(self) -> Type {
        match self {
            SpecialReg::Clock64 | SpecialReg::GlobalTimer => Type::U64,
            _ => Type::U32,
        }
    }

    /// Cluster registers need sm_90; the rest exist on every rute target.
    pub fn requires(self) -> Requirement {
        if self.is_cluster() {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::ANY
        }
    }

    /// The PTX ISA version that introduced the register.
    pub fn ptx_version(self) -> PtxVersion {
        match self {
            _ if self.is_cluster() => PtxVersion::new(7, 8),
            SpecialReg::TotalSmemSize => PtxVersion::new(4, 1),
            SpecialReg::DynamicSmemSize => PtxVersion::new(4, 1),
            SpecialReg::GlobalTimer => PtxVersion::new(3, 1),
            _ => PtxVersion::new(2, 0),
        }
    }

    /// Whether this is one of the cluster registers (sm_90 and later).
    pub fn is_cluster(self) -> bool {
        matches!(
            self,
            SpecialReg::ClusterId(_)
                | SpecialReg::NclusterId(_)
                | SpecialReg::ClusterCtaid(_)
                | SpecialReg::ClusterNctaid(_)
                | SpecialReg::ClusterCtarank
                | SpecialReg::ClusterNctarank
        )
    }
}
