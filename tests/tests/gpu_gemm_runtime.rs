//! `kernels::Gemm` on a real GPU (feature `gpu`): every program of the build against cuBLAS on
//! odd shapes (outputs poisoned before each run, fresh random inputs per shape), cuBLAS and the
//! naive kernel against an f64 CPU product (so the reference itself is checked), the compile
//! cache, inputs refused before launch, and a program from outside the crate (`probe_tma`: D
//! written through a TMA store, blocks in the order of a table) run through the seam: tensor
//! maps, tables and program scalars made by the runtime.
//!
//! Every GPU test opens device 0 and fails loudly without one; without the `gpu` feature they
//! are compiled and listed as ignored. `the_probe_program_plugs_into_the_seam` needs no GPU (but
//! `RUTE_PTXAS`, to assemble the probe).

use std::sync::Arc;

use codegen_ptx::jit::{CudaSlice, DeviceRepr, Jit};
use dsl_core::atom::tma::{make_tma_copy, TmaCopy, TmaGlobal, TmaKind};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, Swizzle};
use dsl_macros::kernel;
use half::{bf16, f16};
use kernels::gemm::harness::{case_seed, poison, Case, Harness, Operands, Rng};
use kernels::gemm::metric::count_non_finite;
use kernels::gemm::naive::Naive;
use kernels::gemm::{
    check, Accum, BufferLens, CublasRef, Device, Gemm, GemmArg, GemmArgs, GemmDtype, GemmElem,
    GemmError, GemmOperand, GemmProgram, InputError, KernelBuildError, KernelChoice, LaunchPlan,
    NoSchedule, Plan, Problem, ProgramPlan, PROGRAMS,
};
use kernels::multistage::{Multistage, MultistageConfig, Tune};

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
        // Rows of 16 bytes (N and K multiples of 8), which the TMA program takes; the last splits K.
        (1, 8, 8),
        (17, 24, 40),
        (129, 264, 72),
        (333, 776, 1000),
        (16, 4096, 4096),
    ];
    if !k_aligned {
        shapes.extend([(1, 1, 1), (33, 65, 13), (100, 37, 7), (513, 129, 77)]);
    }
    shapes
}

/// Runs `kernel` and cuBLAS on every odd shape for every (dtype, acc) pair the program takes on
/// this GPU (the others are refused by `check`, and said so), each on fresh inputs with poisoned
/// outputs; every element must be written and the check pass. Returns how many cases ran.
fn matches_cublas(harness: &Harness<'_>, kernel: KernelChoice) -> usize {
    let pairs = [
        (GemmDtype::F16, Accum::F32),
        (GemmDtype::F16, Accum::F16),
        (GemmDtype::Bf16, Accum::F32),
    ];
    let (mut failures, mut ran) = (Vec::new(), 0);
    for (dtype, acc) in pairs {
        for shape in odd_shapes(false) {
            let (m, n, k) = shape;
            let problem = Problem {
                m,
                n,
                k,
                dtype,
                acc,
                kernel,
                config: None,
            };
            let lens = BufferLens::for_shape(m, n, k).unwrap();
            if let Err(e) = check(&problem, lens, harness.gemm.device()) {
                println!("{kernel} {dtype} {acc} {shape:?}: refused: {e}");
                continue;
            }
            let case = Case {
                shape,
                acc,
                kernel,
                seed: case_seed(0xC0FFEE, m, n, k),
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
            assert_eq!(outcome.plan.program(), kernel.name());
            ran += 1;
            if !outcome.passed() {
                failures.push(format!("{dtype} {acc} {shape:?}: {outcome:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{kernel}: {failures:#?}");
    ran
}

/// Every program of the build that runs on the device's target, on every odd shape and type
/// pair it takes.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn every_program_matches_cublas_on_odd_shapes() {
    assert_eq!(odd_shapes(false).len(), 21);
    with_harness(|harness| {
        let target = harness.gemm.target();
        for program in PROGRAMS.iter().filter(|p| p.runs_on(target)) {
            let ran = matches_cublas(harness, KernelChoice::Program(*program));
            println!("{}: {ran} cases", program.name());
            assert!(
                ran > 0,
                "{} ran no case on {}",
                program.name(),
                harness.gemm.target()
            );
        }
    });
}

/// A GEMM runtime and the cuBLAS reference on device 0, handed to `f` as one harness.
fn with_harness(f: impl FnOnce(&Harness<'_>)) {
    let jit = jit();
    let gemm = Gemm::new(&jit).expect("a GEMM runtime");
    let cublas = CublasRef::new(&jit).expect("cuBLAS loads");
    f(&Harness {
        jit: &jit,
        gemm: &gemm,
        cublas: &cublas,
    });
}

/// `Harness::bench`, what `rute gemm --bench` and the suites time: rute, cuBLAS and the copy
/// of the same bytes each give a positive time, the copy moves what the GEMM must (A, B and D,
/// rounded up to 8 bytes), and a memory-bound GEMM does not outrun the device's own copy by
/// much (at 20% above it the timing, not the GEMM, would be wrong).
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn bench_times_rute_cublas_and_the_copy_ceiling() {
    with_harness(|harness| {
        for (m, n, k) in [(8192, 256, 256), (96, 200, 72)] {
            let case = Case {
                shape: (m, n, k),
                acc: Accum::F32,
                kernel: KernelChoice::Auto,
                seed: case_seed(3, m, n, k),
            };
            let b = harness.bench::<f16>(&case, 5).expect("the timing runs");
            let bytes = ((m * k + n * k + m * n) * 2) as f64;
            println!(
                "{m}x{n}x{k}: rute {:.4} ms ({:.0} GB/s), cuBLAS {:.4} ms, copy {:.0} GB/s, {} sets",
                b.rute_ms,
                b.rute_gbps(),
                b.cublas_ms,
                b.copy_gbps(),
                b.sets
            );
            for t in [b.rute_ms, b.cublas_ms, b.copy_ms] {
                assert!(t.is_finite() && t > 0.0, "{m}x{n}x{k}: {b:?}");
            }
            assert_eq!(b.bytes, bytes);
            assert_eq!(b.copy_bytes, (bytes / 8.0).ceil() * 8.0);
            if m == 8192 {
                assert!(b.rute_gbps() < 1.2 * b.copy_gbps(), "{b:?}");
            }
        }
    });
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
            kernel: KernelChoice::Program(&Naive),
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

/// The plan `auto` makes for an f16 `m x n x k` with f32 sums on this GPU (a tuning record's
/// where the runtime has one).
fn auto_plan(gemm: &Gemm<'_>, (m, n, k): (usize, usize, usize)) -> Plan {
    let problem = Problem {
        m,
        n,
        k,
        dtype: GemmDtype::F16,
        acc: Accum::F32,
        kernel: KernelChoice::Auto,
        config: None,
    };
    gemm.tuning()
        .check(
            &problem,
            BufferLens::for_shape(m, n, k).unwrap(),
            gemm.device(),
        )
        .unwrap()
}

/// Each plan compiles once, also when several threads ask for it at once.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn plans_compile_once_across_threads() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let (m, n, k) = (65, 33, 24);
    // The plan auto picks for the shape on this GPU.
    let want = auto_plan(&gemm, (m, n, k));
    let modules_before = jit.cached_modules();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (jit, gemm, want) = (&jit, &gemm, &want);
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
                    assert_eq!(&plan, want);
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
    // The Blackwell program, asked for by name on a device that is not sm_100a: refused with a
    // sentence before anything is compiled or launched.
    if gemm.target() != Target::Sm100a {
        let mut blackwell = args((m, n, k), &ops, &mut d);
        blackwell.kernel = KernelChoice::named("blackwell_ws").unwrap();
        let e = gemm.run(blackwell).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the blackwell_ws kernel cannot run this problem: it runs on sm_100a only \
                 (tcgen05 and tensor memory), not {}",
                gemm.target()
            )
        );
    }
    let host = jit.download(&d).unwrap();
    assert_eq!(count_non_finite(&host), m * n, "a refused GEMM wrote to D");
    assert!(gemm.compiled_plans().is_empty());
}

/// The multistage program runs every K: the configuration for the shape (16-byte copies) where K
/// is a multiple of 8, the reference with element copies on a smaller tile where K is odd; both
/// against cuBLAS.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_takes_narrower_copies_for_odd_k() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    let cublas = CublasRef::new(&jit).unwrap();
    for (shape, want) in [
        (
            (200, 72, 40),
            Tune::for_shape(200, 72, 40)
                .config(GemmDtype::F16, Accum::F32)
                .unwrap()
                .for_target(gemm.target()),
        ),
        (
            (200, 72, 41),
            MultistageConfig::reference_for_k(GemmDtype::F16, Accum::F32, 41),
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
            kernel: KernelChoice::Program(&Multistage),
            seed: 11,
        };
        let c = harness.check::<f16>(&case).unwrap();
        assert_eq!(c.plan, Plan::new(want));
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
    let needs = auto_plan(&gemm, (m, n, k)).operand_alignment();
    assert!(needs > 2, "{needs}");
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
            let want = needs;
            let GemmError::Misaligned {
                buffer,
                address,
                needs,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!((buffer, address), ("A", base + 2));
            assert_eq!(needs, want);
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

/// Rows and columns of D one block of the probe computes, and one TMA store writes.
const PROBE_TILE: u32 = 16;

/// The probe's kernel: block `b` computes tile `order[b]` of D (tiles numbered row by row,
/// `tiles_n` to a row), one thread per element summing in f32 as the naive kernel does, into a
/// shared tile that one thread writes to D with a TMA store (which clips the tile at D's edge).
#[kernel]
fn probe_tma<T: GemmElem>(
    kb: &KernelBuilder,
    d_map: TensorMap,
    a: GlobalPtr<T>,
    b: GlobalPtr<T>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
    order: GlobalPtr<u32>,
    tiles_n: Var<u32>,
) {
    kb.require_threads(PROBE_TILE, PROBE_TILE, 1);
    let tile = kb.shared_array::<T>("tile", u64::from(PROBE_TILE * PROBE_TILE), 128);
    let t = order.load_at(block_idx_x());
    let (tm, tn) = (t / tiles_n, t % tiles_n);
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let row = tm * PROBE_TILE + ty;
    let col = tn * PROBE_TILE + tx;
    let mut acc = Var::konst(0.0f32).fresh();
    if row.lt(m) & col.lt(n) {
        let k64 = k.cast::<u64>();
        let a_row = a + row.cast::<u64>() * k64;
        let b_row = b + col.cast::<u64>() * k64;
        for kk in 0u32..k {
            let x = a_row.load_at(kk).cast::<f32>();
            let y = b_row.load_at(kk).cast::<f32>();
            acc = x.mul_add(y, acc);
        }
    }
    tile.store_at(ty * PROBE_TILE + tx, acc.cast::<T>());
    // The threads' stores become visible to the TMA unit only through this fence.
    fence_proxy_async_shared();
    sync_threads();
    if tx.eq_(0u32) & ty.eq_(0u32) {
        let (x, y) = (tn * PROBE_TILE, tm * PROBE_TILE);
        tma_store(&d_map, &[x.cast::<i32>(), y.cast::<i32>()], tile);
        bulk_commit_group();
        bulk_wait_group_read(0);
    }
}

/// A program from outside the crate, through the seam the way a warp-specialized one goes: a
/// TMA descriptor over D from a TMA atom, a table and a scalar of its own, on sm_90a and newer.
struct Probe;

impl GemmProgram for Probe {
    type Schedule = NoSchedule;

    fn name(&self) -> &'static str {
        "probe_tma"
    }
    fn summary(&self) -> &'static str {
        "a test program: D through a TMA store, blocks in a table's order"
    }
    fn config_syntax(&self) -> &'static str {
        "none"
    }
    fn plan(&self, p: &Problem, device: &Device, _: Option<&NoSchedule>) -> Result<Plan, String> {
        let target = device.target;
        if target < Target::Sm90a {
            return Err(format!("it needs TMA (sm_90a and newer), not {target}"));
        }
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32, not {}", p.acc));
        }
        if !p.n.is_multiple_of(8) {
            return Err(format!(
                "N = {} is not a multiple of 8, and TMA needs D's rows 16-byte aligned",
                p.n
            ));
        }
        Ok(Plan::new(ProbePlan::new(p.dtype)))
    }
}

#[derive(Debug)]
struct ProbePlan {
    dtype: GemmDtype,
    /// `SM90_TMA_STORE` of a 16x16 row-major tile of D.
    store: TmaCopy,
}

impl ProbePlan {
    fn new(dtype: GemmDtype) -> ProbePlan {
        let t = i64::from(PROBE_TILE);
        let tile = Layout::new(IntTuple::ints(&[t, t]), IntTuple::ints(&[t, 1])).unwrap();
        let smem = ComposedLayout::new(Swizzle::identity(), 0, tile);
        let store = make_tma_copy(
            TmaKind::Store,
            &TmaGlobal::row_major(dtype.val_type()),
            &smem,
        )
        .expect("a 16x16 tile of 2-byte elements is one TMA box");
        ProbePlan { dtype, store }
    }
}

// SAFETY: probe_tma stores one 16x16 TMA box per tile of D, clipped by D's map to m x n, and
// reads only its tile order, one entry per block.
unsafe impl ProgramPlan for ProbePlan {
    fn program(&self) -> &'static str {
        "probe_tma"
    }
    fn key(&self) -> String {
        format!("probe_tma_{}", self.dtype)
    }
    fn describe(&self) -> String {
        format!("probe_tma {} (f32 acc, 16x16 tiles)", self.dtype)
    }
    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        Ok(match self.dtype {
            GemmDtype::F16 => probe_tma::<f16>()?,
            GemmDtype::Bf16 => probe_tma::<bf16>()?,
        })
    }
    fn entry(&self) -> String {
        "probe_tma".into()
    }
    fn operand_alignment(&self) -> u64 {
        2
    }
    fn output_alignment(&self) -> u64 {
        16
    }
    fn launch(&self, m: u32, n: u32, _k: u32, _device: &Device) -> LaunchPlan {
        let (tiles_m, tiles_n) = (m.div_ceil(PROBE_TILE), n.div_ceil(PROBE_TILE));
        // The tiles last to first: a block that read the wrong entry would leave its tile
        // poisoned.
        let order: Vec<u32> = (0..tiles_m * tiles_n).rev().collect();
        let descriptor = self
            .store
            .descriptor(&[u64::from(m), u64::from(n)], &[u64::from(n), 1])
            .expect("plan took N a multiple of 8");
        use GemmArg::*;
        LaunchPlan {
            grid: (tiles_m * tiles_n, 1, 1),
            block: (PROBE_TILE, PROBE_TILE, 1),
            cluster: None,
            dynamic_smem_bytes: 0,
            args: vec![
                TensorMap {
                    operand: GemmOperand::D,
                    descriptor,
                },
                A,
                B,
                M,
                N,
                K,
                Table(Arc::new(order)),
                U32(tiles_n),
            ],
            workspace: 0,
            then: None,
            programmatic: false,
        }
    }
}

static PROBE: Probe = Probe;

fn probe_problem(m: usize, n: usize, k: usize, dtype: GemmDtype) -> Problem {
    Problem {
        m,
        n,
        k,
        dtype,
        acc: Accum::F32,
        kernel: KernelChoice::Program(&PROBE),
        config: None,
    }
}

/// Without a GPU: `check` takes the probe by value and asks it about the target; its launch
/// names a tensor map over D, the operands, a table and a scalar, which fill its kernel's
/// parameters.
#[test]
fn the_probe_program_plugs_into_the_seam() {
    let lens = BufferLens::for_shape(100, 72, 40).unwrap();
    let p = probe_problem(100, 72, 40, GemmDtype::Bf16);
    let e = check(&p, lens, &Device::unknown(Target::Sm80)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the probe_tma kernel cannot run this problem: it needs TMA (sm_90a and newer), not sm_80"
    );
    let plan = check(&p, lens, &Device::h200()).unwrap();
    assert_eq!(plan.describe(), "probe_tma bf16 (f32 acc, 16x16 tiles)");
    let launch = plan.launch(100, 72, 40, &Device::h200());
    assert_eq!(launch.check(), Ok(()));
    assert_eq!(launch.grid, (7 * 5, 1, 1));
    let GemmArg::TensorMap { descriptor, .. } = &launch.args[0] else {
        panic!("{:?}", launch.args)
    };
    assert_eq!(
        (&descriptor.global_dims, &descriptor.box_dims),
        (&vec![72, 100], &vec![16, 16])
    );
    rute_tests::gemm::assert_args_fit(&plan, &launch, Target::Sm90a);
    // Its PTX assembles (needs RUTE_PTXAS), so the GPU test meets no ptxas error.
    let ptx = codegen_ptx::emit(&plan.kernel().unwrap(), Target::Sm90a).unwrap();
    assert!(
        ptx.contains("cp.async.bulk.tensor.2d.global.shared::cta"),
        "{ptx}"
    );
    rute_tests::ptx::assemble_clean(&ptx, Target::Sm90a, "probe_tma");
    let odd_n = probe_problem(100, 70, 40, GemmDtype::F16);
    let e = check(
        &odd_n,
        BufferLens::for_shape(100, 70, 40).unwrap(),
        &Device::h200(),
    );
    assert!(e
        .unwrap_err()
        .to_string()
        .contains("N = 70 is not a multiple of 8"));
}

/// The probe on the GPU, against cuBLAS: the runtime encodes the tensor map over D (written
/// through it), uploads the tile order once per content and passes the scalar; D is all written
/// (the table's order reached every tile) and checks against cuBLAS.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn a_tma_program_runs_through_the_seam() {
    let jit = jit();
    let gemm = Gemm::new(&jit).unwrap();
    assert!(
        gemm.target() >= Target::Sm90a,
        "the probe needs TMA; this GPU's target is {}",
        gemm.target()
    );
    let cublas = CublasRef::new(&jit).unwrap();
    let harness = Harness {
        jit: &jit,
        gemm: &gemm,
        cublas: &cublas,
    };
    let shapes = [(100, 72, 40), (1, 8, 1), (257, 136, 24), (64, 64, 64)];
    for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
        for (m, n, k) in shapes {
            let case = Case {
                shape: (m, n, k),
                acc: Accum::F32,
                kernel: KernelChoice::Program(&PROBE),
                seed: case_seed(31, m, n, k),
            };
            let c = harness.check_dtype(dtype, &case).unwrap();
            println!("{} {m}x{n}x{k}: {c:?}", c.plan.describe());
            assert_eq!(c.plan.program(), "probe_tma");
            assert!(c.passed(), "{dtype} {m}x{n}x{k}: {c:?}");
        }
    }
    // One table per shape (both dtypes share it), none uploaded twice.
    assert_eq!(gemm.cached_tables(), shapes.len());
    let (m, n, k) = shapes[0];
    let mut ops = Operands::<f16>::random(&jit, m, n, k, 5).unwrap();
    let case = Case {
        shape: (m, n, k),
        acc: Accum::F32,
        kernel: KernelChoice::Program(&PROBE),
        seed: 5,
    };
    ops.run(&gemm, &case).unwrap();
    assert_eq!(gemm.cached_tables(), shapes.len());
    assert_eq!(gemm.compiled_plans().len(), 2);
    // D off the 16 bytes the TMA store needs is refused before the launch (built as
    // `misaligned_operands_are_refused` builds its A).
    use codegen_ptx::jit::DevicePtr;
    let backing = jit.upload(&vec![f16::ZERO; m * n + 8]).unwrap();
    let (base, read) = backing.device_ptr(jit.stream());
    drop(read);
    // SAFETY: [base + 2, base + 2 + 2 * m * n) lies inside `backing` (m * n + 8 elements), which
    // outlives `d`; `d` is never dropped (ManuallyDrop), so the memory is freed once, by
    // `backing`; nothing writes it (the GEMM is refused).
    let mut d = std::mem::ManuallyDrop::new(unsafe {
        jit.stream().upgrade_device_ptr::<f16>(base + 2, m * n)
    });
    let result = gemm.run(GemmArgs {
        m,
        n,
        k,
        a: &ops.a,
        b: &ops.b,
        d: &mut d,
        acc: Accum::F32,
        kernel: KernelChoice::Program(&PROBE),
    });
    match result {
        Err(GemmError::Misaligned {
            buffer: "D",
            needs: 16,
            ..
        }) => {}
        other => panic!("expected D misaligned, got {other:?}"),
    }
}

/// The tuner on the device: it times the candidates of a shape (the default first among them),
/// the winner computes what cuBLAS does, its record goes to the file, and a fresh runtime that
/// reads the file runs the recorded schedule on another shape of the same class, saying so in
/// its plan; a runtime on the default file's records (none for this class) runs the default.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn a_tuned_schedule_is_recorded_and_preferred() {
    use kernels::gemm::tuning::Tuned;
    use kernels::gemm::{Origin, TuningFile};
    use kernels::hopper::tune::{record, tune, TuneRequest};
    use kernels::hopper::HopperGemm;
    let jit = jit();
    if jit.limits().compute_capability != (9, 0) {
        return;
    }
    let request = TuneRequest {
        m: 200,
        n: 3072,
        k: 2048,
        dtype: GemmDtype::Bf16,
        repeats: 5,
    };
    let outcome = tune(&jit, &request).unwrap();
    print!("{}", outcome.table());
    assert!(outcome.timed.len() > 5, "{}", outcome.timed.len());
    assert!(outcome.timed.windows(2).all(|w| w[0].micros <= w[1].micros));
    assert!(outcome.winner.micros > 0.0 && outcome.winner.micros <= outcome.default.micros * 1.5);
    let dir = std::env::temp_dir().join(format!("rute-gpu-tune-{}", std::process::id()));
    let path = dir.join("tuning.txt");
    record(&outcome, &path).unwrap();
    let file = TuningFile::load(&path).unwrap();
    assert_eq!(file.records(), std::slice::from_ref(&outcome.record));
    // Another shape of the class m256 n4096 k2048, in a runtime that reads the file.
    let gemm = Gemm::new(&jit)
        .unwrap()
        .with_tuning(Tuned::new(&file, &path.display().to_string()));
    let cublas = CublasRef::new(&jit).unwrap();
    let harness = Harness {
        jit: &jit,
        gemm: &gemm,
        cublas: &cublas,
    };
    let case = Case {
        shape: (240, 4096, 2048),
        acc: Accum::F32,
        kernel: KernelChoice::Auto,
        seed: 5,
    };
    let c = harness.check::<bf16>(&case).unwrap();
    assert!(c.passed(), "{c:?}");
    let h = c.plan.downcast_ref::<HopperGemm>().unwrap();
    assert_eq!(h.schedule(), &outcome.winner.schedule);
    assert!(
        matches!(h.origin(), Origin::Record { .. }),
        "{}",
        c.plan.describe()
    );
    assert!(c
        .plan
        .describe()
        .contains("schedule from a tuning record in"));
    // Without the record: the table's or the model's.
    let plain = Gemm::new(&jit).unwrap().with_tuning(Tuned::default());
    let harness = Harness {
        jit: &jit,
        gemm: &plain,
        cublas: &cublas,
    };
    let c = harness.check::<bf16>(&case).unwrap();
    let h = c.plan.downcast_ref::<HopperGemm>().unwrap();
    assert!(!matches!(h.origin(), Origin::Record { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
}
