//! The builder's example kernels (the issue's list, as `dsl_core::kernel`'s tests write them)
//! go through `emit` and assemble with ptxas for their target without spills. Needs `RUTE_PTXAS`.

mod common;

use common::assemble_ok;
use dsl_core::ir::{Kernel, Scope, Target};
use dsl_core::kernel::*;

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
fn builder_examples_emit_and_assemble() {
    for (k, target) in [
        (vector_add(), Target::Sm80),
        (transpose(), Target::Sm80),
        (warp_reduce(), Target::Sm80),
        (cp_async_copy(), Target::Sm80),
        (tma_round_trip(), Target::Sm90a),
    ] {
        assert_eq!(k.check(), Ok(()), "{}", k.name);
        assert_eq!(k.min_target(), Some(target), "{}", k.name);
        let (ptx, rep) = assemble_ok(&k, target);
        assert!(rep.registers > 0, "{}", rep.log);
        // Every later target the kernel allows assembles too.
        for t in k.requires().targets().filter(|&t| t > target) {
            assemble_ok(&k, t);
        }
        assert!(ptx.contains(&format!(".visible .entry {}(", k.name)));
    }
    let err = codegen_ptx::emit(&tma_round_trip(), Target::Sm80).unwrap_err();
    assert!(err.to_string().contains("sm_80"), "{err}");
}
