//! Atomics (`atom`, returning the old value) and reductions (`red`, returning nothing) on global
//! and shared memory. Integer and f32 forms run on every target; bf16 adds and
//! `.shared::cluster` addresses need sm_90.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::space::{MemOrder, Scope, StateSpace};
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Address, Operand, Reg};

/// The read-modify-write an atomic performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomOp {
    /// `.add` (ints, f32, f64, f16/bf16 with `.noftz`)
    Add,
    /// `.min`
    Min,
    /// `.max`
    Max,
    /// `.inc`: wraps to 0 past `a` (u32)
    Inc,
    /// `.dec` (u32)
    Dec,
    /// `.and` (b32/b64)
    And,
    /// `.or` (b32/b64)
    Or,
    /// `.xor` (b32/b64)
    Xor,
    /// `.exch`: swap (atom only)
    Exch,
    /// `.cas`: compare `a`, swap in `b` (atom only)
    Cas,
}

impl AtomOp {
    /// Every op, in declaration order.
    pub const ALL: [AtomOp; 10] = [
        AtomOp::Add,
        AtomOp::Min,
        AtomOp::Max,
        AtomOp::Inc,
        AtomOp::Dec,
        AtomOp::And,
        AtomOp::Or,
        AtomOp::Xor,
        AtomOp::Exch,
        AtomOp::Cas,
    ];

    /// The PTX name without the dot.
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
        }
    }
}

/// Atomic ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Atomic {
    /// `atom{.order}.space.op.ty dst, [addr], a{, b}`.
    Atom {
        /// `Global`, `Shared`, `SharedCluster` or `Generic`.
        space: StateSpace,
        /// The operation.
        op: AtomOp,
        /// Element type.
        ty: Type,
        /// Receives the old value.
        dst: Reg,
        /// The location.
        addr: Address,
        /// Operand (the compare value for `Cas`).
        a: Operand,
        /// The swap value for `Cas`.
        b: Option<Operand>,
        /// Ordering and scope; `None` is relaxed at gpu scope.
        order: Option<MemOrder>,
    },
    /// `red{.order}.space.op.ty [addr], a`.
    Red {
        /// `Global`, `Shared`, `SharedCluster` or `Generic`.
        space: StateSpace,
        /// The operation (not `Exch`/`Cas`).
        op: AtomOp,
        /// Element type.
        ty: Type,
        /// The location.
        addr: Address,
        /// Operand.
        a: Operand,
        /// Ordering and scope.
        order: Option<MemOrder>,
    },
}

impl Atomic {
    /// What `atom` and `red` share: the state space, the operation, the element type and the
    /// memory order.
    pub fn parts(&self) -> (StateSpace, AtomOp, Type, Option<MemOrder>) {
        match self {
            Atomic::Atom {
                space,
                op,
                ty,
                order,
                ..
            }
            | Atomic::Red {
                space,
                op,
                ty,
                order,
                ..
            } => (*space, *op, *ty, *order),
        }
    }
    fn needs_sm90(&self) -> bool {
        let (space, _, ty, order) = self.parts();
        ty.is_bf16()
            || space == StateSpace::SharedCluster
            || order.map(|o| o.scope()) == Some(Scope::Cluster)
    }
}

impl OpInfo for Atomic {
    fn mnemonic(&self) -> &'static str {
        match self {
            Atomic::Atom { .. } => "atom",
            Atomic::Red { .. } => "red",
        }
    }
    fn requires(&self) -> Requirement {
        if self.needs_sm90() {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::ANY
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        if self.needs_sm90() {
            PtxVersion::new(7, 8)
        } else {
            PtxVersion::new(6, 3)
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let (space, op, ty, _) = self.parts();
        if !matches!(
            space,
            StateSpace::Global
                | StateSpace::Shared
                | StateSpace::SharedCluster
                | StateSpace::Generic
        ) {
            return Err(IrError::bad(m, format!("no atomics on .{}", space.name())));
        }
        let ok = match op {
            // Integer adds are u32, s32 and u64 only (no s64 form).
            AtomOp::Add => {
                matches!(ty, Type::U32 | Type::S32 | Type::U64)
                    || matches!(
                        ty,
                        Type::F32 | Type::F64 | Type::F16 | Type::F16x2 | Type::BF16 | Type::BF16x2
                    )
            }
            AtomOp::Min | AtomOp::Max => ty.is_int() && ty.bits() >= 32,
            AtomOp::Inc | AtomOp::Dec => ty == Type::U32,
            AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, Type::B32 | Type::B64),
            AtomOp::Exch => matches!(ty, Type::B32 | Type::B64),
            AtomOp::Cas => matches!(ty, Type::B16 | Type::B32 | Type::B64),
        };
        if !ok || (ty.is_int() && ty.bits() < 32) {
            return Err(IrError::bad(
                m,
                format!(".{} is not defined on {ty}", op.name()),
            ));
        }
        match self {
            Atomic::Atom { b, .. } => {
                if (op == AtomOp::Cas) != b.is_some() {
                    return Err(IrError::bad(
                        m,
                        "cas takes a second operand, other ops none",
                    ));
                }
            }
            Atomic::Red { .. } => {
                if matches!(op, AtomOp::Exch | AtomOp::Cas) {
                    return Err(IrError::bad(m, "red has no exch or cas; use atom"));
                }
            }
        }
        Ok(())
    }
}
