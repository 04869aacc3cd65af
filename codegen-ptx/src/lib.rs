//! # codegen-ptx
//!
//! rute's PTX backend. [`emit`] turns a [`dsl_core::ir::Kernel`] into the text of a PTX module for
//! one [`Target`] (`sm_80`, `sm_90a` or `sm_100a`) in a single pass: one `write_*` method per
//! statement kind and op family, registers named by pool and id (`%r3`, `%rd1`, `%f7`, `%p0`,
//! `%h2`), labels numbered in order, so the same kernel always gives the same bytes. The header's
//! `.version` is the lowest the target and the kernel's ops allow (never above 8.7); an op the
//! target lacks is a [`CodegenError::Unsupported`] that names the op and both targets.
//!
//! [`ptxas`] assembles the text with NVIDIA's `ptxas` (path in `RUTE_PTXAS`) and reports
//! registers, shared memory and spills; tests use it to prove every family assembles.
//!
//! ```
//! use codegen_ptx::emit;
//! use dsl_core::ir::op::{Arith, BinOp, Memory};
//! use dsl_core::ir::{Address, Kernel, Operand, Param, ParamKind, SpecialReg, Dim, Stmt, Target, Type};
//! use dsl_core::ir::op::Data;
//!
//! // out[tid] = tid + 1, with out a u32 pointer (generic addressing).
//! let mut k = Kernel::new("plus_one");
//! k.params.push(Param { name: "out".into(), kind: ParamKind::GlobalPtr { elem: Type::U32 } });
//! let base = k.new_reg(Type::U64);
//! let tid = k.new_reg(Type::U32);
//! let off = k.new_reg(Type::U64);
//! let ptr = k.new_reg(Type::U64);
//! let val = k.new_reg(Type::U32);
//! k.body = vec![
//!     Stmt::op(Memory::Ld { space: dsl_core::ir::StateSpace::Param, ty: Type::U64, dsts: vec![base],
//!         addr: Address::symbol("out", 0), cache: None, nc: false, order: None }),
//!     Stmt::op(Data::ReadSpecial { dst: tid, sreg: SpecialReg::Tid(Dim::X) }),
//!     Stmt::op(Arith::MulPart { mode: dsl_core::ir::op::MulMode::Wide, ty: Type::U32, dst: off,
//!         a: tid.into(), b: Operand::Imm(4) }),
//!     Stmt::op(Arith::Bin { op: BinOp::Add, ty: Type::U64, dst: ptr, a: base.into(), b: off.into() }),
//!     Stmt::op(Arith::Bin { op: BinOp::Add, ty: Type::U32, dst: val, a: tid.into(), b: Operand::Imm(1) }),
//!     Stmt::op(Memory::St { space: dsl_core::ir::StateSpace::Generic, ty: Type::U32, srcs: vec![val.into()],
//!         addr: Address::reg(ptr, 0), cache: None, order: None }),
//! ];
//! let ptx = emit(&k, Target::Sm80).unwrap();
//! assert!(ptx.contains(".version 7.0\n.target sm_80\n"));
//! assert!(ptx.contains("add.u32 %r1, %r0, 1;"));
//! assert_eq!(ptx, emit(&k, Target::Sm80).unwrap()); // deterministic
//! ```

#![warn(missing_docs)]

pub mod error;
mod literal;
pub mod ptxas;
mod regs;
mod writer;

pub use dsl_core::ir::Target;
pub use error::CodegenError;

use dsl_core::ir::Kernel;

/// Generates the PTX module for `kernel` on `target`.
///
/// The result has `.version` = the highest PTX ISA version the target and the kernel's ops need
/// (the target's minimum: 7.0 for sm_80, 8.0 for sm_90a, 8.6 for sm_100a), `.target`, and
/// `.address_size 64`, then the shared declarations and one `.visible .entry`. Same input, same
/// bytes. Errors: an op the target lacks ([`CodegenError::Unsupported`]), a malformed op or
/// operand, an unknown register or symbol.
pub fn emit(kernel: &Kernel, target: Target) -> Result<String, CodegenError> {
    writer::Writer::new(kernel, target).write()
}
