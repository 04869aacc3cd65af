use super::*;
use crate::gemm::{Accum, GemmDtype};

#[test]
fn reference_geometry() {
    let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F16);
    // 3 stages of a 128x32 tile of A and of B, 2 bytes each.
    assert_eq!(cfg.smem_bytes(), 3 * (128 * 32 + 128 * 32) * 2);
    assert_eq!(cfg.block(), (128, 1, 1));
    assert_eq!(cfg.grid(256, 256), (2, 2, 1));
    assert_eq!(cfg.grid(257, 1), (1, 3, 1));
    assert_eq!(cfg.grid(1, 129), (2, 1, 1));
}

#[test]
fn names() {
    let n = |d, a| MultistageConfig::reference(d, a).name();
    assert_eq!(n(GemmDtype::F16, Accum::F16), "multistage_f16");
    assert_eq!(n(GemmDtype::F16, Accum::F32), "multistage_f16_f32acc");
    assert_eq!(n(GemmDtype::Bf16, Accum::F32), "multistage_bf16");
    let cfg = MultistageConfig::new(MultistageParts {
        stages: 4,
        ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
    })
    .unwrap();
    assert_eq!(cfg.name(), "multistage_f16_f32acc_128x128x32s4");
    assert_eq!(multistage_kernel(&cfg).unwrap().name, cfg.name());
}

/// The plan's fragments are CuTe's for the seed: A `((2,2,2),4,2)` (8 halves of one m16n8k16 A
/// per atom, 4 atoms over a warp's 64 rows, 2 k-blocks), B `((2,2),8,2)`, C `((2,2),4,8)`.
#[test]
fn plan_of_the_seed() {
    let p = Setup::new(&MultistageConfig::reference(GemmDtype::F16, Accum::F16)).unwrap();
    assert_eq!(p.frag_a.shape().to_string(), "((2,2,2),4,2)");
    assert_eq!(p.frag_b.shape().to_string(), "((2,2),8,2)");
    assert_eq!(p.frag_c.shape().to_string(), "((2,2),4,8)");
    assert_eq!(p.retile_a.shape().to_string(), "((8,1),4,2)");
    assert_eq!(p.g2s.tiler_mn, vec![32, 32]);
    assert_eq!(p.smem_a.cosize(), 128 * 32 * 3);
}

#[test]
fn unsupported_configurations_are_refused() {
    let f16 = MultistageConfig::reference(GemmDtype::F16, Accum::F16).parts();
    let bad = [
        MultistageConfig::reference(GemmDtype::Bf16, Accum::F16).parts(),
        MultistageParts { tile_k: 48, ..f16 },
        MultistageParts {
            tile_m: 96 + 8,
            ..f16
        },
        MultistageParts { stages: 1, ..f16 },
        // What would make the launch divide by zero or overflow.
        MultistageParts { tile_m: 0, ..f16 },
        MultistageParts { tile_n: 0, ..f16 },
        MultistageParts {
            stages: u32::MAX,
            ..f16
        },
        MultistageParts {
            raster_log2: 40,
            ..f16
        },
        MultistageParts {
            warps: (u32::MAX, 2),
            ..f16
        },
    ];
    for parts in bad {
        let e = MultistageConfig::new(parts).unwrap_err();
        assert!(
            matches!(e, MultistageError::Config { .. }),
            "{parts:?}: {e}"
        );
    }
    // The named configurations are the program's.
    for (d, a) in [
        (GemmDtype::F16, Accum::F16),
        (GemmDtype::F16, Accum::F32),
        (GemmDtype::Bf16, Accum::F32),
    ] {
        for cfg in [
            MultistageConfig::reference(d, a),
            MultistageConfig::tuned(d, a),
            MultistageConfig::tuned(d, a).for_target(Target::Sm80),
            MultistageConfig::reference_for_k(d, a, 13),
            MultistageConfig::reference_for_k(d, a, 66),
        ] {
            assert_eq!(MultistageConfig::new(cfg.parts()).unwrap(), cfg);
        }
    }
}

/// Other tiles and depths generate and assemble-ready kernels (emission succeeds on every target).
#[test]
fn other_configurations_generate() {
    for (m, n, k, s) in [
        (128, 128, 32, 4),
        (64, 128, 32, 3),
        (128, 256, 32, 3),
        (128, 128, 64, 3),
        (64, 64, 32, 2),
    ] {
        let cfg = MultistageConfig::new(MultistageParts {
            tile_m: m,
            tile_n: n,
            tile_k: k,
            stages: s,
            ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
        })
        .unwrap();
        let kernel = multistage_kernel(&cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        for t in TARGETS {
            codegen_ptx::emit(&kernel, *t).unwrap_or_else(|e| panic!("{cfg:?} {t}: {e}"));
        }
    }
}
