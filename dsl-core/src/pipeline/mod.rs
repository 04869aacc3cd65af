//! Pipelines and warp roles: the vocabulary of warp-specialized kernels (CUTLASS's
//! `sm90_pipeline.hpp` and its Hopper and Blackwell GEMMs), each part a small module whose docs state its protocol.
//!
//! - [`barrier`]: mbarrier arrays in shared memory, typed by how a phase completes
//!   ([`TmaBarriers`], [`MmaBarriers`], [`Barriers`]), with `init`, `arrive`,
//!   `arrive_expect_tx`, `wait` and [`MbarrierArray::remote_view`].
//! - [`PipelineState`]: the stage and phase a role uses next; [`PipelineState::producer`]
//!   starts at phase 1, [`PipelineState::consumer`] at phase 0.
//! - [`NamedBarrier`] and [`warpgroup_sync`]: barriers for a subset of the block; [`NamedBarriers`]
//!   hands out their ids in order.
//! - [`roles`]: [`warpgroup_id`], [`warp_id_in_warpgroup`], [`elect_one`], [`RegisterBudget`].
//! - [`ClusterShape`]: a block's place in its cluster and the multicast masks.
//! - [`PersistentScheduler`]: the persistent walk over output tiles, [`Raster`] orders.
//! - [`StreamKScheduler`]: the persistent walk that shares out k-tiles where the tiles are few
//!   ([`StreamKSplit`] chooses the split on the host).
//! - [`TmemAllocation`]: a block's (or a pair's) tensor memory, allocated, read and freed in
//!   the order the hardware needs.
//! - [`TileQueue`]: tiles handed out at run time from an atomic counter, a block's producer
//!   passing them to its consumers in shared memory (with [`StreamKScheduler::jump_to`]).
//!
//! The protocol of a TMA producer and its consumers over a ring of `stages` buffers, `full`
//! completed by the TMA loads and `empty` by the consumers' arrivals:
//!
//! | role | waits on | then | arrives on |
//! |------|----------|------|------------|
//! | producer (one elected thread) | `empty[ps]` (phase starts at 1: passes on the first lap) | issues the loads with `full[ps]`'s address | `full[ps]`, expecting the loads' bytes |
//! | consumer | `full[cs]` (phase starts at 0) | reads the stage | `empty[cs]` once done with it |
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::pipeline::*;
//! let k = build_kernel("ring", |kb| {
//!     let full = TmaBarriers::new(kb, "full", 4, 1);
//!     let empty = Barriers::new(kb, "empty", 4, 2);
//!     // What `if thread_idx_x() == 0 { .. }` becomes in a #[kernel] body.
//!     thread_idx_x().eq_(0u32).if_(|_| {
//!         full.init();
//!         empty.init();
//!         fence_mbarrier_init();
//!     });
//!     sync_threads();
//!     let mut ps = PipelineState::producer(4);
//!     empty.wait(&ps);
//!     full.arrive_expect_tx(&ps, 16384u32);
//!     ps.advance();
//! })
//! .unwrap();
//! assert_eq!(k.shared.len(), 2);
//! ```

pub mod barrier;
pub mod cluster;
pub mod named;
pub mod queue;
pub mod roles;
pub mod scheduler;
pub mod state;
pub mod stream_k;
pub mod tmem;

pub use barrier::{Barriers, MbarrierArray, MmaBarriers, RemoteBarriers, TmaBarriers};
pub use cluster::{cluster_size, cluster_sync, ClusterShape};
pub use named::{warpgroup_sync, Alignment, NamedBarrier, NamedBarriers, NAMED_BARRIERS};
pub use queue::{TileQueue, QUEUE_SLOTS, QUEUE_WORDS};
pub use roles::{
    elect_one, lane, registers_at_entry, thread_id_in_warpgroup, warp_id_in_block,
    warp_id_in_warpgroup, warpgroup_id, RegisterBudget, WARPGROUP_THREADS,
};
pub use scheduler::{hilbert_order, walk, PersistentScheduler, Raster};
pub use state::PipelineState;
pub use stream_k::{
    stream_k_walk, StreamKRegion, StreamKScheduler, StreamKSplit, StreamKUnit, TailReuse,
};
pub use tmem::TmemAllocation;
