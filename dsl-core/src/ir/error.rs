//! Typed errors of the IR: malformed ops and kernels, caught before codegen.

use thiserror::Error;

/// A structural problem in an op or a kernel. Messages are sentences naming the op and the rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IrError {
    /// An op whose operands break its form (count, type, width, range).
    #[error("{op}: {rule}")]
    BadOperands {
        /// The op's PTX mnemonic.
        op: &'static str,
        /// The rule broken.
        rule: String,
    },
    /// A register that the kernel does not declare, or names with another type, or of the wrong
    /// type for its place (a non-predicate `if` condition, a non-integer loop variable).
    #[error("register %{id} ({ty}): {rule}")]
    BadRegister {
        /// The register's id.
        id: u32,
        /// The type it was named with.
        ty: crate::ir::Type,
        /// The rule broken.
        rule: String,
    },
    /// A kernel-level declaration PTX cannot express: a name that is not an identifier or is
    /// used twice, an alignment that is not a power of two, an empty shared allocation, a
    /// predicate parameter.
    #[error("kernel `{kernel}`: {detail}")]
    BadKernel {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        detail: String,
    },
    /// An error in an instruction that carries its Rust source location.
    #[error("{location}: {source}")]
    At {
        /// Where the instruction was emitted.
        location: crate::ir::Location,
        /// What is wrong with it.
        source: Box<IrError>,
    },
}

impl IrError {
    /// The error without the location that [`IrError::At`] adds.
    pub fn without_location(&self) -> &IrError {
        match self {
            IrError::At { source, .. } => source.without_location(),
            e => e,
        }
    }

    /// Shorthand for [`IrError::BadOperands`].
    pub fn bad(op: &'static str, rule: impl Into<String>) -> Self {
        IrError::BadOperands {
            op,
            rule: rule.into(),
        }
    }
}
