//! Named barriers (`bar.sync id, count`): a barrier for a subset of the block's threads, such as
//! one warpgroup, while the other roles run elsewhere and never reach it.

use crate::kernel::{
    bar_arrive, bar_sync, barrier_arrive_unaligned, barrier_sync_unaligned, context::record_error,
    BuildError,
};

/// Barrier slots a block has: ids `0..16`; id 0 is what `__syncthreads` (`bar.sync 0`) uses.
pub const NAMED_BARRIERS: u32 = 16;

/// One of the block's 16 hardware barriers, for `threads` threads (a multiple of 32).
///
/// Every thread that takes part must use the same id and count, and independent groups must use
/// different ids (two writeback warpgroups, say, use `10 + wg`). `sync` waits until
/// `threads` threads arrived; `arrive` counts this thread without waiting (a producer that
/// signals a consumer group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedBarrier {
    id: u32,
    threads: u32,
    alignment: Alignment,
}

/// Whether a barrier's arrivals come from one instruction per warp, converged, or from anywhere.
///
/// `bar.sync` and `bar.arrive` are the *aligned* barriers (`barrier.sync.aligned`): the PTX ISA
/// says the threads execute the same barrier instruction, and in conditional code allows them
/// only where every thread evaluates the condition alike; otherwise the behavior is undefined.
/// A barrier that two copies of a role reach from their own code, or that a warp reaches after
/// its lanes went separate ways, takes the unaligned forms (`barrier.sync`, `barrier.arrive`),
/// which count each thread where it arrives. (compute-sanitizer's synccheck reports the
/// first case as "Divergent thread(s) in block".)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    /// `bar.sync` / `bar.arrive`: each warp whole, at one instruction.
    Aligned,
    /// `barrier.sync` / `barrier.arrive`: no such requirement.
    Unaligned,
}

impl NamedBarrier {
    /// Barrier `id` for `threads` threads. An id outside `1..16` (0 is the whole block's) or a
    /// thread count that is not a positive multiple of 32 is recorded as a build error.
    pub fn new(id: u32, threads: u32) -> Self {
        if id == 0 || id >= NAMED_BARRIERS || threads == 0 || !threads.is_multiple_of(32) {
            record_error(|kernel| BuildError::BadArgument {
                kernel,
                message: format!(
                    "named barrier {id} for {threads} threads: ids are 1..16 (0 is the block's \
                     bar.sync) and the count a positive multiple of 32"
                ),
            });
        }
        NamedBarrier {
            id,
            threads,
            alignment: Alignment::Aligned,
        }
    }

    /// The same barrier through the unaligned instructions (`barrier.sync`, `barrier.arrive`),
    /// for arrivals from several code sites or from diverged warps ([`Alignment`]).
    ///
    /// ```
    /// use dsl_core::pipeline::{Alignment, NamedBarriers};
    /// let handoff = NamedBarriers::new().next(352).unaligned();
    /// assert_eq!(handoff.alignment(), Alignment::Unaligned);
    /// ```
    pub fn unaligned(self) -> Self {
        NamedBarrier {
            alignment: Alignment::Unaligned,
            ..self
        }
    }

    /// Which instructions it arrives through.
    pub fn alignment(&self) -> Alignment {
        self.alignment
    }

    /// The id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The thread count.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// `bar.sync id, threads` (unaligned: `barrier.sync`).
    pub fn sync(&self) {
        match self.alignment {
            Alignment::Aligned => bar_sync(self.id, self.threads),
            Alignment::Unaligned => barrier_sync_unaligned(self.id, self.threads),
        }
    }

    /// `bar.arrive id, threads` (unaligned: `barrier.arrive`).
    pub fn arrive(&self) {
        match self.alignment {
            Alignment::Aligned => bar_arrive(self.id, self.threads),
            Alignment::Unaligned => barrier_arrive_unaligned(self.id, self.threads),
        }
    }
}

/// Hands out a block's named barriers in order, each with its thread count, so that the ids
/// follow from the order a program asks for them (CUTLASS's `NamedBarrierManager`), not from
/// arithmetic on ids: id 1 first (0 is the block's `bar.sync`), then the next. Asking past the
/// 15th records a build error.
///
/// ```
/// use dsl_core::pipeline::NamedBarriers;
/// let mut ids = NamedBarriers::new();
/// let [own0, own1] = ids.take::<2>(128);
/// let turn = ids.next(256);
/// assert_eq!((own0.id(), own1.id(), turn.id(), turn.threads()), (1, 2, 3, 256));
/// ```
#[derive(Debug, Clone)]
pub struct NamedBarriers {
    next: u32,
}

impl Default for NamedBarriers {
    fn default() -> Self {
        NamedBarriers::new()
    }
}

impl NamedBarriers {
    /// None handed out yet.
    pub fn new() -> NamedBarriers {
        NamedBarriers { next: 1 }
    }

    /// The next barrier, for `threads` threads.
    pub fn next(&mut self, threads: u32) -> NamedBarrier {
        let b = NamedBarrier::new(self.next, threads);
        self.next += 1;
        b
    }

    /// The next `N` barriers, each for `threads` threads.
    pub fn take<const N: usize>(&mut self, threads: u32) -> [NamedBarrier; N] {
        std::array::from_fn(|_| self.next(threads))
    }
}

/// `warpgroup_sync(id)` of warp-specialized kernels: `bar.sync id, 128`, the 128 threads of one
/// warpgroup.
pub fn warpgroup_sync(id: u32) {
    NamedBarrier::new(id, 128).sync();
}
