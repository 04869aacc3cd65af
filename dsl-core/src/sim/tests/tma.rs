//! TMA in the simulator: a cluster of two blocks, one multicasting a 128-byte swizzled box that
//! reaches past the tensor (zeros fill the outside) to both, each reading it back through the
//! swizzle and storing it (the store clipped at the tensor's edge); and a store of shared memory
//! that threads wrote without `fence.proxy.async` (an async-proxy race at the store's line).

use super::*;
use crate::atom::tma::{TmaDescriptor, TmaSwizzleMode};
use crate::atom::ValType;
use crate::kernel::*;
use crate::sim::*;

/// The tensor: 100 columns x 30 rows of f16, the box 64 columns x 8 rows.
const COLS: usize = 100;
const ROWS: usize = 30;
const BOX: (usize, usize) = (64, 8);

fn descriptor() -> TmaDescriptor {
    TmaDescriptor {
        elem: ValType::F16,
        global_dims: vec![COLS as u64, ROWS as u64],
        global_strides_bytes: vec![2 * COLS as u64],
        box_dims: vec![BOX.0 as u32, BOX.1 as u32],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzleMode::B128,
        l2_promotion: Default::default(),
    }
}

/// The box of cluster `c`: columns from `64 c - 8`, rows from 26.
fn origin(c: usize) -> (i64, i64) {
    (64 * c as i64 - 8, 26)
}

/// Block `r` of each cluster: rank 0 multicasts the box to both; every thread copies the box
/// (through the swizzle) to `out`; with `negate`, the threads negate the tile in place (with or
/// without `fence.proxy.async`) and the block stores it to `dst` at its rows.
fn kernel(negate: bool, fence: bool, store_line: &mut u32) -> Kernel {
    build_kernel("tma_multicast", |k| {
        let src = k.param_tensor_map("src");
        let dst = k.param_tensor_map("dst");
        let out = k.param_ptr::<half::f16>("out");
        let tile = k.shared_array::<half::f16>("tile", (BOX.0 * BOX.1) as u64, 1024);
        let bar = k.shared_array::<u64>("bar", 1, 8);
        let t = thread_idx_x();
        let rank = block_idx_x() % 2u32;
        let cluster = block_idx_x() / 2u32;
        t.eq_(0u32).if_(|_| {
            mbarrier_init(bar, 1u32);
            fence_mbarrier_init();
        });
        // The peer's barrier is initialized before the multicast reaches it.
        cluster_sync();
        let x = (cluster * 64u32).cast::<i32>() - 8i32;
        let y = Var::konst(26i32);
        t.eq_(0u32).if_(|_| {
            mbarrier_arrive_expect_tx(bar, (2 * BOX.0 * BOX.1) as u32);
            rank.eq_(0u32).if_(|_| {
                tma_load_multicast(tile, &src, &[x, y], bar, 3u32);
            });
        });
        mbarrier_wait(bar, 0u32);
        let n = (BOX.0 * BOX.1) as u32;
        range(t, n).step_by(128u32).for_each_(|i| {
            let (r, c) = (i / 64u32, i % 64u32);
            let byte = r * 128u32 + c * 2u32;
            let sw = byte ^ (((byte >> 7u32) & 7u32) << 4u32);
            let v = tile.byte_add(sw).load();
            out.store_at(block_idx_x() * n + i, v);
            if negate {
                tile.byte_add(sw).store(v * half::f16::from_f32(-1.0));
            }
        });
        if negate {
            if fence {
                fence_proxy_async_shared();
            }
            sync_threads();
            t.eq_(0u32).if_(|_| {
                // Eight columns to the right: stores may not start outside the tensor.
                let (xs, yr) = (x + 8i32, y + (rank * 8u32).cast::<i32>());
                *store_line = here!();
                tma_store(&dst, &[xs, yr], tile);
                bulk_commit_group();
                bulk_wait_group_read(0);
            });
        }
        // Neither block leaves while the other may still multicast into it.
        cluster_sync();
    })
    .unwrap()
}

fn source() -> Vec<u16> {
    (0..ROWS * COLS)
        .map(|i| half::f16::from_f32(((i * 7 + 3) % 200) as f32 - 100.0).to_bits())
        .collect()
}

/// Element `(row, col)` of the box at `(x, y)`: the tensor's, or zero outside it.
fn boxed(src: &[u16], (x, y): (i64, i64), row: usize, col: usize) -> u16 {
    let (gx, gy) = (x + col as i64, y + row as i64);
    if gx < 0 || gy < 0 || gx >= COLS as i64 || gy >= ROWS as i64 {
        0
    } else {
        src[gy as usize * COLS + gx as usize]
    }
}

fn run(k: &Kernel, opts: Options) -> (Report, Vec<u16>, Memory, BufferId) {
    let mut mem = Memory::new();
    let s = mem.upload("src", &source());
    mem.set_read_only(s, true);
    let d = mem.alloc_zeroed("dst", 2 * ROWS * COLS);
    let out = mem.alloc("out", 2 * 4 * BOX.0 * BOX.1);
    let args = [
        Arg::Tma(Box::new(TensorMapArg::new(s, descriptor()))),
        Arg::Tma(Box::new(TensorMapArg::new(d, descriptor()))),
        Arg::Buffer(out),
    ];
    let launch = Launch::linear(4, 128).with_cluster([2, 1, 1]);
    let r = run_with(k, launch, &args, &mut mem, opts).unwrap_or_else(|e| panic!("{e}"));
    let got = mem.read::<u16>(out);
    (r, got, mem, d)
}

#[test]
fn a_multicast_box_lands_swizzled_in_both_blocks_with_zeros_outside() {
    let mut line = 0;
    let k = kernel(false, true, &mut line);
    let src = source();
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let (r, got, _, _) = run(&k, opts(seed, schedule));
            assert!(r.is_clean(), "{schedule:?} {seed}: {r}");
            for b in 0..4 {
                let o = origin(b / 2);
                for i in 0..BOX.0 * BOX.1 {
                    let want = boxed(&src, o, i / 64, i % 64);
                    assert_eq!(got[b * 512 + i], want, "block {b} element {i}");
                }
            }
        }
    }
}

#[test]
fn stores_clip_at_the_tensor_and_need_the_proxy_fence() {
    let src = source();
    let mut line = 0;
    let good = kernel(true, true, &mut line);
    let (r, _, mem, d) = run(&good, opts(1, Schedule::Random));
    assert!(r.is_clean(), "{r}");
    // Block r of cluster c stored the negated box 8 columns right of where it was loaded, at
    // rows 26 + 8r: rows 26..30 of the tensor for r = 0 (the rest clipped), nothing for r = 1
    // (rows 34.. are outside); the first 8 columns hold the negated zero fill.
    let dst = mem.read::<u16>(d);
    for row in 0..ROWS {
        for col in 0..COLS {
            let want = match (row >= 26, col >= 8) {
                (false, _) => 0,
                (true, false) => 0x8000,
                (true, true) => src[row * COLS + col - 8] ^ 0x8000,
            };
            assert_eq!(dst[row * COLS + col], want, "({row}, {col})");
        }
    }
    let bad = kernel(true, false, &mut line);
    for seed in 0..4 {
        let (r, _, _, _) = run(&bad, opts(seed, Schedule::Random));
        let f = r
            .first_of(&[FindingKind::AsyncProxyRace])
            .unwrap_or_else(|| panic!("seed {seed}: {r}"));
        assert_eq!(f.op, "cp.async.bulk.tensor", "{r}");
        assert_eq!(super::line(f), line, "{r}");
        assert_eq!(f.other.as_ref().map(|o| o.op), Some("st"), "{r}");
    }
}

/// A bulk wait in a kernel that stores nothing through TMA (a program whose store of D is
/// chosen at generation may keep its waits) waits for nothing: the run is clean.
#[test]
fn a_bulk_wait_with_no_store_waits_for_nothing() {
    let k = build_kernel("bulk_wait_alone", |k| {
        let out = k.param_ptr::<u32>("out");
        bulk_commit_group();
        bulk_wait_group_read(0);
        bulk_wait_group(0);
        out.store_at(thread_idx_x(), thread_idx_x());
    })
    .unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc("out", 4 * 32);
    let r = run_with(
        &k,
        Launch::linear(1, 32),
        &[Arg::Buffer(out)],
        &mut mem,
        opts(0, Schedule::Random),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.is_clean(), "{r}");
    assert_eq!(mem.read::<u32>(out), (0..32).collect::<Vec<u32>>());
}
