//! A kernel: its signature, shared memory, launch hints, register file and body.

use super::error::IrError;
use super::op::OpInfo;
use super::stmt::Stmt;
use super::target::{PtxVersion, Requirement, Target};
use super::types::Type;
use super::value::Reg;
use super::visit::{for_each_instr, walk};

/// What a kernel parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A pointer into global memory (`.param .u64`), to elements of the given type.
    GlobalPtr {
        /// Element type the kernel reads and writes through it.
        elem: Type,
    },
    /// A scalar passed by value (`.param .ty`).
    Scalar(Type),
    /// A `CUtensorMap` passed by value: `.param .align 64 .b8 name[128]`.
    TensorMap,
}

/// A kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Param {
    /// Name in the PTX (a valid identifier).
    pub name: String,
    /// What it is.
    pub kind: ParamKind,
}

/// A static shared-memory allocation (`.shared .align A .b8 name[bytes]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SharedAlloc {
    /// Name in the PTX.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Alignment in bytes (a power of two).
    pub align: u32,
}

/// The dynamic shared-memory array (`.extern .shared .align A .b8 name[]`), sized at launch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DynamicShared {
    /// Name in the PTX.
    pub name: String,
    /// Alignment in bytes (a power of two; 1024 for 128-byte swizzled TMA tiles).
    pub align: u32,
}

/// Performance directives on the entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LaunchHints {
    /// `.maxntid x, y, z`: the block never has more threads.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`: the block has exactly these dimensions.
    pub reqntid: Option<[u32; 3]>,
    /// `.reqnctapercluster x, y, z` (sm_90): the cluster shape the kernel must be launched with.
    pub cluster_dims: Option<[u32; 3]>,
    /// `.minnctapersm n`: aim for at least n resident blocks per SM.
    pub minnctapersm: Option<u32>,
}

/// A whole kernel (`.entry`).
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// Entry name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Static shared allocations.
    pub shared: Vec<SharedAlloc>,
    /// Dynamic shared memory, if the kernel uses any.
    pub dynamic_shared: Option<DynamicShared>,
    /// Launch hints.
    pub hints: LaunchHints,
    /// Register file: the type of register `id` is `regs[id]`.
    pub regs: Vec<Type>,
    /// The body.
    pub body: Vec<Stmt>,
}

impl Kernel {
    /// An empty kernel called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Kernel {
            name: name.into(),
            params: Vec::new(),
            shared: Vec::new(),
            dynamic_shared: None,
            hints: LaunchHints::default(),
            regs: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A new register of type `ty`.
    pub fn new_reg(&mut self, ty: Type) -> Reg {
        let id = self.regs.len() as u32;
        self.regs.push(ty);
        Reg { id, ty }
    }

    /// The targets every op (and the cluster hint) of the kernel allows.
    pub fn requires(&self) -> Requirement {
        let mut req = if self.hints.cluster_dims.is_some() {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::ANY
        };
        for_each_instr(&self.body, &mut |i| req = req.and(i.op.requires()));
        req
    }

    /// The lowest target the kernel runs on (`None` when its ops contradict each other, e.g.
    /// wgmma with tcgen05).
    pub fn min_target(&self) -> Option<Target> {
        self.requires().min_target()
    }

    /// Whether the kernel waits for the grids it depends on (`griddepcontrol.wait`,
    /// [`Fence::GridDependencyWait`](super::op::Fence::GridDependencyWait)) anywhere: what a
    /// programmatic launch of it needs, since such a launch may start while the previous
    /// kernel in the stream still runs.
    pub fn waits_on_grids(&self) -> bool {
        let mut waits = false;
        for_each_instr(&self.body, &mut |i| {
            waits |= matches!(
                i.op,
                super::op::Op::Fence(super::op::Fence::GridDependencyWait)
            );
        });
        waits
    }

    /// The `.version` to emit for `target`: the maximum of the target's minimum and every op's
    /// version, capped at [`PtxVersion::MAX`].
    pub fn ptx_version(&self, target: Target) -> PtxVersion {
        let mut v = target.min_ptx_version();
        if self.hints.cluster_dims.is_some() {
            v = v.max(PtxVersion::new(7, 8));
        }
        for_each_instr(&self.body, &mut |i| v = v.max(i.op.ptx_version()));
        v.min(PtxVersion::MAX)
    }

    /// Checks the kernel once, for every consumer: its declarations (names are PTX identifiers
    /// and unique, alignments are powers of two, no empty shared allocation, no predicate
    /// parameter), every op's operands ([`OpInfo::check`]) and every register (declared in
    /// [`Kernel::regs`] with the type it is named with, predicates for conditions and guards,
    /// integers for loop variables). The first failure is returned, with the Rust location of
    /// the instruction at fault when it has one.
    ///
    /// The [`CheckedKernel`] it returns is what the PTX writer and the simulator take, so
    /// they do not check again.
    pub fn check(&self) -> Result<CheckedKernel<'_>, IrError> {
        super::check::check_declarations(self)?;
        walk(&self.body, &mut super::check::Checker { kernel: self })?;
        Ok(CheckedKernel(self))
    }
}

/// A kernel that passed [`Kernel::check`]: it dereferences to the [`Kernel`], which it borrows
/// (so the kernel cannot change while a checked view of it exists).
#[derive(Debug, Clone, Copy)]
pub struct CheckedKernel<'k>(&'k Kernel);

impl<'k> CheckedKernel<'k> {
    /// The kernel.
    pub fn kernel(&self) -> &'k Kernel {
        self.0
    }
}

impl std::ops::Deref for CheckedKernel<'_> {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        self.0
    }
}
