//! SM80's asynchronous global -> shared copies (`include/cute/arch/copy_sm80.hpp`):
//! `cp.async.{cg,ca}.shared.global`, completed by `cp.async.commit_group`/`wait_group`.

use super::copy::{wrong_ends, CopyEnd, CopyOperation, CopyTraits, EndKind};
use super::value::{uint_name, ValType};
use crate::ir::op::{CpAsync, CpAsyncCache};
use crate::kernel::{emit, select};
use crate::layout::LayoutError;

fn cp_async(cache: CpAsyncCache, bits: u32, src: &CopyEnd, dst: &CopyEnd) -> Option<()> {
    let (CopyEnd::Global { addr: s, pred }, CopyEnd::Shared { addr: d }) = (src, dst) else {
        return None;
    };
    let bytes = bits / 8;
    // Out of bounds: source size 0 reads nothing and zero-fills the destination.
    let src_size = pred.map(|p| select(p, bytes, 0u32).operand());
    emit(CpAsync::Copy {
        cache,
        bytes,
        dst: d.clone(),
        src: s.clone(),
        src_size,
    });
    Some(())
}

/// `SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>`: `cp.async.cg.shared.global` of 16 bytes, through L2
/// only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpAsyncCacheGlobal {
    /// Width of the access (128).
    pub bits: u32,
}

/// `SM80_CP_ASYNC_CACHEALWAYS<uintN_t>`: `cp.async.ca.shared.global` of 4, 8 or 16 bytes,
/// through L1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpAsyncCacheAlways {
    /// Width of the access (32, 64 or 128).
    pub bits: u32,
}

impl CopyOperation for CpAsyncCacheGlobal {
    fn name(&self) -> String {
        format!("SM80_CP_ASYNC_CACHEGLOBAL<{}>", uint_name(self.bits))
    }
    fn traits(&self) -> Result<CopyTraits, String> {
        if self.bits == 128 {
            Ok(CopyTraits::per_thread(128))
        } else {
            Err("cp.async.cg copies 16 bytes (uint128_t) only".into())
        }
    }
    fn src_kind(&self) -> EndKind {
        EndKind::Global
    }
    fn dst_kind(&self) -> EndKind {
        EndKind::Shared
    }
    fn call(&self, _: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        cp_async(CpAsyncCache::Cg, self.bits, src, dst).ok_or_else(|| wrong_ends(self, src, dst))
    }
}

impl CopyOperation for CpAsyncCacheAlways {
    fn name(&self) -> String {
        format!("SM80_CP_ASYNC_CACHEALWAYS<{}>", uint_name(self.bits))
    }
    fn traits(&self) -> Result<CopyTraits, String> {
        if matches!(self.bits, 32 | 64 | 128) {
            Ok(CopyTraits::per_thread(self.bits))
        } else {
            Err("cp.async.ca copies 4, 8 or 16 bytes".into())
        }
    }
    fn src_kind(&self) -> EndKind {
        EndKind::Global
    }
    fn dst_kind(&self) -> EndKind {
        EndKind::Shared
    }
    fn call(&self, _: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        cp_async(CpAsyncCache::Ca, self.bits, src, dst).ok_or_else(|| wrong_ends(self, src, dst))
    }
}
