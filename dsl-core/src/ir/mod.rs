//! The kernel IR: typed parameters, shared memory, registers, structured statements, and one op
//! family per kind of PTX instruction, each knowing the targets it runs on.
//!
//! No SSA: PTX registers are mutable, so a dynamic variable is one [`Reg`] that assignments write
//! again. Control flow stays structured ([`Stmt::For`], [`Stmt::If`], [`Stmt::While`]); codegen
//! lowers it to branches. The builder in [`crate::kernel`] is the usual way to make a [`Kernel`].

mod check;
pub mod error;
pub mod kernel;
pub mod location;
pub mod op;
pub mod space;
pub mod special;
pub mod stmt;
pub mod target;
pub mod types;
pub mod value;
pub mod visit;

pub use error::IrError;
pub use kernel::{
    CheckedKernel, DynamicShared, Kernel, LaunchHints, Param, ParamKind, SharedAlloc,
};
pub use location::Location;
pub use op::{Op, OpInfo};
pub use space::{MemOrder, Scope, StateSpace};
pub use special::{Dim, SpecialReg};
pub use stmt::{Instr, Stmt};
pub use target::{PtxVersion, Requirement, Target};
pub use types::{Type, TypeKind};
pub use value::{AddrBase, Address, Guard, Operand, Reg};
pub use visit::{for_each_instr, walk, Region, Visitor};

#[cfg(test)]
mod tests;
