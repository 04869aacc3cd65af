//! The strided program, which runs every form: operand majors, leading dimensions, batches,
//! output types and epilogues, and the edges `auto` sends to it.

use super::*;

fn strided() -> KernelChoice {
    KernelChoice::named("strided").unwrap()
}

/// Every operand major, padded leading dimensions, a batch with a shared A, f16 and bf16 in,
/// each output type: the strided program.
#[test]
fn strided_layouts_batches_and_types() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (9, 6, 5);
    let mut seed = 0;
    for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
        for (ma, mb) in [
            (Major::K, Major::K),
            (Major::MN, Major::K),
            (Major::K, Major::MN),
            (Major::MN, Major::MN),
        ] {
            for out in [None, Some(OutType::F32), Some(OutType::Bf16)] {
                let lay = |major, rows: usize| OperandLayout {
                    major,
                    ld: match major {
                        Major::K => k + 3,
                        Major::MN => rows + 1,
                    },
                };
                let (a, b) = (lay(ma, m), lay(mb, n));
                let ldd = n + 2;
                let batch = Batch {
                    count: 2,
                    a: 0,
                    b: b.span(n, k) + 1,
                    c: 0,
                    d: (m - 1) * ldd + n + 3,
                    residual: 0,
                };
                let form = Form {
                    a,
                    b,
                    ldd,
                    batch,
                    out,
                    ..Form::packed(m, n, k)
                };
                seed += 1;
                let case = Case {
                    m,
                    n,
                    k,
                    dtype,
                    form,
                    kernel: strided(),
                };
                run(&case, &device, seed);
            }
        }
    }
}

/// Every epilogue: alpha and beta with C, biases per row and column, each activation, the
/// residual, gated pairs, a user's device function.
#[test]
fn strided_epilogues() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (7, 10, 6);
    let mut epilogues = vec![
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Relu),
            residual: Residual::Add,
        }),
        Epilogue::RESIDUAL,
        Epilogue::Elementwise(Elementwise {
            map: Map::Device(causal()),
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
    ];
    for act in Activation::ALL {
        epilogues.push(Epilogue::bias_act(act));
        epilogues.push(gated(act, Some(Bias::PerColumn), Residual::Add));
    }
    epilogues.push(Epilogue::SWIGLU);
    for (i, epilogue) in epilogues.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            alpha: 0.75,
            beta: -1.5,
            ldc: cols + 1,
            ldd: cols + 4,
            ldr: cols,
            out: if i % 2 == 0 { None } else { Some(OutType::F32) },
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: if i % 3 == 0 {
                GemmDtype::Bf16
            } else {
                GemmDtype::F16
            },
            form,
            kernel: strided(),
        };
        run(&case, &device, 100 + i as u64);
    }
}

/// K = 0 (BLAS's `beta C`) through `auto` (the multistage program) and the strided one, and a
/// packed problem through `auto`, which goes to the multistage program as before.
#[test]
fn strided_edges_and_auto() {
    let device = Device::unknown(Target::Sm80);
    let beta_c = Form {
        epilogue: Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
        beta: 2.0,
        ..Form::packed(5, 3, 0)
    };
    let case = Case {
        m: 5,
        n: 3,
        k: 0,
        dtype: GemmDtype::F16,
        form: beta_c,
        kernel: KernelChoice::Auto,
    };
    let plan = run(&case, &device, 7);
    assert_eq!(plan.program(), "multistage");
    let plan = run(
        &Case {
            kernel: strided(),
            ..case
        },
        &device,
        7,
    );
    assert_eq!(plan.program(), "strided");
    let packed = Case {
        m: 17,
        n: 5,
        k: 3,
        dtype: GemmDtype::Bf16,
        form: Form::packed(17, 5, 3),
        kernel: KernelChoice::Auto,
    };
    let plan = run(&packed, &device, 8);
    assert_eq!(plan.program(), "multistage");
    // On the H200, K = 0 with rows TMA could map: no tensor map has an extent of 0, so the
    // Hopper program passes it on, saying why, and D is beta C.
    let h200 = Device {
        sms: 4,
        ..Device::h200()
    };
    let rows_of_8 = OperandLayout {
        major: Major::K,
        ld: 8,
    };
    let k0 = Case {
        m: 24,
        n: 16,
        form: Form {
            a: rows_of_8,
            b: rows_of_8,
            ldc: 16,
            ldd: 16,
            ..beta_c
        },
        ..case
    };
    let plan = run(&k0, &h200, 9);
    assert_ne!(plan.program(), "hopper_ws", "{}", plan.describe());
    assert!(
        plan.describe().contains("K = 0 leaves TMA nothing to load"),
        "{}",
        plan.describe()
    );
}
