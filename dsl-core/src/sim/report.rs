//! What a run reports: findings (each with its op, where it ran, the Rust location that emitted
//! it and the other party of a race), counts of what ran, and the errors that stop a run.

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

use super::launch::Schedule;
use crate::ir::Location;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// Two accesses to the same shared-memory bytes, at least one a write, that happens-before
    /// does not order (no barrier, release/acquire pair or completion mechanism between them).
    DataRace,
    /// Two accesses to the same global-memory bytes, at least one a write and not both morally
    /// strong, that happens-before does not order: within a cluster as for shared memory; across
    /// clusters only a release and an acquire through a global location (a flag, an atomic)
    /// order them.
    GlobalRace,
    /// An access of the async proxy (a bulk copy, a tensor-core operand read) to shared memory
    /// that a generic write reaches without `fence.proxy.async` between them.
    AsyncProxyRace,
    /// A register read in a lane where it was never written.
    UninitializedRegister,
    /// A read of shared-memory bytes that nothing wrote.
    UninitializedShared,
    /// A read of global-memory bytes that neither the host nor a kernel wrote.
    UninitializedGlobal,
    /// A read of a thread's local-memory bytes that it never wrote.
    UninitializedLocal,
    /// An access outside every buffer, outside the block's shared memory, or to a state space
    /// address that maps nothing.
    OutOfBounds,
    /// An access not aligned to its size.
    Misaligned,
    /// A write to a buffer marked read-only.
    ReadOnlyWrite,
    /// A named barrier whose thread counts disagree, exceed the block, or cannot be reached by
    /// the threads that arrive.
    BarrierCount,
    /// An aligned barrier wait (`bar.sync`, `barrier.sync.aligned`) that the warps of one
    /// phase reach through different instructions: the PTX ISA defines `.aligned` only where
    /// the threads execute the same one (compute-sanitizer's synccheck reports it as divergent
    /// threads in the block).
    BarrierDivergence,
    /// A warp-synchronous op (`.sync` with a member mask) run by a lane outside its mask, or by
    /// lanes that disagree on the mask; `setmaxnreg` out of order or not run by a whole
    /// warpgroup.
    WarpSync,
    /// mbarrier misuse: an operation on an address holding no initialized mbarrier, arrivals
    /// past the pending count, a transaction count out of range.
    Mbarrier,
    /// Every live warp waits and nothing in flight can wake one.
    Deadlock,
    /// A register an asynchronous operation holds, accessed before the wait that completes it
    /// (wgmma's accumulators and A fragments before `wgmma.wait_group`, `tcgen05.ld`'s
    /// destinations before `tcgen05.wait::ld`); or a register written and then handed to
    /// `wgmma.mma_async` with no `wgmma.fence` between.
    AsyncRegister,
    /// A read of tensor-memory cells that nothing wrote.
    UninitializedTensorMemory,
    /// Tensor-memory misuse: an access outside the block's allocated columns or outside the
    /// lanes its warp may reach, an allocation or deallocation the ISA forbids, columns still
    /// allocated when the block exits.
    TensorMemory,
    /// An access to another block's shared memory (through `shared::cluster`: a load, store,
    /// atomic, mbarrier arrival, or a copy or commit multicast into it) that does not happen
    /// before that block's exit: the block may be gone, its memory with it.
    PeerExited,
}

impl FindingKind {
    /// A short name (`data race`, `deadlock`).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::DataRace => "data race",
            FindingKind::GlobalRace => "global-memory race",
            FindingKind::AsyncProxyRace => "async-proxy race",
            FindingKind::UninitializedRegister => "uninitialized register",
            FindingKind::UninitializedShared => "uninitialized shared memory",
            FindingKind::UninitializedGlobal => "uninitialized global memory",
            FindingKind::UninitializedLocal => "uninitialized local memory",
            FindingKind::OutOfBounds => "out of bounds",
            FindingKind::Misaligned => "misaligned access",
            FindingKind::ReadOnlyWrite => "write to a read-only buffer",
            FindingKind::BarrierCount => "barrier count",
            FindingKind::BarrierDivergence => "aligned barrier from two instructions",
            FindingKind::WarpSync => "warp synchronization",
            FindingKind::Mbarrier => "mbarrier misuse",
            FindingKind::Deadlock => "deadlock",
            FindingKind::AsyncRegister => "register in flight",
            FindingKind::UninitializedTensorMemory => "uninitialized tensor memory",
            FindingKind::TensorMemory => "tensor memory misuse",
            FindingKind::PeerExited => "access past a block's exit",
        }
    }
}

/// How a race's two accesses read in a finding: this access's verb (`writes`, `reads`) and the
/// pair (`write after write`, `read after write`, `write after read`), given whether the earlier
/// access wrote and whether this one does.
pub(crate) fn race_words(earlier_wrote: bool, writes: bool) -> (&'static str, &'static str) {
    let verb = if writes { "writes" } else { "reads" };
    let what = match (earlier_wrote, writes) {
        (true, true) => "write after write",
        (true, false) => "read after write",
        _ => "write after read",
    };
    (verb, what)
}

/// Why two lanes of one warp race: the sentence a finding gives.
pub(crate) const LANES_UNORDERED: &str = "two lanes of one warp with no bar.warp.sync \
     (`sync_warp`, CUDA's __syncwarp) or barrier between them: lanes of a warp are not in lockstep";

/// Where an op ran: a block, a warp in it, a lane in the warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Site {
    pub cta: [u32; 3],
    pub warp: u32,
    pub lane: u32,
}

fn site(f: &mut fmt::Formatter<'_>, cta: [u32; 3], warp: u32, lane: u32) -> fmt::Result {
    let [x, y, z] = cta;
    if warp == u32::MAX {
        // An asynchronous unit (the TMA engine, the tensor cores) completing for the block.
        return write!(f, "block ({x},{y},{z}), the block's async unit");
    }
    write!(f, "block ({x},{y},{z}), warp {warp}, lane {lane}")
}

/// The other side of a race: the earlier access that the finding's op conflicts with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Party {
    /// Its op's PTX mnemonic.
    pub op: &'static str,
    /// The block it ran in (`%ctaid`).
    pub cta: [u32; 3],
    /// The warp's index in its block (`u32::MAX` for an agent acting for the whole block).
    pub warp: u32,
    /// The lane.
    pub lane: u32,
    /// The Rust location of the statement that emitted it.
    pub location: Option<Location>,
    /// Whether it wrote (else it read).
    pub write: bool,
}

/// One problem a run found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What it is.
    pub kind: FindingKind,
    /// The PTX mnemonic of the op at fault (for a deadlock, the op the first waiting warp
    /// waits at).
    pub op: &'static str,
    /// The block the op ran in (`%ctaid`).
    pub cta: [u32; 3],
    /// The warp's index in its block.
    pub warp: u32,
    /// The first lane at fault.
    pub lane: u32,
    /// The Rust location of the kernel statement that emitted the op.
    pub location: Option<Location>,
    /// The other party of a race.
    pub other: Option<Party>,
    /// What happened, as sentences (a deadlock lists every waiting warp, then the operations in
    /// flight).
    pub details: String,
    /// How many more times the same op met the same problem (with the same other party).
    pub repeats: u64,
}

impl Finding {
    /// A finding of `kind` at `op` run at `site`, with no other party.
    pub(crate) fn at(
        kind: FindingKind,
        op: &'static str,
        site: Site,
        location: Option<Location>,
        details: String,
    ) -> Finding {
        Finding {
            kind,
            op,
            cta: site.cta,
            warp: site.warp,
            lane: site.lane,
            location,
            other: None,
            details,
            repeats: 0,
        }
    }
}

impl Party {
    pub(crate) fn at(op: &'static str, s: Site, location: Option<Location>, write: bool) -> Party {
        Party {
            op,
            cta: s.cta,
            warp: s.warp,
            lane: s.lane,
            location,
            write,
        }
    }
}

fn at(f: &mut fmt::Formatter<'_>, loc: &Option<Location>) -> fmt::Result {
    match loc {
        Some(l) => write!(f, " at {l}"),
        None => Ok(()),
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`", self.kind.name(), self.op)?;
        at(f, &self.location)?;
        f.write_str(" (")?;
        site(f, self.cta, self.warp, self.lane)?;
        write!(f, "): {}", self.details)?;
        if let Some(o) = &self.other {
            let verb = if o.write { "written" } else { "read" };
            write!(f, "; {verb} by `{}`", o.op)?;
            at(f, &o.location)?;
            f.write_str(" (")?;
            site(f, o.cta, o.warp, o.lane)?;
            f.write_str(")")?;
        }
        if self.repeats > 0 {
            write!(f, " [{} more times]", self.repeats)?;
        }
        Ok(())
    }
}

/// Counts of what a run executed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Instructions executed, once per warp (or part of a diverged warp).
    pub warp_instructions: u64,
    /// Instructions executed, once per lane.
    pub lane_instructions: u64,
    /// Blocks run to completion.
    pub blocks: u64,
    /// Asynchronous operations issued (one per lane for `cp.async`).
    pub async_ops: u64,
}

/// The outcome of a run that ended (with or without findings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The seed the run used: the same seed, schedule, launch and inputs give the same report.
    pub seed: u64,
    /// The schedule the run used.
    pub schedule: Schedule,
    /// The findings, in the order they were found.
    pub findings: Vec<Finding>,
    /// Findings found past [`Limits::max_findings`](super::Limits::max_findings).
    pub dropped: u64,
    /// What ran.
    pub stats: Stats,
}

impl Report {
    /// Whether the run found nothing.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty() && self.dropped == 0
    }

    /// The findings of one kind.
    pub fn of_kind(&self, kind: FindingKind) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.kind == kind)
    }

    /// The first finding of any of `kinds` (a bug may show as one of several: a read of data
    /// not yet copied is a race or an uninitialized read, by the schedule).
    pub fn first_of(&self, kinds: &[FindingKind]) -> Option<&Finding> {
        self.findings.iter().find(|f| kinds.contains(&f.kind))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "simulated with seed {} ({:?}): {} blocks, {} warp instructions, {} lane instructions",
            self.seed,
            self.schedule,
            self.stats.blocks,
            self.stats.warp_instructions,
            self.stats.lane_instructions
        )?;
        if self.is_clean() {
            return writeln!(f, "no findings");
        }
        for x in &self.findings {
            writeln!(f, "{x}")?;
        }
        if self.dropped > 0 {
            writeln!(f, "... and {} more findings", self.dropped)?;
        }
        Ok(())
    }
}

/// Why a run could not complete.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimError {
    /// The kernel reached an op the simulator does not model.
    #[error("`{op}`{} is not modelled by the simulator", at_suffix(location))]
    Unsupported {
        /// The op's PTX mnemonic, with the form that is not modelled.
        op: String,
        /// Where the kernel emitted it.
        location: Option<Location>,
    },
    /// An operand the op cannot take (the IR check does not see it: e.g. a float immediate in
    /// an integer slot).
    #[error("`{op}`{}: {detail}", at_suffix(location))]
    BadOperand {
        /// The op's PTX mnemonic.
        op: &'static str,
        /// Where the kernel emitted it.
        location: Option<Location>,
        /// What is wrong.
        detail: String,
    },
    /// A launch the kernel cannot run with.
    #[error("bad launch: {0}")]
    BadLaunch(String),
    /// Arguments that do not match the kernel's parameters.
    #[error("bad argument for parameter `{param}`: {reason}")]
    BadArgument {
        /// The parameter's name (or its position when there are too few arguments).
        param: String,
        /// What is wrong.
        reason: String,
    },
    /// The run executed more instructions than [`Limits::max_steps`](super::Limits::max_steps)
    /// (a loop that never ends, or a limit too low for the problem).
    #[error("the run stopped after {steps} warp instructions (the step limit)")]
    StepLimit {
        /// Instructions executed.
        steps: u64,
    },
    /// A resource the simulator's encoding cannot hold (a block with too many warps for the
    /// vector clocks, a barrier counter that overflowed).
    #[error("the simulator cannot represent this run: {0}")]
    Limit(String),
}

fn at_suffix(loc: &Option<Location>) -> String {
    loc.map(|l| format!(" at {l}")).unwrap_or_default()
}

/// Findings as they are found: repeats of one (kind, op, other op) are counted, not kept, and
/// at most `max` are kept.
#[derive(Debug)]
pub(crate) struct Findings {
    list: Vec<Finding>,
    index: BTreeMap<(FindingKind, u32, u32), usize>,
    max: usize,
    dropped: u64,
}

impl Findings {
    pub(crate) fn new(max: usize) -> Self {
        Findings {
            list: Vec::new(),
            index: BTreeMap::new(),
            max,
            dropped: 0,
        }
    }

    /// Whether a finding of `kind` at `pc` (against `other_pc`, or `u32::MAX`) was kept already:
    /// callers skip building its text.
    pub(crate) fn seen(&mut self, kind: FindingKind, pc: u32, other_pc: u32) -> bool {
        match self.index.get(&(kind, pc, other_pc)) {
            Some(&i) => {
                self.list[i].repeats += 1;
                true
            }
            None => false,
        }
    }

    /// Records a finding of `kind` at `pc` (against `other_pc`); counts it as a repeat when one
    /// with the same key exists.
    pub(crate) fn push(&mut self, pc: u32, other_pc: u32, f: Finding) {
        if self.seen(f.kind, pc, other_pc) {
            return;
        }
        if self.list.len() >= self.max {
            self.dropped += 1;
            return;
        }
        self.index.insert((f.kind, pc, other_pc), self.list.len());
        self.list.push(f);
    }

    pub(crate) fn finish(self) -> (Vec<Finding>, u64) {
        (self.list, self.dropped)
    }
}
