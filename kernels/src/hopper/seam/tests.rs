//! The program behind the seam: what it refuses, its descriptions, its launches.

use super::*;
use crate::gemm::{check, BufferLens, Config, KernelChoice};
use crate::hopper::epilogue::FormStore;

fn problem(m: usize, n: usize, k: usize) -> Problem {
    Problem {
        m,
        n,
        k,
        dtype: GemmDtype::Bf16,
        acc: Accum::F32,
        kernel: KernelChoice::Program(&HopperWs),
        config: None,
    }
}

/// `spelling` for the hopper program alone.
fn given(spelling: &str) -> Option<Config> {
    Some(Config::parse(KernelChoice::Program(&HopperWs), spelling).unwrap())
}

fn plan(p: &Problem, device: &Device) -> Result<Plan, String> {
    let lens = BufferLens::for_shape(p.m, p.n, p.k).unwrap();
    check(p, lens, device).map_err(|e| e.to_string())
}

fn sm80() -> Device {
    Device::unknown(Target::Sm80)
}

#[test]
fn it_refuses_what_tma_and_wgmma_cannot_run() {
    let h200 = Device::h200();
    let e = plan(&problem(64, 64, 64), &sm80()).unwrap_err();
    assert!(e.ends_with("it runs on sm_90a only, not sm_80"), "{e}");
    let e = plan(&problem(64, 64, 12), &h200).unwrap_err();
    assert!(
        e.ends_with("K = 12 is not a multiple of 8, and TMA needs rows of 16 bytes"),
        "{e}"
    );
    let e = plan(&problem(64, 60, 64), &h200).unwrap_err();
    assert!(e.contains("N = 60 is not a multiple of 8"), "{e}");
    let f16_sum = Problem {
        dtype: GemmDtype::F16,
        acc: Accum::F16,
        ..problem(64, 64, 64)
    };
    let e = plan(&f16_sum, &h200).unwrap_err();
    assert!(e.ends_with("it sums in f32, not f16"), "{e}");
    let e = Config::parse(KernelChoice::Program(&HopperWs), "128x256x64s17").unwrap_err();
    assert!(e.to_string().contains("stages is 2..=16"), "{e}");
    // A schedule too large for the device's shared memory is refused before anything runs.
    let small = Device {
        smem_per_block: 100 * 1024,
        ..Device::h200()
    };
    let wide = Problem {
        config: given("128x256x64s3"),
        ..problem(4096, 4096, 4096)
    };
    let e = plan(&wide, &small).unwrap_err();
    assert!(e.contains("102400 fit"), "{e}");
}

/// The known bad case of the untyped spelling: a 24-wide tile was accepted and panicked
/// in the launch's plan. Now it is refused at its parse, with a sentence.
#[test]
fn a_tile_stmatrix_cannot_write_is_refused_at_its_parse() {
    let e = Config::parse(KernelChoice::Program(&HopperWs), "64x24x64s4").unwrap_err();
    assert!(
        e.to_string()
            .contains("tile N is a multiple of 16 up to 256"),
        "{e}"
    );
}

#[test]
fn auto_takes_it_on_sm_90a_and_falls_back_with_the_reason() {
    let h200 = Device::h200();
    let auto = |m, n, k| Problem {
        kernel: KernelChoice::Auto,
        ..problem(m, n, k)
    };
    let p = plan(&auto(4096, 4096, 4096), &h200).unwrap();
    assert_eq!(p.program(), "hopper_ws");
    assert_eq!(
        p.describe(),
        "hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, Hilbert order, stream-K by shape, \
         else evened waves; schedule from the cost model)"
    );
    let staged = Problem {
        config: given("128x256x64s4_e64"),
        ..problem(4096, 4096, 4096)
    };
    let d = plan(&staged, &h200).unwrap().describe();
    assert!(
        d.contains("4 stages, groups of 8, output staged 64 columns at a time, stream-K")
            && d.ends_with("stream-K by shape)"),
        "the sub-tiled epilogue is in the plan's description, and a given schedule's origin \
         is not: {d}"
    );
    // The short K past the L2: whole tiles handed out from the queue, from the table's row.
    let queued = plan(&auto(81920, 256, 256), &h200).unwrap().describe();
    assert!(
        queued.contains("7 stages")
            && queued.contains("ping-pong consumers")
            && queued.contains(
                ", whole tiles from a queue, each taken once the last one's loads are issued; \
                 schedule from the table's row for a short K (128 to 256) whose B is one \
                 256-wide tile, past the L2 (results/"
            ),
        "{queued}"
    );
    let hinted = Problem {
        config: given("128x64x64s8_vfln_t"),
        ..problem(64, 4096, 4096)
    };
    let d = plan(&hinted, &h200).unwrap().describe();
    assert!(
        d.contains("A and B swapped, A evict-first in L2, B evict-last in L2, stream-K"),
        "{d}"
    );
    // Two staging tiles, which both ping-pong consumers share in turns.
    let shared = Problem {
        config: given("64x256x64s8_f1_e128_d2_r4_p_o_l0_vfnf"),
        ..problem(81920, 256, 256)
    };
    let short = plan(&shared, &h200).unwrap().describe();
    assert!(
        short.contains(
            "output staged 128 columns at a time through two tiles in turns, B's 4 k-tiles \
             resident, ping-pong consumers sharing one staging in turns"
        ),
        "{short}"
    );
    let odd = plan(&auto(100, 100, 100), &h200).unwrap();
    assert_eq!(odd.program(), "multistage");
    assert!(
        odd.describe()
            .contains("the hopper_ws kernel cannot run it: K = 100 is not a multiple of 8"),
        "{}",
        odd.describe()
    );
    let a100 = Device {
        sms: 108,
        ..Device::unknown(Target::Sm80)
    };
    assert_eq!(
        plan(&auto(4096, 4096, 4096), &a100).unwrap().program(),
        "multistage"
    );
}

#[test]
fn launches_stream_k_where_the_tiles_are_few() {
    let h200 = Device::h200();
    let p = plan(&problem(4096, 4096, 4096), &h200).unwrap();
    let l = p.launch(4096, 4096, 4096, &h200);
    assert_eq!(l.check(), Ok(()));
    // 512 tiles: whole, in 4 evened waves of 128, no workspace.
    assert_eq!(
        (l.grid, l.block, l.then.is_none()),
        ((128, 1, 1), (384, 1, 1), true)
    );
    assert_eq!(l.workspace, 1);
    assert_eq!(l.args[8..10], [GemmArg::U32(0), GemmArg::U32(0)]);
    let decode = plan(&problem(16, 4096, 4096), &h200).unwrap();
    let h = decode.downcast_ref::<HopperGemm>().unwrap();
    assert_eq!(h.schedule().to_string(), "64x16x128s11_f1_vfln_t_z");
    let l = decode.launch(16, 4096, 4096, &h200);
    assert_eq!(l.check(), Ok(()));
    // Swapped: the kernel's A is B (4096 rows), its M and N are N and M, and D is seen
    // transposed.
    assert!(matches!(
        &l.args[0],
        GemmArg::TensorMap { operand: GemmOperand::B, descriptor } if descriptor.global_dims == [4096, 4096]
    ));
    assert!(matches!(
        &l.args[2],
        GemmArg::TensorMap { operand: GemmOperand::D, descriptor }
            if descriptor.global_dims == [4096, 16] && descriptor.global_strides_bytes == [4096 * 2]
    ));
    assert_eq!(l.args[4..6], [GemmArg::U32(4096), GemmArg::U32(16)]);
    // 64 weight tiles of 32 k-tiles, shared by all 132 SMs; no launch after.
    assert_eq!((l.grid, l.block), ((132, 1, 1), (256, 1, 1)));
    assert_eq!(l.args[8..10], [GemmArg::U32(64), GemmArg::U32(132)]);
    assert_eq!(
        l.workspace,
        u64::from(super::super::fixup::flag_words(h.schedule())) + 132 * 64 * 16
    );
    assert!(l.then.is_none());
}

/// The launch's arguments are the kernel's parameters, one for one and in order: both come from
/// one struct.
#[test]
fn the_launch_names_the_kernels_parameters_in_order() {
    let h200 = Device::h200();
    let p = plan(&problem(1000, 2048, 512), &h200).unwrap();
    let l = p.launch(1000, 2048, 512, &h200);
    let kernel = p.kernel().unwrap();
    let names: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, HopperParams::NAMES);
    assert_eq!(l.args.len(), names.len());
    let kinds: Vec<&str> = l
        .args
        .iter()
        .map(|a| match a {
            GemmArg::TensorMap { .. } => "map",
            GemmArg::D => "d",
            GemmArg::Table(_) => "table",
            GemmArg::Workspace => "workspace",
            _ => "u32",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "map",
            "map",
            "map",
            "d",
            "u32",
            "u32",
            "u32",
            "table",
            "u32",
            "u32",
            "workspace"
        ]
    );
}

/// `form` of `p` planned by `check_form` with buffers of its spans.
fn plan_in(p: &Problem, form: &Form, device: &Device) -> Result<Plan, String> {
    let lens = form.spans(p.m, p.n, p.k).unwrap().into();
    crate::gemm::check_form(p, form, lens, device).map_err(|e| e.to_string())
}

/// The spelling of the schedule hopper_ws plans `form` of `p` under.
fn schedule_in(p: &Problem, form: &Form, device: &Device) -> String {
    let plan = plan_in(p, form, device).unwrap();
    plan.downcast_ref::<HopperGemm>()
        .unwrap()
        .schedule()
        .to_string()
}

/// The store a hopper_ws plan of `form` makes ([`FormStore`]).
fn store_of(plan: &Plan, form: &Form) -> FormStore {
    let h = plan.downcast_ref::<HopperGemm>().unwrap();
    let parts = form.parts(h.dtype());
    HopperPlan::with_form(*h.schedule(), h.dtype(), Some(parts))
        .unwrap()
        .form_store
}

/// D in f32 is stored from the registers (8-byte pairs; swapped, one value at a time), bf16 D
/// from f16 inputs through the schedule's store, a gated epilogue under a swapped schedule
/// across lane pairs; D's rows need the stores' width (16 bytes only where D has a map), and a
/// launch whose D has no map passes A's in its place, over A.
#[test]
fn forms_store_d_in_its_own_type_and_gated_pairs_across_lanes() {
    use crate::gemm::epilogue::Epilogue;
    use crate::hopper::epilogue::{F32Store, GatedPairs};
    let h200 = Device::h200();
    let (m, n, k) = (1000, 2048, 512);
    let f32_form = |ldd| Form {
        out: Some(OutType::F32),
        ldd,
        ..Form::packed(m, n, k)
    };
    let p = plan_in(&problem(m, n, k), &f32_form(n + 2), &h200).unwrap();
    assert_eq!(p.program(), "hopper_ws");
    assert!(
        p.describe().ends_with("; D = acc, D in f32)"),
        "{}",
        p.describe()
    );
    assert_eq!(
        store_of(&p, &f32_form(n + 2)),
        FormStore::F32(F32Store::Pairs)
    );
    assert_eq!(p.output_alignment(), 8);
    let l = p.launch_form(m as u32, n as u32, k as u32, &f32_form(n + 2), &h200);
    assert_eq!(l.check(), Ok(()));
    assert!(matches!(
        &l.args[2],
        GemmArg::TensorMap { operand: GemmOperand::A, descriptor } if descriptor.global_dims == [512, 1000]
    ));
    assert_eq!(l.args[3], GemmArg::D);
    // Odd rows of f32: the pairs would not be 8-byte aligned.
    let e = plan_in(&problem(m, n, k), &f32_form(n + 1), &h200).unwrap_err();
    assert!(
        e.contains(
            "its stores from the registers need rows of D on 8 bytes, and ld = 2049 with this \
             buffer does not give them"
        ),
        "{e}"
    );
    // Swapped (the decode shape's schedule), each value alone: any row.
    let decode = Problem {
        m: 16,
        ..problem(m, n, k)
    };
    let f32_decode = Form {
        out: Some(OutType::F32),
        ldd: n + 1,
        ..Form::packed(16, n, k)
    };
    let p = plan_in(&decode, &f32_decode, &h200).unwrap();
    assert!(p.downcast_ref::<HopperGemm>().unwrap().schedule().swapped());
    assert_eq!(store_of(&p, &f32_decode), FormStore::F32(F32Store::Each));
    assert_eq!(p.output_alignment(), 4);
    // bf16 D from f16 inputs: the schedule's store, through D's map (rows on 16 bytes).
    let f16 = Problem {
        dtype: GemmDtype::F16,
        ..problem(m, n, k)
    };
    let bf16_form = Form {
        out: Some(OutType::Bf16),
        ..Form::packed(m, n, k)
    };
    let p = plan_in(&f16, &bf16_form, &h200).unwrap();
    assert_eq!(
        store_of(&p, &bf16_form),
        FormStore::Schedule(GemmDtype::Bf16)
    );
    let l = p.launch_form(m as u32, n as u32, k as u32, &bf16_form, &h200);
    assert!(matches!(
        &l.args[2],
        GemmArg::TensorMap {
            operand: GemmOperand::D,
            ..
        }
    ));
    let e = plan_in(
        &f16,
        &Form {
            ldd: n + 4,
            ..bf16_form
        },
        &h200,
    )
    .unwrap_err();
    assert!(
        e.contains("TMA needs rows of D on 16 bytes, and ld = 2052"),
        "{e}"
    );
    // SwiGLU on the decode shape: the swapped schedule, pairs in lanes four apart.
    let swiglu = Form {
        epilogue: Epilogue::SWIGLU,
        ..Form::packed(16, n, k)
    };
    let p = plan_in(&decode, &swiglu, &h200).unwrap();
    assert_eq!(p.program(), "hopper_ws");
    assert_eq!(
        store_of(&p, &swiglu),
        FormStore::Gated(GatedPairs::Lanes(crate::gemm::fused::LanePairs {
            xor: 4,
            rows: 1
        }))
    );
    let l = p.launch_form(16, n as u32, k as u32, &swiglu, &h200);
    assert!(matches!(
        &l.args[2],
        GemmArg::TensorMap {
            operand: GemmOperand::B,
            ..
        }
    ));
}

/// The chooser hands a fused elementwise epilogue of a 16-bit D to the epilogue warps (`_x`)
/// where its schedule stages whole cooperative tiles and the main loop is long enough to hide
/// them ([`chooser::finish`]); not the packed form, an f32 D, a gated epilogue, a short K, or C
/// (then the consumers finish it, as before; an f32 D and a gated epilogue without the staging
/// tile they never write). Given `_x`, C is taken where its rows are on 16
/// bytes, else refused with the reason, as an f32 D is.
#[test]
fn the_chooser_hands_fused_epilogues_to_the_epilogue_warps_where_they_pay() {
    use crate::gemm::epilogue::{Activation, Elementwise, Epilogue, Source};
    let h200 = Device::h200();
    let (m, n, k) = (4096, 4096, 4096);
    let p = problem(m, n, k);
    let form = |epilogue| Form {
        epilogue,
        ..Form::packed(m, n, k)
    };
    let schedule = |f: &Form, p: &Problem| schedule_in(p, f, &h200);
    let gelu = form(Epilogue::bias_act(Activation::GeluTanh));
    assert_eq!(schedule(&gelu, &p), "128x256x64s3_h_x_n");
    assert!(plan_in(&p, &gelu, &h200)
        .unwrap()
        .describe()
        .contains("finished and stored by the idle producer warps"));
    assert_eq!(schedule(&form(Epilogue::Plain), &p), "128x256x64s3_h_n");
    let f32_out = Form {
        out: Some(OutType::F32),
        ..gelu
    };
    // D in f32 and SwiGLU go from the consumers' registers: the plain schedule's staging tile,
    // which they never write, holds a fourth stage instead.
    assert_eq!(schedule(&f32_out, &p), "128x256x64s4_h_u16_n");
    assert_eq!(
        schedule(&form(Epilogue::SWIGLU), &p),
        "128x256x64s4_h_u16_n"
    );
    let short = problem(m, n, 256);
    let short_gelu = Form {
        epilogue: Epilogue::bias_act(Activation::GeluTanh),
        ..Form::packed(m, n, 256)
    };
    assert!(!schedule(&short_gelu, &short).contains("_x"));
    let c = Epilogue::Elementwise(Elementwise {
        source: Source::C,
        ..Elementwise::IDENTITY
    });
    let long = problem(m, n, 16384);
    let c_form = |ldc| Form {
        epilogue: c,
        ldc,
        ..Form::packed(m, n, 16384)
    };
    // C is left to the consumers (one rounding of alpha acc + beta C); asked for, the warps
    // take it where its rows are on 16 bytes.
    assert!(!schedule(&c_form(n), &long).contains("_x"));
    assert!(!schedule(&c_form(n + 1), &long).contains("_x"));
    let residual = Form {
        epilogue: Epilogue::RESIDUAL,
        ..Form::packed(m, n, 16384)
    };
    assert!(schedule(&residual, &long).ends_with("_x_n"));
    // The residual alone comes by TMA into the staging under the tile's own main loop: to the
    // warps even at one tile a block (512 x 6144 x 4096: 128 tiles of 128 x 192).
    let one_wave = problem(512, 6144, 4096);
    let one_wave_residual = Form {
        epilogue: Epilogue::RESIDUAL,
        ..Form::packed(512, 6144, 4096)
    };
    assert!(schedule(&one_wave_residual, &one_wave).contains("_x"));
    // A schedule that stages sub-tiles keeps the consumers' finish for the residual: the warps'
    // whole staging would cost its ring a stage, measured worse (512 x 28672 x 4096 on the H100:
    // +13.5% over plain at 128x224 s3 `_x`, +9.5% on the consumers at s4 `_e112`).
    // Plain and bias + GELU keep the same schedule there.
    let sub_tiled = problem(512, 28672, 4096);
    let sub_tiled_form = |epilogue| Form {
        epilogue,
        ..Form::packed(512, 28672, 4096)
    };
    for epilogue in [
        Epilogue::Plain,
        Epilogue::RESIDUAL,
        Epilogue::bias_act(Activation::GeluTanh),
    ] {
        assert_eq!(
            schedule(&sub_tiled_form(epilogue), &sub_tiled),
            "128x224x64s4_e112_n",
            "{epilogue:?}"
        );
    }
    let given_ok = Problem {
        config: given("128x256x64s3_h_x_n"),
        ..long.clone()
    };
    assert!(schedule(&c_form(n), &given_ok).ends_with("_x_n"));
    // Asked for by name, the reasons.
    let given_x = Problem {
        config: given("128x256x64s3_h_x_n"),
        ..long.clone()
    };
    let e = plan_in(&given_x, &c_form(n + 1), &h200).unwrap_err();
    assert!(
        e.contains("the epilogue warps (_x) read rows of C 16 bytes at a time, and ld = 4097"),
        "{e}"
    );
    let e = plan_in(
        &Problem {
            config: given("128x256x64s3_h_x_n"),
            ..p.clone()
        },
        &f32_out,
        &h200,
    )
    .unwrap_err();
    assert!(e.contains("D in f32 (twice the staging's bytes)"), "{e}");
    let e = plan_in(
        &Problem {
            config: given("128x256x64s3_h_x_n"),
            ..p.clone()
        },
        &form(Epilogue::SWIGLU),
        &h200,
    )
    .unwrap_err();
    assert!(
        e.contains("or a gated epilogue (whose gate and up values"),
        "{e}"
    );
}

/// A strided batch of residuals that TMA cannot step through (a batch stride off 16 bytes) is
/// left to the consumers by the chooser, and refused with the reason where `_x` is asked for; on
/// 16 bytes the warps take it, R loaded by TMA ([`crate::hopper::staged_residual`]).
#[test]
fn a_batch_of_residuals_goes_to_the_epilogue_warps_where_tma_can_step_through_it() {
    use crate::gemm::epilogue::Epilogue;
    use crate::gemm::layout::Batch;
    let h200 = Device::h200();
    let (m, n, k) = (1024, 1024, 4096);
    let batched = |residual: usize| Form {
        epilogue: Epilogue::RESIDUAL,
        batch: Batch {
            count: 8,
            a: m * k,
            b: n * k,
            c: 0,
            d: m * n,
            residual,
        },
        ..Form::packed(m, n, k)
    };
    let schedule = |f: &Form, p: &Problem| schedule_in(p, f, &h200);
    let p = problem(m, n, k);
    assert!(schedule(&batched(m * n), &p).contains("_x"));
    assert!(!schedule(&batched(m * n + 4), &p).contains("_x"));
    let asked = Problem {
        config: given("128x256x64s3_x_n"),
        ..p
    };
    let e = plan_in(&asked, &batched(m * n + 4), &h200).unwrap_err();
    assert!(
        e.contains("the residual's batch stride of 1048580 elements is 2097160 bytes"),
        "{e}"
    );
}
