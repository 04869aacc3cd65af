//! GEMMs in any [`Form`] on buffers given by address, as cuBLAS takes them: what `kernels::Blas`
//! and the row-major API run through. The caller (an `unsafe` call) vouches for the addresses,
//! as for cuBLAS; the runtime checks everything else it can: the form, every buffer's length
//! against the form's spans, and the addresses' alignment, which the plan takes into account (a
//! program that needs 16-byte rows is passed over for one that does not).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use codegen_ptx::jit::{Jit, JitFunction, KernelArg, TensorMap, TensorMapSpec};

use super::launch::{LaunchBuffers, Pointer, Scratch};
use super::{cached_launch, insert_bounded, lock, unreachable_dim, Gemm, GemmError};
use crate::gemm::check::{check_form, check_spans, BufferLens, FormLens};
use crate::gemm::launch_plan::{GemmOperand, LaunchPlan};
use crate::gemm::layout::{Form, Spans};
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
        // The form's spans, each buffer refused if shorter.
        let checked_spans = || -> Result<Spans, GemmError> {
            let spans = form
                .spans(problem.m, problem.n, problem.k)
                .map_err(|e| GemmError::Input(crate::gemm::InputError::Form(e)))?;
            check_spans(&spans, &buffers.lens())?;
            Ok(spans)
        };
        if let Some(plan) = lock(&self.form_plans).get(&key) {
            // The lengths may differ from the call that made the plan: check them again.
            checked_spans()?;
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
                let spans = checked_spans()?;
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
        insert_bounded(&mut lock(&self.form_plans), key, plan.clone());
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
        let (main, reduction) = self.kernels_for(&plan, &launch)?;
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
                &main,
                &launch,
                mnk,
                buffers,
                bytes,
                scratch.as_deref_mut().map(Scratch::Written),
            )?
        };
        if let Some((f, then)) = reduction {
            // SAFETY: as above; the reduction reads the workspace the main launch wrote.
            unsafe { self.launch_raw(&f, then, mnk, buffers, bytes, scratch.map(Scratch::Read))? };
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
        cached_launch(
            &self.form_launches,
            (plan.clone(), mnk, FormKey(*form)),
            plan,
            || plan.launch_form(mnk.0, mnk.1, mnk.2, form, &self.device),
        )
    }

    /// Launches `function` with `launch`'s arguments made from the buffers' addresses (tensor
    /// maps encoded over them, `bytes` per input and output element), the runtime's tables and
    /// the workspace ([`Gemm::launch_plan`]).
    ///
    /// # Safety
    ///
    /// [`Gemm::run_raw`]'s contract, and `launch` one the plan made for these buffers' form.
    unsafe fn launch_raw(
        &self,
        function: &JitFunction,
        launch: &LaunchPlan,
        mnk: (u32, u32, u32),
        buffers: &RawBuffers,
        bytes: (usize, usize),
        scratch: Option<Scratch<'_>>,
    ) -> Result<(), GemmError> {
        let addresses = Addresses {
            jit: &self.jit,
            buffers,
            bytes,
        };
        // SAFETY: the kernel is the plan's, its arguments the plan's launch for these buffers,
        // which the caller vouches for and check_form measured against the form's spans; that
        // the kernel stays inside them is `ProgramPlan`'s contract.
        unsafe { self.launch_plan(function, launch, mnk, addresses, scratch) }
    }
}

/// A raw call's buffers by address, with the bytes of an input and of an output element, as one
/// launch takes them. Made only in [`Gemm::launch_raw`], under [`Gemm::run_raw`]'s contract: each
/// address starts a live allocation of at least its `len` elements in the `Jit`'s context,
/// ordered on its stream for this call.
struct Addresses<'a> {
    jit: &'a Jit,
    buffers: &'a RawBuffers,
    bytes: (usize, usize),
}

impl<'a> LaunchBuffers<'a> for Addresses<'a> {
    fn tensor_map(
        &mut self,
        operand: GemmOperand,
        spec: &TensorMapSpec,
    ) -> Result<TensorMap<'a>, GemmError> {
        let (in_bytes, out_bytes) = self.bytes;
        let (buffer, bytes) = match operand {
            GemmOperand::A => (self.buffers.a, in_bytes),
            GemmOperand::B => (self.buffers.b, in_bytes),
            GemmOperand::D => (self.buffers.d, out_bytes),
            GemmOperand::Residual => (self.buffers.residual, out_bytes),
        };
        // SAFETY: `Addresses`'s contract: `buffer` is a live allocation of at least `len`
        // elements of `bytes` bytes in the Jit's context, ordered on its stream for this call.
        Ok(unsafe {
            TensorMap::encode_tiled_raw(self.jit, spec, buffer.address, (buffer.len * bytes) as u64)
        }?)
    }

    fn pointer<'m>(&mut self, buffer: Pointer, _: Option<&'m TensorMap<'a>>) -> KernelArg<'m> {
        let b = self.buffers;
        let buffer = match buffer {
            Pointer::A => b.a,
            Pointer::B => b.b,
            Pointer::C => b.c,
            Pointer::D => b.d,
            Pointer::Bias => b.bias,
            Pointer::Residual => b.residual,
        };
        // SAFETY: `Addresses`'s contract for that buffer.
        unsafe { KernelArg::raw_pointer(buffer.address) }
    }
}
