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
}

impl IrError {
    /// Shorthand for [`IrError::BadOperands`].
    pub fn bad(op: &'static str, rule: impl Into<String>) -> Self {
        IrError::BadOperands {
            op,
            rule: rule.into(),
        }
    }
}
