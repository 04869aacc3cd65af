//! The multistage GEMM run on the CPU by a small interpreter of rute's IR: every thread of a block
//! in lockstep, `cp.async` groups that land only at `wait_group`, `ldmatrix` and `mma.sync` with
//! the fragment layouts the PTX ISA defines (independent of CuTe's atoms, which the kernel uses),
//! bounds-checked global memory (a read or write outside A, B or D fails the test, so does a
//! zero-size `cp.async` that would have read out of bounds) and NaN-poisoned D. The result is
//! compared with a CPU reference.
//!
//! This checks the program's data flow (partitions, swizzle, fragment registers, predicates,
//! pipeline order) before it meets a GPU; it does not model timing, so it cannot see a missing
//! barrier between threads. The same interpreter runs the device code of the stream-K walk
//! against its host model (`stream_k_walk`), and that of the last wave's cut against
//! `RowSplit::of`.

// Threads index several per-thread arrays at once.
#![allow(clippy::needless_range_loop)]

mod lockstep;

use std::collections::HashMap;

use dsl_core::ir::Kernel;
use half::{bf16, f16};
use kernels::gemm::{Accum, GemmDtype};
use kernels::multistage::{multistage_kernel, MultistageConfig, MultistageParts};
use lockstep::*;

/// Runs the kernel of `cfg` on an `m x n x k` problem and returns the relative Frobenius error.
/// Simulates `cfg` on an `m x n x k` problem and asserts its relative error is under `tol`.
fn assert_simulates(cfg: &MultistageConfig, (m, n, k): (usize, usize, usize), tol: f64) {
    let e = simulate(cfg, m, n, k);
    assert!(
        e < tol,
        "{} {m}x{n}x{k}: relative error {e:.3e}",
        cfg.name()
    );
}

fn simulate(cfg: &MultistageConfig, m: usize, n: usize, k: usize) -> f64 {
    simulate_counting(cfg, m, n, k).0
}

/// [`simulate`], also returning how many 2-, 4- and 16-byte stores wrote D.
fn simulate_counting(cfg: &MultistageConfig, m: usize, n: usize, k: usize) -> (f64, [usize; 3]) {
    let kernel = multistage_kernel(cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    let mut seed = (m * 7919 + n * 104_729 + k) as u64 | 1;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let enc = |x: f32| match cfg.dtype {
        GemmDtype::F16 => f16::from_f32(x).to_bits(),
        GemmDtype::Bf16 => bf16::from_f32(x).to_bits(),
    };
    let dec = |b: u16| match cfg.dtype {
        GemmDtype::F16 => f16::from_bits(b).to_f64(),
        GemmDtype::Bf16 => bf16::from_bits(b).to_f64(),
    };
    let a: Vec<u16> = (0..m * k).map(|_| enc(rnd())).collect();
    let b: Vec<u16> = (0..n * k).map(|_| enc(rnd())).collect();
    let bytes = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (pa, pb, pd) = (0x1000_0000u64, 0x2000_0000u64, 0x3000_0000u64);
    let mut global = Global {
        bufs: vec![
            (pa, bytes(&a)),
            (pb, bytes(&b)),
            (pd, vec![0xff; m * n * 2]),
        ],
    };
    let params = named_params(&[
        ("d", pd),
        ("a", pa),
        ("b", pb),
        ("m", m as u64),
        ("n", n as u64),
        ("k", k as u64),
    ]);
    let (gx, gy, _) = cfg.grid(m as u32, n as u32);
    let mut stores = [0usize; 3];
    for by in 0..gy as u64 {
        for bx in 0..gx as u64 {
            let threads = cfg.threads() as usize;
            let mut blk = Block {
                kernel: &kernel,
                threads,
                regs: vec![vec![0; threads]; kernel.regs.len()],
                smem: vec![0xAB; cfg.smem_bytes() as usize],
                global: &mut global,
                params: &params,
                ctaid: (bx, by),
                nctaid: u64::from(gx),
                pending: (0..threads).map(|_| Vec::new()).collect(),
                groups: vec![0; threads],
                stores: [0, 0, 0],
            };
            blk.run(&kernel.body, &vec![true; threads]);
            for (s, b) in stores.iter_mut().zip(blk.stores) {
                *s += b;
            }
        }
    }
    let d = &global.bufs[2].1;
    let (mut err, mut norm) = (0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|p| dec(a[i * k + p]) * dec(b[j * k + p])).sum();
            let bits = u16::from_le_bytes([d[2 * (i * n + j)], d[2 * (i * n + j) + 1]]);
            let got = dec(bits);
            assert!(
                got.is_finite(),
                "{m}x{n}x{k}: D[{i}][{j}] not written ({bits:#06x})"
            );
            err += (got - want).powi(2);
            norm += want * want;
        }
    }
    ((err / norm.max(f64::MIN_POSITIVE)).sqrt(), stores)
}

const SHAPES: &[(usize, usize, usize)] = &[
    (128, 128, 64),
    (200, 136, 72),
    (77, 40, 16),
    (1, 1, 8),
    (130, 129, 104),
];

fn check(dtype: GemmDtype, acc: Accum, tol: f64) {
    let cfg = MultistageConfig::reference(dtype, acc);
    for &(m, n, k) in SHAPES {
        let e = simulate(&cfg, m, n, k);
        println!("{} {m}x{n}x{k}: relative error {e:.2e}", cfg.name());
        assert!(
            e < tol,
            "{} {m}x{n}x{k}: relative error {e:.3e}",
            cfg.name()
        );
    }
}

#[test]
fn simulated_f16_f16acc() {
    check(GemmDtype::F16, Accum::F16, 1e-2);
}

#[test]
fn simulated_f16_f32acc() {
    check(GemmDtype::F16, Accum::F32, 2e-3);
}

#[test]
fn simulated_bf16_f32acc() {
    check(GemmDtype::Bf16, Accum::F32, 4e-3);
}

/// Other tiles, depths and k-widths than the reference compute the same product.
#[test]
fn simulated_other_configurations() {
    for (tm, tn, tk, st) in [
        (64, 128, 32, 4),
        (128, 64, 64, 3),
        (64, 64, 32, 2),
        (128, 128, 32, 5),
    ] {
        let cfg = MultistageConfig::new(MultistageParts {
            tile_m: tm,
            tile_n: tn,
            tile_k: tk,
            stages: st,
            ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
        })
        .unwrap();
        for &(m, n, k) in &[(100, 70, 200), (64, 64, 8)] {
            assert_simulates(&cfg, (m, n, k), 2e-3);
        }
    }
}

/// K that is not a multiple of 8 runs with 8-, 4- or 2-byte copies.
#[test]
fn simulated_narrow_copies() {
    for (m, n, k) in [
        (100, 70, 36),
        (33, 65, 2),
        (128, 128, 70),
        (5, 9, 12),
        (70, 90, 45),
        (3, 2, 1),
    ] {
        for acc in [Accum::F16, Accum::F32] {
            let cfg = MultistageConfig::reference_for_k(GemmDtype::F16, acc, k as u32);
            assert!(cfg.copy_bits < 128);
            assert_simulates(&cfg, (m, n, k), 1e-2);
        }
    }
}

/// The epilogue writes pairs with one 32-bit store where N is even, and single elements where N
/// is odd (rows are then not 4-byte aligned); every element exactly once either way.
#[test]
fn epilogue_store_widths() {
    let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F32);
    let (_, even) = simulate_counting(&cfg, 64, 64, 16);
    assert_eq!(even, [0, 64 * 64 / 2, 0]);
    let (_, odd) = simulate_counting(&cfg, 64, 63, 16);
    assert_eq!(odd, [64 * 63, 0, 0]);
}

/// Other warp arrangements (8 warps as 2x4 and 4x2, a single warp) with their tiles.
#[test]
fn simulated_other_warps() {
    for (warps, tile_m, tile_n, stages) in [
        ((2, 4), 128, 256, 4),
        ((4, 2), 256, 128, 3),
        ((1, 1), 64, 64, 2),
    ] {
        let cfg = MultistageConfig::new(MultistageParts {
            warps,
            tile_m,
            tile_n,
            stages,
            ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
        })
        .unwrap();
        for &(m, n, k) in &[(300, 270, 72), (64, 64, 8)] {
            assert_simulates(&cfg, (m, n, k), 2e-3);
        }
    }
}

/// Rasterized block orders (groups of 2 and 4 M tiles per N tile) cover every tile once; blocks
/// past the last M tile touch nothing.
#[test]
fn simulated_rasterization() {
    for s in [1, 2] {
        let cfg = MultistageConfig::new(MultistageParts {
            raster_log2: s,
            ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
        })
        .unwrap();
        for &(m, n, k) in &[(300, 270, 40), (129, 300, 16), (64, 64, 8)] {
            assert_simulates(&cfg, (m, n, k), 2e-3);
        }
    }
}

/// The shared-memory epilogues (`st.shared` pairs and `stmatrix.x4`): 16-byte rows where N is a
/// multiple of 8, element stores at the ragged right edge and where N is not; f16 and f32
/// accumulators, f16 and bf16; 4 and 8 warps.
#[test]
fn simulated_smem_epilogue() {
    use kernels::multistage::Epilogue;
    for epilogue in [Epilogue::Smem, Epilogue::Stmatrix] {
        for (dtype, acc, warps, tile_n) in [
            (GemmDtype::F16, Accum::F16, (2, 2), 128),
            (GemmDtype::F16, Accum::F32, (2, 2), 128),
            (GemmDtype::Bf16, Accum::F32, (2, 2), 128),
            (GemmDtype::F16, Accum::F32, (2, 4), 256),
        ] {
            let cfg = MultistageConfig::new(MultistageParts {
                epilogue,
                warps,
                tile_n,
                ..MultistageConfig::reference(dtype, acc).parts()
            })
            .unwrap();
            for &(m, n, k) in &[(128, 128, 32), (200, 136, 72), (77, 45, 16), (1, 1, 8)] {
                let (e, stores) = simulate_counting(&cfg, m, n, k);
                assert!(
                    e < 1e-2,
                    "{} {m}x{n}x{k}: relative error {e:.3e}",
                    cfg.name()
                );
                if n % 8 == 0 {
                    assert_eq!(stores, [0, 0, m * n / 8], "{} {m}x{n}x{k}", cfg.name());
                } else {
                    assert_eq!(stores, [m * n, 0, 0], "{} {m}x{n}x{k}", cfg.name());
                }
            }
        }
    }
}

/// The tuned configuration as registered (rasterized, shared epilogue) and every configuration
/// the sweep times (8 warps on 128x256 and 256x128, 4 stages, k-tiles of 64, ...).
#[test]
fn simulated_tuned() {
    let mut cfgs = vec![MultistageConfig::tuned(GemmDtype::F16, Accum::F32)];
    cfgs.extend(kernels::multistage::Tune::SWEEP.map(|name| {
        name.parse::<kernels::multistage::Tune>()
            .unwrap()
            .config(kernels::gemm::GemmDtype::F16, kernels::gemm::Accum::F32)
            .unwrap()
    }));
    cfgs.dedup();
    for cfg in &cfgs {
        // K = 360: three k-tiles of the unpredicated loop (interior blocks), then the residue.
        for &(m, n, k) in &[(600, 300, 72), (129, 257, 40), (260, 300, 360)] {
            assert_simulates(cfg, (m, n, k), 2e-3);
        }
    }
}

/// Runs `kernel` as block `b` of a grid of `grid` blocks of one thread each: device code that
/// one lane runs (a walk, a cut), its results stored to `global`.
fn run_one_thread(
    kernel: &Kernel,
    global: &mut Global,
    params: &HashMap<String, u64>,
    (b, grid): (u32, u32),
) {
    let mut blk = Block {
        kernel,
        threads: 1,
        regs: vec![vec![0; 1]; kernel.regs.len()],
        smem: Vec::new(),
        global,
        params,
        ctaid: (u64::from(b), 0),
        nctaid: u64::from(grid),
        pending: vec![Vec::new()],
        groups: vec![0],
        stores: [0, 0, 0],
    };
    blk.run(&kernel.body, &[true]);
}

/// The device code of [`StreamKScheduler`], run block by block, walks what its host model
/// [`stream_k_walk`] says (the units, in order), and each unit's role: an end writes its tile
/// after adding the partials of the owners of the tile's earlier k-tiles; a start (short of its
/// tile's end) stores its own.
#[test]
fn simulated_stream_k_walk_is_its_host_model() {
    use dsl_core::kernel::{block_idx_x, build_kernel, LoopCond, LoopPart, Var};
    use dsl_core::pipeline::{
        stream_k_walk, walk, ClusterShape, Raster, StreamKRegion, StreamKScheduler, StreamKSplit,
    };
    const FIELDS: usize = 6;
    const MAX_UNITS: usize = 24;
    let raster = Raster::Grouped { group: 8 };
    for region in [StreamKRegion::First, StreamKRegion::Last] {
        let kernel = build_kernel("walk", |k| {
            let out = k.param_ptr::<u32>("out");
            let (tm, tn) = (k.param::<u32>("tm"), k.param::<u32>("tn"));
            let kt = k.param::<u32>("kt");
            let (sk_tiles, sk_blocks) = (k.param::<u32>("sk_tiles"), k.param::<u32>("sk_blocks"));
            let cluster = ClusterShape { x: 1, y: 1 };
            let mut s = StreamKScheduler::new(
                tm, tn, kt, sk_tiles, sk_blocks, raster, cluster, None, region,
            );
            let row = out + block_idx_x() * (MAX_UNITS * FIELDS) as u32;
            let mut i = Var::konst(0u32).fresh();
            // One closure for both parts: the condition reads the walk the body steps.
            Var::<bool>::run_while(|part| match part {
                LoopPart::Cond => Some(s.valid()),
                LoopPart::Body => {
                    let at = row + i * FIELDS as u32;
                    let (k0, k1) = s.k_tiles();
                    let (first, end) = s.peers();
                    let writes = dsl_core::kernel::select(s.writes_tile(), 1u32, 0u32);
                    let fields = [s.m() * tn + s.n(), k0, k1, writes, first, end];
                    for (f, v) in fields.into_iter().enumerate() {
                        (at + f as u32).store(v);
                    }
                    i.set(i + 1u32);
                    s.next_unit();
                    None
                }
            });
        })
        .unwrap();
        for (tm, tn, kt, split, grid) in [
            // 4096^3 on 128x256 tiles, its last wave shared out over 132 blocks.
            (
                32u32,
                16u32,
                64u32,
                StreamKSplit {
                    sk_tiles: 116,
                    sk_blocks: 132,
                },
                132u32,
            ),
            // Every tile shared out, as for decode; fewer blocks sharing than the grid has.
            (
                5,
                16,
                128,
                StreamKSplit {
                    sk_tiles: 80,
                    sk_blocks: 132,
                },
                132,
            ),
            (
                3,
                4,
                10,
                StreamKSplit {
                    sk_tiles: 12,
                    sk_blocks: 7,
                },
                9,
            ),
            // Shares longer than a tile, and whole tiles only.
            (
                2,
                3,
                4,
                StreamKSplit {
                    sk_tiles: 6,
                    sk_blocks: 2,
                },
                4,
            ),
            (4, 4, 8, StreamKSplit::DATA_PARALLEL, 5),
            // Stream-K over every tile (`_k`), its grid a block per share: few tiles of a long K
            // (14 of 40 k-tiles on 13 blocks, 43 each), a wave and a part (23 tiles of 6 on 16
            // blocks), and fewer k-tiles than blocks take (3 tiles of 5: one share of 15).
            (
                7,
                2,
                40,
                StreamKSplit::every_tile(14, 40, 13),
                StreamKSplit::every_tile(14, 40, 13).sk_blocks,
            ),
            (
                23,
                1,
                6,
                StreamKSplit::every_tile(23, 6, 16),
                StreamKSplit::every_tile(23, 6, 16).sk_blocks,
            ),
            (
                3,
                1,
                5,
                StreamKSplit::every_tile(3, 5, 9),
                StreamKSplit::every_tile(3, 5, 9).sk_blocks,
            ),
            // Fewer sharing blocks than the grid, and whole tiles not a multiple of it.
            (
                3,
                5,
                10,
                StreamKSplit {
                    sk_tiles: 4,
                    sk_blocks: 3,
                },
                5,
            ),
        ] {
            let tiles = tm * tn;
            let words = grid as usize * MAX_UNITS * FIELDS;
            let base = 0x1000_0000u64;
            let mut global = Global {
                bufs: vec![(base, vec![0xff; words * 4])],
            };
            let params = named_params(&[
                ("out", base),
                ("tm", u64::from(tm)),
                ("tn", u64::from(tn)),
                ("kt", u64::from(kt)),
                ("sk_tiles", u64::from(split.sk_tiles)),
                ("sk_blocks", u64::from(split.sk_blocks)),
            ]);
            for b in 0..grid {
                run_one_thread(&kernel, &mut global, &params, (b, grid));
            }
            let word = |i: usize| global.word(i);
            // The walk's tile index in raster order -> the (m, n) it stores as m * tn + n, by the
            // raster's host model (a walk from tile `t` whose stride passes the last tile).
            let mn = |t: u32| {
                let (m, n) = walk(tm, tn, raster, t, tiles)[0];
                m * tn + n
            };
            for b in 0..grid {
                let want = stream_k_walk(tiles, kt, split, (b, grid), region);
                // Where the region's tiles start in the walk's order.
                let base = match region {
                    StreamKRegion::First => 0,
                    StreamKRegion::Last => tiles - split.sk_tiles,
                };
                assert!(want.len() < MAX_UNITS, "{want:?}");
                for (u, w) in want.iter().enumerate() {
                    let at = (b as usize * MAX_UNITS + u) * FIELDS;
                    let got: Vec<u32> = (0..FIELDS).map(|f| word(at + f)).collect();
                    let writes = w.k_end == kt;
                    let first = if w.k_begin == 0 {
                        b
                    } else {
                        split.owner(kt, u64::from(w.tile - base) * u64::from(kt))
                    };
                    let expected = [mn(w.tile), w.k_begin, w.k_end, u32::from(writes), first, b];
                    assert_eq!(
                        got, expected,
                        "{region:?}: {tm}x{tn} tiles of {kt}, {split:?}, block {b}, unit {u}"
                    );
                }
                // Nothing past the walk's end.
                let after = (b as usize * MAX_UNITS + want.len()) * FIELDS;
                assert_eq!(
                    word(after),
                    u32::MAX,
                    "block {b} walked past its {} units",
                    want.len()
                );
            }
        }
    }
}

/// The device code of the last wave's cut (`_b`, [`row_split_on_device`]) computes what its host
/// model [`RowSplit::of`] says, for grids from 1 to 132 blocks, rows from one to past two waves
/// and pieces of 8-row and 16-row granules: the whole tiles, a piece's rows and the units along
/// M; with nothing to cut, every tile whole.
///
/// [`row_split_on_device`]: kernels::hopper::row_split::row_split_on_device
/// [`RowSplit::of`]: kernels::hopper::row_split::RowSplit::of
#[test]
fn simulated_row_split_is_its_host_model() {
    use dsl_core::kernel::build_kernel;
    use kernels::hopper::row_split::{row_split_on_device, RowSplit};
    const TILE_M: u32 = 64;
    for granule in [8u32, 16] {
        let kernel = build_kernel("row_split", |k| {
            let out = k.param_ptr::<u32>("out");
            let (m, blocks) = (k.param::<u32>("m"), k.param::<u32>("blocks"));
            let (full, rows, units) = row_split_on_device(m, TILE_M, blocks, granule);
            out.store(full);
            (out + 1u32).store(rows);
            (out + 2u32).store(units);
        })
        .unwrap();
        let base = 0x1000_0000u64;
        for blocks in [1u32, 2, 7, 66, 131, 132] {
            for m in [
                1u32, 7, 8, 9, 63, 64, 65, 127, 1000, 4224, 8447, 8448, 8449, 20000, 40960, 81920,
                100_000, 163_840,
            ] {
                let mut global = Global {
                    bufs: vec![(base, vec![0xff; 12])],
                };
                let params = named_params(&[
                    ("out", base),
                    ("m", u64::from(m)),
                    ("blocks", u64::from(blocks)),
                ]);
                run_one_thread(&kernel, &mut global, &params, (0, 1));
                let got = (global.word(0), global.word(1), global.word(2));
                let tiles = m.div_ceil(TILE_M);
                let want = match RowSplit::of(m, TILE_M, blocks, granule) {
                    Some(s) => (s.full, s.rows, s.units()),
                    None => (tiles, TILE_M, tiles),
                };
                assert_eq!(got, want, "{m} rows on {blocks} blocks, granule {granule}");
            }
        }
    }
}
