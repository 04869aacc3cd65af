//! sm_80 asynchronous copies global -> shared (`cp.async.ca/cg`) and their groups.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::value::{Address, Operand};

/// Cache level of a `cp.async`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpAsyncCache {
    /// `.ca`: L1 and L2 (4, 8 or 16 bytes).
    Ca,
    /// `.cg`: L2 only (16 bytes only).
    Cg,
}

/// Ops of the sm_80 async-copy family.
#[derive(Debug, Clone, PartialEq)]
pub enum CpAsync {
    /// `cp.async.cache.shared.global [dst], [src], bytes{, src_size}`: copy `bytes` (4, 8 or 16)
    /// bytes; with `src_size`, only that many are read and the rest zero-filled (0 zero-fills all,
    /// which predicates the copy off).
    Copy {
        /// Cache level.
        cache: CpAsyncCache,
        /// Bytes copied: 4, 8 or 16.
        bytes: u32,
        /// Shared destination, aligned to `bytes`.
        dst: Address,
        /// Global source, aligned to `bytes`.
        src: Address,
        /// Bytes actually read (u32, at most `bytes`).
        src_size: Option<Operand>,
    },
    /// `cp.async.commit_group`: close the group of copies issued since the last commit.
    CommitGroup,
    /// `cp.async.wait_group n`: wait until at most `n` groups are pending.
    WaitGroup(u32),
    /// `cp.async.wait_all`: wait for every copy.
    WaitAll,
}

impl OpInfo for CpAsync {
    fn mnemonic(&self) -> &'static str {
        match self {
            CpAsync::Copy { .. } => "cp.async",
            CpAsync::CommitGroup => "cp.async.commit_group",
            CpAsync::WaitGroup(_) => "cp.async.wait_group",
            CpAsync::WaitAll => "cp.async.wait_all",
        }
    }
    fn requires(&self) -> Requirement {
        Requirement::at_least(Target::Sm80)
    }
    fn ptx_version(&self) -> PtxVersion {
        PtxVersion::new(7, 0)
    }
    fn check(&self) -> Result<(), IrError> {
        if let CpAsync::Copy {
            cache,
            bytes,
            src_size,
            ..
        } = self
        {
            if !matches!(bytes, 4 | 8 | 16) {
                return Err(IrError::bad(
                    "cp.async",
                    format!("copies 4, 8 or 16 bytes, not {bytes}"),
                ));
            }
            if *cache == CpAsyncCache::Cg && *bytes != 16 {
                return Err(IrError::bad("cp.async", ".cg copies 16 bytes only"));
            }
            if let Some(Operand::Imm(s)) = src_size {
                if *s < 0 || *s > i64::from(*bytes) {
                    return Err(IrError::bad(
                        "cp.async",
                        format!("src-size {s} is not in 0..={bytes}"),
                    ));
                }
            }
        }
        Ok(())
    }
}
