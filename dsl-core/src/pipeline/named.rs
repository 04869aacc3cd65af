//! Named barriers (`bar.sync id, count`): a barrier for a subset of the block's threads, such as
//! one warpgroup, while the other roles run elsewhere and never reach it.

use crate::kernel::{bar_arrive, bar_sync, context::record_error, BuildError};

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
        NamedBarrier { id, threads }
    }

    /// The id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The thread count.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// `bar.sync id, threads`.
    pub fn sync(&self) {
        bar_sync(self.id, self.threads);
    }

    /// `bar.arrive id, threads`.
    pub fn arrive(&self) {
        bar_arrive(self.id, self.threads);
    }
}

/// `warpgroup_sync(id)` of warp-specialized kernels: `bar.sync id, 128`, the 128 threads of one
/// warpgroup.
pub fn warpgroup_sync(id: u32) {
    NamedBarrier::new(id, 128).sync();
}
