//! Barrier protocols: (a) a full/empty mbarrier ring whose `PipelineState`s start at the wrong
//! phases, (g) a named barrier whose count differs from the threads that arrive, (i) an
//! mbarrier initialized one arrival short, (m) lanes of a warp without `sync_warp`, (o) a
//! staging tile handed back before it is read, (p) an mbarrier used by another warp with no
//! barrier after its init.

use dsl_core::kernel::*;
use dsl_core::pipeline::{Barriers, NamedBarrier, NamedBarriers, PipelineState};
use dsl_core::sim::FindingKind;
use dsl_macros::kernel;

use super::{caught, clean, marked, Planted};

const SOURCE: &str = include_str!("sync.rs");
const FILE: &str = "planted/sync.rs";

/// Where the two ends of the ring start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phases {
    /// The producer at phase 1 (its first wait on an empty stage passes), the consumer at 0.
    Right,
    /// Both at phase 0: the producer's first wait is for a phase that cannot complete.
    BothAtZero,
    /// The consumer at phase 1: its first wait passes before the producer wrote the stage.
    ConsumerAtOne,
}

const STAGES: u32 = 2;
const ITEMS: u32 = 6;

/// The producer's and the consumer's states for `phases`.
fn states(phases: Phases) -> (PipelineState, PipelineState) {
    match phases {
        Phases::Right => (
            PipelineState::producer(STAGES),
            PipelineState::consumer(STAGES),
        ),
        Phases::BothAtZero => (
            PipelineState::consumer(STAGES),
            PipelineState::consumer(STAGES),
        ),
        Phases::ConsumerAtOne => (
            PipelineState::producer(STAGES),
            PipelineState::producer(STAGES),
        ),
    }
}

/// Warp 0 produces `ITEMS` rows of 32 values into a ring of `STAGES` shared rows, warp 1
/// consumes them into `out`, over full and empty barriers of 32 arrivals (every lane).
#[kernel]
fn ring(#[host] phases: Phases, k: &KernelBuilder, out: GlobalPtr<u32>) {
    let full = Barriers::new(k, "full", STAGES, 32);
    let empty = Barriers::new(k, "empty", STAGES, 32);
    let rows = k.shared_array::<u32>("rows", u64::from(STAGES * 32), 16);
    let t = thread_idx_x();
    let lane = t % 32u32;
    if t.eq_(0u32) {
        full.init();
        empty.init();
        fence_mbarrier_init();
    }
    sync_threads();
    let (mut ps, mut cs) = states(phases);
    if t.lt(32u32) {
        for i in 0..ITEMS {
            empty.wait(&ps); // planted: producer waits
            rows.store_at(ps.stage() * 32u32 + lane, lane + 100 * i);
            full.arrive(&ps);
            ps.advance();
        }
    } else {
        for i in 0..ITEMS {
            full.wait(&cs); // planted: consumer waits
            let v = rows.load_at(cs.stage() * 32u32 + lane); // planted: consumer reads
            out.store_at(lane + 32 * i, v);
            empty.arrive(&cs);
            cs.advance();
        }
    }
}

fn ring_case(phases: Phases) -> Planted {
    let want: Vec<u32> = (0..ITEMS)
        .flat_map(|i| (0..32).map(move |l| l + 100 * i))
        .collect();
    Planted::one_block(ring(phases).unwrap(), 64, want)
}

/// (a) Both states at phase 0: the producer's first wait on an empty stage never passes, a
/// deadlock that names the producer's wait (and the consumer's, waiting for data that never
/// comes).
#[test]
fn producer_and_consumer_both_at_phase_0_deadlock_at_the_producers_wait() {
    let f = caught(
        &ring_case(Phases::BothAtZero),
        &[FindingKind::Deadlock],
        FILE,
        &[marked(SOURCE, "producer waits")],
    );
    assert!(f.details.contains("parity 0"), "{}", f.details);
    clean(&ring_case(Phases::Right));
}

/// (a) A consumer at phase 1: its first wait passes at once, and it reads a stage the producer
/// has not written (uninitialized or racing the producer's store), or the ring deadlocks.
#[test]
fn a_consumer_at_phase_1_reads_a_stage_not_yet_written() {
    caught(
        &ring_case(Phases::ConsumerAtOne),
        &[
            FindingKind::UninitializedShared,
            FindingKind::DataRace,
            FindingKind::Deadlock,
        ],
        FILE,
        &[
            marked(SOURCE, "consumer reads"),
            marked(SOURCE, "consumer waits"),
            marked(SOURCE, "producer waits"),
        ],
    );
    clean(&ring_case(Phases::Right));
}

/// Warp 0 writes 64 values and signals on named barrier 1 (`bar.arrive` with `producer` as
/// the count); the two consumer warps wait there for 96 threads (themselves and the producer),
/// then read.
#[kernel]
fn signal(#[host] producer: u32, k: &KernelBuilder, out: GlobalPtr<u32>) {
    let s = k.shared_array::<u32>("s", 64, 16);
    let t = thread_idx_x();
    let ready = NamedBarrier::new(1, producer);
    let waited = NamedBarrier::new(1, 96);
    if t.lt(32u32) {
        s.store_at(t, t * 3u32);
        s.store_at(t + 32u32, t * 5u32);
        ready.arrive(); // planted: producer signals
    } else {
        waited.sync(); // planted: consumers wait
        out.store_at(t - 32u32, s.load_at(t - 32u32));
    }
}

fn signal_case(producer: u32) -> Planted {
    let want: Vec<u32> = (0..64)
        .map(|i| if i < 32 { i * 3 } else { (i - 32) * 5 })
        .collect();
    Planted::one_block(signal(producer).unwrap(), 96, want)
}

/// (g) The producer's arrival counts only the consumers (64) where 96 threads arrive; whatever
/// the order of the arrivals, two of them in one phase disagree.
#[test]
fn a_named_barrier_whose_count_differs_from_the_arrivals_is_caught() {
    let lines = [
        marked(SOURCE, "producer signals"),
        marked(SOURCE, "consumers wait"),
    ];
    caught(&signal_case(64), &[FindingKind::BarrierCount], FILE, &lines);
    clean(&signal_case(96));
}

const WRITERS: u32 = 2;

/// Warps 0 and 1 each write 32 values and arrive once (an elected lane) on an mbarrier
/// initialized for `arrivals`; warp 2 waits for phase 0 and adds the two halves.
#[kernel]
fn gather(#[host] arrivals: u32, k: &KernelBuilder, out: GlobalPtr<u32>) {
    let full = Barriers::new(k, "full", 1, arrivals);
    let s = k.shared_array::<u32>("s", u64::from(WRITERS * 32), 16);
    let t = thread_idx_x();
    if t.eq_(0u32) {
        full.init();
        fence_mbarrier_init();
    }
    sync_threads();
    if t.lt(WRITERS * 32) {
        s.store_at(t, t + 1000u32);
        if elect_one() {
            full.arrive_at(0u32);
        }
    } else {
        full.wait_at(0u32, 0u32); // planted: gatherer waits
        let lane = t % 32u32;
        let v = s.load_at(lane) + s.load_at(lane + 32u32); // planted: gatherer reads
        out.store_at(lane, v);
    }
}

fn gather_case(arrivals: u32) -> Planted {
    let want: Vec<u32> = (0..32).map(|l| (l + 1000) + (l + 32 + 1000)).collect();
    Planted::one_block(gather(arrivals).unwrap(), 96, want)
}

/// (i) Initialized one arrival short, the phase completes at the first writer's arrival: the
/// second writer's values are read without anything ordering them (a race, or a read of bytes
/// not yet written); or, where the second writer's arrival completes a second phase before the
/// gatherer looks, the parity it waits for is the third phase's, which never completes (a
/// deadlock at its wait).
#[test]
fn an_mbarrier_one_arrival_short_lets_a_read_pass_a_write() {
    caught(
        &gather_case(WRITERS - 1),
        &[
            FindingKind::DataRace,
            FindingKind::UninitializedShared,
            FindingKind::Deadlock,
        ],
        FILE,
        &[
            marked(SOURCE, "gatherer reads"),
            marked(SOURCE, "gatherer waits"),
        ],
    );
    clean(&gather_case(WRITERS));
}

const LANES: u32 = 32;

/// A warp's sum through shared memory, halving: each lane writes its value, then for each
/// half the lanes below it add the value of the lane `half` above. Lanes of a warp are not in
/// lockstep, so each step needs `sync_warp` between the writes and the reads (`synced` plants
/// its absence).
#[kernel]
fn warp_sum(#[host] synced: bool, k: &KernelBuilder, x: GlobalPtr<u32>, out: GlobalPtr<u32>) {
    k.require_threads(LANES, 1, 1);
    let s = k.shared_array::<u32>("s", u64::from(LANES), 16);
    let t = thread_idx_x();
    s.store_at(t, x.load_at(t));
    for half in [16u32, 8, 4, 2, 1] {
        if synced {
            sync_warp();
        }
        let mine = s.load_at(t);
        let theirs = s.load_at((t + half) & (LANES - 1)); // planted: reads another lane's value
        if synced {
            sync_warp();
        }
        if t.lt(half) {
            s.store_at(t, mine + theirs);
        }
    }
    if synced {
        sync_warp();
    }
    if t.eq_(0u32) {
        out.store_at(0u32, s.load_at(0u32));
    }
}

fn warp_sum_case(synced: bool) -> Planted {
    let x: Vec<u32> = (0..LANES).map(|i| i * 3 + 1).collect();
    let sum = x.iter().sum();
    Planted::one_block_in_out(warp_sum(synced).unwrap(), LANES, x, vec![sum])
}

/// (m) Lanes of one warp passing values through shared memory with no `sync_warp` between the
/// write and the read: a race between two lanes, at the read of the other lane's value.
#[test]
fn lanes_of_a_warp_reading_each_other_without_sync_warp_race() {
    let f = caught(
        &warp_sum_case(false),
        &[FindingKind::DataRace],
        FILE,
        &[marked(SOURCE, "reads another lane's value")],
    );
    assert!(f.details.contains("lanes of one warp"), "{}", f.details);
    let other = f.other.as_ref().expect("the other lane");
    assert_eq!(other.warp, 0, "{f}");
    clean(&warp_sum_case(true));
}

/// Tiles handed from one warp to another through one staging buffer in shared memory, as the
/// Hopper program's consumers hand tiles to its epilogue warps (`_x`): the writer stages a tile
/// and arrives on `staged`; the reader waits on it, reads the tile, writes its output and
/// arrives on `free`, on which the writer waits before staging the next tile. `early` plants
/// the hand-back before the read: the writer's next tile may then overwrite the buffer while
/// the reader still reads the last one.
#[kernel]
fn hand_over(#[host] early: bool, k: &KernelBuilder, x: GlobalPtr<u32>, out: GlobalPtr<u32>) {
    k.require_threads(2 * LANES, 1, 1);
    let staging = k.shared_array::<u32>("staging", u64::from(LANES), 16);
    let mut ids = NamedBarriers::new();
    let [staged, free] = ids.take(2 * LANES);
    let (warp, lane) = (thread_idx_x() >> 5u32, thread_idx_x() & (LANES - 1));
    if warp.eq_(0u32) {
        for tile in 0..TILES {
            if tile > 0 {
                free.sync();
            }
            let v = x.load_at(lane + tile * LANES) * 3u32;
            staging.store_at(lane, v); // planted: stages over the tile being read
            staged.arrive();
        }
    } else {
        for tile in 0..TILES {
            let last = tile + 1 == TILES;
            staged.sync();
            if early && !last {
                free.arrive();
            }
            let v = staging.load_at(lane); // planted: reads the staged tile
            out.store_at(lane + tile * LANES, v + 1u32);
            if !early && !last {
                free.arrive();
            }
        }
    }
}

/// Tiles [`hand_over`] stages.
const TILES: u32 = 3;

fn hand_over_case(early: bool) -> Planted {
    let x: Vec<u32> = (0..TILES * LANES).map(|i| i * 7 + 2).collect();
    let want = x.iter().map(|v| v * 3 + 1).collect();
    Planted::one_block_in_out(hand_over(early).unwrap(), 2 * LANES, x, want)
}

/// (o) A staging buffer handed back to its writer before the reader has read it (`free`
/// arrived on before the load): a race between the writer's next tile and the reader's load
/// of the last one, at either's line (whichever the schedule runs second).
#[test]
fn a_staging_tile_handed_back_before_it_is_read_races() {
    let lines = [
        marked(SOURCE, "stages over the tile being read"),
        marked(SOURCE, "reads the staged tile"),
    ];
    let f = caught(
        &hand_over_case(true),
        &[FindingKind::DataRace],
        FILE,
        &lines,
    );
    let other = f.other.as_ref().expect("the other warp");
    assert_ne!(other.warp, f.warp, "{f}");
    clean(&hand_over_case(false));
}

/// Warp 0 initializes an mbarrier for one arrival; warp 1 writes 32 values and arrives (an
/// elected lane); warp 0 waits for the phase and copies the values out. `synced` puts the
/// block barrier between the init and everything else.
#[kernel]
fn announce(#[host] synced: bool, k: &KernelBuilder, out: GlobalPtr<u32>) {
    let full = Barriers::new(k, "full", 1, 1);
    let s = k.shared_array::<u32>("s", 32, 16);
    let t = thread_idx_x();
    if t.eq_(0u32) {
        full.init();
    }
    if synced {
        sync_threads();
    }
    if t.ge(32u32) {
        s.store_at(t - 32u32, t);
        if elect_one() {
            full.arrive_at(0u32); // planted: writer arrives
        }
    } else {
        full.wait_at(0u32, 0u32); // planted: reader waits
        out.store_at(t, s.load_at(t));
    }
}

fn announce_case(synced: bool) -> Planted {
    Planted::one_block(announce(synced).unwrap(), 64, (32..64).collect())
}

/// (p) No barrier between the init and the other warp's arrival: where the arrival runs first
/// it finds no mbarrier (and the reader then waits for a phase that cannot come); where the
/// init runs first the init does not happen before the arrival. Either way an mbarrier finding
/// at the writer's arrival (or the deadlock at the reader's wait), on every seed.
#[test]
fn an_mbarrier_used_by_another_warp_with_no_barrier_after_its_init_is_caught() {
    caught(
        &announce_case(false),
        &[FindingKind::Mbarrier, FindingKind::Deadlock],
        FILE,
        &[
            marked(SOURCE, "writer arrives"),
            marked(SOURCE, "reader waits"),
        ],
    );
    clean(&announce_case(true));
}
