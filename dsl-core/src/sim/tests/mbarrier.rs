//! mbarrier pipelines: a producer warp and a consumer warp hand stages of shared memory over
//! full and empty barriers ([`crate::pipeline`]'s `Barriers` and `PipelineState`). The correct
//! protocol is clean and delivers every stage; a producer whose state starts at phase 0 waits
//! forever (a deadlock naming the barrier's phase), a producer that skips the empty wait races
//! the consumer's reads, and misuse of the object is reported.

use super::*;
use crate::kernel::*;
use crate::pipeline::{Barriers, PipelineState};
use crate::sim::*;

/// How the producer misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bug {
    None,
    /// Starts at phase 0, as the consumer does.
    ProducerPhase0,
    /// Does not wait for the consumer to free a stage.
    NoEmptyWait,
}

const ITERS: u32 = 6;

fn pipeline(bug: Bug, lines: &mut (u32, u32)) -> Kernel {
    build_kernel("pipeline", |k| {
        let out = k.param_ptr::<u32>("out");
        let full = Barriers::new(k, "full", 2, 32);
        let empty = Barriers::new(k, "empty", 2, 32);
        let buf = k.shared_array::<u32>("buf", 64, 16);
        let (t, lane) = (thread_idx_x(), lane_id());
        t.eq_(0u32).if_(|_| {
            full.init();
            empty.init();
        });
        sync_threads();
        (t / 32u32).eq_(0u32).if_else(|arm| match arm {
            Arm::Then => {
                let mut ps = match bug {
                    Bug::ProducerPhase0 => PipelineState::consumer(2),
                    _ => PipelineState::producer(2),
                };
                range(Var::konst(0u32), ITERS).for_each_(|i| {
                    if bug != Bug::NoEmptyWait {
                        lines.0 = here!();
                        empty.wait(&ps);
                    }
                    lines.1 = here!();
                    buf.store_at(ps.stage() * 32u32 + lane, i * 100u32 + lane);
                    full.arrive(&ps);
                    ps.advance();
                });
            }
            Arm::Else => {
                let mut cs = PipelineState::consumer(2);
                range(Var::konst(0u32), ITERS).for_each_(|i| {
                    full.wait(&cs);
                    out.store_at(i * 32u32 + lane, buf.load_at(cs.stage() * 32u32 + lane));
                    empty.arrive(&cs);
                    cs.advance();
                });
            }
        });
    })
    .unwrap()
}

#[test]
fn a_full_and_empty_pipeline_delivers_every_stage() {
    let mut lines = (0, 0);
    let k = pipeline(Bug::None, &mut lines);
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let (r, got) = run_out(
                &k,
                Launch::linear(1, 64),
                4 * 32 * ITERS as usize,
                opts(seed, schedule),
            );
            assert!(r.is_clean(), "{schedule:?} {seed}: {r}");
            let want: Vec<u32> = (0..ITERS)
                .flat_map(|i| (0..32).map(move |l| i * 100 + l))
                .collect();
            assert_eq!(got, want);
        }
    }
}

#[test]
fn a_producer_starting_at_phase_0_deadlocks_at_its_first_wait() {
    let mut lines = (0, 0);
    let k = pipeline(Bug::ProducerPhase0, &mut lines);
    let (r, _) = run_out(
        &k,
        Launch::linear(1, 64),
        4 * 32 * ITERS as usize,
        Options::default(),
    );
    let d = r
        .of_kind(FindingKind::Deadlock)
        .next()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(d.op, "mbarrier.try_wait.parity", "{r}");
    assert!(
        d.details
            .contains("phase 0 (parity 0), 32 of 32 arrivals pending"),
        "{}",
        d.details
    );
    assert!(
        d.details
            .lines()
            .any(|l| l.contains(&format!(":{}:", lines.0))),
        "the producer's wait line {} is named: {}",
        lines.0,
        d.details
    );
}

#[test]
fn a_producer_that_skips_the_empty_wait_races_the_consumer() {
    let mut lines = (0, 0);
    let k = pipeline(Bug::NoEmptyWait, &mut lines);
    let want: Vec<u32> = (0..ITERS)
        .flat_map(|i| (0..32).map(move |l| i * 100 + l))
        .collect();
    let mut races = 0;
    for seed in 0..4 {
        let (r, got) = run_out(
            &k,
            Launch::linear(1, 64),
            4 * 32 * ITERS as usize,
            opts(seed, Schedule::Random),
        );
        // Where the producer laps the consumer, parity waits cannot tell phases two apart:
        // stages are lost (wrong output) with no race; otherwise its overwrite races a read.
        assert!(!r.is_clean() || got != want, "seed {seed}: {r}");
        let race = r.of_kind(FindingKind::DataRace).next().cloned();
        if let Some(f) = race {
            races += 1;
            let other = f
                .other
                .as_ref()
                .and_then(|o| o.location)
                .map_or(0, |l| l.line);
            assert!([line(&f), other].contains(&lines.1), "{r}");
        }
    }
    assert!(races > 0, "no seed showed the race");
}

#[test]
fn mbarrier_misuse_is_reported() {
    let k = build_kernel("misuse", |k| {
        let bars = Barriers::new(k, "bars", 2, 1);
        let word = k.shared_array::<u64>("word", 1, 8);
        thread_idx_x().eq_(0u32).if_(|_| {
            bars.init();
            // Two arrivals where the phase expects one, then an arrival on a word that holds
            // no barrier.
            mbarrier_arrive(bars.at(0u32));
            emit(crate::ir::op::Mbarrier::Arrive {
                state: None,
                space: crate::ir::StateSpace::Shared,
                scope: crate::ir::Scope::Cta,
                addr: bars.at(1u32).address(),
                count: Some(crate::ir::Operand::Imm(2)),
            });
            mbarrier_arrive(word);
        });
    })
    .unwrap();
    let mut mem = Memory::new();
    let r = run_with(&k, Launch::linear(1, 32), &[], &mut mem, Options::default()).unwrap();
    let details: Vec<&str> = r
        .of_kind(FindingKind::Mbarrier)
        .map(|f| f.details.as_str())
        .collect();
    assert_eq!(details.len(), 2, "{r}");
    assert!(details[0].contains("arrivals past the count"), "{r}");
    assert!(details[1].contains("no initialized mbarrier"), "{r}");
}

/// Block 1 of a cluster writes into block 0's shared memory and arrives on block 0's barrier;
/// block 0 waits on it, then reads. Without the wait, the read races the remote write.
fn remote_handoff(wait: bool) -> Kernel {
    build_kernel("remote", |k| {
        let out = k.param_ptr::<u32>("out");
        let bar = Barriers::new(k, "bar", 1, 32);
        let data = k.shared_array::<u32>("data", 32, 16);
        let (lane, rank) = (lane_id(), cluster_cta_rank());
        rank.eq_(0u32).if_(|_| lane.eq_(0u32).if_(|_| bar.init()));
        cluster_sync();
        rank.eq_(1u32).if_else(|arm| match arm {
            Arm::Then => {
                let remote = mapa_shared(data + lane, 0u32);
                emit(crate::ir::op::Memory::St {
                    space: crate::ir::StateSpace::SharedCluster,
                    ty: crate::ir::Type::U32,
                    srcs: vec![(lane + 7u32).operand()],
                    addr: crate::ir::Address::reg(remote.to_reg(), 0),
                    cache: None,
                    order: None,
                });
                mbarrier_arrive_remote(mapa_shared(bar.at(0u32), 0u32));
            }
            Arm::Else => {
                if wait {
                    bar.wait_at(0u32, 0u32);
                }
                out.store_at(lane, data.load_at(lane));
            }
        });
        // Block 0's memory must outlive block 1's accesses.
        cluster_sync();
    })
    .unwrap()
}

#[test]
fn a_remote_arrive_orders_a_write_into_another_blocks_shared_memory() {
    for wait in [true, false] {
        let k = remote_handoff(wait);
        for seed in 0..4 {
            let launch = Launch::linear(2, 32).with_cluster([2, 1, 1]);
            let (r, got) = run_out(&k, launch, 128, opts(seed, Schedule::Random));
            if wait {
                assert!(r.is_clean(), "{r}");
                assert_eq!(got[..32], (7..39).collect::<Vec<u32>>()[..]);
            } else {
                assert!(
                    r.first_of(&[FindingKind::DataRace, FindingKind::UninitializedShared])
                        .is_some(),
                    "seed {seed}: {r}"
                );
            }
        }
    }
}

/// Warp 0 initializes a barrier and warp 1 arrives on it, with (`sync`) or without a block
/// barrier between.
fn init_then_arrive(sync: bool) -> Kernel {
    build_kernel("init_then_arrive", |k| {
        let bars = Barriers::new(k, "bars", 1, 1);
        let w = thread_idx_x() / 32u32;
        w.eq_(0u32).if_(|_| {
            elect_one().if_(|_| bars.init());
        });
        if sync {
            sync_threads();
        }
        w.eq_(1u32).if_(|_| {
            elect_one().if_(|_| mbarrier_arrive(bars.at(0u32)));
        });
    })
    .unwrap()
}

/// An init that no barrier orders before another warp's arrival is reported on every seed:
/// where the arrival runs first, as an arrival on no mbarrier; where the init runs first, as
/// an arrival the init does not happen before, the init as the other party. With the block
/// barrier between them, no finding.
#[test]
fn an_init_unordered_with_another_warps_arrival_is_reported_in_either_order() {
    for seed in 0..8 {
        for schedule in [Schedule::RoundRobin, Schedule::Random] {
            let opts = Options::seeded(seed, schedule);
            let launch = Launch::linear(1, 64);
            let r = run_with(
                &init_then_arrive(false),
                launch,
                &[],
                &mut Memory::new(),
                opts,
            )
            .unwrap();
            let found: Vec<&Finding> = r.of_kind(FindingKind::Mbarrier).collect();
            assert_eq!(found.len(), 1, "seed {seed}: {r}");
            let f = found[0];
            assert_eq!((f.op, f.warp), ("mbarrier.arrive", 1), "{r}");
            let ordered_init_first = f.details.contains("before its mbarrier.init is ordered");
            if ordered_init_first {
                let other = f.other.as_ref().expect("the init is the other party");
                assert_eq!((other.op, other.warp), ("mbarrier.init", 0), "{r}");
            } else {
                assert!(f.details.contains("no initialized mbarrier"), "{r}");
            }
            let clean = run_with(
                &init_then_arrive(true),
                launch,
                &[],
                &mut Memory::new(),
                opts,
            )
            .unwrap();
            assert!(clean.is_clean(), "seed {seed}: {clean}");
        }
    }
}
