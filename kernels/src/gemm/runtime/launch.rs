//! One launch of a [`LaunchPlan`]: its arguments made, in order, and its kernel queued. The
//! packed call's slices and the raw call's addresses differ only in how each buffer becomes a
//! tensor map or a pointer argument ([`LaunchBuffers`]); the scalars, the tables, the workspace
//! and the launch's configuration are made the same way for both.

use codegen_ptx::jit::{
    tensor_map_spec, CudaSlice, JitError, JitFunction, KernelArg, Launch, TensorMap, TensorMapSpec,
};

use super::{Gemm, GemmError};
use crate::gemm::launch_plan::{GemmArg, GemmOperand, LaunchPlan};

/// A buffer a kernel takes by address: the [`GemmArg`]s that name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pointer {
    /// [`GemmArg::A`].
    A,
    /// [`GemmArg::B`].
    B,
    /// [`GemmArg::C`].
    C,
    /// [`GemmArg::D`].
    D,
    /// [`GemmArg::Bias`].
    Bias,
    /// [`GemmArg::Residual`].
    Residual,
}

/// How one launch's buffers become its arguments.
pub(super) trait LaunchBuffers<'a> {
    /// A tensor map over `operand`'s buffer, encoded from `spec`.
    fn tensor_map(
        &mut self,
        operand: GemmOperand,
        spec: &TensorMapSpec,
    ) -> Result<TensorMap<'a>, GemmError>;

    /// `buffer`'s address as an argument. `d_map` is the launch's map over D, if it has one
    /// (made before any pointer): a map that holds D may be where D's address comes from.
    fn pointer<'m>(&mut self, buffer: Pointer, d_map: Option<&'m TensorMap<'a>>) -> KernelArg<'m>;
}

/// The workspace as one launch sees it: the main launch writes it, the one after reads it.
pub(super) enum Scratch<'w> {
    /// The main launch's: written.
    Written(&'w mut CudaSlice<f32>),
    /// The launch after the main one's: read.
    Read(&'w mut CudaSlice<f32>),
}

impl Gemm<'_> {
    /// Makes `plan`'s arguments, in order, and launches `function`: tensor maps and tables
    /// first (the arguments refer to them), then each parameter, the buffers as `buffers`
    /// makes them, the workspace from `scratch`.
    ///
    /// # Safety
    ///
    /// `function` is the kernel `plan` was made for, and `buffers` and `scratch` hold what the
    /// call the plan was made for reads and writes: the contract of the `unsafe`
    /// [`JitFunction::launch`] for these arguments.
    pub(super) unsafe fn launch_plan<'a>(
        &'a self,
        function: &JitFunction,
        plan: &LaunchPlan,
        (m, n, k): (u32, u32, u32),
        mut buffers: impl LaunchBuffers<'a>,
        mut scratch: Option<Scratch<'a>>,
    ) -> Result<(), GemmError> {
        let mut d_map = None;
        let mut maps: Vec<TensorMap<'a>> = Vec::new();
        let mut tables = Vec::new();
        for arg in &plan.args {
            match arg {
                GemmArg::TensorMap {
                    operand,
                    descriptor,
                } => {
                    let spec = tensor_map_spec(descriptor).map_err(JitError::from)?;
                    if *operand == GemmOperand::D {
                        d_map = Some(maps.len());
                    }
                    maps.push(buffers.tensor_map(*operand, &spec)?);
                }
                GemmArg::Table(table) => tables.push(self.table(table)?),
                _ => {}
            }
        }
        let d_map = d_map.map(|i| &maps[i]);
        let (mut maps_in_order, mut tables_in_order) = (maps.iter(), tables.iter());
        let mut kernel_args = Vec::with_capacity(plan.args.len());
        for arg in &plan.args {
            kernel_args.push(match arg {
                GemmArg::D => buffers.pointer(Pointer::D, d_map),
                GemmArg::A => buffers.pointer(Pointer::A, d_map),
                GemmArg::B => buffers.pointer(Pointer::B, d_map),
                GemmArg::C => buffers.pointer(Pointer::C, d_map),
                GemmArg::Bias => buffers.pointer(Pointer::Bias, d_map),
                GemmArg::Residual => buffers.pointer(Pointer::Residual, d_map),
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
                GemmArg::Workspace => match scratch.take() {
                    Some(Scratch::Written(ws)) => self.jit.buffer_mut(ws),
                    Some(Scratch::Read(ws)) => self.jit.buffer(&*ws),
                    None => {
                        return Err(GemmError::BadLaunch {
                            plan: function.name().to_string(),
                            reason: "its arguments name the workspace twice, or it has none".into(),
                        })
                    }
                },
            });
        }
        let mut launch =
            Launch::new(plan.grid, plan.block).with_dynamic_smem(plan.dynamic_smem_bytes);
        if let Some(cluster) = plan.cluster {
            launch = launch.with_cluster(cluster);
        }
        if plan.programmatic {
            launch = launch.with_programmatic_launch();
        }
        // SAFETY: this function's contract.
        Ok(unsafe { function.launch(&launch, &kernel_args) }?)
    }
}
