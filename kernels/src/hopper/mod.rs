//! The warp-specialized Hopper GEMM (sm_90a): TMA loads into an mbarrier ring, `wgmma` from
//! shared memory, persistent blocks (or clusters) walking the output tiles, an epilogue through
//! `stmatrix` and a TMA store (see [`program`] for the roles and their protocol).
//!
//! `D = A * B^T` with A (`M x K`), B (`N x K`) and D (`M x N`) row-major, f16 or bf16 in and out,
//! f32 accumulation. Any M, N and K whose rows are 16-byte aligned (K and N multiples of 8):
//! TMA fills what lies past A and B with zeros and clips the stores of D. In a form
//! ([`seam::HopperWs`]'s `plan_form`) the operands may be MN-major, the accumulators go through a
//! fused epilogue (gated ones too, under every schedule), D may be f16, bf16 or f32
//! ([`epilogue::FormStore`]), and a strided batch of GEMMs runs in one launch ([`batch`]).
//!
//! - [`schedule`]: [`HopperSchedule`], the program's schedule as a typed value, its spelling and
//!   its checks;
//! - [`plan`](mod@plan): [`HopperPlan`], what the host computes from a schedule (atoms,
//!   layouts, TMA copies); [`operand`]: how it holds an operand of either major (K or MN) in
//!   global and shared memory;
//! - [`program`], [`producer`], [`consumer`], [`epilogue`]: the kernel, one role per module;
//!   [`params`]: its parameters, one struct for the kernel and the launch; [`launch`](mod@launch):
//!   the grid and the stream-K split;
//! - [`chooser`]: the default schedule, a table of shape classes and a cost model over the
//!   device's facts; [`tune`]: timing candidate schedules on the device into tuning records;
//! - [`seam`]: [`HopperWs`], the program behind the GEMM seam; [`batch`]: a strided batch of
//!   GEMMs in one launch (the batch as the tensor maps' third dimension, the walk over every
//!   GEMM's tiles).
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::gemm::GemmDtype;
//! use kernels::hopper::{hopper_kernel, HopperSchedule};
//! let kernel = hopper_kernel(HopperSchedule::WIDE, GemmDtype::Bf16).unwrap();
//! let ptx = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
//! assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
//! assert!(codegen_ptx::emit(&kernel, Target::Sm80).is_err());
//! ```

pub mod batch;
pub mod chooser;
pub mod consumer;
pub mod direct;
pub mod epilogue;
pub mod epilogue_warps;
pub mod fixup;
pub mod gated;
pub mod launch;
pub mod operand;
pub mod params;
pub mod plan;
pub mod producer;
pub mod program;
mod roles;
pub mod row_split;
pub mod schedule;
pub mod seam;
pub mod staged_residual;
pub mod trace;
pub mod tune;

pub use fixup::workspace_elems;
pub use launch::{
    cluster_tiles, launch, launch_batched, tile_order, tile_order_batched, HopperLaunch,
};
pub use plan::{HopperPlan, PlanError};
pub use schedule::{
    HopperSchedule, Refusal, ScheduleError, Store, REGISTERS, REGISTERS_EPILOGUE_WARPS,
    REGISTERS_THREE_CONSUMERS, SMEM_LIMIT,
};
pub use seam::{HopperGemm, HopperWs};

/// The schedule's name before it was a typed value: the same type.
pub type HopperConfig = HopperSchedule;

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use dsl_core::layout::LayoutError;
use thiserror::Error;

use crate::gemm::layout::FormParts;
use crate::gemm::GemmDtype;

/// wgmma and setmaxnreg: sm_90a.
pub const TARGETS: &[Target] = &[Target::Sm90a];

/// Why a kernel of the program could not be generated.
#[derive(Debug, Error)]
pub enum HopperError {
    /// The schedule is outside what the program supports, or its plan failed.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// A layout operation failed while generating (a bug for a plan that was made).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// The PTX entry name of a schedule: `hopper_ws_{dtype}_{schedule}`.
pub fn entry_name(schedule: &HopperSchedule, dtype: GemmDtype) -> String {
    format!("hopper_ws_{dtype}_{schedule}")
}

/// The registry's `hopper_ws_f16` / `hopper_ws_bf16`: [`HopperSchedule::WIDE`].
pub fn default_kernel(dtype: GemmDtype) -> Result<Kernel, BuildError> {
    let mut k = hopper_kernel(HopperSchedule::WIDE, dtype).map_err(|e| match e {
        HopperError::Build(b) => b,
        other => BuildError::BadArgument {
            kernel: format!("hopper_ws_{dtype}"),
            message: other.to_string(),
        },
    })?;
    k.name = format!("hopper_ws_{dtype}");
    Ok(k)
}

/// The kernel of the schedule spelled `spec` for `dtype`, named [`entry_name`]: what `rute ptx
/// hopper_ws_{dtype} --config SPEC` prints. The error is a sentence (the spelling's, or the
/// plan's).
pub fn configured_kernel(spec: &str, dtype: GemmDtype) -> Result<Kernel, String> {
    let schedule: HopperSchedule = spec.parse().map_err(|e: ScheduleError| e.to_string())?;
    hopper_kernel(schedule, dtype).map_err(|e| e.to_string())
}

/// The kernel of the schedule spelled `spec` for `dtype` in a form's parts (`form`: operand
/// layouts, a fused epilogue, D's type), named [`entry_name`] with the parts' tag: what `rute
/// ptx hopper_ws_{dtype} --config SPEC --form FORM` prints, the kernel the runtime launches for
/// such a call. The error is a sentence (the spelling's, or the plan's).
pub fn configured_form_kernel(
    spec: &str,
    dtype: GemmDtype,
    form: FormParts,
) -> Result<Kernel, String> {
    let schedule: HopperSchedule = spec.parse().map_err(|e: ScheduleError| e.to_string())?;
    hopper_form_kernel(schedule, dtype, Some(form)).map_err(|e| e.to_string())
}

/// The kernel of `schedule` for `dtype`, named [`entry_name`].
pub fn hopper_kernel(schedule: HopperSchedule, dtype: GemmDtype) -> Result<Kernel, HopperError> {
    kernel_of(HopperPlan::new(schedule, dtype)?)
}

/// The diagnostic build of `schedule` for `dtype` that stamps each block's phases into the
/// workspace ([`trace`]), named [`entry_name`] with `_traced`: for a data-parallel launch (no
/// stream-K split, whose partial sums the workspace holds) with a workspace of
/// [`trace::WORDS_PER_BLOCK`] `u64`s per block.
pub fn traced_kernel(schedule: HopperSchedule, dtype: GemmDtype) -> Result<Kernel, HopperError> {
    let plan = HopperPlan {
        trace: true,
        ..HopperPlan::new(schedule, dtype)?
    };
    let mut k = kernel_of(plan)?;
    k.name.push_str("_traced");
    Ok(k)
}

/// The kernel of `schedule` for `dtype` in a form's parts (`None`: [`hopper_kernel`]'s), named
/// [`entry_name`] with the parts' tag.
pub fn hopper_form_kernel(
    schedule: HopperSchedule,
    dtype: GemmDtype,
    form: Option<FormParts>,
) -> Result<Kernel, HopperError> {
    kernel_of(HopperPlan::with_form(schedule, dtype, form)?)
}

/// The kernel of `schedule` for `dtype` in a form's parts that runs a strided batch of GEMMs in
/// one launch ([`batch`]), named [`entry_name`] with the parts' tag and `_batch`.
pub fn hopper_batch_kernel(
    schedule: HopperSchedule,
    dtype: GemmDtype,
    form: FormParts,
) -> Result<Kernel, HopperError> {
    kernel_of(HopperPlan::for_batch(schedule, dtype, form)?)
}

/// The kernel of `schedule` for `dtype` in a form's parts (`None`: the packed form's), one GEMM
/// or a strided batch ([`HopperPlan::with_parts`]).
pub(crate) fn parts_kernel(
    schedule: HopperSchedule,
    dtype: GemmDtype,
    form: Option<FormParts>,
    batching: batch::Batching,
) -> Result<Kernel, HopperError> {
    kernel_of(HopperPlan::with_parts(schedule, dtype, form, batching)?)
}

/// The kernel of `plan`, named [`entry_name`] (with the form's tag where it has a form, and
/// `_batch` for a strided batch).
fn kernel_of(plan: HopperPlan) -> Result<Kernel, HopperError> {
    let (schedule, dtype) = (plan.schedule, plan.dtype);
    let mut k = match dtype {
        GemmDtype::F16 => program::hopper_ws::<half::f16>(&plan)?,
        GemmDtype::Bf16 => program::hopper_ws::<half::bf16>(&plan)?,
    };
    k.name = entry_name(&schedule, dtype);
    if let Some(form) = plan.form {
        k.name.push_str(&form.tag());
    }
    k.name.push_str(plan.batching.tag());
    Ok(k)
}

#[cfg(test)]
mod tests;
