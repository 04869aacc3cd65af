//! GEMMs in any [`Form`] on buffers given by address, as cuBLAS takes them: what `kernels::Blas`
//! and the row-major API run through. The caller (an `unsafe` call) vouches for the addresses,
//! as for cuBLAS; the runtime checks everything else it can: the form, every buffer's length
//! against the form's spans, and the addresses' alignment, which the plan takes into account (a
//! program that needs 16-byte rows is passed over for one that does not).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use codegen_ptx::jit::{tensor_map_spec, JitError, JitFunction, KernelArg, Launch, TensorMap};

use super::{lock, programmatic_contract, unreachable_dim, Gemm, GemmError, MAX_CACHED_LAUNCHES};
use crate::gemm::check::{check_form, BufferLens, FormLens};
use crate::gemm::launch_plan::{GemmArg, GemmOperand, LaunchPlan};
use crate::gemm::layout::Form;
use crate::gemm::program::{aligned_for, Plan, Problem};
use crate::gemm::strided::OutElem;
use crate::gemm::GemmElem;

/// A buffer by address: where it starts and how many elements it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawBuffer {
    /// The device address of its first element.
    pub address: u64,
    /// Its elements.
    pub len: usize,
}

/// A call's buffers by address: A and B of the input type, C, D, the bias and the residual of
/// D's. Those the form does not read may be left empty (`RawBuffer::default()`). C may be D
/// itself (BLAS's `beta C`, in place): each element of C is read by the thread that then
/// writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawBuffers {
    /// A.
    pub a: RawBuffer,
    /// B.
    pub b: RawBuffer,
    /// C.
    pub c: RawBuffer,
    /// D.
    pub d: RawBuffer,
    /// The bias.
    pub bias: RawBuffer,
    /// The residual.
    pub residual: RawBuffer,
}

impl RawBuffers {
    /// Their lengths, as `check_form` takes them.
    pub fn lens(&self) -> FormLens {
        FormLens {
            a: self.a.len,
            b: self.b.len,
            c: self.c.len,
            d: self.d.len,
            bias: self.bias.len,
            residual: self.residual.len,
        }
    }

    /// The start addresses of the buffers the form reads or writes.
    fn addresses(&self, form: &Form) -> Vec<u64> {
        let e = &form.epilogue;
        let mut v = vec![self.a.address, self.b.address, self.d.address];
        if e.reads_c() {
            v.push(self.c.address);
        }
        if e.bias().is_some() {
            v.push(self.bias.address);
        }
        if e.adds_residual() {
            v.push(self.residual.address);
        }
        v
    }
}

/// A form as a cache key: every field, the scalars by their bits.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct FormKey(Form);

impl Eq for FormKey {}

impl Hash for FormKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let f = &self.0;
        (f.a, f.b, f.ldc, f.ldd, f.ldr, f.batch, f.epilogue).hash(state);
        (f.alpha.to_bits(), f.beta.to_bits(), f.out, f.base_align).hash(state);
    }
}

/// The plans made so far for forms, by problem and form (a problem's config is the runtime's
/// own, so the shape, types and program name it).
pub(super) type FormPlans = HashMap<(ProblemKey, FormKey), Plan>;

/// The launches made so far for forms, by plan, shape and form.
pub(super) type FormLaunches = HashMap<(Plan, (u32, u32, u32), FormKey), Arc<LaunchPlan>>;

/// What of a problem a plan depends on, besides the runtime's configuration.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct ProblemKey {
    mnk: (usize, usize, usize),
    dtype: crate::gemm::GemmDtype,
    acc: crate::gemm::Accum,
    kernel: crate::gemm::KernelChoice,
}

impl Gemm<'_> {
    /// The plan for `problem` in `form` on `buffers` (`problem.config` is replaced by the
    /// runtime's, [`Gemm::with_config`]): the form with its base alignment taken from the
    /// buffers' addresses, checked with the buffers' lengths ([`check_form`]); for the packed
    /// form, a tuning record's schedule first, as [`Gemm::run`] plans. Made once per problem
    /// and form, from a cache after.
    pub fn plan_raw(
        &self,
        problem: &Problem,
        form: &Form,
        buffers: &RawBuffers,
    ) -> Result<(Plan, Form), GemmError> {
        let form = form.with_addresses(&buffers.addresses(form));
        let key = (
            ProblemKey {
                mnk: (problem.m, problem.n, problem.k),
                dtype: problem.dtype,
                acc: problem.acc,
                kernel: problem.kernel,
            },
            FormKey(form),
        );
        if let Some(plan) = lock(&self.form_plans).get(&key) {
            // The lengths may differ from the call that made the plan: check them again.
            let spans = form
                .spans(problem.m, problem.n, problem.k)
                .map_err(|e| GemmError::Input(crate::gemm::InputError::Form(e)))?;
            check_lens(&spans, &buffers.lens())?;
            return Ok((plan.clone(), form));
        }
        let problem = Problem {
            config: self.config.clone(),
            ..problem.clone()
        };
        // The packed form prefers a tuning record's schedule, as `run` does, where its plan
        // takes these buffers' alignment.
        let recorded =
            if form.is_packed(problem.m, problem.n, problem.k, problem.dtype) && problem.k > 0 {
                let spans = form
                    .spans(problem.m, problem.n, problem.k)
                    .map_err(|e| GemmError::Input(crate::gemm::InputError::Form(e)))?;
                check_lens(&spans, &buffers.lens())?;
                let exact = BufferLens {
                    a: spans.a,
                    b: spans.b,
                    d: spans.d,
                };
                self.tuned
                    .check(&problem, exact, &self.device)
                    .ok()
                    .filter(|plan| aligned_for(plan, &form, problem.dtype).is_ok())
            } else {
                None
            };
        let plan = match recorded {
            Some(plan) => plan,
            None => check_form(&problem, &form, buffers.lens(), &self.device)?,
        };
        let mut plans = lock(&self.form_plans);
        if plans.len() >= MAX_CACHED_LAUNCHES {
            plans.clear();
        }
        plans.insert(key, plan.clone());
        Ok((plan, form))
    }

    /// Checks and queues `problem` in `form` on the buffers at `buffers` (see [`RawBuffers`])
    /// on the `Jit`'s stream, and returns the plan it ran. `T` is A's and B's element type
    /// (`problem.dtype`), `O` D's (`form`'s output type). Nothing is launched when a check
    /// fails.
    ///
    /// # Safety
    ///
    /// Each buffer the form reads or writes is a live allocation (or a part of one) in the
    /// `Jit`'s context of at least `len` elements of its type starting at `address`; work on
    /// other streams that writes them (or, for D, reads them) is ordered before this call's
    /// work on the `Jit`'s stream, and nothing frees them or writes them until that work has
    /// finished (cudarc's `DevicePtr::device_ptr(stream)` with its guard kept to the end of the
    /// call orders a `CudaSlice` so); D overlaps none of the others except C, which may be D
    /// itself.
    pub unsafe fn run_raw<T: GemmElem, O: OutElem>(
        &self,
        problem: &Problem,
        form: &Form,
        buffers: &RawBuffers,
    ) -> Result<Plan, GemmError> {
        if problem.dtype != T::DTYPE || form.out_type(problem.dtype) != O::OUT {
            return Err(GemmError::BadLaunch {
                plan: format!("{} -> {}", problem.dtype, form.out_type(problem.dtype)),
                reason: format!(
                    "its buffers hold {} and {}, not the problem's types",
                    T::DTYPE,
                    O::OUT
                ),
            });
        }
        let (plan, form) = self.plan_raw(problem, form, buffers)?;
        let dim = |v: usize| u32::try_from(v).map_err(|_| unreachable_dim(v));
        let mnk = (dim(problem.m)?, dim(problem.n)?, dim(problem.k)?);
        let launch = self.form_launch_of(&plan, mnk, &form)?;
        let loaded = self.loaded(&plan)?;
        programmatic_contract(&launch, loaded.main_waits).map_err(|reason| {
            GemmError::BadLaunch {
                plan: plan.describe(),
                reason,
            }
        })?;
        let bytes = (T::DTYPE.bytes(), O::OUT.bytes());
        let mut workspace = lock(&self.workspace);
        let mut scratch = if launch.workspace > 0 {
            Some(self.workspace_of(&mut workspace, launch.workspace)?)
        } else {
            None
        };
        // SAFETY: the caller's contract covers the buffers; the plan passed check_form against
        // their lengths, so the kernel stays inside them (`ProgramPlan`'s contract).
        unsafe {
            self.launch_raw(
                &loaded.main,
                &launch,
                mnk,
                buffers,
                bytes,
                scratch.as_deref_mut(),
                true,
            )?
        };
        if let Some(then) = &launch.then {
            let f = loaded
                .reduction
                .as_ref()
                .ok_or_else(|| GemmError::BadLaunch {
                    plan: plan.describe(),
                    reason: "it asks for a launch after the main one, and has no reduction kernel"
                        .into(),
                })?;
            // SAFETY: as above; the reduction reads the workspace the main launch wrote.
            unsafe { self.launch_raw(f, then, mnk, buffers, bytes, scratch, false)? };
        }
        Ok(plan)
    }

    /// `plan`'s launch for `mnk` in `form`, checked ([`LaunchPlan::check`]), from a cache after
    /// its first call.
    fn form_launch_of(
        &self,
        plan: &Plan,
        mnk: (u32, u32, u32),
        form: &Form,
    ) -> Result<Arc<LaunchPlan>, GemmError> {
        let key = (plan.clone(), mnk, FormKey(*form));
        if let Some(l) = lock(&self.form_launches).get(&key) {
            return Ok(Arc::clone(l));
        }
        let launch = plan.launch_form(mnk.0, mnk.1, mnk.2, form, &self.device);
        launch.check().map_err(|reason| GemmError::BadLaunch {
            plan: plan.describe(),
            reason,
        })?;
        let launch = Arc::new(launch);
        let mut launches = lock(&self.form_launches);
        if launches.len() >= MAX_CACHED_LAUNCHES {
            launches.clear();
        }
        launches.insert(key, Arc::clone(&launch));
        Ok(launch)
    }

    /// Makes `launch`'s arguments from the buffers' addresses (tensor maps encoded over them,
    /// `bytes` per input and output element), the runtime's tables and the workspace (written by
    /// a main launch, read by the one after), and launches `function`.
    ///
    /// # Safety
    ///
    /// [`Gemm::run_raw`]'s contract, and `launch` one the plan made for these buffers' form.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_raw(
        &self,
        function: &JitFunction,
        launch: &LaunchPlan,
        (m, n, k): (u32, u32, u32),
        buffers: &RawBuffers,
        (in_bytes, out_bytes): (usize, usize),
        workspace: Option<&mut codegen_ptx::jit::CudaSlice<f32>>,
        main: bool,
    ) -> Result<(), GemmError> {
        let buffer_of = |operand: GemmOperand| match operand {
            GemmOperand::A => (buffers.a, in_bytes),
            GemmOperand::B => (buffers.b, in_bytes),
            GemmOperand::D => (buffers.d, out_bytes),
        };
        let mut maps: Vec<TensorMap<'static>> = Vec::new();
        let mut tables = Vec::new();
        for arg in &launch.args {
            match arg {
                GemmArg::TensorMap {
                    operand,
                    descriptor,
                } => {
                    let spec = tensor_map_spec(descriptor).map_err(JitError::from)?;
                    let (buffer, bytes) = buffer_of(*operand);
                    // SAFETY: the caller's contract: `buffer` is a live allocation of at least
                    // `len` elements of `bytes` bytes in the Jit's context, ordered on its
                    // stream for this call.
                    maps.push(unsafe {
                        TensorMap::encode_tiled_raw(
                            &self.jit,
                            &spec,
                            buffer.address,
                            (buffer.len * bytes) as u64,
                        )
                    }?);
                }
                GemmArg::Table(table) => tables.push(self.table(table)?),
                _ => {}
            }
        }
        // SAFETY (each raw pointer): the caller's contract for that buffer.
        let raw = |b: RawBuffer| unsafe { KernelArg::raw_pointer(b.address) };
        let (mut maps_in_order, mut tables_in_order) = (maps.iter(), tables.iter());
        let mut workspace = workspace;
        let mut kernel_args = Vec::with_capacity(launch.args.len());
        for arg in &launch.args {
            kernel_args.push(match arg {
                GemmArg::D => raw(buffers.d),
                GemmArg::A => raw(buffers.a),
                GemmArg::B => raw(buffers.b),
                GemmArg::C => raw(buffers.c),
                GemmArg::Bias => raw(buffers.bias),
                GemmArg::Residual => raw(buffers.residual),
                GemmArg::M => KernelArg::U32(m),
                GemmArg::N => KernelArg::U32(n),
                GemmArg::K => KernelArg::U32(k),
                GemmArg::U32(v) => KernelArg::U32(*v),
                GemmArg::U64(v) => KernelArg::U64(*v),
                GemmArg::F32(v) => KernelArg::F32(*v),
                GemmArg::TensorMap { .. } => {
                    KernelArg::TensorMap(maps_in_order.next().expect("one map per TensorMap"))
                }
                GemmArg::Table(_) => self.jit.buffer(
                    tables_in_order
                        .next()
                        .expect("one buffer per Table")
                        .as_ref(),
                ),
                GemmArg::Workspace => match workspace.take() {
                    Some(ws) if main => self.jit.buffer_mut(ws),
                    Some(ws) => self.jit.buffer(&*ws),
                    None => {
                        return Err(GemmError::BadLaunch {
                            plan: function.name().to_string(),
                            reason: "its arguments name the workspace twice, or it has none".into(),
                        })
                    }
                },
            });
        }
        let mut cfg =
            Launch::new(launch.grid, launch.block).with_dynamic_smem(launch.dynamic_smem_bytes);
        if let Some(cluster) = launch.cluster {
            cfg = cfg.with_cluster(cluster);
        }
        if launch.programmatic {
            cfg = cfg.with_programmatic_launch();
        }
        // SAFETY: the kernel is the plan's, its arguments the plan's launch for these buffers,
        // which the caller vouches for and check_form measured against the form's spans; that
        // the kernel stays inside them is `ProgramPlan`'s contract.
        Ok(unsafe { function.launch(&cfg, &kernel_args) }?)
    }
}

/// Refuses a buffer shorter than its span.
fn check_lens(spans: &crate::gemm::layout::Spans, lens: &FormLens) -> Result<(), GemmError> {
    for (buffer, need, given) in [
        ("A", spans.a, lens.a),
        ("B", spans.b, lens.b),
        ("C", spans.c, lens.c),
        ("D", spans.d, lens.d),
        ("the bias", spans.bias, lens.bias),
        ("the residual", spans.residual, lens.residual),
    ] {
        if given < need {
            return Err(GemmError::Input(crate::gemm::InputError::ShortBuffer {
                buffer,
                need,
                given,
            }));
        }
    }
    Ok(())
}
