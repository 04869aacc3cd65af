//! A case's run on the GPU through the JIT (feature `gpu`): the same [`Run`] the simulator
//! takes, its buffers uploaded (outputs poisoned, a guard after each), its launches made with
//! the untyped launch in order, its outputs downloaded and their guards checked.

use codegen_ptx::jit::{tensor_map_spec, CudaSlice, Jit, JitError, JitFunction, KernelArg, Launch};
use dsl_core::ir::Target;

use super::run::{CaseArg, Contents, Data, Run};
use super::{Case, CaseError};

/// The byte every output holds before the first launch: all ones, a NaN in every float type.
pub const POISON: u8 = 0xFF;

/// Elements after each output that no kernel may touch.
pub const GUARD: usize = 64;

/// A case's kernels loaded on a GPU.
#[derive(Debug)]
pub struct OnGpu<'j> {
    jit: &'j Jit,
    case: &'j dyn Case,
    functions: Vec<JitFunction>,
}

impl<'j> OnGpu<'j> {
    /// `case`'s kernels emitted for `target` and loaded through `jit`.
    pub fn new(jit: &'j Jit, case: &'j dyn Case, target: Target) -> Result<OnGpu<'j>, CaseError> {
        let functions = case
            .kernels()?
            .iter()
            .map(|k| {
                let ptx = codegen_ptx::emit(k, target).map_err(|e| CaseError::BadRun {
                    case: case.describe(),
                    reason: format!("`{}` does not emit for {target}: {e}", k.name),
                })?;
                Ok(jit.load(&ptx)?.function(&k.name)?)
            })
            .collect::<Result<_, CaseError>>()?;
        Ok(OnGpu {
            jit,
            case,
            functions,
        })
    }

    /// Runs `run`'s launches in order; returns each buffer's contents afterwards (`None` for
    /// inputs). An output's guard written by a kernel is an error.
    pub fn execute(&self, run: &Run) -> Result<Vec<Option<Data>>, CaseError> {
        run.check_borrows().map_err(|reason| self.bad(reason))?;
        let jit = self.jit;
        let mut bufs: Vec<CudaSlice<u8>> = run
            .buffers
            .iter()
            .map(|b| match &b.contents {
                Contents::Input(d) => jit.upload(&d.to_bytes()),
                Contents::Output { elem, len } => {
                    jit.upload(&vec![POISON; elem.bytes() * (len + GUARD)])
                }
                Contents::Scratch { elem, len } => jit.alloc_zeros::<u8>(elem.bytes() * len),
            })
            .collect::<Result<_, JitError>>()?;
        for i in 0..run.steps.len() {
            self.launch(run, i, &mut bufs)?;
        }
        jit.synchronize()?;
        run.buffers
            .iter()
            .zip(&bufs)
            .map(|(b, buf)| {
                if !b.contents.writable() {
                    return Ok(None);
                }
                let mut bytes = jit.download(buf)?;
                let len = b.contents.elem().bytes() * b.contents.len();
                if matches!(b.contents, Contents::Output { .. })
                    && bytes[len..].iter().any(|&x| x != POISON)
                {
                    return Err(self.bad(format!("a kernel wrote past the end of `{}`", b.name)));
                }
                bytes.truncate(len);
                Ok(Some(Data::from_bytes(b.contents.elem(), &bytes)))
            })
            .collect()
    }

    fn bad(&self, reason: String) -> CaseError {
        CaseError::BadRun {
            case: self.case.describe(),
            reason,
        }
    }

    /// Launch `i` of `run` over `bufs`: tensor maps first (the arguments refer to them), then
    /// each argument; a writable buffer is borrowed mutably once (a pointer beside a map over
    /// it is the map's buffer).
    fn launch(&self, run: &Run, i: usize, bufs: &mut [CudaSlice<u8>]) -> Result<(), CaseError> {
        let jit = self.jit;
        let step = &run.steps[i];
        let function = self
            .functions
            .get(step.kernel)
            .ok_or_else(|| self.bad(format!("launch {} names kernel {}", i + 1, step.kernel)))?;
        enum Borrow<'a> {
            Read(&'a CudaSlice<u8>),
            Write(Option<&'a mut CudaSlice<u8>>),
        }
        let mut borrows: Vec<Borrow> = bufs
            .iter_mut()
            .zip(&run.buffers)
            .map(|(s, b)| {
                if b.contents.writable() {
                    Borrow::Write(Some(s))
                } else {
                    Borrow::Read(s)
                }
            })
            .collect();
        let twice = |b: usize| {
            self.bad(format!(
                "launch {} names `{}`, which it writes, twice",
                i + 1,
                run.buffers[b].name
            ))
        };
        let mut maps = Vec::new();
        let mut map_over: Vec<Option<usize>> = vec![None; run.buffers.len()];
        for arg in &step.args {
            if let CaseArg::TensorMap { buffer, descriptor } = arg {
                let spec = tensor_map_spec(descriptor).map_err(JitError::from)?;
                let slot = borrows
                    .get_mut(*buffer)
                    .ok_or_else(|| self.bad(format!("no buffer {buffer}")))?;
                let map = match slot {
                    Borrow::Read(r) => jit.tensor_map(&spec, *r)?,
                    Borrow::Write(w) => jit
                        .tensor_map_mut(&spec, w.take().ok_or_else(|| twice(*buffer))?)?
                        .into(),
                };
                map_over[*buffer] = Some(maps.len());
                maps.push(map);
            }
        }
        let mut maps_in_order = maps.iter();
        let mut args = Vec::with_capacity(step.args.len());
        for arg in &step.args {
            args.push(match arg {
                CaseArg::Buffer(b) => match borrows.get_mut(*b) {
                    Some(Borrow::Read(r)) => jit.buffer(*r),
                    Some(Borrow::Write(w)) => match map_over[*b] {
                        Some(m) => KernelArg::MapBuffer(&maps[m]),
                        None => jit.buffer_mut(w.take().ok_or_else(|| twice(*b))?),
                    },
                    None => return Err(self.bad(format!("no buffer {b}"))),
                },
                CaseArg::U32(v) => KernelArg::U32(*v),
                CaseArg::U64(v) => KernelArg::U64(*v),
                CaseArg::F32(v) => KernelArg::F32(*v),
                CaseArg::TensorMap { .. } => {
                    KernelArg::TensorMap(maps_in_order.next().expect("one map per TensorMap"))
                }
            });
        }
        let s = step.shape;
        let t = |[x, y, z]: [u32; 3]| (x, y, z);
        let mut launch = Launch::new(t(s.grid), t(s.block)).with_dynamic_smem(s.dynamic_smem);
        if let Some(c) = s.cluster {
            launch = launch.with_cluster(t(c));
        }
        if s.programmatic {
            launch = launch.with_programmatic_launch();
        }
        // SAFETY: the kernels are the case's, and the run's arguments are what the case's
        // kernel documents for this launch (for a GEMM, the plan's launch, whose kernels'
        // accesses its `ProgramPlan` promises stay inside A, B, D and the workspace): buffers
        // of the lengths the scalars name, the written ones borrowed mutably once. Each case's
        // simulation with every check on (bounds, read-only writes) runs the same run.
        unsafe { function.launch(&launch, &args) }?;
        Ok(())
    }
}
