//! The Blackwell program behind the GEMM seam: [`BlackwellWs`] takes f16 and bf16 problems with
//! an f32 sum on sm_100a whose rows TMA can address, takes a [`BlackwellConfig`] (the one asked
//! for, or [`BlackwellWs::DEFAULT`]), and its plan ([`BlackwellGemm`]) launches the persistent
//! kernel over cluster tiles.
//!
//! It has not run on Blackwell hardware (see [the program's page](super)), so `auto` does not
//! choose it on any target: it runs only when asked for by name (`rute gemm --kernel
//! blackwell_ws`), and on a device other than sm_100a it refuses before anything runs.

use std::sync::Arc;

use dsl_core::ir::{Kernel, Target};

use super::config::{BlackwellConfig, Step};
use super::plan::BlackwellPlan;
use super::{entry_name, kernel_of, BlackwellError, TARGETS};
use crate::gemm::{
    tma_rows, Accum, Device, GemmDtype, GemmProgram, KernelBuildError, LaunchPlan, Origin, Plan,
    Problem, ProgramPlan,
};

/// Largest M, N or K the program takes: the kernel's tile coordinates are 32-bit, and TMA's
/// are signed.
pub const MAX_DIM: usize = 1 << 30;

/// The warp-specialized TMA + `tcgen05` program (see [`super`]).
///
/// Refused: targets other than sm_100a, an f16 sum, K or N that are not multiples of 8 (TMA
/// addresses rows of 16 bytes), a dimension above [`MAX_DIM`], and a configuration that does
/// not fit the device's shared memory per block.
///
/// ```
/// use dsl_core::ir::Target;
/// use kernels::blackwell::BlackwellWs;
/// use kernels::gemm::{check, Accum, BufferLens, Device, GemmDtype, KernelChoice, Problem};
/// static PROGRAM: BlackwellWs = BlackwellWs;
/// let p = Problem {
///     m: 1024, n: 768, k: 320, dtype: GemmDtype::Bf16, acc: Accum::F32,
///     kernel: KernelChoice::Program(&PROGRAM), config: None,
/// };
/// let lens = BufferLens::for_shape(1024, 768, 320).unwrap();
/// // On a Blackwell device: step 8, persistent pairs of blocks.
/// let b200 = Device { target: Target::Sm100a, sms: 148, ..Device::unknown(Target::Sm100a) };
/// let plan = check(&p, lens, &b200).unwrap();
/// assert_eq!(plan.entry(), "blackwell_ws_bf16_step8");
/// let launch = plan.launch(1024, 768, 320, &b200);
/// assert_eq!((launch.grid, launch.cluster), ((24, 1, 1), Some((2, 1, 1))));
/// // On a Hopper device: refused, with a sentence.
/// let e = check(&p, lens, &Device::h200()).unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "the blackwell_ws kernel cannot run this problem: it runs on sm_100a only (tcgen05 and \
///      tensor memory), not sm_90a"
/// );
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct BlackwellWs;

impl BlackwellWs {
    /// The configuration without `--config`: the tutorial's step 8 (the two-block cluster at
    /// depth 4), on every shape. No Blackwell GPU has timed the steps, so there is no table of
    /// shapes or cost model behind it yet.
    pub const DEFAULT: Step = Step::Eight;
}

impl GemmProgram for BlackwellWs {
    type Schedule = BlackwellConfig;

    fn name(&self) -> &'static str {
        "blackwell_ws"
    }

    fn summary(&self) -> &'static str {
        "warp-specialized TMA + tcgen05 with the sum in tensor memory (sm_100a; not yet run on \
         Blackwell hardware, so only by name): a TMA producer warp, MMA warps and writeback \
         warpgroups, persistent over cluster tiles; f16 or bf16 with an f32 sum, N and K \
         multiples of 8"
    }

    fn config_syntax(&self) -> &'static str {
        "step7, step8 or step9 (the three steps of the warp-specialization tutorial: one block \
         with a 128 x 128 tile; the two-block cluster, 256 x 256; two MMA consumers sharing B, \
         512 x 256), then any of _dD (D stages, 2 to 16), _nN (N rows of B per block per stage, \
         a multiple of 16 up to 256 / the blocks), _bB (B blocks per MMA, 1 or 2), _cC (C MMA \
         consumers, 1 or 2), _eE (the epilogue E columns at a time: 16, 32, 64 or 128, dividing \
         the MMA's N), each changing the step's part; or those parts alone, changing step 7; \
         each at most once; e.g. step9, step7_d4, d4_b2_c2_e64. Without it: step8"
    }

    fn runs_on(&self, target: Target) -> bool {
        TARGETS.contains(&target)
    }

    /// Never: the program has not run on Blackwell hardware yet.
    fn auto_picks(&self, _target: Target) -> bool {
        false
    }

    fn plan(
        &self,
        p: &Problem,
        device: &Device,
        config: Option<&BlackwellConfig>,
    ) -> Result<Plan, String> {
        let target = device.target;
        if !TARGETS.contains(&target) {
            return Err(format!(
                "it runs on sm_100a only (tcgen05 and tensor memory), not {target}"
            ));
        }
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32 (in tensor memory), not {}", p.acc));
        }
        tma_rows(p, MAX_DIM)?;
        let (cfg, origin) = match config {
            None => (BlackwellWs::DEFAULT.tutorial_config(), None),
            Some(cfg) => (
                *cfg,
                Some(
                    p.config
                        .as_ref()
                        .map_or(Origin::Given, |c| c.origin().clone()),
                ),
            ),
        };
        // A configuration built from its fields is checked here; a parsed one was at its parse.
        cfg.check_fit(device.smem_per_block)
            .map_err(|e| format!("{cfg}: {e}"))?;
        let plan = BlackwellPlan::new(cfg, p.dtype).map_err(|e| format!("{cfg}: {e}"))?;
        Ok(Plan::new(BlackwellGemm {
            plan: Arc::new(plan),
            origin,
        }))
    }
}

/// The program's plan: the host plan of a configuration for one element type, and where the
/// configuration came from (`None`: the program's default). Made by [`BlackwellWs`]'s `plan`
/// only, which checked the configuration against the problem and the device.
#[derive(Debug, Clone)]
pub struct BlackwellGemm {
    plan: Arc<BlackwellPlan>,
    origin: Option<Origin>,
}

impl BlackwellGemm {
    /// The configuration.
    pub fn config(&self) -> &BlackwellConfig {
        &self.plan.cfg
    }

    /// A, B and D's element type.
    pub fn dtype(&self) -> GemmDtype {
        self.plan.dtype
    }

    /// The host plan: atoms, layouts and TMA copies.
    pub fn host_plan(&self) -> &BlackwellPlan {
        &self.plan
    }
}

// SAFETY: blackwell_ws reaches A, B and D only through the tensor maps of its launch, whose
// extents are m x k, n x k and m x n (the TMA unit fills loads past them with zeros and clips
// stores to them); it writes only D, and takes no workspace.
unsafe impl ProgramPlan for BlackwellGemm {
    fn program(&self) -> &'static str {
        "blackwell_ws"
    }

    fn key(&self) -> String {
        self.entry()
    }

    /// `blackwell_ws bf16 (f32 acc, step8: 256 x 256 cluster tiles of 2 blocks, 1 MMA consumer,
    /// 4 stages, 128 epilogue columns; the default)`.
    fn describe(&self) -> String {
        let cfg = self.config();
        let (rows, cols) = cfg.cluster_tile();
        let from = match &self.origin {
            None => "; the default".to_string(),
            Some(Origin::Given) => String::new(),
            Some(origin) => format!("; from {origin}"),
        };
        format!(
            "blackwell_ws {} (f32 acc, {cfg}: {rows} x {cols} cluster tiles of {} block(s), {} \
             MMA consumer(s), {} stages, {} epilogue columns{from})",
            self.dtype(),
            cfg.cluster_blocks(),
            cfg.consumers.count(),
            cfg.depth,
            cfg.epilogue_columns
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        kernel_of(&self.plan).map_err(|e| match e {
            BlackwellError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("blackwell_ws", other),
        })
    }

    fn entry(&self) -> String {
        entry_name(self.config(), self.dtype())
    }

    /// TMA reads global memory from 16-byte aligned addresses.
    fn operand_alignment(&self) -> u64 {
        16
    }

    /// And writes D through a TMA store.
    fn output_alignment(&self) -> u64 {
        16
    }

    fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan {
        // plan() took N and K multiples of 8: every row is a multiple of 16 bytes.
        self.plan
            .launch(m, n, k, device.sms)
            .expect("rows of 16-byte multiples")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{check, BufferLens, Config, InputError, KernelChoice, PROGRAMS};

    static PROGRAM: BlackwellWs = BlackwellWs;

    fn b200() -> Device {
        Device {
            name: "a Blackwell device".into(),
            target: Target::Sm100a,
            sms: 148,
            ..Device::unknown(Target::Sm100a)
        }
    }

    fn problem(m: usize, n: usize, k: usize, kernel: KernelChoice) -> Problem {
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            acc: Accum::F32,
            kernel,
            config: None,
        }
    }

    fn lens(p: &Problem) -> BufferLens {
        BufferLens::for_shape(p.m, p.n, p.k).unwrap()
    }

    fn by_name() -> KernelChoice {
        KernelChoice::named("blackwell_ws").unwrap()
    }

    /// `rute gemm --kernel blackwell_ws` on a Hopper or Ampere device: refused with a sentence
    /// by the check that runs before anything is allocated or launched.
    #[test]
    fn other_targets_are_refused_with_a_sentence() {
        let p = problem(512, 256, 256, by_name());
        for (device, name) in [
            (Device::h200(), "sm_90a"),
            (Device::unknown(Target::Sm80), "sm_80"),
        ] {
            let e = check(&p, lens(&p), &device).unwrap_err();
            assert_eq!(
                e,
                InputError::KernelCannot {
                    kernel: "blackwell_ws",
                    reason: format!(
                        "it runs on sm_100a only (tcgen05 and tensor memory), not {name}"
                    ),
                }
            );
        }
        // With a configuration too: the target is the first refusal.
        let step9 = Problem {
            config: Some(Config::parse(by_name(), "step9").unwrap()),
            ..p.clone()
        };
        let e = check(&step9, lens(&step9), &Device::h200()).unwrap_err();
        assert!(e.to_string().ends_with("not sm_90a"), "{e}");
        assert!(check(&step9, lens(&step9), &b200()).is_ok());
    }

    /// `auto` never tries it: not on sm_90a, where it cannot run, and not on sm_100a, where it
    /// has not run yet; by name it plans there.
    #[test]
    fn auto_never_picks_it() {
        for device in [Device::h200(), b200(), Device::unknown(Target::Sm80)] {
            for (m, n, k) in [(512, 256, 256), (4096, 4096, 4096), (100, 72, 40)] {
                let p = problem(m, n, k, KernelChoice::Auto);
                if let Ok(plan) = check(&p, lens(&p), &device) {
                    assert_ne!(plan.program(), "blackwell_ws", "{m}x{n}x{k}");
                }
            }
        }
        assert!(PROGRAMS.iter().any(|p| p.name() == "blackwell_ws"));
        let p = problem(512, 256, 256, by_name());
        assert_eq!(
            check(&p, lens(&p), &b200()).unwrap().program(),
            "blackwell_ws"
        );
        // A spelling only it takes leaves auto nothing to choose.
        let auto = Problem {
            config: Some(Config::parse(KernelChoice::Auto, "step8").unwrap()),
            ..problem(512, 256, 256, KernelChoice::Auto)
        };
        for device in [Device::h200(), b200()] {
            assert!(check(&auto, lens(&auto), &device).is_err());
        }
    }

    /// What it takes on sm_100a, and why not, as clauses.
    #[test]
    fn problems_it_refuses_say_why() {
        let device = b200();
        for (m, n, k, acc, why) in [
            (64, 64, 60, Accum::F32, "K = 60 is not a multiple of 8"),
            (64, 36, 64, Accum::F32, "N = 36 is not a multiple of 8"),
            (
                64,
                64,
                64,
                Accum::F16,
                "it sums in f32 (in tensor memory), not f16",
            ),
            ((1 << 30) + 8, 64, 64, Accum::F32, "M = 1073741832 is above"),
        ] {
            let p = Problem {
                acc,
                ..problem(m, n, k, by_name())
            };
            let e = PROGRAM.plan(&p, &device, None).unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
        // A device with less shared memory per block refuses a deep ring, naming it.
        let small = Device {
            smem_per_block: 100 * 1024,
            ..device.clone()
        };
        let p = problem(512, 256, 256, by_name());
        let e = PROGRAM
            .plan(&p, &small, Some(&BlackwellConfig::step8(4)))
            .unwrap_err();
        assert!(e.starts_with("step8: ") && e.contains("102400"), "{e}");
        assert!(PROGRAM
            .plan(&p, &small, Some(&BlackwellConfig::step8(2)))
            .is_ok());
        // A value built from its fields is checked.
        let wide = BlackwellConfig {
            tile_n: 256,
            ..BlackwellConfig::step8(2)
        };
        let e = PROGRAM.plan(&p, &device, Some(&wide)).unwrap_err();
        assert!(e.contains("B tiles of 256 rows"), "{e}");
        // M needs no alignment: TMA clips the tiles.
        assert!(PROGRAM
            .plan(&problem(1001, 264, 136, by_name()), &device, None)
            .is_ok());
    }

    /// The launch of each step: persistent clusters, no more than there are cluster tiles, the
    /// block's threads, the dynamic shared memory, and the three tensor maps then M, N, K.
    #[test]
    fn each_step_launches_as_its_configuration_says() {
        use crate::gemm::{GemmArg, GemmOperand};
        let device = b200();
        for (spelling, threads, cluster, tiles) in [
            ("step7", 256, None, 8 * 6),
            ("step8", 256, Some((2, 1, 1)), 4 * 3),
            ("step9", 384, Some((2, 1, 1)), 2 * 3),
        ] {
            let p = Problem {
                config: Some(Config::parse(by_name(), spelling).unwrap()),
                ..problem(1024, 768, 320, by_name())
            };
            let plan = check(&p, lens(&p), &device).unwrap();
            let cfg = plan.downcast_ref::<BlackwellGemm>().unwrap().config();
            let l = plan.launch(1024, 768, 320, &device);
            let blocks = cluster.map_or(1, |c: (u32, u32, u32)| c.0);
            assert_eq!(l.grid, (tiles * blocks, 1, 1), "{spelling}");
            assert_eq!((l.block, l.cluster), ((threads, 1, 1), cluster));
            assert_eq!(l.dynamic_smem_bytes, cfg.smem_bytes());
            assert_eq!(l.check(), Ok(()));
            let operands: Vec<Option<GemmOperand>> = l
                .args
                .iter()
                .map(|a| match a {
                    GemmArg::TensorMap { operand, .. } => Some(*operand),
                    _ => None,
                })
                .collect();
            use GemmOperand::*;
            assert_eq!(operands, [Some(A), Some(B), Some(D), None, None, None]);
            assert_eq!(&l.args[3..], [GemmArg::M, GemmArg::N, GemmArg::K]);
            assert_eq!(plan.entry(), format!("blackwell_ws_f16_{spelling}"));
        }
        // Many tiles: as many clusters as the device runs at once.
        let p = problem(8192, 8192, 64, by_name());
        let l = check(&p, lens(&p), &device)
            .unwrap()
            .launch(8192, 8192, 64, &device);
        assert_eq!(l.grid, (148, 1, 1));
    }

    #[test]
    fn plans_describe_their_configuration_and_where_it_came_from() {
        let device = b200();
        let p = problem(512, 256, 256, by_name());
        let plan = check(&p, lens(&p), &device).unwrap();
        assert_eq!(
            plan.describe(),
            "blackwell_ws f16 (f32 acc, step8: 256 x 256 cluster tiles of 2 block(s), 1 MMA \
             consumer(s), 4 stages, 128 epilogue columns; the default)"
        );
        let given = Problem {
            config: Some(Config::parse(by_name(), "step7_d4").unwrap()),
            ..p
        };
        let plan = check(&given, lens(&given), &device).unwrap();
        assert!(
            plan.describe()
                .contains("step7_d4: 128 x 128 cluster tiles")
                && plan.describe().ends_with("128 epilogue columns)"),
            "{}",
            plan.describe()
        );
        // Different configurations are different kernels to the compile cache.
        let default = check(&p_default(), lens(&p_default()), &device).unwrap();
        assert_ne!(plan, default);
        assert_eq!(plan.key(), plan.entry());
    }

    fn p_default() -> Problem {
        problem(512, 256, 256, by_name())
    }
}
