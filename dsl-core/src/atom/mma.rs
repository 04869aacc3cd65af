//! MMA atoms: one matrix-multiply instruction and its thread-value layouts, as CuTe's
//! `MMA_Traits` define them (`include/cute/atom/mma_traits_sm80.hpp`,
//! `mma_traits_sm90_gmma.hpp`), and the instruction itself ([`MmaOperation::call`], CuTe's
//! `MMA_Atom::call`). `tensor::gemm` iterates the fragments and hands each instruction's
//! operands to the atom; it never asks which instruction it is.

use std::fmt;
use std::sync::Arc;

use super::gmma::GmmaMajor;
use super::value::ValType;
use crate::ir::Reg;
use crate::kernel::Var;
use crate::layout::{IntTuple, Layout, LayoutError};

/// Where an MMA reads an operand from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaSourceKind {
    /// Registers holding the thread's fragment (16-bit values in pairs).
    Registers,
    /// A shared-memory matrix descriptor (GMMA's `smem_desc`), the tile in the given major.
    Descriptor(GmmaMajor),
}

/// One operand of one MMA instruction, as the fragment it comes from resolves it.
#[derive(Debug, Clone)]
pub enum MmaSource {
    /// The thread's registers for this instruction, in value order.
    Registers(Vec<Reg>),
    /// A 64-bit matrix descriptor of the operand's tile in shared memory.
    Descriptor(Var<u64>),
}

/// Whether an MMA adds to the accumulators (`D = A B + D`) or overwrites them (`D = A B`).
#[derive(Debug, Clone, Copy)]
pub enum Accumulate {
    /// `D = A B + D`.
    Yes,
    /// `D = A B` (the first k-block of a tile, without clearing the accumulators first).
    No,
    /// Decided on the device: accumulate where the predicate holds.
    When(Var<bool>),
}

/// One instruction's operands.
#[derive(Debug, Clone)]
pub struct MmaCall {
    /// The accumulator registers of this instruction, read (unless overwritten) and written.
    pub d: Vec<Reg>,
    /// A's operand.
    pub a: MmaSource,
    /// B's operand.
    pub b: MmaSource,
    /// Accumulate or overwrite.
    pub accumulate: Accumulate,
}

/// CuTe's `MMA_Traits<Op>`: the shape, the thread layout and the thread-value layouts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MmaTraits {
    /// `Shape_MNK`.
    pub shape_mnk: (i64, i64, i64),
    /// `ThrID`.
    pub thr_id: Layout,
    /// `ALayout`: `(thr, val) -> (m, k)` index in the column-major `(M, K)` tile.
    pub a_layout: Layout,
    /// `BLayout`: `(thr, val)` -> index in `(N, K)`.
    pub b_layout: Layout,
    /// `CLayout`: `(thr, val)` -> index in `(M, N)`.
    pub c_layout: Layout,
    /// Element types `(D, A, B, C)`.
    pub val_types: (ValType, ValType, ValType, ValType),
    /// Where A comes from.
    pub a_source: MmaSourceKind,
    /// Where B comes from.
    pub b_source: MmaSourceKind,
}

/// One family of MMA instructions. Implement it to add an atom: its name, its traits and the
/// emission of one instruction.
pub trait MmaOperation: fmt::Debug + Send + Sync + 'static {
    /// CuTe's name (`SM80_16x8x16_F16F16F16F16_TN`, `SM90_64x128x16_F32F16F16_SS`); atoms are
    /// equal when their names are.
    fn name(&self) -> String;
    /// The traits.
    fn traits(&self) -> MmaTraits;
    /// Emits one instruction with `call`'s operands (of the kinds the traits name; anything else
    /// is an error naming the operation).
    fn call(&self, call: &MmaCall) -> Result<(), LayoutError>;
}

/// CuTe's `MMA_Atom<MMA_Traits<Op>>`: the operation and its layouts.
///
/// `a_layout: (thr, val) -> (m, k)` index in the column-major `(M, K)` tile of the atom, likewise
/// `b_layout` into `(N, K)` and `c_layout` into `(M, N)`; `thr_id` maps the logical thread to the
/// thread index within the atom's threads.
#[derive(Clone, Debug)]
pub struct MmaAtom {
    op: Arc<dyn MmaOperation>,
    /// CuTe's `Shape_MNK`.
    pub shape_mnk: (i64, i64, i64),
    /// CuTe's `ThrID`.
    pub thr_id: Layout,
    /// CuTe's `ALayout` (`LayoutA_TV`).
    pub a_layout: Layout,
    /// CuTe's `BLayout` (`LayoutB_TV`).
    pub b_layout: Layout,
    /// CuTe's `CLayout` (`LayoutC_TV`).
    pub c_layout: Layout,
    vals: (ValType, ValType, ValType, ValType),
    sources: (MmaSourceKind, MmaSourceKind),
}

impl PartialEq for MmaAtom {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}
impl Eq for MmaAtom {}

impl MmaAtom {
    /// The atom of `op`, with the layouts of its traits.
    pub fn new(op: impl MmaOperation) -> MmaAtom {
        Self::from_arc(Arc::new(op))
    }

    /// [`MmaAtom::new`] of an operation already shared (as the registry hands them out).
    pub fn from_arc(op: Arc<dyn MmaOperation>) -> MmaAtom {
        let t = op.traits();
        MmaAtom {
            op,
            shape_mnk: t.shape_mnk,
            thr_id: t.thr_id,
            a_layout: t.a_layout,
            b_layout: t.b_layout,
            c_layout: t.c_layout,
            vals: t.val_types,
            sources: (t.a_source, t.b_source),
        }
    }

    /// The atom CuTe calls `name` (see [`super::lookup_mma`]).
    pub fn named(name: &str) -> Result<MmaAtom, super::UnknownAtom> {
        super::lookup_mma(name).map(Self::from_arc)
    }

    /// The operation.
    pub fn op(&self) -> &dyn MmaOperation {
        &*self.op
    }

    /// The operation's CuTe name.
    pub fn name(&self) -> String {
        self.op.name()
    }

    /// CuTe's `Shape_MNK` as an `IntTuple`.
    pub fn shape_mnk_tuple(&self) -> IntTuple {
        let (m, n, k) = self.shape_mnk;
        IntTuple::ints(&[m, n, k])
    }

    /// Number of threads (`size(ThrID)`).
    pub fn num_threads(&self) -> i64 {
        self.thr_id.size()
    }

    /// Element types `(D, A, B, C)`.
    pub fn val_types(&self) -> (ValType, ValType, ValType, ValType) {
        self.vals
    }

    /// Where A and B come from.
    pub fn sources(&self) -> (MmaSourceKind, MmaSourceKind) {
        self.sources
    }

    /// CuTe's `MMA_Atom::call`: one instruction.
    pub fn call(&self, call: &MmaCall) -> Result<(), LayoutError> {
        self.op.call(call)
    }
}

impl fmt::Display for MmaAtom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A trait layout written in this crate: failing to parse one is a bug in rute.
pub(crate) fn constant(text: &str) -> Layout {
    text.parse()
        .unwrap_or_else(|e| panic!("MMA trait constant `{text}`: {e}"))
}

/// The error of an operation handed operands it does not take.
pub(crate) fn bad_call(op: &dyn MmaOperation, why: impl Into<String>) -> LayoutError {
    LayoutError::precondition("gemm", op.name(), why.into())
}
