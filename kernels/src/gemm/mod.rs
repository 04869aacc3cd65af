//! GEMM: `D = A * B^T` with A (`M x K`) and B (`N x K`) K-major and D (`M x N`) row-major, f16 or
//! bf16 in and out, by one of several programs behind one seam.
//!
//! - [`program`](mod@program): the seam: [`GemmProgram`] (its schedule type, which problems a
//!   program takes, and its [`Plan`] for them), [`ProgramPlan`] (a plan's kernel and its
//!   launch: [`LaunchPlan`], [`GemmArg`]); its docs show how to add a program.
//! - [`programs`]: [`PROGRAMS`], the programs of this build, and what needs their list: a
//!   kernel by name, a `--config` parsed for the programs it may go to ([`Config::parse`]).
//! - [`device`]: [`Device`], the facts about a GPU that choosing and launching a schedule need.
//! - [`tuning`]: tuning records (`rute tune`'s file), which the runtime prefers to a program's
//!   default.
//! - [`naive`](mod@naive): the baseline `#[kernel]`, one thread per element of D, f32 accumulation
//!   ([`naive::Naive`]); the multistage program is `crate::multistage::Multistage`.
//! - [`check`](mod@check): the input checks as a pure function of shapes, buffer lengths and the
//!   target, and the choice of program; no GPU needed, so it is unit-tested here.
//! - [`metric`]: the correctness metric, relative Frobenius error in f64, and the check's verdict.
//! - [`rotation`]: how many input sets the timing rotates through.
//! - `Gemm` (feature `gpu`): the runtime call — checks, picks the plan (a tuning record's
//!   schedule first), JIT-compiles each plan
//!   once (a thread-safe cache), builds the plan's arguments and launches; `CublasRef`: cuBLAS's
//!   `cublasGemmEx` as the reference, on the same stream.
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::gemm::{check, Accum, BufferLens, Device, GemmDtype, KernelChoice, Problem};
//!
//! let h200 = Device::h200();
//! let p = Problem { m: 100, n: 70, k: 13, dtype: GemmDtype::Bf16, acc: Accum::F32,
//!                   kernel: KernelChoice::Auto, config: None };
//! let plan = check(&p, BufferLens { a: 100 * 13, b: 70 * 13, d: 100 * 70 }, &h200).unwrap();
//! // K = 13: the multistage kernel with element copies on 64x64 tiles.
//! assert!(plan.describe().starts_with("multistage bf16 (f32 acc, 64x64x32 tile"), "{}", plan.describe());
//! assert_eq!(plan.launch(100, 70, 13, &h200).grid, (2, 2, 1));
//! let e = check(&p, BufferLens { a: 100 * 13, b: 70 * 13, d: 7000 - 1 }, &h200).unwrap_err();
//! assert!(e.to_string().contains("D has 6999 elements"), "{e}");
//! // K = 4096 on sm_90a: the warp-specialized TMA + wgmma program; on sm_80 the multistage one.
//! let p = Problem { m: 4096, n: 4096, k: 4096, ..p };
//! let lens = BufferLens::for_shape(4096, 4096, 4096).unwrap();
//! let plan = check(&p, lens, &h200).unwrap();
//! assert!(plan.describe().starts_with("hopper_ws bf16 (f32 acc, 128x256x64 tile"), "{}", plan.describe());
//! let a100 = Device { name: "NVIDIA A100".into(), sms: 108, ..Device::unknown(Target::Sm80) };
//! let on_80 = check(&p, lens, &a100).unwrap();
//! assert!(on_80.describe().contains("128x256x32 tile, 4 stages, 2x4 warps"), "{}", on_80.describe());
//! assert!(on_80.describe().ends_with("smem epilogue)"));
//! ```

pub mod check;
#[cfg(feature = "gpu")]
mod cublas;
pub mod device;
pub mod epilogue;
pub mod form_spelling;
pub mod fused;
#[cfg(feature = "gpu")]
pub mod harness;
pub mod launch_plan;
pub mod layout;
pub mod metric;
pub mod naive;
pub mod program;
pub mod programs;
pub mod reference;
pub mod rotation;
#[cfg(feature = "gpu")]
mod runtime;
pub mod strided;
pub mod suites;
pub mod tuning;

pub use check::{check, check_form, tma_rows, BufferLens, FormLens, InputError};
pub use device::Device;
pub use launch_plan::{GemmArg, GemmOperand, LaunchPlan};
pub use metric::relative_frobenius_error;
pub use naive::gemm_naive;
pub use program::{
    AnyProgram, AnySchedule, Config, GemmProgram, KernelBuildError, KernelChoice, NoSchedule,
    Origin, Plan, Problem, ProgramPlan, Schedule, UnknownKernel,
};
pub use programs::{ConfigError, PROGRAMS};
pub use tuning::{ShapeClass, TuningFile, TuningRecord};

#[cfg(feature = "gpu")]
pub use cublas::CublasRef;
#[cfg(feature = "gpu")]
pub use runtime::target_for;
#[cfg(feature = "gpu")]
pub use runtime::{Gemm, GemmArgs, GemmError, RawBuffer, RawBuffers};

use dsl_core::atom::ValType;
use dsl_core::kernel::DeviceType;
use half::{bf16, f16};

/// The element type of A, B and D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmDtype {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
}

impl GemmDtype {
    /// The name the command line takes and prints: `f16` or `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            GemmDtype::F16 => "f16",
            GemmDtype::Bf16 => "bf16",
        }
    }

    /// The atoms' name for it (`dsl_core::atom::ValType`), for a program's copy, MMA and TMA
    /// atoms.
    pub fn val_type(self) -> ValType {
        match self {
            GemmDtype::F16 => ValType::F16,
            GemmDtype::Bf16 => ValType::BF16,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        self.val_type().bits() as usize / 8
    }
}

impl std::fmt::Display for GemmDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The type the products are summed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Accum {
    /// Half precision (f16 inputs only: `mma.sync` has no bf16 form with an f16 sum).
    F16,
    /// Single precision.
    F32,
}

impl Accum {
    /// The name the command line takes and prints: `f16` or `f32`.
    pub fn name(self) -> &'static str {
        match self {
            Accum::F16 => "f16",
            Accum::F32 => "f32",
        }
    }

    /// The atoms' name for it (`dsl_core::atom::ValType`), for a program's MMA atoms.
    pub fn val_type(self) -> ValType {
        match self {
            Accum::F16 => ValType::F16,
            Accum::F32 => ValType::F32,
        }
    }

    /// The relative Frobenius error against the exact product (f64) that passes for outputs of
    /// `dtype` whatever cuBLAS's own error (the whole rule: [`metric::CheckErrors::passes`]):
    /// `1e-2` for an f16 sum, `2e-3` for an f32 one with f16 output. bf16 output keeps 8
    /// significant bits, so rounding it alone moves an element by up to 2^-8 = 3.9e-3 relative
    /// (seen on the H200: cuBLAS's own bf16 D is 1.5e-3 to 3.1e-3 from f64, and a 1x1x1 product
    /// 2.6e-3); its f32-sum tolerance is 4e-3.
    pub fn tolerance(self, dtype: GemmDtype) -> f64 {
        match (self, dtype) {
            (Accum::F16, _) => 1e-2,
            (Accum::F32, GemmDtype::F16) => 2e-3,
            (Accum::F32, GemmDtype::Bf16) => 4e-3,
        }
    }
}

impl std::fmt::Display for Accum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An element type the GEMMs take: `half::f16` or `half::bf16`, and no other: the trait is
/// sealed, since the runtime sizes every buffer and every kernel from [`GemmElem::DTYPE`] and a
/// type whose size differed from it would send a kernel past the end of its buffers.
///
/// ```compile_fail
/// use dsl_core::ir::Type;
/// use dsl_core::kernel::{Const, DeviceType};
/// use kernels::gemm::{GemmDtype, GemmElem};
/// #[derive(Clone, Copy)]
/// struct Wide(u32); // four bytes, but it would claim to be an f16
/// impl DeviceType for Wide {
///     const TY: Type = Type::U32;
///     fn to_const(self) -> Const { u32::to_const(self.0) }
///     fn from_const(c: Const) -> Option<Self> { u32::from_const(c).map(Wide) }
/// }
/// impl GemmElem for Wide {
///     const DTYPE: GemmDtype = GemmDtype::F16;
///     fn from_f32(x: f32) -> Self { Wide(x as u32) }
///     fn to_f64(self) -> f64 { f64::from(self.0) }
/// }
/// ```
pub trait GemmElem: sealed::Sealed + DeviceType + strided::OutElem + Send + Sync {
    /// Its [`GemmDtype`].
    const DTYPE: GemmDtype;
    /// `x` rounded to nearest even.
    fn from_f32(x: f32) -> Self;
    /// The exact value as f64.
    fn to_f64(self) -> f64;
}

impl GemmElem for f16 {
    const DTYPE: GemmDtype = GemmDtype::F16;
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}

impl GemmElem for bf16 {
    const DTYPE: GemmDtype = GemmDtype::Bf16;
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

mod sealed {
    /// Implemented for `half::f16` and `half::bf16` only. With the runtime in the build it also
    /// carries what the runtime's buffers need: every bit pattern valid (a kernel writes D) and a
    /// device representation.
    #[cfg(feature = "gpu")]
    pub trait Sealed: codegen_ptx::jit::AnyBitPattern + codegen_ptx::jit::DeviceRepr {}
    /// Implemented for `half::f16` and `half::bf16` only.
    #[cfg(not(feature = "gpu"))]
    pub trait Sealed {}

    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}
