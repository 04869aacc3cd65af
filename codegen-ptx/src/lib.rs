//! # codegen-ptx
//!
//! rute's PTX backend. [`emit`] turns a [`dsl_core::ir::Kernel`] into the text of a PTX module for
//! one [`Target`] (`sm_80`, `sm_90a` or `sm_100a`) in a single pass over the IR, with one
//! `write_*` method per statement kind and op family. The output is deterministic: registers are
//! named by pool and id order (`%r3`, `%rd1`, `%f7`, `%fd0`, `%p0`, `%h2`, one `.reg` pool per
//! class, declared with its exact count), labels are numbered in the order their constructs
//! start (`$L0_loop`, `$L1_else`), so the same kernel always gives the same bytes.
//!
//! The header's `.version` is the lowest the target and the kernel's ops allow: 7.0 for sm_80,
//! 8.0 for sm_90a, 8.6 for sm_100a (the first versions whose `.target` accepts them), raised
//! by an op that needs more (e.g. `mbarrier.test_wait` makes an sm_80 kernel 7.1), never above
//! 8.7. An op the target lacks is a [`CodegenError::Unsupported`] whose message names the op, the
//! targets it needs and the target asked for; malformed IR (an unknown register, an operand of
//! the wrong width, an address naming nothing) is a typed [`CodegenError`], never a panic.
//!
//! Structured control flow becomes predicated branches: `If` is `@!%p bra $Ln_else;` ..., a
//! `For` re-tests its (possibly dynamic) bound before each iteration, a `While` re-runs its
//! condition block.
//!
//! [`ptxas`] assembles the text with NVIDIA's `ptxas` (path in the `RUTE_PTXAS` environment
//! variable) and reports registers, shared memory and spills; the tests use it to prove that every
//! family assembles for its lowest target.
//!
//! Modules: `writer` (the pass; `writer/scalar.rs`, `memory.rs`, `sync.rs`, `tensor.rs` hold the
//! families), `regs` (register pools), `literal` (immediates as PTX spells them), [`error`],
//! [`ptxas`].
//!
//! ```
//! use codegen_ptx::{emit, Target};
//! use dsl_core::ir::op::{AddressOp, Arith, BinOp, Data, Memory, MulMode};
//! use dsl_core::ir::{Address, Dim, Kernel, Operand, Param, ParamKind, SpecialReg, StateSpace, Stmt, Type};
//!
//! // out[tid.x] = tid.x + 1
//! let mut k = Kernel::new("plus_one");
//! k.params.push(Param { name: "out".into(), kind: ParamKind::GlobalPtr { elem: Type::U32 } });
//! let (param, base, off, ptr) = (k.new_reg(Type::U64), k.new_reg(Type::U64), k.new_reg(Type::U64), k.new_reg(Type::U64));
//! let (tid, val) = (k.new_reg(Type::U32), k.new_reg(Type::U32));
//! k.body = vec![
//!     Stmt::op(Memory::Ld { space: StateSpace::Param, ty: Type::U64, dsts: vec![param],
//!         addr: Address::symbol("out", 0), cache: None, nc: false, order: None }),
//!     Stmt::op(AddressOp::Cvta { to_generic: false, space: StateSpace::Global, dst: base, src: param.into() }),
//!     Stmt::op(Data::ReadSpecial { dst: tid, sreg: SpecialReg::Tid(Dim::X) }),
//!     Stmt::op(Arith::MulPart { mode: MulMode::Wide, ty: Type::U32, dst: off, a: tid.into(), b: Operand::Imm(4) }),
//!     Stmt::op(Arith::Bin { op: BinOp::Add, ty: Type::U64, dst: ptr, a: base.into(), b: off.into() }),
//!     Stmt::op(Arith::Bin { op: BinOp::Add, ty: Type::U32, dst: val, a: tid.into(), b: Operand::Imm(1) }),
//!     Stmt::op(Memory::St { space: StateSpace::Global, ty: Type::U32, srcs: vec![val.into()],
//!         addr: Address::reg(ptr, 0), cache: None, order: None }),
//! ];
//! let ptx = emit(&k, Target::Sm80).unwrap();
//! assert!(ptx.contains(".version 7.0\n.target sm_80\n.address_size 64\n"));
//! assert!(ptx.contains("\tmul.wide.u32 %rd2, %r0, 4;\n"));
//! assert!(ptx.contains("\tst.global.u32 [%rd3], %r1;\n"));
//! assert_eq!(ptx, emit(&k, Target::Sm80).unwrap()); // same input, same bytes
//!
//! // wgmma exists on sm_90a only: asking for it on sm_80 is a sentence, not a panic.
//! k.body.push(Stmt::op(dsl_core::ir::op::Wgmma::Fence));
//! let err = emit(&k, Target::Sm80).unwrap_err();
//! assert_eq!(err.to_string(), "`wgmma.fence` needs sm_90a only, so it cannot be compiled for sm_80");
//! ```

#![warn(missing_docs)]

pub mod error;
/// The cudarc runtime: load PTX, launch kernels, build TMA descriptors (feature `jit`).
#[cfg(feature = "jit")]
pub mod jit;
mod literal;
pub mod ptxas;
mod regs;
mod writer;

pub use dsl_core::ir::Target;
pub use error::CodegenError;

use dsl_core::ir::{CheckedKernel, Kernel};

/// Generates the PTX module for `kernel` on `target`: [`Kernel::check`], then [`emit_checked`].
///
/// The result has `.version` = the highest PTX ISA version the target and the kernel's ops need
/// (the target's minimum: 7.0 for sm_80, 8.0 for sm_90a, 8.6 for sm_100a), `.target`, and
/// `.address_size 64`, then the shared declarations and one `.visible .entry`. Same input, same
/// bytes. Errors: malformed IR as [`Kernel::check`] finds it ([`CodegenError::Ir`], or
/// [`CodegenError::BadKernel`] for a declaration), an op the target lacks
/// ([`CodegenError::Unsupported`]), an operand that does not fit its slot, an unknown symbol.
pub fn emit(kernel: &Kernel, target: Target) -> Result<String, CodegenError> {
    let checked = kernel.check().map_err(CodegenError::from_ir)?;
    emit_checked(checked, target)
}

/// Generates the PTX module for a kernel that already passed [`Kernel::check`] (so it is not
/// checked again); otherwise as [`emit`].
pub fn emit_checked(kernel: CheckedKernel<'_>, target: Target) -> Result<String, CodegenError> {
    writer::Writer::new(kernel, target).write()
}
