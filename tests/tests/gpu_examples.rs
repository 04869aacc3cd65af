//! The example kernels on a real GPU (feature `gpu`): each is generated, emitted for sm_90a (and
//! for sm_80 where it supports it: the driver JIT-compiles sm_80 PTX for the device), run on
//! pseudo-random data at sizes that are not multiples of the block or the tile, and compared with
//! a CPU reference. Outputs are poisoned (all ones: a NaN) before each launch and are one guard
//! region longer than the result, so an element not written, or written past the end, shows.
//!
//! The CPU references are the examples' cases' (`kernels::cases::examples`), which the
//! simulator's tests check the same kernels against.
//!
//! Each kernel is launched through its typed signature (`#[kernel]`'s `..Kernel::launch`), which
//! checks the buffers' element types at compile time and their lengths against the kernel's
//! `#[len(..)]` before the launch.
//!
//! Every test opens device 0 and fails loudly without one; without the `gpu` feature they are
//! compiled and listed as ignored.

use codegen_ptx::jit::{CudaSlice, Jit, Launch, TensorMapSpec, TmaDataType, TypedFunction};
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;
use kernels::cases::examples::{block_sums, row_sums, tile_product, transpose_reference};
use kernels::examples::async_copy::AsyncCopyKernel;
use kernels::examples::reduce_sum::ReduceSumKernel;
use kernels::examples::tma_pipeline::TmaPipelineKernel;
use kernels::examples::tma_round_trip::TmaRoundTripKernel;
use kernels::examples::tma_stream::TmaStreamKernel;
use kernels::examples::transpose::TransposeKernel;
use kernels::examples::vector_add::VectorAddKernel;
use kernels::examples::wgmma_tile::WgmmaTileKernel;
use kernels::examples::{self, tma_round_trip::TmaBox};
use rute_tests::gpu::{jit, Rng};

/// The bits every output element holds before a launch: a NaN no kernel here produces.
const POISON: u32 = 0xFFFF_FFFF;
/// Elements after each output that no kernel may touch.
const GUARD: usize = 64;

/// The targets the H200 runs of those `supported` lists: sm_90a natively, sm_80 through the
/// driver's JIT.
fn runnable(supported: &[Target]) -> Vec<Target> {
    [Target::Sm80, Target::Sm90a]
        .into_iter()
        .filter(|t| supported.contains(t))
        .collect()
}

/// Emits `kernel` for `target` and loads it with its signature.
fn load<K: KernelSignature, E: std::fmt::Display>(
    jit: &Jit,
    kernel: Result<TypedKernel<K>, E>,
    target: Target,
) -> TypedFunction<K> {
    let kernel = kernel.unwrap_or_else(|e| panic!("generation failed: {e}"));
    jit.compile(&kernel, target)
        .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name))
}

/// A device buffer of `len + GUARD` poisoned floats.
fn poisoned(jit: &Jit, len: usize) -> CudaSlice<f32> {
    jit.upload(&vec![f32::from_bits(POISON); len + GUARD])
        .expect("upload the poisoned output")
}

/// Downloads `buf` and checks that its guard is still poisoned; returns the first `len` values.
fn download(jit: &Jit, buf: &CudaSlice<f32>, len: usize, what: &str) -> Vec<f32> {
    let mut all = jit
        .download(buf)
        .unwrap_or_else(|e| panic!("{what}: the kernel failed: {e}"));
    assert_eq!(all.len(), len + GUARD);
    for (i, g) in all[len..].iter().enumerate() {
        assert_eq!(
            g.to_bits(),
            POISON,
            "{what}: written past the end, at {}",
            len + i
        );
    }
    all.truncate(len);
    all
}

/// `got == want` bit for bit, else a message naming the first differing index.
fn assert_bits(got: &[f32], want: &[f32], what: &str, index: impl Fn(usize) -> String) {
    assert_eq!(got.len(), want.len(), "{what}");
    let bad = got
        .iter()
        .zip(want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "{what}: {bad} of {} elements differ; first at {}: GPU {} ({:#010x}), CPU {}",
            got.len(),
            index(i),
            got[i],
            got[i].to_bits(),
            want[i]
        );
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn vector_add_matches_the_cpu() {
    let jit = jit();
    let targets = runnable(examples::vector_add::TARGETS);
    let mut runs = 0;
    // 1_000_003 = 3906 * 256 + 67; odd sizes below one vector too.
    for n in [1_000_003usize, 4097, 5, 3, 1] {
        let mut rng = Rng::new(0xadd ^ n as u64);
        let (a, b) = (rng.vec(n), rng.vec(n));
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let (da, db) = (jit.upload(&a).unwrap(), jit.upload(&b).unwrap());
        for &target in &targets {
            // One launch of `VEC` elements per thread: each `VEC` is a kernel of its own type.
            fn run<const VEC: usize>(
                jit: &Jit,
                target: Target,
                (da, db): (&CudaSlice<f32>, &CudaSlice<f32>),
                n: usize,
            ) -> (Vec<f32>, String) {
                let f = load(jit, VectorAddKernel::<VEC>::build(), target);
                let mut dc = poisoned(jit, n);
                let threads = n.div_ceil(VEC) as u32;
                let what = format!("vector_add VEC={VEC} {target} n={n}");
                let cfg = Launch::linear(threads, examples::vector_add::THREADS);
                VectorAddKernel::launch(f.with(&cfg), da, db, &mut dc, n as u32)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                (download(jit, &dc, n, &what), what)
            }
            for (got, what) in [
                run::<1>(&jit, target, (&da, &db), n),
                run::<2>(&jit, target, (&da, &db), n),
                run::<4>(&jit, target, (&da, &db), n),
            ] {
                assert_bits(&got, &want, &what, |i| format!("c[{i}]"));
                runs += 1;
            }
        }
    }
    println!(
        "vector_add: {runs} runs ({}; VEC 1, 2, 4; n = 1000003, 4097, 5, 3, 1) equal the CPU bit for bit",
        names(&targets)
    );
}

/// The typed launch compares each `#[len(..)]` with its buffer before the driver sees the launch:
/// `vector_add` over 16-element buffers with n = 2^24 is refused, and the output is untouched.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn a_launch_past_its_buffers_is_refused() {
    use codegen_ptx::jit::JitError;
    use dsl_core::kernel::signature::ExtentError;
    let jit = jit();
    let f = load(&jit, VectorAddKernel::<4>::build(), jit.target().unwrap());
    let (a, b) = (
        jit.upload(&[1.0f32; 16]).unwrap(),
        jit.upload(&[2.0f32; 16]).unwrap(),
    );
    let mut c = poisoned(&jit, 16);
    let n = 1u32 << 24;
    match VectorAddKernel::launch(f.with(&Launch::linear(n / 4, 256)), &a, &b, &mut c, n) {
        Err(JitError::Extent {
            error:
                ExtentError::TooShort {
                    param: "a",
                    need,
                    have: 16,
                    ..
                },
            ..
        }) => assert_eq!(need, 1 << 24),
        other => panic!("expected the launch refused for `a`, got {other:?}"),
    }
    let untouched = jit.download(&c).unwrap();
    assert!(untouched.iter().all(|v| v.to_bits() == POISON));
}

/// `out[i] = a[i] * s + t` with f16 and bf16 buffers and scalars: the JIT passes 16-bit floats
/// as kernel arguments (`.b16` parameters) and buffers of them.
#[kernel]
fn scale_half(
    #[len(n)] a: ConstPtr<half::f16>,
    #[len(n)] out: GlobalPtr<half::f16>,
    #[len(n)] b: ConstPtr<half::bf16>,
    #[len(n)] out_b: GlobalPtr<half::bf16>,
    s: Var<half::f16>,
    t: Var<half::bf16>,
    n: Var<u32>,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let x = a.load_at(i).cast::<f32>() * s.cast::<f32>();
        out.store_at(i, x.cast::<half::f16>());
        let y = b.load_at(i).cast::<f32>() + t.cast::<f32>();
        out_b.store_at(i, y.cast::<half::bf16>());
    }
}
// SAFETY: every access is at an index below `n`, checked against the four buffers.
unsafe impl TrustedKernel for ScaleHalfKernel {}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn half_scalars_and_buffers_are_kernel_arguments() {
    use half::{bf16, f16};
    let jit = jit();
    let f = load(&jit, ScaleHalfKernel::build(), jit.target().unwrap());
    let n = 1000usize;
    let a: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 / 8.0)).collect();
    let b: Vec<bf16> = (0..n).map(|i| bf16::from_f32(i as f32 - 500.0)).collect();
    let (da, db) = (jit.upload(&a).unwrap(), jit.upload(&b).unwrap());
    let mut out = jit.alloc_zeros::<f16>(n).unwrap();
    let mut out_b = jit.alloc_zeros::<bf16>(n).unwrap();
    let (s, t) = (f16::from_f32(-1.5), bf16::from_f32(0.25));
    let cfg = Launch::linear(n as u32, 128);
    ScaleHalfKernel::launch(f.with(&cfg), &da, &mut out, &db, &mut out_b, s, t, n as u32).unwrap();
    let (got, got_b) = (jit.download(&out).unwrap(), jit.download(&out_b).unwrap());
    for i in 0..n {
        let want = f16::from_f32(a[i].to_f32() * s.to_f32());
        let want_b = bf16::from_f32(b[i].to_f32() + t.to_f32());
        assert_eq!((got[i], got_b[i]), (want, want_b), "element {i}");
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn transpose_matches_the_cpu() {
    let jit = jit();
    let targets = runnable(examples::transpose::TARGETS);
    let tile = examples::transpose::TILE;
    let mut runs = 0;
    for (rows, cols) in [(1000usize, 777usize), (33, 1), (1, 65), (31, 32)] {
        let src = Rng::new(0x7 ^ (rows * cols) as u64).vec(rows * cols);
        let want = transpose_reference(&src, rows, cols);
        let dsrc = jit.upload(&src).unwrap();
        for &target in &targets {
            for block_rows in [8u32, 4] {
                let f = load(&jit, TransposeKernel::build(block_rows), target);
                let mut ddst = poisoned(&jit, rows * cols);
                let what = format!("transpose {rows}x{cols} {target} block 32x{block_rows}");
                let grid = (
                    (cols as u32).div_ceil(tile),
                    (rows as u32).div_ceil(tile),
                    1,
                );
                let cfg = Launch::new(grid, (tile, block_rows, 1));
                TransposeKernel::launch(f.with(&cfg), &dsrc, &mut ddst, rows as u32, cols as u32)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let got = download(&jit, &ddst, rows * cols, &what);
                assert_bits(&got, &want, &what, |i| {
                    format!("dst[{}][{}]", i / rows, i % rows)
                });
                runs += 1;
            }
        }
    }
    println!(
        "transpose: {runs} runs ({}; 1000x777, 33x1, 1x65, 31x32; blocks 32x8 and 32x4) equal the CPU bit for bit",
        names(&targets)
    );
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn reduce_sum_matches_the_cpu() {
    let jit = jit();
    let targets = runnable(examples::reduce_sum::TARGETS);
    let mut worst = 0.0f64;
    let mut runs = 0;
    for n in [123_457usize, 1000, 1] {
        let x = Rng::new(0x5u64 ^ n as u64).vec(n);
        let dx = jit.upload(&x).unwrap();
        let abs_sum: f64 = x.iter().map(|v| f64::from(v.abs())).sum();
        let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
        // f32 partial sums over a tree of depth ~log2(n): far inside 1e-5 of the absolute sum.
        let tol = 1e-5 * abs_sum + 1e-6;
        for &target in &targets {
            // 96 threads: three warps, not a power of two.
            for (threads, blocks) in [(256u32, 120u32), (96, 7), (256, 1)] {
                let f = load(&jit, ReduceSumKernel::build(threads), target);
                let what = format!("reduce_sum n={n} {target} {blocks}x{threads}");
                let mut partial = poisoned(&jit, blocks as usize);
                // reduce_sum writes `out[block]`: its safety depends on the grid, which its
                // signature cannot check, so it is not a `TrustedKernel`.
                let pass1 = Launch::new((blocks, 1, 1), (threads, 1, 1));
                // SAFETY: `x` is read below `n`, checked against it; `partial` holds `blocks`
                // elements, one per block of this grid.
                ReduceSumKernel::launch(
                    unsafe { f.with_unchecked(&pass1) },
                    &dx,
                    &mut partial,
                    n as u32,
                )
                .unwrap_or_else(|e| panic!("{what}, pass 1: {e}"));
                let mut out = poisoned(&jit, 1);
                let pass2 = Launch::new((1, 1, 1), (threads, 1, 1));
                // SAFETY: one block: `out` holds its one element; `partial` is read below `blocks`.
                ReduceSumKernel::launch(
                    unsafe { f.with_unchecked(&pass2) },
                    &partial,
                    &mut out,
                    blocks,
                )
                .unwrap_or_else(|e| panic!("{what}, pass 2: {e}"));
                // Pass 1 alone: block b sums the elements its threads visit in the grid stride.
                let parts = download(&jit, &partial, blocks as usize, &what);
                let (sums, mags) = block_sums(&x, threads, blocks);
                for (b, &p) in parts.iter().enumerate() {
                    let (want, abs) = (sums[b], mags[b]);
                    let err = (f64::from(p) - want).abs();
                    assert!(
                        err <= 1e-5 * abs + 1e-6,
                        "{what}: block {b} summed {p}, CPU {want} (error {err:e})"
                    );
                }
                let got = f64::from(download(&jit, &out, 1, &what)[0]);
                let err = (got - exact).abs();
                assert!(
                    err <= tol,
                    "{what}: GPU {got}, CPU {exact}, error {err:e} > {tol:e}"
                );
                worst = worst.max(err / abs_sum);
                runs += 1;
            }
        }
    }
    println!(
        "reduce_sum: {runs} runs ({}; n = 123457, 1000, 1; 120x256, 7x96, 1x256 blocks) within tolerance; worst |error| / sum|x| = {worst:.2e}",
        names(&targets)
    );
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn async_copy_matches_the_cpu() {
    let jit = jit();
    let targets = runnable(examples::async_copy::TARGETS);
    let mut runs = 0;
    for n in [500_001usize, 513, 3] {
        let src = Rng::new(0xc0 ^ n as u64).vec(n);
        let dsrc = jit.upload(&src).unwrap();
        for &target in &targets {
            for threads in [128u32, 96] {
                let chunks = (n as u32).div_ceil(threads * examples::async_copy::PER_THREAD);
                let f = load(&jit, AsyncCopyKernel::build(threads), target);
                // Few blocks (many chunks each: both buffers cycle), one per chunk, more than chunks.
                for blocks in [3, chunks, chunks + 5] {
                    let what = format!("async_copy n={n} {target} {blocks}x{threads}");
                    let mut ddst = poisoned(&jit, n);
                    let cfg = Launch::new((blocks, 1, 1), (threads, 1, 1));
                    AsyncCopyKernel::launch(f.with(&cfg), &dsrc, &mut ddst, n as u32)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let got = download(&jit, &ddst, n, &what);
                    assert_bits(&got, &src, &what, |i| format!("dst[{i}]"));
                    runs += 1;
                }
            }
        }
    }
    println!(
        "async_copy: {runs} runs ({}; n = 500001, 513, 3; 128 and 96 threads; 3 blocks, one per chunk, more than chunks) equal the CPU bit for bit",
        names(&targets)
    );
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_round_trip_matches_the_cpu() {
    let jit = jit();
    let targets = runnable(examples::tma_round_trip::TARGETS);
    assert_eq!(targets, [Target::Sm90a]);
    let mut runs = 0;
    for (rows, cols, tile_box) in [
        (300usize, 200usize, examples::tma_round_trip::BOX),
        (70, 44, TmaBox { rows: 16, cols: 8 }),
    ] {
        let src = Rng::new(0x3a ^ (rows * cols) as u64).vec(rows * cols);
        let dsrc = jit.upload(&src).unwrap();
        let spec = TensorMapSpec::row_major_2d(
            TmaDataType::F32,
            rows as u64,
            cols as u64,
            tile_box.rows,
            tile_box.cols,
        );
        let src_map = jit.tensor_map(&spec, &dsrc).unwrap();
        let grid = (
            (cols as u32).div_ceil(tile_box.cols),
            (rows as u32).div_ceil(tile_box.rows),
            1,
        );
        for &target in &targets {
            for negate in [false, true] {
                let what = format!(
                    "tma_round_trip {rows}x{cols} box {}x{} negate={negate} {target}",
                    tile_box.rows, tile_box.cols
                );
                let f = load(&jit, TmaRoundTripKernel::build(tile_box, negate), target);
                // The map covers `rows x cols`; the guard after it must stay poisoned.
                let mut ddst = poisoned(&jit, rows * cols);
                let dst_map = jit.tensor_map_mut(&spec, &mut ddst).unwrap();
                let cfg = Launch::new(grid, (examples::tma_round_trip::THREADS, 1, 1));
                TmaRoundTripKernel::launch(f.with(&cfg), &src_map, &dst_map)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                drop(dst_map);
                let got = download(&jit, &ddst, rows * cols, &what);
                let want: Vec<f32> = if negate {
                    src.iter().map(|v| -v).collect()
                } else {
                    src.clone()
                };
                assert_bits(&got, &want, &what, |i| {
                    format!("({}, {})", i / cols, i % cols)
                });
                runs += 1;
            }
        }
    }
    println!(
        "tma_round_trip: {runs} runs (sm_90a; 300x200 box 64x32, 70x44 box 16x8; plain and negated in shared memory) equal the CPU bit for bit"
    );
}

/// One warpgroup's `wgmma` on 64x64 f16 tiles from 128B-swizzled shared memory (descriptors
/// from `make_gmma_desc`): every element of D within 1e-5 of the f64 product (relative to the sum
/// of the magnitudes of its terms), for three input sets.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn wgmma_tile_matches_the_cpu() {
    let jit = jit();
    let tile = examples::wgmma_tile::WgmmaTile::new().unwrap();
    let f = load(&jit, WgmmaTileKernel::build(&tile), Target::Sm90a);
    let n = examples::wgmma_tile::TILE as usize;
    let mut worst = 0f64;
    for seed in [1u64, 2, 3] {
        let mut rng = Rng::new(0x3c3c ^ seed);
        let a: Vec<half::f16> = rng
            .vec(n * n)
            .into_iter()
            .map(half::f16::from_f32)
            .collect();
        let b: Vec<half::f16> = rng
            .vec(n * n)
            .into_iter()
            .map(half::f16::from_f32)
            .collect();
        let (da, db) = (jit.upload(&a).unwrap(), jit.upload(&b).unwrap());
        let mut dd = poisoned(&jit, n * n);
        let what = format!("wgmma_tile seed {seed}");
        let cfg = Launch::linear(examples::wgmma_tile::THREADS, examples::wgmma_tile::THREADS);
        WgmmaTileKernel::launch(f.with(&cfg), &mut dd, &da, &db)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = download(&jit, &dd, n * n, &what);
        let (sums, mags) = tile_product(&a, &b, n);
        for (i, (&sum, &mag)) in sums.iter().zip(&mags).enumerate() {
            let err = (f64::from(got[i]) - sum).abs() / mag;
            assert!(
                err < 1e-5,
                "{what}: D[{}][{}] = {} but the product is {sum}",
                i / n,
                i % n,
                got[i]
            );
            worst = worst.max(err);
        }
    }
    println!("wgmma_tile: 3 runs (64x64x64 f16, f32 sum, sm_90a) match f64, worst {worst:.2e} of the terms' magnitude");
}

/// The TMA pipeline (one producer warp, a ring of 4 stages, two consumer warpgroups) sums the
/// rows of matrices whose extents are not multiples of the 64x64 tile (columns a multiple of 4:
/// TMA's rows are 16-byte aligned), with 13 to 33 tiles per row strip (3 to 8 laps of the
/// ring): every row within 1e-5 of the f64 sum (relative to the sum of the magnitudes), the
/// output poisoned with a guard after it.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_pipeline_matches_the_cpu() {
    use kernels::examples::tma_pipeline::{self as tp, RowSum};
    let jit = jit();
    let cfg = RowSum::new().unwrap();
    let f = load(&jit, TmaPipelineKernel::build(&cfg), Target::Sm90a);
    let mut worst = 0f64;
    let mut runs = 0;
    for (rows, cols) in [
        (1000usize, 836usize),
        (333, 2052),
        (64, 12 * 64 + 4),
        (1, 780),
    ] {
        let laps = cols.div_ceil(64) as f64 / f64::from(tp::STAGES);
        assert!(laps >= 3.0, "{rows}x{cols} laps the ring {laps} times");
        let x = Rng::new(0x7e ^ (rows * cols) as u64).vec(rows * cols);
        let dx = jit.upload(&x).unwrap();
        let desc = cfg
            .tma
            .descriptor(&[rows as u64, cols as u64], &[cols as u64, 1])
            .unwrap();
        let spec = codegen_ptx::jit::tensor_map_spec(&desc).unwrap();
        let map = jit.tensor_map(&spec, &dx).unwrap();
        let mut out = poisoned(&jit, rows);
        let what = format!("tma_pipeline {rows}x{cols}");
        let launch = Launch::new(tp::launch_grid(rows as u32), (tp::THREADS, 1, 1))
            .with_dynamic_smem(tp::SMEM_BYTES);
        TmaPipelineKernel::launch(f.with(&launch), &mut out, &map, rows as u32, cols as u32)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = download(&jit, &out, rows, &what);
        let (sums, mags) = row_sums(&x, cols);
        for r in 0..rows {
            let (sum, mag) = (sums[r], mags[r]);
            let err = (f64::from(got[r]) - sum).abs() / mag;
            assert!(
                err < 1e-5,
                "{what}: row {r} is {} but the sum is {sum}",
                got[r]
            );
            worst = worst.max(err);
        }
        runs += 1;
    }
    println!("tma_pipeline: {runs} runs (1000x836, 333x2052, 64x772, 1x780: 3-8 laps of the 4-stage ring) match f64, worst {worst:.2e} of the terms' magnitude");
}

/// The TMA stream configurations of `RUTE_STREAM` (comma-separated `rows:stages:lag:promotion`,
/// e.g. `64:6:2:256`), or five around the short-K GEMM's ring.
fn stream_configs() -> Vec<(u32, u32, u32, u32)> {
    let spec = std::env::var("RUTE_STREAM")
        .unwrap_or_else(|_| "64:6:2:256,64:8:2:256,64:6:2:0,64:6:0:256,128:4:1:256".into());
    spec.split(',')
        .map(|c| {
            let v: Vec<u32> = c
                .trim()
                .split(':')
                .map(|x| {
                    x.parse()
                        .unwrap_or_else(|_| panic!("`{c}` is rows:stages:lag:promotion"))
                })
                .collect();
            assert_eq!(v.len(), 4, "`{c}` is rows:stages:lag:promotion");
            (v[0], v[1], v[2], v[3])
        })
        .collect()
}

/// The TMA stream (`D = A` through shared memory in the short-K GEMM's k-tiles, persistent over
/// the SMs): for each configuration of [`stream_configs`], D equals A bit for bit (its guard
/// untouched) at 1000 x 200 (neither extent a multiple of the tile) and 81920 x 256; then every
/// configuration and the device's own copy of as many bytes are timed in one interleaved loop
/// over two input sets past L2, median of 30, and their rates printed: what TMA reaches in this
/// pattern, against the copy's ceiling. With `RUTE_STREAM_SMALL` set (for compute-sanitizer),
/// only 1000 x 200, untimed.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_stream_copies_and_is_timed_beside_a_device_copy() {
    use codegen_ptx::jit::{tensor_map_spec, TmaL2Promotion};
    use kernels::examples::tma_stream::{self as ts, TmaStream};
    let jit = jit();
    let sms = jit.limits().multiprocessors;
    let streams: Vec<(TmaStream, TmaL2Promotion, TypedFunction<TmaStreamKernel>)> =
        stream_configs()
            .into_iter()
            .map(|(rows, stages, lag, promotion)| {
                let cfg = TmaStream::new(rows, stages, lag).unwrap_or_else(|e| panic!("{e}"));
                let promotion = TmaL2Promotion::from_bytes(promotion)
                    .unwrap_or_else(|| panic!("an L2 promotion of {promotion} bytes"));
                let f = load(&jit, TmaStreamKernel::build(&cfg), Target::Sm90a);
                (cfg, promotion, f)
            })
            .collect();
    let name = |cfg: &TmaStream, p: TmaL2Promotion| {
        format!(
            "{} stages of {} rows, stores {} behind, L2 promotion {}",
            cfg.stages,
            cfg.rows,
            cfg.lag,
            p.bytes()
        )
    };
    // Queues one stream of `a` into `d` (`rows x cols`).
    let launch = |(cfg, p, f): &(TmaStream, TmaL2Promotion, TypedFunction<TmaStreamKernel>),
                  (rows, cols): (usize, usize),
                  a: &CudaSlice<u16>,
                  d: &mut CudaSlice<u16>| {
        let [ad, dd] = cfg.descriptors(rows as u64, cols as u64, *p).unwrap();
        let a_map = jit.tensor_map(&tensor_map_spec(&ad).unwrap(), a).unwrap();
        let d_map = jit
            .tensor_map_mut(&tensor_map_spec(&dd).unwrap(), d)
            .unwrap();
        let (tiles, k_tiles) = cfg.tiles(rows as u32, cols as u32);
        let grid = tiles.min(sms);
        let shape =
            Launch::new((grid, 1, 1), (ts::THREADS, 1, 1)).with_dynamic_smem(cfg.smem_bytes());
        TmaStreamKernel::launch(f.with(&shape), &a_map, &d_map, tiles, k_tiles)
    };
    let mut rng = Rng::new(0x57);
    let mut bits =
        |n: usize| -> Vec<u16> { (0..n).map(|_| (rng.f32().to_bits() >> 9) as u16).collect() };
    // Under compute-sanitizer (`RUTE_STREAM_SMALL=1`): the small shape only, untimed.
    let small = std::env::var_os("RUTE_STREAM_SMALL").is_some();
    let shapes: &[(usize, usize)] = if small {
        &[(1000, 200)]
    } else {
        &[(1000, 200), (81920, 256)]
    };
    for &(rows, cols) in shapes {
        let src = bits(rows * cols);
        let a = jit.upload(&src).unwrap();
        for s in &streams {
            let what = format!("tma_stream {rows}x{cols}, {}", name(&s.0, s.1));
            let mut d = jit.upload(&vec![0xFFFFu16; rows * cols + GUARD]).unwrap();
            launch(s, (rows, cols), &a, &mut d).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = jit.download(&d).unwrap_or_else(|e| panic!("{what}: {e}"));
            let wrong = (0..rows * cols).find(|&i| got[i] != src[i]);
            assert!(
                wrong.is_none(),
                "{what}: D differs from A at ({}, {})",
                wrong.unwrap_or(0) / cols,
                wrong.unwrap_or(0) % cols
            );
            assert!(
                got[rows * cols..].iter().all(|&g| g == 0xFFFF),
                "{what}: written past the end"
            );
        }
    }
    if small {
        return;
    }
    // Timing: two sets of A (42 MB each), each with a D per stream and one for the copy.
    let (rows, cols) = (81920usize, 256usize);
    let sets: Vec<CudaSlice<u16>> = (0..2)
        .map(|_| jit.upload(&bits(rows * cols)).unwrap())
        .collect();
    let mut outs: Vec<Vec<CudaSlice<u16>>> = (0..=streams.len())
        .map(|_| {
            (0..sets.len())
                .map(|_| jit.alloc_zeros::<u16>(rows * cols).unwrap())
                .collect()
        })
        .collect();
    let timings = jit
        .time_interleaved(30, streams.len() + 1, |piece| {
            let outs = &mut outs[piece];
            for (a, d) in sets.iter().zip(outs.iter_mut()) {
                match streams.get(piece) {
                    Some(s) => launch(s, (rows, cols), a, d)?,
                    None => jit.copy(a, d)?,
                }
            }
            Ok(())
        })
        .unwrap();
    let bytes = (2 * rows * cols * 2) as f64;
    let rate = |i: usize| bytes / (f64::from(timings[i].median_ms()) / sets.len() as f64 * 1e6);
    let copy = rate(streams.len());
    println!("| {rows} x {cols}, 16-bit | us | GB/s | of the copy's |");
    println!("| --- | ---: | ---: | ---: |");
    for (i, s) in streams.iter().enumerate() {
        println!(
            "| {} | {:.1} | {:.0} | {:.3} |",
            name(&s.0, s.1),
            f64::from(timings[i].median_ms()) * 1e3 / sets.len() as f64,
            rate(i),
            rate(i) / copy
        );
    }
    println!(
        "| the device copy | {:.1} | {copy:.0} | 1.000 |",
        f64::from(timings[streams.len()].median_ms()) * 1e3 / sets.len() as f64
    );
    assert!(copy > 0.0 && (0..streams.len()).all(|i| rate(i) > 0.0));
}

fn names(targets: &[Target]) -> String {
    let n: Vec<&str> = targets.iter().map(|t| t.name()).collect();
    n.join(" and ")
}
