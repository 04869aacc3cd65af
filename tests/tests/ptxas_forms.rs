//! The kernels of GEMMs in forms past the packed one (operand majors, leading dimensions,
//! batches, epilogues, output types), as `check_form` plans them for the H200 and for an sm_80
//! device: every plan's launch arguments fill its kernel's parameters, and its PTX assembles
//! with ptxas for its target without spills or a stack frame, its shared memory within the
//! device's.

use dsl_core::ir::Target;
use kernels::gemm::epilogue::{
    Activation, Bias, Elementwise, Epilogue, Gated, Map, Residual, Source,
};
use kernels::gemm::layout::{Batch, Form, Major, OperandLayout, OutType};
use kernels::gemm::{
    check_form, Accum, Config, Device, FormLens, GemmDtype, KernelChoice, Plan, Problem,
};

fn epilogues() -> Vec<Epilogue> {
    Epilogue::one_of_each()
}

/// Plans `form` for `m x n x k` with `kernel` on `device`; `None` where that program refuses.
fn plan(
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    form: &Form,
    kernel: KernelChoice,
    device: &Device,
) -> Option<Plan> {
    plan_as(shape, dtype, form, (kernel, None), device).ok()
}

/// Plans `form` for `m x n x k` with `kernel` and its configuration `config` (`None`: the
/// chooser's) on `device`, or the program's refusal in a sentence.
fn plan_as(
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    form: &Form,
    (kernel, config): (KernelChoice, Option<&str>),
    device: &Device,
) -> Result<Plan, String> {
    let config = match config {
        Some(spec) => Some(Config::parse(kernel, spec).map_err(|e| e.to_string())?),
        None => None,
    };
    let p = Problem {
        m,
        n,
        k,
        dtype,
        acc: Accum::F32,
        kernel,
        config,
    };
    check_form(&p, form, lens_of(form, (m, n, k)), device).map_err(|e| e.to_string())
}

/// `epilogue`'s form of `m x n x k` with alpha and beta, and C, D and the residual each
/// `cols` (D's columns) and some apart.
fn fused_form(epilogue: Epilogue, (m, n, k): (usize, usize, usize)) -> Form {
    let cols = epilogue.out_cols(n);
    Form {
        epilogue,
        alpha: 0.5,
        beta: 1.0,
        ldc: cols + 8,
        ldd: cols + 16,
        ldr: cols,
        ..Form::packed(m, n, k)
    }
}

/// Buffers as long as `form` reaches over `m x n x k`.
fn lens_of(form: &Form, (m, n, k): (usize, usize, usize)) -> FormLens {
    FormLens::from(form.spans(m, n, k).unwrap())
}

fn assemble(
    plan: &Plan,
    (m, n, k): (usize, usize, usize),
    form: &Form,
    device: &Device,
) -> codegen_ptx::ptxas::PtxasReport {
    let launch = plan.launch_form(m as u32, n as u32, k as u32, form, device);
    assert_eq!(launch.check(), Ok(()), "{}", plan.describe());
    rute_tests::gemm::assert_args_fit(plan, &launch, device.target);
    let kernel = plan.kernel().unwrap();
    let ptx = codegen_ptx::emit(&kernel, device.target).unwrap();
    let r = codegen_ptx::ptxas::assemble(&ptx, device.target)
        .unwrap_or_else(|e| panic!("{}: {e}", plan.describe()));
    assert_eq!(
        r.spill_store_bytes + r.spill_load_bytes + r.stack_frame_bytes,
        0,
        "{}: {} registers, spills {}/{}, stack {}",
        plan.describe(),
        r.registers,
        r.spill_store_bytes,
        r.spill_load_bytes,
        r.stack_frame_bytes
    );
    assert!(
        r.shared_bytes + u64::from(launch.dynamic_smem_bytes) <= u64::from(device.smem_per_block),
        "{}: shared memory",
        plan.describe()
    );
    r
}

/// The Hopper program's epilogues on the H200, on the default schedules of a large, a
/// decode-shaped (swapped: a gated epilogue's pairs across lanes) and a short-K problem; each is
/// the hopper_ws plan.
#[test]
fn hopper_form_kernels_assemble() {
    let h200 = Device::h200();
    let hopper = KernelChoice::named("hopper_ws").unwrap();
    let mut planned = 0;
    for shape in [(4096, 4096, 4096), (16, 4096, 4096), (8192, 2048, 512)] {
        for epilogue in epilogues() {
            let form = fused_form(epilogue, shape);
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let p = plan(shape, dtype, &form, hopper, &h200)
                    .unwrap_or_else(|| panic!("{shape:?} {epilogue:?}: refused"));
                assert_eq!(p.program(), "hopper_ws");
                assemble(&p, shape, &form, &h200);
                planned += 1;
            }
        }
    }
    assert_eq!(planned, 3 * epilogues().len() * 2);
}

/// The Hopper program's D in f32 (stored from the registers) and in bf16 from f16 inputs (the
/// schedule's store), and its gated epilogues, on the default schedules of the LLM suite's
/// gate+up projection for a decode batch (swapped), a few tokens (swapped, in clusters of four),
/// a mid-size M streamed over every SM (swapped) and a prefill, and on the widest tile: each is
/// the hopper_ws plan, assembles without spills, and its registers are printed.
#[test]
fn hopper_output_type_and_gated_kernels_assemble() {
    let h200 = Device::h200();
    let hopper = KernelChoice::named("hopper_ws").unwrap();
    let epilogues = [
        Epilogue::Plain,
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Silu),
            residual: Residual::Add,
        }),
        Epilogue::SWIGLU,
        Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act: Activation::GeluTanh,
            residual: Residual::Add,
        }),
    ];
    let shapes = [
        (16, 28672, 4096),
        (64, 28672, 4096),
        (200, 4096, 4096),
        (2048, 28672, 4096),
    ];
    let mut table = Vec::new();
    for shape in shapes {
        for epilogue in epilogues {
            let (m, n, k) = shape;
            let cols = epilogue.out_cols(n);
            let outs = if epilogue.is_gated() {
                vec![
                    (GemmDtype::Bf16, None),
                    (GemmDtype::F16, Some(OutType::F32)),
                ]
            } else {
                vec![
                    (GemmDtype::Bf16, Some(OutType::F32)),
                    (GemmDtype::F16, Some(OutType::Bf16)),
                ]
            };
            for (dtype, out) in outs {
                let form = Form {
                    epilogue,
                    out,
                    alpha: 0.5,
                    beta: 1.0,
                    ldc: cols,
                    ldd: cols + 8,
                    ldr: cols,
                    ..Form::packed(m, n, k)
                };
                let p = plan(shape, dtype, &form, hopper, &h200)
                    .unwrap_or_else(|| panic!("{shape:?} {epilogue:?} {out:?}: refused"));
                assert_eq!(p.program(), "hopper_ws", "{}", p.describe());
                let r = assemble(&p, shape, &form, &h200);
                table.push(format!(
                    "{m}x{n}x{k} {:<60} {:>3} regs, 0 spills",
                    p.entry(),
                    r.registers
                ));
            }
        }
    }
    println!("{}", table.join("\n"));
}

/// The multistage and strided programs' forms on sm_80 and the H200: majors, padded leading
/// dimensions, batches, epilogues, output types.
#[test]
fn multistage_and_strided_form_kernels_assemble() {
    let devices = [Device::unknown(Target::Sm80), Device::h200()];
    let (m, n, k) = (1000, 768, 520);
    let mut planned = 0;
    for device in &devices {
        for (ma, mb) in [(Major::K, Major::MN), (Major::MN, Major::MN)] {
            for (i, epilogue) in epilogues().into_iter().enumerate() {
                let cols = epilogue.out_cols(n);
                let out = [None, Some(OutType::F32), Some(OutType::Bf16)][i % 3];
                let layout = |major, rows| OperandLayout {
                    major,
                    ld: match major {
                        Major::K => k + 8,
                        Major::MN => rows + 24,
                    },
                };
                let ldd = cols + 4;
                let form = Form {
                    a: layout(ma, m),
                    b: layout(mb, n),
                    epilogue,
                    out,
                    ldc: cols,
                    ldd,
                    ldr: cols + 2,
                    batch: Batch {
                        count: 3,
                        a: 0,
                        b: layout(mb, n).span(n, k),
                        c: 0,
                        d: m * ldd,
                        residual: 0,
                    },
                    ..Form::packed(m, n, k)
                };
                for kernel in ["multistage", "strided"] {
                    let choice = KernelChoice::named(kernel).unwrap();
                    let p = plan((m, n, k), GemmDtype::F16, &form, choice, device)
                        .unwrap_or_else(|| panic!("{kernel} refused {epilogue:?}"));
                    assemble(&p, (m, n, k), &form, device);
                    planned += 1;
                }
            }
        }
    }
    assert_eq!(planned, 2 * 2 * epilogues().len() * 2);
}

/// The Hopper program's kernels for MN-major operands on the H200 (every major pair but the
/// packed one, padded leading dimensions), on the default schedules of large, decode-shaped,
/// mid-size and short-K problems: each is the hopper_ws plan, and assembles without spills.
#[test]
fn hopper_mn_major_form_kernels_assemble() {
    let h200 = Device::h200();
    let hopper = KernelChoice::named("hopper_ws").unwrap();
    let shapes = [
        (4096, 4096, 4096),
        (16, 4096, 4096),
        (200, 4096, 4096),
        (8192, 2048, 512),
    ];
    let pairs = [
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ];
    let epilogues = epilogues();
    for (s, shape) in shapes.into_iter().enumerate() {
        let (m, n, k) = shape;
        for (p, (ma, mb)) in pairs.into_iter().enumerate() {
            let layout = |major, rows| OperandLayout {
                major,
                ld: match major {
                    Major::K => k + 8,
                    Major::MN => rows + 8 * (p + 1),
                },
            };
            let epilogue = epilogues[(s * pairs.len() + p) % epilogues.len()];
            let cols = epilogue.out_cols(n);
            let form = Form {
                a: layout(ma, m),
                b: layout(mb, n),
                epilogue,
                ldc: cols,
                ldd: cols + 8,
                ldr: cols,
                ..Form::packed(m, n, k)
            };
            let dtype = [GemmDtype::Bf16, GemmDtype::F16][p % 2];
            let plan = plan(shape, dtype, &form, hopper, &h200)
                .unwrap_or_else(|| panic!("{shape:?} A {ma:?} B {mb:?} {epilogue:?}: refused"));
            assert_eq!(plan.program(), "hopper_ws");
            assemble(&plan, shape, &form, &h200);
        }
    }
}

/// One batched case: the schedule asked for (`None`: the chooser's), the batch's count, the
/// shape, whether the batch shares B.
type BatchCase = (Option<&'static str>, usize, (usize, usize, usize), bool);

/// A strided batch of `count` in the layouts the tests take: operands in `(ma, mb)` with padded
/// leading dimensions, each GEMM's matrices a gap apart (the shared B of `shared_b` one matrix,
/// stride 0), every stride a multiple of 16 bytes.
fn batched_form(
    (m, n, k): (usize, usize, usize),
    count: usize,
    (ma, mb): (Major, Major),
    epilogue: Epilogue,
    shared_b: bool,
) -> Form {
    let layout = |major, rows: usize| OperandLayout {
        major,
        ld: match major {
            Major::K => k + 8,
            Major::MN => rows.next_multiple_of(8) + 16,
        },
    };
    let (a, b) = (layout(ma, m), layout(mb, n));
    let outer = |l: &OperandLayout, rows: usize| match l.major {
        Major::K => rows * l.ld,
        Major::MN => k * l.ld,
    };
    let cols = epilogue.out_cols(n);
    let ldd = cols + 8;
    Form {
        a,
        b,
        epilogue,
        alpha: 0.5,
        beta: 1.0,
        ldc: cols,
        ldd,
        ldr: cols + 16,
        batch: Batch {
            count,
            a: outer(&a, m) + 64,
            b: if shared_b { 0 } else { outer(&b, n) + 8 },
            c: m * cols,
            d: m * ldd + 8,
            residual: m * (cols + 16),
        },
        ..Form::packed(m, n, k)
    }
}

/// Strided batches in one launch of the Hopper program on the H200, as `check_form` plans them:
/// the shapes (16 x 1024^3; attention's 64 x 512 x 512 x 128), decode, one-row and
/// few-token batches on the chooser's schedules, and schedules asked for with a cluster,
/// ping-pong consumers from a queue, A and B swapped, D stored from the registers, stream-K over
/// every tile, the Hilbert order and a resident B the batch shares; every pair of majors, the
/// plain sum and an epilogue with C, a bias, GELU and a residual (on the few-token batches'
/// swapped tiles 176 and 208 wide, C alone: the whole epilogue spills there for one GEMM as
/// well). Each is the hopper_ws plan of a batch, its launch's arguments fill its kernel's
/// parameters, and it assembles without spills within the registers a block of its threads has
/// at entry (the table: `--nocapture`).
#[test]
fn hopper_batch_kernels_assemble() {
    let h200 = Device::h200();
    let hopper = KernelChoice::named("hopper_ws").unwrap();
    let pairs = [
        (Major::K, Major::K),
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ];
    let with_c = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        bias: Some(Bias::PerColumn),
        map: Map::Activation(Activation::GeluTanh),
        residual: Residual::Add,
    });
    let c_alone = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        ..Elementwise::IDENTITY
    });
    // (the schedule asked for, the count, the shape, whether the batch shares B)
    let cases: [BatchCase; 14] = [
        (None, 16, (1024, 1024, 1024), false),
        (None, 64, (512, 512, 128), false),
        (None, 8, (16, 2048, 4096), false),
        (None, 2, (128, 6144, 4096), false),
        (None, 4, (200, 4096, 4096), false),
        (None, 3, (333, 4096, 4096), false),
        (None, 5, (4096, 256, 256), false),
        (Some("128x256x64s3_c2x1"), 4, (1000, 1024, 512), false),
        (Some("64x128x64s4_p_q"), 4, (1000, 1024, 512), false),
        (Some("128x64x64s8_t"), 4, (100, 1024, 512), false),
        (Some("128x256x64s4_f1_u8"), 4, (1000, 1024, 512), false),
        (Some("128x256x64s3_k"), 4, (1000, 1024, 512), false),
        (Some("128x256x64s3_h"), 4, (1000, 1024, 512), false),
        (
            Some("64x256x64s8_f1_e128_r4_p_l0_vfnf"),
            4,
            (4096, 256, 256),
            true,
        ),
    ];
    let mut table = Vec::new();
    for (i, (spec, count, shape, shared_b)) in cases.into_iter().enumerate() {
        let fused = if (129..=512).contains(&shape.0) {
            c_alone
        } else {
            with_c
        };
        for (e, epilogue) in [Epilogue::Plain, fused].into_iter().enumerate() {
            let majors = pairs[(i + e) % pairs.len()];
            let form = batched_form(shape, count, majors, epilogue, shared_b);
            let dtype = [GemmDtype::F16, GemmDtype::Bf16][(i + e) % 2];
            let (m, n, k) = shape;
            let problem = Problem {
                m,
                n,
                k,
                dtype,
                acc: Accum::F32,
                kernel: hopper,
                config: spec.map(|s| Config::parse(hopper, s).unwrap()),
            };
            let what = format!("{count} x {shape:?} {majors:?} {}", epilogue.describe());
            let plan = check_form(&problem, &form, lens_of(&form, shape), &h200)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(plan.program(), "hopper_ws", "{what}");
            assert!(plan.entry().ends_with("_batch"), "{what}: {}", plan.entry());
            assemble(&plan, shape, &form, &h200);
            let ptx = codegen_ptx::emit(&plan.kernel().unwrap(), Target::Sm90a).unwrap();
            let r = rute_tests::ptx::assemble_clean(&ptx, Target::Sm90a, &plan.entry());
            let threads = plan
                .downcast_ref::<kernels::hopper::HopperGemm>()
                .unwrap()
                .schedule()
                .threads();
            assert!(r.registers * threads <= 65536, "{what}: {}", r.registers);
            table.push(format!(
                "{:<72} {:>3} regs, 0 spills",
                plan.entry(),
                r.registers
            ));
        }
    }
    println!("{}", table.join("\n"));
}

/// Swapped tiles whose N (the tokens) is 8 off a multiple of 16 (`wgmma` n136, n152, n168:
/// cuBLAS's widths for 130, 150 and 333 tokens), under each kind of epilogue and both input
/// types, with D in f32 too: each assembles without spills, its shared memory within the
/// device's.
#[test]
fn swapped_tiles_eight_columns_wide_assemble() {
    let h200 = Device::h200();
    let hopper = KernelChoice::named("hopper_ws").unwrap();
    let cases = [
        ("128x152x64s5_n_t", (150, 7168, 2048)),
        ("128x136x64s5_f1_vfln_k_t", (130, 4096, 1280)),
        ("64x136x64s8_f1_vfln_t", (130, 4096, 1280)),
        ("128x168x64s4_f1_vfln_t", (333, 4672, 1024)),
    ];
    let mut planned = 0;
    for (i, (spec, shape)) in cases.into_iter().enumerate() {
        for (e, epilogue) in epilogues().into_iter().enumerate() {
            let form = Form {
                out: [None, Some(OutType::F32)][(i + e) % 2],
                ..fused_form(epilogue, shape)
            };
            let dtype = [GemmDtype::F16, GemmDtype::Bf16][e % 2];
            let what = format!("{spec} {shape:?} {}", form.epilogue.describe());
            let plan = plan_as(shape, dtype, &form, (hopper, Some(spec)), &h200)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(plan.entry().contains(spec), "{what}: {}", plan.entry());
            assemble(&plan, shape, &form, &h200);
            planned += 1;
        }
    }
    assert_eq!(planned, 4 * epilogues().len());
}
