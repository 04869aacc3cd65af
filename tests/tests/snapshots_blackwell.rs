//! The warp-specialized Blackwell GEMM's PTX: one insta snapshot per step of the tutorial and element
//! type, named after its entry (`blackwell_ws_<dtype>_<configuration>_sm_100a.snap`, e.g.
//! `blackwell_ws_f16_step7_d4_sm_100a.snap`, under the repository's `snapshots/`),
//! each assembled by ptxas for sm_100a with no spills and no stack frame; and every configuration
//! the program accepts over a grid of its parts, built, launched and assembled likewise. The
//! program has not run on Blackwell hardware; these are the checks it has without one.
//!
//! The ptxas tests need `RUTE_PTXAS` (CI sets it) and fail without it.

use dsl_core::ir::Target;
use kernels::blackwell::{
    blackwell_kernel, entry_name, BlackwellConfig, Step, SMEM_PER_BLOCK, STATIC_SMEM_BYTES,
};
use kernels::gemm::GemmDtype;
use rute_tests::ptx::{assemble_clean, assert_no_stale_snapshots, SNAPSHOTS};

/// Every step at the tutorial's depth (and step 7 deeper), for both element types.
fn published() -> Vec<(Step, BlackwellConfig, GemmDtype, String)> {
    let mut out = Vec::new();
    for step in Step::ALL {
        let mut depths = vec![step.tutorial_depth()];
        if step == Step::Seven {
            depths.push(4);
        }
        for depth in depths {
            let cfg = step.config(depth);
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let name = format!("{}_sm_100a", entry_name(&cfg, dtype));
                out.push((step, cfg, dtype, name));
            }
        }
    }
    out
}

fn ptx_of(cfg: BlackwellConfig, dtype: GemmDtype) -> String {
    let k = blackwell_kernel(cfg, dtype).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"));
    codegen_ptx::emit(&k, Target::Sm100a).unwrap_or_else(|e| panic!("{cfg} {dtype}: {e}"))
}

#[test]
fn ptx_snapshots() {
    let mut expected = Vec::new();
    for (_, cfg, dtype, name) in published() {
        insta::with_settings!({
            snapshot_path => SNAPSHOTS,
            prepend_module_to_snapshot => false,
            description => format!("blackwell_ws --config {cfg} {dtype} for sm_100a"),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name.clone(), ptx_of(cfg, dtype));
        });
        expected.push(format!("{name}.snap"));
    }
    assert_no_stale_snapshots("blackwell_", &expected);
}

/// ptxas assembles every step with no spills and no stack frame, its registers fit the block
/// (one block per SM), and its shared memory the SM. The table it prints is the resources per
/// role: registers (one count for the kernel: no role changes its budget), the dynamic shared
/// memory each role's buffers take, and the TMEM columns of each accumulator.
#[test]
fn every_step_assembles_without_spills() {
    let mut table = vec![format!(
        "{:<48} {:>5} {:>8} {:>7} {:>10} {:>5} {:>8}",
        "kernel", "regs", "threads", "ring B", "staging B", "tmem", "per acc"
    )];
    for (_, cfg, dtype, name) in published() {
        let report = assemble_clean(&ptx_of(cfg, dtype), Target::Sm100a, &name);
        assert!(
            report.registers * cfg.threads() <= 65536,
            "{name}: {} registers x {} threads",
            report.registers,
            cfg.threads()
        );
        // The static part (barriers, the TMEM address) is within what the fit counts for it.
        assert!(
            report.shared_bytes as u32 <= STATIC_SMEM_BYTES,
            "{name}: {} static bytes",
            report.shared_bytes
        );
        assert!(cfg.block_smem_bytes() <= SMEM_PER_BLOCK, "{name}");
        table.push(format!(
            "{name:<48} {:>5} {:>8} {:>7} {:>10} {:>5} {:>8}",
            report.registers,
            cfg.threads(),
            cfg.depth * cfg.stage_bytes(),
            cfg.staging_bytes(),
            cfg.tmem_columns(),
            cfg.mma_n(),
        ));
    }
    println!("{}", table.join("\n"));
}

/// Every configuration the parts make that the program accepts (each part over its range: the
/// B rows every fifth multiple of 16 and the widest, depths 2, 3 and the deepest that fits)
/// builds a kernel and a launch, and ptxas assembles it with no spills; what it refuses is
/// refused with a sentence.
#[test]
fn every_accepted_configuration_builds_and_assembles() {
    use dsl_core::ir::op::CtaGroup;
    use kernels::blackwell::{BlackwellPlan, ConfigError, Consumers, MAX_DEPTH};
    let (mut built, mut refused) = (0, 0);
    for cta_group in [CtaGroup::One, CtaGroup::Two] {
        for consumers in [Consumers::One, Consumers::TwoSharingB] {
            for tile_n in [16, 48, 128, 208, 256] {
                for epilogue_columns in [16, 32, 64, 128] {
                    let at = |depth| BlackwellConfig {
                        depth,
                        tile_n,
                        cta_group,
                        consumers,
                        epilogue_columns,
                        planted: None,
                    };
                    let deepest = (2..=MAX_DEPTH).rev().find(|&d| at(d).check().is_ok());
                    for depth in [Some(2), Some(3), deepest].into_iter().flatten() {
                        let cfg = at(depth);
                        if let Err(e) = cfg.check() {
                            assert!(
                                matches!(e, ConfigError::Range(_) | ConfigError::Fit(_)),
                                "{cfg:?}: {e}"
                            );
                            refused += 1;
                            continue;
                        }
                        let spelled: BlackwellConfig = cfg.to_string().parse().unwrap();
                        assert_eq!(spelled, cfg);
                        let ptx = ptx_of(cfg, GemmDtype::Bf16);
                        let name = entry_name(&cfg, GemmDtype::Bf16);
                        let report = assemble_clean(&ptx, Target::Sm100a, &name);
                        assert!(report.registers * cfg.threads() <= 65536, "{name}");
                        let plan = BlackwellPlan::new(cfg, GemmDtype::Bf16).unwrap();
                        let launch = plan.launch(1000, 264, 136, 148).unwrap();
                        assert_eq!(launch.dynamic_smem_bytes, cfg.smem_bytes(), "{name}");
                        built += 1;
                    }
                }
            }
        }
    }
    println!("{built} configurations built, {refused} refused");
    assert!(
        built > 60 && refused > 0,
        "{built} built, {refused} refused"
    );
}
