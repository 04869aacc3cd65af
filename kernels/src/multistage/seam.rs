//! The multistage program behind the GEMM seam: [`Multistage`] picks a [`MultistageConfig`] for a
//! problem (the default by shape, or `--config` in [`Tune`]'s spelling) as the target runs it,
//! and the configuration is the plan the runtime compiles and launches.

use dsl_core::ir::{Kernel, Target};

use super::{multistage_kernel, Epilogue, MultistageConfig, MultistageError, Tune, TARGETS};
use crate::gemm::layout::Form;
use crate::gemm::naive::MAX_GRID_Y;
use crate::gemm::program::{aligned_for, packed_only};
use crate::gemm::{
    Device, GemmArg, GemmProgram, KernelBuildError, LaunchPlan, Plan, Problem, ProgramPlan,
};

/// The multistage program (`cp.async` + `ldmatrix` + `mma.sync`, see [`super`]).
///
/// Without a configuration: [`Tune::for_shape`] where K is a multiple of 8 (rows of A and B
/// take 16-byte copies), else the reference with the widest copies K allows
/// ([`MultistageConfig::reference_for_k`]); with one, that [`Tune`]. Either way as the target runs
/// it ([`MultistageConfig::for_target`]: the `stmatrix` epilogue becomes `st.shared` below
/// sm_90).
#[derive(Debug, Clone, Copy, Default)]
pub struct Multistage;

/// Largest K the program's global tiles index (`dsl_core::tensor::ROW` columns).
pub const MAX_K: usize = 1 << 24;

impl GemmProgram for Multistage {
    type Schedule = Tune;

    fn name(&self) -> &'static str {
        "multistage"
    }

    fn summary(&self) -> &'static str {
        "cp.async + ldmatrix + mma.sync through a stages-deep shared-memory ring (sm_80 and up); \
         any M, N and K with M*K, N*K and M*N below 2^32"
    }

    fn config_syntax(&self) -> &'static str {
        "MxN[xK]sS[_wAxB][_rR][_se|_stsm]: the block tile (K 32 when left out), S stages, A x B \
         warps (one per 64x64 by default), blocks rasterized in groups of 2^R M tiles, the \
         epilogue through shared memory written by st.shared (_se) or stmatrix (_stsm, st.shared \
         below sm_90); e.g. 128x256x32s4_r2_se; or `ref` (128x128x32s3) or `tuned` \
         (128x256x32s4_r2_stsm). Without it: 128x128x64s3_r2_stsm for K <= 2048, `tuned` above, \
         the reference with the widest copies K allows where K is not a multiple of 8"
    }

    fn plan(&self, p: &Problem, device: &Device, tune: Option<&Tune>) -> Result<Plan, String> {
        self.config_for(p, device.target, tune).map(Plan::new)
    }

    /// The packed form as [`GemmProgram::plan`] plans it where its copies' alignment holds;
    /// otherwise (a form past the packed one, or rows aligned less than the default's copies
    /// need) the plan of [`super::form`], unless a configuration was asked for.
    fn plan_form(
        &self,
        p: &Problem,
        form: &Form,
        device: &Device,
        tune: Option<&Tune>,
    ) -> Result<Plan, String> {
        let packed = packed_only(p, form).and_then(|()| {
            let plan = self.plan(p, device, tune)?;
            aligned_for(&plan, form, p.dtype)?;
            Ok(plan)
        });
        match (packed, tune) {
            (Ok(plan), _) => Ok(plan),
            (Err(why), Some(_)) => Err(why),
            (Err(_), None) => super::form::plan_form(p, form, device.target),
        }
    }
}

impl Multistage {
    /// The configuration [`GemmProgram::plan`] makes the plan of (see [`Multistage`]), or why the
    /// program cannot run `p` on `target`.
    pub fn config_for(
        &self,
        p: &Problem,
        target: Target,
        tune: Option<&Tune>,
    ) -> Result<MultistageConfig, String> {
        if !TARGETS.contains(&target) {
            return Err(format!("it runs on sm_80 and newer, not {target}"));
        }
        let cfg = match tune {
            None if p.k.is_multiple_of(8) => Tune::for_shape(p.m, p.n, p.k).config(p.dtype, p.acc),
            None => Ok(MultistageConfig::reference_for_k(
                p.dtype, p.acc, p.k as u32,
            )),
            Some(tune) => tune.config(p.dtype, p.acc),
        }
        .map_err(|e| match e {
            MultistageError::Config { reason, .. } => reason,
            other => other.to_string(),
        })?
        .for_target(target);
        if !p.k.is_multiple_of(cfg.k_multiple() as usize) {
            return Err(format!(
                "K = {} is not a multiple of {}, and its {}-bit cp.async copies need rows of A and B aligned to them; the reference configuration (no --config) takes any K",
                p.k,
                cfg.k_multiple(),
                cfg.copy_bits
            ));
        }
        if p.k > MAX_K {
            return Err(format!(
                "K = {} is above {MAX_K}, the widest row its global tiles index",
                p.k
            ));
        }
        let limit = 1u64 << 32;
        for (what, rows, cols) in [
            ("M x K", p.m, p.k),
            ("N x K", p.n, p.k),
            ("M x N", p.m, p.n),
        ] {
            if (rows as u64).saturating_mul(cols as u64) >= limit {
                return Err(format!(
                    "{what} = {rows} x {cols} elements reach 2^32, and it forms element offsets in 32 bits"
                ));
            }
        }
        let max_m = u64::from(MAX_GRID_Y) * u64::from(cfg.tile_m);
        if p.m as u64 > max_m {
            return Err(format!(
                "M = {} needs more than {MAX_GRID_Y} blocks along grid y; it handles M up to {max_m}",
                p.m
            ));
        }
        Ok(cfg)
    }
}

/// A configuration is the multistage program's plan: its kernel is [`multistage_kernel`], named
/// [`MultistageConfig::name`] (which spells every field, so it is the key too).
// SAFETY: the multistage kernel bounds every load of A and B and every store of D by m, n and k
// (its tiles past them read zeros and store nothing), and writes only D.
unsafe impl ProgramPlan for MultistageConfig {
    fn program(&self) -> &'static str {
        "multistage"
    }

    fn key(&self) -> String {
        self.name()
    }

    /// `multistage f16 (f32 acc, 128x256x32 tile, 4 stages, 2x4 warps, rasterized, stmatrix
    /// epilogue)`: the copy width where it is not 128 bits.
    fn describe(&self) -> String {
        format!(
            "multistage {}{}{})",
            self.describe_shape(),
            if self.raster_log2 > 0 {
                ", rasterized"
            } else {
                ""
            },
            match self.epilogue {
                Epilogue::Registers => "",
                Epilogue::Smem => ", smem epilogue",
                Epilogue::Stmatrix => ", stmatrix epilogue",
            },
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        multistage_kernel(self).map_err(|e| match e {
            MultistageError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("multistage", other),
        })
    }

    fn entry(&self) -> String {
        self.name()
    }

    /// cp.async copies of `copy_bits` read aligned pieces of A's and B's rows.
    fn operand_alignment(&self) -> u64 {
        u64::from(self.copy_bits / 8)
    }

    fn launch(&self, m: u32, n: u32, _k: u32, _device: &Device) -> LaunchPlan {
        use GemmArg::*;
        LaunchPlan {
            grid: self.grid(m, n),
            block: self.block(),
            cluster: None,
            dynamic_smem_bytes: self.smem_bytes(),
            args: vec![D, A, B, M, N, K],
            workspace: 0,
            then: None,
            programmatic: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{check, Accum, BufferLens, Config, GemmDtype, KernelChoice};

    fn problem(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            acc: Accum::F32,
            kernel: KernelChoice::Program(&Multistage),
            config: None,
        }
    }

    fn plan(p: &Problem, target: Target) -> Result<MultistageConfig, String> {
        let lens = BufferLens::for_shape(p.m, p.n, p.k).unwrap();
        let device = Device {
            target,
            ..Device::h200()
        };
        check(p, lens, &device)
            .map(|plan| *plan.downcast_ref::<MultistageConfig>().unwrap())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn multistage_refuses_what_it_cannot_run() {
        // A named configuration keeps its 16-byte copies: K = 13 is refused, not narrowed.
        let p = Problem {
            config: Config::parse(KernelChoice::Program(&Multistage), "tuned").ok(),
            ..problem(100, 37, 13)
        };
        assert_eq!(
            plan(&p, Target::Sm90a).unwrap_err(),
            "the multistage kernel cannot run this problem: K = 13 is not a multiple of 8, and its \
             128-bit cp.async copies need rows of A and B aligned to them; the reference \
             configuration (no --config) takes any K"
        );
        let e = plan(&problem(8, 1 << 20, 1 << 12), Target::Sm90a).unwrap_err();
        assert!(
            e.contains("B spans 4294967296 elements, 2^32 or more"),
            "{e}"
        );
        let e = plan(&problem(1, 1, MAX_K + 8), Target::Sm90a).unwrap_err();
        assert!(e.contains("the widest row its global tiles index"), "{e}");
    }

    #[test]
    fn the_default_follows_the_shape_and_the_target() {
        // The copy width follows K.
        let width = |k| plan(&problem(64, 64, k), Target::Sm90a).unwrap().copy_bits;
        assert_eq!(
            [width(64), width(68), width(66), width(65)],
            [128, 64, 32, 16]
        );
        // f16 accumulation with K not a multiple of 8: narrower copies.
        let p = Problem {
            acc: Accum::F16,
            ..problem(64, 64, 12)
        };
        assert_eq!(
            plan(&p, Target::Sm90a),
            Ok(MultistageConfig::reference_for_k(
                GemmDtype::F16,
                Accum::F16,
                12
            ))
        );
        // K = 4096: the tuned tiles, with stmatrix on sm_90a and st.shared on sm_80.
        let big = problem(4096, 4096, 4096);
        let tuned = Tune::TUNED.config(GemmDtype::F16, Accum::F32).unwrap();
        assert_eq!(plan(&big, Target::Sm90a), Ok(tuned));
        let sm80 = plan(&big, Target::Sm80).unwrap();
        assert_eq!(
            (sm80, sm80.epilogue),
            (tuned.for_target(Target::Sm80), Epilogue::Smem)
        );
        // A named configuration is what runs.
        let p = Problem {
            config: Config::parse(KernelChoice::Program(&Multistage), "256x128x32s4_r2_se").ok(),
            ..problem(64, 64, 16)
        };
        assert_eq!(
            plan(&p, Target::Sm80),
            Ok("256x128x32s4_r2_se"
                .parse::<Tune>()
                .unwrap()
                .config(GemmDtype::F16, Accum::F32)
                .unwrap())
        );
    }

    /// The descriptions and kernel names are the ones `rute gemm` printed before the seam.
    #[test]
    fn descriptions_and_keys() {
        let tuned = Tune::TUNED.config(GemmDtype::F16, Accum::F32).unwrap();
        assert_eq!(
            tuned.describe(),
            "multistage f16 (f32 acc, 128x256x32 tile, 4 stages, 2x4 warps, rasterized, stmatrix epilogue)"
        );
        assert_eq!(
            (tuned.key(), tuned.entry()),
            (
                "multistage_f16_f32acc_128x256x32s4_w2x4_r2_stsm".into(),
                "multistage_f16_f32acc_128x256x32s4_w2x4_r2_stsm".into()
            )
        );
        let odd = MultistageConfig::reference_for_k(GemmDtype::Bf16, Accum::F32, 13);
        assert_eq!(
            odd.describe(),
            "multistage bf16 (f32 acc, 64x64x32 tile, 4 stages, 2x2 warps, 16-bit copies)"
        );
        assert_eq!(odd.operand_alignment(), 2);
        let l = odd.launch(100, 70, 13, &Device::h200());
        assert_eq!((l.grid, l.block, l.cluster), ((2, 2, 1), (128, 1, 1), None));
        assert_eq!(l.dynamic_smem_bytes, odd.smem_bytes());
    }
}
