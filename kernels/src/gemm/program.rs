//! The GEMM program seam: one trait every GEMM program implements, and the list of the programs
//! in this build.
//!
//! A program ([`GemmProgram`]) says which problems it takes on which target and why not, and
//! makes a [`Plan`] for those it takes: a configured program ([`ProgramPlan`]) that generates its
//! kernel and says how to launch it — grid, block, cluster, dynamic shared memory and the
//! kernel's parameters in order ([`LaunchPlan`], [`GemmArg`]: the operands, the dimensions, TMA
//! descriptors, small tables, scalars). The runtime (`Gemm`, feature `gpu`) compiles each plan
//! once, keyed by the plan, and builds the arguments from the call's operands; `check` (with
//! [`KernelChoice::Auto`]), the command line (`rute gemm --kernel NAME --config SPEC`), the suites
//! and the tests iterate [`PROGRAMS`].
//!
//! Adding a program is its module and one line in [`PROGRAMS`]: a struct, its [`GemmProgram`]
//! and [`ProgramPlan`] impls. Here one that runs the naive kernel for f16 only:
//!
//! ```
//! use dsl_core::ir::{Kernel, Target};
//! use half::f16;
//! use kernels::gemm::naive::gemm_naive;
//! use kernels::gemm::{
//!     check, Accum, BufferLens, GemmArg, GemmDtype, GemmProgram, KernelBuildError, KernelChoice,
//!     LaunchPlan, Plan, Problem, ProgramPlan,
//! };
//!
//! /// The program: which problems it takes, and its plan for them.
//! struct Tiny;
//!
//! impl GemmProgram for Tiny {
//!     fn name(&self) -> &'static str {
//!         "tiny"
//!     }
//!     fn summary(&self) -> &'static str {
//!         "the naive kernel, f16 only"
//!     }
//!     fn config_syntax(&self) -> &'static str {
//!         "none (it has no configurations)"
//!     }
//!     fn plan(&self, p: &Problem, _: Target, _: Option<&str>) -> Result<Plan, String> {
//!         if p.dtype != GemmDtype::F16 || p.acc != Accum::F32 {
//!             return Err(format!("it takes f16 with an f32 sum, not {} with {}", p.dtype, p.acc));
//!         }
//!         Ok(Plan::new(TinyPlan))
//!     }
//! }
//!
//! /// The plan: its kernel, and how to launch it.
//! #[derive(Debug)]
//! struct TinyPlan;
//!
//! // SAFETY: gemm_naive reads and writes only inside the m x k, n x k and m x n operands its
//! // grid covers, bounded by m, n and k.
//! unsafe impl ProgramPlan for TinyPlan {
//!     fn program(&self) -> &'static str {
//!         "tiny"
//!     }
//!     fn key(&self) -> String {
//!         "tiny_f16".into()
//!     }
//!     fn describe(&self) -> String {
//!         "tiny f16 (f32 acc)".into()
//!     }
//!     fn kernel(&self) -> Result<Kernel, KernelBuildError> {
//!         Ok(gemm_naive::<f16>()?)
//!     }
//!     fn entry(&self) -> String {
//!         "gemm_naive".into()
//!     }
//!     fn operand_alignment(&self) -> u64 {
//!         2
//!     }
//!     fn launch(&self, m: u32, n: u32, _k: u32, _sms: u32) -> LaunchPlan {
//!         use GemmArg::*;
//!         LaunchPlan {
//!             grid: (n.div_ceil(16), m.div_ceil(16), 1),
//!             block: (16, 16, 1),
//!             cluster: None,
//!             dynamic_smem_bytes: 0,
//!             args: vec![D, A, B, M, N, K],
//!             workspace: 0,
//!             then: None,
//!             programmatic: false,
//!         }
//!     }
//! }
//!
//! // Registered, it is one line in PROGRAMS (`&tiny::Tiny,`) and `--kernel tiny` names it; a
//! // program outside the list runs when asked for by value.
//! let p = Problem {
//!     m: 100, n: 70, k: 13, dtype: GemmDtype::F16, acc: Accum::F32,
//!     kernel: KernelChoice::Program(&Tiny), config: None,
//! };
//! let plan = check(&p, BufferLens::for_shape(100, 70, 13).unwrap(), Target::Sm90a).unwrap();
//! assert_eq!((plan.program(), plan.describe()), ("tiny", "tiny f16 (f32 acc)".to_string()));
//! assert_eq!(plan.launch(100, 70, 13, 132).grid, (5, 7, 1));
//! let bf16 = Problem { dtype: GemmDtype::Bf16, ..p };
//! let e = check(&bf16, BufferLens::for_shape(100, 70, 13).unwrap(), Target::Sm90a).unwrap_err();
//! assert_eq!(e.to_string(), "the tiny kernel cannot run this problem: it takes f16 with an f32 sum, not bf16 with f32");
//! ```

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;

use dsl_core::atom::tma::TmaDescriptor;
use dsl_core::ir::{Kernel, Target};
use thiserror::Error;

use super::check::{KernelBuildError, Problem};

/// The programs of this build, in the order [`KernelChoice::Auto`] tries them (fastest first);
/// `rute gemm --help` lists them in this order.
pub static PROGRAMS: &[&dyn GemmProgram] = &[
    &crate::hopper::HopperWs,
    &crate::multistage::Multistage,
    &super::naive::Naive,
];

/// A GEMM program: `D (m x n) = A (m x k) * B (n x k)^T`, A, B and D row-major (K contiguous in
/// A and B).
pub trait GemmProgram: Sync {
    /// The name `rute gemm --kernel NAME` takes (`naive`, `multistage`), unique among
    /// [`PROGRAMS`].
    fn name(&self) -> &'static str;

    /// One line for `--help`: what the program is and which problems it takes.
    fn summary(&self) -> &'static str;

    /// How `--config` is spelled for this program, for `--help` (a paragraph the help wraps).
    fn config_syntax(&self) -> &'static str;

    /// Whether the program runs on `target` at all: [`KernelChoice::Auto`] does not try (nor
    /// name, when it falls back) a program that does not. The default: every target.
    fn runs_on(&self, target: Target) -> bool {
        let _ = target;
        true
    }

    /// Whether `config` is spelled as one of this program's configurations, apart from any
    /// problem; the error a clause naming the spelling. `check` asks this before [`plan`]
    /// whenever a configuration is given (and `auto` tries only the programs that accept it); the
    /// command line refuses a spelling no program accepts before it runs anything. The default:
    /// the program has no configurations.
    ///
    /// [`plan`]: GemmProgram::plan
    fn check_config(&self, config: &str) -> Result<(), String> {
        Err(format!("it takes no --config, and `{config}` was given"))
    }

    /// The plan for `problem` (shape and types already checked by `check`) on `target`: the
    /// default configuration by shape when `config` is `None`, else `config` (the problem's, in
    /// this program's spelling, already accepted by [`check_config`]); or why this program cannot
    /// run the problem, as a clause ("K = 13 is not a multiple of 8, ..."). Adaptations to the
    /// target (an instruction it lacks) are made here, so that the plan is what runs.
    ///
    /// [`check_config`]: GemmProgram::check_config
    fn plan(&self, problem: &Problem, target: Target, config: Option<&str>)
        -> Result<Plan, String>;
}

/// A configured program for one problem class: what the runtime compiles (once, cached by
/// [`key`](ProgramPlan::key)) and how it launches it.
///
/// # Safety
///
/// The runtime launches [`kernel`](ProgramPlan::kernel) (and [`reduction`](ProgramPlan::reduction))
/// as [`launch`](ProgramPlan::launch) says, with the operands of a `Gemm::run` that passed
/// `check`: A, B and D of at least `m*k`, `n*k` and `m*n` elements, aligned as the plan asks, D
/// and a main launch's workspace writable, everything else read. The implementer promises that
/// for every problem the plan was made for, those kernels with those launches access only those
/// buffers, inside their lengths, write only D and the workspace, and leave every element of D
/// a valid value; `Gemm::run` relies on it to be safe.
pub unsafe trait ProgramPlan: Any + fmt::Debug + Send + Sync {
    /// The [`GemmProgram::name`] of the program that made it.
    fn program(&self) -> &'static str;

    /// Unique per distinct kernel among this program's plans (types, configuration spelled by
    /// its `Display`, target adaptations): with the program's name, the compile cache's key.
    fn key(&self) -> String;

    /// A few words: which program runs and its configuration, e.g. `multistage f16 (f32 acc,
    /// 128x256x32 tile, 4 stages, 2x4 warps, rasterized, stmatrix epilogue)`.
    fn describe(&self) -> String;

    /// The kernel, generated with the plan's configuration (PTX entry: [`entry`]).
    ///
    /// [`entry`]: ProgramPlan::entry
    fn kernel(&self) -> Result<Kernel, KernelBuildError>;

    /// The name of the PTX entry [`kernel`](ProgramPlan::kernel) defines.
    fn entry(&self) -> String;

    /// Alignment in bytes the kernel needs of A's and B's start addresses.
    fn operand_alignment(&self) -> u64;

    /// Alignment in bytes the kernel needs of D's start address (a TMA store needs 16). The
    /// default: an element's, 2.
    fn output_alignment(&self) -> u64 {
        2
    }

    /// The launch for an `m x n x k` problem (one the program's `plan` took) on a device with
    /// `sms` multiprocessors. The arguments must name D at most once as a pointer and once as a
    /// tensor map (the runtime borrows it mutably once), see [`LaunchPlan::check`].
    fn launch(&self, m: u32, n: u32, k: u32, sms: u32) -> LaunchPlan;

    /// The kernel a launch's [`then`](LaunchPlan::then) runs after the main one (a split-K
    /// reduction over the workspace), with its PTX entry named by its `name`; `None` (the
    /// default) for a plan whose launches never have one.
    fn reduction(&self) -> Option<Result<Kernel, KernelBuildError>> {
        None
    }
}

/// A plan made by a [`GemmProgram`], ready to compile and launch. Two plans are equal (and hash
/// alike) when their program and [`key`](ProgramPlan::key) are: they compile to the same kernel.
/// Cloning is cheap (the plan is shared).
#[derive(Clone)]
pub struct Plan {
    plan: Arc<dyn ProgramPlan>,
    /// Why `auto` passed over the programs before this one, if it did.
    fallback: Option<Arc<str>>,
}

impl Plan {
    /// `plan` as a [`Plan`].
    pub fn new(plan: impl ProgramPlan) -> Plan {
        Plan {
            plan: Arc::new(plan),
            fallback: None,
        }
    }

    /// The program's plan as its own type, if it is a `P`.
    pub fn downcast_ref<P: ProgramPlan>(&self) -> Option<&P> {
        (self.plan.as_ref() as &dyn Any).downcast_ref()
    }

    /// The plan, chosen by `auto` after the programs before it refused: `why` says which and
    /// why, and [`Plan::describe`] says it after the program's own words.
    pub(crate) fn chosen_because(self, why: String) -> Plan {
        Plan {
            fallback: Some(why.into()),
            ..self
        }
    }

    /// Why `auto` passed over the programs before this plan's, when it did: "the multistage
    /// kernel cannot run it: ...".
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// [`ProgramPlan::program`].
    pub fn program(&self) -> &'static str {
        self.plan.program()
    }

    /// [`ProgramPlan::key`].
    pub fn key(&self) -> String {
        self.plan.key()
    }

    /// [`ProgramPlan::describe`], and when the plan is a fallback, why
    /// ([`Plan::fallback`]): `naive f16 (f32 acc); the multistage kernel cannot run it: ...`.
    pub fn describe(&self) -> String {
        match &self.fallback {
            None => self.plan.describe(),
            Some(why) => format!("{}; {why}", self.plan.describe()),
        }
    }

    /// [`ProgramPlan::kernel`].
    pub fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        self.plan.kernel()
    }

    /// [`ProgramPlan::entry`].
    pub fn entry(&self) -> String {
        self.plan.entry()
    }

    /// [`ProgramPlan::operand_alignment`].
    pub fn operand_alignment(&self) -> u64 {
        self.plan.operand_alignment()
    }

    /// [`ProgramPlan::output_alignment`].
    pub fn output_alignment(&self) -> u64 {
        self.plan.output_alignment()
    }

    /// [`ProgramPlan::launch`].
    pub fn launch(&self, m: u32, n: u32, k: u32, sms: u32) -> LaunchPlan {
        self.plan.launch(m, n, k, sms)
    }

    /// [`ProgramPlan::reduction`].
    pub fn reduction(&self) -> Option<Result<Kernel, KernelBuildError>> {
        self.plan.reduction()
    }
}

impl PartialEq for Plan {
    fn eq(&self, other: &Plan) -> bool {
        self.program() == other.program() && self.key() == other.key()
    }
}

impl Eq for Plan {}

impl Hash for Plan {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.program().hash(state);
        self.key().hash(state);
    }
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut t = f.debug_tuple("Plan");
        t.field(&self.plan);
        if let Some(why) = &self.fallback {
            t.field(why);
        }
        t.finish()
    }
}

/// One launch of a plan's kernel: the grid, block, cluster, dynamic shared memory and the
/// kernel's parameters in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Blocks, (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block, (x, y, z).
    pub block: (u32, u32, u32),
    /// Blocks per cluster, (x, y, z) (`None`: no cluster launch).
    pub cluster: Option<(u32, u32, u32)>,
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_smem_bytes: u32,
    /// The kernel's parameters, in order.
    pub args: Vec<GemmArg>,
    /// f32 elements of scratch memory the launches use ([`GemmArg::Workspace`]); 0 for none.
    pub workspace: u64,
    /// A launch of the plan's [`reduction`](ProgramPlan::reduction) kernel queued right after
    /// this one (same stream, so it sees everything this one wrote): a split-K reduction.
    pub then: Option<Box<LaunchPlan>>,
    /// Launch it as a programmatic dependent launch (`Launch::programmatic` in codegen-ptx's
    /// JIT): its blocks may start while the stream's previous kernel finishes. Only for a
    /// kernel that runs `griddepcontrol.wait` before its first access to global memory.
    pub programmatic: bool,
}

impl LaunchPlan {
    /// A launch of `grid` blocks of `block` threads with `args`: no cluster, no dynamic shared
    /// memory, no workspace, nothing after it.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32), args: Vec<GemmArg>) -> LaunchPlan {
        LaunchPlan {
            grid,
            block,
            cluster: None,
            dynamic_smem_bytes: 0,
            args,
            workspace: 0,
            then: None,
            programmatic: false,
        }
    }

    /// Why the runtime cannot make these arguments, as a clause: D named more than once as a
    /// pointer, or as a tensor map, in one launch, since the runtime borrows D mutably once (D
    /// as a pointer beside a map over it is the map's buffer: one borrow); a workspace named
    /// without elements. `Ok` for every other list.
    pub fn check(&self) -> Result<(), String> {
        if self.workspace == 0 && self.uses_workspace() {
            return Err("its arguments name the workspace, and it asks for none".into());
        }
        if let Some(then) = &self.then {
            if then.then.is_some() {
                return Err("a launch after the main one has another after it".into());
            }
            if then.workspace > self.workspace {
                return Err("the launch after the main one asks for more workspace".into());
            }
            then.check_args()?;
        }
        self.check_args()
    }

    fn uses_workspace(&self) -> bool {
        let here = self.args.contains(&GemmArg::Workspace);
        here || self
            .then
            .as_ref()
            .is_some_and(|t| t.args.contains(&GemmArg::Workspace))
    }

    fn check_args(&self) -> Result<(), String> {
        let pointers = self.args.iter().filter(|a| **a == GemmArg::D).count();
        let maps = self
            .args
            .iter()
            .filter(|a| {
                matches!(
                    a,
                    GemmArg::TensorMap {
                        operand: GemmOperand::D,
                        ..
                    }
                )
            })
            .count();
        if pointers > 1 || maps > 1 {
            return Err(format!(
                "its arguments name D {pointers} times as a pointer and {maps} as a tensor map, and the runtime borrows D once: at most one of each (a pointer beside a map is the map's buffer)"
            ));
        }
        Ok(())
    }
}

/// One of a GEMM's three matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmOperand {
    /// `m x k`, read.
    A,
    /// `n x k`, read.
    B,
    /// `m x n`, written.
    D,
}

/// One kernel parameter, in order, as the runtime makes it from the call's operands.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GemmArg {
    /// D's global address (written).
    D,
    /// A's global address.
    A,
    /// B's global address.
    B,
    /// M, a `u32`.
    M,
    /// N, a `u32`.
    N,
    /// K, a `u32`.
    K,
    /// A TMA descriptor over operand A, B or D (D written through it: the runtime encodes it
    /// with `Jit::tensor_map_mut`), its fields from the program's TMA atom
    /// ([`TmaCopy::descriptor`](dsl_core::atom::tma::TmaCopy::descriptor) of the operand's
    /// dimensions and strides; the runtime turns it into the driver's `TensorMapSpec` with
    /// `codegen_ptx::jit::tensor_map_spec`).
    TensorMap {
        /// The matrix the map addresses.
        operand: GemmOperand,
        /// The map's fields.
        descriptor: TmaDescriptor,
    },
    /// A small read-only table the kernel reads (a persistent scheduler's tile order, `u32`s):
    /// the runtime uploads it once per content (a cache) and passes its buffer's address.
    Table(Arc<Vec<u32>>),
    /// A scalar computed by the program (a tile count, say), a `u32`.
    U32(u32),
    /// The runtime's f32 scratch buffer of at least [`LaunchPlan::workspace`] elements, zeroed
    /// when allocated (stream-K's flags and partial sums, which a launch leaves as it found the
    /// flags; or partial sums a launch after the main one reads).
    Workspace,
}

/// Which program computes the product.
#[derive(Clone, Copy)]
pub enum KernelChoice {
    /// The first program of [`PROGRAMS`] that runs the problem (with a configuration, the first
    /// that accepts its spelling and runs the problem).
    Auto,
    /// This program (one of [`PROGRAMS`] by [`KernelChoice::named`], or any other by value).
    Program(&'static dyn GemmProgram),
}

impl KernelChoice {
    /// `auto` or the program of [`PROGRAMS`] called `name`.
    ///
    /// Errors: [`UnknownKernel`], naming the choices.
    pub fn named(name: &str) -> Result<KernelChoice, UnknownKernel> {
        if name == "auto" {
            return Ok(KernelChoice::Auto);
        }
        program(name)
            .map(KernelChoice::Program)
            .ok_or_else(|| UnknownKernel {
                name: name.to_string(),
                known: KernelChoice::names().join(", "),
            })
    }

    /// The name the command line takes and prints: `auto` or the program's.
    pub fn name(&self) -> &'static str {
        match self {
            KernelChoice::Auto => "auto",
            KernelChoice::Program(p) => p.name(),
        }
    }

    /// Every name [`KernelChoice::named`] takes: `auto`, then the programs in [`PROGRAMS`]'s
    /// order.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("auto")
            .chain(PROGRAMS.iter().map(|p| p.name()))
            .collect()
    }
}

/// The program of [`PROGRAMS`] called `name`.
pub fn program(name: &str) -> Option<&'static dyn GemmProgram> {
    PROGRAMS.iter().copied().find(|p| p.name() == name)
}

impl FromStr for KernelChoice {
    type Err = UnknownKernel;

    /// [`KernelChoice::named`].
    fn from_str(name: &str) -> Result<KernelChoice, UnknownKernel> {
        KernelChoice::named(name)
    }
}

impl PartialEq for KernelChoice {
    /// Choices are equal by name (program names are unique).
    fn eq(&self, other: &KernelChoice) -> bool {
        self.name() == other.name()
    }
}

impl Eq for KernelChoice {}

impl Hash for KernelChoice {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for KernelChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelChoice::Auto => f.write_str("Auto"),
            KernelChoice::Program(p) => write!(f, "Program({})", p.name()),
        }
    }
}

impl fmt::Display for KernelChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel name that is neither `auto` nor a program of this build.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown kernel `{name}`; this build has {known}")]
pub struct UnknownKernel {
    /// The name given.
    pub name: String,
    /// The names it takes, comma-separated.
    pub known: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_have_unique_names_and_are_found_by_them() {
        let names = KernelChoice::names();
        assert_eq!(names, ["auto", "hopper_ws", "multistage", "naive"]);
        for (i, p) in PROGRAMS.iter().enumerate() {
            assert!(!names[..=i].contains(&p.name()), "{} twice", p.name());
            assert_eq!(KernelChoice::named(p.name()), Ok(KernelChoice::Program(*p)));
            assert!(!p.summary().contains('\n') && !p.config_syntax().is_empty());
        }
        assert_eq!("auto".parse(), Ok(KernelChoice::Auto));
        let e = KernelChoice::named("fast").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown kernel `fast`; this build has auto, hopper_ws, multistage, naive"
        );
        assert_eq!(
            format!("{:?}", KernelChoice::named("naive").unwrap()),
            "Program(naive)"
        );
    }

    #[test]
    fn d_is_named_once_at_most() {
        use dsl_core::atom::tma::TmaSwizzleMode;
        use dsl_core::atom::ValType;
        let map = |operand| GemmArg::TensorMap {
            operand,
            descriptor: TmaDescriptor {
                elem: ValType::F16,
                global_dims: vec![64, 64],
                global_strides_bytes: vec![128],
                box_dims: vec![64, 64],
                element_strides: vec![1, 1],
                swizzle: TmaSwizzleMode::None,
                l2_promotion: Default::default(),
            },
        };
        let plan = |args| LaunchPlan::new((1, 1, 1), (32, 1, 1), args);
        use GemmArg::*;
        for ok in [
            vec![D, A, B, M, N, K],
            vec![
                map(GemmOperand::D),
                A,
                map(GemmOperand::A),
                map(GemmOperand::B),
            ],
            vec![Table(Arc::new(vec![0, 1])), U32(3), A],
            // A pointer beside the map: the map's buffer, one borrow.
            vec![map(GemmOperand::D), D, A, B],
        ] {
            assert_eq!(plan(ok).check(), Ok(()));
        }
        for (twice, counts) in [
            (
                vec![map(GemmOperand::D), A, B, D, D],
                "2 times as a pointer and 1",
            ),
            (
                vec![map(GemmOperand::D), map(GemmOperand::D)],
                "0 times as a pointer and 2",
            ),
        ] {
            let e = plan(twice).check().unwrap_err();
            let want = format!("its arguments name D {counts} as a tensor map");
            assert!(e.starts_with(&want), "{e}");
        }
    }

    #[test]
    fn a_workspace_is_asked_for_by_whoever_names_it() {
        use GemmArg::*;
        let reduce = LaunchPlan::new((4, 1, 1), (256, 1, 1), vec![Workspace, D, U32(8)]);
        let mut split = LaunchPlan::new((132, 1, 1), (384, 1, 1), vec![A, B, Workspace]);
        split.then = Some(Box::new(reduce.clone()));
        let e = split.check().unwrap_err();
        assert_eq!(e, "its arguments name the workspace, and it asks for none");
        split.workspace = 1 << 20;
        assert_eq!(split.check(), Ok(()));
        // The reduction names D once itself, apart from the main launch.
        split.args.push(D);
        assert_eq!(split.check(), Ok(()));
        let mut twice = reduce.clone();
        twice.args.push(D);
        split.then = Some(Box::new(twice));
        assert!(split
            .check()
            .unwrap_err()
            .starts_with("its arguments name D 2 times as a pointer"));
        let mut chained = reduce.clone();
        chained.then = Some(Box::new(reduce));
        split.then = Some(Box::new(chained));
        assert_eq!(
            split.check().unwrap_err(),
            "a launch after the main one has another after it"
        );
    }
}
