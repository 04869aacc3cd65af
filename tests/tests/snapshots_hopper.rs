//! The warp-specialized Hopper GEMM's PTX: one insta snapshot per configuration the sweep times
//! (`hopper_<config>_<dtype>_sm_90a.snap`, under the repository's `snapshots/`), per form kernel
//! published beside them (`hopper_<config>_<dtype><form tag>_sm_90a.snap`: D in f32 stored from
//! the registers, SwiGLU under a swapped schedule), and of a strided batch's kernel
//! (`hopper_batch_<config>_<dtype>_sm_90a.snap`: the batch as the tensor maps' third
//! coordinate, the walk over every GEMM's tiles), each assembled by ptxas for sm_90a with no
//! spills, no stack frame and the register split the design needs.
//!
//! The ptxas test needs `RUTE_PTXAS` (CI sets it) and fails without it.

use dsl_core::ir::Target;
use kernels::gemm::epilogue::{Activation, Bias, Elementwise, Epilogue, Map, Residual, Source};
use kernels::gemm::layout::{FormParts, Major, OutType};
use kernels::gemm::GemmDtype;
use kernels::hopper::{hopper_batch_kernel, hopper_form_kernel, hopper_kernel, HopperSchedule};
use rute_tests::ptx::{assemble_clean, assert_no_stale_snapshots, SNAPSHOTS};

/// The form kernels published: bias + GELU with D in f32 on the widest tile (pairs of f32 from
/// the registers); every operand at once (C, the bias, GELU, the residual) in bf16 on the large
/// square default, the values rewritten in their registers for the schedule's staged store (the
/// most registers an elementwise epilogue holds), bias + GELU on the same schedule with the
/// epilogue warps (`_x`: the chooser's for it), and SwiGLU on the decode gate+up projection's
/// swapped schedule (gate and up traded between lanes) and on the large square default (each
/// quad's values exchanged for 16-byte stores), each with its snapshot's name.
fn published_forms() -> Vec<(HopperSchedule, GemmDtype, FormParts, String)> {
    let parts = |epilogue, out| FormParts {
        a: Major::K,
        b: Major::K,
        epilogue,
        out,
    };
    [
        (
            "128x256x64s3",
            parts(Epilogue::bias_act(Activation::GeluTanh), OutType::F32),
        ),
        ("128x16x64s8_vfln_t", parts(Epilogue::SWIGLU, OutType::Bf16)),
        ("128x256x64s3_h_n", parts(Epilogue::SWIGLU, OutType::Bf16)),
        (
            "128x256x64s3_h_x_n",
            parts(Epilogue::bias_act(Activation::GeluTanh), OutType::Bf16),
        ),
        // The epilogue warps adding the residual, its chunks four passes ahead.
        (
            "128x256x64s3_h_x_n",
            parts(
                Epilogue::Elementwise(Elementwise {
                    source: Source::None,
                    bias: None,
                    map: Map::Activation(Activation::Identity),
                    residual: Residual::Add,
                }),
                OutType::Bf16,
            ),
        ),
        (
            "128x256x64s3_h_n",
            parts(
                Epilogue::Elementwise(Elementwise {
                    source: Source::C,
                    bias: Some(Bias::PerColumn),
                    map: Map::Activation(Activation::GeluTanh),
                    residual: Residual::Add,
                }),
                OutType::Bf16,
            ),
        ),
    ]
    .into_iter()
    .map(|(spec, form)| {
        let cfg: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        let dtype = GemmDtype::Bf16;
        let name = format!("hopper_{cfg}_{dtype}{}_sm_90a", form.tag());
        (cfg, dtype, form, name)
    })
    .collect()
}

fn form_ptx_of(cfg: HopperSchedule, dtype: GemmDtype, form: FormParts) -> String {
    let k = hopper_form_kernel(cfg, dtype, Some(form))
        .unwrap_or_else(|e| panic!("{cfg} {dtype} {}: {e}", form.tag()));
    codegen_ptx::emit(&k, Target::Sm90a).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"))
}

/// Every (configuration, element type) the sweep times, with its snapshot's name.
fn published() -> Vec<(HopperSchedule, GemmDtype, String)> {
    let mut out = Vec::new();
    for spec in HopperSchedule::SWEEP {
        let cfg: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
            out.push((cfg, dtype, format!("hopper_{cfg}_{dtype}_sm_90a")));
        }
    }
    out
}

fn ptx_of(cfg: HopperSchedule, dtype: GemmDtype) -> String {
    let k = hopper_kernel(cfg, dtype).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"));
    codegen_ptx::emit(&k, Target::Sm90a).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"))
}

/// The strided batches' kernels with a snapshot: the default schedule of attention's batch
/// (64 x 512 x 512 x 128, cuBLAS's TN: both operands K-major), f16, the plain sum.
fn batched() -> Vec<(HopperSchedule, GemmDtype, String)> {
    let cfg: HopperSchedule = "128x256x64s4_e128".parse().unwrap();
    let dtype = GemmDtype::F16;
    vec![(cfg, dtype, format!("hopper_batch_{cfg}_{dtype}_sm_90a"))]
}

fn batch_ptx_of(cfg: HopperSchedule, dtype: GemmDtype) -> String {
    let parts = FormParts {
        a: Major::K,
        b: Major::K,
        epilogue: Epilogue::Plain,
        out: OutType::of(dtype),
    };
    let k = hopper_batch_kernel(cfg, dtype, parts).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    codegen_ptx::emit(&k, Target::Sm90a).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"))
}

#[test]
fn ptx_snapshots() {
    assert_eq!(published().len(), 2 * HopperSchedule::SWEEP.len());
    let sweep = published().into_iter().map(|(cfg, dtype, name)| {
        let description = format!("hopper_ws {cfg} {dtype} for sm_90a");
        (name, description, ptx_of(cfg, dtype))
    });
    let forms = published_forms()
        .into_iter()
        .map(|(cfg, dtype, form, name)| {
            let (epi, out) = (form.epilogue.describe(), form.out);
            let description = format!("hopper_ws {cfg} {dtype}, {epi} -> {out}, for sm_90a");
            (name, description, form_ptx_of(cfg, dtype, form))
        });
    let batches = batched().into_iter().map(|(cfg, dtype, name)| {
        let description = format!("hopper_ws {cfg} {dtype} for sm_90a, a strided batch");
        (name, description, batch_ptx_of(cfg, dtype))
    });
    let mut expected = Vec::new();
    for (name, description, ptx) in sweep.chain(forms).chain(batches) {
        insta::with_settings!({
            snapshot_path => SNAPSHOTS,
            prepend_module_to_snapshot => false,
            description => description,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name.clone(), ptx);
        });
        expected.push(format!("{name}.snap"));
    }
    assert_no_stale_snapshots("hopper_", &expected);
}

/// The published form kernels assemble within the consumers' register budget, with no spills.
#[test]
fn published_form_kernels_assemble_within_the_register_budget() {
    for (cfg, dtype, form, name) in published_forms() {
        let report = assemble_clean(&form_ptx_of(cfg, dtype, form), Target::Sm90a, &name);
        assert!(
            report.registers <= cfg.registers().1,
            "{name}: {}",
            report.registers
        );
        assert!(
            report.registers * cfg.threads() <= 65536,
            "{name}: {} registers per thread do not fit {} threads",
            report.registers,
            cfg.threads()
        );
        println!("{name:<60} {:>3} regs at entry, 0 spills", report.registers);
    }
}

/// ptxas allocates at most the consumers' `setmaxnreg` budget at entry (a block of 256 or 384
/// threads must fit the SM's 64K registers before the producer gives its share back), with no
/// spills; the shared memory is the plan's rings plus the epilogue's staging and the static
/// barriers before them (as ptxas counts them: padded to the dynamic memory's 1 KiB alignment),
/// within the SM's 227 KiB.
#[test]
fn every_configuration_assembles_within_its_register_budget() {
    let mut table = Vec::new();
    let batches = batched()
        .into_iter()
        .map(|(cfg, dtype, name)| (cfg, batch_ptx_of(cfg, dtype), name));
    let all = published()
        .into_iter()
        .map(|(cfg, dtype, name)| (cfg, ptx_of(cfg, dtype), name))
        .chain(batches);
    for (cfg, ptx, name) in all {
        let report = assemble_clean(&ptx, Target::Sm90a, &name);
        assert!(
            report.registers * cfg.threads() <= 65536,
            "{name}: {} registers per thread do not fit {} threads",
            report.registers,
            cfg.threads()
        );
        assert!(
            report.registers <= cfg.registers().1,
            "{name}: {}",
            report.registers
        );
        assert_eq!(
            report.shared_bytes,
            u64::from(cfg.block_smem_bytes() - cfg.smem_bytes()),
            "{name}: static shared memory"
        );
        assert!(
            cfg.block_smem_bytes() <= kernels::hopper::SMEM_LIMIT,
            "{name}"
        );
        table.push(format!(
            "{name:<36} {:>3} regs at entry, 0 spills, smem {:>6} B (dynamic) + {} B (static)",
            report.registers,
            cfg.smem_bytes(),
            report.shared_bytes
        ));
    }
    println!("{}", table.join("\n"));
}
