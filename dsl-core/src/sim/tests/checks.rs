//! The checks, each caught in a planted bug (with its kind and Rust line) while the fixed twin
//! stays clean.

use super::*;
use crate::ir::op::Memory as MemOp;
use crate::ir::{Kernel, MemOrder, Operand, Scope, StateSpace, Type};
use crate::kernel::*;
use crate::sim::*;

/// Each thread stores its index to shared memory, then reads its neighbour's (one warp over):
/// with `sync`, a barrier separates the two.
fn neighbour_exchange(sync: bool, lines: &mut (u32, u32)) -> Kernel {
    build_kernel("exchange", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 128, 16);
        let t = thread_idx_x();
        lines.0 = here!();
        s.store_at(t, t * 3u32);
        if sync {
            sync_threads();
        }
        lines.1 = here!();
        let v = s.load_at((t + 32u32) % 128u32);
        out.store_at(t, v);
    })
    .unwrap()
}

#[test]
fn a_missing_barrier_is_a_race_and_the_fixed_twin_is_clean() {
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let mut lines = (0, 0);
            let bad = neighbour_exchange(false, &mut lines);
            let (r, _) = run_out(&bad, Launch::linear(1, 128), 512, opts(seed, schedule));
            let race = r
                .of_kind(FindingKind::DataRace)
                .next()
                .unwrap_or_else(|| panic!("{schedule:?} {seed}: {r}"));
            let other = race.other.as_ref().unwrap();
            // One side is the store, the other the load, in different warps.
            let mut sides = [line(race), other.location.unwrap().line];
            sides.sort();
            assert_eq!(sides, [lines.0, lines.1], "{r}");
            assert_ne!(race.warp, other.warp);

            let good = neighbour_exchange(true, &mut lines);
            let (r, got) = run_out(&good, Launch::linear(1, 128), 512, opts(seed, schedule));
            assert!(r.is_clean(), "{r}");

            let want: Vec<u32> = (0..128).map(|t| ((t + 32) % 128) * 3).collect();
            assert_eq!(got, want);
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let mut lines = (0, 0);
    let bad = neighbour_exchange(false, &mut lines);
    for schedule in SCHEDULES {
        let text = |seed| {
            let mut mem = Memory::new();
            let out = mem.alloc("out", 512);
            run_with(
                &bad,
                Launch::linear(1, 128),
                &[Arg::Buffer(out)],
                &mut mem,
                opts(seed, schedule),
            )
            .unwrap()
            .to_string()
        };
        assert_eq!(text(5), text(5));
    }
}

/// A warp sum with shuffles, then lane 0 of each warp adds into a shared total atomically.
#[test]
fn shuffles_reduce_and_divergent_lanes_rejoin() {
    let k = build_kernel("sums", |k| {
        let x = k.param_ptr::<u32>("x");
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_x();
        let lane = t % 32u32;
        let mut v = x.load_at(t).fresh();
        for d in [16u32, 8, 4, 2, 1] {
            v.set(v + shfl_down(v, d));
        }
        // Divergent paths that rejoin: even lanes double, odd lanes triple their index.
        let mut w = Var::konst(0u32).fresh();
        (lane % 2u32).eq_(0u32).if_else(|arm| match arm {
            Arm::Then => w.set(lane * 2u32),
            Arm::Else => w.set(lane * 3u32),
        });
        // A loop whose trip count differs per lane.
        let mut acc = Var::konst(0u32).fresh();
        range(Var::konst(0u32), lane).for_each_(|i| acc.set(acc + i));
        out.store_at(t, w + acc);
        lane.eq_(0u32).if_(|_| out.store_at(t / 32u32 + 64u32, v));
    })
    .unwrap();
    let x: Vec<u32> = (0..64).map(|i| i * 7 + 1).collect();
    for schedule in SCHEDULES {
        let mut mem = Memory::new();
        let xb = mem.upload("x", &x);
        let out = mem.alloc_zeroed("out", 4 * 66);
        let r = run_with(
            &k,
            Launch::linear(1, 64),
            &[Arg::Buffer(xb), Arg::Buffer(out)],
            &mut mem,
            opts(1, schedule),
        )
        .unwrap();
        assert!(r.is_clean(), "{r}");
        let got = mem.read::<u32>(out);
        for t in 0..64u32 {
            let lane = t % 32;
            let w = if lane % 2 == 0 { lane * 2 } else { lane * 3 };
            let acc: u32 = (0..lane).sum();
            assert_eq!(got[t as usize], w + acc, "thread {t}");
        }
        assert_eq!(got[64], x[..32].iter().sum::<u32>());
        assert_eq!(got[65], x[32..].iter().sum::<u32>());
    }
}

#[test]
fn a_barrier_in_divergent_code_deadlocks_with_its_line() {
    let mut at = 0;
    let k = build_kernel("divergent_barrier", |k| {
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_x();
        (t % 32u32).lt(16u32).if_(|_| {
            at = here!();
            sync_threads();
        });
        out.store_at(t, t);
    })
    .unwrap();
    let (r, _) = run_out(&k, Launch::linear(1, 64), 256, Options::default());
    let d = r.of_kind(FindingKind::Deadlock).next().expect("a deadlock");
    assert_eq!(line(d), at, "{r}");
    assert_eq!(d.op, "bar.sync");
    assert!(d.details.contains("lanes 0xffff0000"), "{}", d.details);
    // The twin without the branch finishes.
    let k = build_kernel("barrier", |k| {
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_x();
        sync_threads();
        out.store_at(t, t);
    })
    .unwrap();
    let (r, got) = run_out(&k, Launch::linear(1, 64), 256, Options::default());
    assert!(r.is_clean(), "{r}");
    assert_eq!(got, (0..64).collect::<Vec<u32>>());
}

/// Warps 0 and 1 produce into shared memory and arrive at barrier 1; warp 2 and 3 consume
/// after `bar.sync 1, count`.
fn named_barrier(count: u32, at: &mut u32) -> Kernel {
    build_kernel("named", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 64, 16);
        let t = thread_idx_x();
        t.lt(64u32).if_else(|arm| match arm {
            Arm::Then => {
                s.store_at(t, t + 100u32);
                bar_arrive(1u32, count);
            }
            Arm::Else => {
                *at = here!();
                bar_sync(1u32, count);
                out.store_at(t - 64u32, s.load_at(t - 64u32));
            }
        });
    })
    .unwrap()
}

#[test]
fn a_named_barrier_with_the_wrong_count_is_caught() {
    let mut at = 0;
    for (count, clean) in [(128, true), (160, false)] {
        let k = named_barrier(count, &mut at);
        for seed in 0..4 {
            let (r, got) = run_out(
                &k,
                Launch::linear(1, 128),
                256,
                opts(seed, Schedule::Random),
            );
            if clean {
                assert!(r.is_clean(), "{r}");
                let want: Vec<u32> = (100..164).collect();
                assert_eq!(got, want);
            } else {
                let f = r
                    .of_kind(FindingKind::BarrierCount)
                    .next()
                    .unwrap_or_else(|| panic!("{r}"));
                assert!(f.details.contains("expects 160 threads"), "{r}");
                assert!(r.of_kind(FindingKind::Deadlock).next().is_some(), "{r}");
            }
        }
    }
    // A count smaller than the arrivals: the third consumer warp waits alone at the end.
    let k = build_kernel("too_small", |_| {
        at = here!();
        bar_sync(1u32, 64u32);
    })
    .unwrap();
    let mut mem = Memory::new();
    let r = run_with(&k, Launch::linear(1, 96), &[], &mut mem, Options::default()).unwrap();
    let f = r
        .of_kind(FindingKind::BarrierCount)
        .next()
        .expect("a count finding");
    assert_eq!(line(f), at, "{r}");
}

/// Two halves of the block exchange values through shared memory, each half waiting at its own
/// copy of the barrier (barrier 1, every thread): `bar.sync` (aligned) or, with `unaligned`,
/// `barrier.sync`. Returns the kernel and the lines of the two waits.
fn two_copies_of_a_wait(unaligned: bool) -> (Kernel, [u32; 2]) {
    let mut lines = [0; 2];
    let k = build_kernel("two_waits", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 128, 16);
        let t = thread_idx_x();
        s.store_at(t, t + 100u32);
        let wait = |line: &mut u32| {
            *line = here!();
            if unaligned {
                barrier_sync_unaligned(1u32, 128u32);
            } else {
                bar_sync(1u32, 128u32);
            }
        };
        t.lt(64u32).if_else(|arm| match arm {
            Arm::Then => {
                wait(&mut lines[0]);
                out.store_at(t, s.load_at(t + 64u32));
            }
            Arm::Else => {
                wait(&mut lines[1]);
                out.store_at(t, s.load_at(t - 64u32));
            }
        });
    })
    .unwrap();
    (k, lines)
}

#[test]
fn an_aligned_wait_reached_through_two_instructions_is_caught() {
    let want: Vec<u32> = (164..228).chain(100..164).collect();
    for seed in 0..4 {
        let (k, lines) = two_copies_of_a_wait(false);
        let (r, got) = run_out(
            &k,
            Launch::linear(1, 128),
            512,
            opts(seed, Schedule::Random),
        );
        let f = r
            .of_kind(FindingKind::BarrierDivergence)
            .next()
            .unwrap_or_else(|| panic!("no divergence finding: {r}"));
        assert!(lines.contains(&line(f)), "{r}");
        assert!(f.details.contains("barrier.sync (unaligned)"), "{r}");
        // The barrier still completes: the values are exchanged all the same.
        assert_eq!(got, want);
        // The unaligned wait is defined wherever warps reach it from.
        let (k, _) = two_copies_of_a_wait(true);
        let (r, got) = run_out(
            &k,
            Launch::linear(1, 128),
            512,
            opts(seed, Schedule::Random),
        );
        assert!(r.is_clean(), "{r}");
        assert_eq!(got, want);
    }
}

/// Copies a chunk through shared memory with `cp.async`; each thread reads back another
/// thread's copy. With `sync`, a barrier follows the wait.
fn async_exchange(sync: bool, lines: &mut (u32, u32)) -> Kernel {
    build_kernel("async_exchange", |k| {
        let src = k.param_ptr::<u32>("src");
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 256, 16);
        let t = thread_idx_x();
        lines.0 = here!();
        cp_async(s + t * 4u32, src + t * 4u32, 16, None);
        cp_async_commit();
        cp_async_wait_group(0);
        if sync {
            sync_threads();
        }
        lines.1 = here!();
        let v = s.load_at((t * 4u32 + 128u32) % 256u32);
        out.store_at(t, v);
    })
    .unwrap()
}

#[test]
fn a_read_of_another_threads_cp_async_needs_a_barrier_after_the_wait() {
    let src: Vec<u32> = (0..256).map(|i| i * 5).collect();
    for schedule in SCHEDULES {
        for seed in 0..4 {
            for sync in [false, true] {
                let mut lines = (0, 0);
                let k = async_exchange(sync, &mut lines);
                let mut mem = Memory::new();
                let s = mem.upload("src", &src);
                let out = mem.alloc("out", 256);
                let r = run_with(
                    &k,
                    Launch::linear(1, 64),
                    &[Arg::Buffer(s), Arg::Buffer(out)],
                    &mut mem,
                    opts(seed, schedule),
                )
                .unwrap();
                if sync {
                    assert!(r.is_clean(), "{r}");
                    let want: Vec<u32> = (0..64u32).map(|t| ((t * 4 + 128) % 256) * 5).collect();
                    assert_eq!(mem.read::<u32>(out), want);
                } else {
                    let race = r
                        .first_of(&[FindingKind::DataRace, FindingKind::UninitializedShared])
                        .unwrap_or_else(|| panic!("{schedule:?} {seed}: {r}"));
                    assert_eq!(line(race), lines.1, "{r}");
                    if race.kind == FindingKind::DataRace {
                        let other = race.other.as_ref().unwrap();
                        assert_eq!(other.op, "cp.async");
                        assert_eq!(other.location.unwrap().line, lines.0);
                    }
                }
            }
        }
    }
}

#[test]
fn bounds_read_only_and_uninitialized_memory() {
    let mut at = (0, 0, 0);
    let k = build_kernel("bad_memory", |k| {
        let x = k.param_ptr::<u32>("x");
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 32, 16);
        let t = thread_idx_x();
        at.0 = here!();
        let past = x.load_at(t + 4u32);
        at.1 = here!();
        x.store_at(t, past);
        at.2 = here!();
        let junk = s.load_at(t);
        out.store_at(t, junk);
    })
    .unwrap();
    let mut mem = Memory::new();
    let x = mem.upload("x", &[1u32; 8]);
    mem.set_read_only(x, true);
    let out = mem.alloc("out", 4 * 8);
    let r = run_with(
        &k,
        Launch::linear(1, 8),
        &[Arg::Buffer(x), Arg::Buffer(out)],
        &mut mem,
        Options::default(),
    )
    .unwrap();
    let oob = r
        .of_kind(FindingKind::OutOfBounds)
        .next()
        .expect("out of bounds");
    assert_eq!((line(oob), oob.lane), (at.0, 4), "{r}");
    assert!(
        oob.details.contains("past the end of buffer `x`"),
        "{}",
        oob.details
    );
    let ro = r
        .of_kind(FindingKind::ReadOnlyWrite)
        .next()
        .expect("read-only");
    assert_eq!(line(ro), at.1);
    let un = r
        .of_kind(FindingKind::UninitializedShared)
        .next()
        .expect("uninit");
    assert_eq!(line(un), at.2);
    // Lanes past the end read zeros.
    assert_eq!(mem.read::<u32>(x), [1, 1, 1, 1, 0, 0, 0, 0]);
}

#[test]
fn an_uninitialized_register_is_reported() {
    let mut k = Kernel::new("uninit");
    let (a, b) = (k.new_reg(Type::U32), k.new_reg(Type::U32));
    k.body.push(crate::ir::Stmt::op(crate::ir::op::Arith::Bin {
        op: crate::ir::op::BinOp::Add,
        ty: Type::U32,
        dst: b,
        a: a.into(),
        b: Operand::Imm(1),
    }));
    let mut mem = Memory::new();
    let r = run_with(&k, Launch::linear(1, 32), &[], &mut mem, Options::default()).unwrap();
    let f = r
        .of_kind(FindingKind::UninitializedRegister)
        .next()
        .expect("uninit");
    assert!(f.details.contains("%0"), "{}", f.details);
    let quiet = Options {
        checks: Checks::NONE,
        ..Options::default()
    };
    assert!(run_with(&k, Launch::linear(1, 32), &[], &mut mem, quiet)
        .unwrap()
        .is_clean());
}

/// A shared-memory flag between warps: warp 0 writes data and releases the flag, warp 1
/// acquires it in a loop, then reads the data. With a relaxed load the read races.
fn flag_handoff(acquire: bool) -> Kernel {
    build_kernel("flag", |kb| {
        let out = kb.param_ptr::<u32>("out");
        let s = kb.shared_array::<u32>("s", 2, 8);
        thread_idx_x().eq_(0u32).if_(|_| s.store_at(0u32, 0u32));
        sync_threads();
        let warp = thread_idx_x() / 32u32;
        warp.eq_(0u32).if_else(|arm| match arm {
            Arm::Then => {
                s.store_at(1u32, 42u32);
                let one = Var::konst(1u32).fresh();
                emit(MemOp::St {
                    space: StateSpace::Shared,
                    ty: Type::U32,
                    srcs: vec![one.operand()],
                    addr: s.address(),
                    cache: None,
                    order: Some(MemOrder::Release(Scope::Cta)),
                });
            }
            Arm::Else => {
                let order = if acquire {
                    MemOrder::Acquire(Scope::Cta)
                } else {
                    MemOrder::Relaxed(Scope::Cta)
                };
                spin_while_zero(s, order);
                out.store_at(thread_idx_x() - 32u32, s.load_at(1u32));
            }
        });
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn release_and_acquire_order_a_flag_handoff() {
    for (acquire, clean) in [(true, true), (false, false)] {
        for schedule in SCHEDULES {
            for seed in 0..4 {
                let k = flag_handoff(acquire);
                let (r, got) = run_out(&k, Launch::linear(1, 64), 128, opts(seed, schedule));
                assert_eq!(r.is_clean(), clean, "{acquire} {schedule:?} {seed}: {r}");
                assert_eq!(got, [42; 32]);
            }
        }
    }
}

#[test]
fn a_flag_nobody_raises_is_a_deadlock() {
    let k = build_kernel("spin", |k| {
        let flag = k.param_ptr::<u32>("flag");
        while_(|| flag.load_acquire(Scope::Gpu).eq_(0u32), || {});
    })
    .unwrap();
    // Unraised, the warps poll forever: a deadlock; raised, the kernel ends.
    for raised in [0u32, 1] {
        let mut mem = Memory::new();
        let flag = mem.upload("flag", &[raised]);
        let launch = Launch::linear(2, 32);
        let r = run_with(
            &k,
            launch,
            &[Arg::Buffer(flag)],
            &mut mem,
            Options::default(),
        )
        .unwrap();
        let polls = r
            .of_kind(FindingKind::Deadlock)
            .any(|d| d.details.contains("polls"));
        assert_eq!((polls, r.is_clean()), (raised == 0, raised == 1), "{r}");
    }
}

#[test]
fn a_weak_spin_loop_ends_as_a_deadlock_after_the_stall_length() {
    let k = build_kernel("weak_spin", |k| {
        let flag = k.param_ptr::<u32>("flag");
        while_(|| flag.load().eq_(0u32), || {});
    })
    .unwrap();
    let mut mem = Memory::new();
    let flag = mem.upload("flag", &[0u32]);
    let quick = Limits {
        stall_steps: 10_000,
        ..Limits::default()
    };
    let r = sim(&k)
        .with_limits(quick)
        .run(
            &Launch::linear(2, 32),
            &[Arg::Buffer(flag)],
            &mut mem,
            &Options::default(),
        )
        .unwrap();
    let d = r.of_kind(FindingKind::Deadlock).next().expect("a stall");
    assert!(d.details.contains("change nothing"), "{}", d.details);
    assert!(r.stats.warp_instructions < 100_000);
}

#[test]
fn grids_run_in_waves_and_arguments_are_checked() {
    let k = build_kernel("ids", |k| {
        let out = k.param_ptr::<u32>("out");
        let n = k.param::<u32>("n");
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        i.lt(n)
            .if_(|_| out.store_at(i, block_idx_x() * 1000u32 + thread_idx_x()));
    })
    .unwrap();
    let s = sim(&k);
    let mut mem = Memory::new();
    let out = mem.alloc("out", 4 * 300);
    let r = s
        .run(
            &Launch::linear(10, 32).with_sms(3),
            &[Arg::Buffer(out), Arg::u32(300)],
            &mut mem,
            &Options::default(),
        )
        .unwrap();
    assert!(r.is_clean(), "{r}");
    assert_eq!(r.stats.blocks, 10);
    let got = mem.read::<u32>(out);
    assert_eq!(got[299], 9000 + 11);
    let wrong = [
        (Launch::linear(1, 32), vec![Arg::Buffer(out)]),
        (
            Launch::linear(1, 32),
            vec![Arg::Buffer(out), Arg::f32(1.0f32)],
        ),
        (Launch::linear(1, 2048), vec![Arg::Buffer(out), Arg::u32(1)]),
        (
            Launch::linear(3, 32).with_cluster([2, 1, 1]),
            vec![Arg::Buffer(out), Arg::u32(1)],
        ),
    ];
    for (launch, args) in wrong {
        match s.run(&launch, &args, &mut mem, &Options::default()) {
            Err(SimError::BadArgument { .. } | SimError::BadLaunch(_)) => {}
            other => panic!("{launch:?} {args:?}: {other:?}"),
        }
    }
}

#[test]
fn unmodelled_ops_are_errors_with_their_location() {
    use crate::ir::op::{Tcgen05, TmemShape};
    let mut k = Kernel::new("ld16");
    let r = k.new_reg(crate::ir::Type::B32);
    k.body.push(crate::ir::Stmt::Op(crate::ir::Instr {
        op: Tcgen05::Ld {
            shape: TmemShape::S16x64b,
            num: 1,
            pack16: false,
            dsts: vec![r],
            taddr: crate::ir::Operand::Imm(0),
        }
        .into(),
        guard: None,
        loc: Some(crate::ir::Location::new("k.rs", 7, 3)),
    }));
    let s = sim(&k);
    assert_eq!(s.unsupported().len(), 1);
    let mut mem = Memory::new();
    let e = s
        .run(&Launch::linear(1, 32), &[], &mut mem, &Options::default())
        .unwrap_err();
    assert_eq!(
        e,
        SimError::Unsupported {
            op: "tcgen05.ld (shape .16x64b)".into(),
            location: Some(crate::ir::Location::new("k.rs", 7, 3)),
        }
    );
    assert!(e.to_string().contains("k.rs:7:3"));
}
