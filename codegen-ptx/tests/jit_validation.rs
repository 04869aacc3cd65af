//! The JIT runtime's checks that need no GPU: TMA descriptor rules, launch-shape rules, the
//! module cache's hash, kernel-argument layout, and `Jit::new` reporting a missing GPU as an
//! error. Also assembles the hand-written PTX that `jit_gpu.rs` runs, so a typo there shows up
//! here, on CI, before anyone spends device time on it.
#![cfg(feature = "jit")]

use codegen_ptx::jit::{
    admit, check_args, ptx_entries, ptx_hash, ptx_signature, ptx_signatures, validate_for_kernel,
    validate_launch, BufferOwner, DeviceLimits, ForeignReason, Jit, JitError, JitFunction,
    JitModule, KernelArg, KernelFacts, Launch, LaunchError, PtxParam, TensorMap, TensorMapError,
    TensorMapSpec, Timing, TmaDataType, TmaInterleave, TmaOobFill, TmaSwizzle,
};

mod jit_ptx;

use jit_ptx::{BAD, BIG_SMEM, CLUSTER, REQNTID, TMA, VADD};

// ---------------------------------------------------------------------------------------------
// TMA descriptors

/// A valid descriptor: a 100 x 68 f32 row-major matrix at a 256-byte aligned address, 16 x 32
/// boxes (128 bytes a box row).
fn good() -> TensorMapSpec {
    TensorMapSpec::row_major_2d(TmaDataType::F32, 100, 68, 16, 32)
}

fn err(spec: &TensorMapSpec) -> TensorMapError {
    spec.validate().expect_err("the spec breaks a rule")
}

#[test]
fn tma_valid_specs_pass() {
    assert_eq!(good().validate(), Ok(()));
    assert_eq!(good().with_swizzle(TmaSwizzle::B128).validate(), Ok(()));
    // 64 f16 columns = 128 bytes: the widest box a 128-byte swizzle takes.
    let f16 = TensorMapSpec::row_major_2d(TmaDataType::F16, 4096, 4096, 64, 64)
        .with_swizzle(TmaSwizzle::B128);
    assert_eq!(f16.validate(), Ok(()));
    // Rank 5 with the largest box and element strides.
    let r5 = TensorMapSpec::tiled(
        TmaDataType::U8,
        &[256, 2, 2, 2, 2],
        &[256, 512, 1024, 2048],
        &[256, 1, 1, 1, 2],
    )
    .with_element_strides(&[1, 1, 1, 1, 8]);
    assert_eq!(r5.validate(), Ok(()));
    // Interleaved 32 B with its required swizzle, address and stride multiples.
    let il = TensorMapSpec::tiled(
        TmaDataType::F16,
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
    let six = TensorMapSpec::tiled(TmaDataType::U8, &[16; 6], &[16; 5], &[16; 6]);
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
    let s = good();
    assert_eq!(s.validate_for(0x7f00_0000_0100, 1 << 20), Ok(()));
    assert_eq!(s.validate_for(0, 1 << 20), Err(TensorMapError::NullAddress));
    let e = s.validate_for(0x1008, 1 << 20).unwrap_err();
    assert_eq!(
        e,
        TensorMapError::MisalignedAddress {
            address: 0x1008,
            align: 16
        }
    );
    assert!(e.to_string().contains("0x1008"), "{e}");
    // 32-byte interleave needs 32-byte alignment: 0x1010 is 16- but not 32-aligned.
    let il = TensorMapSpec::tiled(TmaDataType::F16, &[16, 8, 8], &[256, 2048], &[16, 8, 8])
        .with_interleave(TmaInterleave::B32)
        .with_swizzle(TmaSwizzle::B32);
    assert_eq!(
        il.validate_for(0x1010, 1 << 20),
        Err(TensorMapError::MisalignedAddress {
            address: 0x1010,
            align: 32
        })
    );
    // The rules of the spec itself come first.
    let mut bad = good();
    bad.box_dims[0] = 0;
    assert!(matches!(
        bad.validate_for(0, 0),
        Err(TensorMapError::BoxDim { .. })
    ));
}

/// A map over a buffer must not reach past it: the TMA unit reads and writes every element of
/// the tensor the map describes without further checks. Before the map took its buffer, a spec
/// could name any address and extent.
#[test]
fn tma_tensor_must_fit_its_buffer() {
    // 100 rows of 68 f32, rows 272 bytes apart: the last element ends at 99 * 272 + 272.
    let s = good();
    assert_eq!(s.extent_bytes(), 27_200);
    assert_eq!(s.validate_for(0x1000, 27_200), Ok(()));
    assert_eq!(
        s.validate_for(0x1000, 27_199),
        Err(TensorMapError::ExceedsBuffer {
            needs: 27_200,
            bytes: 27_199
        })
    );
    // Padded rows: the last row's padding is not reached.
    let padded = TensorMapSpec::tiled(TmaDataType::F32, &[68, 100], &[512], &[32, 16]);
    assert_eq!(padded.extent_bytes(), 99 * 512 + 272);
    // Rank 3, and the largest extents (2^32 elements of 8 bytes a row, strides near 2^40)
    // without overflow.
    let planes = TensorMapSpec::tiled(
        TmaDataType::F32,
        &[68, 100, 4],
        &[272, 27_200],
        &[32, 16, 1],
    );
    assert_eq!(planes.extent_bytes(), 4 * 27_200);
    let huge = TensorMapSpec::tiled(
        TmaDataType::F64,
        &[1 << 32, 1 << 32],
        &[(1 << 40) - 16],
        &[2, 1],
    );
    assert_eq!(huge.validate(), Ok(()));
    assert!(huge.extent_bytes() > u128::from(u64::MAX));
    assert!(matches!(
        huge.validate_for(0x1000, u64::MAX),
        Err(TensorMapError::ExceedsBuffer { .. })
    ));
    // Interleaved: the inner extent rounds up to the 32-byte granule.
    let il = TensorMapSpec::tiled(TmaDataType::F16, &[12, 8, 8], &[256, 2048], &[16, 8, 8])
        .with_interleave(TmaInterleave::B32)
        .with_swizzle(TmaSwizzle::B32);
    assert_eq!(il.extent_bytes(), 32 + 7 * 256 + 7 * 2048);
}

#[test]
fn tma_global_dims_in_range() {
    let mut s = good();
    s.global_dims[1] = 0;
    assert_eq!(err(&s), TensorMapError::GlobalDim { dim: 1, value: 0 });
    let mut s = TensorMapSpec::tiled(TmaDataType::U8, &[16], &[], &[16]);
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
    let s = TensorMapSpec::row_major_2d(TmaDataType::F32, 100, 70, 16, 32);
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
    let big = TensorMapSpec::tiled(TmaDataType::U8, &[16, 2], &[1 << 40], &[16, 2]);
    assert_eq!(
        err(&big),
        TensorMapError::StrideTooLarge {
            dim: 1,
            value: 1 << 40
        }
    );
    // Rows of 68 f32 (272 bytes) cannot sit 256 bytes apart.
    let overlap = TensorMapSpec::tiled(TmaDataType::F32, &[68, 100], &[256], &[32, 16]);
    assert_eq!(
        err(&overlap),
        TensorMapError::StrideOverlap {
            dim: 1,
            value: 256,
            min: 272
        }
    );
    // Third dimension: planes of 100 rows of 272 bytes need 27200 bytes.
    let planes = TensorMapSpec::tiled(TmaDataType::F32, &[68, 100, 4], &[272, 27184], &[32, 16, 1]);
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
    let s = TensorMapSpec::row_major_2d(TmaDataType::F16, 64, 64, 8, 6);
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
    let s = TensorMapSpec::row_major_2d(TmaDataType::BF16, 256, 256, 64, 128)
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
    let il = TensorMapSpec::tiled(TmaDataType::F16, &[16, 8, 8], &[256, 2048], &[16, 8, 8])
        .with_interleave(TmaInterleave::B32)
        .with_swizzle(TmaSwizzle::B128);
    assert_eq!(
        err(&il),
        TensorMapError::Interleave32NeedsSwizzle32 {
            swizzle: TmaSwizzle::B128
        }
    );
    let ints = TensorMapSpec::row_major_2d(TmaDataType::I32, 64, 64, 8, 8)
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
    // The descriptor's own size and alignment are checked beside it (tensor_map.rs).
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

/// A programmatic dependent launch is sm_90's; on an older device it is refused before the
/// driver sees it, and on sm_90 it passes with or without a cluster.
#[test]
fn programmatic_launch_needs_sm_90() {
    let ampere = DeviceLimits {
        compute_capability: (8, 6),
        cluster_launch: false,
        ..H
    };
    let pdl = Launch::new((2, 1, 1), (32, 1, 1)).with_programmatic_launch();
    let e = validate_launch(&pdl, &ampere).unwrap_err();
    assert_eq!(
        e,
        LaunchError::ProgrammaticUnsupported { major: 8, minor: 6 }
    );
    assert!(e.to_string().contains("compute capability 9.0"), "{e}");
    assert_eq!(validate_launch(&pdl, &H), Ok(()));
    assert_eq!(validate_launch(&pdl.with_cluster((2, 1, 1)), &H), Ok(()));
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
    // SAFETY: never launched.
    let raw = unsafe { KernelArg::raw_pointer(0x1000) };
    let sizes: Vec<usize> = [
        KernelArg::U8(1),
        KernelArg::I16(-1),
        KernelArg::U32(1),
        KernelArg::I32(-1),
        KernelArg::F32(1.0),
        KernelArg::U64(1),
        KernelArg::I64(-1),
        KernelArg::F64(1.0),
        raw,
    ]
    .iter()
    .map(KernelArg::size_bytes)
    .collect();
    assert_eq!(sizes, [1, 2, 4, 4, 4, 8, 8, 8, 8]);
    assert!(matches!(KernelArg::from(3u32), KernelArg::U32(3)));
    assert!(matches!(KernelArg::from(-3i64), KernelArg::I64(-3)));
    // SAFETY: never launched.
    let raw = unsafe { KernelArg::raw_pointer(255) };
    assert_eq!(format!("{raw:?}"), "RawPointer(0xff)");
    assert_eq!(raw.address(), Some(255));
    assert_eq!(KernelArg::U64(255).address(), None);
}

/// A `Jit` of a context 0x10 whose stream is 0x20.
const JIT: BufferOwner = BufferOwner {
    ordinal: 0,
    context: 0x10,
    stream: 0x20,
    tracking: true,
};

fn params(ptx: &str, kernel: &str) -> Vec<PtxParam> {
    ptx_signature(ptx, kernel)
        .unwrap_or_else(|e| panic!("{kernel}: {e}"))
        .unwrap_or_else(|| panic!("no {kernel}"))
}

/// Arguments are checked against the parameter list of the PTX the module came from, on any
/// driver. Before, only sizes were checked, and only on drivers from CUDA 12.4 on (through
/// `cuFuncGetParamInfo`): an f32 for a `.u32`, or an address for a `.u32` pair, went through.
#[test]
fn arguments_are_checked_against_the_ptx_signature() {
    let vadd = params(VADD, "vadd");
    // SAFETY (for every raw pointer below): never launched.
    let p = || unsafe { KernelArg::raw_pointer(0x7000_0000) };
    assert_eq!(
        check_args("vadd", &vadd, &[p(), p(), p(), KernelArg::U32(16)], &JIT),
        Ok(())
    );
    assert_eq!(
        check_args("vadd", &vadd, &[p(), p(), p()], &JIT),
        Err(JitError::ArgumentCount {
            kernel: "vadd".into(),
            expected: 4,
            given: 3
        })
    );
    // Same size, wrong kind: a float (or a signed int) for `.u32 n`.
    for wrong in [KernelArg::F32(16.0), KernelArg::I32(16)] {
        let e = check_args("vadd", &vadd, &[p(), p(), p(), wrong], &JIT).unwrap_err();
        assert!(
            matches!(
                e,
                JitError::ArgumentKind {
                    index: 3,
                    given: 4,
                    expected: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("`.param .u32 n`"), "{e}");
    }
    // Wrong size: a u64 for `.u32 n`; a u32 or a tensor-map slot for a pointer.
    match check_args("vadd", &vadd, &[p(), p(), p(), KernelArg::U64(16)], &JIT) {
        Err(JitError::ArgumentKind {
            index: 3,
            given: 8,
            expected: 4,
            ..
        }) => {}
        other => panic!("expected ArgumentKind, got {other:?}"),
    }
    assert!(matches!(
        check_args(
            "vadd",
            &vadd,
            &[KernelArg::U32(1), p(), p(), KernelArg::U32(16)],
            &JIT
        ),
        Err(JitError::ArgumentKind { index: 0, .. })
    ));
    // A pointer cannot fill a u32 either, though a u64 could fill a `.u64` pointer slot.
    assert!(matches!(
        check_args("vadd", &vadd, &[p(), p(), p(), p()], &JIT),
        Err(JitError::ArgumentKind { index: 3, .. })
    ));
    assert_eq!(
        check_args(
            "vadd",
            &vadd,
            &[KernelArg::U64(0), p(), p(), KernelArg::U32(16)],
            &JIT
        ),
        Ok(())
    );
    // A tensor-map parameter takes only a tensor map.
    let tma = params(TMA, "tma_load_2d");
    assert!(tma[0].is_tensor_map());
    let e = check_args(
        "tma_load_2d",
        &tma,
        &[p(), p(), p(), KernelArg::U32(1), KernelArg::U32(1)],
        &JIT,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            JitError::ArgumentKind {
                index: 0,
                given: 8,
                expected: 128,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains(".param .align 64 .b8 tmap[128]"),
        "{e}"
    );
}

/// `.ptr` parameters say more: the space, which a buffer must be in (global or generic), and
/// the alignment the kernel assumes.
#[test]
fn ptr_parameters_check_space_and_alignment() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
               .visible .entry k(.param .u64 .ptr.global.align 16 a, .param .u64 .ptr.shared s)\n{ ret; }\n";
    let ps = params(ptx, "k");
    // SAFETY (for every raw pointer below): never launched.
    let at = |a| unsafe { KernelArg::raw_pointer(a) };
    assert_eq!(check_args("k", &ps, &[at(0x1000), at(0x40)], &JIT), Ok(()));
    assert_eq!(
        check_args("k", &ps, &[at(0x1008), at(0x40)], &JIT),
        Err(JitError::ArgumentMisaligned {
            kernel: "k".into(),
            index: 0,
            address: 0x1008,
            align: 16,
            param: ".param .u64 .ptr.global.align 16 a".into()
        })
    );
    // A 64-bit integer is not a pointer where the PTX says `.ptr`.
    assert!(matches!(
        check_args("k", &ps, &[KernelArg::U64(0x1000), at(0x40)], &JIT),
        Err(JitError::ArgumentKind { index: 0, .. })
    ));
}

/// Which buffers a `Jit`'s stream may use (the rule behind `Jit::check_buffer`, every buffer
/// argument, tensor maps and `Gemm`). Before, every buffer of the same context was taken, with
/// event tracking off, so another stream's buffer was used unordered.
#[test]
fn buffers_are_admitted_only_where_their_uses_are_ordered() {
    let own = JIT;
    assert_eq!(admit(&own, &JIT), Ok(()));
    // Another created stream of the same context, tracked: ordered by events.
    let other_stream = BufferOwner {
        stream: 0x30,
        ..JIT
    };
    assert_eq!(admit(&other_stream, &JIT), Ok(()));
    let refused = |owner: BufferOwner| admit(&owner, &JIT).unwrap_err().reason;
    assert_eq!(
        refused(BufferOwner {
            context: 0x11,
            ..other_stream
        }),
        ForeignReason::OtherContext
    );
    // Another context is refused even on a stream handle equal to the Jit's.
    assert_eq!(
        refused(BufferOwner {
            context: 0x11,
            ..JIT
        }),
        ForeignReason::OtherContext
    );
    assert_eq!(
        refused(BufferOwner {
            tracking: false,
            ..other_stream
        }),
        ForeignReason::Untracked
    );
    for default in [0, 1, 2] {
        assert_eq!(
            refused(BufferOwner {
                stream: default,
                ..other_stream
            }),
            ForeignReason::DefaultStream
        );
    }
    // The Jit's own stream needs no events: stream order orders everything on it.
    assert_eq!(
        admit(
            &BufferOwner {
                tracking: false,
                ..JIT
            },
            &JIT
        ),
        Ok(())
    );
    // The error names both owners.
    let e = admit(
        &BufferOwner {
            ordinal: 1,
            context: 0xabc,
            stream: 0,
            tracking: true,
        },
        &JIT,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "belongs to device 1 (context 0xabc, default stream 0x0), not to the Jit's device 0 \
         (context 0x10, stream 0x20): it is another CUDA context, where its address means \
         nothing; allocate it through the same Jit"
    );
    let named = JitError::ForeignBuffer {
        buffer: "argument 2 of `vadd`".into(),
        error: Box::new(e),
    };
    assert!(
        named
            .to_string()
            .starts_with("argument 2 of `vadd` belongs to device 1"),
        "{named}"
    );
}

/// The signatures of the GPU tests' hand-written PTX, read from the text.
#[test]
fn signatures_of_the_gpu_test_modules() {
    let names = |ps: &[PtxParam]| ps.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(&params(VADD, "vadd")),
        [
            ".param .u64 a",
            ".param .u64 b",
            ".param .u64 c",
            ".param .u32 n"
        ]
    );
    assert_eq!(
        names(&params(TMA, "tma_roundtrip_2d")),
        [
            ".param .align 64 .b8 tmap_in[128]",
            ".param .align 64 .b8 tmap_out[128]"
        ]
    );
    let offsets: Vec<(usize, usize)> = params(TMA, "tma_load_2d")
        .iter()
        .map(|p| (p.offset, p.size))
        .collect();
    assert_eq!(offsets, [(0, 128), (128, 8), (136, 8), (144, 4), (148, 4)]);
    for (ptx, kernel) in [
        (CLUSTER, "cluster_fixed"),
        (CLUSTER, "cluster_any"),
        (REQNTID, "fixed_block"),
    ] {
        assert_eq!(names(&params(ptx, kernel)), [".param .u64 out"], "{kernel}");
    }
    assert_eq!(params(BIG_SMEM, "big_smem").len(), 2);
    // The bad module's signature still reads (the driver refuses its body).
    assert!(ptx_signatures(BAD).is_ok());
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

/// A scratch directory, removed with what is in it when dropped: a test run leaves nothing in
/// the temp directory.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ptxas(ptx: &str, arch: &str) -> std::process::Output {
    let exe = std::env::var("RUTE_PTXAS")
        .expect("RUTE_PTXAS must name a ptxas executable (CI sets it; see COMMON.md)");
    let name = format!("{:016x}", ptx_hash(ptx));
    // One directory per call: the tests run in parallel threads of one process.
    let dir = Scratch(std::env::temp_dir().join(format!(
        "rute-jit-ptxas-{}-{name}-{arch}",
        std::process::id()
    )));
    let dir = &dir.0;
    std::fs::create_dir_all(dir).expect("temp dir");
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
        // The spin every timed repeat waits behind, on the oldest and the newest target.
        (codegen_ptx::jit::SPIN_PTX, "sm_80"),
        (codegen_ptx::jit::SPIN_PTX, "sm_100a"),
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
