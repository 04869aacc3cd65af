//! The multistage program for forms past the packed one: operand majors (an MN-major operand
//! staged MN-major and read by `ldmatrix.trans`), leading dimensions (each operand copied as
//! wide as its rows' alignment allows), a batch (one launch, the batch along the grid's z),
//! every epilogue and D of f16, bf16 or f32 (stored from the registers, the epilogue applied to
//! them first: [`crate::gemm::fused`]).
//!
//! ```
//! use kernels::gemm::layout::{Form, Major, OperandLayout};
//! use kernels::gemm::{check_form, Accum, Device, FormLens, GemmDtype, KernelChoice, Problem};
//! use dsl_core::ir::Target;
//! // cuBLAS's NN as rute sees it: a K-major A, an N-major B, rows of 16 bytes.
//! let (m, n, k) = (256, 192, 64);
//! let form = Form { b: OperandLayout { major: Major::MN, ld: n }, ..Form::packed(m, n, k) };
//! let p = Problem { m, n, k, dtype: GemmDtype::F16, acc: Accum::F32,
//!                   kernel: KernelChoice::named("multistage").unwrap(), config: None };
//! let s = form.spans(m, n, k).unwrap();
//! let lens = FormLens { a: s.a, b: s.b, d: s.d, ..FormLens::default() };
//! let plan = check_form(&p, &form, lens, &Device::unknown(Target::Sm80)).unwrap();
//! assert_eq!(plan.describe(), "multistage f16 (f32 acc, 128x128x32 tile, 3 stages, 2x2 warps; A K-major, B MN-major; D = acc)");
//! ```

use dsl_core::ir::{Kernel, Target};

use super::{multistage_kernel_of, MultistageConfig, MultistageError, MultistageParts, Setup};
use crate::gemm::fused::{check_gated_pairs, FormParams};
use crate::gemm::layout::{matrix_span, Form, FormParts, Major, Operand, OutType};
use crate::gemm::naive::MAX_GRID_Y;
use crate::gemm::{
    Accum, Device, GemmArg, KernelBuildError, LaunchPlan, Plan, Problem, ProgramPlan,
};

/// The multistage program's plan for a form: a configuration (its epilogue through the
/// registers) and the form's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MultistageFormPlan {
    /// The configuration.
    pub cfg: MultistageConfig,
    /// The form's parts.
    pub form: FormParts,
}

/// The widest copy, in elements (8, 4, 2 or 1), that every row of `operand` allows: its extent
/// along the copy (K for a K-major operand, its rows for an MN-major one, whose vectors must not
/// cross its edge), its leading dimension and its rows' alignment.
fn copy_elems(form: &Form, operand: Operand, rows: usize, k: usize) -> u32 {
    let (layout, bytes) = match operand {
        Operand::A => (form.a, 2),
        _ => (form.b, 2),
    };
    let along = match layout.major {
        Major::K => k,
        Major::MN => rows,
    };
    let align = form.row_alignment(operand, bytes) / bytes as u64;
    [8u32, 4, 2, 1]
        .into_iter()
        .find(|&v| {
            along.is_multiple_of(v as usize)
                && layout.ld.is_multiple_of(v as usize)
                && align.is_multiple_of(u64::from(v))
        })
        .unwrap_or(1)
}

/// The plan for `p` in `form` on `target`, or why the program cannot run it.
pub(super) fn plan_form(p: &Problem, form: &Form, target: Target) -> Result<Plan, String> {
    if !super::TARGETS.contains(&target) {
        return Err(format!("it runs on sm_80 and newer, not {target}"));
    }
    if p.acc != Accum::F32 {
        return Err(format!(
            "with a form past the packed one it sums in f32, not {}",
            p.acc
        ));
    }
    if p.k > super::MAX_K {
        return Err(format!(
            "K = {} is above {}, the widest row its global tiles index",
            p.k,
            super::MAX_K
        ));
    }
    if form.batch.count > 65535 {
        return Err(format!(
            "a batch of {} is more than the 65535 blocks its grid has along z",
            form.batch.count
        ));
    }
    let cols = form.out_cols(p.n);
    let limit = 1u64 << 32;
    for (what, span) in [
        ("A", form.a.span(p.m, p.k)),
        ("B", form.b.span(p.n, p.k)),
        ("D", matrix_span(p.m, cols, form.ldd).unwrap_or(usize::MAX)),
        ("C", matrix_span(p.m, cols, form.ldc).unwrap_or(usize::MAX)),
        (
            "the residual",
            matrix_span(p.m, cols, form.ldr).unwrap_or(usize::MAX),
        ),
    ] {
        if span as u64 >= limit {
            return Err(format!(
                "{what} spans {span} elements, 2^32 or more, and it forms element offsets in 32 \
                 bits"
            ));
        }
    }
    let v = copy_elems(form, Operand::A, p.m, p.k).min(copy_elems(form, Operand::B, p.n, p.k));
    let reference = MultistageConfig::reference(p.dtype, p.acc);
    let (tile_m, tile_n, stages) = if v == 1 { (64, 64, 4) } else { (128, 128, 3) };
    let cfg = MultistageConfig::new(MultistageParts {
        copy_bits: 16 * v,
        tile_m,
        tile_n,
        stages,
        epilogue: super::Epilogue::Registers,
        ..reference.parts()
    })
    .map_err(|e| e.to_string())?;
    let max_m = u64::from(MAX_GRID_Y) * u64::from(cfg.tile_m);
    if p.m as u64 > max_m {
        return Err(format!(
            "M = {} needs more than {MAX_GRID_Y} blocks along grid y; it handles M up to {max_m}",
            p.m
        ));
    }
    let plan = MultistageFormPlan {
        cfg,
        form: form.parts(p.dtype),
    };
    // The layouts are made now, so that a plan that builds is all that is handed on.
    let setup = Setup::with_form(&plan.cfg, Some(plan.form)).map_err(|e| format!("{e}"))?;
    if form.epilogue.is_gated() {
        let (bm, bn) = (i64::from(cfg.tile_m), i64::from(cfg.tile_n));
        check_gated_pairs(&setup.mma, &setup.frag_c, (bm, bn))?;
    }
    Ok(Plan::new(plan))
}

impl MultistageFormPlan {
    /// The kernel's name: the configuration's and the form's tag.
    pub fn name(&self) -> String {
        format!("{}{}", self.cfg.name(), self.form.tag())
    }
}

/// The multistage kernel of a form plan.
fn form_kernel(plan: &MultistageFormPlan) -> Result<Kernel, MultistageError> {
    let mut k = multistage_kernel_of(&Setup::with_form(&plan.cfg, Some(plan.form))?)?;
    k.name = plan.name();
    Ok(k)
}

// SAFETY: the multistage kernel bounds every load of A and B by their extents (tiles past them
// read zeros), reaches each through its leading dimension and its batch's stride (the spans
// check_form measured), and reads C, the bias and the residual and writes D only at elements
// inside D's extents (the epilogue's predicates), through their leading dimensions and strides.
unsafe impl ProgramPlan for MultistageFormPlan {
    fn program(&self) -> &'static str {
        "multistage"
    }

    fn key(&self) -> String {
        self.name()
    }

    fn describe(&self) -> String {
        format!(
            "multistage {}; A {}-major, B {}-major; {}{})",
            self.cfg.describe_shape(),
            self.form.a.name(),
            self.form.b.name(),
            self.form.epilogue.describe(),
            if self.form.out == OutType::of(self.cfg.dtype) {
                String::new()
            } else {
                format!(", D {}", self.form.out)
            }
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        form_kernel(self).map_err(|e| match e {
            MultistageError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("multistage", other),
        })
    }

    fn entry(&self) -> String {
        self.name()
    }

    fn operand_alignment(&self) -> u64 {
        u64::from(self.cfg.copy_bits / 8)
    }

    fn output_alignment(&self) -> u64 {
        self.form.out.bytes() as u64
    }

    fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan {
        let packed = Form::packed(m as usize, n as usize, k as usize);
        self.launch_form(m, n, k, &packed, device)
    }

    fn launch_form(&self, m: u32, n: u32, _k: u32, form: &Form, _device: &Device) -> LaunchPlan {
        use GemmArg::*;
        let (gx, gy, _) = self.cfg.grid(m, n);
        let mut args = vec![D, A, B, M, N, K];
        args.extend(FormParams::args(form));
        LaunchPlan {
            dynamic_smem_bytes: self.cfg.smem_bytes(),
            ..LaunchPlan::new(
                (gx, gy, u32::try_from(form.batch.count).unwrap_or(1)),
                self.cfg.block(),
                args,
            )
        }
    }
}
