//! Tiles from a queue (`_q`): a walk that hands tiles out at run time, so that a block that
//! runs faster takes more of them. The static walk gives block `b` tiles `b, b + grid, ...`, so
//! a launch ends when its slowest block does (on the H200 at 81920 x 256 x 256 the blocks'
//! last stores spread over 6 us of a 26 us launch, DRAM idling as they drop out).
//!
//! | who | does |
//! |-----|------|
//! | the producer (its elected lane) | takes its first tile by its block index; then, while it loads each tile, the next: `grid + atom.add(counter, 1)` |
//! | the same, at each tile past the first | waits `empty[s]`, writes the tile's index to slot `s`, arrives on `full[s]` (`mbarrier.arrive` releases the write) |
//! | every consumer thread, at each tile past the first | waits `full[s]`, reads slot `s`, arrives on `empty[s]`: both consumers read every slot, since each steps over the other's tiles too |
//! | the producer, once it took an index past the last tile | publishes it (the walk's end for the consumers), then `fence.acq_rel.gpu` and `atom.add(done, 1)`; the block that counts the grid's last lowers both words for the next launch |
//!
//! The two words sit at the workspace's start (after the trace's records in its diagnostic
//! build), zeroed when the workspace was allocated and lowered again by every launch, as the
//! stream-K flags are ([`super::fixup`]); a queue configuration has no stream-K split, so the
//! words are not flags of its. The next launch reads them only after `griddepcontrol.wait`,
//! which waits for this one to complete and its writes to be visible.

use dsl_core::ir::Scope;
use dsl_core::kernel::*;
use dsl_core::pipeline::{Barriers, PipelineState, StreamKScheduler};
use dsl_macros::device;

/// Words of the workspace the queue takes: the counter of tiles taken past the first wave and
/// the count of blocks done taking.
pub const QUEUE_WORDS: u32 = 2;

/// Slots of the shared ring of tile indices: how many tiles the producer may run ahead of the
/// consumers' walk. The short K's 8 stages of 4 k-tiles keep it within two; with fewer k-tiles
/// per tile than stages / 4 the queue, not the ring, bounds its lead.
pub const QUEUE_SLOTS: u32 = 4;

/// The queue: its words in global memory and the ring that hands indices to the consumers.
#[derive(Clone, Copy)]
pub(super) struct TileQueue {
    counter: GlobalPtr<u32>,
    done: GlobalPtr<u32>,
    slots: SharedPtr<u32>,
    full: Barriers,
    empty: Barriers,
}

impl TileQueue {
    /// The queue over `words` (its [`QUEUE_WORDS`]), its ring read by `readers` threads.
    pub(super) fn new(kb: &KernelBuilder, words: GlobalPtr<u32>, readers: u32) -> TileQueue {
        TileQueue {
            counter: words,
            done: words + 1u32,
            slots: kb.shared_array::<u32>("tile_queue", u64::from(QUEUE_SLOTS), 4),
            full: Barriers::new(kb, "queue_full", QUEUE_SLOTS, 1),
            empty: Barriers::new(kb, "queue_empty", QUEUE_SLOTS, readers),
        }
    }

    /// `mbarrier.init` of the ring's barriers (one thread, with the others).
    pub(super) fn init(&self) {
        self.full.init();
        self.empty.init();
    }

    /// The next tile past the first wave (the producer): its index in the whole tiles' order.
    /// Issued a tile ahead of its use, so that the atomic's round trip hides under the loads.
    pub(super) fn take(&self, tiles: &StreamKScheduler) -> Var<u32> {
        tiles.clusters() + atomic_add_global(self.counter, 1u32)
    }

    /// Hands tile index `t` to the consumers (the producer, at each tile past the first, and
    /// once more with the index past the end).
    pub(super) fn publish(&self, state: &mut PipelineState, t: Var<u32>) {
        self.empty.wait(state);
        (self.slots + state.stage()).store(t);
        self.full.arrive(state);
        state.advance();
    }

    /// The next index the producer handed over (every consumer thread).
    pub(super) fn read(&self, state: &mut PipelineState) -> Var<u32> {
        self.full.wait(state);
        let t = (self.slots + state.stage()).load();
        self.empty.arrive(state);
        state.advance();
        t
    }

    /// The producer, done taking: counts its block out; the grid's last lowers both words.
    #[device]
    pub(super) fn finish(&self, tiles: &StreamKScheduler) {
        // Every block's last take happened before its count (the release), and the last count
        // before the lowering (the acquire).
        fence_acq_rel(Scope::Gpu);
        let before = atomic_add_global(self.done, 1u32);
        if before.eq_(tiles.clusters() - 1u32) {
            fence_acq_rel(Scope::Gpu);
            self.counter.store(0u32);
            self.done.store(0u32);
        }
    }
}
