//! The GEMM of every [`Form`]: one thread per element of D, any operand majors, leading
//! dimensions and batch strides, every epilogue and output type, f32 accumulation, any M, N and
//! K. Slow (it reads A and B once per element of D, as the naive kernel does), and correct for
//! whatever the faster programs refuse: `auto`'s last resort for a form, so that a call rute's
//! other programs do not cover still runs a rute kernel. The program: [`Strided`].
//!
//! Each operand is addressed through its strides, passed at launch: element `(i, kk)` of A is at
//! `i * a_row + kk * a_k` (K-major: `(lda, 1)`; MN-major: `(1, lda)`), and so for B; C, D and the
//! residual are row-major with their leading dimensions; GEMM `z` of a batch adds `z` times each
//! buffer's batch stride. Offsets are 64-bit. The grid walks rows and batches in strides when
//! they pass the grid's limits, so no shape is refused for its size.

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use dsl_macros::kernel;
use half::{bf16, f16};

use super::epilogue::{Bias, DeviceEpilogue, Epilogue};
use super::layout::{Form, OutType};
use super::{
    Accum, Device, GemmArg, GemmDtype, GemmElem, GemmProgram, KernelBuildError, LaunchPlan,
    NoSchedule, Plan, Problem, ProgramPlan,
};

/// Threads per block along D's columns (x) and rows (y).
pub const BLOCK: (u32, u32) = (16, 16);

/// The most blocks a grid takes along y and z (every CUDA GPU's limit); rows and batches past
/// them are walked in strides.
pub const MAX_GRID_YZ: u32 = 65535;

/// The targets it runs on (plain loads and stores, `cvt` to bf16: sm_80).
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// An element type D may have: f16, bf16 or f32 (C, the bias and the residual are read as it).
pub trait OutElem: DeviceType + sealed::Sealed {
    /// Its [`OutType`].
    const OUT: OutType;
}

impl OutElem for f16 {
    const OUT: OutType = OutType::F16;
}
impl OutElem for bf16 {
    const OUT: OutType = OutType::Bf16;
}
impl OutElem for f32 {
    const OUT: OutType = OutType::F32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for f32 {}
}

/// `D = epilogue(A B^T)` for every form: see the module's docs. Parameters, in order: `d`, `a`,
/// `b`, `c`, `bias`, `residual` (pointers; those the epilogue does not read may be anything),
/// `m`, `n` (the sum's columns; D has half of them for a gated epilogue), `k`, A's and B's
/// strides per row and per k, `ldc`, `ldd`, `ldr`, the batch's count, its strides of A, B, C, D
/// and the residual (`u64`), `alpha` and `beta` (`f32`).
///
/// Launch with block `(16, 16, 1)` and a grid covering D's columns along x; rows and batches
/// along y and z up to 65535 each (the kernel strides over the rest).
#[kernel]
pub fn gemm_strided<T: GemmElem, O: OutElem>(
    #[host] epilogue: &Epilogue,
    kb: &KernelBuilder,
    d: GlobalPtr<O>,
    a: GlobalPtr<T>,
    b: GlobalPtr<T>,
    c: GlobalPtr<O>,
    bias: GlobalPtr<O>,
    residual: GlobalPtr<O>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
    strides: StridedStrides,
    alpha: Var<f32>,
    beta: Var<f32>,
) {
    kb.require_threads(BLOCK.0, BLOCK.1, 1);
    let epi = DeviceEpilogue {
        epilogue,
        alpha,
        beta,
    };
    let gated = epilogue.is_gated();
    let cols = if gated { n >> 1u32 } else { n };
    let col = block_idx_x() * BLOCK.0 + thread_idx_x();
    let s = strides;
    let wide = |v: Var<u32>| v.cast::<u64>();
    // Sum of row `row` of A with row `j` of B, from the batch's bases.
    let sum = |a0: GlobalPtr<T>, b0: GlobalPtr<T>, j: Var<u32>| {
        let b_row = b0 + wide(j) * wide(s.b_row);
        let mut acc = Var::konst(0.0f32).fresh();
        for kk in 0u32..k {
            let x = a0.load_at(wide(kk) * wide(s.a_k)).cast::<f32>();
            let y = b_row.load_at(wide(kk) * wide(s.b_k)).cast::<f32>();
            acc = x.mul_add(y, acc);
        }
        acc
    };
    if col.lt(cols) {
        let first_row = block_idx_y() * BLOCK.1 + thread_idx_y();
        let row_step = grid_dim_y() * BLOCK.1;
        for z in (block_idx_z()..s.batch).step_by(grid_dim_z()) {
            let zb = wide(z);
            let (a_z, b_z) = (a + zb * s.batch_a, b + zb * s.batch_b);
            for row in (first_row..m).step_by(row_step) {
                let a_row = a_z + wide(row) * wide(s.a_row);
                let at = |ld: Var<u32>| wide(row) * wide(ld) + wide(col);
                let bias_at = |j: Var<u32>| match epilogue.bias() {
                    Some(Bias::PerRow) => bias.load_at(row).cast::<f32>(),
                    _ => bias.load_at(j).cast::<f32>(),
                };
                let value = if gated {
                    let (gj, uj) = (col << 1u32, (col << 1u32) + 1u32);
                    let gate = epi.linear(sum(a_row, b_z, gj), || Var::konst(0.0), || bias_at(gj));
                    let up = epi.linear(sum(a_row, b_z, uj), || Var::konst(0.0), || bias_at(uj));
                    epi.gate(gate, up)
                } else {
                    let acc = sum(a_row, b_z, col);
                    let c_z = c + zb * s.batch_c;
                    let x = epi.linear(
                        acc,
                        || c_z.load_at(at(s.ldc)).cast::<f32>(),
                        || bias_at(col),
                    );
                    epi.map(x, row, col)
                };
                let r_z = residual + zb * s.batch_r;
                let value = epi.residual(value, || r_z.load_at(at(s.ldr)).cast::<f32>());
                let d_z = d + zb * s.batch_d;
                d_z.store_at(at(s.ldd), value.cast::<O>());
            }
        }
    }
}

/// The strides [`gemm_strided`] takes, in its parameter order: A's and B's per row and per k,
/// the leading dimensions of C, D and the residual, the batch's count and its strides.
#[derive(Clone, Copy)]
pub struct StridedStrides {
    /// A's stride per row.
    pub a_row: Var<u32>,
    /// A's stride per k.
    pub a_k: Var<u32>,
    /// B's stride per row.
    pub b_row: Var<u32>,
    /// B's stride per k.
    pub b_k: Var<u32>,
    /// C's leading dimension.
    pub ldc: Var<u32>,
    /// D's leading dimension.
    pub ldd: Var<u32>,
    /// The residual's leading dimension.
    pub ldr: Var<u32>,
    /// GEMMs in the batch.
    pub batch: Var<u32>,
    /// A's batch stride.
    pub batch_a: Var<u64>,
    /// B's batch stride.
    pub batch_b: Var<u64>,
    /// C's batch stride.
    pub batch_c: Var<u64>,
    /// D's batch stride.
    pub batch_d: Var<u64>,
    /// The residual's batch stride.
    pub batch_r: Var<u64>,
}

impl dsl_core::kernel::macro_support::KernelParam for StridedStrides {
    /// One parameter per field, in order, each named as the field.
    fn declare(kb: &KernelBuilder, _name: &str) -> Self {
        let u32p = |name: &str| kb.param::<u32>(name);
        let u64p = |name: &str| kb.param::<u64>(name);
        StridedStrides {
            a_row: u32p("a_row"),
            a_k: u32p("a_k"),
            b_row: u32p("b_row"),
            b_k: u32p("b_k"),
            ldc: u32p("ldc"),
            ldd: u32p("ldd"),
            ldr: u32p("ldr"),
            batch: u32p("batch"),
            batch_a: u64p("batch_a"),
            batch_b: u64p("batch_b"),
            batch_c: u64p("batch_c"),
            batch_d: u64p("batch_d"),
            batch_r: u64p("batch_r"),
        }
    }
}

/// The largest leading dimension, row count or batch count the kernel's 32-bit parameters take.
pub const MAX_U32: usize = u32::MAX as usize;

/// The program of every form ([`gemm_strided`]): f32 accumulation, sm_80 and newer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Strided;

impl GemmProgram for Strided {
    type Schedule = NoSchedule;

    fn name(&self) -> &'static str {
        "strided"
    }

    fn summary(&self) -> &'static str {
        "one thread per element of D for every form: any operand majors, leading dimensions, \
         batches, epilogues and output types, f32 sum; the fallback of the fallbacks"
    }

    fn config_syntax(&self) -> &'static str {
        "none: it has no configurations"
    }

    fn runs_on(&self, target: Target) -> bool {
        TARGETS.contains(&target)
    }

    fn plan(&self, p: &Problem, device: &Device, _: Option<&NoSchedule>) -> Result<Plan, String> {
        self.plan_form(p, &Form::packed(p.m, p.n, p.k), device, None)
    }

    fn plan_form(
        &self,
        p: &Problem,
        form: &Form,
        device: &Device,
        _: Option<&NoSchedule>,
    ) -> Result<Plan, String> {
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32, not {}", p.acc));
        }
        if !TARGETS.contains(&device.target) {
            return Err(format!("it runs on sm_80 and newer, not {}", device.target));
        }
        let too_wide = [
            ("lda", form.a.ld),
            ("ldb", form.b.ld),
            ("ldc", form.ldc),
            ("ldd", form.ldd),
            ("ldr", form.ldr),
            ("the batch count", form.batch.count),
        ]
        .into_iter()
        .find(|(_, v)| *v > MAX_U32);
        if let Some((what, v)) = too_wide {
            return Err(format!(
                "{what} = {v} is above {MAX_U32}, and its parameters are 32-bit"
            ));
        }
        Ok(Plan::new(StridedPlan {
            dtype: p.dtype,
            out: form.out_type(p.dtype),
            epilogue: form.epilogue,
        }))
    }
}

/// [`gemm_strided`] for one input type, output type and epilogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StridedPlan {
    /// A and B's element type.
    pub dtype: GemmDtype,
    /// D's.
    pub out: OutType,
    /// The epilogue.
    pub epilogue: Epilogue,
}

impl StridedPlan {
    /// The kernel's name: `gemm_strided_{dtype}_{out}_{epilogue tag}`.
    pub fn name(&self) -> String {
        format!(
            "gemm_strided_{}_{}_{}",
            self.dtype,
            self.out,
            self.epilogue.tag()
        )
    }

    /// The launch's grid for `rows x cols` of D and `batch` GEMMs.
    pub fn grid(rows: u32, cols: u32, batch: u32) -> (u32, u32, u32) {
        (
            cols.div_ceil(BLOCK.0).max(1),
            rows.div_ceil(BLOCK.1).clamp(1, MAX_GRID_YZ),
            batch.clamp(1, MAX_GRID_YZ),
        )
    }
}

/// The kernel of `plan`: `gemm_strided::<T, O>` for its types.
fn strided_kernel(plan: &StridedPlan) -> Result<Kernel, BuildError> {
    let e = &plan.epilogue;
    let mut kernel = match (plan.dtype, plan.out) {
        (GemmDtype::F16, OutType::F16) => gemm_strided::<f16, f16>(e)?,
        (GemmDtype::F16, OutType::Bf16) => gemm_strided::<f16, bf16>(e)?,
        (GemmDtype::F16, OutType::F32) => gemm_strided::<f16, f32>(e)?,
        (GemmDtype::Bf16, OutType::F16) => gemm_strided::<bf16, f16>(e)?,
        (GemmDtype::Bf16, OutType::Bf16) => gemm_strided::<bf16, bf16>(e)?,
        (GemmDtype::Bf16, OutType::F32) => gemm_strided::<bf16, f32>(e)?,
    };
    kernel.name = plan.name();
    Ok(kernel)
}

// SAFETY: each thread reads A and B at (row, kk) and (j, kk) for row < m, j < n and kk < k of
// batch z < count through the form's strides, C and the residual at (row, col) of D's extents
// (only where the epilogue reads them), the bias below m or n, and writes D at (row, col) for
// col below D's columns: all inside the spans `check_form` checked each buffer against.
unsafe impl ProgramPlan for StridedPlan {
    fn program(&self) -> &'static str {
        "strided"
    }

    fn key(&self) -> String {
        self.name()
    }

    fn describe(&self) -> String {
        format!(
            "strided {} -> {} (f32 acc, {})",
            self.dtype,
            self.out,
            self.epilogue.describe()
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        Ok(strided_kernel(self)?)
    }

    fn entry(&self) -> String {
        self.name()
    }

    fn operand_alignment(&self) -> u64 {
        2
    }

    fn output_alignment(&self) -> u64 {
        self.out.bytes() as u64
    }

    fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan {
        self.launch_form(
            m,
            n,
            k,
            &Form::packed(m as usize, n as usize, k as usize),
            device,
        )
    }

    fn launch_form(&self, m: u32, n: u32, _k: u32, form: &Form, _device: &Device) -> LaunchPlan {
        use GemmArg::*;
        let (ar, ak) = form.a.strides();
        let (br, bk) = form.b.strides();
        // plan_form bounded every leading dimension and the count by u32::MAX.
        let u = |v: usize| U32(u32::try_from(v).unwrap_or(u32::MAX));
        let w = |v: usize| U64(v as u64);
        let cols = form.out_cols(n as usize) as u32;
        let batch = form.batch;
        LaunchPlan::new(
            StridedPlan::grid(m, cols, u32::try_from(batch.count).unwrap_or(u32::MAX)),
            (BLOCK.0, BLOCK.1, 1),
            vec![
                D,
                A,
                B,
                C,
                Bias,
                Residual,
                M,
                N,
                K,
                u(ar),
                u(ak),
                u(br),
                u(bk),
                u(form.ldc),
                u(form.ldd),
                u(form.ldr),
                u(batch.count),
                w(batch.a),
                w(batch.b),
                w(batch.c),
                w(batch.d),
                w(batch.residual),
                F32(form.alpha),
                F32(form.beta),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_epilogue_and_type_builds_and_names_its_parameters() {
        use crate::gemm::epilogue::{Activation, Elementwise, Map, Residual, Source};
        let epilogues = [
            Epilogue::Plain,
            Epilogue::SWIGLU,
            Epilogue::bias_act(Activation::GeluErf),
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerRow),
                map: Map::Activation(Activation::Silu),
                residual: Residual::Add,
            }),
        ];
        for epilogue in epilogues {
            for out in [OutType::F16, OutType::Bf16, OutType::F32] {
                let plan = StridedPlan {
                    dtype: GemmDtype::Bf16,
                    out,
                    epilogue,
                };
                let k = plan.kernel().unwrap();
                let launch = plan.launch(100, 64, 7, &Device::h200());
                assert_eq!(k.params.len(), launch.args.len(), "{}", plan.name());
                let ptx = codegen_ptx::emit(&k, Target::Sm80).unwrap();
                assert!(ptx.contains(&format!(".entry {}(", plan.name())), "{ptx}");
            }
        }
    }

    #[test]
    fn the_grid_strides_past_its_limits() {
        assert_eq!(StridedPlan::grid(100, 70, 1), (5, 7, 1));
        assert_eq!(StridedPlan::grid(1 << 24, 1, 1 << 20), (1, 65535, 65535));
        assert_eq!(StridedPlan::grid(1, 0, 0), (1, 1, 1));
    }
}
