//! The machine's state: resident clusters of blocks, their shared memory and barriers, their
//! warps, and the parts a diverged warp runs as.
//!
//! A warp runs as one or more *parts*: sets of lanes at one program position. A branch whose
//! lanes disagree splits a part in two (each scheduled on its own: independent thread
//! scheduling); the parts meet again at the statement's `Join`, where a *join record* collects
//! lanes until all that split have arrived. A loop pushes a join record for its exit, where
//! lanes that leave early wait for the rest.

use super::asyncop::InFlight;
use super::clock::{Components, Vc};
use super::global::{GridView, Imports};
use super::regs::RegFile;
use super::shadow::{ProxyFences, SharedMem};

/// Where lanes of a part meet again: the `Join` at `join` and the record collecting them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub join: u32,
    pub rec: u32,
}

/// Lanes expected at a join and those that arrived.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JoinRec {
    pub expected: u32,
    pub arrived: u32,
    /// The branch or loop entry that split the lanes (for reports).
    pub from: u32,
}

/// Why a part does not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ready,
    /// Arrived at named barrier `id`, waiting for it to complete.
    Barrier(u8),
    /// At a warp-synchronous op, waiting for lanes `need` of its warp to reach it too.
    Rendezvous(u32),
    /// Polling memory that did not change: waits until a write happens (the generations of
    /// global and the cluster's shared memory it saw).
    Poll {
        global: u64,
        shared: u64,
    },
    /// At `barrier.cluster.wait`, waiting for the cluster barrier's phase to pass `phase`.
    ClusterBarrier(u64),
    /// At `mbarrier.try_wait`, waiting for phase `phase` of the mbarrier at shared offset `off`
    /// of block rank `rank` to complete (it then runs the wait again).
    Mbarrier {
        rank: u32,
        off: u32,
        phase: u64,
    },
    /// At an op of an asynchronous family that waits for other warps or for a resource (it
    /// then runs again): woken by [`ClusterState::wake_async`].
    Async(AsyncWait),
}

/// What an op of an asynchronous family waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsyncWait {
    /// `wgmma.wait_group`: the other warps of warpgroup `wg` to issue the `wgmma.mma_async`
    /// operations its group holds.
    Warpgroup { wg: u32 },
    /// `tcgen05.alloc`: `ncols` free tensor-memory columns.
    TmemColumns { ncols: u32 },
    /// A `.cta_group::2` allocation op: the warp of the peer block to issue it too.
    Peer,
    /// `setmaxnreg.inc`: `count` registers per thread, more than the block's other warps have
    /// given back.
    Registers { count: u32 },
}

/// A set of lanes of a warp at one position.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub mask: u32,
    pub pc: u32,
    pub stack: Vec<Frame>,
    pub status: Status,
}

/// A completed `cp.async` batch whose writes its warp has not yet waited for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpDone {
    pub lanes: u32,
    pub groups: [u32; 32],
    pub clock: u32,
}

/// A warp's `cp.async` bookkeeping.
#[derive(Debug, Clone)]
pub(crate) struct CpAsyncState {
    /// Groups committed per lane (the open group's index).
    pub committed: [u32; 32],
    /// The agent's last clock handed out.
    pub clock: u32,
    pub done: Vec<CpDone>,
}

/// The last ordered load a warp made, to tell polling from progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PollMark {
    pub pc: u32,
    pub value: u64,
    pub global: u64,
    pub shared: u64,
}

/// A thread's local memory, grown as it is written: bytes and their initialization.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalMem {
    pub data: Vec<u8>,
    pub init: Vec<bool>,
}

/// One warp of a block.
#[derive(Debug, Clone)]
pub(crate) struct WarpState {
    /// Lanes that exist (a block's last warp may be partial) and have not exited.
    pub live: u32,
    pub regs: RegFile,
    pub parts: Vec<Part>,
    pub joins: Vec<JoinRec>,
    pub free_joins: Vec<u32>,
    /// This warp's component.
    pub comp: u32,
    pub vc: Vc,
    /// The clock at its last release fence (what a relaxed store publishes).
    pub release_vc: Option<Vc>,
    /// That fence's scope.
    pub release_scope: crate::ir::Scope,
    /// What relaxed loads observed since the last acquire fence.
    pub pending_acquire: Vc,
    /// What relaxed loads of global locations observed of other clusters since then.
    pub pending_grid: GridView,
    pub priority: u64,
    pub cp: CpAsyncState,
    pub poll: Option<PollMark>,
    /// The cluster barrier phase this warp arrived in and has not waited for.
    pub cluster_arrived: Option<u64>,
    /// The register limit the last `setmaxnreg` set.
    pub maxnreg: Option<u32>,
    /// Positions of the `setmaxnreg` instructions run, in order.
    pub setmaxnreg: Vec<u32>,
    /// Each lane's local memory (empty until used).
    pub local: Vec<LocalMem>,
    /// Registers asynchronous operations hold (wgmma's accumulators until its wait_group,
    /// `tcgen05.ld`'s destinations until `tcgen05.wait::ld`).
    pub held: super::held::HeldRegs,
    /// Bulk groups ([`op::bulk`](super::op::bulk)).
    pub bulk: super::op::bulk::BulkWarp,
    /// wgmma groups ([`op::wgmma`](super::op::wgmma)).
    pub wgmma: super::op::wgmma::WgmmaWarp,
    /// tcgen05 bookkeeping ([`op::tcgen05`](super::op::tcgen05)).
    pub tc: super::op::tcgen05::TcWarp,
}

impl WarpState {
    pub fn new_join(&mut self, expected: u32, from: u32) -> u32 {
        let rec = JoinRec {
            expected,
            arrived: 0,
            from,
        };
        match self.free_joins.pop() {
            Some(i) => {
                self.joins[i as usize] = rec;
                i
            }
            None => {
                self.joins.push(rec);
                (self.joins.len() - 1) as u32
            }
        }
    }

    pub fn free_join(&mut self, rec: u32) {
        self.free_joins.push(rec);
    }

    /// Whether every lane has exited.
    pub fn done(&self) -> bool {
        self.parts.is_empty()
    }
}

/// A named barrier of a block (`bar.sync`/`bar.arrive` id).
#[derive(Debug, Clone)]
pub(crate) struct NamedBarrier {
    /// Warps arrived in the current phase.
    pub arrived: u32,
    /// Which warps arrived (a warp may not arrive twice in one phase).
    pub who: u64,
    /// Which of them wait for the barrier (`bar.sync`), as opposed to only arriving.
    pub waits: u64,
    /// Warps expected, from the thread count of the phase's first arrival (`None`: all the
    /// block's warps that have not exited).
    pub expected: Option<u32>,
    /// The join of the arrivals' clocks.
    pub vc: Vc,
    /// Position of the first arrival of the phase, for reports.
    pub first_pc: u32,
    /// The instruction of the phase's first aligned wait (`bar.sync`), whose other aligned
    /// waits must be the same instruction.
    pub aligned_sync_pc: Option<u32>,
}

/// A block.
#[derive(Debug)]
pub(crate) struct CtaState {
    pub ctaid: [u32; 3],
    /// Rank in the cluster.
    pub rank: u32,
    pub smem: SharedMem,
    pub barriers: Vec<NamedBarrier>,
    pub warps: Vec<WarpState>,
    /// The next TMA load agent to hand out.
    pub next_load: u32,
    /// The next commit agent to hand out.
    pub next_commit: u32,
    /// Per warpgroup, the `wgmma.mma_async` operations some of its warps issued and others
    /// not yet ([`op::wgmma`](super::op::wgmma)).
    pub warpgroups: Vec<super::op::wgmma::Warpgroup>,
    /// Tensor memory, for a program with tcgen05 ops.
    pub tmem: Option<Box<super::tmem::Tmem>>,
    /// Other blocks' accesses to this block's shared memory, and its exit ([`super::peers`]).
    pub peers: super::peers::PeerAccesses,
}

impl CtaState {
    /// Warps that have not exited.
    pub fn live_warps(&self) -> u32 {
        self.warps.iter().filter(|w| !w.done()).count() as u32
    }
}

/// The cluster barrier (`barrier.cluster.arrive/wait`).
#[derive(Debug, Clone)]
pub(crate) struct ClusterBarrier {
    pub phase: u64,
    pub arrived: u32,
    pub vc: Vc,
    /// The clock released by the last completed phase.
    pub released: Vc,
}

/// A cluster of resident blocks (a block alone is a cluster of one).
#[derive(Debug)]
pub(crate) struct ClusterState {
    /// The cluster's index in the grid (x fastest).
    pub index: u64,
    /// Its warps' acquires of other clusters' releases through global memory.
    pub imports: Imports,
    /// SM slot of its first block.
    pub sm: u32,
    pub ctas: Vec<CtaState>,
    pub comps: Components,
    pub fences: ProxyFences,
    /// The clocks at which each component executed `fence.mbarrier_init`: what publishes its
    /// `mbarrier.init`s (and nothing else) to the async proxy and to the cluster.
    pub init_fences: ProxyFences,
    pub barrier: ClusterBarrier,
    /// Release/acquire synchronization through shared-memory locations: the clock published
    /// at each (block rank, offset).
    pub sync: std::collections::BTreeMap<(u32, u32), Vc>,
    /// The same through global locations, for this cluster's own acquirers: the clock each
    /// (buffer, offset) was released at, whatever the release's scope (other clusters see only
    /// what a release at the device's scope publishes in the global shadow).
    pub global_sync: std::collections::BTreeMap<(usize, usize), Vc>,
    /// Asynchronous operations in flight, in issue order.
    pub inflight: Vec<InFlight>,
    /// The mbarrier objects, by (block rank, shared offset).
    pub mbarriers: std::collections::BTreeMap<(u32, u32), super::op::mbarrier::MbarState>,
    /// The last clock handed out by each agent component.
    pub agent_clock: Vec<u32>,
    /// Per pair of blocks, the `.cta_group::2` allocation op one of them waits at
    /// ([`op::tcgen05`](super::op::tcgen05)).
    pub pairs: Vec<super::op::tcgen05::PairSlot>,
}

impl ClusterState {
    /// Sum of the shared-memory write generations of its blocks.
    pub fn shared_generation(&self) -> u64 {
        self.ctas.iter().map(|c| c.smem.generation).sum()
    }

    /// Warps of the cluster that have not exited.
    pub fn live_warps(&self) -> u32 {
        self.ctas.iter().map(|c| c.live_warps()).sum()
    }

    /// The next clock of agent component `agent`.
    pub fn agent_tick(&mut self, agent: u32) -> Result<u32, super::SimError> {
        let c = &mut self.agent_clock[agent as usize];
        if *c >= super::clock::MAX_CLOCK {
            return Err(super::SimError::Limit(format!(
                "an asynchronous agent performed more than {} operations",
                super::clock::MAX_CLOCK
            )));
        }
        *c += 1;
        Ok(*c)
    }

    /// Wakes every part waiting at an op of an asynchronous family: it runs its op again.
    pub fn wake_async(&mut self) {
        for cta in &mut self.ctas {
            for w in &mut cta.warps {
                for p in &mut w.parts {
                    if matches!(p.status, Status::Async(_)) {
                        p.status = Status::Ready;
                    }
                }
            }
        }
    }
}
