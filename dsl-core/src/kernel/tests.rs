//! The builder's IR shapes: host control flow emits nothing of its own, device control flow emits
//! structured statements, constants fold, errors are typed. Plus five small kernels written with
//! the builder by hand.

use super::*;
use crate::ir::op::{Arith, BinOp, Bulk, CpAsync, Data, Memory, Op};
use crate::ir::{for_each_instr, Instr, Kernel, Scope, StateSpace, Stmt, Target};

fn ops(k: &Kernel) -> Vec<Op> {
    let mut v = Vec::new();
    for_each_instr(&k.body, &mut |i: &Instr| v.push(i.op.clone()));
    v
}

fn count(k: &Kernel, f: impl Fn(&Op) -> bool) -> usize {
    ops(k).iter().filter(|o| f(o)).count()
}

fn is_store(o: &Op) -> bool {
    matches!(o, Op::Memory(Memory::St { .. }))
}

fn shapes(stmts: &[Stmt]) -> Vec<&'static str> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::For { .. } => Some("for"),
            Stmt::If { .. } => Some("if"),
            Stmt::While { .. } => Some("while"),
            _ => None,
        })
        .collect()
}

#[test]
fn host_if_emits_only_the_taken_arm() {
    let k = build_kernel("host_if", |k| {
        let out = k.param_ptr::<u32>("out");
        let mut arms = Vec::new();
        true.if_else(|arm| {
            arms.push(arm);
            match arm {
                Arm::Then => out.store(1u32),
                Arm::Else => out.store(2u32),
            }
        });
        false.if_(|_| out.store(3u32));
        assert_eq!(arms, vec![Arm::Then]);
    })
    .unwrap();
    assert!(shapes(&k.body).is_empty());
    assert_eq!(count(&k, is_store), 1);
}

#[test]
fn device_if_emits_one_if_with_both_arms() {
    let k = build_kernel("dev_if", |k| {
        let out = k.param_ptr::<u32>("out");
        let mut arms = Vec::new();
        thread_idx_x().lt(16u32).if_else(|arm| {
            arms.push(arm);
            match arm {
                Arm::Then => out.store(1u32),
                Arm::Else => out.store(2u32),
            }
        });
        assert_eq!(arms, vec![Arm::Then, Arm::Else]);
    })
    .unwrap();
    assert_eq!(shapes(&k.body), vec!["if"]);
    let Some(Stmt::If { then, else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. }))
    else {
        unreachable!()
    };
    assert_eq!(then.len(), 1);
    assert_eq!(else_.len(), 1);
}

#[test]
fn constant_predicates_decide_on_the_host() {
    let k = build_kernel("const_if", |k| {
        let out = k.param_ptr::<u32>("out");
        Var::konst(3u32).lt(4u32).if_else(|arm| match arm {
            Arm::Then => out.store(1u32),
            Arm::Else => out.store(2u32),
        });
    })
    .unwrap();
    assert!(shapes(&k.body).is_empty());
    assert_eq!(count(&k, is_store), 1);
}

#[test]
fn host_range_unrolls_and_device_range_loops() {
    let k = build_kernel("ranges", |k| {
        let out = k.param_ptr::<i32>("out");
        let n = k.param::<i32>("n");
        let mut bodies = 0;
        range(0, 4).for_each_(|i: i32| {
            bodies += 1;
            out.store_at(i, i);
        });
        range(1, 8)
            .step_by(3)
            .for_each_(|i: i32| out.store_at(i, i));
        assert_eq!(bodies, 4);
        let mut dev_bodies = 0;
        range(0, n).for_each_(|i: Var<i32>| {
            dev_bodies += 1;
            out.store_at(i, i);
        });
        assert_eq!(dev_bodies, 1);
    })
    .unwrap();
    assert_eq!(shapes(&k.body), vec!["for"]);
    // 4 unrolled, 3 stepped (1, 4, 7), 1 in the loop body.
    assert_eq!(count(&k, is_store), 8);
}

#[test]
fn constants_fold_without_instructions() {
    let k = build_kernel("fold", |k| {
        let out = k.param_ptr::<i32>("out");
        let a = Var::konst(6i32);
        let b = a * 7 + 1 - (Var::konst(2i32) << Var::konst(3i32).cast::<u32>());
        assert_eq!(b.as_const(), Some(27));
        let f = Var::konst(1.0f32) / 3.0;
        assert_eq!(f.as_const(), Some(1.0f32 / 3.0));
        assert_eq!(
            Var::konst(-7i32).cast::<u32>().as_const(),
            Some(-7i32 as u32)
        );
        assert_eq!((1 + Var::konst(2i64)).as_const(), Some(3));
        out.store(b);
    })
    .unwrap();
    let arith = count(&k, |o| matches!(o, Op::Arith(_) | Op::Convert(_)));
    assert_eq!(arith, 0, "{:?}", ops(&k));
}

#[test]
fn device_operators_emit_typed_instructions() {
    let k = build_kernel("arith", |k| {
        let out = k.param_ptr::<i32>("out");
        let t = thread_idx_x().cast::<i32>();
        let x = (t + 1) * t - 3;
        let y = (1 - x) / 2 % 5;
        let z = (y << 2u32) >> 1u32;
        let w = -(z & 0xff) | !z ^ 1;
        out.store(w.max(0).min(100));
    })
    .unwrap();
    let bin: Vec<BinOp> = ops(&k)
        .into_iter()
        .filter_map(|o| match o {
            Op::Arith(Arith::Bin { op, .. }) => Some(op),
            _ => None,
        })
        .collect();
    use BinOp::*;
    // `^` binds tighter than `|`, so the xor comes before the or. The store at index 0 adds a
    // folded zero offset: no extra add.
    assert_eq!(
        bin,
        vec![Add, Mul, Sub, Sub, Div, Rem, Shl, Shr, And, Xor, Or, Max, Min]
    );
}

#[test]
fn assignment_writes_the_register_and_fresh_copies() {
    let k = build_kernel("assign", |k| {
        let out = k.param_ptr::<u32>("out");
        let mut x = thread_idx_x().fresh();
        let y = x.fresh();
        x += 5;
        x.assign_(Var::konst(9u32));
        assert_ne!(x.reg(), y.reg());
        out.store(y);
        let mut h = 3usize;
        h.assign_(4);
        assert_eq!(h, 4);
    })
    .unwrap();
    let movs = count(&k, |o| matches!(o, Op::Data(Data::Mov { .. })));
    // fresh, fresh, += (mov back), assign_.
    assert_eq!(movs, 4);
}

#[test]
fn assigning_a_constant_inside_device_flow_is_an_error() {
    let ok = build_kernel("top", |_| {
        let mut c = Var::konst(1u32);
        c += 1;
        assert_eq!(c.as_const(), Some(2));
    });
    assert!(ok.is_ok());
    let err = build_kernel("inside", |_| {
        let mut c = Var::konst(1u32);
        thread_idx_x().eq_(0u32).if_(|_| c.set(2u32));
    })
    .unwrap_err();
    assert!(matches!(err, BuildError::AssignToConstant { .. }), "{err}");
}

#[test]
fn if_value_merges_device_arms_into_one_register() {
    let k = build_kernel("ifv", |k| {
        let out = k.param_ptr::<f32>("out");
        let t = thread_idx_x();
        let (a, b) = if_value(t.lt(8u32), |arm| match arm {
            Arm::Then => (Var::konst(1.0f32), t),
            Arm::Else => (Var::konst(2.0f32), t + 1),
        });
        out.store(a);
        out.cast::<u32>().store_at(1, b);
        let h = if_value(true, |arm| match arm {
            Arm::Then => Var::konst(5u32),
            Arm::Else => Var::konst(6u32),
        });
        assert_eq!(h.as_const(), Some(5));
    })
    .unwrap();
    let Some(Stmt::If { then, else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. }))
    else {
        panic!("no if")
    };
    let dsts = |b: &[Stmt]| -> Vec<u32> {
        b.iter()
            .filter_map(|s| match s {
                Stmt::Op(Instr {
                    op: Op::Data(Data::Mov { dst, .. }),
                    ..
                }) => Some(dst.id),
                _ => None,
            })
            .collect()
    };
    assert_eq!(dsts(then).len(), 2);
    assert_eq!(dsts(then), dsts(else_));
}

#[test]
fn while_loops_on_host_and_device() {
    let k = build_kernel("whiles", |k| {
        let out = k.param_ptr::<u32>("out");
        let mut i = 0;
        bool::run_while(|part| match part {
            LoopPart::Cond => Some(i < 3),
            LoopPart::Body => {
                out.store_at(i, 0u32);
                i += 1;
                None
            }
        });
        let mut j = thread_idx_x().fresh();
        let mut conds = 0;
        Var::<bool>::run_while(|part| match part {
            LoopPart::Cond => {
                conds += 1;
                Some(j.lt(100u32))
            }
            LoopPart::Body => {
                j += 32;
                None
            }
        });
        assert_eq!(conds, 1);
    })
    .unwrap();
    assert_eq!(shapes(&k.body), vec!["while"]);
    assert_eq!(count(&k, is_store), 3);
}

#[test]
fn two_closure_while_for_independent_parts() {
    let k = build_kernel("while2", |k| {
        let out = k.param_ptr::<u32>("out");
        let flag = k.shared_array::<u32>("flag", 1, 4);
        while_(|| flag.load().eq_(0u32), || out.store(1u32));
        let mut calls = 0;
        while_(|| false, || calls += 1);
        assert_eq!(calls, 0);
    })
    .unwrap();
    assert_eq!(shapes(&k.body), vec!["while"]);
}

#[test]
fn nested_kernels_are_refused_and_the_outer_survives() {
    let mut inner = None;
    let k = build_kernel("outer", |k| {
        let out = k.param_ptr::<u32>("out");
        inner = Some(build_kernel("inner", |_| {}));
        out.store(1u32);
    })
    .unwrap();
    assert_eq!(count(&k, is_store), 1);
    match inner {
        Some(Err(BuildError::NestedKernel { outer, inner })) => {
            assert_eq!((outer.as_str(), inner.as_str()), ("outer", "inner"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn values_cannot_cross_kernels() {
    let mut leaked = None;
    build_kernel("a", |_| leaked = Some(thread_idx_x())).unwrap();
    let Some(v) = leaked else { unreachable!() };
    let err = build_kernel("b", |k| {
        let out = k.param_ptr::<u32>("out");
        out.store(v + 1);
    })
    .unwrap_err();
    assert_eq!(err, BuildError::ForeignValue { kernel: "b".into() });
}

#[test]
fn a_panicking_kernel_leaves_the_thread_clean() {
    let r = std::panic::catch_unwind(|| {
        let _ = build_kernel("boom", |_| panic!("user bug"));
    });
    assert!(r.is_err());
    assert!(build_kernel("after", |_| {}).is_ok());
}

#[test]
fn user_errors_are_typed() {
    let e = build_kernel("div0", |_| {
        let _ = Var::konst(1i32) / 0;
    });
    assert!(matches!(e, Err(BuildError::DivisionByZero { .. })));
    let e = build_kernel("step0", |k| {
        let n = k.param::<i32>("n");
        range(0, n).step_by(0).for_each_(|_| {});
    });
    assert!(matches!(e, Err(BuildError::BadStep { step: 0, .. })));
    let e = build_kernel("dup", |k| {
        k.param::<i32>("n");
        k.param::<i32>("n");
    });
    assert!(matches!(e, Err(BuildError::BadName { .. })));
    let e = build_kernel("badname", |k| {
        k.param::<i32>("1x");
    });
    assert!(matches!(e, Err(BuildError::BadName { .. })));
    let e = build_kernel("align", |k| {
        k.shared_array::<f32>("s", 16, 3);
    });
    assert!(matches!(e, Err(BuildError::BadArgument { .. })));
    let e = build_kernel("vec3", |k| {
        let p = k.param_ptr::<f32>("p");
        let _ = p.load_vec::<3>();
    });
    assert!(matches!(e, Err(BuildError::Ir { .. })), "{e:?}");
}

#[test]
fn thread_ids_are_read_once_at_entry() {
    let k = build_kernel("tid", |k| {
        let out = k.param_ptr::<u32>("out");
        thread_idx_x().lt(4u32).if_(|_| out.store(thread_idx_x()));
        out.store_at(1, thread_idx_x());
    })
    .unwrap();
    let reads = count(&k, |o| matches!(o, Op::Data(Data::ReadSpecial { .. })));
    assert_eq!(reads, 1);
    assert!(matches!(
        k.body.iter().find(|s| matches!(s, Stmt::Op(_))),
        Some(Stmt::Op(Instr {
            op: Op::Memory(Memory::Ld { .. }),
            ..
        }))
    ));
}

// ---- The example kernels of the issue, written by hand with the builder. ----

/// c[i] = a[i] + b[i] for i < n, any n.
fn vector_add() -> Kernel {
    build_kernel("vector_add", |k| {
        let a = k.param_ptr::<f32>("a");
        let b = k.param_ptr::<f32>("b");
        let c = k.param_ptr::<f32>("c");
        let n = k.param::<u32>("n");
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        i.lt(n).if_(|_| c.store_at(i, a.load_at(i) + b.load_at(i)));
    })
    .unwrap()
}

/// out = in^T for a rows x cols matrix, 32x32 tiles through padded shared memory.
fn transpose() -> Kernel {
    build_kernel("transpose", |k| {
        const T: u32 = 32;
        let src = k.param_ptr::<f32>("src");
        let dst = k.param_ptr::<f32>("dst");
        let rows = k.param::<u32>("rows");
        let cols = k.param::<u32>("cols");
        let tile = k.shared_array::<f32>("tile", u64::from(T * (T + 1)), 16);
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let (bx, by) = (block_idx_x() * T, block_idx_y() * T);
        range(0, T).step_by(8).for_each_(|j: u32| {
            let (r, c) = (by + ty + j, bx + tx);
            (r.lt(rows) & c.lt(cols)).if_(|_| {
                tile.store_at((ty + j) * (T + 1) + tx, src.load_at(r * cols + c));
            });
        });
        sync_threads();
        range(0, T).step_by(8).for_each_(|j: u32| {
            let (r, c) = (bx + ty + j, by + tx);
            (r.lt(cols) & c.lt(rows)).if_(|_| {
                dst.store_at(r * rows + c, tile.load_at(tx * (T + 1) + ty + j));
            });
        });
    })
    .unwrap()
}

/// One partial sum per warp: grid-stride accumulation, then a butterfly shuffle reduction.
fn warp_reduce() -> Kernel {
    build_kernel("warp_reduce", |k| {
        let x = k.param_ptr::<f32>("x");
        let out = k.param_ptr::<f32>("out");
        let n = k.param::<u32>("n");
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        let mut acc = Var::konst(0.0f32).fresh();
        range(i, n)
            .step_by(block_dim_x() * grid_dim_x())
            .for_each_(|j| acc += x.load_at(j));
        for s in [16u32, 8, 4, 2, 1] {
            acc += shfl_xor(acc, s);
        }
        lane_id().eq_(0u32).if_(|_| out.store_at(i / 32, acc));
    })
    .unwrap()
}

/// Copies n floats through two shared buffers of 4 floats per thread, double-buffered with
/// cp.async; the tail is zero-filled by src-size and not stored.
fn cp_async_copy() -> Kernel {
    build_kernel("cp_async_copy", |k| {
        const THREADS: u32 = 128;
        const CHUNK: u32 = THREADS * 4;
        let src = k.param_ptr::<f32>("src");
        let dst = k.param_ptr::<f32>("dst");
        let n = k.param::<u32>("n");
        k.require_threads(THREADS, 1, 1);
        let buf = k.shared_array::<f32>("buf", u64::from(2 * CHUNK), 16);
        let t = thread_idx_x();
        let chunks = (n + (CHUNK - 1)) / CHUNK;
        let issue = |c: Var<u32>, stage: Var<u32>| {
            let base = c * CHUNK + t * 4;
            let left = select(base.lt(n), n - base, 0u32);
            let bytes = left.min(4u32) * 4;
            cp_async(
                buf + (stage * CHUNK + t * 4),
                src.offset(base),
                16,
                Some(bytes),
            );
            cp_async_commit();
        };
        issue(Var::konst(0), Var::konst(0));
        range(0u32, chunks).for_each_(|c| {
            let stage = c & 1;
            (c + 1).lt(chunks).if_else(|arm| match arm {
                Arm::Then => {
                    issue(c + 1, stage ^ 1);
                    cp_async_wait_group(1);
                }
                Arm::Else => cp_async_wait_all(),
            });
            sync_threads();
            range(0u32, 4u32).for_each_(|e: u32| {
                let idx = c * CHUNK + t * 4 + e;
                idx.lt(n)
                    .if_(|_| dst.store_at(idx, buf.load_at(stage * CHUNK + t * 4 + e)));
            });
            sync_threads();
        });
    })
    .unwrap()
}

/// Loads a 64x64 f32 tile with TMA into shared memory and stores it back with TMA.
fn tma_round_trip() -> Kernel {
    build_kernel("tma_round_trip", |k| {
        let src = k.param_tensor_map("src_map");
        let dst = k.param_tensor_map("dst_map");
        let tile = k.dynamic_shared::<f32>(1024);
        let bar = k.shared_array::<u64>("bar", 1, 8);
        let t = thread_idx_x();
        let (x, y) = (
            (block_idx_x() * 64).cast::<i32>(),
            (block_idx_y() * 64).cast::<i32>(),
        );
        t.eq_(0u32).if_(|_| {
            prefetch_tensor_map(&src);
            mbarrier_init(bar, 1u32);
            fence_mbarrier_init();
        });
        sync_threads();
        t.eq_(0u32).if_(|_| {
            mbarrier_arrive_expect_tx(bar, 64 * 64 * 4u32);
            tma_load(tile, &src, &[x, y], bar);
        });
        mbarrier_wait(bar, 0u32);
        fence_proxy_async_shared();
        sync_threads();
        t.eq_(0u32).if_(|_| {
            tma_store(&dst, &[x, y], tile);
            bulk_commit_group();
            bulk_wait_group_read(0);
        });
        fence_acq_rel(Scope::Cta);
    })
    .unwrap()
}

#[test]
fn example_kernels_build_with_their_targets() {
    let cases = [
        (vector_add(), Target::Sm80, vec!["if"]),
        (
            transpose(),
            Target::Sm80,
            vec!["if", "if", "if", "if", "if", "if", "if", "if"],
        ),
        (warp_reduce(), Target::Sm80, vec!["for", "if"]),
        (cp_async_copy(), Target::Sm80, vec!["for"]),
        (
            tma_round_trip(),
            Target::Sm90a,
            vec!["if", "if", "while", "if"],
        ),
    ];
    for (k, target, top) in cases {
        assert!(k.check().is_ok(), "{}", k.name);
        assert_eq!(k.min_target(), Some(target), "{}", k.name);
        assert_eq!(shapes(&k.body), top, "{}", k.name);
    }
}

#[test]
fn examples_use_the_expected_instructions() {
    let t = transpose();
    assert_eq!(t.shared.len(), 1);
    assert_eq!(t.shared[0].bytes, 32 * 33 * 4);
    let w = warp_reduce();
    assert_eq!(count(&w, |o| matches!(o, Op::Warp(_))), 5);
    let c = cp_async_copy();
    assert_eq!(
        count(&c, |o| matches!(o, Op::CpAsync(CpAsync::Copy { .. }))),
        2
    );
    assert_eq!(c.hints.reqntid, Some([128, 1, 1]));
    let m = tma_round_trip();
    assert_eq!(m.dynamic_shared.as_ref().map(|d| d.align), Some(1024));
    assert_eq!(
        count(&m, |o| matches!(o, Op::Bulk(Bulk::TensorLoad { .. }))),
        1
    );
    assert_eq!(
        count(&m, |o| matches!(o, Op::Bulk(Bulk::TensorStore { .. }))),
        1
    );
    assert_eq!(
        m.ptx_version(Target::Sm90a),
        crate::ir::PtxVersion::new(8, 0)
    );
}

#[test]
fn literals_infer_their_types() {
    let k = build_kernel("literals", |k| {
        let out = k.param_ptr::<f32>("out");
        let n = k.param::<u32>("n");
        let t = thread_idx_x();
        let host = if_value(n.as_const().is_some(), |arm| match arm {
            Arm::Then => 1,
            Arm::Else => 2,
        });
        assert_eq!(host, 2);
        range(0, n).step_by(2).for_each_(|i| {
            let x = (i + 1) * 2 - t;
            (x.lt(16) & t.ge(1)).if_(|_| out.store_at(x, x.cast::<f32>() * 0.5 + 1.0));
            let y = 1 + x;
            out.store_at(y, 2.0 * y.cast::<f32>());
        });
        (0..2).for_each_(|i: i32| out.store_at(i, 0.0));
    })
    .unwrap();
    assert_eq!(shapes(&k.body), vec!["for"]);
    assert_eq!(count(&k, is_store), 4);
}

#[test]
fn std_ranges_and_host_values_keep_rust_meaning() {
    let k = build_kernel("std", |k| {
        let out = k.param_ptr::<u32>("out");
        (0..6).step_by(2).for_each_(|i: u32| out.store_at(i, i));
        let mut l: crate::layout::Layout = "(4,8):(1,4)".parse().unwrap_or_else(|_| unreachable!());
        l.assign_("(2,2):(1,2)".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(l.to_string(), "(2,2):(1,2)");
        let y = 5u32.fresh_();
        assert_eq!(y, 5);
    })
    .unwrap();
    assert_eq!(count(&k, is_store), 3);
}

#[test]
fn prefetch_names_its_cache_and_the_elements_address() {
    let k = build_kernel("prefetch", |k| {
        let p = k.param_ptr::<f32>("p");
        (p + thread_idx_x()).prefetch(CacheLevel::L1);
        p.prefetch(CacheLevel::L2);
    })
    .unwrap();
    let levels: Vec<(bool, StateSpace)> = ops(&k)
        .iter()
        .filter_map(|o| match o {
            Op::Memory(Memory::Prefetch { l2, space, .. }) => Some((*l2, *space)),
            _ => None,
        })
        .collect();
    assert_eq!(
        levels,
        vec![(false, StateSpace::Global), (true, StateSpace::Global)]
    );
}
