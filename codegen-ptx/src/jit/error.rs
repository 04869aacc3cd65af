//! The one error type of the JIT runtime, and the turning of driver results into sentences.

use cudarc::driver::{sys, DriverError};
use dsl_core::ir::Target;
use dsl_core::kernel::signature::ExtentError;

use super::launch::LaunchError;
use super::owner::ForeignBuffer;
use super::signature::SignatureError;
use super::tensor_map_spec::TensorMapError;

/// Everything that can go wrong between PTX text and a finished kernel, each as a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    /// No NVIDIA driver, no device, or a driver too old for the JIT; `reason` says which.
    #[error("no usable GPU: {reason}")]
    NoGpu {
        /// What the driver (or its absence) reported.
        reason: String,
    },
    /// The driver's PTX compiler refused the module.
    #[error("the driver rejected the PTX module ({code}); its JIT log says:\n{log}")]
    Rejected {
        /// The driver's error name, e.g. `CUDA_ERROR_INVALID_PTX`.
        code: String,
        /// The JIT compiler's error log (line numbers refer to the PTX text).
        log: String,
    },
    /// The PTX text holds a NUL byte, which would cut it short on its way to the driver.
    #[error("the PTX text has a NUL byte at byte offset {offset}; PTX must be plain text")]
    PtxHasNul {
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// `JitModule::function` asked for an entry the module does not define.
    #[error("the module has no kernel named `{name}`; its kernels are: {available}")]
    NoSuchKernel {
        /// The name asked for.
        name: String,
        /// The `.entry` names found in the module's PTX, comma separated.
        available: String,
    },
    /// A launch configuration that the device or the kernel cannot run; caught before the driver.
    #[error("launch of `{kernel}` refused: {error}")]
    InvalidLaunch {
        /// The kernel's name.
        kernel: String,
        /// What is wrong with the configuration.
        error: LaunchError,
    },
    /// The number of arguments differs from the kernel's parameter list.
    #[error("kernel `{kernel}` takes {expected} parameters but {given} arguments were given")]
    ArgumentCount {
        /// The kernel's name.
        kernel: String,
        /// Parameters the kernel declares.
        expected: usize,
        /// Arguments passed.
        given: usize,
    },
    /// One argument cannot fill the kernel parameter at its position, as the PTX declares it.
    #[error(
        "argument {index} of `{kernel}` is {arg} ({given} bytes), which cannot fill parameter {index}, `{param}` ({expected} bytes)"
    )]
    ArgumentKind {
        /// The kernel's name.
        kernel: String,
        /// Zero-based argument position.
        index: usize,
        /// The argument, as `KernelArg`'s Debug prints it.
        arg: String,
        /// Bytes of the argument.
        given: usize,
        /// The parameter's declaration, e.g. `.param .u32 n`.
        param: String,
        /// Bytes of the parameter.
        expected: usize,
    },
    /// A pointer argument off the alignment its `.ptr.align` declaration promises the kernel.
    #[error("argument {index} of `{kernel}` is address {address:#x}, not {align}-byte aligned as `{param}` declares")]
    ArgumentMisaligned {
        /// The kernel's name.
        kernel: String,
        /// Zero-based argument position.
        index: usize,
        /// The address.
        address: u64,
        /// The declared alignment.
        align: u32,
        /// The parameter's declaration.
        param: String,
    },
    /// A buffer argument (or tensor map) made by another `Jit`, whose stream its ordering was
    /// queued on.
    #[error("{argument} was made for stream {made_for:#x}, not for this kernel's stream {stream:#x}: make it with the Jit that loaded the kernel")]
    ArgumentOfAnotherJit {
        /// Which argument, e.g. "argument 2 of `vadd`".
        argument: String,
        /// The `CUstream` it was made for.
        made_for: usize,
        /// The kernel's `CUstream`.
        stream: usize,
    },
    /// A buffer that this `Jit`'s stream cannot use safely (see [`admit`](super::admit)).
    #[error("{buffer} {error}")]
    ForeignBuffer {
        /// Which buffer, e.g. "argument 2 of `vadd`".
        buffer: String,
        /// Its owner, the Jit's, and why they do not go together.
        error: Box<ForeignBuffer>,
    },
    /// The kernel's signature could not be read from the module's PTX text.
    #[error("the parameters of `{kernel}` cannot be read from its PTX: {error}")]
    Signature {
        /// The kernel's name.
        kernel: String,
        /// Where and why reading stopped.
        error: SignatureError,
    },
    /// A typed launch refused before the driver saw it: a buffer shorter than its `#[len(..)]`.
    #[error("launch of `{kernel}` refused: {error}")]
    Extent {
        /// The kernel's name.
        kernel: String,
        /// Which buffer and why.
        error: ExtentError,
    },
    /// A kernel that cannot be emitted as PTX for the target asked for.
    #[error("the kernel `{kernel}` cannot be emitted for {target}: {reason}")]
    Codegen {
        /// The kernel's name.
        kernel: String,
        /// The target.
        target: Target,
        /// The code generator's error.
        reason: String,
    },
    /// The driver refused or failed the launch itself.
    #[error("launch of `{kernel}` failed: {reason}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// The driver's error, as a sentence.
        reason: String,
    },
    /// A TMA descriptor that breaks one of `cuTensorMapEncodeTiled`'s documented rules.
    #[error("invalid TMA descriptor: {0}")]
    TensorMap(#[from] TensorMapError),
    /// The device lacks a feature the call needs (e.g. TMA before sm_90).
    #[error("{feature} needs compute capability {needs_major}.{needs_minor} or newer; this device is {major}.{minor}")]
    Unsupported {
        /// The feature asked for.
        feature: &'static str,
        /// Minimum major compute capability.
        needs_major: u32,
        /// Minimum minor compute capability.
        needs_minor: u32,
        /// This device's major compute capability.
        major: u32,
        /// This device's minor compute capability.
        minor: u32,
    },
    /// Any other driver call that failed; `call` names it.
    #[error("{call} failed: {reason}")]
    Driver {
        /// The driver entry point, e.g. `cuStreamSynchronize`.
        call: &'static str,
        /// The driver's error, as a sentence.
        reason: String,
    },
}

/// `CUDA_ERROR_NAME (the driver's own sentence)` for a failed driver call.
pub(crate) fn describe(err: DriverError) -> String {
    let name = err
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", err.0));
    match err.error_string() {
        Ok(text) => format!("{name} ({})", text.to_string_lossy()),
        Err(_) => name,
    }
}

/// The driver's error name alone, e.g. `CUDA_ERROR_INVALID_PTX`.
pub(crate) fn error_name(err: DriverError) -> String {
    err.error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", err.0))
}

/// Turns a raw driver result into `JitError::Driver` naming the call.
pub(crate) fn check(call: &'static str, result: sys::CUresult) -> Result<(), JitError> {
    result.result().map_err(|e| driver(call, e))
}

/// `JitError::Driver` for a cudarc result.
pub(crate) fn driver(call: &'static str, err: DriverError) -> JitError {
    JitError::Driver {
        call,
        reason: describe(err),
    }
}
