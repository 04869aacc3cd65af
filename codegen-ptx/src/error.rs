//! Typed errors of PTX generation. Every message is a sentence naming the op or construct at fault.

use dsl_core::ir::{IrError, Requirement, Target};
use thiserror::Error;

/// Why [`crate::emit`] could not produce PTX for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodegenError {
    /// An op (or a kernel directive) needs targets that do not include the one asked for.
    #[error("`{op}` needs {needs}, so it cannot be compiled for {target}")]
    Unsupported {
        /// The op's PTX mnemonic (or the directive, e.g. `.reqnctapercluster`).
        op: String,
        /// The targets the op runs on.
        needs: Requirement,
        /// The target asked for.
        target: Target,
    },
    /// The kernel's IR is malformed: an op's own structural check failed (see
    /// [`dsl_core::ir::OpInfo::check`]), or a register is undeclared, named with another type, or
    /// of the wrong type for its place (see [`dsl_core::ir::Kernel::check`]).
    #[error("malformed IR: {0}")]
    Ir(#[from] IrError),
    /// A register that is not in the kernel's register file, or whose type disagrees with it.
    #[error("register {id} of type {ty} is not in kernel `{kernel}`'s register file{detail}")]
    UnknownRegister {
        /// The register id.
        id: u32,
        /// The type the op claims it has.
        ty: dsl_core::ir::Type,
        /// The kernel.
        kernel: String,
        /// What the register file says instead, if anything.
        detail: String,
    },
    /// An operand whose type or kind does not fit its slot.
    #[error("`{op}`: {detail}")]
    BadOperand {
        /// The op's PTX mnemonic.
        op: String,
        /// What is wrong, as a sentence fragment.
        detail: String,
    },
    /// An address naming a symbol that is neither a parameter nor a shared allocation.
    #[error("`{op}` addresses `{symbol}`, which is neither a parameter nor a shared allocation of the kernel")]
    UnknownSymbol {
        /// The op's PTX mnemonic.
        op: String,
        /// The name used.
        symbol: String,
    },
    /// A kernel-level declaration PTX cannot express (a bad name, alignment or parameter type).
    #[error("kernel `{kernel}`: {detail}")]
    BadKernel {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        detail: String,
    },
}

impl CodegenError {
    /// An error of [`dsl_core::ir::Kernel::check`]: a declaration's is [`CodegenError::BadKernel`],
    /// the others [`CodegenError::Ir`].
    pub(crate) fn from_ir(e: IrError) -> Self {
        match e {
            IrError::BadKernel { kernel, detail } => CodegenError::BadKernel { kernel, detail },
            e => CodegenError::Ir(e),
        }
    }

    pub(crate) fn operand(op: impl Into<String>, detail: impl Into<String>) -> Self {
        CodegenError::BadOperand {
            op: op.into(),
            detail: detail.into(),
        }
    }
}
