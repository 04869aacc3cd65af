//! The multistage program's forms: every pair of operand majors, narrow copies, batches in
//! one launch, epilogues.

use super::*;

fn multistage() -> KernelChoice {
    KernelChoice::named("multistage").unwrap()
}

/// Every pair of operand majors (an MN-major operand staged MN-major and read by
/// `ldmatrix.trans`), padded leading dimensions, a batch in one launch: the multistage program.
#[test]
fn multistage_every_major_pair_and_batch() {
    let device = Device::unknown(Target::Sm80);
    // Three k-tiles: the ring of three stages lapped.
    let (m, n, k) = (72, 80, 96);
    for (i, (ma, mb)) in [
        (Major::K, Major::K),
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ]
    .into_iter()
    .enumerate()
    {
        let (a, b) = (padded(ma, m, k, 8), padded(mb, n, k, 16));
        let ldd = n + 8;
        let batch = Batch {
            count: 2,
            a: a.span(m, k) + 8,
            b: b.span(n, k) + 40,
            c: 0,
            d: (m - 1) * ldd + n + 8,
            residual: 0,
        };
        let form = Form {
            a,
            b,
            ldd,
            batch,
            ..Form::packed(m, n, k)
        };
        let dtype = if i % 2 == 0 {
            GemmDtype::F16
        } else {
            GemmDtype::Bf16
        };
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: multistage(),
        };
        let plan = run(&case, &device, 200 + i as u64);
        assert!(
            plan.describe()
                .contains(&format!("A {}-major, B {}-major", ma.name(), mb.name())),
            "{}",
            plan.describe()
        );
    }
}

/// Rows and leading dimensions that allow only 4-, 2- and 1-element copies.
#[test]
fn multistage_narrow_copies() {
    let device = Device::unknown(Target::Sm80);
    for (i, (m, n, k, pad, want)) in [
        (68, 36, 20, 4, "64-bit copies"),
        (66, 34, 22, 2, "32-bit copies"),
        (65, 33, 23, 1, "16-bit copies"),
    ]
    .into_iter()
    .enumerate()
    {
        let form = Form {
            a: padded(Major::MN, m, k, pad),
            b: padded(Major::K, n, k, pad),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            form,
            kernel: multistage(),
        };
        let plan = run(&case, &device, 300 + i as u64);
        assert!(plan.describe().contains(want), "{}", plan.describe());
    }
}

/// Epilogues and output types through the multistage program's registers.
#[test]
fn multistage_epilogues() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (40, 48, 32);
    let epilogues = [
        (
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerRow),
                map: Map::Activation(Activation::GeluTanh),
                residual: Residual::Add,
            }),
            Some(OutType::F32),
        ),
        (Epilogue::bias_act(Activation::Silu), None),
        (
            gated(Activation::GeluErf, Some(Bias::PerColumn), Residual::Add),
            Some(OutType::Bf16),
        ),
        (Epilogue::SWIGLU, None),
        (
            Epilogue::Elementwise(Elementwise {
                map: Map::Device(causal()),
                ..Elementwise::IDENTITY
            }),
            Some(OutType::F32),
        ),
    ];
    for (i, (epilogue, out)) in epilogues.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            out,
            alpha: 1.25,
            beta: 0.5,
            ldc: cols + 8,
            ldd: cols + 2,
            ldr: cols + 4,
            b: padded(Major::MN, n, k, 0),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            form,
            kernel: multistage(),
        };
        run(&case, &device, 400 + i as u64);
    }
}

/// K = 0 (a BLAS call's `C = beta C`): the multistage program reads neither A nor B (with no
/// columns their buffers may hold nothing; its zero-filling copies would read the first column)
/// and writes `beta C`, with 16-bit copies (rows of A and B off 16 bytes) and with `cp.async`,
/// C read or not, a gated epilogue's half-wide D.
#[test]
fn k_zero_writes_beta_c_and_reads_neither_operand() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (200, 136, 0);
    let with_c = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        ..Elementwise::IDENTITY
    });
    for (i, (ld, epilogue)) in [
        (1, with_c),
        (8, with_c),
        (3, Epilogue::bias_act(Activation::Silu)),
        (8, Epilogue::SWIGLU),
    ]
    .into_iter()
    .enumerate()
    {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            beta: 0.5,
            a: OperandLayout {
                major: Major::K,
                ld,
            },
            b: OperandLayout {
                major: Major::K,
                ld,
            },
            ldd: cols,
            ldc: cols,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::Bf16, GemmDtype::F16][i % 2],
            form,
            kernel: KernelChoice::named("multistage").unwrap(),
        };
        let plan = run(&case, &device, 40 + i as u64);
        assert_eq!(plan.program(), "multistage", "{}", plan.describe());
    }
}

/// Tiny and degenerate shapes (a single row or column, K from 1, M one past a tile) in every
/// pair of operand majors, with the rows of A, B and D packed, 2 bytes off 16 and padded to
/// 16, `alpha acc + beta C`: whichever program the chooser picks runs clean and matches the
/// reference.
#[test]
fn tiny_shapes_in_every_major_and_padding() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let mut seed = 7000;
    let majors = [
        (Major::K, Major::K),
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ];
    for (m, n, k) in [
        (1, 1, 1),
        (1, 8, 8),
        (3, 5, 7),
        (17, 9, 1),
        (2, 16, 24),
        (65, 8, 9),
        (1, 256, 64),
        (130, 8, 8),
    ] {
        for (ma, mb) in majors {
            for pad in [0, 1, 8] {
                let rows = |major: Major, mn: usize| if major == Major::K { k } else { mn };
                let form = Form {
                    epilogue: Epilogue::Elementwise(Elementwise {
                        source: Source::C,
                        ..Elementwise::IDENTITY
                    }),
                    alpha: -1.5,
                    beta: 0.25,
                    a: OperandLayout {
                        major: ma,
                        ld: rows(ma, m) + pad,
                    },
                    b: OperandLayout {
                        major: mb,
                        ld: rows(mb, n) + pad,
                    },
                    ldc: n + pad,
                    ldd: n + pad,
                    ..Form::packed(m, n, k)
                };
                let case = Case {
                    m,
                    n,
                    k,
                    dtype: [GemmDtype::Bf16, GemmDtype::F16][seed % 2],
                    form,
                    kernel: KernelChoice::Auto,
                };
                seed += 1;
                run(&case, &device, seed as u64);
            }
        }
    }
}

/// Tiny shapes the Hopper program takes (one token, N of 8 to 1000, K of 8), under the
/// chooser's schedule, plain and with a gated, an elementwise and a residual epilogue.
#[test]
fn tiny_shapes_under_the_chooser_with_each_kind_of_epilogue() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let mut seed = 8000;
    for (m, n, k) in [
        (1, 16, 8),
        (5, 32, 40),
        (300, 16, 8),
        (1, 8, 8),
        (2, 24, 8),
        (64, 16, 200),
        (1, 1000, 8),
        (700, 8, 16),
    ] {
        for epilogue in [
            Epilogue::Plain,
            Epilogue::SWIGLU,
            Epilogue::bias_act(Activation::GeluTanh),
            Epilogue::RESIDUAL,
        ] {
            let cols = epilogue.out_cols(n);
            let form = Form {
                epilogue,
                ldd: cols,
                ldc: cols,
                ldr: cols,
                ..Form::packed(m, n, k)
            };
            let case = Case {
                m,
                n,
                k,
                dtype: GemmDtype::Bf16,
                form,
                kernel: KernelChoice::Auto,
            };
            seed += 1;
            let plan = run(&case, &device, seed);
            assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
        }
    }
}
