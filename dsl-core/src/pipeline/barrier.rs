//! Arrays of mbarriers in shared memory, typed by how a phase completes.
//!
//! Every array holds one 8-byte barrier per stage. A phase of a barrier completes when its
//! expected arrivals (the count given to `init`) have arrived *and* every transaction byte it
//! was told to expect has landed. Waiting is `mbarrier.try_wait.parity` in a loop: the waiter
//! names the parity of the phase it waits for ([`PipelineState::phase`]), so a barrier is reused
//! lap after lap of the ring without being re-initialised.
//!
//! - [`TmaBarriers`]: completed by the copy engine. One thread per phase calls
//!   [`TmaBarriers::arrive_expect_tx`] with the bytes the phase's TMA loads will bring (the only
//!   arrival, so `init` counts 1 per producing block); the loads carry the barrier's address and
//!   complete the transaction count. Consumers wait.
//! - [`MmaBarriers`]: completed by the tensor cores' work: on Blackwell one thread's
//!   `tcgen05.commit` arrives when its MMAs have finished ([`MmaBarriers::commit`]); on Hopper a
//!   thread arrives after `wgmma.wait_group` has retired the MMAs that read the stage
//!   ([`MmaBarriers::arrive`]). The count is the number of committing threads.
//! - [`Barriers`]: plain arrivals: `init` counts the arriving threads (one per consumer warpgroup,
//!   or every thread of a writeback warpgroup); [`Barriers::arrive`] is one arrival.
//!
//! Initialise once, from one thread, before any use: call `init` on every array, then
//! [`crate::kernel::fence_mbarrier_init`] and a block (or cluster) barrier, so that every thread
//! (and every block of the cluster) sees the initialised barriers.
//!
//! [`remote_view`](MbarrierArray::remote_view) gives the same array in another block of the
//! cluster (`mapa`): arrivals through it are `mbarrier.arrive.release.cluster.shared::cluster`.

use super::state::PipelineState;
use crate::ir::op::{Mbarrier, Tcgen05};
use crate::ir::{Address, Operand, Scope, StateSpace};
use crate::kernel::{
    emit, mapa_shared, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait,
    BuildError, IntoVar, KernelBuilder, SharedPtr, Var,
};

/// One mbarrier per stage, untyped: what the typed arrays share.
#[derive(Debug, Clone, Copy)]
pub struct MbarrierArray {
    base: SharedPtr<u64>,
    stages: u32,
    count: u32,
}

impl MbarrierArray {
    /// `stages` barriers named `name` in static shared memory, each expecting `count` arrivals
    /// per phase. A count of 0 or no stages is recorded as a build error.
    pub fn new(kb: &KernelBuilder, name: &str, stages: u32, count: u32) -> Self {
        if stages == 0 || count == 0 {
            crate::kernel::context::record_error(|kernel| {
                BuildError::BadArgument {
                kernel,
                message: format!(
                    "mbarrier array `{name}`: {stages} stages of {count} arrivals; both must be at least 1"
                ),
            }
            });
        }
        MbarrierArray {
            base: kb.shared_array::<u64>(name, u64::from(stages.max(1)), 8),
            stages: stages.max(1),
            count: count.max(1),
        }
    }

    /// Stages in the array.
    pub fn stages(&self) -> u32 {
        self.stages
    }

    /// Arrivals each phase expects.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The barrier of `stage` (a host or device index below `stages`).
    pub fn at(&self, stage: impl IntoVar<u32>) -> SharedPtr<u64> {
        self.base + stage.into_var()
    }

    /// `mbarrier.init` of every stage with the array's count. One thread, once.
    pub fn init(&self) {
        for s in 0..self.stages {
            mbarrier_init(self.base + s, self.count);
        }
    }

    /// Waits until the phase of parity `state.phase()` of barrier `state.stage()` completed.
    pub fn wait(&self, state: &PipelineState) {
        self.wait_at(state.stage(), state.phase());
    }

    /// Waits until the phase of parity `phase` of barrier `stage` completed.
    pub fn wait_at(&self, stage: impl IntoVar<u32>, phase: impl IntoVar<u32>) {
        mbarrier_wait(self.at(stage), phase);
    }

    /// The same array in block `cta` of the cluster: its barriers' `shared::cluster` addresses.
    pub fn remote_view(&self, cta: impl IntoVar<u32>) -> RemoteBarriers {
        RemoteBarriers {
            base: mapa_shared(self.base, cta),
            stages: self.stages,
        }
    }
}

/// An [`MbarrierArray`] of another block of the cluster (or of this block, through its cluster
/// address): only arrivals make sense there.
#[derive(Debug, Clone, Copy)]
pub struct RemoteBarriers {
    base: Var<u32>,
    stages: u32,
}

impl RemoteBarriers {
    /// The `shared::cluster` address of barrier `stage`.
    pub fn at(&self, stage: impl IntoVar<u32>) -> Var<u32> {
        self.base + stage.into_var() * 8u32
    }

    /// Stages in the array.
    pub fn stages(&self) -> u32 {
        self.stages
    }

    /// One arrival on barrier `stage`, releasing at CTA scope (PTX's default, and CUTLASS's
    /// `ClusterBarrier::arrive(cta_id)`): what frees a stage whose reads were already waited
    /// for (`wgmma.wait_group`) publishes no writes of this block. A cluster-scope release
    /// costs each arrival an `ERRBAR` and a `CGAERRBAR`: on the H200 they were 7% of a 2x1
    /// cluster GEMM's warp samples, on the consumers' path between two k-tiles.
    pub fn arrive(&self, stage: impl IntoVar<u32>) {
        emit(Mbarrier::Arrive {
            state: None,
            space: StateSpace::SharedCluster,
            scope: Scope::Cta,
            addr: Address::reg(self.at(stage).to_reg(), 0),
            count: None,
        });
    }

    /// One arrival releasing at cluster scope (`mbarrier.arrive.release.cluster.shared::cluster`):
    /// for an arrival that hands this block's work to a thread of another block, which acquires
    /// it with its wait (a writeback warpgroup telling the pair's MMA that it has read its TMEM).
    pub fn arrive_release_cluster(&self, stage: impl IntoVar<u32>) {
        emit(Mbarrier::Arrive {
            state: None,
            space: StateSpace::SharedCluster,
            scope: Scope::Cluster,
            addr: Address::reg(self.at(stage).to_reg(), 0),
            count: None,
        });
    }

    /// One arrival that also raises the expected transaction bytes by `bytes`.
    pub fn arrive_expect_tx(&self, stage: impl IntoVar<u32>, bytes: impl IntoVar<u32>) {
        let tx_count = bytes.into_var().operand();
        emit(Mbarrier::ArriveExpectTx {
            state: None,
            space: StateSpace::SharedCluster,
            scope: Scope::Cluster,
            addr: Address::reg(self.at(stage).to_reg(), 0),
            tx_count,
        });
    }
}

macro_rules! typed_array {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name(MbarrierArray);

        impl std::ops::Deref for $name {
            type Target = MbarrierArray;
            fn deref(&self) -> &MbarrierArray {
                &self.0
            }
        }
    };
}

typed_array!(
    /// Barriers a TMA load completes: the producer's one `arrive_expect_tx` per phase sets the
    /// bytes, the copy engine's completed transactions bring the count to zero.
    TmaBarriers
);

typed_array!(
    /// Barriers the tensor cores' work completes: `tcgen05.commit` (sm_100a) or an arrival after
    /// `wgmma.wait_group` (sm_90a), one per committing thread.
    MmaBarriers
);

typed_array!(
    /// Barriers completed by plain arrivals of `count` threads.
    Barriers
);

impl TmaBarriers {
    /// `stages` barriers completed by TMA loads, each with `producers` arrivals per phase (1
    /// unless several blocks' producers arrive on one barrier).
    pub fn new(kb: &KernelBuilder, name: &str, stages: u32, producers: u32) -> Self {
        TmaBarriers(MbarrierArray::new(kb, name, stages, producers))
    }

    /// The producer's arrival on `state.stage()`, expecting `bytes` of TMA transactions there.
    pub fn arrive_expect_tx(&self, state: &PipelineState, bytes: impl IntoVar<u32>) {
        mbarrier_arrive_expect_tx(self.at(state.stage()), bytes);
    }
}

impl MmaBarriers {
    /// `stages` barriers, each completed by `committers` arrivals per phase.
    pub fn new(kb: &KernelBuilder, name: &str, stages: u32, committers: u32) -> Self {
        MmaBarriers(MbarrierArray::new(kb, name, stages, committers))
    }

    /// Hopper: one arrival on `state.stage()` by a thread whose `wgmma.wait_group` retired the
    /// MMAs that read that stage.
    pub fn arrive(&self, state: &PipelineState) {
        mbarrier_arrive(self.at(state.stage()));
    }

    /// Blackwell: `tcgen05.commit` of this thread's MMAs to `state.stage()`'s barrier, in every
    /// block of `cta_mask` (bit i: block i of the cluster) or only in this one (`None`).
    pub fn commit(
        &self,
        state: &PipelineState,
        group: crate::ir::op::CtaGroup,
        cta_mask: Option<u32>,
    ) {
        self.commit_at(state.stage(), group, cta_mask);
    }

    /// [`MmaBarriers::commit`] to barrier `stage` (a slot named by the caller: the accumulator a
    /// consumer's MMAs wrote, say).
    pub fn commit_at(
        &self,
        stage: impl IntoVar<u32>,
        group: crate::ir::op::CtaGroup,
        cta_mask: Option<u32>,
    ) {
        let mbar = self.at(stage).address();
        emit(Tcgen05::Commit {
            cta_group: group,
            mbar,
            multicast: cta_mask.map(|m| Operand::Imm(i64::from(m))),
        });
    }
}

impl Barriers {
    /// `stages` barriers, each completed by `count` arrivals per phase.
    pub fn new(kb: &KernelBuilder, name: &str, stages: u32, count: u32) -> Self {
        Barriers(MbarrierArray::new(kb, name, stages, count))
    }

    /// One arrival on `state.stage()`.
    pub fn arrive(&self, state: &PipelineState) {
        mbarrier_arrive(self.at(state.stage()));
    }

    /// One arrival on barrier `stage` (a consumer that names the stage it read).
    pub fn arrive_at(&self, stage: impl IntoVar<u32>) {
        mbarrier_arrive(self.at(stage));
    }
}
