//! Typed errors of kernel construction.

use crate::ir::IrError;
use thiserror::Error;

/// Why [`crate::kernel::build_kernel`] refused to produce a kernel. Messages are sentences.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuildError {
    /// `build_kernel` was called while another kernel was being built on this thread.
    #[error("cannot build kernel `{inner}` while kernel `{outer}` is being built on this thread; build them one after the other")]
    NestedKernel {
        /// The kernel under construction.
        outer: String,
        /// The kernel asked for.
        inner: String,
    },
    /// A device value made while building another kernel was used in this one.
    #[error("kernel `{kernel}` used a device value that belongs to another kernel; device values cannot cross kernels")]
    ForeignValue {
        /// The kernel being built.
        kernel: String,
    },
    /// A constant device value was assigned inside device control flow, where turning it into a
    /// register would change what earlier reads saw.
    #[error("kernel `{kernel}` assigns to a constant device value inside a device `if`/`for`/`while`; make it a register first with `.fresh()` (a `let` in #[kernel] does this)")]
    AssignToConstant {
        /// The kernel being built.
        kernel: String,
    },
    /// Host-folded integer division or remainder by zero.
    #[error("kernel `{kernel}` divides by the constant 0")]
    DivisionByZero {
        /// The kernel being built.
        kernel: String,
    },
    /// A loop step that is not positive.
    #[error("kernel `{kernel}`: loop step {step} is not positive")]
    BadStep {
        /// The kernel being built.
        kernel: String,
        /// The step given.
        step: i128,
    },
    /// Two parameters or shared allocations with one name, or a name PTX cannot use.
    #[error("kernel `{kernel}`: {message}")]
    BadName {
        /// The kernel being built.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// An argument out of range (alignment, size, width).
    #[error("kernel `{kernel}`: {message}")]
    BadArgument {
        /// The kernel being built.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// An op whose operands break its form.
    #[error("kernel `{kernel}`: {source}")]
    Ir {
        /// The kernel being built.
        kernel: String,
        /// The op's complaint.
        source: IrError,
    },
}
