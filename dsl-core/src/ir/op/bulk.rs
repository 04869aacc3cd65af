//! Tensor Memory Accelerator copies (`cp.async.bulk.tensor`, sm_90): 1-D..5-D tile loads
//! global -> shared::cluster completing on an mbarrier (optionally multicast to several blocks of
//! the cluster), tile stores shared::cta -> global tracked by bulk groups, tile prefetches
//! global -> L2, and `prefetch.tensormap`.

use super::tcgen05::CtaGroup;
use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::value::{Address, Operand, Reg};

/// The tensor map (`CUtensorMap`) a TMA op reads. PTX wants its *generic* address: ptxas
/// refuses a `.param` symbol in the operand ("state space mismatch"), so a `Param` reference is
/// lowered as `mov.u64 %rd, name; cvta.param.u64 %rd, %rd;` (PTX 7.7) and the register used. The
/// builder emits those two ops itself and passes `Reg`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TensorMapRef {
    /// A kernel parameter declared as a tensor map (passed by value, `.param .align 64 .b8 [128]`).
    Param(String),
    /// A register holding the tensor map's generic address (u64).
    Reg(Reg),
}

/// Bulk-copy ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Bulk {
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    /// {.multicast::cluster}{.cta_group::N}{.L2::cache_hint} [dst], [tmap, {coords}], [mbar]{,
    /// cta_mask}{, policy}`.
    TensorLoad {
        /// Shared destination (a shared::cta address is valid shared::cluster).
        dst: Address,
        /// The tensor map.
        tensor_map: TensorMapRef,
        /// Box start, innermost dimension first, one s32 per dimension (1 to 5).
        coords: Vec<Operand>,
        /// The mbarrier that receives the byte count on completion.
        mbar: Address,
        /// Copy to every block whose bit is set in this u16 mask, at the same offsets.
        multicast: Option<Operand>,
        /// `.cta_group::N` (sm_100a, PTX 8.6), which says where `mbar` may be: with `None` or
        /// `.cta_group::1` in the block the data lands in; with `.cta_group::2` in that block or
        /// in its peer of the pair (the other block of its even/odd pair in the cluster), so
        /// that both blocks' loads complete on the even block's barrier, which counts the
        /// pair's bytes (CuTe's `SM100_TMA_2SM_LOAD`). PTX ISA 9.7.9.25.5.1.
        cta_group: Option<CtaGroup>,
        /// An L2 cache policy for the reads (`.L2::cache_hint`): a 64-bit policy word such as
        /// those of [`crate::atom::tma::CacheHint`].
        cache_policy: Option<u64>,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group{.L2::cache_hint} [tmap,
    /// {coords}], [src]{, policy}`.
    TensorStore {
        /// The tensor map.
        tensor_map: TensorMapRef,
        /// Box start, innermost dimension first (1 to 5).
        coords: Vec<Operand>,
        /// Shared source.
        src: Address,
        /// An L2 cache policy for the writes (`.L2::cache_hint`).
        cache_policy: Option<u64>,
    },
    /// `cp.async.bulk.prefetch.tensor.Nd.L2.global.tile{.L2::cache_hint} [tmap, {coords}]{,
    /// policy}`: bring a box into L2 ahead of its load; nothing waits for it.
    TensorPrefetch {
        /// The tensor map.
        tensor_map: TensorMapRef,
        /// Box start, innermost dimension first (1 to 5).
        coords: Vec<Operand>,
        /// An L2 cache policy for the lines it brings (`.L2::cache_hint`).
        cache_policy: Option<u64>,
    },
    /// `cp.async.bulk.commit_group`: close the group of bulk stores since the last commit.
    CommitGroup,
    /// `cp.async.bulk.wait_group{.read} n`: wait until at most `n` groups are pending (with
    /// `read`, only until their sources have been read, so shared memory can be reused).
    WaitGroup {
        /// Pending groups allowed.
        n: u32,
        /// Wait for reads only.
        read: bool,
    },
    /// `prefetch.tensormap [tmap]`: bring the descriptor into the cache.
    PrefetchTensormap {
        /// The tensor map.
        tensor_map: TensorMapRef,
    },
}

impl OpInfo for Bulk {
    fn mnemonic(&self) -> &'static str {
        match self {
            Bulk::TensorLoad { .. } | Bulk::TensorStore { .. } => "cp.async.bulk.tensor",
            Bulk::TensorPrefetch { .. } => "cp.async.bulk.prefetch.tensor",
            Bulk::CommitGroup => "cp.async.bulk.commit_group",
            Bulk::WaitGroup { .. } => "cp.async.bulk.wait_group",
            Bulk::PrefetchTensormap { .. } => "prefetch.tensormap",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            Bulk::TensorLoad {
                cta_group: Some(_), ..
            } => Requirement::only(Target::Sm100a),
            _ => Requirement::at_least(Target::Sm90a),
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Bulk::TensorLoad {
                cta_group: Some(_), ..
            } => PtxVersion::new(8, 6),
            _ => PtxVersion::new(8, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let coords = match self {
            Bulk::TensorLoad { coords, .. }
            | Bulk::TensorStore { coords, .. }
            | Bulk::TensorPrefetch { coords, .. } => coords,
            _ => return Ok(()),
        };
        if !(1..=5).contains(&coords.len()) {
            return Err(IrError::bad(
                self.mnemonic(),
                format!(
                    "{} coordinates: tensors have 1 to 5 dimensions",
                    coords.len()
                ),
            ));
        }
        Ok(())
    }
}
