//! `Gemm`: the runtime call. Checks inputs, picks the plan, JIT-compiles each plan once, builds
//! the plan's arguments from the call's operands and launches on the `Jit`'s stream.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use codegen_ptx::jit::{
    CudaSlice, DeviceRepr, ForeignBuffer, Jit, JitError, JitFunction, KernelArg, TensorMap,
    TensorMapSpec,
};
use codegen_ptx::{emit, CodegenError};
use cudarc::driver::sys::CUdevice_attribute as A;
use dsl_core::ir::Target;
use thiserror::Error;

use super::check::{BufferLens, InputError};
use super::device::Device;
use super::launch_plan::{GemmOperand, LaunchPlan};
use super::program::{Config, KernelBuildError, Plan, Problem};
use super::programs::ConfigError;
use super::tuning::Tuned;
use super::{Accum, GemmElem, KernelChoice};

mod launch;
mod raw;
use launch::{LaunchBuffers, Pointer, Scratch};
pub use raw::{RawBuffer, RawBuffers};

/// Why a GEMM did not run (or, for `Jit`, why the device refused or faulted).
#[derive(Debug, Error)]
pub enum GemmError {
    /// The shapes, lengths or options were refused before anything was launched.
    #[error("{0}")]
    Input(#[from] InputError),
    /// The schedule's spelling (`Gemm::with_config`) is no program's.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A buffer the runtime's stream cannot use safely: allocated in another CUDA context (its
    /// address means nothing there), or on another stream that cudarc's event tracking cannot
    /// order with the runtime's (see `codegen_ptx::jit::admit`). Buffers of another `Jit` or
    /// another created stream of the same context are ordered, not refused.
    #[error("buffer {buffer} {error}")]
    ForeignBuffer {
        /// "A", "B" or "D".
        buffer: &'static str,
        /// Both owners and the reason.
        error: Box<ForeignBuffer>,
    },
    /// A buffer's start address is not aligned as the plan's kernel reads or writes it.
    #[error("buffer {buffer} starts at {address:#x}, not a multiple of {needs} bytes as the {plan} kernel's copies need")]
    Misaligned {
        /// "A", "B" or "D".
        buffer: &'static str,
        /// Its device address.
        address: u64,
        /// The alignment needed.
        needs: u64,
        /// The plan, described.
        plan: String,
    },
    /// The device predates the instructions every GEMM here uses (bf16 conversions: sm_80).
    #[error("the GEMMs need compute capability 8.0 or newer; this device is {major}.{minor}")]
    DeviceTooOld {
        /// Major compute capability.
        major: u32,
        /// Minor compute capability.
        minor: u32,
    },
    /// Generating the plan's kernel failed (a bug in the kernel or its configuration).
    #[error("generating {plan} failed: {source}")]
    Build {
        /// The plan, described.
        plan: String,
        /// The builder's error.
        source: Box<KernelBuildError>,
    },
    /// The plan's launch names arguments the runtime cannot make (a bug in the program: see
    /// `LaunchPlan::check`).
    #[error("the launch of {plan} cannot be made: {reason}")]
    BadLaunch {
        /// The plan, described.
        plan: String,
        /// Why, as a clause.
        reason: String,
    },
    /// Emitting the plan's PTX failed (a bug in the kernel's targets or in codegen).
    #[error("emitting {plan} for {target} failed: {source}")]
    Codegen {
        /// The plan, described.
        plan: String,
        /// The target.
        target: Target,
        /// Codegen's error.
        source: CodegenError,
    },
    /// The JIT runtime or the driver refused, or the work faulted.
    #[error("{0}")]
    Jit(#[from] JitError),
    /// cuBLAS (the reference) failed or is missing.
    #[error("cuBLAS: {0}")]
    Cublas(String),
}

/// The operands and options of one GEMM: `D (m x n) = A (m x k) * B (n x k)^T`, all three
/// row-major, allocated through the `Jit` the [`Gemm`] was made with.
#[derive(Debug)]
pub struct GemmArgs<'a, T> {
    /// Rows of A and D.
    pub m: usize,
    /// Rows of B, columns of D.
    pub n: usize,
    /// Columns of A and B.
    pub k: usize,
    /// `m * k` elements.
    pub a: &'a CudaSlice<T>,
    /// `n * k` elements.
    pub b: &'a CudaSlice<T>,
    /// `m * n` elements, overwritten.
    pub d: &'a mut CudaSlice<T>,
    /// Accumulator type.
    pub acc: Accum,
    /// Which program.
    pub kernel: KernelChoice,
}

/// The device copies of the tables plans pass their kernels, by content.
type Tables = HashMap<Arc<Vec<u32>>, Arc<CudaSlice<u32>>>;

/// A launch after the main one, with its kernel.
type Then<'l> = (Arc<JitFunction>, &'l LaunchPlan);

/// The launches of plans made so far, by plan and `(m, n, k)`.
type Launches = HashMap<(Plan, (u32, u32, u32)), Arc<LaunchPlan>>;

/// A plan's loaded kernels: the main one and its reduction, if it has one.
#[derive(Clone)]
struct Loaded {
    main: Arc<JitFunction>,
    reduction: Option<Arc<JitFunction>>,
    /// Whether the main kernel waits for the grid before it (`griddepcontrol.wait`), which a
    /// programmatic launch of it needs ([`programmatic_contract`]).
    main_waits: bool,
}

/// Why `launch` may not be a programmatic launch of a kernel that `waits` (or not) for the grid
/// before it, if it may not: such a launch can start while the stream's previous kernel runs,
/// so the kernel must wait for it (`griddepcontrol.wait`) before it touches the memory they
/// share.
fn programmatic_contract(launch: &LaunchPlan, waits: bool) -> Result<(), String> {
    if launch.programmatic && !waits {
        return Err(
            "it asks for a programmatic launch, and its kernel never waits for the \
                    kernel before it (no griddepcontrol.wait)"
                .into(),
        );
    }
    Ok(())
}

/// The runtime GEMM for one device: owns a cache of compiled plans and one of the tables plans
/// pass their kernels (thread-safe: share it behind an `Arc` or by reference). It plans for the
/// device's facts ([`Device::query`]) and prefers a tuning record's schedule to a program's
/// default ([`Tuned`]: the records of `rute tune`'s file, read when it is made).
pub struct Gemm<'j> {
    jit: JitRef<'j>,
    device: Device,
    config: Option<Config>,
    tuned: Tuned,
    compiled: Mutex<HashMap<Plan, Loaded>>,
    tables: Mutex<Tables>,
    /// The f32 scratch buffer of plans that ask for one
    /// ([`GemmArg::Workspace`](super::launch_plan::GemmArg::Workspace)), grown to the largest
    /// asked for; its lock is held while a GEMM that uses it is queued, so GEMMs from several
    /// threads use it one after the other (in stream order).
    workspace: Mutex<Option<CudaSlice<f32>>>,
    /// Launches made so far, by plan and shape: a plan's `launch` may do host work (layouts, TMA
    /// descriptors) that a loop of same-shaped GEMMs should not pay on every call.
    launches: Mutex<Launches>,
    /// Plans made for forms ([`Gemm::plan_raw`]), by problem and form.
    form_plans: Mutex<raw::FormPlans>,
    /// Launches made for forms, by plan, shape and form.
    form_launches: Mutex<raw::FormLaunches>,
}

/// The `Jit` a [`Gemm`] runs on: borrowed ([`Gemm::new`]) or shared ([`Gemm::on`]).
enum JitRef<'j> {
    Borrowed(&'j Jit),
    Shared(Arc<Jit>),
}

impl std::ops::Deref for JitRef<'_> {
    type Target = Jit;
    fn deref(&self) -> &Jit {
        match self {
            JitRef::Borrowed(j) => j,
            JitRef::Shared(j) => j,
        }
    }
}

/// How many launches [`Gemm`] keeps (it forgets them all when full: shapes that vary without
/// bound pay the plan's host work each call, and memory stays bounded).
const MAX_CACHED_LAUNCHES: usize = 4096;

impl Gemm<'static> {
    /// A GEMM runtime that shares `jit` (for a handle that owns its runtime, such as
    /// `kernels::Blas`): as [`Gemm::new`].
    pub fn on(jit: Arc<Jit>) -> Result<Self, GemmError> {
        Gemm::with_jit(JitRef::Shared(jit))
    }
}

impl std::fmt::Debug for Gemm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gemm")
            .field("device", &self.device)
            .field("compiled", &self.compiled_plans())
            .finish_non_exhaustive()
    }
}

/// The PTX target for a device: its own `a` target where rute has one (sm_90a on 9.0, sm_100a
/// on 10.0), otherwise sm_80 PTX, which the driver JIT-compiles for any newer device.
pub fn target_for(compute_capability: (u32, u32)) -> Result<Target, GemmError> {
    match compute_capability {
        (9, 0) => Ok(Target::Sm90a),
        (10, 0) => Ok(Target::Sm100a),
        (major, _) if major >= 8 => Ok(Target::Sm80),
        (major, minor) => Err(GemmError::DeviceTooOld { major, minor }),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Entries go in whole, so a panic elsewhere cannot leave a half-made one behind.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<'j> Gemm<'j> {
    /// A GEMM runtime on `jit`'s device, with the tuning records of the default file
    /// ([`Tuned::from_default_file`]). Refuses devices older than sm_80.
    pub fn new(jit: &'j Jit) -> Result<Self, GemmError> {
        Gemm::with_jit(JitRef::Borrowed(jit))
    }

    fn with_jit(jit: JitRef<'j>) -> Result<Self, GemmError> {
        Ok(Gemm {
            device: Device::query(&jit)?,
            jit,
            config: None,
            tuned: Tuned::from_default_file(),
            compiled: Mutex::new(HashMap::new()),
            tables: Mutex::new(HashMap::new()),
            workspace: Mutex::new(None),
            launches: Mutex::new(HashMap::new()),
            form_plans: Mutex::new(HashMap::new()),
            form_launches: Mutex::new(HashMap::new()),
        })
    }

    /// The `Jit` it launches on.
    pub fn jit(&self) -> &Jit {
        &self.jit
    }

    /// Run every GEMM in the schedule spelled `spelling` (`rute gemm --config`, e.g.
    /// `128x256x32s4_r2_se` for the multistage program), instead of the program's default for
    /// the shape: parsed here, once, by every program ([`Config::parse`] for `auto`); each call
    /// runs its program's parse. With [`KernelChoice::Auto`] the first program that takes the
    /// spelling and the problem runs.
    pub fn with_config(self, spelling: &str) -> Result<Self, GemmError> {
        Ok(self.with_schedule(Config::parse(KernelChoice::Auto, spelling)?))
    }

    /// Run every GEMM in `config`'s schedule (parsed already, or given as a value:
    /// [`Config::of`]).
    pub fn with_schedule(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Plan with `tuned`'s records in place of the default file's (none: `Tuned::default()`).
    pub fn with_tuning(mut self, tuned: Tuned) -> Self {
        self.tuned = tuned;
        self
    }

    /// The device plans are made for.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The tuning records plans prefer.
    pub fn tuning(&self) -> &Tuned {
        &self.tuned
    }

    /// The PTX target plans are emitted for.
    pub fn target(&self) -> Target {
        self.device.target
    }

    /// Plans compiled so far, in no particular order.
    pub fn compiled_plans(&self) -> Vec<Plan> {
        lock(&self.compiled).keys().cloned().collect()
    }

    /// How many distinct tables ([`GemmArg::Table`](super::launch_plan::GemmArg::Table)) are on
    /// the device.
    pub fn cached_tables(&self) -> usize {
        lock(&self.tables).len()
    }

    /// The compiled kernel of `plan`: generated, emitted and loaded on first use, from the cache
    /// after. The cache lock is held while compiling, so a plan compiles once even when several
    /// threads ask for it at the same time.
    pub fn function(&self, plan: &Plan) -> Result<Arc<JitFunction>, GemmError> {
        Ok(self.loaded(plan)?.main)
    }

    /// `plan`'s kernels, compiled and loaded once (see [`Gemm::function`]).
    fn loaded(&self, plan: &Plan) -> Result<Loaded, GemmError> {
        let mut compiled = lock(&self.compiled);
        if let Some(f) = compiled.get(plan) {
            return Ok(f.clone());
        }
        let kernel = plan.kernel().map_err(|source| GemmError::Build {
            plan: plan.describe(),
            source: Box::new(source),
        })?;
        let (main, main_waits) = self.load(plan, &kernel, &plan.entry())?;
        let main = Arc::new(main);
        let reduction = match plan.reduction() {
            None => None,
            Some(kernel) => {
                let kernel = kernel.map_err(|source| GemmError::Build {
                    plan: plan.describe(),
                    source: Box::new(source),
                })?;
                Some(Arc::new(self.load(plan, &kernel, &kernel.name)?.0))
            }
        };
        let loaded = Loaded {
            main,
            reduction,
            main_waits,
        };
        compiled.insert(plan.clone(), loaded.clone());
        Ok(loaded)
    }

    /// `plan`'s kernels ([`Gemm::loaded`]), checked against `launch`: a programmatic launch
    /// only of a main kernel that waits for the grid before it, a launch after the main one only
    /// with a reduction kernel. Returns the main kernel, and the launch after it with its kernel
    /// where `launch` has one.
    fn kernels_for<'l>(
        &self,
        plan: &Plan,
        launch: &'l LaunchPlan,
    ) -> Result<(Arc<JitFunction>, Option<Then<'l>>), GemmError> {
        let loaded = self.loaded(plan)?;
        let bad = |reason| GemmError::BadLaunch {
            plan: plan.describe(),
            reason,
        };
        programmatic_contract(launch, loaded.main_waits).map_err(bad)?;
        let reduction = match (&launch.then, loaded.reduction) {
            (None, _) => None,
            (Some(then), Some(f)) => Some((f, then.as_ref())),
            (Some(_), None) => {
                return Err(bad(
                    "it asks for a launch after the main one, and has no reduction kernel".into(),
                ))
            }
        };
        Ok((loaded.main, reduction))
    }

    /// Emits `kernel` of `plan` for the target, loads it and finds its entry `entry`; and
    /// whether it waits on the grids it depends on (`Kernel::waits_on_grids`).
    fn load(
        &self,
        plan: &Plan,
        kernel: &dsl_core::ir::Kernel,
        entry: &str,
    ) -> Result<(JitFunction, bool), GemmError> {
        let ptx = emit(kernel, self.device.target).map_err(|source| GemmError::Codegen {
            plan: plan.describe(),
            target: self.device.target,
            source,
        })?;
        Ok((
            self.jit.load(&ptx)?.function(entry)?,
            kernel.waits_on_grids(),
        ))
    }

    /// The device copy of `table`: uploaded on first use, from the cache after.
    fn table(&self, table: &Arc<Vec<u32>>) -> Result<Arc<CudaSlice<u32>>, GemmError> {
        let mut tables = lock(&self.tables);
        if let Some(t) = tables.get(table) {
            return Ok(Arc::clone(t));
        }
        let t = Arc::new(self.jit.upload(table.as_slice())?);
        tables.insert(Arc::clone(table), Arc::clone(&t));
        Ok(t)
    }

    /// Checks `args` (see [`check`](super::check()): shapes, lengths, types, the program's
    /// limits on this device, a tuning record's schedule preferred where one runs the problem;
    /// then that every buffer lives in this runtime's context and A, B and D start as aligned as
    /// the kernel reads and writes them), then queues the GEMM on the `Jit`'s stream and returns
    /// the plan it ran. Nothing is launched when a check fails. A fault inside the kernel shows at
    /// the next synchronisation (`Jit::download`, `Jit::synchronize`). `args` is taken by value:
    /// D is borrowed mutably for the launch, so that its write is ordered with its other users.
    pub fn run<T: GemmElem + DeviceRepr>(&self, args: GemmArgs<'_, T>) -> Result<Plan, GemmError> {
        let problem = Problem {
            m: args.m,
            n: args.n,
            k: args.k,
            dtype: T::DTYPE,
            acc: args.acc,
            kernel: args.kernel,
            config: self.config.clone(),
        };
        let lens = BufferLens {
            a: args.a.len(),
            b: args.b.len(),
            d: args.d.len(),
        };
        let plan = self.tuned.check(&problem, lens, &self.device)?;
        self.check_context("A", args.a)?;
        self.check_context("B", args.b)?;
        self.check_context("D", args.d)?;
        for (buffer, slice, needs) in [
            ("A", args.a, plan.operand_alignment()),
            ("B", args.b, plan.operand_alignment()),
            ("D", &*args.d, plan.output_alignment()),
        ] {
            if let Some(address) = self.jit.buffer(slice).address() {
                if !address.is_multiple_of(needs) {
                    return Err(GemmError::Misaligned {
                        buffer,
                        address,
                        needs,
                        plan: plan.describe(),
                    });
                }
            }
        }
        // check() bounded every dimension by i32::MAX, so these conversions cannot fail.
        let dim = |v: usize| u32::try_from(v).map_err(|_| unreachable_dim(v));
        let mnk = (dim(args.m)?, dim(args.n)?, dim(args.k)?);
        let launch = self.launch_of(&plan, mnk)?;
        let (main, reduction) = self.kernels_for(&plan, &launch)?;
        let mut workspace = lock(&self.workspace);
        let scratch = if launch.workspace > 0 {
            Some(self.workspace_of(&mut workspace, launch.workspace)?)
        } else {
            None
        };
        let operands = Operands {
            a: args.a,
            b: args.b,
        };
        match scratch {
            None => self.launch(&main, &launch, mnk, &operands, args.d, None)?,
            Some(ws) => {
                self.launch(
                    &main,
                    &launch,
                    mnk,
                    &operands,
                    args.d,
                    Some(Scratch::Written(ws)),
                )?;
                if let Some((f, then)) = reduction {
                    self.launch(&f, then, mnk, &operands, args.d, Some(Scratch::Read(ws)))?;
                }
            }
        }
        Ok(plan)
    }

    /// `plan`'s launch for `mnk` on this device, checked ([`LaunchPlan::check`]): made once per
    /// plan and shape, from the cache after.
    fn launch_of(&self, plan: &Plan, mnk: (u32, u32, u32)) -> Result<Arc<LaunchPlan>, GemmError> {
        cached_launch(&self.launches, (plan.clone(), mnk), plan, || {
            plan.launch(mnk.0, mnk.1, mnk.2, &self.device)
        })
    }

    /// The workspace, grown to at least `elems` f32 elements. Growing frees the old buffer
    /// (stream-ordered after the GEMMs that used it) and allocates the new one; memory the
    /// device does not have is refused as an error, before anything is launched.
    fn workspace_of<'w>(
        &self,
        slot: &'w mut Option<CudaSlice<f32>>,
        elems: u64,
    ) -> Result<&'w mut CudaSlice<f32>, GemmError> {
        let have = slot.as_ref().map_or(0, |w| w.len() as u64);
        if have < elems {
            *slot = None;
            let len = usize::try_from(elems).map_err(|_| unreachable_dim(usize::MAX))?;
            *slot = Some(self.jit.alloc_zeros::<f32>(len)?);
        }
        Ok(slot.as_mut().expect("allocated above"))
    }

    /// Launches `function` with `plan`'s arguments made from the operands
    /// ([`Gemm::launch_plan`]).
    fn launch<T: GemmElem + DeviceRepr>(
        &self,
        function: &JitFunction,
        plan: &LaunchPlan,
        mnk: (u32, u32, u32),
        &Operands { a, b }: &Operands<'_, T>,
        d: &mut CudaSlice<T>,
        scratch: Option<Scratch<'_>>,
    ) -> Result<(), GemmError> {
        let slices = Slices {
            jit: &self.jit,
            a,
            b,
            d: Some(d),
        };
        // SAFETY: the kernel is the plan's (`ProgramPlan::kernel`, compiled once per plan) and
        // the arguments are the plan's launch made from this call's operands: D (and the
        // workspace a main launch fills) borrowed mutably, A, B and the tables shared, m, n and k
        // checked against the buffers' lengths by `check`. That the kernel stays inside them for
        // this grid and these scalars is the `unsafe` contract of `ProgramPlan`.
        unsafe { self.launch_plan(function, plan, mnk, slices, scratch) }
    }

    fn check_context<T>(
        &self,
        buffer: &'static str,
        slice: &CudaSlice<T>,
    ) -> Result<(), GemmError> {
        check_same_context(&self.jit, buffer, slice)
    }
}

/// The launch in `cache` under `key`, or `make`'s, checked ([`LaunchPlan::check`]) against
/// `plan` and kept there.
fn cached_launch<K: Hash + Eq>(
    cache: &Mutex<HashMap<K, Arc<LaunchPlan>>>,
    key: K,
    plan: &Plan,
    make: impl FnOnce() -> LaunchPlan,
) -> Result<Arc<LaunchPlan>, GemmError> {
    if let Some(l) = lock(cache).get(&key) {
        return Ok(Arc::clone(l));
    }
    let launch = make();
    launch.check().map_err(|reason| GemmError::BadLaunch {
        plan: plan.describe(),
        reason,
    })?;
    let launch = Arc::new(launch);
    insert_bounded(&mut lock(cache), key, Arc::clone(&launch));
    Ok(launch)
}

/// Inserts into a cache of at most [`MAX_CACHED_LAUNCHES`] entries, forgetting them all when
/// it is full.
fn insert_bounded<K: Hash + Eq, V>(cache: &mut HashMap<K, V>, key: K, value: V) {
    if cache.len() >= MAX_CACHED_LAUNCHES {
        cache.clear();
    }
    cache.insert(key, value);
}

/// Dense 16-bit tensor FLOP per SM and clock with an f32 sum: sm_80's `mma.sync` 1024
/// multiply-adds, sm_90's `wgmma` and sm_100's twice that again.
fn tensor_flop_per_clock(cc: (u32, u32)) -> f64 {
    match cc.0 {
        8 => 2048.0,
        9 => 4096.0,
        _ => 8192.0,
    }
}

impl Device {
    /// The device `jit` runs on, as its driver describes it.
    pub fn query(jit: &Jit) -> Result<Device, GemmError> {
        let limits = jit.limits();
        let attr = |a: A| -> Result<u64, GemmError> {
            let v = jit.context().attribute(a).map_err(|e| JitError::Driver {
                call: "cuDeviceGetAttribute",
                reason: e.to_string(),
            })?;
            Ok(u64::try_from(v).unwrap_or(0))
        };
        // The rates only weigh the cost model's terms against each other: a driver that does not
        // say them (the clock attributes are deprecated) gets nominal ones, 1 GHz and 4 TB/s.
        let rate = |a: A, nominal: f64| match attr(a) {
            Ok(v) if v > 0 => v as f64,
            _ => nominal,
        };
        let clock_hz = rate(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1e6) * 1e3;
        let memory_hz = rate(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 2.5e6) * 1e3;
        let bus_bytes = rate(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6400.0) / 8.0;
        let sms = limits.multiprocessors;
        Ok(Device {
            name: jit.device_name()?,
            target: target_for(limits.compute_capability)?,
            sms,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            smem_per_block: limits.max_smem_per_block_optin,
            tensor_flops: f64::from(sms)
                * clock_hz
                * tensor_flop_per_clock(limits.compute_capability),
            // Double data rate.
            dram_bytes_per_s: 2.0 * memory_hz * bus_bytes,
        })
    }
}

/// Refuses `slice` when `jit`'s stream cannot use it (`Jit::check_buffer`).
pub(crate) fn check_same_context<T>(
    jit: &Jit,
    buffer: &'static str,
    slice: &CudaSlice<T>,
) -> Result<(), GemmError> {
    jit.check_buffer(slice)
        .map_err(|error| GemmError::ForeignBuffer {
            buffer,
            error: Box::new(error),
        })
}

/// A GEMM's read operands, as one launch's arguments take them.
struct Operands<'a, T> {
    a: &'a CudaSlice<T>,
    b: &'a CudaSlice<T>,
}

/// The packed call's buffers, allocated through the runtime's `Jit`, as one launch takes them.
struct Slices<'a, T> {
    jit: &'a Jit,
    a: &'a CudaSlice<T>,
    b: &'a CudaSlice<T>,
    /// D until a map or a pointer argument takes it. LaunchPlan::check passed: D is named at
    /// most once as a map and once as a pointer; a map takes it first, and a pointer beside it
    /// is the map's buffer.
    d: Option<&'a mut CudaSlice<T>>,
}

impl<'a, T> Slices<'a, T> {
    fn take_d(&mut self) -> &'a mut CudaSlice<T> {
        self.d
            .take()
            .expect("LaunchPlan::check: D is named at most once of each kind")
    }
}

impl<'a, T: GemmElem + DeviceRepr> LaunchBuffers<'a> for Slices<'a, T> {
    fn tensor_map(
        &mut self,
        operand: GemmOperand,
        spec: &TensorMapSpec,
    ) -> Result<TensorMap<'a>, GemmError> {
        Ok(match operand {
            GemmOperand::A => self.jit.tensor_map(spec, self.a)?,
            GemmOperand::B => self.jit.tensor_map(spec, self.b)?,
            GemmOperand::D => self.jit.tensor_map_mut(spec, self.take_d())?.into(),
            // The packed form has no residual: a plan that maps one is not the packed form's.
            GemmOperand::Residual => {
                return Err(GemmError::BadLaunch {
                    plan: "the packed form's launch".into(),
                    reason: "it maps a residual, which the packed form does not have".into(),
                })
            }
        })
    }

    fn pointer<'m>(&mut self, buffer: Pointer, d_map: Option<&'m TensorMap<'a>>) -> KernelArg<'m> {
        match buffer {
            Pointer::D => match d_map {
                Some(map) => KernelArg::MapBuffer(map),
                None => self.jit.buffer_mut(self.take_d()),
            },
            Pointer::A => self.jit.buffer(self.a),
            Pointer::B => self.jit.buffer(self.b),
            // The packed form's epilogue is `D = acc`: a kernel that takes C, a bias or a
            // residual reads none of them, so each is a null pointer.
            // SAFETY: never dereferenced, as said above.
            Pointer::C | Pointer::Bias | Pointer::Residual => unsafe { KernelArg::raw_pointer(0) },
        }
    }
}

fn unreachable_dim(v: usize) -> GemmError {
    GemmError::Input(InputError::DimTooLarge {
        dim: "a dimension",
        value: v,
        max: super::check::MAX_DIM,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A programmatic launch goes only to a kernel that waits for the one before it: the
    /// hopper_ws kernel does, the multistage one does not (and is not launched so).
    #[test]
    fn a_programmatic_launch_needs_a_kernel_that_waits() {
        use crate::hopper::{hopper_kernel, HopperSchedule};
        let plain = LaunchPlan::new((1, 1, 1), (32, 1, 1), vec![]);
        let programmatic = LaunchPlan {
            programmatic: true,
            ..plain.clone()
        };
        // The IR's answer is the PTX's.
        let hopper = hopper_kernel(HopperSchedule::WIDE, crate::gemm::GemmDtype::Bf16).unwrap();
        assert!(hopper.waits_on_grids());
        assert!(emit(&hopper, Target::Sm90a)
            .unwrap()
            .contains("griddepcontrol.wait;"));
        assert_eq!(
            programmatic_contract(&programmatic, hopper.waits_on_grids()),
            Ok(())
        );
        let multistage = crate::multistage::default_f16().unwrap();
        assert!(!multistage.waits_on_grids());
        assert!(!emit(&multistage, Target::Sm80)
            .unwrap()
            .contains("griddepcontrol"));
        assert_eq!(programmatic_contract(&plain, false), Ok(()));
        let e = programmatic_contract(&programmatic, false).unwrap_err();
        assert!(e.contains("no griddepcontrol.wait"), "{e}");
    }

    #[test]
    fn targets_follow_the_compute_capability() {
        assert_eq!(target_for((9, 0)).unwrap(), Target::Sm90a);
        assert_eq!(target_for((10, 0)).unwrap(), Target::Sm100a);
        assert_eq!(target_for((8, 6)).unwrap(), Target::Sm80);
        assert_eq!(target_for((12, 0)).unwrap(), Target::Sm80);
        assert_eq!(
            target_for((7, 5)).unwrap_err().to_string(),
            "the GEMMs need compute capability 8.0 or newer; this device is 7.5"
        );
    }
}
