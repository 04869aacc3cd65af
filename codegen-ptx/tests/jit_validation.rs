//! The JIT runtime's checks that need no GPU: TMA descriptor rules, launch-shape rules, the
//! module cache's hash, kernel-argument layout, and `Jit::new` reporting a missing GPU as an
//! error. Also assembles the hand-written PTX that `jit_gpu.rs` runs, so a typo there shows up
//! here, on CI, before anyone spends device time on it.
#![cfg(feature = "jit")]

use codegen_ptx::jit::{
    ptx_entries, ptx_hash, validate_for_kernel, validate_launch, DeviceLimits, Jit, JitError,
    JitFunction, JitModule, KernelArg, KernelFacts, Launch, LaunchError, TensorMap, TensorMapError,
    TensorMapSpec, Timing, TmaDataType, TmaInterleave, TmaOobFill, TmaSwizzle,
};

mod jit_ptx;

use jit_ptx::{BAD, BIG_SMEM, CLUSTER, REQNTID, TMA, VADD};

// ---------------------------------------------------------------------------------------------
// TMA descriptors

/// A valid descriptor: a 100 x 68 f32 row-major matrix at a 256-byte aligned address, 16 x 32
/// boxes (128 bytes a box row).
fn good() -> TensorMapSpec {
    TensorMapSpec::row_major_2d(TmaDataType::F32, 0x7f00_0000_0100, 100, 68, 16, 32)
}

fn err(spec: &TensorMapSpec) -> TensorMapError {
    spec.validate().expect_err("the spec breaks a rule")
}

#[test]
fn tma_valid_specs_pass() {
    assert_eq!(good().validate(), Ok(()));
    assert_eq!(good().with_swizzle(TmaSwizzle::B128).validate(), Ok(()));
    // 64 f16 columns = 128 bytes: the widest box a 128-byte swizzle takes.
    let f16 = TensorMapSpec::row_major_2d(TmaDataType::F16, 0x1000, 4096, 4096, 64, 64)
        .with_swizzle(TmaSwizzle::B128);
    assert_eq!(f16.validate(), Ok(()));
    // Rank 5 with the largest box and element strides.
    let r5 = TensorMapSpec::tiled(
        TmaDataType::U8,
        0x2000,
        &[256, 2, 2, 2, 2],
        &[256, 512, 1024, 2048],
        &[256, 1, 1, 1, 2],
    )
    .with_element_strides(&[1, 1, 1, 1, 8]);
    assert_eq!(r5.validate(), Ok(()));
    // Interleaved 32 B with its required swizzle, address and stride multiples.
    let il = TensorMapSpec::tiled(
        TmaDataType::F16,
        0x20,
        &[16, 8, 8],
        &[32 * 8, 32 * 64],
        &[16, 8, 8],
    )
    .with_interleave(TmaInterleave::B32)
    .with_swizzle(TmaSwizzle::B32);
    assert_eq!(il.validate(), Ok(()));
    assert_eq!(good().box_bytes(), 16 * 32 * 4);
}

#[test]
fn tma_rank_must_be_1_to_5() {
    let mut s = good();
    s.global_dims.clear();
    assert_eq!(err(&s), TensorMapError::Rank { rank: 0 });
    let six = TensorMapSpec::tiled(TmaDataType::U8, 0x100, &[16; 6], &[16; 5], &[16; 6]);
    assert_eq!(err(&six), TensorMapError::Rank { rank: 6 });
}

#[test]
fn tma_array_lengths_follow_rank() {
    let mut s = good();
    s.global_strides_bytes.push(4096);
    assert_eq!(
        err(&s),
        TensorMapError::Length {
            what: "global_strides_bytes",
            len: 2,
            expected: 1,
            rank: 2
        }
    );
    let mut s = good();
    s.box_dims.pop();
    assert!(matches!(
        err(&s),
        TensorMapError::Length {
            what: "box_dims",
            len: 1,
            ..
        }
    ));
    let s = good().with_element_strides(&[1, 1, 1]);
    assert!(matches!(
        err(&s),
        TensorMapError::Length {
            what: "element_strides",
            len: 3,
            ..
        }
    ));
}

#[test]
fn tma_address_null_and_alignment() {
    let mut s = good();
    s.global_address = 0;
    assert_eq!(err(&s), TensorMapError::NullAddress);
    s.global_address = 0x1008;
    let e = err(&s);
    assert_eq!(
        e,
        TensorMapError::MisalignedAddress {
            address: 0x1008,
            align: 16
        }
    );
    assert!(e.to_string().contains("0x1008"), "{e}");
    // 32-byte interleave needs 32-byte alignment: 0x1010 is 16- but not 32-aligned.
    let il = TensorMapSpec::tiled(
        TmaDataType::F16,
        0x1010,
        &[16, 8, 8],
        &[256, 2048],
        &[16, 8, 8],
    )
    .with_interleave(TmaInterleave::B32)
    .with_swizzle(TmaSwizzle::B32);
    assert_eq!(
        err(&il),
        TensorMapError::MisalignedAddress {
            address: 0x1010,
            align: 32
        }
    );
}

#[test]
fn tma_global_dims_in_range() {
    let mut s = good();
    s.global_dims[1] = 0;
    assert_eq!(err(&s), TensorMapError::GlobalDim { dim: 1, value: 0 });
    let mut s = TensorMapSpec::tiled(TmaDataType::U8, 0x100, &[16], &[], &[16]);
    s.global_dims[0] = (1 << 32) + 1;
    assert_eq!(
        err(&s),
        TensorMapError::GlobalDim {
            dim: 0,
            value: (1 << 32) + 1
        }
    );
    s.global_dims[0] = 1 << 32;
    assert_eq!(s.validate(), Ok(()));
}

#[test]
fn tma_strides_multiple_of_16_below_2_pow_40_and_not_overlapping() {
    // 70 f32 columns = 280 bytes a row: not a multiple of 16.
    let s = TensorMapSpec::row_major_2d(TmaDataType::F32, 0x100, 100, 70, 16, 32);
    let e = err(&s);
    assert_eq!(
        e,
        TensorMapError::StrideNotMultiple {
            dim: 1,
            value: 280,
            multiple: 16
        }
    );
    assert!(e.to_string().contains("280"), "{e}");
    let big = TensorMapSpec::tiled(TmaDataType::U8, 0x100, &[16, 2], &[1 << 40], &[16, 2]);
    assert_eq!(
        err(&big),
        TensorMapError::StrideTooLarge {
            dim: 1,
            value: 1 << 40
        }
    );
    // Rows of 68 f32 (272 bytes) cannot sit 256 bytes apart.
    let overlap = TensorMapSpec::tiled(TmaDataType::F32, 0x100, &[68, 100], &[256], &[32, 16]);
    assert_eq!(
        err(&overlap),
        TensorMapError::StrideOverlap {
            dim: 1,
            value: 256,
            min: 272
        }
    );
    // Third dimension: planes of 100 rows of 272 bytes need 27200 bytes.
    let planes = TensorMapSpec::tiled(
        TmaDataType::F32,
        0x100,
        &[68, 100, 4],
        &[272, 27184],
        &[32, 16, 1],
    );
    assert_eq!(
        err(&planes),
        TensorMapError::StrideOverlap {
            dim: 2,
            value: 27184,
            min: 27200
        }
    );
    // 32-byte interleave needs strides in multiples of 32.
    let il = TensorMapSpec::tiled(
        TmaDataType::F16,
        0x20,
        &[16, 8, 8],
        &[32 * 8 + 16, 4096],
        &[16, 8, 8],
    )
    .with_interleave(TmaInterleave::B32)
    .with_swizzle(TmaSwizzle::B32);
    assert_eq!(
        err(&il),
        TensorMapError::StrideNotMultiple {
            dim: 1,
            value: 272,
            multiple: 32
        }
    );
}

#[test]
fn tma_box_dims_in_range_and_inner_bytes() {
    let mut s = good();
    s.box_dims[1] = 257;
    assert_eq!(err(&s), TensorMapError::BoxDim { dim: 1, value: 257 });
    s.box_dims[1] = 0;
    assert_eq!(err(&s), TensorMapError::BoxDim { dim: 1, value: 0 });
    // 6 f16 = 12 bytes: not a multiple of 16.
    let s = TensorMapSpec::row_major_2d(TmaDataType::F16, 0x100, 64, 64, 8, 6);
    assert_eq!(
        err(&s),
        TensorMapError::BoxInnerBytes {
            box_inner: 6,
            elem_bytes: 2,
            bytes: 12
        }
    );
}

#[test]
fn tma_box_inner_within_swizzle_span() {
    // 32 f32 = 128 bytes: fits 128 B, not 64 B or 32 B.
    for (swizzle, span) in [(TmaSwizzle::B64, 64), (TmaSwizzle::B32, 32)] {
        let e = err(&good().with_swizzle(swizzle));
        assert_eq!(
            e,
            TensorMapError::BoxExceedsSwizzle {
                bytes: 128,
                swizzle,
                span
            }
        );
    }
    // 128 f16 = 256 bytes exceed even 128 B.
    let s = TensorMapSpec::row_major_2d(TmaDataType::BF16, 0x100, 256, 256, 64, 128)
        .with_swizzle(TmaSwizzle::B128);
    let e = err(&s);
    assert!(matches!(
        e,
        TensorMapError::BoxExceedsSwizzle {
            bytes: 256,
            span: 128,
            ..
        }
    ));
    assert!(e.to_string().contains("256"), "{e}");
}

#[test]
fn tma_element_strides_interleave_and_fill_rules() {
    let e = err(&good().with_element_strides(&[1, 9]));
    assert_eq!(e, TensorMapError::ElementStride { dim: 1, value: 9 });
    let e = err(&good().with_element_strides(&[0, 1]));
    assert_eq!(e, TensorMapError::ElementStride { dim: 0, value: 0 });
    assert_eq!(
        err(&good().with_interleave(TmaInterleave::B16)),
        TensorMapError::InterleaveRank { rank: 2 }
    );
    let il = TensorMapSpec::tiled(
        TmaDataType::F16,
        0x20,
        &[16, 8, 8],
        &[256, 2048],
        &[16, 8, 8],
    )
    .with_interleave(TmaInterleave::B32)
    .with_swizzle(TmaSwizzle::B128);
    assert_eq!(
        err(&il),
        TensorMapError::Interleave32NeedsSwizzle32 {
            swizzle: TmaSwizzle::B128
        }
    );
    let ints = TensorMapSpec::row_major_2d(TmaDataType::I32, 0x100, 64, 64, 8, 8)
        .with_oob_fill(TmaOobFill::NanRequestZeroFma);
    assert_eq!(
        err(&ints),
        TensorMapError::NanFillNeedsFloat {
            dtype: TmaDataType::I32
        }
    );
    assert_eq!(
        good()
            .with_oob_fill(TmaOobFill::NanRequestZeroFma)
            .validate(),
        Ok(())
    );
}

#[test]
fn tensor_map_is_128_bytes_64_aligned() {
    assert_eq!(std::mem::size_of::<TensorMap>(), 128);
    assert_eq!(std::mem::align_of::<TensorMap>(), 64);
    assert_eq!(TensorMap::BYTES, 128);
}

// ---------------------------------------------------------------------------------------------
// Launch shapes

const H: DeviceLimits = DeviceLimits::hopper();

fn launch_err(l: &Launch) -> LaunchError {
    validate_launch(l, &H).expect_err("the launch breaks a rule")
}

#[test]
fn launch_valid_shapes_pass() {
    assert_eq!(
        validate_launch(&Launch::new((1, 1, 1), (1, 1, 1)), &H),
        Ok(())
    );
    assert_eq!(
        validate_launch(&Launch::new((132, 1, 1), (1024, 1, 1)), &H),
        Ok(())
    );
    assert_eq!(
        validate_launch(
            &Launch::new((i32::MAX as u32, 65535, 65535), (32, 32, 1)),
            &H
        ),
        Ok(())
    );
    assert_eq!(
        validate_launch(&Launch::new((1, 1, 1), (1, 16, 64)), &H),
        Ok(())
    );
    let c = Launch::new((16, 4, 1), (128, 1, 1)).with_cluster((2, 4, 1));
    assert_eq!(validate_launch(&c, &H), Ok(()));
    let big = Launch::new((32, 1, 1), (128, 1, 1))
        .with_cluster((16, 1, 1))
        .allow_non_portable_cluster();
    assert_eq!(validate_launch(&big, &H), Ok(()));
    let smem = Launch::new((1, 1, 1), (128, 1, 1)).with_dynamic_smem(227 * 1024);
    assert_eq!(validate_launch(&smem, &H), Ok(()));
}

#[test]
fn launch_linear_covers_n() {
    assert_eq!(Launch::linear(1000, 256).grid, (4, 1, 1));
    assert_eq!(Launch::linear(1024, 256).grid, (4, 1, 1));
    assert_eq!(Launch::linear(1025, 256).grid, (5, 1, 1));
    assert_eq!(Launch::linear(0, 256).grid, (1, 1, 1));
    assert_eq!(Launch::linear(u32::MAX, 1024).grid, (4_194_304, 1, 1));
    assert_eq!(
        launch_err(&Launch::linear(10, 0)),
        LaunchError::ZeroExtent {
            what: "block",
            dims: (0, 1, 1)
        }
    );
}

#[test]
fn launch_zero_extents() {
    assert_eq!(
        launch_err(&Launch::new((0, 1, 1), (32, 1, 1))),
        LaunchError::ZeroExtent {
            what: "grid",
            dims: (0, 1, 1)
        }
    );
    assert_eq!(
        launch_err(&Launch::new((2, 1, 1), (32, 1, 1)).with_cluster((2, 0, 1))),
        LaunchError::ZeroExtent {
            what: "cluster",
            dims: (2, 0, 1)
        }
    );
}

#[test]
fn launch_block_limits() {
    let e = launch_err(&Launch::new((1, 1, 1), (1025, 1, 1)));
    assert_eq!(
        e,
        LaunchError::BlockAxisTooLarge {
            axis: "x",
            value: 1025,
            max: 1024
        }
    );
    assert_eq!(
        launch_err(&Launch::new((1, 1, 1), (1, 1, 65))),
        LaunchError::BlockAxisTooLarge {
            axis: "z",
            value: 65,
            max: 64
        }
    );
    let e = launch_err(&Launch::new((1, 1, 1), (64, 32, 1)));
    assert_eq!(
        e,
        LaunchError::TooManyThreads {
            block: (64, 32, 1),
            threads: 2048,
            max: 1024,
            limit_of: "device's"
        }
    );
    assert!(e.to_string().contains("2048"), "{e}");
}

#[test]
fn launch_grid_limits() {
    assert_eq!(
        launch_err(&Launch::new((1 << 31, 1, 1), (32, 1, 1))),
        LaunchError::GridAxisTooLarge {
            axis: "x",
            value: 1 << 31,
            max: i32::MAX as u32
        }
    );
    assert_eq!(
        launch_err(&Launch::new((1, 65536, 1), (32, 1, 1))),
        LaunchError::GridAxisTooLarge {
            axis: "y",
            value: 65536,
            max: 65535
        }
    );
}

#[test]
fn launch_cluster_rules() {
    let e = launch_err(&Launch::new((7, 1, 1), (32, 1, 1)).with_cluster((2, 1, 1)));
    assert_eq!(
        e,
        LaunchError::ClusterDoesNotDivideGrid {
            axis: "x",
            grid: 7,
            cluster: 2
        }
    );
    assert_eq!(
        launch_err(&Launch::new((4, 6, 1), (32, 1, 1)).with_cluster((2, 4, 1))),
        LaunchError::ClusterDoesNotDivideGrid {
            axis: "y",
            grid: 6,
            cluster: 4
        }
    );
    let e = launch_err(&Launch::new((16, 1, 1), (32, 1, 1)).with_cluster((16, 1, 1)));
    assert!(
        matches!(
            e,
            LaunchError::ClusterTooLarge {
                size: 16,
                max: 8,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("allow_non_portable_cluster"), "{e}");
    let e = launch_err(
        &Launch::new((32, 1, 1), (32, 1, 1))
            .with_cluster((32, 1, 1))
            .allow_non_portable_cluster(),
    );
    assert!(
        matches!(
            e,
            LaunchError::ClusterTooLarge {
                size: 32,
                max: 16,
                ..
            }
        ),
        "{e:?}"
    );
    let ampere = DeviceLimits {
        compute_capability: (8, 0),
        cluster_launch: false,
        ..H
    };
    assert_eq!(
        validate_launch(
            &Launch::new((2, 1, 1), (32, 1, 1)).with_cluster((2, 1, 1)),
            &ampere
        ),
        Err(LaunchError::ClustersUnsupported { major: 8, minor: 0 })
    );
}

#[test]
fn launch_shared_memory_limit() {
    let e = launch_err(&Launch::new((1, 1, 1), (32, 1, 1)).with_dynamic_smem(227 * 1024 + 1));
    assert_eq!(
        e,
        LaunchError::SharedMemoryTooLarge {
            dynamic: 227 * 1024 + 1,
            static_bytes: 0,
            total: 227 * 1024 + 1,
            max: 227 * 1024
        }
    );
}

#[test]
fn launch_against_kernel_facts() {
    let facts = KernelFacts {
        static_smem_bytes: 16 * 1024,
        max_threads_per_block: 256,
        required_cluster: None,
    };
    let ok = Launch::new((4, 1, 1), (256, 1, 1)).with_dynamic_smem(211 * 1024);
    assert_eq!(validate_for_kernel(&ok, &facts, &H), Ok(()));
    assert_eq!(
        validate_for_kernel(&Launch::new((4, 1, 1), (512, 1, 1)), &facts, &H),
        Err(LaunchError::TooManyThreads {
            block: (512, 1, 1),
            threads: 512,
            max: 256,
            limit_of: "kernel's"
        })
    );
    // 212 KiB dynamic + 16 KiB static = 228 KiB > 227 KiB.
    assert_eq!(
        validate_for_kernel(&ok.with_dynamic_smem(212 * 1024), &facts, &H),
        Err(LaunchError::SharedMemoryTooLarge {
            dynamic: 212 * 1024,
            static_bytes: 16 * 1024,
            total: 228 * 1024,
            max: 227 * 1024
        })
    );
    let fixed = KernelFacts {
        required_cluster: Some((2, 1, 1)),
        ..facts
    };
    assert_eq!(
        validate_for_kernel(&Launch::new((8, 1, 1), (32, 1, 1)), &fixed, &H),
        Ok(())
    );
    assert_eq!(
        validate_for_kernel(&Launch::new((7, 1, 1), (32, 1, 1)), &fixed, &H),
        Err(LaunchError::ClusterDoesNotDivideGrid {
            axis: "x",
            grid: 7,
            cluster: 2
        })
    );
    assert_eq!(
        validate_for_kernel(
            &Launch::new((8, 1, 1), (32, 1, 1)).with_cluster((4, 1, 1)),
            &fixed,
            &H
        ),
        Err(LaunchError::ClusterMismatch {
            required: (2, 1, 1),
            given: (4, 1, 1)
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Module cache key, entries, arguments

#[test]
fn ptx_hash_is_fnv1a_64() {
    // Test vectors published with the FNV hash (draft-eastlake-fnv).
    assert_eq!(ptx_hash(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(ptx_hash("a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(ptx_hash("foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn ptx_hash_is_deterministic_and_text_sensitive() {
    let copy = VADD.to_string();
    assert_eq!(ptx_hash(VADD), ptx_hash(&copy));
    assert_ne!(
        ptx_hash(VADD),
        ptx_hash(&VADD.replace("add.f32", "sub.f32"))
    );
    assert_ne!(ptx_hash(VADD), ptx_hash(&format!("{VADD} ")));
    let texts = [VADD, BAD, BIG_SMEM, CLUSTER, TMA, REQNTID];
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(ptx_hash(a), ptx_hash(b));
        }
    }
}

#[test]
fn ptx_entries_lists_kernels() {
    assert_eq!(ptx_entries(VADD), ["vadd"]);
    assert_eq!(ptx_entries(CLUSTER), ["cluster_fixed", "cluster_any"]);
    assert_eq!(ptx_entries(TMA), ["tma_load_2d", "tma_roundtrip_2d"]);
    assert_eq!(ptx_entries(".func helper() { ret; }"), Vec::<String>::new());
}

#[test]
fn kernel_args_have_abi_sizes() {
    let sizes: Vec<usize> = [
        KernelArg::U32(1),
        KernelArg::I32(-1),
        KernelArg::F32(1.0),
        KernelArg::U64(1),
        KernelArg::I64(-1),
        KernelArg::F64(1.0),
        KernelArg::Ptr(0x1000),
    ]
    .iter()
    .map(KernelArg::size_bytes)
    .collect();
    assert_eq!(sizes, [4, 4, 4, 8, 8, 8, 8]);
    assert_eq!(KernelArg::from(3u32), KernelArg::U32(3));
    assert_eq!(KernelArg::from(-3i64), KernelArg::I64(-3));
    assert_eq!(format!("{:?}", KernelArg::Ptr(255)), "Ptr(0xff)");
}

#[test]
fn runtime_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Jit>();
    both::<JitModule>();
    both::<JitFunction>();
    both::<JitError>();
}

#[test]
fn timing_median_min_max() {
    let odd = Timing {
        samples_ms: vec![1.0, 2.0, 10.0],
    };
    assert_eq!(
        (odd.median_ms(), odd.min_ms(), odd.max_ms()),
        (2.0, 1.0, 10.0)
    );
    let even = Timing {
        samples_ms: vec![1.0, 2.0, 4.0, 10.0],
    };
    assert_eq!(even.median_ms(), 3.0);
    assert_eq!(Timing { samples_ms: vec![] }.median_ms(), 0.0);
}

// ---------------------------------------------------------------------------------------------
// No GPU here

/// On a machine without an NVIDIA GPU (CI, the build machine) opening a device is an error
/// value, not a panic. Under feature `gpu` the tests run on a GPU, where this would not hold.
#[test]
#[cfg(not(feature = "gpu"))]
fn jit_new_without_gpu_is_no_gpu() {
    match Jit::new(0) {
        Err(JitError::NoGpu { reason }) => {
            assert!(!reason.is_empty());
            let text = JitError::NoGpu {
                reason: reason.clone(),
            }
            .to_string();
            assert!(text.starts_with("no usable GPU: "), "{text}");
            println!("{text}");
        }
        Err(other) => panic!("expected NoGpu, got {other}"),
        Ok(jit) => panic!("found a GPU ({jit:?}); run the GPU tests with --features gpu instead"),
    }
}

// ---------------------------------------------------------------------------------------------
// The GPU tests' PTX assembles (ptxas from RUTE_PTXAS; fails, not skips, without it)

fn ptxas(ptx: &str, arch: &str) -> std::process::Output {
    let exe = std::env::var("RUTE_PTXAS")
        .expect("RUTE_PTXAS must name a ptxas executable (CI sets it; see COMMON.md)");
    let dir = std::env::temp_dir().join(format!("rute-jit-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let name = format!("{:016x}", ptx_hash(ptx));
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).expect("write PTX");
    std::process::Command::new(exe)
        .arg(format!("-arch={arch}"))
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .expect("run ptxas")
}

#[test]
fn gpu_test_ptx_assembles() {
    for (ptx, arch) in [
        (VADD, "sm_80"),
        (BIG_SMEM, "sm_80"),
        (REQNTID, "sm_80"),
        (CLUSTER, "sm_90a"),
        (TMA, "sm_90a"),
    ] {
        let out = ptxas(ptx, arch);
        assert!(
            out.status.success(),
            "ptxas -arch={arch} refused {:?}:\n{}",
            ptx_entries(ptx),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn bad_ptx_is_refused_by_ptxas_too() {
    let out = ptxas(BAD, "sm_80");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("frobnicate"));
}
