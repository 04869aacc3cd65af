//! The multistage GEMM on a real GPU (feature `gpu`): `D = A * B^T` on pseudo-random data,
//! compared with a CPU reference computed in f64 from the same (rounded) inputs, at 256^3 and at
//! shapes whose M, N and K are not multiples of the tile (K below the tile, K a multiple of 8
//! only). D is poisoned (NaN) before each launch and followed by a guard region, so an element
//! not written, or written past the end, shows.
//!
//! Every test opens device 0 and fails loudly without one; without the `gpu` feature they are
//! compiled and listed as ignored.
//!
//! Tolerances (relative Frobenius error): 1e-2 with f16 accumulation, 2e-3 with f32 accumulation
//! and f16 output, 4e-3 with bf16 output (its rounding alone is up to 2^-9 per element).

use codegen_ptx::emit;
use codegen_ptx::jit::{Jit, JitFunction, KernelArg, Launch};
use dsl_core::ir::Target;
use half::{bf16, f16};
use kernels::gemm::{Accum, GemmDtype};
use kernels::multistage::{multistage_kernel, MultistageConfig, MultistageParts};
use rute_tests::gpu::{jit, Rng};

const POISON: u16 = 0xFFFF;
const GUARD: usize = 64;

fn to_bits(dtype: GemmDtype, x: f32) -> u16 {
    match dtype {
        GemmDtype::F16 => f16::from_f32(x).to_bits(),
        GemmDtype::Bf16 => bf16::from_f32(x).to_bits(),
    }
}

fn from_bits(dtype: GemmDtype, b: u16) -> f32 {
    match dtype {
        GemmDtype::F16 => f16::from_bits(b).to_f32(),
        GemmDtype::Bf16 => bf16::from_bits(b).to_f32(),
    }
}

fn load(jit: &Jit, cfg: &MultistageConfig, target: Target) -> JitFunction {
    let kernel = multistage_kernel(cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    let ptx = emit(&kernel, target).unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name));
    jit.load(&ptx)
        .and_then(|m| m.function(&kernel.name))
        .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name))
}

/// Runs `D = A * B^T` for one shape; returns the relative Frobenius error.
fn run(jit: &Jit, f: &JitFunction, cfg: &MultistageConfig, m: usize, n: usize, k: usize) -> f64 {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ (m * 1_000_003 + n * 1009 + k) as u64);
    let a: Vec<u16> = (0..m * k).map(|_| to_bits(cfg.dtype, rng.f32())).collect();
    let b: Vec<u16> = (0..n * k).map(|_| to_bits(cfg.dtype, rng.f32())).collect();
    let da = jit.upload(&a).expect("upload A");
    let db = jit.upload(&b).expect("upload B");
    let mut dd = jit
        .upload(&vec![POISON; m * n + GUARD])
        .expect("upload poisoned D");
    let launch =
        Launch::new(cfg.grid(m as u32, n as u32), cfg.block()).with_dynamic_smem(cfg.smem_bytes());
    // SAFETY: the multistage kernel reads A (m x k) and B (n x k) and writes D (m x n) of 16-bit
    // elements inside m, n and k, which these buffers hold (D with a guard after it).
    unsafe {
        f.launch(
            &launch,
            &[
                jit.buffer_mut(&mut dd),
                jit.buffer(&da),
                jit.buffer(&db),
                KernelArg::U32(m as u32),
                KernelArg::U32(n as u32),
                KernelArg::U32(k as u32),
            ],
        )
    }
    .unwrap_or_else(|e| panic!("{m}x{n}x{k}: launch: {e}"));
    let got = jit
        .download(&dd)
        .unwrap_or_else(|e| panic!("{m}x{n}x{k}: the kernel failed: {e}"));
    for (i, g) in got[m * n..].iter().enumerate() {
        assert_eq!(
            *g,
            POISON,
            "{m}x{n}x{k}: written past the end at {}",
            m * n + i
        );
    }
    let af: Vec<f64> = a.iter().map(|&x| from_bits(cfg.dtype, x) as f64).collect();
    let bf: Vec<f64> = b.iter().map(|&x| from_bits(cfg.dtype, x) as f64).collect();
    let (mut err, mut norm) = (0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|p| af[i * k + p] * bf[j * k + p]).sum();
            let g = from_bits(cfg.dtype, got[i * n + j]) as f64;
            assert!(
                g.is_finite(),
                "{m}x{n}x{k}: D[{i}][{j}] = {g} (bits {:#06x}): not written",
                got[i * n + j]
            );
            err += (g - want) * (g - want);
            norm += want * want;
        }
    }
    (err / norm.max(f64::MIN_POSITIVE)).sqrt()
}

/// Runs one shape and asserts its relative error is below `tol`; `label` names the case.
fn check_shape(
    jit: &Jit,
    f: &JitFunction,
    cfg: &MultistageConfig,
    label: &str,
    (m, n, k): (usize, usize, usize),
    tol: f64,
) {
    let e = run(jit, f, cfg, m, n, k);
    println!("{label} {m}x{n}x{k}: relative error {e:.2e}");
    assert!(
        e < tol,
        "{label} {m}x{n}x{k}: relative error {e:.3e} >= {tol}"
    );
}

/// Shapes: the square one, then residues in every dimension.
const SHAPES: &[(usize, usize, usize)] = &[
    (256, 256, 256),
    (128, 128, 32),
    (200, 136, 72),
    (129, 257, 40),
    (77, 300, 16),
    (1, 1, 8),
    (5, 3, 24),
    (300, 129, 264),
    (64, 1000, 520),
    (255, 255, 96),
    (130, 70, 8),
    (383, 190, 1000),
];

fn check_all(dtype: GemmDtype, acc: Accum, tol: f64) {
    let jit = jit();
    let cfg = MultistageConfig::reference(dtype, acc);
    for target in [Target::Sm90a, Target::Sm80] {
        let f = load(&jit, &cfg, target);
        for &(m, n, k) in SHAPES {
            let label = format!("{} {target}", cfg.name());
            check_shape(&jit, &f, &cfg, &label, (m, n, k), tol);
        }
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_f16_f16acc() {
    check_all(GemmDtype::F16, Accum::F16, 1e-2);
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_f16_f32acc() {
    check_all(GemmDtype::F16, Accum::F32, 2e-3);
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_bf16_f32acc() {
    check_all(GemmDtype::Bf16, Accum::F32, 4e-3);
}

/// K not a multiple of 8: the configurations with 8-, 4- and 2-byte copies.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_narrow_copies() {
    let jit = jit();
    for (dtype, acc, tol) in [
        (GemmDtype::F16, Accum::F16, 1e-2),
        (GemmDtype::F16, Accum::F32, 2e-3),
        (GemmDtype::Bf16, Accum::F32, 4e-3),
    ] {
        for &(m, n, k) in &[
            (200, 136, 36),
            (129, 257, 70),
            (77, 300, 2),
            (256, 256, 260),
        ] {
            let cfg = MultistageConfig::reference_for_k(dtype, acc, k as u32);
            let f = load(&jit, &cfg, Target::Sm90a);
            check_shape(&jit, &f, &cfg, &cfg.name(), (m, n, k), tol);
        }
    }
}

/// Candidates for a tuned configuration: 8 warps (2x4, 4x2) on 128x256 and 256x128 tiles, more
/// stages (dynamic shared memory above 48 KiB).
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_larger_tiles() {
    let jit = jit();
    for (warps, tile_m, tile_n, stages) in [((2, 4), 128, 256, 4), ((4, 2), 256, 128, 3)] {
        for (acc, tol) in [(Accum::F16, 1e-2), (Accum::F32, 2e-3)] {
            let cfg = MultistageConfig::new(MultistageParts {
                warps,
                tile_m,
                tile_n,
                stages,
                ..MultistageConfig::reference(GemmDtype::F16, acc).parts()
            })
            .unwrap();
            let f = load(&jit, &cfg, Target::Sm90a);
            for &(m, n, k) in &[(256, 256, 256), (300, 270, 72), (1000, 513, 136)] {
                check_shape(&jit, &f, &cfg, &cfg.name(), (m, n, k), tol);
            }
        }
    }
}

/// Rasterized block orders (2 and 4 M tiles per N tile), with M not a multiple of the group.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_rasterized() {
    let jit = jit();
    for s in [1, 2] {
        let cfg = MultistageConfig::new(MultistageParts {
            raster_log2: s,
            ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
        })
        .unwrap();
        let f = load(&jit, &cfg, Target::Sm90a);
        for &(m, n, k) in &[(300, 270, 40), (129, 300, 16), (1000, 1000, 64)] {
            check_shape(&jit, &f, &cfg, &cfg.name(), (m, n, k), 2e-3);
        }
    }
}

/// The shared-memory epilogue (16-byte coalesced rows), alone and with the other tuned options.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_smem_epilogue() {
    use kernels::multistage::Epilogue;
    let jit = jit();
    for (acc, tol) in [(Accum::F16, 1e-2), (Accum::F32, 2e-3)] {
        for (warps, tile_n, stages, raster_log2) in [((2, 2), 128, 3, 0), ((2, 4), 256, 4, 2)] {
            let cfg = MultistageConfig::new(MultistageParts {
                epilogue: Epilogue::Smem,
                warps,
                tile_n,
                stages,
                raster_log2,
                ..MultistageConfig::reference(GemmDtype::F16, acc).parts()
            })
            .unwrap();
            let f = load(&jit, &cfg, Target::Sm90a);
            for &(m, n, k) in &[
                (256, 256, 256),
                (200, 136, 72),
                (77, 45, 16),
                (1000, 1000, 64),
            ] {
                check_shape(&jit, &f, &cfg, &cfg.name(), (m, n, k), tol);
            }
        }
    }
}

/// The default configurations (`Tune::for_shape`: 128x256x32 with 8 warps, 128x128x64) with their
/// stmatrix epilogue as sm_90a PTX, and as sm_80 PTX (the st.shared epilogue `for_target` puts
/// there, JIT-compiled by the driver), for every type pair, on every shape.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn multistage_tuned_on_both_targets() {
    use kernels::multistage::Tune;
    let jit = jit();
    for tune in [Tune::TUNED, Tune::SHORT_K] {
        for (dtype, acc, tol) in [
            (GemmDtype::F16, Accum::F16, 1e-2),
            (GemmDtype::F16, Accum::F32, 2e-3),
            (GemmDtype::Bf16, Accum::F32, 4e-3),
        ] {
            for target in [Target::Sm90a, Target::Sm80] {
                let cfg = tune.config(dtype, acc).unwrap().for_target(target);
                let f = load(&jit, &cfg, target);
                for &(m, n, k) in SHAPES {
                    let label = format!("{} {target}", cfg.name());
                    check_shape(&jit, &f, &cfg, &label, (m, n, k), tol);
                }
            }
        }
    }
}
