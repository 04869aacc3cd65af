//! Loaded modules and their kernels: loading PTX with the JIT log captured, looking up entries
//! with their signatures read from the PTX, and launching with checked arguments.

use std::ffi::{c_void, CString};
use std::sync::{Arc, OnceLock};

use cudarc::driver::{sys, DriverError};

use super::args::{check_args, KernelArg};
use super::context::Shared;
use super::error::{check, describe, error_name, JitError};
use super::launch::{validate_for_kernel, validate_launch, KernelFacts, Launch};
use super::owner::BufferOwner;
use super::signature::{ptx_signature, ptx_signatures, PtxParam};

/// Bytes reserved for each of the JIT's error and info logs.
const LOG_BYTES: usize = 1 << 16;

/// Shared memory (static + dynamic) any kernel may use without raising its limit.
const DEFAULT_SMEM_PER_BLOCK: u64 = 48 * 1024;

/// The module cache's key: 64-bit FNV-1a of the PTX text's bytes. Stable across runs, builds
/// and platforms (unlike `std`'s hasher), so the same text always has the same key.
pub fn ptx_hash(ptx: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    ptx.bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// Names of the kernels (`.entry` directives) that `ptx` defines, in order of appearance:
/// those [`ptx_signatures`](super::ptx_signatures) reads, or, for text it cannot read, every
/// name that follows an `.entry`.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    if let Ok(entries) = ptx_signatures(ptx) {
        return entries.into_iter().map(|e| e.name).collect();
    }
    let mut names = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        let after = &rest[at + ".entry".len()..];
        let trimmed = after.trim_start();
        // `.entry` must stand alone as a directive, not be the tail of a longer word.
        let separated = after.len() != trimmed.len();
        let name: String = trimmed
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%'))
            .collect();
        if separated && !name.is_empty() {
            names.push(name);
        }
        rest = after;
    }
    names
}

/// A PTX module loaded into a device's context. Unloaded when the last `Arc` (including those
/// held by its [`JitFunction`]s and the `Jit`'s cache) goes away.
pub struct JitModule {
    shared: Arc<Shared>,
    module: sys::CUmodule,
    ptx: Arc<str>,
    hash: u64,
    info_log: String,
}

// SAFETY: a CUmodule handle is not tied to the thread that loaded it: the driver API is
// thread-safe, and every use here makes the owning context current on the calling thread first.
unsafe impl Send for JitModule {}
// SAFETY: as for Send; shared use only reads the handle, and the driver serialises internally.
unsafe impl Sync for JitModule {}

impl std::fmt::Debug for JitModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitModule")
            .field("hash", &format_args!("{:016x}", self.hash))
            .field("entries", &ptx_entries(&self.ptx))
            .finish_non_exhaustive()
    }
}

impl Drop for JitModule {
    fn drop(&mut self) {
        // Errors here cannot be returned; cudarc's context keeps the last one for its next
        // checked call, which is where a caller would see it.
        self.shared.ctx.record_err(self.shared.ctx.bind_to_thread());
        // Kernels of this module run only on the shared stream; let those still queued finish
        // before their code is unloaded.
        self.shared.ctx.record_err(self.shared.stream.synchronize());
        // SAFETY: the handle came from cuModuleLoadDataEx, is unloaded exactly once (here), no
        // JitFunction outlives it (each holds an Arc to this module), and no kernel of it is
        // still running (the stream they run on was synchronised just above).
        let r = unsafe { sys::cuModuleUnload(self.module) };
        self.shared.ctx.record_err(r.result());
    }
}

/// Loads `ptx` with `cuModuleLoadDataEx`, capturing the JIT's error and info logs.
pub(crate) fn load_module(
    shared: &Arc<Shared>,
    ptx: Arc<str>,
    hash: u64,
) -> Result<JitModule, JitError> {
    if let Some(offset) = ptx.bytes().position(|b| b == 0) {
        return Err(JitError::PtxHasNul { offset });
    }
    // No interior NUL (checked above), so this cannot fail; map it anyway rather than unwrap.
    let image = CString::new(ptx.as_bytes()).map_err(|e| JitError::PtxHasNul {
        offset: e.nul_position(),
    })?;
    shared.bind()?;
    let mut error_log = vec![0u8; LOG_BYTES];
    let mut info_log = vec![0u8; LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        sys::CUjit_option::CU_JIT_LOG_VERBOSE,
    ];
    // The driver ABI passes scalar option values in the pointer-sized slot itself.
    let scalar = std::ptr::without_provenance_mut::<c_void>;
    let mut values: [*mut c_void; 5] = [
        error_log.as_mut_ptr().cast(),
        scalar(LOG_BYTES),
        info_log.as_mut_ptr().cast(),
        scalar(LOG_BYTES),
        scalar(1),
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX text alive across the call; `options` and
    // `values` have the same length, passed as the count; the log buffers are LOG_BYTES long,
    // as their size options say, and outlive the call; `module` is a valid out-pointer.
    let result = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if let Err(e) = result.result() {
        let mut log = c_text(&error_log);
        if log.trim().is_empty() {
            log = format!("(the driver left no log; it said {})", describe(e));
        }
        return Err(JitError::Rejected {
            code: error_name(e),
            log,
        });
    }
    Ok(JitModule {
        shared: Arc::clone(shared),
        module,
        ptx,
        hash,
        info_log: c_text(&info_log),
    })
}

/// The NUL-terminated text at the start of `buf` (all of it if no NUL), lossily decoded.
fn c_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl JitModule {
    /// The kernel `name`, with its parameter list read from the module's PTX. Asking for a name
    /// the module does not define gives [`JitError::NoSuchKernel`] listing the names it does
    /// define; a signature the reader cannot read with certainty gives [`JitError::Signature`].
    pub fn function(self: &Arc<Self>, name: &str) -> Result<JitFunction, JitError> {
        let missing = || JitError::NoSuchKernel {
            name: name.to_string(),
            available: ptx_entries(&self.ptx).join(", "),
        };
        let params = ptx_signature(&self.ptx, name)
            .map_err(|error| JitError::Signature {
                kernel: name.to_string(),
                error,
            })?
            .ok_or_else(missing)?;
        let c_name = CString::new(name).map_err(|_| missing())?;
        self.shared.bind()?;
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the module handle is live (self holds it); `c_name` is NUL-terminated and
        // outlives the call; `function` is a valid out-pointer.
        let r = unsafe { sys::cuModuleGetFunction(&mut function, self.module, c_name.as_ptr()) };
        match r {
            sys::CUresult::CUDA_SUCCESS => {}
            sys::CUresult::CUDA_ERROR_NOT_FOUND => return Err(missing()),
            other => check("cuModuleGetFunction", other)?,
        }
        Ok(JitFunction {
            module: Arc::clone(self),
            function,
            name: name.to_string(),
            facts: OnceLock::new(),
            params,
        })
    }

    /// The PTX text the module was loaded from.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The cache key of the PTX text ([`ptx_hash`]).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The JIT's info log (verbose: registers, shared memory, spills per kernel).
    pub fn info_log(&self) -> &str {
        &self.info_log
    }
}

/// One kernel of a loaded module, ready to launch on its `Jit`'s stream.
pub struct JitFunction {
    module: Arc<JitModule>,
    function: sys::CUfunction,
    name: String,
    // What the driver says about the compiled kernel does not change; ask once.
    facts: OnceLock<KernelFacts>,
    // The parameter list, from the PTX text the module was loaded from.
    params: Vec<PtxParam>,
}

// SAFETY: a CUfunction is a handle into its module, which this value keeps alive; the driver
// API is thread-safe and every use binds the owning context to the calling thread first.
unsafe impl Send for JitFunction {}
// SAFETY: as for Send; concurrent launches of one function are allowed by the driver.
unsafe impl Sync for JitFunction {}

impl std::fmt::Debug for JitFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitFunction")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl JitFunction {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module the kernel lives in.
    pub fn module(&self) -> &Arc<JitModule> {
        &self.module
    }

    /// The stream its launches go to (the `Jit`'s).
    pub(crate) fn stream(&self) -> &Arc<cudarc::driver::CudaStream> {
        &self.module.shared.stream
    }

    fn attribute(&self, attr: sys::CUfunction_attribute) -> Result<i32, JitError> {
        let mut value = 0;
        // SAFETY: the function handle is live (its module is held); `value` is a valid
        // out-pointer.
        check("cuFuncGetAttribute", unsafe {
            sys::cuFuncGetAttribute(&mut value, attr, self.function)
        })?;
        Ok(value)
    }

    fn set_attribute(&self, attr: sys::CUfunction_attribute, value: i32) -> Result<(), JitError> {
        // SAFETY: the function handle is live; the attribute and value are plain integers the
        // driver validates.
        check("cuFuncSetAttribute", unsafe {
            sys::cuFuncSetAttribute(self.function, attr, value)
        })
    }

    /// What the driver knows about this kernel that a launch must respect: its static shared
    /// memory, its thread limit and its compile-time cluster shape.
    pub fn facts(&self) -> Result<KernelFacts, JitError> {
        if let Some(facts) = self.facts.get() {
            return Ok(*facts);
        }
        use sys::CUfunction_attribute as F;
        self.module.shared.bind()?;
        let non_negative = |v: i32| u32::try_from(v).unwrap_or(0);
        // Devices without clusters have no compile-time cluster shape to report.
        let cluster = if self.module.shared.limits.cluster_launch {
            (
                non_negative(self.attribute(F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)?),
                non_negative(self.attribute(F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT)?),
                non_negative(self.attribute(F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)?),
            )
        } else {
            (0, 0, 0)
        };
        let facts = KernelFacts {
            static_smem_bytes: non_negative(
                self.attribute(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            ),
            max_threads_per_block: non_negative(
                self.attribute(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            ),
            // The driver reports all three as 0 when no cluster shape was compiled in.
            required_cluster: (cluster.0 > 0).then_some(cluster),
        };
        // Another thread may have filled it meanwhile, with the same answer.
        let _ = self.facts.set(facts);
        Ok(facts)
    }

    /// The kernel's parameters, in order, as its PTX declares them; launches are checked
    /// against them ([`check_args`](super::check_args)).
    pub fn params(&self) -> &[PtxParam] {
        &self.params
    }

    /// The parameter buffer's layout as the driver reports it, `(offset, size)` per parameter,
    /// or `None` on drivers before CUDA 12.4 (no `cuFuncGetParamInfo`). For tests comparing it
    /// with [`JitFunction::params`]; launches never call it. The driver has no call for the
    /// parameter count, so the walk ends at the first index the driver refuses with
    /// `CUDA_ERROR_INVALID_VALUE`, which compute-sanitizer reports as an API error.
    pub fn driver_param_layout(&self) -> Result<Option<Vec<(usize, usize)>>, JitError> {
        if self.module.shared.driver_version < 12040 {
            return Ok(None);
        }
        self.module.shared.bind()?;
        let mut layout = Vec::new();
        loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: the function handle is live (its module is held); both out-pointers are
            // valid. An index past the last parameter is answered with an error, not a write.
            let r = unsafe {
                sys::cuFuncGetParamInfo(self.function, layout.len(), &mut offset, &mut size)
            };
            match r {
                sys::CUresult::CUDA_SUCCESS => layout.push((offset, size)),
                sys::CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(Some(layout)),
                other => check("cuFuncGetParamInfo", other)?,
            }
        }
    }

    /// The kernel's facts, after checking `cfg` against the device ([`validate_launch`]) and the
    /// kernel ([`validate_for_kernel`]), with the context bound to this thread (facts() binds
    /// only on its first call; a launch needs it always).
    fn validated(&self, cfg: &Launch) -> Result<KernelFacts, JitError> {
        let shared = &self.module.shared;
        let invalid = |error| JitError::InvalidLaunch {
            kernel: self.name.clone(),
            error,
        };
        validate_launch(cfg, &shared.limits).map_err(invalid)?;
        shared.bind()?;
        let facts = self.facts()?;
        validate_for_kernel(cfg, &facts, &shared.limits).map_err(invalid)?;
        Ok(facts)
    }

    /// Sets what a launch of `cfg` needs of the function's attributes: the dynamic shared memory
    /// limit raised when `cfg` asks for more than it allows, and non-portable cluster sizes
    /// enabled when asked for.
    fn prepare(&self, cfg: &Launch, facts: &KernelFacts) -> Result<(), JitError> {
        let shared = &self.module.shared;
        use sys::CUfunction_attribute as F;
        let smem = u64::from(cfg.dynamic_smem_bytes) + u64::from(facts.static_smem_bytes);
        if smem > DEFAULT_SMEM_PER_BLOCK {
            let allowed = self.attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
            if i64::from(cfg.dynamic_smem_bytes) > i64::from(allowed) {
                // Raise the cap to all the device allows beside the static part, not just to
                // this launch's need, so that launches from several threads only ever raise it
                // and none lowers it under another. validate_for_kernel made sure this launch
                // fits under it.
                let room = shared
                    .limits
                    .max_smem_per_block_optin
                    .saturating_sub(facts.static_smem_bytes);
                let room = i32::try_from(room).unwrap_or(i32::MAX);
                self.set_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, room)?;
            }
        }
        if cfg.cluster_size() > super::launch::PORTABLE_CLUSTER_SIZE {
            self.set_attribute(F::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)?;
        }

        Ok(())
    }

    /// How many clusters of `cfg`'s shape the device can run at once for this kernel with `cfg`'s
    /// block and dynamic shared memory (`cuOccupancyMaxActiveClusters`): a persistent kernel
    /// launches no more clusters than this, since the ones beyond it would wait for a second
    /// wave. A launch without a cluster counts 1-block clusters. The launch shape is validated
    /// as [`launch`](Self::launch) validates it.
    pub fn max_active_clusters(&self, cfg: &Launch) -> Result<u32, JitError> {
        let shared = &self.module.shared;
        let facts = self.validated(cfg)?;
        self.prepare(cfg, &facts)?;
        let (x, y, z) = facts.required_cluster.or(cfg.cluster).unwrap_or((1, 1, 1));
        let mut attr = cluster_dimension((x, y, z));
        // The grid must hold whole clusters; occupancy does not depend on its size otherwise.
        let config = sys::CUlaunchConfig {
            gridDimX: x,
            gridDimY: y,
            gridDimZ: z,
            blockDimX: cfg.block.0,
            blockDimY: cfg.block.1,
            blockDimZ: cfg.block.2,
            sharedMemBytes: cfg.dynamic_smem_bytes,
            hStream: shared.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: u32::from(facts.required_cluster.is_none()),
        };
        let mut clusters: std::ffi::c_int = 0;
        // SAFETY: `config` and its attribute live across the call, the function handle is live,
        // and `clusters` is a valid place for the driver's answer.
        let r = unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, self.function, &config) };
        check("cuOccupancyMaxActiveClusters", r)?;
        Ok(u32::try_from(clusters).unwrap_or(0))
    }

    /// Queues the kernel on the `Jit`'s stream: the untyped launch of a module's kernel,
    /// whatever PTX it came from. A kernel generated by `#[kernel]` has a safe launch with
    /// typed arguments instead ([`TypedFunction`](super::TypedFunction)).
    ///
    /// Before the driver sees the launch: the shape is checked against the device
    /// ([`validate_launch`]) and the kernel ([`validate_for_kernel`]), the arguments against the
    /// kernel's PTX parameters ([`check_args`](super::check_args): count, kinds, declared pointer
    /// alignment, and that every buffer is this stream's to use), the function's dynamic shared
    /// memory limit raised when the launch asks for more than it allows, and non-portable cluster
    /// sizes enabled when asked for. A cluster or a programmatic launch goes through
    /// `cuLaunchKernelEx` with the cluster dimension and programmatic serialization attributes,
    /// anything else through `cuLaunchKernel`. Returns once queued; faults in the kernel surface
    /// at the next synchronisation.
    ///
    /// # Safety
    ///
    /// The checks cannot see what the kernel's code does with its arguments; the caller promises
    /// that with these arguments and this launch shape, until the kernel has finished:
    /// - through each pointer argument (a buffer, a tensor map's buffer) the kernel accesses only
    ///   that buffer's bytes: every extent passed beside a buffer fits it (a `vector_add` given
    ///   16-element buffers and `n = 2^24` writes far past them);
    /// - each pointer parameter is read as the element type of the buffer passed for it (the
    ///   PTX declares a `.u64`, which any buffer fills);
    /// - the kernel writes only buffers passed for writing ([`Jit::buffer_mut`], a map from
    ///   [`Jit::tensor_map_mut`], the [`KernelArg::MapBuffer`] of such a map), never one shared
    ///   by [`Jit::buffer`], a map from [`Jit::tensor_map`] or the `MapBuffer` of such a map;
    /// - it reaches no other global memory than its arguments' buffers (and what raw pointers'
    ///   own contracts cover), and what it writes is a valid value of the element type the host
    ///   reads back.
    ///
    /// [`Jit::buffer`]: super::Jit::buffer
    /// [`Jit::buffer_mut`]: super::Jit::buffer_mut
    /// [`Jit::tensor_map`]: super::Jit::tensor_map
    /// [`Jit::tensor_map_mut`]: super::Jit::tensor_map_mut
    pub unsafe fn launch(&self, cfg: &Launch, args: &[KernelArg<'_>]) -> Result<(), JitError> {
        let shared = &self.module.shared;
        let facts = self.validated(cfg)?;
        check_args(
            &self.name,
            &self.params,
            args,
            &BufferOwner::of_stream(&shared.stream),
        )?;

        self.prepare(cfg, &facts)?;

        let mut params: Vec<*mut c_void> = args.iter().map(KernelArg::as_param_ptr).collect();
        let params_ptr = if params.is_empty() {
            std::ptr::null_mut()
        } else {
            params.as_mut_ptr()
        };
        let stream = shared.stream.cu_stream();
        let (g, b) = (cfg.grid, cfg.block);
        // A compile-time cluster shape (checked equal to the launch's above) comes with the
        // kernel; the driver does not let a launch attribute restate it, so launch plainly.
        let cluster = if facts.required_cluster.is_some() {
            None
        } else {
            cfg.cluster
        };
        // At most two attributes, on the stack: a launch is on the host's path to every GEMM.
        let mut attrs = [programmatic_serialization(); 2];
        let mut count = 0;
        if let Some(shape) = cluster {
            attrs[count] = cluster_dimension(shape);
            count += 1;
        }
        if cfg.programmatic {
            attrs[count] = programmatic_serialization();
            count += 1;
        }
        let result = if count == 0 {
            // SAFETY: live handles; `params` holds one pointer per kernel parameter, each to a
            // value borrowed from `args` for the whole call of exactly the size the module's PTX
            // declares for that parameter (check_args above), which is what the driver copies
            // before returning. Every address among them is a buffer this stream may use,
            // borrowed and ordered for as long as the argument lives (or a raw address whose
            // contract the caller took on in an unsafe block).
            unsafe {
                sys::cuLaunchKernel(
                    self.function,
                    g.0,
                    g.1,
                    g.2,
                    b.0,
                    b.1,
                    b.2,
                    cfg.dynamic_smem_bytes,
                    stream,
                    params_ptr,
                    std::ptr::null_mut(),
                )
            }
        } else {
            let config = sys::CUlaunchConfig {
                gridDimX: g.0,
                gridDimY: g.1,
                gridDimZ: g.2,
                blockDimX: b.0,
                blockDimY: b.1,
                blockDimZ: b.2,
                sharedMemBytes: cfg.dynamic_smem_bytes,
                hStream: stream,
                attrs: attrs.as_mut_ptr(),
                numAttrs: count as u32,
            };
            // SAFETY: as for the plain launch, and `config` and the attributes it points to
            // live across the call.
            unsafe {
                sys::cuLaunchKernelEx(&config, self.function, params_ptr, std::ptr::null_mut())
            }
        };
        result.result().map_err(|e: DriverError| JitError::Launch {
            kernel: self.name.clone(),
            reason: describe(e),
        })?;
        // cudarc keeps one read event per buffer, which each reader, on any stream, records
        // again: a buffer of another stream would be freed there (or written) once a later
        // reader's record completes, while this kernel may still use it. So order each such
        // buffer's own stream, where its free is queued, after this launch as well.
        for arg in args {
            let pointer = match arg {
                KernelArg::Pointer(p) => p,
                KernelArg::TensorMap(m) | KernelArg::MapBuffer(m) => m.pointer(),
                _ => continue,
            };
            if let Some(home) = pointer.foreign_home(shared.stream.cu_stream() as usize) {
                home.join(&shared.stream)
                    .map_err(|e| super::error::driver("cuStreamWaitEvent", e))?;
            }
        }
        Ok(())
    }
}

/// The launch attribute of a programmatic dependent launch ([`Launch::programmatic`]).
fn programmatic_serialization() -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            programmaticStreamSerializationAllowed: 1,
        },
    }
}

/// The launch attribute that gives a launch its cluster shape.
fn cluster_dimension((x, y, z): (u32, u32, u32)) -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x, y, z },
        },
    }
}
