//! Launch configurations, kernel arguments, and the checks a launch must pass before the driver
//! sees it. Everything here is pure: it runs, and is tested, without a GPU.

/// One kernel launch's shape: grid and block extents, an optional thread-block cluster, and the
/// dynamic shared memory each block gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Blocks in the grid, (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads in a block, (x, y, z).
    pub block: (u32, u32, u32),
    /// Blocks in a cluster, (x, y, z); `Some` launches through `cuLaunchKernelEx` (sm_90 and up).
    pub cluster: Option<(u32, u32, u32)>,
    /// Dynamic shared memory per block, in bytes; above the kernel's default limit (48 KiB less
    /// its static shared memory) the runtime raises the limit first.
    pub dynamic_smem_bytes: u32,
    /// Allow clusters of 9..=16 blocks (non-portable sizes; sm_90 supports them on request).
    pub non_portable_cluster: bool,
    /// Programmatic dependent launch (sm_90): the launch may start while the stream's previous
    /// kernel is still running, its blocks taking SMs as that kernel's blocks leave them. The
    /// kernel must run `griddepcontrol.wait` (`dsl_core::kernel::wait_on_dependent_grids`)
    /// before it touches memory the previous kernel reads or writes; the wait returns once
    /// that kernel has completed and its writes are visible.
    pub programmatic: bool,
}

impl Launch {
    /// A grid of `grid` blocks of `block` threads, no cluster, no dynamic shared memory.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        Launch {
            grid,
            block,
            cluster: None,
            dynamic_smem_bytes: 0,
            non_portable_cluster: false,
            programmatic: false,
        }
    }

    /// One-dimensional launch covering `n` items with `block` threads per block:
    /// `grid.x == ceil(n / block)` (at least 1, so that `n == 0` still launches a valid grid).
    /// A `block` of 0 is kept as is and refused by validation.
    pub fn linear(n: u32, block: u32) -> Self {
        let blocks = if block == 0 { 0 } else { n.div_ceil(block) };
        Launch::new((blocks.max(1), 1, 1), (block, 1, 1))
    }

    /// The same launch with blocks grouped into clusters of `cluster`.
    pub fn with_cluster(mut self, cluster: (u32, u32, u32)) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_dynamic_smem(mut self, bytes: u32) -> Self {
        self.dynamic_smem_bytes = bytes;
        self
    }

    /// The same launch as a programmatic dependent launch ([`Launch::programmatic`]): what
    /// hides a short kernel's launch and prologue behind the previous kernel's last blocks.
    pub fn with_programmatic_launch(mut self) -> Self {
        self.programmatic = true;
        self
    }

    /// The same launch, allowing cluster sizes above the portable 8.
    pub fn allow_non_portable_cluster(mut self) -> Self {
        self.non_portable_cluster = true;
        self
    }

    /// Threads per block (`block.x * block.y * block.z`), widened so it cannot overflow.
    pub fn threads_per_block(&self) -> u64 {
        u64::from(self.block.0) * u64::from(self.block.1) * u64::from(self.block.2)
    }

    /// Blocks per cluster, or 1 without a cluster.
    pub fn cluster_size(&self) -> u64 {
        self.cluster
            .map_or(1, |(x, y, z)| u64::from(x) * u64::from(y) * u64::from(z))
    }
}

/// The device limits a launch is checked against. Read from the driver by `Jit::new`;
/// [`DeviceLimits::hopper`] gives the H100/H200 values for tests without a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Largest block extent per axis.
    pub max_block_dims: [u32; 3],
    /// Largest grid extent per axis.
    pub max_grid_dims: [u32; 3],
    /// Most shared memory (static + dynamic) one block may opt in to, in bytes.
    pub max_smem_per_block_optin: u32,
    /// Whether the device launches thread-block clusters.
    pub cluster_launch: bool,
    /// Streaming multiprocessors on the device.
    pub multiprocessors: u32,
}

impl DeviceLimits {
    /// Limits of compute capability 9.0 (H100, H200) as the CUDA programming guide lists them:
    /// 1024 threads per block, block (1024, 1024, 64), grid (2^31 - 1, 65535, 65535),
    /// 227 KiB of opt-in shared memory per block, clusters; 132 SMs (SXM parts).
    pub const fn hopper() -> Self {
        DeviceLimits {
            compute_capability: (9, 0),
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: [i32::MAX as u32, 65535, 65535],
            max_smem_per_block_optin: 227 * 1024,
            cluster_launch: true,
            multiprocessors: 132,
        }
    }
}

/// What the driver knows about one compiled kernel that a launch must respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelFacts {
    /// Static shared memory the kernel declares, in bytes.
    pub static_smem_bytes: u32,
    /// Most threads per block this kernel can run (registers and `.maxntid` lower it below the
    /// device's limit).
    pub max_threads_per_block: u32,
    /// Cluster shape fixed at compile time (`.reqnctapercluster`), if any.
    pub required_cluster: Option<(u32, u32, u32)>,
}

/// Cluster sizes every cluster-capable device runs; larger ones need the non-portable opt-in.
pub const PORTABLE_CLUSTER_SIZE: u64 = 8;
/// Largest cluster sm_90 runs with the non-portable opt-in.
pub const MAX_NON_PORTABLE_CLUSTER_SIZE: u64 = 16;

/// A launch configuration the device or the kernel cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A grid, block or cluster extent is zero.
    #[error("{what} {dims:?} has a zero extent; every axis needs at least 1")]
    ZeroExtent {
        /// "grid", "block" or "cluster".
        what: &'static str,
        /// The extents given.
        dims: (u32, u32, u32),
    },
    /// One block axis is longer than the device allows.
    #[error("block axis {axis} is {value}, above the device's limit of {max}")]
    BlockAxisTooLarge {
        /// "x", "y" or "z".
        axis: &'static str,
        /// The extent given.
        value: u32,
        /// The device's limit for that axis.
        max: u32,
    },
    /// The block has more threads than the device (or the kernel) can run.
    #[error("block {block:?} has {threads} threads, above the {limit_of} limit of {max}")]
    TooManyThreads {
        /// The block extents.
        block: (u32, u32, u32),
        /// Their product.
        threads: u64,
        /// The limit.
        max: u32,
        /// "device's" or "kernel's" (registers or `.maxntid` can lower the kernel's limit).
        limit_of: &'static str,
    },
    /// One grid axis is longer than the device allows.
    #[error("grid axis {axis} is {value}, above the device's limit of {max}")]
    GridAxisTooLarge {
        /// "x", "y" or "z".
        axis: &'static str,
        /// The extent given.
        value: u32,
        /// The device's limit for that axis.
        max: u32,
    },
    /// A cluster on a device without cluster launch (before sm_90).
    #[error("clusters need compute capability 9.0 or newer; this device is {major}.{minor}")]
    ClustersUnsupported {
        /// Device's major compute capability.
        major: u32,
        /// Device's minor compute capability.
        minor: u32,
    },
    /// A programmatic dependent launch on a device before sm_90.
    #[error(
        "a programmatic dependent launch needs compute capability 9.0 or newer; this device is \
         {major}.{minor}"
    )]
    ProgrammaticUnsupported {
        /// Device's major compute capability.
        major: u32,
        /// Device's minor compute capability.
        minor: u32,
    },
    /// A grid axis is not a whole number of clusters.
    #[error("grid axis {axis} is {grid} blocks, not a multiple of the cluster's {cluster}")]
    ClusterDoesNotDivideGrid {
        /// "x", "y" or "z".
        axis: &'static str,
        /// Grid extent on that axis.
        grid: u32,
        /// Cluster extent on that axis.
        cluster: u32,
    },
    /// A cluster with more blocks than allowed.
    #[error("cluster {cluster:?} has {size} blocks, above the limit of {max}{hint}")]
    ClusterTooLarge {
        /// The cluster extents.
        cluster: (u32, u32, u32),
        /// Their product.
        size: u64,
        /// The limit that applies.
        max: u64,
        /// What would raise the limit, if anything.
        hint: &'static str,
    },
    /// The launch's cluster differs from the one the kernel was compiled for.
    #[error("the kernel was compiled for clusters of {required:?} (.reqnctapercluster) but the launch asks for {given:?}")]
    ClusterMismatch {
        /// The compile-time cluster shape.
        required: (u32, u32, u32),
        /// The launch's cluster shape.
        given: (u32, u32, u32),
    },
    /// More shared memory per block than the device can give.
    #[error("{dynamic} bytes of dynamic shared memory plus {static_bytes} static is {total}, above the device's per-block limit of {max}")]
    SharedMemoryTooLarge {
        /// Dynamic bytes asked for.
        dynamic: u32,
        /// Static bytes the kernel declares (0 when not yet known).
        static_bytes: u32,
        /// Their sum.
        total: u64,
        /// The device's opt-in limit per block.
        max: u32,
    },
}

const AXES: [&str; 3] = ["x", "y", "z"];

fn axes(d: (u32, u32, u32)) -> [u32; 3] {
    [d.0, d.1, d.2]
}

/// Checks `launch` against the device alone. On success the driver can accept the shape for
/// some kernel: no zero extents, block and grid within the device's limits, clusters supported,
/// dividing the grid and within the portable (or, on request, non-portable) size, and dynamic
/// shared memory within the device's opt-in limit.
pub fn validate_launch(launch: &Launch, limits: &DeviceLimits) -> Result<(), LaunchError> {
    for (what, dims) in [("grid", launch.grid), ("block", launch.block)] {
        if axes(dims).contains(&0) {
            return Err(LaunchError::ZeroExtent { what, dims });
        }
    }
    for (i, (&value, &max)) in axes(launch.block)
        .iter()
        .zip(&limits.max_block_dims)
        .enumerate()
    {
        if value > max {
            return Err(LaunchError::BlockAxisTooLarge {
                axis: AXES[i],
                value,
                max,
            });
        }
    }
    let threads = launch.threads_per_block();
    if threads > u64::from(limits.max_threads_per_block) {
        return Err(LaunchError::TooManyThreads {
            block: launch.block,
            threads,
            max: limits.max_threads_per_block,
            limit_of: "device's",
        });
    }
    for (i, (&value, &max)) in axes(launch.grid)
        .iter()
        .zip(&limits.max_grid_dims)
        .enumerate()
    {
        if value > max {
            return Err(LaunchError::GridAxisTooLarge {
                axis: AXES[i],
                value,
                max,
            });
        }
    }
    if launch.programmatic && limits.compute_capability.0 < 9 {
        let (major, minor) = limits.compute_capability;
        return Err(LaunchError::ProgrammaticUnsupported { major, minor });
    }
    if let Some(cluster) = launch.cluster {
        if !limits.cluster_launch {
            let (major, minor) = limits.compute_capability;
            return Err(LaunchError::ClustersUnsupported { major, minor });
        }
        if axes(cluster).contains(&0) {
            return Err(LaunchError::ZeroExtent {
                what: "cluster",
                dims: cluster,
            });
        }
        check_cluster_divides_grid(cluster, launch.grid)?;
        let size = launch.cluster_size();
        let (max, hint) = if launch.non_portable_cluster {
            (MAX_NON_PORTABLE_CLUSTER_SIZE, "")
        } else {
            (
                PORTABLE_CLUSTER_SIZE,
                " (Launch::allow_non_portable_cluster raises it to 16 on sm_90)",
            )
        };
        if size > max {
            return Err(LaunchError::ClusterTooLarge {
                cluster,
                size,
                max,
                hint,
            });
        }
    }
    check_smem(launch.dynamic_smem_bytes, 0, limits)
}

/// Checks `launch` against one compiled kernel (after [`validate_launch`]): the block fits the
/// kernel's own thread limit, static plus dynamic shared memory fits the device, and a
/// compile-time cluster shape is honoured (same shape if the launch names one, and the grid a
/// whole number of such clusters either way).
pub fn validate_for_kernel(
    launch: &Launch,
    kernel: &KernelFacts,
    limits: &DeviceLimits,
) -> Result<(), LaunchError> {
    let threads = launch.threads_per_block();
    if threads > u64::from(kernel.max_threads_per_block) {
        return Err(LaunchError::TooManyThreads {
            block: launch.block,
            threads,
            max: kernel.max_threads_per_block,
            limit_of: "kernel's",
        });
    }
    check_smem(launch.dynamic_smem_bytes, kernel.static_smem_bytes, limits)?;
    if let Some(required) = kernel.required_cluster {
        if let Some(given) = launch.cluster {
            if given != required {
                return Err(LaunchError::ClusterMismatch { required, given });
            }
        }
        check_cluster_divides_grid(required, launch.grid)?;
    }
    Ok(())
}

fn check_cluster_divides_grid(
    cluster: (u32, u32, u32),
    grid: (u32, u32, u32),
) -> Result<(), LaunchError> {
    for (i, (&c, &g)) in axes(cluster).iter().zip(&axes(grid)).enumerate() {
        // A zero cluster axis is reported as ZeroExtent before this runs; checked_rem keeps a
        // bad caller from dividing by zero all the same.
        if g.checked_rem(c) != Some(0) {
            return Err(LaunchError::ClusterDoesNotDivideGrid {
                axis: AXES[i],
                grid: g,
                cluster: c,
            });
        }
    }
    Ok(())
}

fn check_smem(dynamic: u32, static_bytes: u32, limits: &DeviceLimits) -> Result<(), LaunchError> {
    let total = u64::from(dynamic) + u64::from(static_bytes);
    if total > u64::from(limits.max_smem_per_block_optin) {
        return Err(LaunchError::SharedMemoryTooLarge {
            dynamic,
            static_bytes,
            total,
            max: limits.max_smem_per_block_optin,
        });
    }
    Ok(())
}
