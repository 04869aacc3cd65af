//! Timestamps of a launch's phases, per block: a diagnostic build of the program
//! ([`super::traced_kernel`]) that writes, at each [`Phase`], `%globaltimer` (nanoseconds, the
//! same clock on every SM) and `%clock64` (the SM's cycles) into the workspace. It answers where
//! a launch's fixed cost goes (its start, B's load, the first tile, the drain at the end), which
//! the time against M only bounds (`results/h200_hopper_levers_2026-12-02.md`: 2.9-3.5 us at
//! 81920 x 256 x 256). The build for timing and for use ([`super::hopper_kernel`]) has none of it.
//!
//! The workspace must hold [`WORDS_PER_BLOCK`] `u64`s per block; a configuration with a
//! stream-K split uses it for partial sums, so only data-parallel launches (ping-pong, or no
//! split) are traced.
//!
//! ```
//! use kernels::hopper::trace::{Phase, PhaseTimes, WORDS_PER_BLOCK};
//! // One block's record: every phase's (globaltimer, clock64).
//! let mut words = vec![0u64; WORDS_PER_BLOCK];
//! for (i, p) in Phase::ALL.iter().enumerate() {
//!     words[2 * *p as usize] = 1_000 + 100 * i as u64;
//! }
//! let t = PhaseTimes::of_blocks(&words);
//! assert_eq!(t[0].ns(Phase::Ready), 1_100);
//! ```

use dsl_core::kernel::*;

/// A point of a launch each block stamps (the thread that stamps it in brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The block starts (thread 0, before the barriers' setup).
    Entry = 0,
    /// The previous kernel is done and global memory may be touched (thread 0, after
    /// `griddepcontrol.wait`).
    Ready = 1,
    /// The producer has issued its last load (its elected lane).
    ProducerDone = 2,
    /// The first consumer has B (resident B) or may start (its thread 0).
    ConsumerStart = 3,
    /// The first consumer's first tile's main loop is done (its thread 0).
    FirstMainLoop = 4,
    /// The first consumer's first tile's stores are issued (its thread 0).
    FirstEpilogue = 5,
    /// The first consumer is done, its stores written (its thread 0).
    Consumer0Done = 6,
    /// The second consumer is done (its thread 0; 0 where there is one consumer).
    Consumer1Done = 7,
}

impl Phase {
    /// Every phase, in the order of their numbers.
    pub const ALL: [Phase; 8] = [
        Phase::Entry,
        Phase::Ready,
        Phase::ProducerDone,
        Phase::ConsumerStart,
        Phase::FirstMainLoop,
        Phase::FirstEpilogue,
        Phase::Consumer0Done,
        Phase::Consumer1Done,
    ];
}

/// `u64` words of one block's record: `(globaltimer, clock64)` per phase.
pub const WORDS_PER_BLOCK: usize = 2 * Phase::ALL.len();

/// Where a block stamps its phases: nowhere in a build without the trace.
#[derive(Clone, Copy)]
pub struct Trace {
    record: Option<GlobalPtr<u64>>,
}

impl Trace {
    /// The trace of this block into `workspace` (its record at `block * WORDS_PER_BLOCK`), or,
    /// `enabled` false, none: then no instruction is generated for it.
    pub fn new(enabled: bool, workspace: GlobalPtr<f32>) -> Trace {
        Trace {
            record: enabled
                .then(|| workspace.cast::<u64>() + block_idx_x() * (WORDS_PER_BLOCK as u32)),
        }
    }

    /// Stamps phase `p` where `who` holds (evaluated only in a traced build).
    pub fn mark(&self, who: impl FnOnce() -> Var<bool>, p: Phase) {
        if self.record.is_some() {
            who().if_(|_| self.mark_here(p));
        }
    }

    /// Stamps phase `p` in the thread that runs it (one thread: the caller's branch).
    pub fn mark_here(&self, p: Phase) {
        if let Some(record) = self.record {
            let at = record + 2 * p as u32;
            at.store(global_timer());
            (at + 1u32).store(clock64());
        }
    }

    /// A flag that holds until [`FirstUnit::done`]: for the phases of a role's first unit.
    pub fn first_unit(&self) -> FirstUnit {
        FirstUnit(self.record.map(|_| Var::<u32>::konst(1).fresh()))
    }
}

/// Whether a role is on its first unit ([`Trace::first_unit`]); nothing in a build without the
/// trace.
pub struct FirstUnit(Option<Var<u32>>);

impl FirstUnit {
    /// Whether the role is on its first unit (true in a build without the trace, where no one
    /// asks).
    pub fn holds(&self) -> Var<bool> {
        match self.0 {
            Some(f) => f.eq_(1u32),
            None => Var::konst(true),
        }
    }

    /// The first unit is done.
    pub fn done(&self) {
        if let Some(mut f) = self.0 {
            f.set(0u32);
        }
    }
}

/// One block's stamps as the host reads them back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseTimes {
    words: [u64; WORDS_PER_BLOCK],
}

impl PhaseTimes {
    /// The records of `words.len() / WORDS_PER_BLOCK` blocks.
    pub fn of_blocks(words: &[u64]) -> Vec<PhaseTimes> {
        words
            .chunks_exact(WORDS_PER_BLOCK)
            .map(|c| PhaseTimes {
                words: c.try_into().expect("chunks of WORDS_PER_BLOCK"),
            })
            .collect()
    }

    /// `%globaltimer` at `p` (0 where the block did not stamp it).
    pub fn ns(&self, p: Phase) -> u64 {
        self.words[2 * p as usize]
    }

    /// `%clock64` at `p`.
    pub fn cycles(&self, p: Phase) -> u64 {
        self.words[2 * p as usize + 1]
    }
}
