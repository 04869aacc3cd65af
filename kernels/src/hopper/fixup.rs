//! Stream-K's hand-over of partial sums between blocks ([`dsl_core::pipeline::stream_k`] owns
//! the walk): a start unit's consumer (a piece short of its tile's end) stores its f32
//! accumulators to its block's slot of the workspace and raises the slot's flag; the owner of
//! the tile's end waits for each peer's flag in order, adds the peer's sums to its own (a fixed
//! order: the result does not depend on timing), and lowers the flag for the next launch.
//!
//! | who | does | ordered by |
//! |-----|------|------------|
//! | start consumer `c` of block `b` (all 128 threads) | stores its accumulators to slot `(b, c)` | |
//! | the same, thread 0 | after the warpgroup's barrier, `fence.acq_rel.gpu`, then flag `(b, c)` = 1 | the fence releases the warpgroup's stores |
//! | end consumer `c`, thread `i`, for peers `first + i`, `first + i + 128`, ... | spins on `ld.acquire.gpu` until flag `(p, c)` is 1, then sets it to 0 | acquire |
//! | the end's warpgroup | after its barrier, adds the peers' slots to its accumulators in order | the barrier orders the loads after the acquires |
//!
//! The workspace (f32 elements, zeroed when allocated) starts with [`flag_words`] flags, one per
//! consumer of each of up to [`MAX_BLOCKS`] blocks, always at the same place so that every
//! launch finds them lowered; the slots follow, one per consumer of each block that has a
//! stream-K share, each thread's values side by side in fours (a 16-byte access per four
//! accumulators, coalesced across the warpgroup). Each block stores at most one partial per
//! launch (a start is the first unit of its block's share), so each flag rises and falls at most
//! once.

use dsl_core::ir::Scope;
use dsl_core::kernel::*;
use dsl_core::pipeline::{StreamKScheduler, WARPGROUP_THREADS};
use dsl_core::tensor::Fragment;
use dsl_macros::device;

use super::consumer::OwnBarrier;
use super::schedule::HopperSchedule;

/// The most blocks a launch may have (the flags' room).
pub const MAX_BLOCKS: u32 = 1024;

/// Flags at the workspace's start: one per consumer of each of [`MAX_BLOCKS`] blocks, two
/// consumers' worth where a block has one (so that the slots of every block of one or two
/// consumers start at the same place).
pub fn flag_words(cfg: &HopperSchedule) -> u32 {
    MAX_BLOCKS * cfg.consumers().max(2)
}

/// f32 elements of the workspace for `sk_blocks` blocks with a stream-K share: the flags and a
/// slot of one consumer's accumulators per consumer of each.
pub fn workspace_elems(cfg: &HopperSchedule, sk_blocks: u32) -> u64 {
    let (bm, bn, _) = cfg.tile.mnk();
    u64::from(flag_words(cfg)) + u64::from(sk_blocks) * u64::from(bm) * u64::from(bn)
}

/// The workspace as the consumers see it.
#[derive(Clone, Copy)]
pub(super) struct Partials {
    flags: GlobalPtr<u32>,
    slots: GlobalPtr<f32>,
    /// f32 elements of one consumer's accumulators.
    slot_elems: u32,
    /// Consumers per block.
    consumers: u32,
}

impl Partials {
    /// The flags and slots of `workspace` for `cfg`'s tiles.
    pub(super) fn new(workspace: GlobalPtr<f32>, cfg: &HopperSchedule) -> Partials {
        let bn = cfg.tile.n();
        Partials {
            flags: workspace.cast::<u32>(),
            slots: workspace + flag_words(cfg),
            slot_elems: cfg.consumer_rows() * bn,
            consumers: cfg.consumers(),
        }
    }

    fn flag(&self, block: Var<u32>, c: Var<u32>) -> GlobalPtr<u32> {
        self.flags + (block * self.consumers + c)
    }

    /// Thread `t`'s first value in slot `(block, c)`.
    fn slot(&self, block: Var<u32>, c: Var<u32>, t: Var<u32>) -> GlobalPtr<f32> {
        self.slots + ((block * self.consumers + c) * self.slot_elems + t * 4u32)
    }
}

/// Elements between a thread's consecutive fours in a slot.
const FOURS: u32 = WARPGROUP_THREADS * 4;

/// Thread `t`'s accumulators to slot `(block, c)`.
fn store_slot(p: &Partials, acc: &Fragment<f32>, block: Var<u32>, c: Var<u32>, t: Var<u32>) {
    let base = p.slot(block, c, t);
    for (j, four) in acc.regs.chunks_exact(4).enumerate() {
        (base + j as u32 * FOURS).store_vec([four[0], four[1], four[2], four[3]]);
    }
}

/// Slot `(block, c)`'s values added to thread `t`'s accumulators, then (where `next` is given)
/// slot `(next, c)`'s where `more` holds: the second slot's loads are issued with the first's,
/// so that two peers cost one round trip to L2. Addition in slot order either way.
fn add_slots(
    p: &Partials,
    acc: &Fragment<f32>,
    (block, c, t): (Var<u32>, Var<u32>, Var<u32>),
    next: Option<(Var<u32>, Var<bool>)>,
) {
    let first = p.slot(block, c, t);
    // Without a second peer, the second loads read the first slot again and add nothing.
    let second = next.map(|(b, more)| (p.slot(select(more, b, block), c, t), more));
    for (j, four) in acc.regs.chunks_exact(4).enumerate() {
        let off = j as u32 * FOURS;
        let v = (first + off).load_vec::<4>();
        let w = second.map(|(s, _)| (s + off).load_vec::<4>());
        for (q, mut r) in four.iter().copied().enumerate() {
            let mut x = r + v[q];
            if let (Some(w), Some((_, more))) = (w, second) {
                x += select(more, w[q], 0.0f32);
            }
            r.set(x);
        }
    }
}

/// Accumulator registers up to which [`hand_over`] adds two peers' slots at once (their loads
/// in flight together need as many registers again).
const PAIRED_SLOT_REGS: usize = 64;

/// Consumer `c`'s part of the hand-over for the current unit of `tiles` (see the module's
/// docs; thread `t`, `own` its warpgroup's barrier): nothing for a whole tile; a start stores
/// and signals; an end waits for all its peers' flags at once (thread `i` of the warpgroup for
/// peer `first + i`, and so on), then adds their sums in order. Afterwards the accumulators of
/// a unit that [`StreamKScheduler::writes_tile`] hold the tile's sums.
#[device]
pub(super) fn hand_over(
    tiles: &StreamKScheduler,
    p: &Partials,
    acc: &Fragment<f32>,
    (c, t): (Var<u32>, Var<u32>),
    own: &OwnBarrier,
) {
    let size = tiles.cluster().size();
    let me = block_idx_x();
    // Blocks of a cluster work on the same units, each on its own part of the cluster tile:
    // a peer cluster's block of the same rank holds this block's part.
    let rank = me % size;
    let paired = acc.regs.len() <= PAIRED_SLOT_REGS;
    if !tiles.whole() {
        if tiles.writes_tile() {
            let (first, end) = tiles.peers();
            let mut peer = first + t;
            while peer.lt(end) {
                let flag = p.flag(peer * size + rank, c);
                while flag.load_acquire(Scope::Gpu).ne_(1u32) {}
                flag.store_relaxed(0u32, Scope::Gpu);
                peer += WARPGROUP_THREADS;
            }
            own.sync();
            let mut peer = first.fresh();
            while peer.lt(end) {
                let block = peer * size + rank;
                if paired {
                    let more = (peer + 1u32).lt(end);
                    add_slots(p, acc, (block, c, t), Some((block + size, more)));
                    peer += 2u32;
                } else {
                    add_slots(p, acc, (block, c, t), None);
                    peer += 1u32;
                }
            }
        } else {
            store_slot(p, acc, me, c, t);
            own.sync();
            if t.eq_(0u32) {
                fence_acq_rel(Scope::Gpu);
                p.flag(me, c).store_relaxed(1u32, Scope::Gpu);
            }
        }
    }
}
