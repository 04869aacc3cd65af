//! The Hopper program's strided batches in one launch, and the batches it passes on.

use super::*;

/// A strided batch of `count` GEMMs of `m x n x k` with operands in `majors`, padded leading
/// dimensions, and batch strides past each matrix (gaps between the GEMMs that D's must keep),
/// every stride a multiple of 8 elements (16 bytes, as TMA steps); `epilogue` with its C, bias
/// and residual.
fn strided_batch(
    (m, n, k): (usize, usize, usize),
    count: usize,
    (ma, mb): (Major, Major),
    epilogue: Epilogue,
) -> Form {
    let (a, b) = (padded(ma, m, k, 8), padded(mb, n, k, 16));
    let cols = epilogue.out_cols(n);
    let (ldc, ldd, ldr) = (cols + 8, cols + 16, cols + 24);
    // Each matrix's rows (or, MN-major, its k) `ld` apart, then a gap.
    let covered = |l: &OperandLayout, rows: usize| match l.major {
        Major::K => rows * l.ld,
        Major::MN => k * l.ld,
    };
    let batch = Batch {
        count,
        a: covered(&a, m) + 24,
        b: covered(&b, n) + 8,
        c: m * ldc + 40,
        d: m * ldd + 32,
        residual: m * ldr + 16,
    };
    Form {
        a,
        b,
        ldc,
        ldd,
        ldr,
        batch,
        epilogue,
        alpha: 0.75,
        beta: -1.25,
        ..Form::packed(m, n, k)
    }
}

/// `C`, a per-column bias and a residual: what a strided batch's epilogue reads per GEMM (C
/// and the residual) and shares (the bias).
fn batch_epilogue() -> Epilogue {
    Epilogue::Elementwise(Elementwise {
        source: Source::C,
        bias: Some(Bias::PerColumn),
        map: Map::Activation(Activation::Relu),
        residual: Residual::Add,
    })
}

/// A strided batch whose D is not the operands' type or whose epilogue is gated: f32 D (stored
/// from the registers at each GEMM's D) and bf16 D from f16 inputs (the schedule's store, its
/// map's third coordinate the batch), SwiGLU and GEGLU with a bias and a residual, under the
/// chooser's schedule and a swapped one (`_t`, gate and up traded between lanes).
#[test]
fn hopper_strided_batches_of_other_outputs_and_gated_epilogues() {
    use GemmDtype::{Bf16, F16};
    use Major::{K, MN};
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    // Each gated epilogue with a bias per column and a residual.
    let glu = |act| gated(act, Some(Bias::PerColumn), Residual::Add);
    let small = (72, 40, 72);
    let cases = [
        (None, (K, K), batch_epilogue(), Some(OutType::F32), F16),
        (
            Some("128x64x64s4_t"),
            (MN, K),
            batch_epilogue(),
            Some(OutType::F32),
            Bf16,
        ),
        (None, (K, MN), batch_epilogue(), Some(OutType::Bf16), F16),
        (None, (K, K), glu(Activation::Silu), None, Bf16),
        (
            Some("128x64x64s4_t"),
            (K, MN),
            glu(Activation::GeluTanh),
            None,
            F16,
        ),
        (
            Some("128x64x64s4_t"),
            (K, K),
            glu(Activation::Silu),
            Some(OutType::F32),
            Bf16,
        ),
    ];
    for (i, (spec, majors, epilogue, out, dtype)) in cases.into_iter().enumerate() {
        let form = Form {
            out,
            ..strided_batch(small, 3, majors, epilogue)
        };
        let (m, n, k) = small;
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: hopper(),
        };
        hopper_run(&case, spec, &device, 950 + i as u64);
    }
}

/// Strided batches under swapped tiles whose N (the tokens) is 8 columns off a multiple of 16
/// (152, 136: the staging written one element at a time, its map's third coordinate the
/// batch): the plain sum, C with a bias and a residual, SwiGLU (gate and up traded between
/// lanes) and D in f32, whole tiles and stream-K over every tile (`_k`, each GEMM's partial sums
/// its own); the tokens, the weights and K off the tiles, each case over four seeds.
#[test]
fn hopper_strided_batches_of_swapped_tiles_eight_columns_wide() {
    use GemmDtype::{Bf16, F16};
    use Major::{K, MN};
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let swiglu = gated(Activation::Silu, Some(Bias::PerColumn), Residual::Add);
    let cases = [
        (
            "128x152x64s5_t",
            (150, 264, 72),
            (K, K),
            Epilogue::Plain,
            None,
            Bf16,
        ),
        (
            "128x136x64s5_f1_vfln_k_t",
            (130, 264, 200),
            (K, MN),
            batch_epilogue(),
            None,
            F16,
        ),
        (
            "128x136x64s5_k_t",
            (130, 272, 136),
            (K, K),
            swiglu,
            None,
            Bf16,
        ),
        (
            "64x152x64s7_f1_vfln_t",
            (150, 136, 72),
            (K, MN),
            batch_epilogue(),
            Some(OutType::F32),
            F16,
        ),
    ];
    for (i, (spec, (m, n, k), majors, epilogue, out, dtype)) in cases.into_iter().enumerate() {
        let form = Form {
            out,
            ..strided_batch((m, n, k), 3, majors, epilogue)
        };
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: hopper(),
        };
        for seed in 0..4 {
            hopper_run(&case, Some(spec), &device, 1600 + 10 * i as u64 + seed);
        }
    }
}

/// One batched case of [`hopper_strided_batches`]: the schedule asked for (`None`: the
/// chooser's), the shape, the batch's count, the operands' majors, the epilogue, the element
/// type and which operands the batch shares (a stride of 0).
struct BatchCase {
    schedule: Option<&'static str>,
    shape: (usize, usize, usize),
    count: usize,
    majors: (Major, Major),
    epilogue: bool,
    dtype: GemmDtype,
    shared: (bool, bool),
}

/// A strided batch in one launch of the Hopper program: 2 to 5 GEMMs, M, N and K off the
/// tiles, every pair of operand majors, padded leading dimensions and gaps between the batch's
/// matrices (D's never written), f16 and bf16, the plain sum and an epilogue with C, a bias and
/// a residual; under the chooser's schedule and schedules with a cluster along M or N (its
/// blocks multicasting slices of one GEMM's B or A), ping-pong consumers with tiles from a
/// queue (`_p_q`), A and B swapped (`_t`), D stored from the registers (`_u`), stream-K over
/// every tile (`_k`: a tile's k-tiles shared between blocks, each GEMM's partial sums its own),
/// the Hilbert order over the batch's tiles (`_h`), an A or a B the batch shares (stride 0), and
/// that B resident (`_r`). Each plan is `hopper_ws`'s, one launch.
#[test]
fn hopper_strided_batches() {
    use GemmDtype::{Bf16, F16};
    use Major::{K, MN};
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let case = |schedule, shape, count, majors, epilogue, dtype| BatchCase {
        schedule,
        shape,
        count,
        majors,
        epilogue,
        dtype,
        shared: (false, false),
    };
    let small = (72, 40, 72);
    let cases = [
        case(None, small, 3, (K, K), true, F16),
        case(None, small, 2, (MN, K), false, Bf16),
        case(None, small, 4, (K, MN), true, Bf16),
        case(None, small, 5, (MN, MN), false, F16),
        case(
            Some("128x64x64s4_c2x1"),
            (136, 72, 40),
            2,
            (K, MN),
            true,
            Bf16,
        ),
        case(
            Some("128x64x64s4_c1x2"),
            (72, 136, 40),
            3,
            (MN, K),
            false,
            F16,
        ),
        case(Some("64x64x64s4_p_q"), small, 3, (MN, K), true, F16),
        case(Some("128x64x64s4_t"), small, 4, (MN, MN), true, Bf16),
        BatchCase {
            shared: (true, false),
            ..case(Some("128x64x64s4_t"), small, 3, (K, K), false, F16)
        },
        case(Some("128x64x64s4_u8"), small, 2, (K, MN), true, F16),
        case(Some("128x64x64s4_k"), small, 3, (MN, K), true, Bf16),
        case(Some("64x64x64s4_h"), small, 5, (K, K), false, Bf16),
        BatchCase {
            shared: (false, true),
            ..case(Some("64x64x64s4_r2_p"), small, 3, (K, MN), true, F16)
        },
    ];
    for (i, c) in cases.iter().enumerate() {
        let (m, n, k) = c.shape;
        let epilogue = if c.epilogue {
            batch_epilogue()
        } else {
            Epilogue::Plain
        };
        let mut form = strided_batch(c.shape, c.count, c.majors, epilogue);
        if c.shared.0 {
            form.batch.a = 0;
        }
        if c.shared.1 {
            form.batch.b = 0;
        }
        let run_case = Case {
            m,
            n,
            k,
            dtype: c.dtype,
            form,
            kernel: hopper(),
        };
        let plan = hopper_run(&run_case, c.schedule, &device, 900 + i as u64);
        assert!(
            plan.describe().contains("a strided batch in one launch"),
            "{}",
            plan.describe()
        );
    }
}

/// What the Hopper program cannot batch goes elsewhere with its reason: a batch stride TMA
/// cannot step by (not a multiple of 16 bytes) to the multistage program, the stride named in
/// the plan's description; a schedule asked for that holds one GEMM's B resident through the
/// walk is refused with its sentence.
#[test]
fn hopper_batches_it_cannot_take() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (72, 40, 72);
    let mut form = strided_batch((m, n, k), 2, (Major::K, Major::K), Epilogue::Plain);
    form.batch.b += 4;
    let case = Case {
        m,
        n,
        k,
        dtype: GemmDtype::F16,
        form,
        kernel: KernelChoice::Auto,
    };
    let plan = run(&case, &device, 950);
    assert_eq!(plan.program(), "multistage");
    let why = plan.fallback().unwrap_or_default();
    assert!(
        why.contains("the hopper_ws kernel cannot run it")
            && why.contains("B's batch stride of 3532 elements is 7064 bytes"),
        "{why}"
    );
    let form = strided_batch((m, n, k), 2, (Major::K, Major::K), Epilogue::Plain);
    let spans = form.spans(m, n, k).unwrap();
    let lens = FormLens {
        a: spans.a,
        b: spans.b,
        d: spans.d,
        ..FormLens::default()
    };
    let resident: HopperSchedule = "64x64x64s4_r2_p".parse().unwrap();
    let problem = Problem {
        m,
        n,
        k,
        dtype: GemmDtype::F16,
        acc: Accum::F32,
        kernel: hopper(),
        config: Some(Config::of(&HopperWs, resident)),
    };
    let e = check_form(&problem, &form, lens, &device)
        .unwrap_err()
        .to_string();
    assert!(e.contains("keeps B resident (_rR)"), "{e}");
}

/// A strided batch under the epilogue warps (`_x`): each unit's C and residual are its GEMM's,
/// the bias shared, the TMA store's third coordinate the unit's GEMM; MN-major B, M and N off
/// the tiles.
#[test]
fn hopper_strided_batch_under_the_epilogue_warps() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (136, 144, 200);
    for (i, dtype) in [GemmDtype::F16, GemmDtype::Bf16].into_iter().enumerate() {
        let form = strided_batch((m, n, k), 3, (Major::K, Major::MN), batch_epilogue());
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: hopper(),
        };
        hopper_run(&case, Some("128x128x64s4_x"), &device, 1200 + i as u64);
    }
}

/// A strided batch of the residual alone under the epilogue warps: each GEMM's R loaded by TMA
/// into the staging (R's map three deep, its stride a gap past each matrix), M and N off the
/// tiles, R's rows padded; under the chooser's schedule too.
#[test]
fn hopper_strided_batch_of_residuals_through_the_staging() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (130, 136, 72);
    for (i, spec) in [Some("128x128x64s4_x"), None].into_iter().enumerate() {
        let form = strided_batch((m, n, k), 3, (Major::K, Major::K), Epilogue::RESIDUAL);
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::Bf16, GemmDtype::F16][i],
            form,
            kernel: hopper(),
        };
        let plan = hopper_run(&case, spec, &device, 990 + i as u64);
        let staged = stages_residual(&plan);
        assert_eq!(
            staged,
            spec.is_some() || hopper_schedule(&plan).epilogue_warps()
        );
    }
}
