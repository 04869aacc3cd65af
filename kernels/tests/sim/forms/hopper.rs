//! The Hopper program's forms: leading dimensions and epilogues, MN-major operands, D's types
//! and gated epilogues under swapped schedules.

use super::*;
use crate::mutants::{mutate_nth, Mutation};

/// The Hopper program's forms on the H200's facts: K-major operands with their own leading
/// dimensions (TMA maps over the padded rows) and every kind of epilogue on the accumulators
/// before the schedule's store. (Other output types: [`hopper_output_types`]; strided batches:
/// [`super::hopper_batch::hopper_strided_batches`].)
#[test]
fn hopper_leading_dimensions_and_epilogues() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (136, 144, 200);
    let forms = [
        Form {
            a: padded(Major::K, m, k, 8),
            b: padded(Major::K, n, k, 24),
            ldd: n + 8,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerColumn),
                map: Map::Activation(Activation::GeluTanh),
                residual: Residual::Add,
            }),
            alpha: 1.25,
            beta: 0.5,
            ldc: n + 8,
            ldr: n + 16,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::bias_act(Activation::Silu),
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::SWIGLU,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::Elementwise(Elementwise {
                map: Map::Device(causal()),
                ..Elementwise::IDENTITY
            }),
            ..Form::packed(m, n, k)
        },
    ];
    for (i, form) in forms.into_iter().enumerate() {
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let plan = run(&case, &device, 500 + i as u64);
        assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
    }
}

/// The consumers of a fused epilogue sharing one copy of their code (each warpgroup's index, its
/// rows, staging tile and barrier picked at run time; tiles 160 wide and more): three consumers
/// of a 192-row tile and two of 128 rows, each form's finish (staged for the TMA store, f32 and gated pairs from the
/// registers), stream-K's hand-over between the consumers of different blocks (`_k`), M and N
/// off the tiles, several tiles a block (two SMs).
#[test]
fn hopper_consumers_sharing_their_code() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let c_bias_gelu_residual = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        bias: Some(Bias::PerColumn),
        map: Map::Activation(Activation::GeluTanh),
        residual: Residual::Add,
    });
    let cases = [
        (
            "192x160x64s3_k",
            (400, 328, 600),
            c_bias_gelu_residual,
            OutType::Bf16,
        ),
        (
            "192x160x64s3_n",
            (250, 328, 136),
            Epilogue::bias_act(Activation::Silu),
            OutType::F16,
        ),
        (
            "128x160x64s4_k",
            (300, 200, 520),
            Epilogue::RESIDUAL,
            OutType::F16,
        ),
        (
            "128x256x64s3",
            (200, 520, 72),
            Epilogue::bias_act(Activation::GeluTanh),
            OutType::F32,
        ),
        (
            "128x256x64s3",
            (136, 1040, 64),
            Epilogue::SWIGLU,
            OutType::Bf16,
        ),
    ];
    for (i, (spec, (m, n, k), epilogue, out)) in cases.into_iter().enumerate() {
        let form = Form {
            epilogue,
            out: Some(out),
            alpha: 1.25,
            beta: 0.5,
            ldc: n + 8,
            ldr: epilogue.out_cols(n) + 16,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::Bf16, GemmDtype::F16][i % 2],
            form,
            kernel: hopper(),
        };
        hopper_run(&case, Some(spec), &device, 1100 + i as u64);
    }
}

/// MN-major operands on the Hopper program: every pair of majors but the packed one (an
/// MN-major operand's tile staged in GMMA's MN-major swizzled layout by TMA boxes over its
/// columns, the `wgmma` transposing it), padded leading dimensions, M, N and K off the tiles,
/// f16 and bf16, under the chooser's schedule and under schedules that share tiles in a
/// cluster (multicast slices), swap A and B (`_t`), run ping-pong consumers (`_p`) and take a
/// tile N (80) that only the 32-byte swizzle's 16-row atoms divide, and multicast slices of
/// 104 rows that only unswizzled 8-row core matrices divide.
#[test]
fn hopper_mn_major_operands() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (136, 144, 200);
    let pairs = [
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ];
    let schedules = [
        None,
        Some("128x128x64s4_c2x1"),
        Some("128x64x64s4_c1x2_t"),
        Some("64x128x64s4_p"),
        Some("128x80x64s4"),
        Some("128x208x64s3_c2x1_t"),
    ];
    let mut seed = 700;
    for (s, spec) in schedules.into_iter().enumerate() {
        for (p, (ma, mb)) in pairs.into_iter().enumerate() {
            let form = Form {
                a: padded(ma, m, k, 8 * (1 + p)),
                b: padded(mb, n, k, 16),
                ldd: n + 8,
                ..Form::packed(m, n, k)
            };
            let case = Case {
                m,
                n,
                k,
                dtype: [GemmDtype::F16, GemmDtype::Bf16][(s + p) % 2],
                form,
                kernel: hopper(),
            };
            seed += 1;
            hopper_run(&case, spec, &device, seed);
        }
    }
}

/// D in a type other than the operands' on the Hopper program: f32 (stored from the registers,
/// in 8-byte pairs or, swapped, one by one: no staging, no map over D) and bf16 from f16 inputs
/// (the schedule's own store, rounded to bf16), with the plain sum, bias + GELU, C with alpha
/// and beta and a residual, under the chooser's schedule and schedules that swap A and B
/// (`_t`), store D from the registers (`_u`), run ping-pong consumers (`_p`, taking turns on
/// one staging tile: `_o`) and share tiles in a cluster (`_c2x1`); M, N and K off the tiles, D's leading dimension past its columns (odd,
/// for the swapped f32 D stored one value at a time). Two SMs, so that each block walks
/// several tiles.
#[test]
fn hopper_output_types() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (100, 72, 72);
    let epilogues = [
        Epilogue::Plain,
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            ..Elementwise::IDENTITY
        }),
        Epilogue::RESIDUAL,
    ];
    let schedules = [
        None,
        Some("128x64x64s4_t"),
        Some("128x128x64s4_u16"),
        Some("64x64x64s4_p_o"),
        Some("128x64x64s4_c2x1"),
    ];
    let mut seed = 900;
    for (s, spec) in schedules.into_iter().enumerate() {
        for (i, out) in [OutType::F32, OutType::F32, OutType::Bf16]
            .into_iter()
            .enumerate()
        {
            let epilogue = epilogues[(s + i) % epilogues.len()];
            let swapped_f32 = out == OutType::F32 && spec.is_some_and(|sp| sp.ends_with("_t"));
            let ldd = match out {
                OutType::F32 if swapped_f32 => n + 1,
                OutType::F32 => n + 2,
                _ => n + 8,
            };
            let form = Form {
                epilogue,
                out: Some(out),
                alpha: 1.25,
                beta: 0.5,
                ldc: n + 3,
                ldd,
                ldr: n + 5,
                a: padded(Major::K, m, k, 8),
                ..Form::packed(m, n, k)
            };
            let case = Case {
                m,
                n,
                k,
                dtype: [GemmDtype::Bf16, GemmDtype::F16][usize::from(out == OutType::Bf16)],
                form,
                kernel: hopper(),
            };
            seed += 1;
            hopper_run(&case, spec, &device, seed);
        }
    }
}

/// Gated epilogues (SwiGLU, GEGLU) on the Hopper program under schedules that swap A and B
/// (`_t`: the tile is D's transpose, each gate and up pair in two lanes that trade one value),
/// with a bias per column or per row and with a residual, D in the input type or f32: given
/// schedules (in a cluster, streamed over every SM by stream-K) and the chooser's own for few
/// tokens; M, N and K off the tiles.
#[test]
fn hopper_gated_epilogues_swapped() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (n, k) = (144, 72);
    let cases = [
        (
            100,
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::None),
            None,
            Some("128x64x64s4_c1x2_t"),
        ),
        (
            100,
            gated(Activation::GeluTanh, None, Residual::Add),
            Some(OutType::F32),
            Some("128x80x64s4_t"),
        ),
        (
            40,
            gated(Activation::GeluErf, Some(Bias::PerRow), Residual::Add),
            None,
            Some("128x48x64s4_c2x1_k_t"),
        ),
        (
            40,
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::Add),
            None,
            None,
        ),
    ];
    for (i, (m, epilogue, out, spec)) in cases.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            out,
            alpha: 0.75,
            ldd: cols + 8,
            ldr: cols + 3,
            b: padded(Major::K, n, k, 16),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let plan = hopper_run(&case, spec, &device, 950 + i as u64);
        let schedule = hopper_schedule(&plan);
        assert!(schedule.swapped(), "{schedule}");
    }
}

/// Swapped tiles 8 columns off a multiple of 16 (136, 152, 168 tokens wide: the staging
/// written one element at a time) under every kind of form the swapped program takes: bias +
/// activation and C with beta and a residual (rewritten in the registers before the staging),
/// gated epilogues (the pairs across lanes), D in f32 (stored one by one) and in the other
/// 16-bit type, an MN-major A (the kernel's B, its 152 rows in unswizzled 8-row atoms); whole
/// tiles, stream-K over every tile (`_k`) and a cluster along N; the tokens, the weights and K
/// off the tiles, each case over four seeds.
#[test]
fn hopper_swapped_tiles_eight_columns_wide() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let bias_gelu = Epilogue::bias_act(Activation::GeluTanh);
    let c_residual = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        bias: Some(Bias::PerRow),
        residual: Residual::Add,
        ..Elementwise::IDENTITY
    });
    let swiglu = gated(Activation::Silu, Some(Bias::PerColumn), Residual::None);
    let geglu = gated(Activation::GeluTanh, None, Residual::Add);
    let cases = [
        (
            "128x152x64s5_n_t",
            (150, 520, 200),
            bias_gelu,
            None,
            Major::K,
        ),
        (
            "128x136x64s5_f1_vfln_k_t",
            (130, 528, 264),
            swiglu,
            None,
            Major::K,
        ),
        (
            "64x136x64s8_f1_vfln_t",
            (130, 272, 200),
            geglu,
            Some(OutType::F32),
            Major::K,
        ),
        (
            "128x168x64s4_n_t",
            (333, 520, 264),
            c_residual,
            None,
            Major::K,
        ),
        (
            "128x152x64s5_c1x2_f1_l256_vfln_k_t",
            (150, 520, 264),
            Epilogue::bias_act(Activation::Silu),
            Some(OutType::Bf16),
            Major::MN,
        ),
        (
            "128x168x64s4_f1_vfln_t",
            (65, 520, 200),
            bias_gelu,
            Some(OutType::F32),
            Major::K,
        ),
    ];
    for (i, (spec, (m, n, k), epilogue, out, a)) in cases.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            out,
            alpha: 1.25,
            beta: 0.5,
            // A's rows (or, MN-major, its M-long columns: odd here) padded to a multiple of
            // 16 bytes past their extent, as TMA needs.
            a: {
                let extent = if a == Major::MN { m } else { k };
                padded(a, m, k, (extent + 8).next_multiple_of(8) - extent)
            },
            ldc: cols + 3,
            // A D stored one f32 at a time takes any row; the staging's TMA store 16 bytes.
            ldd: if out == Some(OutType::F32) {
                cols + 1
            } else {
                cols + 8
            },
            ldr: cols + 5,
            ..Form::packed(m, n, k)
        };
        for seed in 0..4 {
            // A bf16 D of f16 inputs: the other 16-bit type.
            let dtype = match out {
                Some(OutType::Bf16) => GemmDtype::F16,
                _ => [GemmDtype::F16, GemmDtype::Bf16][(i + seed) % 2],
            };
            let case = Case {
                m,
                n,
                k,
                dtype,
                form,
                kernel: hopper(),
            };
            let plan = hopper_run(
                &case,
                Some(spec),
                &device,
                1500 + 10 * i as u64 + seed as u64,
            );
            assert!(hopper_schedule(&plan).swapped(), "{spec}");
        }
    }
}

/// Gated epilogues under schedules that keep A and B (each gate and up pair in one thread):
/// tiles inside D store 16 bytes a lane through the quad's exchange, and the blocks past a
/// tile's last group of 8, the tiles that cross D's edge and D's rows off 16 bytes store one
/// value at a time. Tiles 256 wide (four groups a row), 224 (three and a rest), 96 (one and a
/// rest) and 64 (one); cooperative and ping-pong consumers; a bias per column or per row, a
/// residual, D in either 16-bit type; M off the tiles so that every walk has both kinds of
/// tile.
#[test]
fn hopper_gated_epilogues_in_quads() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let cases = [
        (
            (200, 512, 72),
            gated(Activation::Silu, None, Residual::None),
            0,
            "128x256x64s3",
        ),
        (
            (136, 448, 80),
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::Add),
            8,
            "128x224x64s4_e112",
        ),
        (
            (150, 192, 64),
            gated(Activation::GeluTanh, Some(Bias::PerRow), Residual::None),
            8,
            "128x96x64s5",
        ),
        (
            (100, 256, 72),
            gated(Activation::GeluErf, None, Residual::Add),
            0,
            "64x256x64s4_f1_r4_p",
        ),
        // The chooser's schedule for SwiGLU on large problems: the staging tile a gated form
        // never writes given to a fourth stage (`_u16`), several tiles a block.
        (
            (300, 1024, 200),
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::None),
            0,
            "128x256x64s4_h_u16_n",
        ),
        // D's rows 2 bytes off 16: every tile one value at a time.
        (
            (130, 256, 64),
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::None),
            1,
            "128x128x64s5",
        ),
    ];
    for (i, ((m, n, k), epilogue, pad, spec)) in cases.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            alpha: 1.5,
            ldd: cols + pad,
            ldr: cols + 3,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::Bf16, GemmDtype::F16][i % 2],
            form,
            kernel: hopper(),
        };
        let plan = hopper_run(&case, Some(spec), &device, 970 + i as u64);
        assert!(!hopper_schedule(&plan).swapped(), "{spec}");
    }
}

/// A schedule, a shape, an epilogue and D's type.
type HandedCase = (&'static str, (usize, usize, usize), Epilogue, OutType);

/// The epilogue warps (`_x`): the consumers stage `alpha * acc` and go on, the producer
/// warpgroup's three idle warps apply the rest of the form in place and store the tile. Every
/// elementwise epilogue (C with beta, a bias per row and per column, each activation, a user's
/// function, a residual), D in the input type and in the other 16-bit one, on tiles of one and
/// two consumers, N of 64, 96 (plain staging rows), 128, 192 and 256 (swizzled) and of 80, 160
/// and 224 (rows of chunks that do not divide the 96 threads: their columns move), stream-K
/// over every tile (`_k`: the warps finish only the units that write a tile) and a cluster;
/// M and N off the tiles (chunks past N and rows past M left to the store's clipping), the
/// rows of C, D and the residual padded. Two SMs, so that each block walks several tiles and
/// the hand-over turns.
#[test]
fn hopper_epilogue_warps() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let every = |bias, map, source, residual| {
        Epilogue::Elementwise(Elementwise {
            source,
            bias,
            map,
            residual,
        })
    };
    let act = |a| Map::Activation(a);
    let cases: [HandedCase; 13] = [
        (
            "128x128x64s4_x",
            (200, 264, 136),
            every(
                Some(Bias::PerColumn),
                act(Activation::GeluTanh),
                Source::C,
                Residual::Add,
            ),
            OutType::Bf16,
        ),
        (
            "64x64x64s4_x",
            (100, 136, 72),
            every(
                Some(Bias::PerRow),
                act(Activation::Silu),
                Source::None,
                Residual::None,
            ),
            OutType::F16,
        ),
        (
            "128x256x64s3_x",
            (136, 296, 64),
            every(None, act(Activation::Relu), Source::C, Residual::None),
            OutType::Bf16,
        ),
        (
            "128x192x64s3_x",
            (130, 200, 136),
            every(
                Some(Bias::PerColumn),
                act(Activation::GeluErf),
                Source::None,
                Residual::Add,
            ),
            OutType::F16,
        ),
        (
            "128x96x64s4_x",
            (150, 104, 72),
            every(None, Map::Device(causal()), Source::None, Residual::None),
            OutType::Bf16,
        ),
        (
            "128x128x64s4_x_k",
            (136, 144, 600),
            every(
                Some(Bias::PerColumn),
                act(Activation::Silu),
                Source::C,
                Residual::None,
            ),
            OutType::Bf16,
        ),
        (
            "128x64x64s4_c2x1_x",
            (260, 72, 72),
            every(
                Some(Bias::PerColumn),
                act(Activation::Identity),
                Source::None,
                Residual::Add,
            ),
            OutType::F16,
        ),
        (
            "128x128x64s4_x",
            (130, 136, 72),
            Epilogue::Plain,
            OutType::Bf16,
        ),
        // Rows of 28, 20 and 10 chunks, which do not divide 96: a thread's columns move from
        // pass to pass, and so does its bias.
        (
            "128x224x64s3_x",
            (200, 456, 136),
            every(
                Some(Bias::PerColumn),
                act(Activation::GeluTanh),
                Source::None,
                Residual::Add,
            ),
            OutType::Bf16,
        ),
        (
            "256x160x64s2_x",
            (300, 328, 72),
            every(
                Some(Bias::PerColumn),
                act(Activation::Silu),
                Source::C,
                Residual::None,
            ),
            OutType::F16,
        ),
        (
            "128x80x64s4_x_k",
            (136, 168, 400),
            every(
                Some(Bias::PerRow),
                act(Activation::Relu),
                Source::None,
                Residual::Add,
            ),
            OutType::Bf16,
        ),
        // The residual alone, loaded by TMA into the staging and added by the consumers
        // (`staged_residual`): bf16 from an f16 sum, then f16.
        (
            "128x256x64s3_x",
            (200, 520, 200),
            Epilogue::RESIDUAL,
            OutType::Bf16,
        ),
        (
            "128x128x64s4_x",
            (130, 264, 136),
            Epilogue::RESIDUAL,
            OutType::F16,
        ),
    ];
    for (i, (spec, (m, n, k), epilogue, out)) in cases.into_iter().enumerate() {
        let dtype = [GemmDtype::F16, GemmDtype::Bf16][i % 2];
        let form = Form {
            epilogue,
            out: Some(out),
            // alpha 1 (a linear layer's: the consumers skip the multiply) and not.
            alpha: if i % 3 == 0 { 1.0 } else { 1.25 },
            beta: 0.5,
            ldc: n + 8,
            ldd: n + 16,
            ldr: n,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: hopper(),
        };
        hopper_run(&case, Some(spec), &device, 1100 + i as u64);
    }
}

/// The residual alone through the staging ([`kernels::hopper::staged_residual`]): R loaded by
/// TMA into each consumer's staging tile under the tile's main loop, the consumers adding it
/// as they stage their sums. Stream-K over every tile (only the units that write a tile load
/// R), a cluster, one consumer, R's rows padded past N, M and N off the tiles (R's boxes past
/// them load zeros, never stored), alpha 1 and not, swizzled and plain staging rows; two SMs,
/// so that the staging turns over between a tile's store and the next tile's R.
#[test]
fn hopper_residual_through_the_staging() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let cases = [
        ("128x256x64s3_x_k", (200, 520, 904), OutType::Bf16, 8),
        ("128x128x64s4_c2x1_x", (260, 264, 136), OutType::F16, 24),
        ("64x128x64s4_x", (150, 392, 72), OutType::Bf16, 40),
        ("128x192x64s3_x", (300, 200, 136), OutType::F16, 0),
        // Rows of 224 and 96 columns, staged unswizzled (the width is no multiple of 64): R's
        // boxes and `ldmatrix` over plain rows.
        ("128x224x64s3_x", (200, 456, 136), OutType::Bf16, 8),
        ("128x96x64s4_x", (150, 200, 72), OutType::F16, 16),
    ];
    for (i, (spec, (m, n, k), out, pad)) in cases.into_iter().enumerate() {
        let form = Form {
            epilogue: Epilogue::RESIDUAL,
            out: Some(out),
            alpha: if i % 2 == 0 { 1.0 } else { -0.75 },
            ldd: n + 16,
            ldr: n + pad,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let plan = hopper_run(&case, Some(spec), &device, 1300 + i as u64);
        assert!(
            stages_residual(&plan),
            "{spec}: R not loaded into the staging"
        );
    }
}

/// The staged residual's ordering, broken one way at a time, each caught (a finding, D off the
/// reference, or a run that cannot finish): the consumers reading the staging before R has
/// landed (their wait on `residual_full` left out), the warps expecting half R's bytes (its
/// `arrive_expect_tx` weakened), and the warps loading R over the staging before the last
/// tile's store has read it (their wait for the store's reads removed or weakened).
#[test]
fn the_staged_residual_misordered_is_caught() {
    use dsl_core::ir::{OpInfo, Stmt};
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (200, 264, 136);
    let form = Form {
        epilogue: Epilogue::RESIDUAL,
        ..Form::packed(m, n, k)
    };
    let case = Case {
        m,
        n,
        k,
        dtype: GemmDtype::Bf16,
        form,
        kernel: hopper(),
    };
    let config = Some(Config::of(&HopperWs, "128x128x64s4_x".parse().unwrap()));
    let caught = |plant: Plant| {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            simulate(&case, config.clone(), &device, 1400, Some(plant))
        }));
        match run {
            Err(_) => true,
            Ok((_, reports, off)) => off.is_some() || reports.iter().any(|r| !r.is_clean()),
        }
    };
    // The consumers' wait: the loop around `mbarrier.try_wait` that staged_residual.rs emits.
    fn drop_waits(stmts: &mut Vec<Stmt>, file: &str) -> usize {
        let waits_here = |s: &Stmt| match s {
            Stmt::While { cond_block, .. } => cond_block.iter().any(|c| {
                matches!(c, Stmt::Op(i) if i.op.mnemonic().starts_with("mbarrier.try_wait")
                    && i.loc.as_ref().is_some_and(|l| l.file.ends_with(file)))
            }),
            _ => false,
        };
        let before = stmts.len();
        stmts.retain(|s| !waits_here(s));
        let mut dropped = before - stmts.len();
        for s in stmts.iter_mut() {
            dropped += match s {
                Stmt::For { body, .. } => drop_waits(body, file),
                Stmt::If { then, else_, .. } => drop_waits(then, file) + drop_waits(else_, file),
                Stmt::While {
                    cond_block, body, ..
                } => drop_waits(cond_block, file) + drop_waits(body, file),
                _ => 0,
            };
        }
        dropped
    }
    // As it is, the same run is clean and matches the reference.
    assert!(!caught(&|_| {}), "the staged residual as it is");
    let no_wait: Plant = &|kernel| {
        assert_eq!(drop_waits(&mut kernel.body, "hopper/staged_residual.rs"), 1);
    };
    assert!(caught(no_wait), "the consumers reading R before it lands");
    // The mutation sites of the warps' side: the expected bytes, and the wait for the store's
    // reads that the next tile's load follows.
    let kernel = check_form(
        &Problem {
            m,
            n,
            k,
            dtype: GemmDtype::Bf16,
            acc: Accum::F32,
            kernel: hopper(),
            config: config.clone(),
        },
        &case.form,
        FormLens::from(case.form.spans(m, n, k).unwrap()),
        &device,
    )
    .unwrap()
    .kernel()
    .unwrap();
    let mut tried = Vec::new();
    for mutation in [Mutation::Remove, Mutation::Weaken] {
        for (nth, site) in crate::mutants::sites(&kernel, mutation).iter().enumerate() {
            let ours = site.contains("hopper/staged_residual.rs")
                || (site.contains("cp.async.bulk.wait_group")
                    && site.contains("hopper/epilogue_warps.rs"));
            if !ours {
                continue;
            }
            let plant: Plant = &|kernel| assert!(mutate_nth(&mut kernel.body, mutation, nth));
            assert!(caught(plant), "not caught: {mutation:?} {site}");
            tried.push(format!("{mutation:?} {site}"));
        }
    }
    assert!(
        tried.iter().any(|t| t.contains("expect_tx")) && tried.len() >= 3,
        "the sites were not found: {tried:#?}"
    );
}

/// The bug compute-sanitizer's synccheck found on the H100 (results/blas.md, 2026-12-06),
/// planted back: the epilogue warps' hand-over barriers, which two consumer warpgroups' copies
/// of the consumer's code and the epilogue warps' own wait at, made aligned (`bar.sync`). The
/// simulator reports the aligned waits of one phase at two instructions, with the Rust line.
#[test]
fn the_hand_over_made_aligned_is_caught() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (200, 264, 136);
    let case = Case {
        m,
        n,
        k,
        dtype: GemmDtype::Bf16,
        form: Form {
            epilogue: Epilogue::Elementwise(Elementwise {
                bias: Some(Bias::PerColumn),
                map: Map::Activation(Activation::GeluTanh),
                residual: Residual::Add,
                ..Elementwise::IDENTITY
            }),
            ..Form::packed(m, n, k)
        },
        kernel: hopper(),
    };
    let config = Some(Config::of(&HopperWs, "128x128x64s4_x".parse().unwrap()));
    // Every unaligned barrier made aligned: each one aligned leaves the next the first site.
    let plant: Plant = &|kernel| while mutate_nth(&mut kernel.body, Mutation::Align, 0) {};
    let (_, reports, _) = simulate(&case, config.clone(), &device, 1200, Some(plant));
    let found: Vec<_> = reports
        .iter()
        .flat_map(|r| r.of_kind(dsl_core::sim::FindingKind::BarrierDivergence))
        .collect();
    let first = found
        .first()
        .unwrap_or_else(|| panic!("not caught: {reports:?}"));
    let file = first.location.map_or("", |l| l.file);
    assert!(
        file.ends_with("hopper/epilogue.rs") || file.ends_with("hopper/epilogue_warps.rs"),
        "{first:?}"
    );
    // As it is, the same run is clean and matches the reference.
    run_config(&case, config, &device, 1200);
}

/// Every schedule of the tuning sweep that stages whole cooperative tiles, with the epilogue
/// warps (`_x`) added: each walks its tiles (clusters along M and N, `_f1`, Hilbert and
/// evened walks, the stream-K region placed last, eviction hints, stream-K over every tile)
/// with the hand-over, on bias + GELU and a residual, M and N off the tiles.
#[test]
fn every_sweep_schedule_with_the_epilogue_warps() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let epilogue = Epilogue::Elementwise(Elementwise {
        bias: Some(Bias::PerColumn),
        map: Map::Activation(Activation::GeluTanh),
        residual: Residual::Add,
        ..Elementwise::IDENTITY
    });
    let mut ran = 0;
    for (i, spec) in HopperSchedule::SWEEP.iter().enumerate() {
        let Some(handed) = spec
            .parse::<HopperSchedule>()
            .unwrap()
            .with_epilogue_warps()
        else {
            continue;
        };
        let (m, n, k) = (200, 264, 200);
        let form = Form {
            epilogue,
            ldd: n + 8,
            ldr: n + 16,
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let spelled = handed.to_string();
        hopper_run(&case, Some(&spelled), &device, 1300 + i as u64);
        ran += 1;
    }
    assert!(ran >= 20, "{ran} sweep schedules take the epilogue warps");
}
