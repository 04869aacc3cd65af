//! `Jit`: one device's context and stream, its limits, and the module cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{
    result, sys, CudaContext, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits,
};
use dsl_core::ir::Target;

use super::args::KernelArg;
use super::buffer::{AnyBitPattern, DeviceBuffer, DeviceBufferMut, DevicePointer};
use super::context::Shared;
use super::error::{describe, driver, JitError};
use super::launch::DeviceLimits;
use super::module::{load_module, ptx_hash, JitModule};
use super::owner::{admit, BufferOwner, ForeignBuffer};
use super::tensor_map::{TensorMap, TensorMapMut};
use super::tensor_map_spec::TensorMapSpec;

/// Oldest driver the runtime accepts (CUDA 12.0: cluster launch and tensor maps).
const MIN_DRIVER_VERSION: i32 = 12000;

/// A cache entry: the PTX text it stands for and, once loaded, its module. Loading happens
/// under the entry's own lock, so one text is compiled once while other texts load in parallel.
struct Slot {
    ptx: Arc<str>,
    module: Mutex<Option<Arc<JitModule>>>,
}

/// The JIT runtime for one GPU: a context, the stream all work goes to, the device's limits,
/// and a cache of loaded modules. `Send + Sync`: share it between threads behind an `Arc`.
///
/// Buffers from elsewhere are ordered, not trusted to be: cudarc's event tracking stays on, so
/// each use of a buffer on this `Jit`'s stream waits for the buffer's last write (a write also
/// for its last read) wherever it happened, records itself, and the buffer's free waits for
/// those records. Buffers that tracking cannot order (another context, no events, a default
/// stream) are refused with [`JitError::ForeignBuffer`] (see [`admit`]).
pub struct Jit {
    shared: Arc<Shared>,
    cache: Mutex<HashMap<u64, Vec<Arc<Slot>>>>,
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jit")
            .field("ordinal", &self.shared.ctx.ordinal())
            .field("limits", &self.shared.limits)
            .field("driver_version", &self.shared.driver_version)
            .finish_non_exhaustive()
    }
}

fn no_gpu(reason: String) -> JitError {
    JitError::NoGpu { reason }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while the lock was held leaves only a map of fully built entries behind (entries
    // are inserted whole), so the data is still sound to use.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The driver's CUDA version, refused with [`JitError::NoGpu`] when the driver does not say it
/// or is older than CUDA 12.0.
fn driver_version() -> Result<i32, JitError> {
    let mut version = 0;
    // SAFETY: `version` is a valid out-pointer; the call needs no initialisation.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| {
            no_gpu(format!(
                "the CUDA driver did not report its version: {}",
                describe(e)
            ))
        })?;
    if version < MIN_DRIVER_VERSION {
        return Err(no_gpu(format!(
            "the CUDA driver supports CUDA {}.{}; rute's JIT needs 12.0 or newer",
            version / 1000,
            (version % 1000) / 10
        )));
    }
    Ok(version)
}

impl Jit {
    /// Opens device `ordinal`: loads libcuda, initialises the driver, retains the device's
    /// primary context and creates a stream. Without a driver, without a device, or with a
    /// driver older than CUDA 12.0 it returns [`JitError::NoGpu`] saying which.
    pub fn new(ordinal: usize) -> Result<Jit, JitError> {
        // SAFETY: only opens (and closes again) the shared library by its usual names; any
        // later driver call goes through cudarc's loader, which panics if the library is
        // missing, and this check is what keeps it from being reached then.
        if !unsafe { sys::is_culib_present() } {
            return Err(no_gpu(
                "the CUDA driver library (libcuda.so) is not installed on this machine".into(),
            ));
        }
        let version = driver_version()?;
        result::init().map_err(|e| {
            no_gpu(format!(
                "the CUDA driver failed to initialise: {}",
                describe(e)
            ))
        })?;
        let count = result::device::get_count().map_err(|e| {
            no_gpu(format!(
                "the CUDA driver could not count devices: {}",
                describe(e)
            ))
        })?;
        let count = usize::try_from(count).unwrap_or(0);
        if ordinal >= count {
            return Err(no_gpu(format!(
                "device ordinal {ordinal} does not exist: the driver sees {count} device(s)"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| {
            no_gpu(format!(
                "could not open a context on device {ordinal}: {}",
                describe(e)
            ))
        })?;
        // cudarc's event tracking stays on (the default): slices leave this runtime as plain
        // `CudaSlice`s usable with any cudarc call on any stream, and `context()`/`stream()`
        // are public, so stream order alone could not order their uses.
        let stream = ctx.new_stream().map_err(|e| driver("cuStreamCreate", e))?;
        Jit::over(ctx, stream, version)
    }

    /// The JIT runtime on a stream the caller made (cudarc's `CudaContext::new_stream`, or any
    /// other): its work goes to `stream`, in order with the caller's other work there, as a
    /// cuBLAS handle made with `CudaBlas::new(stream)` does. Refuses a driver older than CUDA
    /// 12.0 with [`JitError::NoGpu`].
    pub fn on_stream(stream: Arc<CudaStream>) -> Result<Jit, JitError> {
        // The stream's context means the driver is loaded and initialised.
        let version = driver_version()?;
        Jit::over(Arc::clone(stream.context()), stream, version)
    }

    /// The runtime over `ctx` and `stream` (of `ctx`), with the driver's `version`.
    fn over(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, version: i32) -> Result<Jit, JitError> {
        let limits = read_limits(&ctx)?;
        Ok(Jit {
            shared: Arc::new(Shared {
                ctx,
                stream,
                limits,
                driver_version: version,
            }),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Loads `ptx` into this device's context, or returns the module already loaded from the
    /// same text: for equal texts the result is the same `Arc` (pointer-equal). A text the
    /// driver refuses gives [`JitError::Rejected`] with the JIT log, and is not cached, so a
    /// later call tries again.
    pub fn load(&self, ptx: &str) -> Result<Arc<JitModule>, JitError> {
        let hash = ptx_hash(ptx);
        let slot = {
            let mut cache = lock(&self.cache);
            let bucket = cache.entry(hash).or_default();
            // The hash picks the bucket; the text decides, so a collision cannot hand back a
            // module built from other PTX.
            match bucket.iter().find(|s| &*s.ptx == ptx) {
                Some(s) => Arc::clone(s),
                None => {
                    let s = Arc::new(Slot {
                        ptx: Arc::from(ptx),
                        module: Mutex::new(None),
                    });
                    bucket.push(Arc::clone(&s));
                    s
                }
            }
        };
        let mut module = lock(&slot.module);
        if let Some(m) = module.as_ref() {
            return Ok(Arc::clone(m));
        }
        let loaded = Arc::new(load_module(&self.shared, Arc::clone(&slot.ptx), hash)?);
        *module = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    /// Number of distinct PTX texts loaded (successfully) through [`Jit::load`].
    pub fn cached_modules(&self) -> usize {
        let slots: Vec<Arc<Slot>> = lock(&self.cache).values().flatten().cloned().collect();
        slots.iter().filter(|s| lock(&s.module).is_some()).count()
    }

    /// The device's limits, as read from the driver.
    pub fn limits(&self) -> &DeviceLimits {
        &self.shared.limits
    }

    /// The PTX target for this device: its own `a` target where rute has one (sm_90a on
    /// compute capability 9.0, sm_100a on 10.0), otherwise sm_80 PTX, which the driver compiles
    /// for any newer device; [`JitError::Unsupported`] before sm_80.
    pub fn target(&self) -> Result<Target, JitError> {
        let (major, minor) = self.shared.limits.compute_capability;
        match (major, minor) {
            (9, 0) => Ok(Target::Sm90a),
            (10, 0) => Ok(Target::Sm100a),
            (major, _) if major >= 8 => Ok(Target::Sm80),
            _ => Err(JitError::Unsupported {
                feature: "rute's PTX (sm_80 and up)",
                needs_major: 8,
                needs_minor: 0,
                major,
                minor,
            }),
        }
    }

    /// The driver's CUDA version, e.g. 13000 for CUDA 13.0.
    pub fn driver_version(&self) -> i32 {
        self.shared.driver_version
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn device_name(&self) -> Result<String, JitError> {
        self.shared
            .ctx
            .name()
            .map_err(|e| driver("cuDeviceGetName", e))
    }

    /// The cudarc context (the device's primary context).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }

    /// The stream every launch, copy and allocation of this runtime goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.shared.stream
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>, JitError> {
        self.shared
            .stream
            .clone_htod(host)
            .map_err(|e| driver("cuMemcpyHtoDAsync", e))
    }

    /// A new device buffer of `len` zeroed elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<CudaSlice<T>, JitError> {
        self.shared
            .stream
            .alloc_zeros(len)
            .map_err(|e| driver("cuMemAllocAsync", e))
    }

    /// Copies `src` into the start of `dst` on the device (`cuMemcpyDtoDAsync`, queued on this
    /// stream): the device's own copy, whose rate is what a memory-bound kernel is measured
    /// against. Refused, before anything is queued, if `dst` is shorter than `src` or either
    /// buffer is one this stream cannot use ([`Jit::check_buffer`]).
    pub fn copy<T: DeviceRepr>(
        &self,
        src: &CudaSlice<T>,
        dst: &mut CudaSlice<T>,
    ) -> Result<(), JitError> {
        let foreign = |which: &str, error| JitError::ForeignBuffer {
            buffer: which.into(),
            error: Box::new(error),
        };
        self.check_buffer(src)
            .map_err(|e| foreign("the copy's source", e))?;
        self.check_buffer(&*dst)
            .map_err(|e| foreign("the copy's destination", e))?;
        if dst.len() < src.len() {
            return Err(JitError::Driver {
                call: "cuMemcpyDtoDAsync",
                reason: format!(
                    "the destination holds {} elements, fewer than the source's {}",
                    dst.len(),
                    src.len()
                ),
            });
        }
        self.shared
            .stream
            .memcpy_dtod(src, dst)
            .map_err(|e| driver("cuMemcpyDtoDAsync", e))
    }

    /// Copies `device` back to the host, after all work queued before it has finished. A fault
    /// in that work is returned here rather than data. A buffer this stream cannot use
    /// ([`Jit::check_buffer`]) is refused.
    pub fn download<T: DeviceRepr>(&self, device: &CudaSlice<T>) -> Result<Vec<T>, JitError> {
        self.check_buffer(device)
            .map_err(|error| JitError::ForeignBuffer {
                buffer: "the buffer to download".into(),
                error: Box::new(error),
            })?;
        let host = self
            .shared
            .stream
            .clone_dtoh(device)
            .map_err(|e| driver("cuMemcpyDtoHAsync", e))?;
        // cudarc synchronises after the copy but can only record, not return, what that
        // synchronisation reported; collect it now.
        self.shared
            .ctx
            .check_err()
            .map_err(|e| driver("cuStreamSynchronize", e))?;
        Ok(host)
    }

    /// `buffer` as a kernel argument the kernel reads, borrowed for as long as the argument
    /// lives. This stream is ordered after the buffer's last write now; the read is recorded when
    /// the argument is dropped, after the launches that used it were queued. The launch refuses
    /// the argument if [`Jit::check_buffer`] would.
    ///
    /// A kernel that writes the buffer must get it through [`Jit::buffer_mut`]: the buffer is
    /// shared for as long as the argument lives, so a write through it breaks the contract of
    /// the (`unsafe`) [`JitFunction::launch`](super::JitFunction::launch), and readers on other
    /// streams are not ordered after it. The typed launch passes `&` buffers only to `ConstPtr`
    /// parameters.
    pub fn buffer<'a, T: AnyBitPattern, B: DeviceBuffer<T>>(
        &'a self,
        buffer: &'a B,
    ) -> KernelArg<'a> {
        KernelArg::Pointer(DevicePointer::read(buffer, &self.shared.stream))
    }

    /// `buffer` as a kernel argument the kernel may write, borrowed mutably for as long as the
    /// argument lives: as [`Jit::buffer`], but ordered after the buffer's last read as well, and
    /// recorded as a write.
    pub fn buffer_mut<'a, T: AnyBitPattern, B: DeviceBufferMut<T>>(
        &'a self,
        buffer: &'a mut B,
    ) -> KernelArg<'a> {
        KernelArg::Pointer(DevicePointer::write(buffer, &self.shared.stream))
    }

    /// Whether this `Jit`'s stream may use `buffer`: the pure rule [`admit`] applied to the
    /// buffer's owner and this `Jit`'s.
    pub fn check_buffer<T, B: DeviceBuffer<T> + ?Sized>(
        &self,
        buffer: &B,
    ) -> Result<(), ForeignBuffer> {
        admit(&BufferOwner::of_stream(buffer.home()), &self.owner())
    }

    /// This `Jit`'s device, context and stream, as a buffer allocated here reports them.
    pub fn owner(&self) -> BufferOwner {
        BufferOwner::of_stream(&self.shared.stream)
    }

    /// Sets every byte of `buffer` to `byte` (queued on the stream, ordered like a write). The
    /// element type must take any bit pattern, since `byte` repeated need not be a valid value
    /// otherwise.
    pub fn fill_bytes<T: AnyBitPattern, B: DeviceBufferMut<T>>(
        &self,
        buffer: &mut B,
        byte: u8,
    ) -> Result<(), JitError> {
        self.check_buffer(buffer)
            .map_err(|error| JitError::ForeignBuffer {
                buffer: "the buffer to fill".into(),
                error: Box::new(error),
            })?;
        self.bind()?;
        let bytes = buffer.bytes();
        let stream = &self.shared.stream;
        let (address, _record) = buffer.write(stream);
        // SAFETY: `address` starts a live allocation (or a view into one) of `bytes` bytes in
        // this context (checked just above), borrowed mutably across the call, and the memset is
        // queued on the stream that `write` ordered after its earlier uses; `_record` records
        // the write once it is queued. Any bytes are a valid T (`AnyBitPattern`).
        unsafe { result::memset_d8_async(address, byte, bytes, stream.cu_stream()) }
            .map_err(|e| driver("cuMemsetD8Async", e))
    }

    /// Waits for all work queued on the stream; a kernel that faulted reports here.
    pub fn synchronize(&self) -> Result<(), JitError> {
        self.shared
            .stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }

    pub(crate) fn bind(&self) -> Result<(), JitError> {
        self.shared.bind()
    }
}

impl Jit {
    /// A TMA descriptor over `buffer`, which kernels only read through it (TMA loads): `spec`
    /// is checked against the buffer's address and length ([`TensorMapSpec::validate_for`]),
    /// encoded, and the buffer stays borrowed, its use ordered on this `Jit`'s stream like a
    /// [`Jit::buffer`] argument's, until the map is dropped. Needs an sm_90 or newer device.
    pub fn tensor_map<'a, T: AnyBitPattern, B: DeviceBuffer<T>>(
        &'a self,
        spec: &TensorMapSpec,
        buffer: &'a B,
    ) -> Result<TensorMap<'a>, JitError> {
        let pointer = DevicePointer::read(buffer, self.stream());
        TensorMap::encode_over(&self.shared, spec, pointer, 0)
    }

    /// [`Jit::tensor_map`] over a buffer that kernels may also write through the map (TMA
    /// stores), borrowed mutably: a [`TensorMapMut`], which dereferences to the map.
    pub fn tensor_map_mut<'a, T: AnyBitPattern, B: DeviceBufferMut<T>>(
        &'a self,
        spec: &TensorMapSpec,
        buffer: &'a mut B,
    ) -> Result<TensorMapMut<'a>, JitError> {
        let pointer = DevicePointer::write(buffer, self.stream());
        TensorMap::encode_over(&self.shared, spec, pointer, 0).map(TensorMapMut::of_written)
    }
}

impl TensorMap<'static> {
    /// Validates `spec` against the buffer (see [`TensorMapSpec::validate_for`]) and encodes
    /// it with `cuTensorMapEncodeTiled` over `address`. Needs an sm_90 or newer device.
    ///
    /// # Safety
    ///
    /// `address` is the start of `buffer_bytes` bytes of one live allocation in `jit`'s context,
    /// and for every launch that takes the map, until its kernel has finished, those bytes obey
    /// the contract of [`KernelArg::raw_pointer`]: not freed, not used by another stream, earlier
    /// writes ordered before the launch, and what the TMA unit writes there valid for the types
    /// the host reads it as.
    pub unsafe fn encode_tiled_raw(
        jit: &Jit,
        spec: &TensorMapSpec,
        address: u64,
        buffer_bytes: u64,
    ) -> Result<TensorMap<'static>, JitError> {
        // SAFETY: the caller takes on the raw pointer's contract.
        let pointer = unsafe { DevicePointer::raw(address) };
        TensorMap::encode_over(&jit.shared, spec, pointer, buffer_bytes)
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        // Cached modules are unloaded right after this; let kernels still running from them
        // finish first. Nothing can be returned from drop; cudarc keeps the error.
        let done = self.shared.stream.synchronize();
        self.shared.ctx.record_err(done);
    }
}

fn read_limits(ctx: &Arc<CudaContext>) -> Result<DeviceLimits, JitError> {
    use sys::CUdevice_attribute as A;
    let get = |attr: A| -> Result<u32, JitError> {
        let v = ctx
            .attribute(attr)
            .map_err(|e| driver("cuDeviceGetAttribute", e))?;
        // The driver reports limits as non-negative ints; a negative one would be a driver bug,
        // read as "nothing allowed" rather than wrapped to a huge limit.
        Ok(u32::try_from(v).unwrap_or(0))
    };
    Ok(DeviceLimits {
        compute_capability: (
            get(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            get(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        max_threads_per_block: get(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dims: [
            get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dims: [
            get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        max_smem_per_block_optin: get(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        cluster_launch: get(A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)? != 0,
        multiprocessors: get(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
    })
}
