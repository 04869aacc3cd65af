//! Warp roles: which warpgroup, warp and lane a thread is, one elected lane, and each role's
//! register budget.
//!
//! Role conditions should be warp-uniform so that a whole warp takes one branch: the ids here
//! are computed from `%tid.x` and broadcast from lane 0 (`shfl.sync.idx`), which tells ptxas the
//! value is the same across the warp, as CUTLASS's `canonical_warp_group_idx` does.

use crate::kernel::{
    context::record_error, setmaxnreg_dec, setmaxnreg_inc, shfl_idx, thread_idx_x, BuildError, Var,
};

/// Threads in a warpgroup.
pub const WARPGROUP_THREADS: u32 = 128;

/// This thread's warpgroup in the block (`tid.x / 128`), warp-uniform.
pub fn warpgroup_id() -> Var<u32> {
    shfl_idx(thread_idx_x() / WARPGROUP_THREADS, 0u32)
}

/// This thread's warp in the block (`tid.x / 32`), warp-uniform.
pub fn warp_id_in_block() -> Var<u32> {
    shfl_idx(thread_idx_x() / 32u32, 0u32)
}

/// This thread's warp within its warpgroup (`0..4`), warp-uniform.
pub fn warp_id_in_warpgroup() -> Var<u32> {
    warp_id_in_block() % 4u32
}

/// This thread's index within its warpgroup (`0..128`).
pub fn thread_id_in_warpgroup() -> Var<u32> {
    thread_idx_x() % WARPGROUP_THREADS
}

/// This thread's lane in its warp (`tid.x % 32`).
pub fn lane() -> Var<u32> {
    thread_idx_x() % 32u32
}

pub use crate::kernel::elect_one;

/// The per-thread register limit of a role (`setmaxnreg`, sm_90a/sm_100a), applied by the whole
/// warpgroup at the start of its branch: a producer gives registers back so that consumers can
/// take them. ptxas honours it only when the kernel has a register cap at entry (one block per
/// SM: `.maxnreg`/`.maxntid` with `minnctapersm 1`) and each role is one branch of the same
/// `if`/`else`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterBudget {
    /// `setmaxnreg.dec` to this many registers (producers).
    Release(u32),
    /// `setmaxnreg.inc` to this many registers (consumers).
    Claim(u32),
}

impl RegisterBudget {
    /// Emits the `setmaxnreg`. A count outside 24..=256 or not a multiple of 8 is recorded as a
    /// build error.
    pub fn apply(self) {
        let n = match self {
            RegisterBudget::Release(n) | RegisterBudget::Claim(n) => n,
        };
        if !(24..=256).contains(&n) || n % 8 != 0 {
            record_error(|kernel| BuildError::BadArgument {
                kernel,
                message: format!(
                    "register budget {n}: setmaxnreg takes a multiple of 8 in 24..=256"
                ),
            });
            return;
        }
        match self {
            RegisterBudget::Release(n) => setmaxnreg_dec(n),
            RegisterBudget::Claim(n) => setmaxnreg_inc(n),
        }
    }

    /// Whether `producers` warpgroups at `producer` registers per thread and `consumers` at
    /// `consumer` fit what their block holds at entry ([`registers_at_entry`]): `setmaxnreg`
    /// moves registers within the block's own, so what the producers release is all the
    /// consumers can claim, and past it their `setmaxnreg.inc` waits forever.
    ///
    /// ```
    /// use dsl_core::pipeline::RegisterBudget;
    /// // One producer and two consumer warpgroups: 168 each at entry, 64512 in all.
    /// assert!(RegisterBudget::fits(40, 232, 1, 2));
    /// assert!(!RegisterBudget::fits(64, 224, 1, 2));
    /// ```
    pub fn fits(producer: u32, consumer: u32, producers: u32, consumers: u32) -> bool {
        let threads = (producers + consumers) * WARPGROUP_THREADS;
        let total = (producer * producers + consumer * consumers) * WARPGROUP_THREADS;
        total <= registers_at_entry(threads) * threads
    }
}

/// Registers per thread a block of `threads` holds at entry where the kernel has a register cap
/// (one block per SM, as `setmaxnreg` needs): the SM's 65536 over its threads in multiples of 8,
/// at most 248 (ptxas allocates at most 255 a thread, 8 at a time).
///
/// ```
/// use dsl_core::pipeline::registers_at_entry;
/// assert_eq!(registers_at_entry(384), 168);
/// assert_eq!(registers_at_entry(512), 128);
/// assert_eq!(registers_at_entry(128), 248);
/// ```
pub fn registers_at_entry(threads: u32) -> u32 {
    (65536 / threads.max(1) / 8 * 8).min(248)
}
