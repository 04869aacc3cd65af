//! Kernel arguments: scalars, device buffers borrowed for the launch, and tensor maps; who owns
//! a buffer and whether the `Jit`'s stream may use it; and the check of a launch's arguments
//! against the kernel's PTX signature. The checks are pure functions, tested without a GPU.
//!
//! A buffer argument cannot be made from an integer in safe code: [`Jit::buffer`] and
//! [`Jit::buffer_mut`](crate::jit::Jit::buffer_mut) take a cudarc buffer ([`CudaSlice`],
//! [`CudaView`], [`CudaViewMut`]: the sealed [`DeviceBuffer`] trait, which no other type can
//! implement) and borrow it for as long as the argument lives; [`KernelArg::raw_pointer`] is the
//! `unsafe` way to pass an address.
//!
//! [`Jit::buffer`]: crate::jit::Jit::buffer

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    SyncOnDrop,
};

use super::error::JitError;
use super::signature::{PtxClass, PtxParam, PtxParamKind, PtxSpace};
use super::tensor_map::TensorMap;

/// Element types for which every bit pattern is a valid value. A kernel can write any bytes into
/// a buffer it is given, and the host later reads them back as `Self`; so a buffer passed to a
/// launch (or to a tensor map) must hold such a type. `bool` and `char` are not.
///
/// # Safety
///
/// Every sequence of `size_of::<Self>()` initialised bytes must be a valid `Self`, and `Self`
/// must have no padding bytes. (The `DeviceRepr` half of the contract is cudarc's.)
pub unsafe trait AnyBitPattern: DeviceRepr {}

macro_rules! any_bit_pattern {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive integer or IEEE float: every bit pattern is a value, no padding.
        unsafe impl AnyBitPattern for $t {}
    )*};
}
any_bit_pattern!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
any_bit_pattern!(half::f16, half::bf16);
// SAFETY: an array of such elements has no padding and any bytes are valid elements.
unsafe impl<T: AnyBitPattern, const N: usize> AnyBitPattern for [T; N] {}

mod sealed {
    use super::*;

    /// What a launch needs of a buffer; implemented for cudarc's three buffer types only.
    pub trait Buffer<T> {
        /// The stream the buffer was allocated on (and is freed on).
        fn home(&self) -> &Arc<CudaStream>;
        /// Its length in bytes.
        fn bytes(&self) -> usize;
        /// Its address, with `stream` ordered after the buffer's last write (cudarc's
        /// `device_ptr`); the guard records the read on `stream` when dropped.
        fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }

    /// What a launch needs of a buffer it may write.
    pub trait BufferMut<T>: Buffer<T> {
        /// Its address, with `stream` ordered after the buffer's last read and write (cudarc's
        /// `device_ptr_mut`); the guard records the write on `stream` when dropped.
        fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }
}

/// A device buffer a kernel may read: cudarc's [`CudaSlice`], [`CudaView`] or [`CudaViewMut`].
/// Sealed: the address it yields is always that of a live cudarc allocation (or a view into one),
/// never an integer from elsewhere.
pub trait DeviceBuffer<T>: sealed::Buffer<T> {}

/// A device buffer a kernel may write: [`CudaSlice`] or [`CudaViewMut`], borrowed mutably.
pub trait DeviceBufferMut<T>: DeviceBuffer<T> + sealed::BufferMut<T> {}

macro_rules! buffer_impls {
    ($($ty:ty),*) => {$(
        impl<T> sealed::Buffer<T> for $ty {
            fn home(&self) -> &Arc<CudaStream> {
                DeviceSlice::stream(self)
            }
            fn bytes(&self) -> usize {
                DeviceSlice::num_bytes(self)
            }
            fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr(stream)
            }
        }
        impl<T> DeviceBuffer<T> for $ty {}
    )*};
}
buffer_impls!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

macro_rules! buffer_mut_impls {
    ($($ty:ty),*) => {$(
        impl<T> sealed::BufferMut<T> for $ty {
            fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr_mut(stream)
            }
        }
        impl<T> DeviceBufferMut<T> for $ty {}
    )*};
}
buffer_mut_impls!(CudaSlice<T>, CudaViewMut<'_, T>);

/// Where a buffer lives: its device, CUDA context and allocation stream, and whether its cudarc
/// context records events for it. Handles are shown and compared as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferOwner {
    /// Device ordinal.
    pub ordinal: usize,
    /// The `CUcontext` handle.
    pub context: usize,
    /// The `CUstream` handle of the stream the buffer was allocated on (0, 1, 2: a default stream).
    pub stream: usize,
    /// Whether the cudarc context the buffer was allocated through tracks its uses with events
    /// (`CudaContext::is_event_tracking`).
    pub tracking: bool,
}

impl BufferOwner {
    /// The owner of what is allocated on `stream`.
    pub fn of_stream(stream: &CudaStream) -> Self {
        let ctx = stream.context();
        BufferOwner {
            ordinal: ctx.ordinal(),
            context: ctx.cu_ctx() as usize,
            stream: stream.cu_stream() as usize,
            tracking: ctx.is_event_tracking(),
        }
    }

    /// Whether `stream` is a default stream (the legacy null stream, `CU_STREAM_LEGACY` or
    /// `CU_STREAM_PER_THREAD`) rather than one created by `new_stream`.
    pub fn on_default_stream(&self) -> bool {
        self.stream <= 2
    }
}

impl fmt::Display for BufferOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device {} (context {:#x}, {}stream {:#x}",
            self.ordinal,
            self.context,
            if self.on_default_stream() {
                "default "
            } else {
                ""
            },
            self.stream
        )?;
        if !self.tracking {
            f.write_str(", no event tracking")?;
        }
        f.write_str(")")
    }
}

/// Why a `Jit` refuses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForeignReason {
    /// The buffer lives in another CUDA context: its address means nothing (or something else)
    /// in the `Jit`'s.
    OtherContext,
    /// Another stream's buffer whose cudarc context does not record events: nothing would order
    /// its writes before the `Jit`'s use, or its free after it.
    Untracked,
    /// Another stream's buffer allocated on a default stream: cudarc orders such a buffer with
    /// other streams only while its context has a stream of its own, which may end before the
    /// `Jit`'s use does.
    DefaultStream,
}

impl fmt::Display for ForeignReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ForeignReason::OtherContext => {
                "it is another CUDA context, where its address means nothing; allocate it through the same Jit"
            }
            ForeignReason::Untracked => {
                "its context does not track uses with events, so nothing would order its writes and its free with the Jit's stream; allocate it through the Jit"
            }
            ForeignReason::DefaultStream => {
                "it was allocated on a default stream, which cudarc orders with other streams only while its context has a stream of its own; allocate it on a created stream or through the Jit"
            }
        })
    }
}

/// A buffer a `Jit` cannot use, with both owners and the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("belongs to {owner}, not to the Jit's {jit}: {reason}")]
pub struct ForeignBuffer {
    /// Where the buffer lives.
    pub owner: BufferOwner,
    /// The `Jit`'s context and stream.
    pub jit: BufferOwner,
    /// Why that cannot work.
    pub reason: ForeignReason,
}

/// Whether a buffer owned by `owner` may be used on the stream `jit` describes.
///
/// Accepted: a buffer of the `Jit`'s own stream (stream order alone orders its allocation, every
/// use and its free), or a buffer of another stream of the same CUDA context that cudarc tracks
/// with events and that was allocated on a created stream: each use waits for its last write (or,
/// for a write, its last read too) and records itself, and its free waits for those records.
/// Refused: another context ([`ForeignReason::OtherContext`]), an untracked buffer of another
/// stream ([`ForeignReason::Untracked`]), and one allocated on a default stream
/// ([`ForeignReason::DefaultStream`]).
pub fn admit(owner: &BufferOwner, jit: &BufferOwner) -> Result<(), ForeignBuffer> {
    let refuse = |reason| {
        Err(ForeignBuffer {
            owner: *owner,
            jit: *jit,
            reason,
        })
    };
    if owner.context != jit.context {
        refuse(ForeignReason::OtherContext)
    } else if owner.stream == jit.stream {
        Ok(())
    } else if !owner.tracking {
        refuse(ForeignReason::Untracked)
    } else if owner.on_default_stream() {
        refuse(ForeignReason::DefaultStream)
    } else {
        Ok(())
    }
}

/// A device address passed to a kernel: a buffer borrowed for `'a` (made by [`Jit::buffer`] or
/// [`Jit::buffer_mut`](crate::jit::Jit::buffer_mut)), or a raw address (made by the `unsafe`
/// [`KernelArg::raw_pointer`]).
///
/// [`Jit::buffer`]: crate::jit::Jit::buffer
pub struct DevicePointer<'a> {
    address: u64,
    source: Source<'a>,
}

enum Source<'a> {
    Buffer {
        owner: BufferOwner,
        /// The stream the buffer was allocated on (and is freed on).
        home: Arc<CudaStream>,
        /// The `CUstream` the argument was made for (and its waits were queued on).
        bound_to: usize,
        bytes: usize,
        writes: bool,
        /// Records this use on the `Jit`'s stream once the argument is dropped, after every
        /// launch that used it was queued; `None` for a buffer [`admit`] refuses, whose events
        /// are never touched (another context's events cannot be waited on or recorded here, and
        /// trying would leave an error in the `Jit`'s context for its next call).
        _order: Option<SyncOnDrop<'a>>,
    },
    Raw,
}

impl<'a> DevicePointer<'a> {
    /// `buffer` read on `stream`.
    pub(crate) fn read<T, B: DeviceBuffer<T> + ?Sized>(
        buffer: &'a B,
        stream: &'a CudaStream,
    ) -> Self {
        let (home, bytes) = (Arc::clone(buffer.home()), buffer.bytes());
        Self::of_buffer(home, bytes, stream, false, || buffer.read(stream))
    }

    /// `buffer` written (and maybe read) on `stream`.
    pub(crate) fn write<T, B: DeviceBufferMut<T> + ?Sized>(
        buffer: &'a mut B,
        stream: &'a CudaStream,
    ) -> Self {
        let (home, bytes) = (Arc::clone(buffer.home()), buffer.bytes());
        Self::of_buffer(home, bytes, stream, true, || buffer.write(stream))
    }

    /// The argument for a buffer allocated on `home` of `bytes`, used on `stream`: `order` (the
    /// buffer's `read` or `write`, which waits for its earlier uses and records this one) runs
    /// only for a buffer [`admit`] lets `stream` use.
    fn of_buffer(
        home: Arc<CudaStream>,
        bytes: usize,
        stream: &'a CudaStream,
        writes: bool,
        order: impl FnOnce() -> (u64, SyncOnDrop<'a>),
    ) -> Self {
        let owner = BufferOwner::of_stream(&home);
        let (address, order) = if admit(&owner, &BufferOwner::of_stream(stream)).is_ok() {
            let (address, order) = order();
            (address, Some(order))
        } else {
            (0, None)
        };
        DevicePointer {
            address,
            source: Source::Buffer {
                owner,
                home,
                bound_to: stream.cu_stream() as usize,
                bytes,
                writes,
                _order: order,
            },
        }
    }

    /// The device address.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// The buffer's length in bytes; `None` for a raw address.
    pub fn bytes(&self) -> Option<usize> {
        match &self.source {
            Source::Buffer { bytes, .. } => Some(*bytes),
            Source::Raw => None,
        }
    }

    /// Where the buffer lives; `None` for a raw address.
    pub fn owner(&self) -> Option<&BufferOwner> {
        match &self.source {
            Source::Buffer { owner, .. } => Some(owner),
            Source::Raw => None,
        }
    }

    /// Whether the argument was made for writing ([`Jit::buffer_mut`](crate::jit::Jit::buffer_mut)).
    pub fn writes(&self) -> bool {
        matches!(self.source, Source::Buffer { writes: true, .. })
    }

    /// The buffer's allocation stream when it is not `stream` (the `CUstream` the launch ran
    /// on); `None` for a buffer of that stream or a raw address.
    pub(crate) fn foreign_home(&self, stream: usize) -> Option<&Arc<CudaStream>> {
        match &self.source {
            Source::Buffer { home, owner, .. } if owner.stream != stream => Some(home),
            _ => None,
        }
    }

    fn is_raw(&self) -> bool {
        matches!(self.source, Source::Raw)
    }

    /// Refuses the pointer for a launch on `jit`'s stream: another `Jit`'s argument, or a buffer
    /// [`admit`] refuses. `what` names it in the error.
    pub(crate) fn check_owner(
        &self,
        jit: &BufferOwner,
        what: impl Fn() -> String,
    ) -> Result<(), JitError> {
        let Source::Buffer {
            owner, bound_to, ..
        } = &self.source
        else {
            return Ok(());
        };
        if *bound_to != jit.stream {
            return Err(JitError::ArgumentOfAnotherJit {
                argument: what(),
                made_for: *bound_to,
                stream: jit.stream,
            });
        }
        admit(owner, jit).map_err(|error| JitError::ForeignBuffer {
            buffer: what(),
            error: Box::new(error),
        })
    }
}

impl fmt::Debug for DevicePointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::Buffer { bytes, writes, .. } => write!(
                f,
                "Buffer({:#x}, {bytes} bytes, {})",
                self.address,
                if *writes { "written" } else { "read" }
            ),
            Source::Raw => write!(f, "RawPointer({:#x})", self.address),
        }
    }
}

/// One kernel argument, passed by value as the driver ABI expects (`kernelParams[i]` points at
/// the argument's bytes, which the driver copies at launch). Scalars are built directly
/// (`KernelArg::U32(n)`, or `n.into()`); buffers by [`Jit::buffer`] / [`Jit::buffer_mut`]
/// (borrowed for `'a`); tensor maps by reference (`(&map).into()`).
///
/// [`Jit::buffer`]: crate::jit::Jit::buffer
/// [`Jit::buffer_mut`]: crate::jit::Jit::buffer_mut
pub enum KernelArg<'a> {
    /// `.u8` / `.b8` parameter.
    U8(u8),
    /// `.s8` / `.b8` parameter.
    I8(i8),
    /// `.u16` / `.b16` parameter.
    U16(u16),
    /// `.s16` / `.b16` parameter.
    I16(i16),
    /// `.u32` / `.b32` parameter.
    U32(u32),
    /// `.s32` / `.b32` parameter.
    I32(i32),
    /// `.u64` / `.b64` parameter.
    U64(u64),
    /// `.s64` / `.b64` parameter.
    I64(i64),
    /// `.f32` / `.b32` parameter.
    F32(f32),
    /// `.f64` / `.b64` parameter.
    F64(f64),
    /// A device address (`.u64` / `.b64`, or `.ptr` to global or generic memory).
    Pointer(DevicePointer<'a>),
    /// A `CUtensorMap` passed by value (`.param .align 64 .b8 name[128]`), with the buffer it
    /// addresses.
    TensorMap(&'a TensorMap<'a>),
    /// The address of the buffer a tensor map addresses, as a pointer parameter: for a kernel
    /// that reaches one buffer both through a map and through its address (a GEMM that writes
    /// D with TMA stores or with plain ones), which a second borrow of the buffer could not
    /// give while the map holds it. The map's borrow, with its ordering, covers both.
    MapBuffer(&'a TensorMap<'a>),
}

impl KernelArg<'static> {
    /// `address` as a pointer argument, unchecked: no owner, no length, no ordering.
    ///
    /// # Safety
    ///
    /// For every launch that takes this argument, until that launch's kernel has finished:
    /// `address` is an address in the launching `Jit`'s context that the kernel may access as it
    /// does (inside a live allocation, for as many bytes as the kernel's other arguments let it
    /// reach); no other stream uses those bytes while the kernel runs, and work that wrote them
    /// before was ordered before the launch; the allocation is not freed while the kernel runs;
    /// and whatever the kernel writes there is valid for the types the host later reads it as.
    pub unsafe fn raw_pointer(address: u64) -> Self {
        KernelArg::Pointer(DevicePointer {
            address,
            source: Source::Raw,
        })
    }
}

impl KernelArg<'_> {
    /// Bytes the argument occupies in the kernel's parameter buffer.
    pub fn size_bytes(&self) -> usize {
        match self {
            KernelArg::U8(_) | KernelArg::I8(_) => 1,
            KernelArg::U16(_) | KernelArg::I16(_) => 2,
            KernelArg::U32(_) | KernelArg::I32(_) | KernelArg::F32(_) => 4,
            KernelArg::U64(_)
            | KernelArg::I64(_)
            | KernelArg::F64(_)
            | KernelArg::Pointer(_)
            | KernelArg::MapBuffer(_) => 8,
            KernelArg::TensorMap(_) => TensorMap::BYTES,
        }
    }

    /// The device address the argument carries (a pointer's, or a tensor map's buffer's).
    pub fn address(&self) -> Option<u64> {
        match self {
            KernelArg::Pointer(p) => Some(p.address()),
            KernelArg::TensorMap(m) | KernelArg::MapBuffer(m) => Some(m.pointer().address()),
            _ => None,
        }
    }

    /// Whether the argument can fill parameter `p`, as far as `p`'s declaration tells: a scalar
    /// the parameter's width and class (`.bN` takes any class), a pointer a 64-bit `.u64` /
    /// `.b64` scalar or a `.ptr` (to global or generic memory, unless raw), a tensor map a
    /// 128-byte, 64-byte aligned array.
    pub fn fits(&self, p: &PtxParam) -> bool {
        use PtxClass::{Bits, Float, Signed, Unsigned};
        let scalar = |class: PtxClass, bits: u32| match p.kind {
            PtxParamKind::Scalar(t) => t.bits == bits && (t.class == class || t.class == Bits),
            _ => false,
        };
        match self {
            KernelArg::U8(_) => scalar(Unsigned, 8),
            KernelArg::I8(_) => scalar(Signed, 8),
            KernelArg::U16(_) => scalar(Unsigned, 16),
            KernelArg::I16(_) => scalar(Signed, 16),
            KernelArg::U32(_) => scalar(Unsigned, 32),
            KernelArg::I32(_) => scalar(Signed, 32),
            KernelArg::F32(_) => scalar(Float, 32),
            KernelArg::U64(_) => scalar(Unsigned, 64),
            KernelArg::I64(_) => scalar(Signed, 64),
            KernelArg::F64(_) => scalar(Float, 64),
            KernelArg::Pointer(ptr) => pointer_fits(p, ptr.is_raw()),
            KernelArg::MapBuffer(m) => pointer_fits(p, m.pointer().is_raw()),
            KernelArg::TensorMap(_) => p.is_tensor_map(),
        }
    }

    /// Pointer to the argument's bytes, for the driver's `kernelParams` array. The driver only
    /// reads through it, during the launch call, while `self` is borrowed.
    pub(crate) fn as_param_ptr(&self) -> *mut c_void {
        let p: *const c_void = match self {
            KernelArg::U8(v) => (v as *const u8).cast(),
            KernelArg::I8(v) => (v as *const i8).cast(),
            KernelArg::U16(v) => (v as *const u16).cast(),
            KernelArg::I16(v) => (v as *const i16).cast(),
            KernelArg::U32(v) => (v as *const u32).cast(),
            KernelArg::I32(v) => (v as *const i32).cast(),
            KernelArg::U64(v) => (v as *const u64).cast(),
            KernelArg::I64(v) => (v as *const i64).cast(),
            KernelArg::F32(v) => (v as *const f32).cast(),
            KernelArg::F64(v) => (v as *const f64).cast(),
            KernelArg::Pointer(p) => (&p.address as *const u64).cast(),
            KernelArg::TensorMap(m) => m.as_bytes().as_ptr().cast(),
            KernelArg::MapBuffer(m) => (&m.pointer().address as *const u64).cast(),
        };
        p.cast_mut()
    }
}

impl fmt::Debug for KernelArg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelArg::U8(v) => write!(f, "U8({v})"),
            KernelArg::I8(v) => write!(f, "I8({v})"),
            KernelArg::U16(v) => write!(f, "U16({v})"),
            KernelArg::I16(v) => write!(f, "I16({v})"),
            KernelArg::U32(v) => write!(f, "U32({v})"),
            KernelArg::I32(v) => write!(f, "I32({v})"),
            KernelArg::U64(v) => write!(f, "U64({v})"),
            KernelArg::I64(v) => write!(f, "I64({v})"),
            KernelArg::F32(v) => write!(f, "F32({v})"),
            KernelArg::F64(v) => write!(f, "F64({v})"),
            KernelArg::Pointer(p) => write!(f, "{p:?}"),
            KernelArg::TensorMap(m) => write!(f, "TensorMap(over {:?})", m.pointer()),
            KernelArg::MapBuffer(m) => write!(f, "MapBuffer({:?})", m.pointer()),
        }
    }
}

macro_rules! kernel_arg_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for KernelArg<'_> {
            fn from(x: $t) -> Self {
                KernelArg::$v(x)
            }
        }
    )*};
}
kernel_arg_from!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
    u64 => U64, i64 => I64, f32 => F32, f64 => F64);

impl<'a> From<&'a TensorMap<'a>> for KernelArg<'a> {
    fn from(m: &'a TensorMap<'a>) -> Self {
        KernelArg::TensorMap(m)
    }
}

/// Whether a device address (`raw`: one without an owner) can fill parameter `p`: a 64-bit
/// `.u64` / `.b64` scalar, or a `.ptr` to global or generic memory (any space, raw).
fn pointer_fits(p: &PtxParam, raw: bool) -> bool {
    use PtxClass::{Bits, Unsigned};
    match p.kind {
        PtxParamKind::Scalar(t) => t.bits == 64 && matches!(t.class, Unsigned | Bits),
        PtxParamKind::Pointer { ty, space, .. } => {
            ty.bits == 64
                && matches!(ty.class, Unsigned | Bits)
                && (raw || matches!(space, PtxSpace::Generic | PtxSpace::Global))
        }
        PtxParamKind::Array { .. } => false,
    }
}

/// Checks `args` against kernel `kernel`'s PTX parameters before a launch on the stream `jit`
/// describes. On success: one argument per parameter, each fitting its parameter
/// ([`KernelArg::fits`]); an address the PTX declares aligned (`.ptr.align N`) is so aligned;
/// and every buffer (a pointer's, or a tensor map's) was made for this stream and is one
/// [`admit`] accepts. A raw pointer is checked for kind and alignment only.
pub fn check_args(
    kernel: &str,
    params: &[PtxParam],
    args: &[KernelArg<'_>],
    jit: &BufferOwner,
) -> Result<(), JitError> {
    if params.len() != args.len() {
        return Err(JitError::ArgumentCount {
            kernel: kernel.to_string(),
            expected: params.len(),
            given: args.len(),
        });
    }
    for (index, (arg, param)) in args.iter().zip(params).enumerate() {
        if !arg.fits(param) {
            return Err(JitError::ArgumentKind {
                kernel: kernel.to_string(),
                index,
                arg: format!("{arg:?}"),
                given: arg.size_bytes(),
                param: param.to_string(),
                expected: param.size,
            });
        }
        let what = || format!("argument {index} of `{kernel}`");
        let ptr = match arg {
            KernelArg::Pointer(ptr) => ptr,
            KernelArg::MapBuffer(m) => m.pointer(),
            KernelArg::TensorMap(m) => {
                m.pointer()
                    .check_owner(jit, || format!("the buffer of tensor map {}", what()))?;
                continue;
            }
            _ => continue,
        };
        if let PtxParamKind::Pointer { align: Some(a), .. } = param.kind {
            if ptr.address() % u64::from(a) != 0 {
                return Err(JitError::ArgumentMisaligned {
                    kernel: kernel.to_string(),
                    index,
                    address: ptr.address(),
                    align: a,
                    param: param.to_string(),
                });
            }
        }
        ptr.check_owner(jit, what)?;
    }
    Ok(())
}
