//! The multistage GEMM's PTX: one insta snapshot per (registered configuration, target) under the
//! repository's `snapshots/` directory (`gemm_<name>_<target>.snap`), each assembled with ptxas
//! for sm_80 and sm_90a with no spills, and the instruction mix the seed's algorithm implies.
//!
//! The ptxas test needs `RUTE_PTXAS` (CI sets it) and fails without it.

use codegen_ptx::ptxas::assemble;
use dsl_core::ir::Target;
use kernels::registry::{Registered, KERNELS};
use rute_tests::ptx::{assemble_clean, assert_no_stale_snapshots, ptx_of, SNAPSHOTS};

fn gemms() -> Vec<&'static Registered> {
    KERNELS
        .iter()
        .filter(|k| k.name.starts_with("multistage"))
        .collect()
}

#[test]
fn ptx_snapshots() {
    let names: Vec<&str> = gemms().iter().map(|k| k.name).collect();
    assert_eq!(
        names,
        [
            "multistage_f16",
            "multistage_f16_f32acc",
            "multistage_bf16",
            "multistage_f16_tuned"
        ]
    );
    let mut expected = Vec::new();
    for k in gemms() {
        for &target in k.targets {
            let name = format!("gemm_{}_{}", k.name, target.name());
            insta::with_settings!({
                snapshot_path => SNAPSHOTS,
                prepend_module_to_snapshot => false,
                description => format!("rute ptx {} --target {}", k.name, target.name()),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(name.clone(), ptx_of(k, target));
            });
            expected.push(format!("{name}.snap"));
        }
    }
    assert_no_stale_snapshots("gemm_", &expected);
}

/// How many lines of `ptx` contain `needle`.
fn count(ptx: &str, needle: &str) -> usize {
    ptx.lines().filter(|l| l.contains(needle)).count()
}

/// The configuration each registered GEMM is built from.
fn config_of(name: &str) -> kernels::multistage::MultistageConfig {
    use kernels::gemm::{Accum, GemmDtype};
    use kernels::multistage::MultistageConfig;
    match name {
        "multistage_f16" => MultistageConfig::reference(GemmDtype::F16, Accum::F16),
        "multistage_f16_f32acc" => MultistageConfig::reference(GemmDtype::F16, Accum::F32),
        "multistage_bf16" => MultistageConfig::reference(GemmDtype::Bf16, Accum::F32),
        "multistage_f16_tuned" => MultistageConfig::tuned(GemmDtype::F16, Accum::F32),
        other => panic!("no configuration known for {other}"),
    }
}

/// The instruction mix the algorithm implies, per thread, counted from the configuration:
/// - 16-byte `cp.async`: a k-tile of A and B is `(tile_m + tile_n) * tile_k / 8` copies shared by
///   the threads; the copy is generated `stages` times with a source size (`stages - 1` prologue
///   tiles, one in the predicated main loop) and once without (the main loop of whole tiles);
/// - `ldmatrix.x4`: a warp's k-block of A is `tile_m / warps_m` rows, 16 per x4, and of B
///   `tile_n / warps_n` columns, 16 per x4; generated once before the loops, for each of the
///   `tile_k / 16` k-blocks in each of the two, and for all but the first k-block of the peeled
///   last k-tile (which reads nothing ahead of it);
/// - `mma.sync`: per k-block `(tile_m / warps_m / 16) * (tile_n / warps_n / 8)`, for each k-block
///   of the two loops and of the peeled last k-tile;
/// - `stmatrix.x4` (the `stmatrix` epilogue, sm_90 and later; sm_80 gets `st.shared`): one per
///   16x16 of a warp's tile;
/// - `commit_group`: once per prologue stage and once in each loop; `wait_group stages-2` before
///   the loops and once in each.
#[test]
fn instruction_mix() {
    for k in gemms() {
        let cfg = config_of(k.name);
        let (bm, bn, bk) = (
            cfg.tile_m as usize,
            cfg.tile_n as usize,
            cfg.tile_k as usize,
        );
        let (wm, wn) = (cfg.warps.0 as usize, cfg.warps.1 as usize);
        let threads = 32 * wm * wn;
        let stages = cfg.stages as usize;
        let kblocks = bk / 16;
        let per_tile = (bm + bn) * bk / 8 / threads;
        let ldsm = (bm / wm / 16 + bn / wn / 16) * (1 + 2 * kblocks + (kblocks - 1));
        let mma = (bm / wm / 16) * (bn / wn / 8) * kblocks * 3;
        for &target in k.targets {
            let ptx = ptx_of(k, target);
            let what = format!("{} for {target}", k.name);
            let copies: Vec<&str> = ptx
                .lines()
                .filter(|l| l.contains("cp.async.cg.shared.global ["))
                .collect();
            let sized = copies.iter().filter(|l| l.contains("], 16, ")).count();
            let unpredicated = copies.iter().filter(|l| l.ends_with("], 16;")).count();
            assert_eq!(
                (sized, unpredicated, copies.len()),
                (per_tile * stages, per_tile, per_tile * (stages + 1)),
                "{what}: cp.async of 16 bytes, with a source size and without"
            );
            assert_eq!(
                count(&ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
                ldsm,
                "{what}: ldmatrix"
            );
            assert_eq!(
                count(&ptx, "mma.sync.aligned.m16n8k16.row.col"),
                mma,
                "{what}: mma"
            );
            let stsm = match cfg.for_target(target).epilogue {
                kernels::multistage::Epilogue::Stmatrix => (bm / wm / 16) * (bn / wn / 16),
                _ => 0,
            };
            assert_eq!(
                count(&ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16"),
                stsm,
                "{what}: stmatrix"
            );
            assert_eq!(count(&ptx, "cp.async.commit_group"), stages + 1, "{what}");
            assert_eq!(
                count(&ptx, &format!("cp.async.wait_group {}", stages - 2)),
                3,
                "{what}"
            );
            assert!(ptx.contains(&format!(".reqntid {threads}, 1, 1")), "{what}");
        }
    }
}

#[test]
fn every_snapshot_assembles_without_spills() {
    let mut table = Vec::new();
    for k in gemms() {
        for &target in k.targets.iter().filter(|&&t| t != Target::Sm100a) {
            let ptx = ptx_of(k, target);
            let report = assemble_clean(&ptx, target, k.name);
            table.push(format!(
                "{:<22} {:<8} {:>3} regs {:>6} B static smem, 0 spills",
                k.name,
                target.name(),
                report.registers,
                report.shared_bytes
            ));
        }
    }
    println!("{}", table.join("\n"));
}

/// The configurations the GPU test runs besides the registered ones (narrower copies for K not a
/// multiple of 8), other tiles and depths, and every named configuration (`rute gemm --config`)
/// assemble without spills on sm_80 and sm_90a.
#[test]
fn other_configurations_assemble() {
    use kernels::gemm::{Accum, GemmDtype};
    use kernels::multistage::{multistage_kernel, MultistageConfig, MultistageParts};
    let mut cfgs = Vec::new();
    for (dtype, acc) in [
        (GemmDtype::F16, Accum::F16),
        (GemmDtype::F16, Accum::F32),
        (GemmDtype::Bf16, Accum::F32),
    ] {
        for k in [36, 34, 33] {
            cfgs.push(MultistageConfig::reference_for_k(dtype, acc, k));
        }
    }
    for (tile_m, tile_n, tile_k, stages) in [(128, 128, 32, 4), (64, 128, 32, 4), (128, 128, 64, 3)]
    {
        cfgs.push(
            MultistageConfig::new(MultistageParts {
                tile_m,
                tile_n,
                tile_k,
                stages,
                ..MultistageConfig::reference(GemmDtype::F16, Accum::F32).parts()
            })
            .unwrap(),
        );
    }
    for (warps, tile_m, tile_n, stages) in [((2, 4), 128, 256, 4), ((4, 2), 256, 128, 3)] {
        for acc in [Accum::F16, Accum::F32] {
            cfgs.push(
                MultistageConfig::new(MultistageParts {
                    warps,
                    tile_m,
                    tile_n,
                    stages,
                    ..MultistageConfig::reference(GemmDtype::F16, acc).parts()
                })
                .unwrap(),
            );
        }
    }
    for acc in [Accum::F16, Accum::F32] {
        for (warps, tile_n, stages) in [((2, 2), 128, 3), ((2, 4), 256, 4)] {
            cfgs.push(
                MultistageConfig::new(MultistageParts {
                    epilogue: kernels::multistage::Epilogue::Smem,
                    raster_log2: 2,
                    warps,
                    tile_n,
                    stages,
                    ..MultistageConfig::reference(GemmDtype::F16, acc).parts()
                })
                .unwrap(),
            );
        }
    }
    // Every configuration the sweep times, for every type pair.
    for name in kernels::multistage::Tune::SWEEP {
        let tune: kernels::multistage::Tune = name.parse().unwrap();
        for (dtype, acc) in [
            (GemmDtype::F16, Accum::F16),
            (GemmDtype::F16, Accum::F32),
            (GemmDtype::Bf16, Accum::F32),
        ] {
            cfgs.push(tune.config(dtype, acc).unwrap());
        }
    }
    cfgs.dedup();
    let mut spills = Vec::new();
    for cfg in cfgs {
        for target in [Target::Sm80, Target::Sm90a] {
            // A stmatrix epilogue runs as the st.shared one on sm_80.
            let cfg = cfg.for_target(target);
            let kernel = multistage_kernel(&cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
            let ptx = codegen_ptx::emit(&kernel, target)
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name));
            let report = assemble(&ptx, target)
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", kernel.name));
            println!(
                "{:<40} {target}: {} regs, {} B spilled",
                kernel.name, report.registers, report.spill_store_bytes
            );
            if (report.spill_store_bytes, report.spill_load_bytes) != (0, 0) {
                spills.push(format!("{} for {target}", kernel.name));
            }
        }
    }
    assert!(spills.is_empty(), "spills: {spills:?}");
}

/// Every program of the build names launch arguments that fill its kernel's parameters, for the
/// plans it makes on every target for shapes that reach its different defaults (K odd, short,
/// long).
#[test]
fn every_program_s_arguments_fit_its_kernel() {
    use kernels::gemm::{
        check, Accum, BufferLens, Device, GemmDtype, KernelChoice, Problem, PROGRAMS,
    };
    for program in PROGRAMS {
        let mut plans = 0;
        for target in Target::ALL {
            let device = Device {
                target,
                ..Device::h200()
            };
            for (m, n, k) in [
                (100, 70, 13),
                (300, 200, 24),
                (4096, 4096, 4096),
                (16, 4096, 4096),
            ] {
                for (dtype, acc) in [(GemmDtype::F16, Accum::F16), (GemmDtype::Bf16, Accum::F32)] {
                    let p = Problem {
                        m,
                        n,
                        k,
                        dtype,
                        acc,
                        kernel: KernelChoice::Program(*program),
                        config: None,
                    };
                    let Ok(plan) = check(&p, BufferLens::for_shape(m, n, k).unwrap(), &device)
                    else {
                        continue;
                    };
                    let launch = plan.launch(m as u32, n as u32, k as u32, &device);
                    assert_eq!(launch.check(), Ok(()), "{}", plan.describe());
                    rute_tests::gemm::assert_args_fit(&plan, &launch, target);
                    plans += 1;
                }
            }
        }
        assert!(plans > 0, "{} made no plan", program.name());
    }
}
