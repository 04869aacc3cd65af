//! The op families' values against a host reference: special registers, warp collectives,
//! atomics, 16-bit vectors and conversions, clusters and distributed shared memory, fences,
//! generic addresses, `setmaxnreg`'s checks.

use super::*;
use crate::ir::op::{
    AddressOp, AtomOp, Atomic, Convert, Data, Fence, FenceSem, Memory as MemOp, ReduxOp, Warp,
};
use crate::ir::{Address, Dim, MemOrder, Operand, Scope, SpecialReg, StateSpace, Type};
use crate::kernel::*;
use crate::sim::*;

fn run(k: &Kernel, launch: Launch, args: &[Arg], mem: &mut Memory) -> Report {
    run_with(k, launch, args, mem, Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// A u32 from an IR op writing a fresh register.
fn emit_u32(f: impl FnOnce(crate::ir::Reg) -> crate::ir::Op) -> Var<u32> {
    let v = Var::<u32>::uninit();
    emit(f(v.to_reg()));
    v
}

#[test]
fn special_registers_in_two_dimensional_blocks_and_clusters() {
    let k = build_kernel("ids", |k| {
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_y() * block_dim_x() + thread_idx_x();
        let cta = block_idx_y() * grid_dim_x() + block_idx_x();
        let i = (cta * block_dim_x() * block_dim_y() + t) * 4u32;
        out.store_at(i, lane_id());
        out.store_at(i + 1u32, cluster_cta_rank());
        out.store_at(i + 2u32, cluster_idx_x() * 100u32 + cluster_num_ctas());
        let sreg = emit_u32(|dst| {
            Data::ReadSpecial {
                dst,
                sreg: SpecialReg::Tid(Dim::Z),
            }
            .into()
        });
        out.store_at(i + 3u32, sreg);
    })
    .unwrap();
    let (bx, by, gx, gy) = (8u32, 6u32, 4u32, 2u32);
    let mut mem = Memory::new();
    let out = mem.alloc("out", (4 * 4 * bx * by * gx * gy) as usize);
    let launch = Launch::new([gx, gy, 1], [bx, by, 1]).with_cluster([2, 1, 1]);
    let r = run(&k, launch, &[Arg::Buffer(out)], &mut mem);
    assert!(r.is_clean(), "{r}");
    let got = mem.read::<u32>(out);
    for cy in 0..gy {
        for cx in 0..gx {
            for ty in 0..by {
                for tx in 0..bx {
                    let t = ty * bx + tx;
                    let i = (((cy * gx + cx) * bx * by + t) * 4) as usize;
                    assert_eq!(got[i], t % 32);
                    assert_eq!(got[i + 1], cx % 2);
                    assert_eq!(got[i + 2], (cx / 2) * 100 + 2);
                    assert_eq!(got[i + 3], 0);
                }
            }
        }
    }
}

#[test]
fn votes_ballots_reductions_and_elections() {
    let k = build_kernel("collectives", |k| {
        let out = k.param_ptr::<u32>("out");
        let lane = lane_id();
        let odd = (lane % 2u32).eq_(1u32);
        out.store_at(0u32, warp_ballot(odd));
        out.store_at(1u32, select(warp_any(lane.eq_(31u32)), 1u32, 0u32));
        out.store_at(2u32, select(warp_all(lane.lt(31u32)), 1u32, 0u32));
        let sum = emit_u32(|dst| {
            Warp::Redux {
                op: ReduxOp::Add,
                ty: Type::U32,
                dst,
                src: lane.operand(),
                membermask: Operand::Imm(0xffff_ffff),
            }
            .into()
        });
        out.store_at(3u32, sum);
        let max = emit_u32(|dst| {
            Warp::Redux {
                op: ReduxOp::Max,
                ty: Type::S32,
                dst,
                src: (lane * 7u32 % 13u32).operand(),
                membermask: Operand::Imm(0xffff_ffff),
            }
            .into()
        });
        out.store_at(4u32, max);
        elect_one().if_(|_| out.store_at(5u32, lane));
        let active = emit_u32(|dst| Warp::Activemask { dst }.into());
        lane.lt(8u32).if_(|_| {
            let inner = emit_u32(|dst| Warp::Activemask { dst }.into());
            out.store_at(6u32, inner);
        });
        out.store_at(7u32, active);
    })
    .unwrap();
    let mut leaders = Vec::new();
    for (seed, schedule) in [
        (0, Schedule::RoundRobin),
        (1, Schedule::Random),
        (2, Schedule::Random),
    ] {
        let (r, got) = run_out(&k, Launch::linear(1, 32), 32, opts(seed, schedule));
        assert!(r.is_clean(), "{r}");

        assert_eq!(&got[..5], &[0xaaaa_aaaa, 1, 0, 496, 12]);
        assert_eq!(got[6], 0xff);
        assert_eq!(got[7], u32::MAX);
        leaders.push(got[5]);
    }
    // Round-robin elects the lowest lane; random schedules a lane fixed by the seed.
    assert_eq!(leaders[0], 0);
    assert!(leaders.iter().all(|&l| l < 32));
}

#[test]
fn atomics_count_and_exchange() {
    let k = build_kernel("atomics", |k| {
        let counter = k.param_ptr::<u32>("counter");
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 1, 4);
        let t = thread_idx_x();
        t.eq_(0u32).if_(|_| s.store_at(0u32, 0u32));
        sync_threads();
        let mine = atomic_add_global(counter, 1u32);
        atomic_add_shared(s, t);
        sync_threads();
        out.store_at(t, mine);
        t.eq_(0u32).if_(|_| {
            out.store_at(64u32, s.load_at(0u32));
            // cas succeeds once: the counter holds 64.
            let old = emit_u32(|dst| {
                Atomic::Atom {
                    space: StateSpace::Global,
                    op: AtomOp::Cas,
                    ty: Type::B32,
                    dst,
                    addr: counter.address(),
                    a: Operand::Imm(64),
                    b: Some(Operand::Imm(7)),
                    order: Some(MemOrder::AcqRel(Scope::Gpu)),
                }
                .into()
            });
            out.store_at(65u32, old);
        });
    })
    .unwrap();
    let mut mem = Memory::new();
    let counter = mem.alloc_zeroed("counter", 4);
    let out = mem.alloc("out", 4 * 66);
    let r = run(
        &k,
        Launch::linear(1, 64),
        &[Arg::Buffer(counter), Arg::Buffer(out)],
        &mut mem,
    );
    assert!(r.is_clean(), "{r}");
    let got = mem.read::<u32>(out);
    let mut firsts: Vec<u32> = got[..64].to_vec();
    firsts.sort();
    assert_eq!(firsts, (0..64).collect::<Vec<_>>());
    assert_eq!(got[64], (0..64).sum::<u32>());
    assert_eq!(got[65], 64);
    assert_eq!(mem.read::<u32>(counter), [7]);
}

#[test]
fn half_pairs_and_conversions() {
    let k = build_kernel("halves", |k| {
        let x = k.param_ptr::<f32>("x");
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_x();
        let (a, b) = (x.load_at(t * 2u32), x.load_at(t * 2u32 + 1u32));
        let p = pack_f16x2(a, b);
        let q = p + p;
        let bits = |v: Operand| {
            emit_u32(|dst| {
                Data::Mov {
                    ty: Type::B32,
                    dst,
                    src: v,
                }
                .into()
            })
        };
        out.store_at(t * 3u32, bits(q.operand()));
        let h = emit_u32(|dst| {
            Convert::Cvt {
                dst_ty: Type::S32,
                src_ty: Type::F32,
                rnd: Some(crate::ir::op::CvtRound::Rni),
                sat: false,
                dst,
                src: a.operand(),
            }
            .into()
        });
        out.store_at(t * 3u32 + 1u32, h);
        out.store_at(t * 3u32 + 2u32, bits(pack_bf16x2(a, b).operand()));
    })
    .unwrap();
    let xs = [1.5f32, -2.25, 2.5, 65504.0, -0.0, 1e-8];
    let mut mem = Memory::new();
    let x = mem.upload("x", &xs);
    let out = mem.alloc("out", 4 * 9);
    let r = run(
        &k,
        Launch::linear(1, 3),
        &[Arg::Buffer(x), Arg::Buffer(out)],
        &mut mem,
    );
    assert!(r.is_clean(), "{r}");
    let got = mem.read::<u32>(out);
    let h = |v: f32| u32::from(half::f16::from_f32(v).to_bits());
    let bf = |v: f32| u32::from(half::bf16::from_f32(v).to_bits());
    for t in 0..3 {
        let (a, b) = (xs[2 * t], xs[2 * t + 1]);
        assert_eq!(got[3 * t], h(a + a) | (h(b + b) << 16), "thread {t}");
        assert_eq!(got[3 * t + 1] as i32, a.round_ties_even() as i32);
        assert_eq!(got[3 * t + 2], bf(a) | (bf(b) << 16));
    }
}

/// Block `r` of a cluster of two writes its rank to its shared memory; after the cluster
/// barrier each block reads the other's through `mapa`. Without the barrier, the read races.
fn exchange_across_the_cluster(sync: bool) -> Kernel {
    exchange(sync, sync)
}

/// The exchange, with the barrier before the reads (`before`) and the one after them that
/// keeps each block's memory alive while the other reads it (`after`).
fn exchange(before: bool, after: bool) -> Kernel {
    build_kernel("dsmem", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 32, 16);
        let (t, rank) = (thread_idx_x(), cluster_cta_rank());
        s.store_at(t, rank * 1000u32 + t);
        if before {
            cluster_sync();
        }
        let remote = mapa_shared(s + t, 1u32 - rank);
        let v = Var::<u32>::uninit();
        emit(MemOp::Ld {
            space: StateSpace::SharedCluster,
            ty: Type::U32,
            dsts: vec![v.to_reg()],
            addr: Address::reg(remote.to_reg(), 0),
            cache: None,
            nc: false,
            order: None,
        });
        out.store_at(block_idx_x() * 32u32 + t, v);
        if after {
            // The other block may not exit while its memory is read.
            cluster_sync();
        }
    })
    .unwrap()
}

/// Runs the exchange on a cluster of two blocks of one warp: the report, the memory and its
/// output buffer (64 words).
fn run_pair(k: &Kernel, opts: Options) -> (Report, Memory, BufferId) {
    let mut mem = Memory::new();
    let out = mem.alloc("out", 4 * 64);
    let launch = Launch::linear(2, 32).with_cluster([2, 1, 1]);
    let r = run_with(k, launch, &[Arg::Buffer(out)], &mut mem, opts).unwrap();
    (r, mem, out)
}

#[test]
fn distributed_shared_memory_across_a_cluster() {
    for sync in [true, false] {
        let k = exchange_across_the_cluster(sync);
        for seed in 0..4 {
            let (r, mem, out) = run_pair(&k, opts(seed, Schedule::Random));
            if sync {
                assert!(r.is_clean(), "{r}");
                let want: Vec<u32> = (0..64).map(|i| (1 - i / 32) * 1000 + i % 32).collect();
                assert_eq!(mem.read::<u32>(out), want);
            } else {
                assert!(
                    r.findings.iter().any(|f| matches!(
                        f.kind,
                        FindingKind::DataRace | FindingKind::UninitializedShared
                    )),
                    "{r}"
                );
            }
        }
    }
}

/// Without the barrier after the reads, a block may exit while the other still reads its
/// shared memory: the PTX ISA leaves that access undefined. Whichever block the schedule lets
/// exit first, the access is found (after the exit at once, before it at the exit), at the
/// remote load; with the barrier, nothing is.
#[test]
fn a_block_that_exits_while_its_peer_reads_its_memory_is_caught() {
    for (after, seeds) in [(false, 0..6), (true, 0..3)] {
        let k = exchange(true, after);
        for seed in seeds {
            for schedule in SCHEDULES {
                let (r, _, _) = run_pair(&k, opts(seed, schedule));
                if after {
                    assert!(r.is_clean(), "{r}");
                    continue;
                }
                let f = r
                    .first_of(&[FindingKind::PeerExited])
                    .unwrap_or_else(|| panic!("{schedule:?} {seed}: {r}"));
                assert_eq!(f.op, "ld", "{r}");
                assert!(f.details.contains("exit"), "{r}");
            }
        }
    }
}

#[test]
fn a_release_fence_before_a_relaxed_store_orders_a_handoff() {
    let k = build_kernel("fenced", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 2, 8);
        thread_idx_x().eq_(0u32).if_(|_| s.store_at(0u32, 0u32));
        sync_threads();
        let warp = thread_idx_x() / 32u32;
        let relaxed = MemOrder::Relaxed(Scope::Cta);
        let fence = || {
            emit(Fence::Fence {
                sem: FenceSem::AcqRel,
                scope: Scope::Cta,
            })
        };
        warp.eq_(0u32).if_else(|arm| match arm {
            Arm::Then => {
                s.store_at(1u32, 9u32);
                fence();
                emit(MemOp::St {
                    space: StateSpace::Shared,
                    ty: Type::U32,
                    srcs: vec![Operand::Imm(1)],
                    addr: s.address(),
                    cache: None,
                    order: Some(relaxed),
                });
            }
            Arm::Else => {
                spin_while_zero(s, relaxed);
                fence();
                out.store_at(lane_id(), s.load_at(1u32));
            }
        });
    })
    .unwrap();
    for schedule in SCHEDULES {
        let (r, got) = run_out(&k, Launch::linear(1, 64), 128, opts(3, schedule));
        assert!(r.is_clean(), "{schedule:?}: {r}");
        assert_eq!(got, [9; 32]);
    }
}

#[test]
fn generic_addresses_reach_shared_and_global_memory() {
    let k = build_kernel("generic", |k| {
        let out = k.param_ptr::<u32>("out");
        let s = k.shared_array::<u32>("s", 32, 16);
        let t = thread_idx_x();
        s.store_at(t, t + 5u32);
        sync_threads();
        let shared = (s + t).addr();
        let generic = Var::<u64>::uninit();
        emit(AddressOp::Cvta {
            to_generic: true,
            space: StateSpace::Shared,
            dst: generic.to_reg(),
            src: shared.operand(),
        });
        let v = Var::<u32>::uninit();
        emit(MemOp::Ld {
            space: StateSpace::Generic,
            ty: Type::U32,
            dsts: vec![v.to_reg()],
            addr: Address::reg(generic.to_reg(), 0),
            cache: None,
            nc: false,
            order: None,
        });
        out.store_at(t, v);
    })
    .unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc("out", 128);
    let r = run(&k, Launch::linear(1, 32), &[Arg::Buffer(out)], &mut mem);
    assert!(r.is_clean(), "{r}");
    assert_eq!(mem.read::<u32>(out), (5..37).collect::<Vec<_>>());
}

#[test]
fn setmaxnreg_is_checked_per_warp_and_warpgroup() {
    let mut at = 0;
    let k = build_kernel("regs", |_| {
        let wg = thread_idx_x() / 128u32;
        wg.eq_(0u32).if_else(|arm| match arm {
            Arm::Then => setmaxnreg_dec(40),
            Arm::Else => {
                setmaxnreg_inc(232);
                at = here!();
                setmaxnreg_inc(200);
            }
        });
    })
    .unwrap();
    let mut mem = Memory::new();
    let r = run(&k, Launch::linear(1, 256), &[], &mut mem);
    let f = r
        .of_kind(FindingKind::WarpSync)
        .next()
        .expect("a lowering inc");
    assert_eq!(line(f), at, "{r}");
    assert!(f.details.contains("does not raise"), "{}", f.details);
    // Warps 0-3 run one setmaxnreg; if warp 1 ran none, warpgroup 0 would disagree.
    let k = build_kernel("uneven", |_| {
        (thread_idx_x() / 32u32)
            .ne_(1u32)
            .if_(|_| setmaxnreg_dec(40));
    })
    .unwrap();
    let r = run(&k, Launch::linear(1, 128), &[], &mut mem);
    assert!(r.of_kind(FindingKind::WarpSync).next().is_some(), "{r}");
    let k = build_kernel("even", |_| setmaxnreg_dec(40)).unwrap();
    assert!(run(&k, Launch::linear(1, 128), &[], &mut mem).is_clean());
}

/// `setmaxnreg.inc` takes registers the block's warps released: a block of 384 threads holds
/// 168 each at entry, so the producer's 40 lets two consumer warpgroups rise to 232 (64512 in
/// all), 64 lets them rise to 216 but not 224 (65536: they wait forever), and no release at all
/// leaves them waiting too, which the deadlock names.
#[test]
fn setmaxnreg_inc_waits_for_registers_the_block_released() {
    let budgets = |producer: Option<u32>, consumers: u32| {
        build_kernel("pool", move |_| {
            let wg = thread_idx_x() / 128u32;
            wg.eq_(0u32).if_else(|arm| match arm {
                Arm::Then => {
                    if let Some(p) = producer {
                        setmaxnreg_dec(p);
                    }
                }
                Arm::Else => setmaxnreg_inc(consumers),
            });
        })
        .unwrap()
    };
    let mut mem = Memory::new();
    for (producer, consumers) in [(Some(40), 232), (Some(64), 216), (Some(32), 232)] {
        let r = run(
            &budgets(producer, consumers),
            Launch::linear(1, 384),
            &[],
            &mut mem,
        );
        assert!(r.is_clean(), "{producer:?} {consumers}: {r}");
    }
    for (producer, consumers) in [(Some(64), 224), (None, 232)] {
        let r = run(
            &budgets(producer, consumers),
            Launch::linear(1, 384),
            &[],
            &mut mem,
        );
        let d = r
            .of_kind(FindingKind::Deadlock)
            .next()
            .unwrap_or_else(|| panic!("{producer:?} {consumers}: no deadlock: {r}"));
        assert!(
            d.details.contains(&format!("setmaxnreg.inc {consumers}"))
                && d.details.contains("of the 64512"),
            "{}",
            d.details
        );
    }
}

#[test]
fn local_memory_is_private_to_each_thread() {
    let k = build_kernel("local", |k| {
        let out = k.param_ptr::<u32>("out");
        let t = thread_idx_x();
        let local = |offset: i64| Address::reg(Var::<u32>::konst(0).to_reg(), offset);
        emit(MemOp::St {
            space: StateSpace::Local,
            ty: Type::U32,
            srcs: vec![(t * 3u32).operand()],
            addr: local(8),
            cache: None,
            order: None,
        });
        // The same local address through the generic window.
        let generic = Var::<u64>::uninit();
        emit(AddressOp::Cvta {
            to_generic: true,
            space: StateSpace::Local,
            dst: generic.to_reg(),
            src: Operand::Imm(8),
        });
        let (v, junk) = (Var::<u32>::uninit(), Var::<u32>::uninit());
        emit(MemOp::Ld {
            space: StateSpace::Generic,
            ty: Type::U32,
            dsts: vec![v.to_reg()],
            addr: Address::reg(generic.to_reg(), 0),
            cache: None,
            nc: false,
            order: None,
        });
        emit(MemOp::Ld {
            space: StateSpace::Local,
            ty: Type::U32,
            dsts: vec![junk.to_reg()],
            addr: local(64),
            cache: None,
            nc: false,
            order: None,
        });
        out.store_at(t, v);
        out.store_at(t + 40u32, junk);
    })
    .unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc("out", 4 * 80);
    let r = run(&k, Launch::linear(1, 40), &[Arg::Buffer(out)], &mut mem);
    let got = mem.read::<u32>(out);
    assert_eq!(got[..40], (0..40).map(|t| t * 3).collect::<Vec<_>>()[..]);
    let f = r
        .of_kind(FindingKind::UninitializedLocal)
        .next()
        .expect("uninit local");
    assert!(f.details.contains("0x40"), "{}", f.details);
    assert_eq!(r.findings.len(), 1, "{r}");
}

/// The accurate f32 math functions, built from IEEE operations only (`fma.rn`, `div.rn`,
/// `sqrt.rn`, `rcp.rn`, integer and bit operations), give in the simulator the bits the
/// builder's host fold gives for the same constant: two independent evaluations of one
/// sequence, the simulator's from the PTX ISA's rules.
#[test]
fn accurate_math_is_the_host_fold_bit_for_bit() {
    type F = fn(Var<f32>) -> Var<f32>;
    let functions: [(&str, F); 11] = [
        ("exp", |x| x.exp()),
        ("exp2", |x| x.exp2()),
        ("ln", |x| x.ln()),
        ("log2", |x| x.log2()),
        ("tanh", |x| x.tanh()),
        ("erf", |x| x.erf()),
        ("sin", |x| x.sin()),
        ("cos", |x| x.cos()),
        ("sqrt", |x| x.sqrt()),
        ("rsqrt", |x| x.rsqrt()),
        ("recip", |x| x.recip()),
    ];
    // Spread over magnitudes and signs, with the special values and a few large arguments of
    // sin and cos (past the first reduction's range).
    let mut inputs: Vec<f32> = (0..224)
        .map(|i| {
            let t = i as f32 / 224.0;
            let mag = (2f32).powf(-30.0 + 60.0 * t);
            if i % 2 == 0 {
                mag
            } else {
                -mag * 0.7
            }
        })
        .collect();
    inputs.extend([
        0.0,
        -0.0,
        1.0,
        0.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
    ]);
    inputs.extend([3.0e5, -7.5e8, 1.0e20, 88.7, -87.3]);
    let n = inputs.len();
    for (name, f) in functions {
        let k = build_kernel(name, |k| {
            let x = k.param_ptr::<f32>("x");
            let y = k.param_ptr::<f32>("y");
            let i = block_idx_x() * block_dim_x() + thread_idx_x();
            let n_var = Var::<u32>::konst(n as u32);
            i.lt(n_var).if_(|_| y.store_at(i, f(x.load_at(i))));
        })
        .unwrap();
        let mut mem = Memory::new();
        let xb = mem.alloc("x", 4 * n);
        mem.write(xb, 0, &inputs);
        let yb = mem.alloc("y", 4 * n);
        let blocks = n.div_ceil(64) as u32;
        let r = run(
            &k,
            Launch::new([blocks, 1, 1], [64, 1, 1]),
            &[Arg::Buffer(xb), Arg::Buffer(yb)],
            &mut mem,
        );
        assert!(r.is_clean(), "{name}: {r}");
        let got = mem.read::<f32>(yb);
        let mut wrong = Vec::new();
        build_kernel("fold", |_| {
            for (i, &v) in inputs.iter().enumerate() {
                let host = f(Var::konst(v)).as_const().expect("a constant folds");
                if host.to_bits() != got[i].to_bits() && !(host.is_nan() && got[i].is_nan()) {
                    wrong.push((v, host, got[i]));
                }
            }
        })
        .unwrap();
        assert!(
            wrong.is_empty(),
            "{name}: (input, host, simulator) {wrong:?}"
        );
    }
}
