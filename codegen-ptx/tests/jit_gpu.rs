//! The JIT runtime on a real GPU (feature `gpu`; ignored otherwise). Every test opens device 0
//! and fails loudly without one. Results are compared with a CPU reference on pseudo-random
//! data whose sizes are not multiples of the block or the tile.
//!
//! The file is over 800 lines for one reason: every untyped launch of the hand-written PTX in
//! `jit_ptx/` is `unsafe` and says why it holds; the tests stay one binary, which
//! `scripts/gpu_run.sh` runs.
#![cfg(feature = "jit")]

use std::sync::Arc;

use codegen_ptx::jit::{
    CudaContext, DevicePtr, ForeignReason, Jit, JitError, KernelArg, Launch, LaunchError,
    TensorMapError, TensorMapSpec, TmaDataType, TmaOobFill, TmaSwizzle,
};

mod jit_ptx;

use jit_ptx::{BAD, BIG_SMEM, CLUSTER, REQNTID, TMA, VADD};

fn jit() -> Jit {
    match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => panic!("the GPU tests need an NVIDIA GPU: {e}"),
    }
}

/// xorshift64*: reproducible pseudo-random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1), never exactly zero (so a zero in an output means "not written").
    fn f32(&mut self) -> f32 {
        let v = (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
        if v == 0.0 {
            0.5
        } else {
            v
        }
    }

    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

fn launch_vadd(jit: &Jit, n: u32, block: u32) -> Result<(Vec<f32>, Vec<f32>), JitError> {
    let mut rng = Rng(0x5eed ^ u64::from(n));
    let a = rng.vec(n as usize);
    let b = rng.vec(n as usize);
    let (da, db) = (jit.upload(&a)?, jit.upload(&b)?);
    let mut dc = jit.alloc_zeros::<f32>(n as usize)?;
    let vadd = jit.load(VADD)?.function("vadd")?;
    // SAFETY: vadd (jit_ptx/vadd.ptx) reads a[i] and b[i] and writes c[i], f32s, for i below its
    // last argument, which is the buffers' length; only c is passed writable.
    unsafe {
        vadd.launch(
            &Launch::linear(n, block),
            &[
                jit.buffer(&da),
                jit.buffer(&db),
                jit.buffer_mut(&mut dc),
                KernelArg::U32(n),
            ],
        )
    }?;
    let got = jit.download(&dc)?;
    let want = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Ok((got, want))
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn device_is_described() {
    let jit = jit();
    let limits = *jit.limits();
    let name = jit.device_name().expect("device name");
    println!(
        "device: {name}, cc {}.{}, {} SMs, driver {}, opt-in smem {} B, clusters {}",
        limits.compute_capability.0,
        limits.compute_capability.1,
        limits.multiprocessors,
        jit.driver_version(),
        limits.max_smem_per_block_optin,
        limits.cluster_launch
    );
    assert!(limits.max_threads_per_block >= 1024);
    assert!(limits.multiprocessors > 0);
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn vector_add_matches_cpu_with_a_tail() {
    let jit = jit();
    // 100_003 = 390 * 256 + 163: the last block has 93 idle threads.
    for (n, block) in [(100_003, 256), (1, 128), (4097, 1024)] {
        let (got, want) = launch_vadd(&jit, n, block).expect("vadd runs");
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "n={n}: c[{i}] = {g}, CPU says {w}"
            );
        }
    }
}

/// The device copy moves every element into the start of a longer destination, leaves the rest,
/// and refuses a destination shorter than its source before queuing anything.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn device_copy_moves_the_source_and_refuses_a_short_destination() {
    let jit = jit();
    let src = Rng(0xc0b1).vec(100_003);
    let d_src = jit.upload(&src).unwrap();
    let mut d_dst = jit.upload(&vec![7.0f32; 100_010]).unwrap();
    jit.copy(&d_src, &mut d_dst).expect("the copy runs");
    let got = jit.download(&d_dst).unwrap();
    assert_eq!(&got[..src.len()], &src[..]);
    assert!(got[src.len()..].iter().all(|&v| v == 7.0));
    let mut short = jit.alloc_zeros::<f32>(100_002).unwrap();
    let e = jit.copy(&d_src, &mut short).unwrap_err().to_string();
    assert!(
        e.contains("holds 100002 elements, fewer than the source's 100003"),
        "{e}"
    );
    assert!(jit.download(&short).unwrap().iter().all(|&v| v == 0.0));
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn bad_ptx_is_rejected_with_the_jit_log() {
    let jit = jit();
    let before = jit.cached_modules();
    match jit.load(BAD) {
        Err(JitError::Rejected { code, log }) => {
            println!("rejected ({code}):\n{log}");
            assert!(code.starts_with("CUDA_ERROR_"), "{code}");
            assert!(
                log.contains("frobnicate"),
                "the log should name the bad instruction: {log}"
            );
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(
        jit.cached_modules(),
        before,
        "a rejected module is not cached"
    );
    // A NUL byte is refused before the driver sees the text.
    assert_eq!(
        jit.load("abc\0def").map(|_| ()),
        Err(JitError::PtxHasNul { offset: 3 })
    );
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn missing_kernel_and_wrong_arguments_are_typed_errors() {
    let jit = jit();
    let module = jit.load(VADD).expect("vadd loads");
    match module.function("vsub") {
        Err(JitError::NoSuchKernel { name, available }) => {
            assert_eq!(name, "vsub");
            assert_eq!(available, "vadd");
        }
        other => panic!("expected NoSuchKernel, got {other:?}"),
    }
    let vadd = module.function("vadd").expect("vadd");
    let buf = jit.alloc_zeros::<f32>(16).expect("alloc");
    let p = || jit.buffer(&buf);
    let cfg = Launch::linear(16, 32);
    assert_eq!(
        // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
        // kernel runs.
        unsafe { vadd.launch(&cfg, &[p(), p(), p()]) },
        Err(JitError::ArgumentCount {
            kernel: "vadd".into(),
            expected: 4,
            given: 3
        })
    );
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe { vadd.launch(&cfg, &[p(), p(), p(), KernelArg::U64(16)]) } {
        Err(JitError::ArgumentKind {
            index: 3,
            expected: 4,
            given: 8,
            ..
        }) => {}
        other => panic!("expected ArgumentKind, got {other:?}"),
    }
    // Same size, other kind: checked on every driver, from the PTX.
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe { vadd.launch(&cfg, &[p(), p(), p(), KernelArg::F32(16.0)]) } {
        Err(JitError::ArgumentKind { index: 3, .. }) => {}
        other => panic!("expected ArgumentKind, got {other:?}"),
    }
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        vadd.launch(
            &Launch::new((1, 1, 1), (2048, 1, 1)),
            &[p(), p(), p(), 16u32.into()],
        )
    } {
        Err(JitError::InvalidLaunch {
            error:
                LaunchError::BlockAxisTooLarge {
                    axis: "x",
                    value: 2048,
                    max: 1024,
                },
            ..
        }) => {}
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // Each axis within its limit, but too many threads in all.
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        vadd.launch(
            &Launch::new((1, 1, 1), (64, 64, 1)),
            &[p(), p(), p(), 16u32.into()],
        )
    } {
        Err(JitError::InvalidLaunch {
            error: LaunchError::TooManyThreads { threads: 4096, .. },
            ..
        }) => {}
        other => panic!("expected TooManyThreads, got {other:?}"),
    };
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn driver_refusals_come_back_as_launch_errors() {
    let jit = jit();
    let kernel = jit.load(REQNTID).unwrap().function("fixed_block").unwrap();
    let mut out = jit.alloc_zeros::<u32>(128).unwrap();
    // The block it was compiled for runs.
    // SAFETY: fixed_block writes out[tid] (a u32) for its 128 threads; out holds 128.
    unsafe {
        kernel.launch(
            &Launch::new((1, 1, 1), (128, 1, 1)),
            &[jit.buffer_mut(&mut out)],
        )
    }
    .unwrap();
    assert_eq!(jit.download(&out).unwrap(), (0..128).collect::<Vec<u32>>());
    // A block other than .reqntid's: the driver does not lower the function's thread limit to it
    // (seen on the H200: MAX_THREADS_PER_BLOCK stays 1024), so the refusal comes from the launch.
    for threads in [256, 64] {
        // SAFETY: the driver refuses a block other than .reqntid's (what this test checks), so the
        // kernel never runs.
        match unsafe {
            kernel.launch(
                &Launch::new((1, 1, 1), (threads, 1, 1)),
                &[jit.buffer_mut(&mut out)],
            )
        } {
            Err(JitError::Launch { kernel, reason }) => {
                println!(
                    "driver refusal at {threads} threads: launch of `{kernel}` failed: {reason}"
                );
                assert_eq!(kernel, "fixed_block");
                assert!(reason.starts_with("CUDA_ERROR_"), "{reason}");
            }
            other => panic!("expected JitError::Launch, got {other:?}"),
        }
    }
    // The refusal leaves the context usable.
    let (got, want) = launch_vadd(&jit, 777, 64).unwrap();
    assert_eq!(got, want);
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn dynamic_shared_memory_above_48_kib() {
    let jit = jit();
    let kernel = jit.load(BIG_SMEM).unwrap().function("big_smem").unwrap();
    let (blocks, threads) = (3u32, 256u32);
    for bytes in [100 * 1024u32, jit.limits().max_smem_per_block_optin] {
        let mut out = jit.alloc_zeros::<u32>((blocks * threads) as usize).unwrap();
        // SAFETY: big_smem writes one u32 per thread into out, which holds blocks * threads.
        unsafe {
            kernel.launch(
                &Launch::new((blocks, 1, 1), (threads, 1, 1)).with_dynamic_smem(bytes),
                &[jit.buffer_mut(&mut out), KernelArg::U32(bytes)],
            )
        }
        .unwrap_or_else(|e| panic!("{bytes} bytes of dynamic smem: {e}"));
        let got = jit.download(&out).unwrap();
        for (i, &g) in got.iter().enumerate() {
            let t = i as u32 % threads;
            assert_eq!(g, threads - t, "bytes={bytes}: out[{i}]");
        }
    }
    let too_much = jit.limits().max_smem_per_block_optin + 1;
    let mut out = jit.alloc_zeros::<u32>(1).unwrap();
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        kernel.launch(
            &Launch::new((1, 1, 1), (32, 1, 1)).with_dynamic_smem(too_much),
            &[jit.buffer_mut(&mut out), KernelArg::U32(too_much)],
        )
    } {
        Err(JitError::InvalidLaunch {
            error: LaunchError::SharedMemoryTooLarge { dynamic, .. },
            ..
        }) => assert_eq!(dynamic, too_much),
        other => panic!("expected SharedMemoryTooLarge, got {other:?}"),
    };
}

/// Launches `name` from cluster.ptx and returns (rank, cluster size) per block.
fn cluster_ranks(jit: &Jit, name: &str, cfg: &Launch) -> Result<Vec<(u32, u32)>, JitError> {
    let kernel = jit.load(CLUSTER)?.function(name)?;
    let blocks = cfg.grid.0 as usize;
    let mut out = jit.upload(&vec![u32::MAX; 2 * blocks])?;
    // SAFETY: the cluster kernels write two u32s per block into out, which holds 2 * blocks.
    unsafe { kernel.launch(cfg, &[jit.buffer_mut(&mut out)]) }?;
    let raw = jit.download(&out)?;
    Ok(raw.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

fn expected_ranks(blocks: u32, cluster: u32) -> Vec<(u32, u32)> {
    (0..blocks).map(|b| (b % cluster, cluster)).collect()
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn cluster_launches_report_cluster_ranks() {
    let jit = jit();
    let block = (32, 1, 1);
    // Compile-time shape, plain launch.
    let got = cluster_ranks(&jit, "cluster_fixed", &Launch::new((8, 1, 1), block)).unwrap();
    assert_eq!(got, expected_ranks(8, 2));
    // Compile-time shape restated by the launch.
    let cfg = Launch::new((8, 1, 1), block).with_cluster((2, 1, 1));
    assert_eq!(
        cluster_ranks(&jit, "cluster_fixed", &cfg).unwrap(),
        expected_ranks(8, 2)
    );
    // Launch-time shape through cuLaunchKernelEx.
    let cfg = Launch::new((12, 1, 1), block).with_cluster((4, 1, 1));
    assert_eq!(
        cluster_ranks(&jit, "cluster_any", &cfg).unwrap(),
        expected_ranks(12, 4)
    );
    // No cluster: every block is its own cluster of one.
    let cfg = Launch::new((5, 1, 1), block);
    assert_eq!(
        cluster_ranks(&jit, "cluster_any", &cfg).unwrap(),
        expected_ranks(5, 1)
    );
    // Typed refusals.
    let cfg = Launch::new((7, 1, 1), block);
    match cluster_ranks(&jit, "cluster_fixed", &cfg) {
        Err(JitError::InvalidLaunch {
            error:
                LaunchError::ClusterDoesNotDivideGrid {
                    grid: 7,
                    cluster: 2,
                    ..
                },
            ..
        }) => {}
        other => panic!("expected ClusterDoesNotDivideGrid, got {other:?}"),
    }
    let cfg = Launch::new((8, 1, 1), block).with_cluster((4, 1, 1));
    match cluster_ranks(&jit, "cluster_fixed", &cfg) {
        Err(JitError::InvalidLaunch {
            error: LaunchError::ClusterMismatch { .. },
            ..
        }) => {}
        other => panic!("expected ClusterMismatch, got {other:?}"),
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn non_portable_cluster_of_16() {
    let jit = jit();
    let cfg = Launch::new((32, 1, 1), (32, 1, 1))
        .with_cluster((16, 1, 1))
        .allow_non_portable_cluster();
    assert_eq!(
        cluster_ranks(&jit, "cluster_any", &cfg).unwrap(),
        expected_ranks(32, 16)
    );
}

const ROWS: u32 = 100;
const COLS: u32 = 68;
const BOX_ROWS: u32 = 16;
const BOX_COLS: u32 = 32;

/// The f32 `ROWS x COLS` row-major matrix the TMA tests copy, in boxes of `BOX_ROWS x BOX_COLS`.
fn tma_spec() -> TensorMapSpec {
    TensorMapSpec::row_major_2d(
        TmaDataType::F32,
        u64::from(ROWS),
        u64::from(COLS),
        BOX_ROWS,
        BOX_COLS,
    )
}

fn tma_grid() -> (u32, u32, u32) {
    (COLS.div_ceil(BOX_COLS), ROWS.div_ceil(BOX_ROWS), 1)
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_2d_load_places_the_box_row_major_and_fills_out_of_bounds() {
    let jit = jit();
    let kernel = jit.load(TMA).unwrap().function("tma_load_2d").unwrap();
    let input = Rng(42).vec((ROWS * COLS) as usize);
    let d_in = jit.upload(&input).unwrap();
    let grid = tma_grid();
    let boxed = grid.0 * grid.1 * BOX_ROWS * BOX_COLS;
    let outside = boxed - ROWS * COLS;
    for (fill, want_nonzero) in [
        (TmaOobFill::Zero, 0),
        (TmaOobFill::NanRequestZeroFma, outside),
    ] {
        let spec = tma_spec().with_oob_fill(fill);
        let map = jit.tensor_map(&spec, &d_in).expect("encode");
        let mut out = jit.upload(&vec![-7.0f32; (ROWS * COLS) as usize]).unwrap();
        let mut nonzero = jit.alloc_zeros::<u32>(1).unwrap();
        // SAFETY: the kernel loads boxes through `map` (over d_in, whose extent the map checked) and
        // writes out[r * COLS + c] for r < ROWS, c < COLS (out holds ROWS * COLS) and nonzero[0].
        unsafe {
            kernel.launch(
                &Launch::new(grid, (128, 1, 1)),
                &[
                    (&map).into(),
                    jit.buffer_mut(&mut out),
                    jit.buffer_mut(&mut nonzero),
                    KernelArg::U32(ROWS),
                    KernelArg::U32(COLS),
                ],
            )
        }
        .unwrap();
        let got = jit.download(&out).unwrap();
        for (i, (g, w)) in got.iter().zip(&input).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{fill:?}: element ({}, {})",
                i as u32 / COLS,
                i as u32 % COLS
            );
        }
        assert_eq!(jit.download(&nonzero).unwrap(), [want_nonzero], "{fill:?}");
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_2d_round_trip_plain_and_swizzled() {
    let jit = jit();
    let kernel = jit.load(TMA).unwrap().function("tma_roundtrip_2d").unwrap();
    let input = Rng(7).vec((ROWS * COLS) as usize);
    let d_in = jit.upload(&input).unwrap();
    for swizzle in [TmaSwizzle::None, TmaSwizzle::B128] {
        let mut d_out = jit.upload(&vec![-7.0f32; (ROWS * COLS) as usize]).unwrap();
        let spec = tma_spec().with_swizzle(swizzle);
        let map_in = jit.tensor_map(&spec, &d_in).unwrap();
        let map_out = jit.tensor_map_mut(&spec, &mut d_out).unwrap();
        // SAFETY: the kernel copies boxes through map_in (over d_in) to map_out (over d_out, borrowed
        // mutably); both maps' extents were checked against their buffers.
        unsafe {
            kernel.launch(
                &Launch::new(tma_grid(), (32, 1, 1)),
                &[(&map_in).into(), (&map_out).into()],
            )
        }
        .unwrap();
        // The map borrows d_out mutably (the TMA store writes it) until it is dropped.
        drop(map_out);
        let got = jit.download(&d_out).unwrap();
        for (i, (g, w)) in got.iter().zip(&input).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{swizzle:?}: element {i}");
        }
    }
}

/// Spec errors come before the driver, and the map must fit the buffer it is encoded over:
/// before the map took its buffer, any address and extent were encoded, and a TMA store
/// through such a map writes wherever they say.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn tma_spec_errors_come_before_the_driver() {
    let jit = jit();
    let spec = TensorMapSpec::row_major_2d(TmaDataType::F32, 64, 64, 8, 32);
    let buf = jit.alloc_zeros::<f32>(64 * 64 + 1).unwrap();
    let (base, _read) = buf.device_ptr(jit.stream());
    // A view one f32 in: 4 bytes off the 16-byte alignment TMA needs.
    let view = buf.slice(1..);
    match jit.tensor_map(&spec, &view) {
        Err(JitError::TensorMap(TensorMapError::MisalignedAddress { address, align: 16 })) => {
            assert_eq!(address, base + 4)
        }
        other => panic!("expected MisalignedAddress, got {other:?}"),
    }
    // One element short of the 64 x 64 tensor.
    let short = jit.alloc_zeros::<f32>(64 * 64 - 1).unwrap();
    assert_eq!(
        jit.tensor_map(&spec, &short).map(|_| ()),
        Err(JitError::TensorMap(TensorMapError::ExceedsBuffer {
            needs: 64 * 64 * 4,
            bytes: 64 * 64 * 4 - 4
        }))
    );
    assert!(jit.tensor_map(&spec, &buf).is_ok());
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn module_cache_returns_the_same_module() {
    let jit = jit();
    let first = jit.load(VADD).unwrap();
    // An equal text in another allocation: the cache compares text, not addresses.
    let copy = String::from(VADD);
    let second = jit.load(copy.as_str()).unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    let other = jit.load(&format!("{VADD}\n// another text\n")).unwrap();
    assert!(!Arc::ptr_eq(&first, &other));
    assert_ne!(first.hash(), other.hash());
    // Many threads asking at once still share one module.
    let jit = Arc::new(jit);
    let text = format!("{VADD}\n// threads\n");
    let modules: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| jit.load(&text).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for m in &modules {
        assert!(Arc::ptr_eq(m, &modules[0]));
    }
    // Functions from a module loaded on another thread launch here.
    let (got, want) = launch_vadd(&jit, 1000, 128).unwrap();
    assert_eq!(got, want);
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn event_timing_measures_a_launch() {
    let jit = jit();
    let n = 1 << 24;
    let a = jit.alloc_zeros::<f32>(n).unwrap();
    let mut c = jit.alloc_zeros::<f32>(n).unwrap();
    let vadd = jit.load(VADD).unwrap().function("vadd").unwrap();
    let args = [
        jit.buffer(&a),
        jit.buffer(&a),
        jit.buffer_mut(&mut c),
        KernelArg::U32(n as u32),
    ];
    let timing = jit
        // SAFETY: vadd (jit_ptx/vadd.ptx) reads a[i] and b[i] and writes c[i], f32s, for i below its
        // last argument, which is the buffers' length; only c is passed writable.
        .time(20, || unsafe {
            vadd.launch(&Launch::linear(n as u32, 256), &args)
        })
        .unwrap();
    let ms = timing.median_ms();
    let gbps = (3 * 4 * n) as f64 / (f64::from(ms) * 1e-3) / 1e9;
    println!(
        "vadd of 2^24 f32: median {ms:.4} ms (min {:.4}, max {:.4}), {gbps:.0} GB/s",
        timing.min_ms(),
        timing.max_ms()
    );
    assert_eq!(timing.samples_ms.len(), 20);
    assert!(ms > 0.0 && ms.is_finite());
}

/// Shuffled rounds call the pieces in `shuffled_order`'s order after one warm-up round in
/// order, and each sample lands with its own piece: a piece with four times the work times
/// longer than the piece with one.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn shuffled_timing_keeps_each_sample_with_its_piece() {
    let jit = jit();
    let n = 1 << 22;
    let a = jit.alloc_zeros::<f32>(4 * n).unwrap();
    let mut c = jit.alloc_zeros::<f32>(4 * n).unwrap();
    let vadd = jit.load(VADD).unwrap().function("vadd").unwrap();
    let sizes = [n, 2 * n, 4 * n];
    let mut calls = Vec::new();
    let timings = jit
        .time_shuffled(12, sizes.len(), 5, |piece| {
            calls.push(piece);
            let len = sizes[piece] as u32;
            let args = [
                jit.buffer(&a),
                jit.buffer(&a),
                jit.buffer_mut(&mut c),
                KernelArg::U32(len),
            ];
            // SAFETY: vadd (jit_ptx/vadd.ptx) reads a[i] and b[i] and writes c[i], f32s, for i below its
            // last argument, which is the buffers' length; only c is passed writable.
            unsafe { vadd.launch(&Launch::linear(len, 256), &args) }
        })
        .unwrap();
    let mut want: Vec<usize> = (0..sizes.len()).collect();
    for round in 0..12 {
        want.extend(codegen_ptx::jit::shuffled_order(5, round, sizes.len()));
    }
    assert_eq!(calls, want);
    let ms: Vec<f32> = timings.iter().map(|t| t.median_ms()).collect();
    println!("vadd of 2^22, 2^23, 2^24 f32, shuffled: {ms:?} ms");
    assert!(timings.iter().all(|t| t.samples_ms.len() == 12));
    assert!(
        ms[0] < ms[1] && ms[1] < ms[2] && ms[2] > 2.0 * ms[0],
        "{ms:?}"
    );
}

/// A buffer of another CUDA context, or of a default stream that event tracking cannot order
/// with the Jit's, is refused with both owners named; the launch queues nothing.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn buffers_that_cannot_be_ordered_are_refused() {
    let jit = jit();
    let vadd = jit.load(VADD).unwrap().function("vadd").unwrap();
    let own = jit.upload(&[1.0f32; 64]).unwrap();
    let mut out = jit.alloc_zeros::<f32>(64).unwrap();
    let other = CudaContext::new_non_primary(0, 0).expect("a second context on device 0");
    let foreign = other
        .new_stream()
        .unwrap()
        .clone_htod(&[2.0f32; 64])
        .unwrap();
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        vadd.launch(
            &Launch::linear(64, 64),
            &[
                jit.buffer(&own),
                jit.buffer(&foreign),
                jit.buffer_mut(&mut out),
                64u32.into(),
            ],
        )
    } {
        Err(e @ JitError::ForeignBuffer { .. }) => {
            let JitError::ForeignBuffer { buffer, error } = &e else {
                unreachable!()
            };
            println!("{e}");
            assert_eq!(buffer, "argument 1 of `vadd`");
            assert_eq!(error.reason, ForeignReason::OtherContext);
            assert_eq!(error.owner.context, other.cu_ctx() as usize);
            assert_eq!(error.jit, jit.owner());
        }
        other => panic!("expected ForeignBuffer, got {other:?}"),
    }
    assert_eq!(
        jit.download(&out).unwrap(),
        vec![0.0; 64],
        "a refused launch ran"
    );
    assert!(matches!(
        jit.download(&foreign),
        Err(JitError::ForeignBuffer { .. })
    ));
}

/// A buffer of the Jit's context but of a default stream, which event tracking cannot order with
/// the Jit's stream, is refused; the launch queues nothing. (Apart from the other-context case:
/// creating a second context on this thread changes which context is current.)
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn buffers_of_a_default_stream_are_refused() {
    let jit = jit();
    let vadd = jit.load(VADD).unwrap().function("vadd").unwrap();
    let own = jit.upload(&[1.0f32; 64]).unwrap();
    let mut out = jit.alloc_zeros::<f32>(64).unwrap();
    // Same context through another cudarc handle, but on its default stream.
    let handle = CudaContext::new(0).unwrap();
    let on_default = handle.default_stream().clone_htod(&[2.0f32; 64]).unwrap();
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        vadd.launch(
            &Launch::linear(64, 64),
            &[
                jit.buffer(&own),
                jit.buffer(&on_default),
                jit.buffer_mut(&mut out),
                64u32.into(),
            ],
        )
    } {
        Err(JitError::ForeignBuffer { buffer, error }) => {
            assert_eq!(buffer, "argument 1 of `vadd`");
            assert_eq!(error.reason, ForeignReason::DefaultStream);
        }
        other => panic!("expected ForeignBuffer, got {other:?}"),
    }
    assert_eq!(
        jit.download(&out).unwrap(),
        vec![0.0; 64],
        "a refused launch ran"
    );
}

/// An argument made by one Jit carries that Jit's stream ordering; another Jit's kernel refuses
/// it rather than launch unordered.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn arguments_made_by_another_jit_are_refused() {
    let (first, second) = (jit(), jit());
    let vadd = first.load(VADD).unwrap().function("vadd").unwrap();
    let a = first.upload(&[1.0f32; 32]).unwrap();
    let mut c = first.alloc_zeros::<f32>(32).unwrap();
    // SAFETY: the launch is refused before the driver sees it (what this test checks), so no
    // kernel runs.
    match unsafe {
        vadd.launch(
            &Launch::linear(32, 32),
            &[
                first.buffer(&a),
                second.buffer(&a),
                first.buffer_mut(&mut c),
                32u32.into(),
            ],
        )
    } {
        Err(JitError::ArgumentOfAnotherJit { argument, .. }) => {
            assert_eq!(argument, "argument 1 of `vadd`")
        }
        other => panic!("expected ArgumentOfAnotherJit, got {other:?}"),
    };
}

/// Buffers of another stream of the same context, and of another Jit on the same device, are
/// used in order: the launch waits for the copy that filled them, and their free waits for the
/// launch. Before, event tracking was off for every Jit, so the kernel could read a buffer
/// still being filled on the other stream (and the buffer could be freed under it).
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn buffers_of_other_streams_and_jits_are_ordered() {
    let jit = jit();
    let other_jit = self::jit();
    let side = jit.context().new_stream().unwrap();
    let vadd = jit.load(VADD).unwrap().function("vadd").unwrap();
    // 2^25 floats (128 MiB) per operand, copied from pageable memory: the copies take
    // milliseconds, long enough that an unordered kernel would read them half-filled.
    let n = 1usize << 25;
    let mut rng = Rng(0x07de5);
    let (a, b) = (rng.vec(n), rng.vec(n));
    for round in 0..3 {
        let da = side.clone_htod(&a).unwrap();
        let db = other_jit.upload(&b).unwrap();
        let mut dc = jit.alloc_zeros::<f32>(n).unwrap();
        // SAFETY: vadd (jit_ptx/vadd.ptx) reads a[i] and b[i] and writes c[i], f32s, for i below its
        // last argument, which is the buffers' length; only c is passed writable.
        unsafe {
            vadd.launch(
                &Launch::linear(n as u32, 256),
                &[
                    jit.buffer(&da),
                    jit.buffer(&db),
                    jit.buffer_mut(&mut dc),
                    (n as u32).into(),
                ],
            )
        }
        .unwrap();
        // Freed on their own streams right away: the frees wait for the launch.
        drop((da, db));
        let got = jit.download(&dc).unwrap();
        let bad = (0..n)
            .filter(|&i| got[i].to_bits() != (a[i] + b[i]).to_bits())
            .count();
        assert_eq!(bad, 0, "round {round}: {bad} of {n} sums differ");
    }
}

/// The parameter layout read from the PTX is the driver's (on drivers that report theirs): the
/// same sizes at the same distances from the first parameter. (The driver may place the whole
/// list further in its buffer: on the H200 a kernel whose first parameter is a 64-byte aligned
/// tensor map reports it at offset 48.)
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn ptx_parameter_layout_matches_the_driver() {
    let jit = jit();
    let mut compared = 0;
    for (ptx, names) in [
        (VADD, &["vadd"][..]),
        (BIG_SMEM, &["big_smem"]),
        (REQNTID, &["fixed_block"]),
        (CLUSTER, &["cluster_fixed", "cluster_any"]),
        (TMA, &["tma_load_2d", "tma_roundtrip_2d"]),
    ] {
        let module = jit.load(ptx).unwrap();
        for name in names {
            let f = module.function(name).unwrap();
            let from_ptx: Vec<(usize, usize)> =
                f.params().iter().map(|p| (p.offset, p.size)).collect();
            if let Some(driver) = f.driver_param_layout().unwrap() {
                let relative = |l: &[(usize, usize)]| -> Vec<(usize, usize)> {
                    let first = l.first().map_or(0, |p| p.0);
                    l.iter().map(|&(o, s)| (o - first, s)).collect()
                };
                assert_eq!(relative(&from_ptx), relative(&driver), "{name}");
                compared += 1;
            }
        }
    }
    println!("{compared} kernels' parameter layouts compared with the driver's");
}
