//! Tensor memory as a resource (sm_100a): a block's TMEM columns are allocated at run time by one
//! warp, their address written to shared memory for every thread, and freed before the block
//! exits (PTX ISA 9.7.16.7, "Tensor Memory Allocation and Management Instructions"). With
//! `cta_group::2` the two blocks of a pair allocate and free together: one warp in each issues
//! the instruction (9.7.16.5, Table 46), and neither block frees its columns while the other may
//! still use them: a cluster barrier comes first (Table 47).
//!
//! [`TmemAllocation`] is the protocol, in three calls that cannot be taken apart wrongly:
//!
//! | when | who | call | emits |
//! |------|-----|------|-------|
//! | start | the allocating warp (whole) | [`TmemAllocation::allocate`] | `tcgen05.alloc`, `tcgen05.fence::before_thread_sync` |
//! | after the block's (pair: cluster's) barrier | everyone who uses TMEM | [`TmemAllocation::address`] | `tcgen05.fence::after_thread_sync`, `ld.shared` of the address |
//! | end | every thread of the block | [`TmemAllocation::release`] | `tcgen05.fence::before_thread_sync`, `bar.sync 0` (pair: `barrier.cluster`), then in the allocating warp `tcgen05.relinquish_alloc_permit` and `tcgen05.dealloc` |
//!
//! ```
//! use dsl_core::ir::op::CtaGroup;
//! use dsl_core::kernel::*;
//! use dsl_core::pipeline::{warp_id_in_block, TmemAllocation};
//! build_kernel("tmem", |kb| {
//!     let tmem = TmemAllocation::new(kb, "tmem_addr", 256, CtaGroup::One);
//!     let first_warp = warp_id_in_block().eq_(0u32);
//!     first_warp.if_(|_| tmem.allocate());
//!     sync_threads();
//!     let base = tmem.address();
//!     // ... the MMA writes there, the epilogue reads ...
//!     tmem.release(first_warp);
//! })
//! .unwrap();
//! ```

use crate::ir::op::{CtaGroup, Tcgen05};
use crate::kernel::{
    cluster_sync, context::record_error, emit, sync_threads, BuildError, Cond, KernelBuilder,
    SharedPtr, Var,
};

/// A block's TMEM allocation of `columns` columns (all 128 lanes) for one block or a pair.
#[derive(Debug, Clone, Copy)]
pub struct TmemAllocation {
    slot: SharedPtr<u32>,
    columns: u32,
    group: CtaGroup,
}

impl TmemAllocation {
    /// The allocation of `columns` TMEM columns (a power of two in 32..=512) for `group`, its
    /// address kept in the shared word `name`. Other column counts are recorded as a build error.
    pub fn new(kb: &KernelBuilder, name: &str, columns: u32, group: CtaGroup) -> TmemAllocation {
        if !(32..=512).contains(&columns) || !columns.is_power_of_two() {
            record_error(|kernel| BuildError::BadArgument {
                kernel,
                message: format!(
                    "TMEM allocation `{name}` of {columns} columns: a power of two in 32..=512"
                ),
            });
        }
        TmemAllocation {
            slot: kb.shared_array::<u32>(name, 1, 4),
            columns,
            group,
        }
    }

    /// The columns allocated.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// One block or the pair.
    pub fn group(&self) -> CtaGroup {
        self.group
    }

    /// `tcgen05.alloc` of the columns, by every lane of the allocating warp (for a pair, the
    /// same warp in both blocks), then `tcgen05.fence::before_thread_sync`: the barrier that
    /// follows publishes the address.
    pub fn allocate(&self) {
        emit(Tcgen05::Alloc {
            cta_group: self.group,
            dst: self.slot.address(),
            ncols: crate::ir::Operand::Imm(i64::from(self.columns)),
        });
        emit(Tcgen05::FenceBeforeThreadSync);
    }

    /// The allocation's TMEM address (lane 0, its first column), read after the barrier that
    /// follows [`TmemAllocation::allocate`]; `tcgen05.fence::after_thread_sync` orders this
    /// thread's TMEM accesses after that barrier.
    pub fn address(&self) -> Var<u32> {
        emit(Tcgen05::FenceAfterThreadSync);
        self.slot.load()
    }

    /// Frees the columns; every thread of the block calls it, once its TMEM accesses are issued
    /// and waited for. Its fence and the block's barrier (for a pair the cluster's, so that the
    /// peer is done too) come before `allocating_warp` (the warp that allocated) gives up the
    /// right to allocate and frees the columns.
    pub fn release(self, allocating_warp: Var<bool>) {
        emit(Tcgen05::FenceBeforeThreadSync);
        match self.group {
            CtaGroup::One => sync_threads(),
            CtaGroup::Two => cluster_sync(),
        }
        allocating_warp.if_(|_| {
            emit(Tcgen05::FenceAfterThreadSync);
            let address = self.slot.load();
            emit(Tcgen05::RelinquishAllocPermit {
                cta_group: self.group,
            });
            emit(Tcgen05::Dealloc {
                cta_group: self.group,
                taddr: address.operand(),
                ncols: crate::ir::Operand::Imm(i64::from(self.columns)),
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{for_each_instr, Op, Stmt};
    use crate::kernel::build_kernel;

    fn ops(body: &[Stmt]) -> Vec<String> {
        let mut out = Vec::new();
        for_each_instr(body, &mut |i| {
            let name = match &i.op {
                Op::Tcgen05(t) => crate::ir::op::OpInfo::mnemonic(t).to_string(),
                Op::Barrier(_) => "barrier".into(),
                _ => return,
            };
            out.push(name);
        });
        out
    }

    /// A pair frees its columns only after the cluster barrier; one block after its own.
    #[test]
    fn a_pair_meets_at_the_cluster_barrier_before_it_frees() {
        for (group, sync) in [(CtaGroup::One, "barrier"), (CtaGroup::Two, "barrier")] {
            let k = build_kernel("tmem", |kb| {
                let tmem = TmemAllocation::new(kb, "tmem_addr", 512, group);
                let warp = crate::pipeline::warp_id_in_block().eq_(0u32);
                warp.if_(|_| tmem.allocate());
                sync_threads();
                let _ = tmem.address();
                tmem.release(warp);
            })
            .unwrap();
            let seq = ops(&k.body);
            let free = seq.iter().position(|o| o == "tcgen05.dealloc").unwrap();
            let last_sync = seq[..free].iter().rposition(|o| o == sync).unwrap();
            assert!(seq[last_sync..free].contains(&"tcgen05.relinquish_alloc_permit".into()));
            assert_eq!(seq[0], "tcgen05.alloc");
            let ptx_sync = |k: &crate::ir::Kernel| {
                let mut cluster = false;
                for_each_instr(&k.body, &mut |i| {
                    if let Op::Barrier(b) = &i.op {
                        cluster |= format!("{b:?}").contains("Cluster");
                    }
                });
                cluster
            };
            assert_eq!(ptx_sync(&k), group == CtaGroup::Two, "{group:?}");
        }
    }

    #[test]
    fn column_counts_are_checked() {
        let e = build_kernel("tmem", |kb| {
            TmemAllocation::new(kb, "t", 96, CtaGroup::One);
        })
        .unwrap_err();
        assert!(e.to_string().contains("96 columns"), "{e}");
    }
}
