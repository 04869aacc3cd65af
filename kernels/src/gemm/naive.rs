//! The baseline GEMM: one thread per element of D, f32 accumulation, any M, N and K; behind the
//! seam, [`Naive`] (the program) and [`NaivePlan`] (its plan for one element type).

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use dsl_macros::kernel;
use half::{bf16, f16};

use super::{
    Accum, Device, GemmArg, GemmDtype, GemmElem, GemmProgram, KernelBuildError, LaunchPlan,
    NoSchedule, Plan, Problem, ProgramPlan,
};

/// Threads per block along N (x) and along M (y).
pub const BLOCK: (u32, u32) = (16, 16);

/// The targets [`gemm_naive`] runs on: plain loads and stores, `cvt` between f32 and f16/bf16
/// (bf16 conversions need sm_80) and `fma.rn.f32`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// Most blocks a grid may have along y (the device limit on every CUDA GPU): rows of D are
/// spread over `grid.y`, so M may be at most `MAX_GRID_Y * BLOCK.1`.
pub const MAX_GRID_Y: u32 = 65535;

/// `D = A * B^T`: A is `m x k`, B is `n x k` (both row-major, K the contiguous axis), D is
/// `m x n` row-major, all of element type `T`.
///
/// Thread `(x, y)` of block `(bx, by)` computes `D[row][col]` for `row = by*16 + y`,
/// `col = bx*16 + x`: it walks K once, converting each `A[row][kk]` and `B[col][kk]` to f32 and
/// accumulating with `fma.rn.f32`, and stores the sum rounded to `T` (round to nearest even).
/// Threads outside D do nothing, so any `m`, `n`, `k` work (`k == 0` writes zeros). Offsets are
/// formed in 64 bits, so `m * k`, `n * k` and `m * n` may exceed `2^32`.
///
/// Launch with grid `(ceil(n/16), ceil(m/16), 1)` and block `(16, 16, 1)`, exactly (`.reqntid`).
#[kernel]
pub fn gemm_naive<T: GemmElem>(
    k_: &KernelBuilder,
    d: GlobalPtr<T>,
    a: GlobalPtr<T>,
    b: GlobalPtr<T>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) {
    k_.require_threads(BLOCK.0, BLOCK.1, 1);
    let col = block_idx_x() * BLOCK.0 + thread_idx_x();
    let row = block_idx_y() * BLOCK.1 + thread_idx_y();
    if row.lt(m) & col.lt(n) {
        let k64 = k.cast::<u64>();
        let a_row = a + row.cast::<u64>() * k64;
        let b_row = b + col.cast::<u64>() * k64;
        let mut acc = Var::konst(0.0f32).fresh();
        for kk in 0u32..k {
            let x = a_row.load_at(kk).cast::<f32>();
            let y = b_row.load_at(kk).cast::<f32>();
            acc = x.mul_add(y, acc);
        }
        d.store_at(
            row.cast::<u64>() * n.cast::<u64>() + col.cast::<u64>(),
            acc.cast::<T>(),
        );
    }
}

/// The registry's configuration: f16 in and out.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    gemm_naive::<f16>()
}

/// The naive program: [`gemm_naive`] for any shape and either element type, f32 accumulation
/// only; `auto`'s last resort.
#[derive(Debug, Clone, Copy, Default)]
pub struct Naive;

impl GemmProgram for Naive {
    type Schedule = NoSchedule;

    fn name(&self) -> &'static str {
        "naive"
    }

    fn summary(&self) -> &'static str {
        "one thread per element of D, f32 sum, any M, N and K (M up to 1048560); the fallback"
    }

    fn config_syntax(&self) -> &'static str {
        "none: it has no configurations"
    }

    fn plan(&self, p: &Problem, device: &Device, _: Option<&NoSchedule>) -> Result<Plan, String> {
        let target = device.target;
        if p.acc != Accum::F32 {
            return Err(format!(
                "it accumulates in f32 only, and {} accumulation was asked for",
                p.acc
            ));
        }
        if !TARGETS.contains(&target) {
            return Err(format!("it runs on sm_80 and newer, not {target}"));
        }
        let max_m = u64::from(MAX_GRID_Y) * u64::from(BLOCK.1);
        if p.m as u64 > max_m {
            return Err(format!(
                "M = {} needs more than {MAX_GRID_Y} blocks along grid y; it handles M up to {max_m}",
                p.m
            ));
        }
        Ok(Plan::new(NaivePlan { dtype: p.dtype }))
    }
}

/// [`gemm_naive`] for one element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NaivePlan {
    /// Element type of A, B and D.
    pub dtype: GemmDtype,
}

// SAFETY: gemm_naive's threads each compute one element of D below (m, n), reading only rows of
// A and B below m, n and k, on the grid `launch` covers D with.
unsafe impl ProgramPlan for NaivePlan {
    fn program(&self) -> &'static str {
        "naive"
    }

    fn key(&self) -> String {
        format!("gemm_naive_{}", self.dtype)
    }

    fn describe(&self) -> String {
        format!("naive {} (f32 acc)", self.dtype)
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        Ok(match self.dtype {
            GemmDtype::F16 => gemm_naive::<f16>()?,
            GemmDtype::Bf16 => gemm_naive::<bf16>()?,
        })
    }

    fn entry(&self) -> String {
        "gemm_naive".to_string()
    }

    fn operand_alignment(&self) -> u64 {
        2
    }

    fn launch(&self, m: u32, n: u32, _k: u32, _device: &Device) -> LaunchPlan {
        use GemmArg::*;
        LaunchPlan {
            grid: (n.div_ceil(BLOCK.0), m.div_ceil(BLOCK.1), 1),
            block: (BLOCK.0, BLOCK.1, 1),
            cluster: None,
            dynamic_smem_bytes: 0,
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
    use crate::gemm::{check, BufferLens, KernelChoice};

    fn sm80() -> Device {
        Device::unknown(Target::Sm80)
    }

    #[test]
    fn naive_refuses_f16_accumulation_and_too_many_rows() {
        let problem = |m: usize, acc| Problem {
            m,
            n: 1,
            k: 1,
            dtype: GemmDtype::F16,
            acc,
            kernel: KernelChoice::Program(&Naive),
            config: None,
        };
        let lens = |m| BufferLens::for_shape(m, 1, 1).unwrap();
        let e = check(&problem(64, Accum::F16), lens(64), &sm80()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the naive kernel cannot run this problem: it accumulates in f32 only, and f16 accumulation was asked for"
        );
        // 65535 * 16 rows is the last M the naive grid covers.
        let max_m = 65535 * 16;
        let plan = check(&problem(max_m, Accum::F32), lens(max_m), &sm80()).unwrap();
        assert_eq!(
            plan,
            Plan::new(NaivePlan {
                dtype: GemmDtype::F16
            })
        );
        let e = check(&problem(max_m + 1, Accum::F32), lens(max_m + 1), &sm80()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the naive kernel cannot run this problem: M = 1048561 needs more than 65535 blocks along grid y; it handles M up to 1048560"
        );
    }

    /// The grid covers D exactly once: every element falls in one block, no block is empty; the
    /// arguments are the kernel's parameters.
    #[test]
    fn naive_grid_covers_the_output() {
        for (m, n) in [(1u32, 1u32), (16, 16), (17, 33), (81920, 256), (1000, 1)] {
            let s = NaivePlan {
                dtype: GemmDtype::F16,
            }
            .launch(m, n, 7, &Device::h200());
            let (bx, by) = (s.block.0, s.block.1);
            assert!(u64::from(s.grid.0 * bx) >= u64::from(n) && (s.grid.0 - 1) * bx < n);
            assert!(u64::from(s.grid.1 * by) >= u64::from(m) && (s.grid.1 - 1) * by < m);
            assert_eq!((s.grid.2, s.block.2, s.dynamic_smem_bytes), (1, 1, 0));
            assert_eq!(s.cluster, None);
            assert_eq!(s.args.len(), gemm_naive::<f16>().unwrap().params.len());
        }
    }

    /// Loads of the element type widened to f32, one fma per k step, one rounded store, and the
    /// exact block the launch uses.
    #[test]
    fn ptx_converts_and_accumulates_in_f32() {
        let cases = [
            (gemm_naive::<f16>(), "cvt.f32.f16", "cvt.rn.f16.f32"),
            (gemm_naive::<bf16>(), "cvt.f32.bf16", "cvt.rn.bf16.f32"),
        ];
        for (kernel, widen, narrow) in cases {
            let kernel = kernel.unwrap();
            assert_eq!(kernel.name, "gemm_naive");
            assert_eq!(kernel.params.len(), 6);
            let ptx = codegen_ptx::emit(&kernel, Target::Sm80).unwrap();
            assert_eq!(ptx.matches(widen).count(), 2, "{ptx}");
            assert_eq!(ptx.matches(narrow).count(), 1, "{ptx}");
            assert_eq!(ptx.matches("fma.rn.f32").count(), 1, "{ptx}");
            assert_eq!(ptx.matches("ld.global.b16").count(), 2, "{ptx}");
            assert_eq!(ptx.matches("st.global.b16").count(), 1, "{ptx}");
            assert!(ptx.contains(".reqntid 16, 16, 1"), "{ptx}");
        }
    }
}
