//! `kernels::Gemm` on a real GPU (feature `gpu`): each kernel choice against cuBLAS on odd shapes
//! (outputs poisoned before each run, fresh random inputs per shape), cuBLAS and the naive
//! kernel against an f64 CPU product (so the reference itself is checked), the compile cache,
//! and inputs refused before launch.
//!
//! Every test opens device 0 and fails loudly without one; without the `gpu` feature they are
//! compiled and listed as ignored.

use codegen_ptx::jit::{CudaSlice, DeviceRepr, Jit};
use half::{bf16, f16};
use kernels::gemm::harness::{case_seed, poison, Case, Harness, Operands, Rng};
use kernels::gemm::metric::count_non_finite;
use kernels::gemm::{
    Accum, CublasRef, Gemm, GemmArgs, GemmDtype, GemmElem, GemmError, InputError, KernelChoice,
    Plan,
};
use kernels::multistage::{MultistageConfig, Tune};

fn jit() -> Jit {
    match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => panic!("the GPU tests need an NVIDIA GPU: {e}"),
    }
}

/// M, N not multiples of the tile (or of 8), K below the k-tile, K not a multiple of 8 where
/// `k_aligned` is false (the multistage kernel needs 16-byte rows), tall and skinny outputs.
fn odd_shapes(k_aligned: bool) -> Vec<(usize, usize, usize)> {
    let mut shapes = vec![
        (1, 1, 8),
        (7, 9, 16),
        (17, 33, 24),
        (127, 129, 32),
        (129, 255, 40),
        (255, 3, 64),
        (3, 255, 64),
        (333, 111, 96),
        (513, 385, 200),
        (1023, 1025, 1016),
        (2047, 129, 2056),
        (4097, 255, 264),
    ];
    if !k_aligned {
        shapes.extend([(1, 1, 1), (33, 65, 13), (100, 37, 7), (513, 129, 77)]);
    }
    shapes
}

/// Runs `kernel` and cuBLAS on every odd shape for every (dtype, acc) pair the kernel takes,
/// each on fresh inputs with poisoned outputs; every element must be written and the error
/// under the accumulator's tolerance.
fn matches_cublas(kernel: KernelChoice, pairs: &[(GemmDtype, Accum)], k_aligned: bool) {
    let jit = jit();
    let gemm = Gemm::new(&jit).expect("a GEMM runtime");
    let cublas = CublasRef::new(&jit).expect("cuBLAS loads");
    let harness = Harness {
        jit: &jit,
        gemm: &gemm,
        cublas: &cublas,
    };
    let mut failures = Vec::new();
    for &(dtype, acc) in pairs {
        for shape in odd_shapes(k_aligned) {
            let case = Case {
                shape,
                acc,
                kernel,
                seed: case_seed(0xC0FFEE, shape.0, shape.1, shape.2),
            };
            let outcome = harness
                .check_dtype(dtype, &case)
                .unwrap_or_else(|e| panic!("{kernel} {dtype} {acc} {shape:?}: {e}"));
            println!(
                "{dtype} {acc} {shape:?} {}: error {:.3e}, {} unwritten",
                outcome.plan.describe(),
                outcome.error,
                outcome.unwritten
            );
            if !outcome.passed() {
                failures.push(format!("{dtype} {acc} {shape:?}: {outcome:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn naive_matches_cublas_on_odd_shapes() {
    assert_eq!(odd_shapes(false).len(), 16);
    matches_cublas(
        KernelChoice::Naive,
        &[(GemmDtype::F16, Accum::F32), (GemmDtype::Bf16, Accum::F32)],
        false,
    );
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_matches_cublas_on_odd_shapes() {
    matches_cublas(
        KernelChoice::Multistage,
        &[
            (GemmDtype::F16, Accum::F32),
            (GemmDtype::F16, Accum::F16),
            (GemmDtype::Bf16, Accum::F32),
        ],
        true,
    );
}

/// `D = A * B^T` in f64 on the host, from the very values uploaded.
fn cpu_gemm<T: GemmElem>(a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = (0..k)
                .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
                .sum();
        }
    }
    d
}

fn error_vs_f64<T: GemmElem>(got: &[T], want: &[f64]) -> f64 {
    let (mut diff, mut norm) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        let g = g.to_f64();
        if !g.is_finite() {
            return f64::NAN;
        }
        diff += (g - w) * (g - w);
        norm += w * w;
    }
    (diff / norm).sqrt()
}

/// The reference itself: cuBLAS (and the naive kernel) against an f64 product on the CPU. The
/// only error left is D's rounding to T: about 2^-12 relative for f16, 2^-9 for bf16.
fn both_match_the_cpu<T: GemmElem + DeviceRepr>(tolerance: f64) {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let cublas = CublasRef::new(&jit).unwrap();
    for (m, n, k) in [(37, 29, 19), (64, 1, 100), (1, 70, 8), (130, 66, 257)] {
        let mut rng = Rng::new(case_seed(5, m, n, k));
        let (ha, hb) = (rng.matrix::<T>(m * k), rng.matrix::<T>(n * k));
        let want = cpu_gemm(&ha, &hb, m, n, k);
        let (a, b) = (jit.upload(&ha).unwrap(), jit.upload(&hb).unwrap());
        let mut d: CudaSlice<T> = jit.upload(&vec![T::from_f32(0.0); m * n]).unwrap();
        poison(&jit, &mut d).unwrap();
        cublas.gemm(m, n, k, &a, &b, &mut d).unwrap();
        let blas = jit.download(&d).unwrap();
        poison(&jit, &mut d).unwrap();
        gemm.run(GemmArgs {
            m,
            n,
            k,
            a: &a,
            b: &b,
            d: &mut d,
            acc: Accum::F32,
            kernel: KernelChoice::Naive,
        })
        .unwrap();
        let naive = jit.download(&d).unwrap();
        let (eb, en) = (error_vs_f64(&blas, &want), error_vs_f64(&naive, &want));
        println!(
            "{:?} {m}x{n}x{k}: cuBLAS {eb:.3e}, naive {en:.3e}",
            T::DTYPE
        );
        assert!(eb <= tolerance, "cuBLAS {m}x{n}x{k}: {eb}");
        assert!(en <= tolerance, "naive {m}x{n}x{k}: {en}");
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn cublas_and_naive_match_an_f64_cpu_product() {
    both_match_the_cpu::<f16>(1e-3);
    both_match_the_cpu::<bf16>(6e-3);
}

/// Each plan compiles once, also when several threads ask for it at once.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn plans_compile_once_across_threads() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let (m, n, k) = (65, 33, 24);
    let modules_before = jit.cached_modules();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (jit, gemm) = (&jit, &gemm);
            s.spawn(move || {
                let mut ops = Operands::<f16>::random(jit, m, n, k, t).unwrap();
                for _ in 0..3 {
                    let plan = gemm
                        .run(GemmArgs {
                            m,
                            n,
                            k,
                            a: &ops.a,
                            b: &ops.b,
                            d: &mut ops.d,
                            acc: Accum::F32,
                            kernel: KernelChoice::Auto,
                        })
                        .unwrap();
                    assert_eq!(
                        plan,
                        Plan::Multistage {
                            dtype: GemmDtype::F16,
                            acc: Accum::F32,
                            // K = 24: the default for the shape, as this GPU runs it.
                            config: Tune::for_shape(m, n, k)
                                .config(GemmDtype::F16, Accum::F32)
                                .for_target(gemm.target()),
                        }
                    );
                }
                assert_eq!(count_non_finite(&jit.download(&ops.d).unwrap()), 0);
            });
        }
    });
    assert_eq!(gemm.compiled_plans().len(), 1);
    assert_eq!(jit.cached_modules(), modules_before + 1);
}

/// A refused input launches nothing: D stays poisoned.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn refused_inputs_launch_nothing() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let (m, n, k) = (40, 24, 16);
    let ops = Operands::<bf16>::random(&jit, m, n, k, 3).unwrap();
    let mut d = jit.upload(&vec![bf16::from_f32(0.0); m * n - 1]).unwrap();
    poison(&jit, &mut d).unwrap();
    fn args<'a>(
        (m, n, k): (usize, usize, usize),
        ops: &'a Operands<bf16>,
        d: &'a mut CudaSlice<bf16>,
    ) -> GemmArgs<'a, bf16> {
        GemmArgs {
            m,
            n,
            k,
            a: &ops.a,
            b: &ops.b,
            d,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
        }
    }
    match gemm.run(args((m, n, k), &ops, &mut d)) {
        Err(GemmError::Input(InputError::BufferLength {
            buffer: "D",
            expected: 960,
            given: 959,
            ..
        })) => {}
        other => panic!("expected a D length error, got {other:?}"),
    }
    let mut d = jit.upload(&vec![bf16::from_f32(0.0); m * n]).unwrap();
    poison(&jit, &mut d).unwrap();
    {
        let mut bf16_f16 = args((m, n, k), &ops, &mut d);
        bf16_f16.acc = Accum::F16;
        assert!(matches!(
            gemm.run(bf16_f16),
            Err(GemmError::Input(InputError::UnsupportedAccum { .. }))
        ));
    }
    {
        let mut zero_k = args((m, n, k), &ops, &mut d);
        zero_k.k = 0;
        assert!(matches!(
            gemm.run(zero_k),
            Err(GemmError::Input(InputError::ZeroDim { dim: "K" }))
        ));
    }
    let host = jit.download(&d).unwrap();
    assert_eq!(count_non_finite(&host), m * n, "a refused GEMM wrote to D");
    assert!(gemm.compiled_plans().is_empty());
}

/// `auto` runs the multistage kernel for every K: the configuration for the shape (16-byte
/// copies) where K is a multiple of 8, the reference with element copies on a smaller tile where K is
/// odd; both against cuBLAS.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn auto_takes_narrower_copies_for_odd_k() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let cublas = CublasRef::new(&jit).unwrap();
    for (shape, want) in [
        (
            (200, 72, 40),
            Plan::Multistage {
                dtype: GemmDtype::F16,
                acc: Accum::F32,
                config: Tune::for_shape(200, 72, 40)
                    .config(GemmDtype::F16, Accum::F32)
                    .for_target(gemm.target()),
            },
        ),
        (
            (200, 72, 41),
            Plan::Multistage {
                dtype: GemmDtype::F16,
                acc: Accum::F32,
                config: MultistageConfig::reference_for_k(GemmDtype::F16, Accum::F32, 41),
            },
        ),
    ] {
        let harness = Harness {
            jit: &jit,
            gemm: &gemm,
            cublas: &cublas,
        };
        let case = Case {
            shape,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            seed: 11,
        };
        let c = harness.check::<f16>(&case).unwrap();
        assert_eq!(c.plan, want);
        assert!(c.passed(), "{shape:?}: {c:?}");
    }
}

/// Buffers the runtime's stream cannot use are refused before anything is launched, naming the
/// buffer and both owners: A from a second CUDA context on the same device (its address means
/// nothing in the runtime's), B from a default stream of another cudarc handle (which event
/// tracking cannot order with the runtime's stream). D stays poisoned.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn foreign_buffers_are_refused() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let (m, n, k) = (64, 48, 32);
    let mut ops = Operands::<f16>::random(&jit, m, n, k, 21).unwrap();
    let other = codegen_ptx::jit::CudaContext::new_non_primary(0, 0).expect("a second context");
    let foreign_a = other
        .new_stream()
        .unwrap()
        .clone_htod(&Rng::new(1).matrix::<f16>(m * k))
        .unwrap();
    let handle = codegen_ptx::jit::CudaContext::new(0).unwrap();
    let default_b = handle
        .default_stream()
        .clone_htod(&Rng::new(2).matrix::<f16>(n * k))
        .unwrap();
    let run = |a: &CudaSlice<f16>, b: &CudaSlice<f16>, d: &mut CudaSlice<f16>| {
        gemm.run(GemmArgs {
            m,
            n,
            k,
            a,
            b,
            d,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
        })
    };
    match run(&foreign_a, &ops.b, &mut ops.d) {
        Err(e @ GemmError::ForeignBuffer { .. }) => {
            println!("{e}");
            let GemmError::ForeignBuffer { buffer, error } = &e else {
                unreachable!()
            };
            assert_eq!(*buffer, "A");
            assert_eq!(error.reason, codegen_ptx::jit::ForeignReason::OtherContext);
            assert_eq!(error.owner.context, other.cu_ctx() as usize);
            assert_eq!(error.jit, jit.owner());
            let text = e.to_string();
            assert!(text.starts_with("buffer A belongs to device 0"), "{text}");
        }
        other => panic!("expected ForeignBuffer for A, got {other:?}"),
    }
    match run(&ops.a, &default_b, &mut ops.d) {
        Err(GemmError::ForeignBuffer { buffer: "B", error }) => {
            assert_eq!(error.reason, codegen_ptx::jit::ForeignReason::DefaultStream)
        }
        other => panic!("expected ForeignBuffer for B, got {other:?}"),
    }
    // cuBLAS, on the same stream, refuses them too.
    let cublas = CublasRef::new(&jit).unwrap();
    assert!(matches!(
        cublas.gemm(m, n, k, &foreign_a, &ops.b, &mut ops.d),
        Err(GemmError::ForeignBuffer { buffer: "A", .. })
    ));
    let host = jit.download(&ops.d).unwrap();
    assert_eq!(count_non_finite(&host), m * n, "a refused GEMM wrote to D");
}

/// A or B starting off the alignment the plan's copies need is refused. cudarc's safe API makes
/// no `CudaSlice` at an offset (sub-slices are `CudaView`s, which `GemmArgs` does not take), so
/// the misaligned A is built with cudarc's `unsafe` `upgrade_device_ptr` one f16 into a live
/// allocation, and never dropped (its memory is the allocation's).
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn misaligned_operands_are_refused() {
    use codegen_ptx::jit::DevicePtr;
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    // K a multiple of 8: the multistage plan with 16-byte copies.
    let (m, n, k) = (64, 48, 32);
    let mut ops = Operands::<f16>::random(&jit, m, n, k, 22).unwrap();
    let backing = jit.upload(&Rng::new(3).matrix::<f16>(m * k + 8)).unwrap();
    let (base, read) = backing.device_ptr(jit.stream());
    drop(read);
    // SAFETY: [base + 2, base + 2 + 2 * m * k) lies inside `backing` (m * k + 8 elements), which
    // outlives `a`; `a` is never dropped (ManuallyDrop), so the memory is freed once, by
    // `backing`, and its values are the uploaded f16s.
    let a = std::mem::ManuallyDrop::new(unsafe {
        jit.stream().upgrade_device_ptr::<f16>(base + 2, m * k)
    });
    let result = gemm.run(GemmArgs {
        m,
        n,
        k,
        a: &a,
        b: &ops.b,
        d: &mut ops.d,
        acc: Accum::F32,
        kernel: KernelChoice::Auto,
    });
    match result {
        Err(e @ GemmError::Misaligned { .. }) => {
            println!("{e}");
            let GemmError::Misaligned {
                buffer,
                address,
                needs,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!((buffer, address, needs), ("A", base + 2, 16));
        }
        other => panic!("expected Misaligned, got {other:?}"),
    }
    let host = jit.download(&ops.d).unwrap();
    assert_eq!(count_non_finite(&host), m * n, "a refused GEMM wrote to D");
}

/// A GEMM on one Jit reads the output of a GEMM still running on another Jit of the same device
/// (its own stream): the read waits for the write. Before, both Jits had event tracking off, so
/// the second GEMM read D1 while (or before) the first wrote it, and saw its poison.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn gemms_on_two_jits_are_ordered() {
    let (first, second) = (jit(), jit());
    let (g1, g2) = (Gemm::new(&first).unwrap(), Gemm::new(&second).unwrap());
    let (m, n, k) = (2048, 2048, 4096);
    let mut ops = Operands::<f16>::random(&first, m, n, k, 23).unwrap();
    let case = Case {
        shape: (m, n, k),
        acc: Accum::F32,
        kernel: KernelChoice::Auto,
        seed: 23,
    };
    // Compile both plans first, so that nothing below waits on the host.
    ops.run(&g1, &case).unwrap();
    let z = second.upload(&Rng::new(24).matrix::<f16>(512 * n)).unwrap();
    let mut d2 = second.upload(&vec![f16::ZERO; m * 512]).unwrap();
    let second_gemm = |d1: &CudaSlice<f16>, d2: &mut CudaSlice<f16>| {
        g2.run(GemmArgs {
            m,
            n: 512,
            k: n,
            a: d1,
            b: &z,
            d: d2,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
        })
    };
    second_gemm(&ops.d, &mut d2).unwrap();
    second.synchronize().unwrap();
    first.synchronize().unwrap();
    for round in 0..3 {
        // Poison D1, then keep the first Jit busy writing it (several milliseconds) ...
        poison(&first, &mut ops.d).unwrap();
        for _ in 0..8 {
            ops.run(&g1, &case).unwrap();
        }
        // ... and read it at once from the second.
        poison(&second, &mut d2).unwrap();
        second_gemm(&ops.d, &mut d2).unwrap();
        let got = second.download(&d2).unwrap();
        assert_eq!(
            count_non_finite(&got),
            0,
            "round {round}: the second Jit's GEMM read D1 before the first Jit wrote it"
        );
        // The same product with everything finished: bit for bit the same plan on the same data.
        first.synchronize().unwrap();
        second_gemm(&ops.d, &mut d2).unwrap();
        assert_eq!(got, second.download(&d2).unwrap(), "round {round}");
    }
}
