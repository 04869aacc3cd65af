//! The warp-specialized Hopper program behind the GEMM seam: [`HopperWs`] takes f16 and bf16
//! problems with an f32 sum on sm_90a whose rows TMA can address, picks a [`HopperConfig`] (the
//! default by shape, or `--config`), and its plan ([`HopperGemm`]) launches the persistent kernel
//! split along K where the output's tiles do not fill the device, then the reduction.

use dsl_core::ir::{Kernel, Target};

use super::reduce::{reduce_blocks, REDUCE_THREADS};
use super::{
    entry_name, hopper_kernel, launch, reduce_kernel, split_k, tile_order, workspace_elems,
    HopperConfig, HopperError, TARGETS,
};
use crate::gemm::{
    Accum, GemmArg, GemmDtype, GemmOperand, GemmProgram, KernelBuildError, LaunchPlan, Plan,
    Problem, ProgramPlan,
};

/// The warp-specialized TMA + `wgmma` program (see [`super`]).
///
/// Without a configuration: [`HopperWs::default_config`]. Refused (so that `auto` falls back
/// to the multistage program, saying why): targets other than sm_90a, an f16 sum, and K or N
/// that are not multiples of 8 (TMA addresses rows of 16 bytes).
#[derive(Debug, Clone, Copy, Default)]
pub struct HopperWs;

/// Largest M, N or K the program takes: the kernel's tile arithmetic is 32-bit.
pub const MAX_DIM: usize = 1 << 30;

impl GemmProgram for HopperWs {
    fn name(&self) -> &'static str {
        "hopper_ws"
    }

    fn summary(&self) -> &'static str {
        "warp-specialized TMA + wgmma (sm_90a): a producer warp and two consumer warpgroups, \
         persistent over the tiles, split-K for few tiles; f16 or bf16 with an f32 sum, N and K \
         multiples of 8"
    }

    fn config_syntax(&self) -> &'static str {
        "MxNxKsS[_cXxY][_h|_gG][_f1]: the block tile (M 128 or 256, N a multiple of 8 up to \
         256, K 64), S stages, blocks per cluster along M and N (1x1, 2x1 or 1x2, TMA multicast \
         of the shared operand), Hilbert tile order (_h) or groups of G tile rows (default 8), \
         one wgmma batch left in flight (_f1); e.g. 128x256x64s3_c2x1; or `wide` \
         (128x256x64s3). Without it: 128x256x64s3 where its tiles fill the device, 128x128x64s5 \
         where they do not"
    }

    fn runs_on(&self, target: Target) -> bool {
        TARGETS.contains(&target)
    }

    fn check_config(&self, config: &str) -> Result<(), String> {
        config.parse::<HopperConfig>().map(drop)
    }

    fn plan(&self, p: &Problem, target: Target, config: Option<&str>) -> Result<Plan, String> {
        if !TARGETS.contains(&target) {
            return Err(format!("it runs on sm_90a only, not {target}"));
        }
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32, not {}", p.acc));
        }
        for (what, v) in [("K", p.k), ("N", p.n)] {
            if !v.is_multiple_of(8) {
                return Err(format!(
                    "{what} = {v} is not a multiple of 8, and TMA needs rows of 16 bytes"
                ));
            }
        }
        for (what, v) in [("M", p.m), ("N", p.n), ("K", p.k)] {
            if v > MAX_DIM {
                return Err(format!("{what} = {v} is above {MAX_DIM}"));
            }
        }
        let cfg = match config {
            None => HopperWs::default_config(p.m, p.n, p.k),
            Some(spec) => spec.parse::<HopperConfig>()?,
        };
        Ok(Plan::new(HopperGemm {
            cfg,
            dtype: p.dtype,
        }))
    }
}

impl HopperWs {
    /// The configuration for `m x n x k` without `--config`, for the H200's 132 SMs:
    ///
    /// - decode shapes (M up to 64): A and B swapped (`_t`), the weights in 128-row tiles and M
    ///   rounded up to 16 as the tile's N, 8 stages;
    /// - few rows (up to 128) over a long K (12288 and more) whose 128x128 tiles leave three
    ///   quarters of the device idle: 128x128x64s5, which [`split_k`] splits;
    /// - otherwise the tile of 128 x {256, 192, 128, 64} (3, 4, 5 and 8 stages) whose waves of
    ///   tiles cost least: waves times the tile's area over how well its `wgmma` runs (1, 0.97,
    ///   0.93, 0.8 of the 256-wide one's rate, measured on the H200). Wide tiles win where
    ///   there are many; narrower ones where 128x256 tiles would leave SMs idle or a last wave
    ///   nearly empty.
    pub fn default_config(m: usize, n: usize, k: usize) -> HopperConfig {
        const SMS: usize = 132;
        if m <= 64 {
            let bn = m.div_ceil(16) * 16;
            return format!("128x{bn}x64s8_t")
                .parse()
                .expect("a valid spelling");
        }
        // A long K over few rows: 128x128 tiles split along K (split_k takes 4 ways of 4096
        // columns' tiles) beat every unsplit tile (0.97 of cuBLAS against 0.79 at 128 x 4096 x
        // 14336, measured).
        if m <= 128 && k >= 12288 && m.div_ceil(128) * n.div_ceil(128) * 4 < SMS {
            return "128x128x64s5".parse().expect("a valid spelling");
        }
        let candidates = [
            (256usize, 3, 1.0f64),
            (192, 4, 0.97),
            (128, 5, 0.93),
            (64, 8, 0.8),
        ];
        let cost = |&(bn, _, efficiency): &(usize, u32, f64)| {
            let tiles = m.div_ceil(128) * n.div_ceil(bn);
            tiles.div_ceil(SMS) as f64 * (128 * bn) as f64 / efficiency
        };
        let best = candidates
            .iter()
            .min_by(|a, b| cost(a).total_cmp(&cost(b)))
            .expect("candidates");
        format!("128x{}x64s{}", best.0, best.1)
            .parse()
            .expect("a valid spelling")
    }
}

/// The program's plan: a configuration and the element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopperGemm {
    /// The configuration.
    pub cfg: HopperConfig,
    /// A, B and D's element type.
    pub dtype: GemmDtype,
}

impl HopperGemm {
    /// Ways [`ProgramPlan::launch`] splits K for `m x n x k` on `sms` SMs: [`split_k`] with one
    /// cluster resident per `cluster size` SMs, fewer where the partial sums would not fit the
    /// kernel's 32-bit offsets.
    pub fn splits(&self, m: u32, n: u32, k: u32, sms: u32) -> u32 {
        let resident = sms / self.cfg.cluster_shape().size();
        let mut splits = split_k(&self.cfg, m, n, k, resident);
        while splits > 1 && workspace_elems(m, n, splits).is_none() {
            splits -= 1;
        }
        // Fewer ways than split_k chose may leave a split without k-tiles: even them out again.
        let k_tiles = k.div_ceil(self.cfg.tile.2);
        let per = k_tiles.div_ceil(splits.max(1)).max(1);
        k_tiles.div_ceil(per).max(1)
    }
}

impl ProgramPlan for HopperGemm {
    fn program(&self) -> &'static str {
        "hopper_ws"
    }

    fn key(&self) -> String {
        entry_name(&self.cfg, self.dtype)
    }

    /// `hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, grouped order, split-K by shape)`.
    fn describe(&self) -> String {
        let c = &self.cfg;
        let (m, n, k) = c.tile;
        let cluster = match c.cluster {
            (1, 1) => String::new(),
            (x, y) => format!(", {x}x{y} cluster"),
        };
        let order = match c.raster {
            dsl_core::pipeline::Raster::Hilbert => "Hilbert order".to_string(),
            dsl_core::pipeline::Raster::AlongM => "order along M".to_string(),
            dsl_core::pipeline::Raster::Grouped { group } => format!("groups of {group}"),
        };
        let in_flight = if c.in_flight > 0 {
            ", a wgmma batch in flight"
        } else {
            ""
        };
        let swap = if c.swap_ab { ", A and B swapped" } else { "" };
        format!(
            "hopper_ws {} (f32 acc, {m}x{n}x{k} tile, {} stages{cluster}, {order}{in_flight}{swap}, \
             split-K by shape)",
            self.dtype, c.stages
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        hopper_kernel(self.cfg, self.dtype).map_err(|e| match e {
            HopperError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("hopper_ws", other),
        })
    }

    fn entry(&self) -> String {
        entry_name(&self.cfg, self.dtype)
    }

    /// TMA reads global memory from 16-byte aligned addresses.
    fn operand_alignment(&self) -> u64 {
        16
    }

    /// And writes D through a TMA store.
    fn output_alignment(&self) -> u64 {
        16
    }

    fn launch(&self, m: u32, n: u32, k: u32, sms: u32) -> LaunchPlan {
        let plan = host_plan(self.cfg, self.dtype);
        let resident = sms / self.cfg.cluster_shape().size();
        // Swapped, the kernel's A is B and its M is N.
        let swap = self.cfg.swap_ab;
        let (km, kn) = if swap { (n, m) } else { (m, n) };
        let (ka, kb) = if swap {
            (GemmOperand::B, GemmOperand::A)
        } else {
            (GemmOperand::A, GemmOperand::B)
        };
        let splits = self.splits(km, kn, k, sms);
        let l = launch(&self.cfg, km, kn, splits, resident);
        let (mu, nu, ku) = (u64::from(km), u64::from(kn), u64::from(k));
        // plan() took N and K multiples of 8: every stride is a multiple of 16 bytes.
        let map =
            |operand, copy: &dsl_core::atom::tma::TmaCopy, dims: [u64; 2]| GemmArg::TensorMap {
                operand,
                descriptor: copy
                    .descriptor(&dims, &[dims[1], 1])
                    .expect("rows of 16-byte multiples"),
            };
        use GemmArg::*;
        // D's map: the kernel stores through it only unswapped and unsplit (m x n either way).
        let d_map = map(GemmOperand::D, &plan.tma_d, [u64::from(m), u64::from(n)]);
        let args = vec![
            map(ka, &plan.tma_a, [mu, ku]),
            map(kb, &plan.tma_b, [nu, ku]),
            d_map,
            U32(km),
            U32(kn),
            K,
            Table(std::sync::Arc::new(tile_order(&self.cfg, km, kn, splits))),
            U32(splits),
            Workspace,
        ];
        let through_partials = splits > 1 || swap;
        let then = through_partials.then(|| {
            let elems = m * n;
            Box::new(LaunchPlan::new(
                (reduce_blocks(elems), 1, 1),
                (REDUCE_THREADS, 1, 1),
                vec![Workspace, D, U32(elems), U32(splits)],
            ))
        });
        LaunchPlan {
            grid: l.grid,
            block: l.block,
            cluster: l.cluster,
            dynamic_smem_bytes: l.dynamic_smem_bytes,
            args,
            // Straight to D, the kernel never touches the workspace, but its parameter is a
            // buffer.
            workspace: if through_partials {
                workspace_elems(m, n, splits)
                    .unwrap_or(0)
                    .max(u64::from(m) * u64::from(n))
            } else {
                1
            },
            then,
        }
    }

    fn reduction(&self) -> Option<Result<Kernel, KernelBuildError>> {
        Some(reduce_kernel(self.dtype).map_err(KernelBuildError::Build))
    }
}

/// The host plan of `cfg` for `dtype` (its atoms, layouts and TMA copies: the layout algebra's
/// work, about a tenth of a millisecond), made once per process and shared.
fn host_plan(cfg: HopperConfig, dtype: GemmDtype) -> std::sync::Arc<super::HopperPlan> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Plans = Mutex<HashMap<(HopperConfig, GemmDtype), Arc<super::HopperPlan>>>;
    static PLANS: OnceLock<Plans> = OnceLock::new();
    let plans = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut plans = plans
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Arc::clone(plans.entry((cfg, dtype)).or_insert_with(|| {
        Arc::new(
            super::HopperPlan::new(cfg, dtype)
                .expect("the configuration passed HopperConfig::check when it was parsed"),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{check, BufferLens, KernelChoice};

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

    fn plan(p: &Problem, target: Target) -> Result<Plan, String> {
        let lens = BufferLens::for_shape(p.m, p.n, p.k).unwrap();
        check(p, lens, target).map_err(|e| e.to_string())
    }

    #[test]
    fn it_refuses_what_tma_and_wgmma_cannot_run() {
        let e = plan(&problem(64, 64, 64), Target::Sm80).unwrap_err();
        assert!(e.ends_with("it runs on sm_90a only, not sm_80"), "{e}");
        let e = plan(&problem(64, 64, 12), Target::Sm90a).unwrap_err();
        assert!(
            e.ends_with("K = 12 is not a multiple of 8, and TMA needs rows of 16 bytes"),
            "{e}"
        );
        let e = plan(&problem(64, 60, 64), Target::Sm90a).unwrap_err();
        assert!(e.contains("N = 60 is not a multiple of 8"), "{e}");
        let f16_sum = Problem {
            dtype: GemmDtype::F16,
            acc: Accum::F16,
            ..problem(64, 64, 64)
        };
        let e = plan(&f16_sum, Target::Sm90a).unwrap_err();
        assert!(e.ends_with("it sums in f32, not f16"), "{e}");
        let bad = Problem {
            config: Some("128x256x64s9".into()),
            ..problem(64, 64, 64)
        };
        let e = plan(&bad, Target::Sm90a).unwrap_err();
        assert!(e.contains("stages is 2..=8"), "{e}");
    }

    #[test]
    fn auto_takes_it_on_sm_90a_and_falls_back_with_the_reason() {
        let auto = |m, n, k| Problem {
            kernel: KernelChoice::Auto,
            ..problem(m, n, k)
        };
        let p = plan(&auto(4096, 4096, 4096), Target::Sm90a).unwrap();
        assert_eq!(p.program(), "hopper_ws");
        assert_eq!(
            p.describe(),
            "hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, groups of 8, split-K by shape)"
        );
        let odd = plan(&auto(100, 100, 100), Target::Sm90a).unwrap();
        assert_eq!(odd.program(), "multistage");
        assert!(
            odd.describe()
                .contains("the hopper_ws kernel cannot run it: K = 100 is not a multiple of 8"),
            "{}",
            odd.describe()
        );
        assert_eq!(
            plan(&auto(4096, 4096, 4096), Target::Sm80)
                .unwrap()
                .program(),
            "multistage"
        );
    }

    #[test]
    fn launches_split_where_the_tiles_are_few() {
        let p = plan(&problem(4096, 4096, 4096), Target::Sm90a).unwrap();
        let l = p.launch(4096, 4096, 4096, 132);
        assert_eq!(l.check(), Ok(()));
        assert_eq!(
            (l.grid, l.block, l.then.is_none()),
            ((132, 1, 1), (384, 1, 1), true)
        );
        assert_eq!(l.workspace, 1);
        assert_eq!(l.args[7], GemmArg::U32(1));
        let decode = plan(&problem(16, 4096, 4096), Target::Sm90a).unwrap();
        let h = decode.downcast_ref::<HopperGemm>().unwrap();
        assert_eq!(h.cfg.to_string(), "128x16x64s8_t");
        let l = decode.launch(16, 4096, 4096, 132);
        assert_eq!(l.check(), Ok(()));
        // Swapped: the kernel's A is B (4096 rows), its M and N are N and M.
        assert!(matches!(
            &l.args[0],
            GemmArg::TensorMap { operand: GemmOperand::B, descriptor } if descriptor.global_dims == [4096, 4096]
        ));
        assert_eq!(l.args[3..5], [GemmArg::U32(4096), GemmArg::U32(16)]);
        // 32 weight tiles, 64 k-tiles: 4 splits give 128 units.
        assert_eq!(l.args[7], GemmArg::U32(4));
        assert_eq!(l.workspace, 4 * 16 * 4096);
        let then = l.then.as_ref().unwrap();
        assert_eq!(then.args[2..], [GemmArg::U32(16 * 4096), GemmArg::U32(4)]);
        assert_eq!(then.grid, (64, 1, 1));
    }

    /// The defaults measured best on the H200 (skinny_lever_sweep in tests/tests/gpu_hopper.rs).
    #[test]
    fn default_tiles_follow_the_shape() {
        let cfg = |m, n, k| HopperWs::default_config(m, n, k).to_string();
        assert_eq!(cfg(16, 6144, 4096), "128x16x64s8_t");
        assert_eq!(cfg(64, 6144, 4096), "128x64x64s8_t");
        assert_eq!(cfg(33, 6144, 4096), "128x48x64s8_t");
        assert_eq!(cfg(128, 4096, 4096), "128x64x64s8");
        assert_eq!(cfg(512, 6144, 4096), "128x192x64s4");
        assert_eq!(cfg(512, 10240, 8192), "128x192x64s4");
        assert_eq!(cfg(4096, 4096, 4096), "128x256x64s3");
        assert_eq!(cfg(8192, 8192, 8192), "128x256x64s3");
        assert_eq!(cfg(128, 28672, 4096), "128x256x64s3");
        assert_eq!(cfg(128, 4096, 14336), "128x128x64s5");
        assert_eq!(cfg(128, 28672, 14336), "128x256x64s3");
    }

    #[test]
    fn splits_keep_the_partials_addressable_and_every_split_busy() {
        let h = HopperGemm {
            cfg: "128x128x64s5".parse().unwrap(),
            dtype: GemmDtype::F16,
        };
        // 16 x 2^26 outputs: 2^30 per split, so at most 3 splits fit 2^32.
        let s = h.splits(16, 1 << 26, 1 << 12, 1 << 20);
        assert!(s <= 3 && workspace_elems(16, 1 << 26, s).is_some(), "{s}");
        for k in [64, 72, 520, 1000, 4096, 14336] {
            let s = h.splits(16, 1024, k, 132);
            let kt = k.div_ceil(64);
            let per = kt.div_ceil(s);
            assert!(
                (s - 1) * per < kt,
                "k {k}: split {s} of {per} k-tiles is empty"
            );
        }
    }
}
