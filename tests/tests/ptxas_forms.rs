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
use kernels::gemm::{check_form, Accum, Device, FormLens, GemmDtype, KernelChoice, Plan, Problem};

fn epilogues() -> Vec<Epilogue> {
    let mut v = vec![
        Epilogue::Plain,
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Silu),
            residual: Residual::Add,
        }),
        Epilogue::RESIDUAL,
        Epilogue::SWIGLU,
        Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act: Activation::GeluTanh,
            residual: Residual::Add,
        }),
    ];
    for act in Activation::ALL {
        v.push(Epilogue::bias_act(act));
    }
    v
}

/// Plans `form` for `m x n x k` with `kernel` on `device`; `None` where that program refuses.
fn plan(
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    form: &Form,
    kernel: KernelChoice,
    device: &Device,
) -> Option<Plan> {
    let p = Problem {
        m,
        n,
        k,
        dtype,
        acc: Accum::F32,
        kernel,
        config: None,
    };
    let lens = FormLens::from(form.spans(m, n, k).unwrap());
    check_form(&p, form, lens, device).ok()
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
            let (m, n, _) = shape;
            let cols = epilogue.out_cols(n);
            let form = Form {
                epilogue,
                alpha: 0.5,
                beta: 1.0,
                ldc: cols + 8,
                ldd: cols + 16,
                ldr: cols,
                ..Form::packed(shape.0, shape.1, shape.2)
            };
            let _ = m;
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
