//! The GEMM program seam: the trait every GEMM program implements, and what crosses it.
//!
//! A program ([`GemmProgram`]) names its schedule type ([`GemmProgram::Schedule`]: how
//! `--config` is spelled for it, parsed once into a typed value), says which problems it takes
//! on which device and why not, and makes a [`Plan`] for those it takes: a scheduled program
//! ([`ProgramPlan`]) that generates its kernel and says how to launch it — grid, block,
//! cluster, dynamic shared memory and the kernel's parameters in order
//! ([`LaunchPlan`], [`GemmArg`](super::GemmArg)). The runtime (`Gemm`,
//! feature `gpu`) compiles each plan once, keyed by the plan, and builds the arguments from the
//! call's operands; `check` (with [`KernelChoice::Auto`]), the command line (`rute gemm --kernel
//! NAME --config SPEC`), the suites and the tests iterate the programs
//! ([`PROGRAMS`](super::PROGRAMS), each seen through [`AnyProgram`]).
//!
//! A `--config` is parsed at the edge into a [`Config`]: for one program, its typed schedule;
//! for `auto`, each program's parse of it. The typed value crosses the seam; nothing parses it
//! again.
//!
//! Adding a program is its module and one line in `PROGRAMS`: a struct, its [`GemmProgram`]
//! and [`ProgramPlan`] impls. Here one that runs the naive kernel for f16 only, and has no
//! schedules ([`NoSchedule`]):
//!
//! ```
//! use dsl_core::ir::Kernel;
//! use half::f16;
//! use kernels::gemm::naive::gemm_naive;
//! use kernels::gemm::{
//!     check, Accum, BufferLens, Device, GemmArg, GemmDtype, GemmProgram, KernelBuildError,
//!     KernelChoice, LaunchPlan, NoSchedule, Plan, Problem, ProgramPlan,
//! };
//!
//! /// The program: which problems it takes, and its plan for them.
//! struct Tiny;
//!
//! impl GemmProgram for Tiny {
//!     type Schedule = NoSchedule;
//!     fn name(&self) -> &'static str {
//!         "tiny"
//!     }
//!     fn summary(&self) -> &'static str {
//!         "the naive kernel, f16 only"
//!     }
//!     fn config_syntax(&self) -> &'static str {
//!         "none (it has no configurations)"
//!     }
//!     fn plan(&self, p: &Problem, _: &Device, _: Option<&NoSchedule>) -> Result<Plan, String> {
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
//!     fn launch(&self, m: u32, n: u32, _k: u32, _device: &Device) -> LaunchPlan {
//!         use GemmArg::*;
//!         LaunchPlan::new((n.div_ceil(16), m.div_ceil(16), 1), (16, 16, 1), vec![D, A, B, M, N, K])
//!     }
//! }
//!
//! // Registered, it is one line in PROGRAMS (`&tiny::Tiny,`) and `--kernel tiny` names it; a
//! // program outside the list runs when asked for by value.
//! static TINY: Tiny = Tiny;
//! let p = Problem {
//!     m: 100, n: 70, k: 13, dtype: GemmDtype::F16, acc: Accum::F32,
//!     kernel: KernelChoice::Program(&TINY), config: None,
//! };
//! let device = Device::h200();
//! let plan = check(&p, BufferLens::for_shape(100, 70, 13).unwrap(), &device).unwrap();
//! assert_eq!((plan.program(), plan.describe()), ("tiny", "tiny f16 (f32 acc)".to_string()));
//! assert_eq!(plan.launch(100, 70, 13, &device).grid, (5, 7, 1));
//! let bf16 = Problem { dtype: GemmDtype::Bf16, ..p };
//! let e = check(&bf16, BufferLens::for_shape(100, 70, 13).unwrap(), &device).unwrap_err();
//! assert_eq!(e.to_string(), "the tiny kernel cannot run this problem: it takes f16 with an f32 sum, not bf16 with f32");
//! ```

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use thiserror::Error;

use super::device::Device;
use super::launch_plan::LaunchPlan;
use super::layout::Form;
use super::{Accum, GemmDtype};

/// A GEMM problem: `D (m x n) = A (m x k) * B (n x k)^T` with its types, the program asked for
/// and its schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Rows of A and D.
    pub m: usize,
    /// Rows of B, columns of D.
    pub n: usize,
    /// Columns of A and B (the contiguous axis of both).
    pub k: usize,
    /// Element type of A, B and D.
    pub dtype: GemmDtype,
    /// The type products are summed in.
    pub acc: Accum,
    /// The program asked for.
    pub kernel: KernelChoice,
    /// The schedule asked for (`rute gemm --config`, parsed; `None`: the program's default for
    /// the shape and the device).
    pub config: Option<Config>,
}

/// What a program's schedule is: a typed value, spelled by `Display` and read by `FromStr`.
pub trait Schedule:
    FromStr<Err: fmt::Display> + fmt::Display + fmt::Debug + Clone + Send + Sync + 'static
{
}

impl<S> Schedule for S where
    S: FromStr<Err: fmt::Display> + fmt::Display + fmt::Debug + Clone + Send + Sync + 'static
{
}

/// A GEMM program: `D (m x n) = A (m x k) * B (n x k)^T`, A, B and D row-major (K contiguous in
/// A and B).
pub trait GemmProgram: Sync + 'static {
    /// Its schedules: how `--config` is spelled for it, as a typed value ([`NoSchedule`] for a
    /// program that has none).
    type Schedule: Schedule;

    /// The name `rute gemm --kernel NAME` takes (`naive`, `multistage`), unique among the
    /// programs of a build.
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

    /// Whether [`KernelChoice::Auto`] may choose the program on `target`. The default: where it
    /// runs ([`GemmProgram::runs_on`]). A program that has not run on a target's hardware yet
    /// says no there, so that it runs only when asked for by name.
    fn auto_picks(&self, target: Target) -> bool {
        self.runs_on(target)
    }

    /// The plan for `problem` (shape and types already checked by `check`) on `device`: the
    /// default schedule for the shape and the device when `schedule` is `None`, else
    /// `schedule`; or why this program cannot run the problem, as a clause ("K = 13 is not a
    /// multiple of 8, ..."). Adaptations to the target (an instruction it lacks) are made here,
    /// so that the plan is what runs.
    fn plan(
        &self,
        problem: &Problem,
        device: &Device,
        schedule: Option<&Self::Schedule>,
    ) -> Result<Plan, String>;

    /// The plan for `problem` in `form` (operand majors, leading dimensions, a batch, an
    /// epilogue, D's type: [`Form`]), checked by `check_form`; or why this program cannot run
    /// it. A plan made here launches through [`ProgramPlan::launch_form`]. The default takes
    /// the packed form only ([`Form::is_packed`]), through [`GemmProgram::plan`]: a program
    /// that computes other forms overrides it, and plans the packed form as `plan` does.
    fn plan_form(
        &self,
        problem: &Problem,
        form: &Form,
        device: &Device,
        schedule: Option<&Self::Schedule>,
    ) -> Result<Plan, String> {
        packed_only(problem, form)?;
        let plan = self.plan(problem, device, schedule)?;
        aligned_for(&plan, form, problem.dtype)?;
        Ok(plan)
    }
}

/// `Ok` where every row of A, B and D in `form` (with inputs of `dtype`) starts as aligned as
/// `plan`'s copies need ([`ProgramPlan::operand_alignment`], [`ProgramPlan::output_alignment`];
/// [`Form::row_alignment`]), else why not, as a clause.
pub fn aligned_for(plan: &Plan, form: &Form, dtype: super::GemmDtype) -> Result<(), String> {
    use super::layout::Operand;
    let out = form.out_type(dtype).bytes();
    for (operand, name, bytes, needs) in [
        (Operand::A, "A", dtype.bytes(), plan.operand_alignment()),
        (Operand::B, "B", dtype.bytes(), plan.operand_alignment()),
        (Operand::D, "D", out, plan.output_alignment()),
    ] {
        let has = form.row_alignment(operand, bytes);
        if has < needs {
            return Err(format!(
                "its copies need rows of {name} aligned to {needs} bytes, and they are aligned \
                 to {has}"
            ));
        }
    }
    Ok(())
}

/// `Ok` for the packed form of `problem`, else what a program that computes only that form
/// does not do, as a clause: the first part of `form` that differs from it.
pub fn packed_only(problem: &Problem, form: &Form) -> Result<(), String> {
    let (m, n, k, dtype) = (problem.m, problem.n, problem.k, problem.dtype);
    if form.is_packed(m, n, k, dtype) {
        return Ok(());
    }
    let packed = Form::packed(m, n, k);
    let why = if form.a != packed.a || form.b != packed.b {
        format!(
            "it reads A and B K-major and packed (ld = K = {k}), not A {} and B {}",
            form.a, form.b
        )
    } else if form.ldd != n {
        format!(
            "it writes D packed (ld = N = {n}), not with ldd = {}",
            form.ldd
        )
    } else if form.batch.is_batched() {
        format!(
            "it runs one GEMM per call, not a batch of {}",
            form.batch.count
        )
    } else if form.epilogue != super::epilogue::Epilogue::Plain {
        format!("it has no fused epilogue ({})", form.epilogue.describe())
    } else {
        format!("it writes D as {dtype}, not {}", form.out_type(dtype))
    };
    Err(why)
}

/// The schedule of a program that has none: no value (so `plan` is only ever asked for its
/// default), and every spelling refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoSchedule {}

impl fmt::Display for NoSchedule {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

impl FromStr for NoSchedule {
    type Err = String;
    fn from_str(spelling: &str) -> Result<Self, String> {
        Err(format!("it takes no --config, and `{spelling}` was given"))
    }
}

/// A [`GemmProgram`] with its schedule type erased: what the list of programs, `check` and the
/// command line hold. Every `GemmProgram` is one.
pub trait AnyProgram: Sync {
    /// [`GemmProgram::name`].
    fn name(&self) -> &'static str;
    /// [`GemmProgram::summary`].
    fn summary(&self) -> &'static str;
    /// [`GemmProgram::config_syntax`].
    fn config_syntax(&self) -> &'static str;
    /// [`GemmProgram::runs_on`].
    fn runs_on(&self, target: Target) -> bool;
    /// [`GemmProgram::auto_picks`].
    fn auto_picks(&self, target: Target) -> bool;
    /// The program's schedule spelled `spelling`, parsed; the error a clause naming it.
    fn parse_schedule(&self, spelling: &str) -> Result<AnySchedule, String>;
    /// [`GemmProgram::plan`], `schedule` one of this program's (else refused).
    fn plan_any(
        &self,
        problem: &Problem,
        device: &Device,
        schedule: Option<&AnySchedule>,
    ) -> Result<Plan, String>;
    /// [`GemmProgram::plan_form`], `schedule` one of this program's (else refused).
    fn plan_form_any(
        &self,
        problem: &Problem,
        form: &Form,
        device: &Device,
        schedule: Option<&AnySchedule>,
    ) -> Result<Plan, String>;
}

impl<P: GemmProgram> AnyProgram for P {
    fn name(&self) -> &'static str {
        GemmProgram::name(self)
    }

    fn summary(&self) -> &'static str {
        GemmProgram::summary(self)
    }

    fn config_syntax(&self) -> &'static str {
        GemmProgram::config_syntax(self)
    }

    fn runs_on(&self, target: Target) -> bool {
        GemmProgram::runs_on(self, target)
    }

    fn auto_picks(&self, target: Target) -> bool {
        GemmProgram::auto_picks(self, target)
    }

    fn parse_schedule(&self, spelling: &str) -> Result<AnySchedule, String> {
        let schedule: P::Schedule = spelling.parse().map_err(|e| format!("{e}"))?;
        Ok(AnySchedule::of(self, schedule))
    }

    fn plan_any(
        &self,
        problem: &Problem,
        device: &Device,
        schedule: Option<&AnySchedule>,
    ) -> Result<Plan, String> {
        self.plan(problem, device, typed_schedule::<P>(schedule)?)
    }

    fn plan_form_any(
        &self,
        problem: &Problem,
        form: &Form,
        device: &Device,
        schedule: Option<&AnySchedule>,
    ) -> Result<Plan, String> {
        self.plan_form(problem, form, device, typed_schedule::<P>(schedule)?)
    }
}

/// `schedule` as `P`'s own type, or why it is another program's.
fn typed_schedule<P: GemmProgram>(
    schedule: Option<&AnySchedule>,
) -> Result<Option<&P::Schedule>, String> {
    match schedule {
        None => Ok(None),
        Some(s) => s.downcast_ref::<P::Schedule>().map(Some).ok_or_else(|| {
            format!(
                "`{s}` is a schedule of the {} kernel, not of this one",
                s.program()
            )
        }),
    }
}

/// One program's schedule with its type erased: the program it belongs to, its spelling and
/// the value. Cloning is cheap.
#[derive(Clone)]
pub struct AnySchedule {
    program: &'static str,
    spelling: Arc<str>,
    value: Arc<dyn Any + Send + Sync>,
}

impl AnySchedule {
    /// `program`'s `schedule`.
    pub fn of<P: GemmProgram + ?Sized>(program: &P, schedule: P::Schedule) -> AnySchedule {
        AnySchedule {
            program: GemmProgram::name(program),
            spelling: schedule.to_string().into(),
            value: Arc::new(schedule),
        }
    }

    /// The program it is a schedule of.
    pub fn program(&self) -> &'static str {
        self.program
    }

    /// The value, if it is an `S`.
    pub fn downcast_ref<S: 'static>(&self) -> Option<&S> {
        self.value.downcast_ref()
    }
}

impl fmt::Display for AnySchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spelling)
    }
}

impl fmt::Debug for AnySchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.program, self.spelling)
    }
}

/// A schedule asked for (`--config`, `Gemm::with_config`): its spelling, parsed once by each
/// program it may go to (one program's, or for `auto` every program's, each a schedule or the
/// program's reason for refusing the spelling), or a typed schedule given as a value
/// ([`Config::of`]). Made at the edge (the parse: `Config::parse`); `check` hands each program its
/// own parse.
#[derive(Clone)]
pub struct Config {
    spelling: Arc<str>,
    parsed: Arc<[(&'static str, Result<AnySchedule, String>)]>,
    origin: Origin,
}

impl Config {
    /// `program`'s `schedule`, given as a value.
    pub fn of<P: GemmProgram + ?Sized>(program: &P, schedule: P::Schedule) -> Config {
        let schedule = AnySchedule::of(program, schedule);
        Config {
            spelling: schedule.to_string().into(),
            parsed: Arc::new([(GemmProgram::name(program), Ok(schedule))]),
            origin: Origin::Given,
        }
    }

    /// `spelling` as each of `programs` parses it; `None` if none of them takes it, with each
    /// one's reason.
    pub fn parse_with(
        programs: &[&dyn AnyProgram],
        spelling: &str,
    ) -> Result<Config, Vec<(&'static str, String)>> {
        let parsed: Vec<(&'static str, Result<AnySchedule, String>)> = programs
            .iter()
            .map(|p| (p.name(), p.parse_schedule(spelling)))
            .collect();
        if parsed.iter().any(|(_, r)| r.is_ok()) {
            Ok(Config {
                spelling: spelling.into(),
                parsed: parsed.into(),
                origin: Origin::Given,
            })
        } else {
            Err(parsed
                .into_iter()
                .map(|(name, r)| (name, r.err().unwrap_or_default()))
                .collect())
        }
    }

    /// The same schedules, chosen by the runtime from a tuning record kept in `file`.
    pub fn from_record(self, file: impl Into<Arc<str>>) -> Config {
        Config {
            origin: Origin::Record { file: file.into() },
            ..self
        }
    }

    /// The spelling as given.
    pub fn spelling(&self) -> &str {
        &self.spelling
    }

    /// Where the schedule came from: given, or a tuning record.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The schedule for the program called `program`, or why there is none: the program refused
    /// the spelling, or it was not parsed for that program.
    pub fn schedule_for(&self, program: &str) -> Result<&AnySchedule, String> {
        match self.parsed.iter().find(|(name, _)| *name == program) {
            Some((_, Ok(s))) => Ok(s),
            Some((_, Err(reason))) => Err(reason.clone()),
            None => Err(format!(
                "the configuration `{}` was given for the {} kernel, not this one",
                self.spelling,
                self.parsed
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(" or ")
            )),
        }
    }
}

impl fmt::Display for Config {
    /// The spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spelling)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Config({:?}, {:?})", self.spelling, self.origin)
    }
}

impl PartialEq for Config {
    /// Equal spellings parsed for the same programs (each program's parse is a function of the
    /// spelling) from the same place.
    fn eq(&self, other: &Config) -> bool {
        self.spelling == other.spelling
            && self.origin == other.origin
            && self
                .parsed
                .iter()
                .map(|(n, r)| (n, r.is_ok()))
                .eq(other.parsed.iter().map(|(n, r)| (n, r.is_ok())))
    }
}

impl Eq for Config {}

/// Where a plan's schedule came from, for its description.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Given (`--config`, `Gemm::with_config`, a schedule by value).
    Given,
    /// A tuning record (`rute tune`) kept in this file.
    Record {
        /// The tuning file.
        file: Arc<str>,
    },
    /// A row of the program's table of defaults, measured in a results file.
    Table {
        /// The row's shape class, in words.
        row: &'static str,
        /// The results file that measured it.
        results: &'static str,
    },
    /// The program's cost model, for a shape between its table's rows.
    Model,
}

impl fmt::Display for Origin {
    /// `a tuning record in FILE`, `the table's row for ROW (RESULTS)`, `the cost model`, or
    /// `given`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Given => write!(f, "given"),
            Origin::Record { file } => write!(f, "a tuning record in {file}"),
            Origin::Table { row, results } => write!(f, "the table's row for {row} ({results})"),
            Origin::Model => write!(f, "the cost model"),
        }
    }
}

/// A scheduled program for one problem class: what the runtime compiles (once, cached by
/// [`key`](ProgramPlan::key)) and how it launches it.
///
/// # Safety
///
/// The runtime launches [`kernel`](ProgramPlan::kernel) (and [`reduction`](ProgramPlan::reduction))
/// as [`launch`](ProgramPlan::launch) says, with the operands of a `Gemm::run` that passed
/// `check`: A, B and D of at least `m*k`, `n*k` and `m*n` elements, aligned as the plan asks, D
/// and a main launch's workspace writable, everything else read; or, for a plan made by
/// [`GemmProgram::plan_form`], as [`launch_form`](ProgramPlan::launch_form) says with operands
/// of at least the form's spans ([`Form::spans`]: A, B, C, D, the bias and the residual). The
/// implementer promises that for every problem the plan was made for, those kernels with those
/// launches access only those buffers, inside their lengths (D, C and the residual only inside
/// their `m x columns` extents, never between a row's end and its leading dimension), write
/// only D and the workspace, and leave every element of D's extents a valid value; the runtime
/// relies on it to be safe.
pub unsafe trait ProgramPlan: Any + fmt::Debug + Send + Sync {
    /// The [`GemmProgram::name`] of the program that made it.
    fn program(&self) -> &'static str;

    /// Unique per distinct kernel among this program's plans (types, schedule spelled by its
    /// `Display`, target adaptations): with the program's name, the compile cache's key.
    fn key(&self) -> String;

    /// A few words: which program runs and its schedule, e.g. `multistage f16 (f32 acc,
    /// 128x256x32 tile, 4 stages, 2x4 warps, rasterized, stmatrix epilogue)`.
    fn describe(&self) -> String;

    /// The kernel, generated with the plan's schedule (PTX entry: [`entry`]).
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

    /// The launch for an `m x n x k` problem (one the program's `plan` took) on `device`. The
    /// arguments must name D at most once as a pointer and once as a tensor map (the runtime
    /// borrows it mutably once), see [`LaunchPlan::check`].
    fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan;

    /// The launch for an `m x n x k` problem in `form` (one the program's `plan_form` took): its
    /// leading dimensions, batch strides and scalars among the arguments. The default, for a
    /// plan of the packed form only: [`ProgramPlan::launch`].
    fn launch_form(&self, m: u32, n: u32, k: u32, form: &Form, device: &Device) -> LaunchPlan {
        let _ = form;
        self.launch(m, n, k, device)
    }

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
    pub fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan {
        self.plan.launch(m, n, k, device)
    }

    /// [`ProgramPlan::launch_form`].
    pub fn launch_form(&self, m: u32, n: u32, k: u32, form: &Form, device: &Device) -> LaunchPlan {
        self.plan.launch_form(m, n, k, form, device)
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

/// Why a plan's kernel could not be generated (a bug in the program or its schedule: the plan's
/// checks passed).
#[derive(Debug, Error)]
pub enum KernelBuildError {
    /// The `#[kernel]` builder failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The program refused its schedule or failed in its own way.
    #[error("{source}")]
    Program {
        /// The program's name.
        program: &'static str,
        /// The program's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl KernelBuildError {
    /// `error`, from the program `program`.
    pub fn program(
        program: &'static str,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> KernelBuildError {
        KernelBuildError::Program {
            program,
            source: Box::new(error),
        }
    }
}

/// Which program computes the product.
#[derive(Clone, Copy)]
pub enum KernelChoice {
    /// The first program of the build's list (`PROGRAMS`) that runs the problem (with a
    /// schedule, the first that takes its spelling and runs the problem), of those it may
    /// choose on the device's target ([`GemmProgram::auto_picks`]).
    Auto,
    /// This program (one of the list by `KernelChoice::named`, or any other by value).
    Program(&'static dyn AnyProgram),
}

impl KernelChoice {
    /// The name the command line takes and prints: `auto` or the program's.
    pub fn name(&self) -> &'static str {
        match self {
            KernelChoice::Auto => "auto",
            KernelChoice::Program(p) => p.name(),
        }
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
