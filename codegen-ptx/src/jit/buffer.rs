//! Device buffers as kernel arguments: the element types a kernel may fill ([`AnyBitPattern`]),
//! the sealed buffer traits that only cudarc's buffers implement, and [`DevicePointer`], a
//! buffer's address borrowed (and its uses ordered on the launching stream) for as long as the
//! argument lives.
//!
//! A buffer argument cannot be made from an integer in safe code: [`Jit::buffer`] and
//! [`Jit::buffer_mut`] take a cudarc buffer ([`CudaSlice`], [`CudaView`], [`CudaViewMut`]: the
//! sealed [`DeviceBuffer`] trait, which no other type can implement) and borrow it for as long
//! as the argument lives; `KernelArg::raw_pointer` is the `unsafe` way to pass an address.
//!
//! [`Jit::buffer`]: super::Jit::buffer
//! [`Jit::buffer_mut`]: super::Jit::buffer_mut

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    SyncOnDrop,
};

use super::error::JitError;
use super::owner::{admit, BufferOwner};

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

/// A device address passed to a kernel: a buffer borrowed for `'a` (made by [`Jit::buffer`] or
/// [`Jit::buffer_mut`](crate::jit::Jit::buffer_mut)), or a raw address (made by the `unsafe`
/// [`KernelArg::raw_pointer`](super::KernelArg::raw_pointer)).
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

    pub(crate) fn is_raw(&self) -> bool {
        matches!(self.source, Source::Raw)
    }

    /// `address` as a pointer without an owner, a length or ordering.
    ///
    /// # Safety
    ///
    /// The contract of `KernelArg::raw_pointer`.
    pub(crate) unsafe fn raw(address: u64) -> DevicePointer<'static> {
        DevicePointer {
            address,
            source: Source::Raw,
        }
    }

    /// The address, where it lives in the pointer: what the driver's `kernelParams` entry points
    /// at.
    pub(crate) fn address_ref(&self) -> &u64 {
        &self.address
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
