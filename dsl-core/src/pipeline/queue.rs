//! A dynamic persistent tile scheduler: tiles handed out at run time, so that a block that runs
//! faster takes more of them. The static walks ([`super::PersistentScheduler`],
//! [`super::StreamKScheduler`]) give block `b` tiles `b, b + grid, ...`, so a launch ends when
//! its slowest block does; the queue gives each block its first tile by its index and every
//! later one from a counter in global memory, which one producer thread takes and hands to the
//! block's consumers through a ring in shared memory (Blackwell's cluster launch control does
//! the handing out in hardware; on Hopper it is an atomic).
//!
//! | who | does |
//! |-----|------|
//! | the producer (one thread) | takes its first tile by its block index; then, a tile ahead of its use, the next: `clusters + atom.add(counter, 1)` ([`TileQueue::take`]) |
//! | the same, at each tile past the first | waits `empty[s]`, writes the tile's index to slot `s`, arrives on `full[s]` (`mbarrier.arrive` releases the write; [`TileQueue::publish`]) |
//! | every consumer thread, at each tile past the first | waits `full[s]`, reads slot `s`, arrives on `empty[s]` ([`TileQueue::read`]): every reader reads every slot |
//! | the producer, once it took an index past the last tile | publishes it (the walk's end for the consumers), then `fence.acq_rel.gpu` and `atom.add(done, 1)`; the block that counts the grid's last lowers both words for the next launch ([`TileQueue::finish`]) |
//!
//! The two words ([`QUEUE_WORDS`]) must be zero before the first launch (a zeroed allocation);
//! each launch leaves them zero. A launch may read them only once the one before is complete
//! and its writes visible: in the same stream, or after `griddepcontrol.wait` in a programmatic
//! launch.
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::pipeline::*;
//! let k = build_kernel("queued", |kb| {
//!     let words = kb.param_ptr::<u32>("words");
//!     let queue = TileQueue::new(kb, words, 128, grid_dim_x());
//!     thread_idx_x().eq_(0u32).if_(|_| {
//!         queue.init();
//!         fence_mbarrier_init();
//!     });
//!     sync_threads();
//!     // The producer's side, one tile past the first: taken, handed over, counted out.
//!     thread_idx_x().eq_(0u32).if_(|_| {
//!         let mut ps = PipelineState::producer(QUEUE_SLOTS);
//!         let next = queue.take();
//!         queue.publish(&mut ps, next);
//!         queue.finish();
//!     });
//! })
//! .unwrap();
//! let shared: Vec<&str> = k.shared.iter().map(|s| s.name.as_str()).collect();
//! assert_eq!(shared, ["tile_queue", "queue_full", "queue_empty"]);
//! let mut atomics = 0;
//! dsl_core::ir::for_each_instr(&k.body, &mut |i: &dsl_core::ir::Instr| {
//!     atomics += matches!(i.op, dsl_core::ir::Op::Atomic(_)) as usize;
//! });
//! assert_eq!(atomics, 2); // the take and the count
//! ```

use crate::ir::Scope;
use crate::kernel::*;

use super::{Barriers, PipelineState};

/// Words of global memory the queue takes: the counter of tiles taken past the first wave and
/// the count of blocks done taking.
pub const QUEUE_WORDS: u32 = 2;

/// Slots of the shared ring of tile indices: how many tiles the producer may run ahead of the
/// consumers' walk. A warp-specialized GEMM whose ring of k-tiles holds two tiles (the short
/// K's 8 stages of 4 k-tiles) stays within them; with fewer k-tiles per tile than a quarter of
/// its stages, the queue, not the ring, bounds the producer's lead.
pub const QUEUE_SLOTS: u32 = 4;

/// The queue: its words in global memory, the first wave's size and the ring that hands tile
/// indices from the producer to the readers.
#[derive(Debug, Clone, Copy)]
pub struct TileQueue {
    counter: GlobalPtr<u32>,
    done: GlobalPtr<u32>,
    clusters: Var<u32>,
    slots: SharedPtr<u32>,
    full: Barriers,
    empty: Barriers,
}

impl TileQueue {
    /// The queue over `words` (its [`QUEUE_WORDS`]) for a grid of `clusters` walkers (each takes
    /// its first tile by its index), its ring in static shared memory read by `readers`
    /// threads per block.
    pub fn new(
        kb: &KernelBuilder,
        words: GlobalPtr<u32>,
        readers: u32,
        clusters: Var<u32>,
    ) -> TileQueue {
        TileQueue {
            counter: words,
            done: words + 1u32,
            clusters,
            slots: kb.shared_array::<u32>("tile_queue", u64::from(QUEUE_SLOTS), 4),
            full: Barriers::new(kb, "queue_full", QUEUE_SLOTS, 1),
            empty: Barriers::new(kb, "queue_empty", QUEUE_SLOTS, readers),
        }
    }

    /// `mbarrier.init` of the ring's barriers (one thread, before `fence_mbarrier_init`).
    pub fn init(&self) {
        self.full.init();
        self.empty.init();
    }

    /// The next tile past the first wave (the producer): its index in the walk's order. Taken
    /// a tile ahead of its use, the atomic's round trip hides under that tile's loads; taken
    /// just before its own loads (hopper_ws's `_ql`), under the ring's full stages, and the
    /// producer then holds one tile fewer when the queue runs dry.
    pub fn take(&self) -> Var<u32> {
        self.clusters + atomic_add_global(self.counter, 1u32)
    }

    /// Hands tile index `t` to the readers (the producer, at each tile past the first, and once
    /// more with the index past the end).
    pub fn publish(&self, state: &mut PipelineState, t: Var<u32>) {
        self.empty.wait(state);
        (self.slots + state.stage()).store(t);
        self.full.arrive(state);
        state.advance();
    }

    /// The next index the producer handed over (every reader thread).
    pub fn read(&self, state: &mut PipelineState) -> Var<u32> {
        self.full.wait(state);
        let t = (self.slots + state.stage()).load();
        self.empty.arrive(state);
        state.advance();
        t
    }

    /// The producer, done taking: counts its block out; the grid's last lowers both words.
    pub fn finish(&self) {
        // Every block's last take happened before its count (the release), and the last count
        // before the lowering (the acquire).
        fence_acq_rel(Scope::Gpu);
        let before = atomic_add_global(self.done, 1u32);
        before.eq_(self.clusters - 1u32).if_(|_| {
            fence_acq_rel(Scope::Gpu);
            self.counter.store(0u32);
            self.done.store(0u32);
        });
    }
}
