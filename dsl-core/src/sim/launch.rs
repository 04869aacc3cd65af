//! What a run takes besides the kernel: the launch shape, the arguments, and the options that
//! choose the schedule and the checks.

use half::{bf16, f16};

use super::memory::BufferId;
use crate::ir::Type;

/// The shape of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Blocks in the grid, per dimension.
    pub grid: [u32; 3],
    /// Threads in a block, per dimension.
    pub block: [u32; 3],
    /// Blocks in a cluster, per dimension (`[1, 1, 1]` without clusters); it divides `grid`.
    pub cluster: [u32; 3],
    /// Bytes of dynamic shared memory per block.
    pub dynamic_smem: u32,
    /// Streaming multiprocessors: how many blocks (whole clusters) are resident at once. A grid
    /// of at most this many blocks runs all at once (a persistent kernel); a larger one runs in
    /// waves, a block starting when a resident one ends, in block order.
    pub sms: u32,
}

impl Launch {
    /// A grid of `grid` blocks of `block` threads, no clusters, no dynamic shared memory, and
    /// 4 SMs.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Launch {
        Launch {
            grid,
            block,
            cluster: [1, 1, 1],
            dynamic_smem: 0,
            sms: 4,
        }
    }

    /// A one-dimensional grid of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: u32, threads: u32) -> Launch {
        Launch::new([blocks, 1, 1], [threads, 1, 1])
    }

    /// With clusters of `cluster` blocks.
    pub fn with_cluster(mut self, cluster: [u32; 3]) -> Launch {
        self.cluster = cluster;
        self
    }

    /// With `bytes` of dynamic shared memory per block.
    pub fn with_dynamic_smem(mut self, bytes: u32) -> Launch {
        self.dynamic_smem = bytes;
        self
    }

    /// With `sms` resident blocks (rounded up to whole clusters).
    pub fn with_sms(mut self, sms: u32) -> Launch {
        self.sms = sms;
        self
    }

    /// Threads per block.
    pub fn block_threads(&self) -> u32 {
        self.block.iter().product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }

    /// Blocks per cluster.
    pub fn cluster_blocks(&self) -> u32 {
        self.cluster.iter().product()
    }

    /// The `%ctaid` of the block of rank `rank` in cluster `index` (clusters numbered in grid
    /// order, x fastest; ranks in the cluster likewise).
    pub(crate) fn ctaid(&self, index: u64, rank: u32) -> [u32; 3] {
        let cdim = self.cluster;
        let per = [self.grid[0] / cdim[0], self.grid[1] / cdim[1]];
        let c = [
            (index % u64::from(per[0])) as u32,
            ((index / u64::from(per[0])) % u64::from(per[1])) as u32,
            (index / (u64::from(per[0]) * u64::from(per[1]))) as u32,
        ];
        let r = [
            rank % cdim[0],
            (rank / cdim[0]) % cdim[1],
            rank / (cdim[0] * cdim[1]),
        ];
        [
            c[0] * cdim[0] + r[0],
            c[1] * cdim[1] + r[1],
            c[2] * cdim[2] + r[2],
        ]
    }
}

/// A kernel argument, in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A pointer to the first byte of a buffer (for a global-pointer parameter).
    Buffer(BufferId),
    /// A pointer `offset` bytes into a buffer.
    BufferAt(BufferId, u64),
    /// A scalar of type `ty` whose bits are `bits` (zero-extended).
    Scalar {
        /// Its type: the parameter's, or another of the same width.
        ty: Type,
        /// Its bits.
        bits: u64,
    },
    /// A 128-byte `CUtensorMap`, passed by value. Its encoding is the driver's, so a TMA op
    /// through it stops the run with [`SimError::Unsupported`](super::SimError::Unsupported):
    /// pass the description it was encoded from as [`Arg::Tma`].
    TensorMap(Box<[u8; 128]>),
    /// A tensor map given by its description over a buffer: what the TMA ops read.
    Tma(Box<super::TensorMapArg>),
}

macro_rules! scalar_args {
    ($($name:ident: $t:ty => $ty:expr, $bits:expr;)*) => {$(
        #[doc = concat!("A `", stringify!($t), "` scalar.")]
        pub fn $name(x: $t) -> Arg {
            #[allow(clippy::redundant_closure_call)]
            Arg::Scalar { ty: $ty, bits: ($bits)(x) }
        }
    )*};
}

impl Arg {
    scalar_args! {
        u32: u32 => Type::U32, |x: u32| u64::from(x);
        s32: i32 => Type::S32, |x: i32| u64::from(x as u32);
        u64: u64 => Type::U64, |x: u64| x;
        s64: i64 => Type::S64, |x: i64| x as u64;
        f32: f32 => Type::F32, |x: f32| u64::from(x.to_bits());
        f64: f64 => Type::F64, |x: f64| x.to_bits();
        f16: f16 => Type::F16, |x: f16| u64::from(x.to_bits());
        bf16: bf16 => Type::BF16, |x: bf16| u64::from(x.to_bits());
    }
}

/// How the scheduler picks the next warp to run. Every policy is deterministic for a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Warps in turn, each until it blocks or runs a quantum of instructions; asynchronous
    /// operations complete as late as their completion mechanism allows.
    RoundRobin,
    /// A random ready warp for a random number of instructions; asynchronous operations complete
    /// at random points of their legal window.
    Random,
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): warps get random
    /// priorities, the highest-priority ready warp runs, and at `depth - 1` random points the
    /// running warp drops to the lowest priority. Finds ordering bugs of depth `depth` with
    /// probability at least `1 / (warps * steps^(depth - 1))` per run. Asynchronous operations
    /// complete at random points of their window.
    Pct {
        /// The bug depth aimed at (at least 1).
        depth: u32,
    },
}

/// Which checks a run performs. Deadlocks are always detected (a run must end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Checks {
    /// Data races on shared memory (happens-before with vector clocks), including the async
    /// proxy's accesses against generic ones.
    pub races: bool,
    /// Reads of uninitialized registers, shared memory and global memory.
    pub uninitialized: bool,
    /// Out-of-bounds and misaligned global and shared accesses.
    pub bounds: bool,
    /// Writes to read-only buffers.
    pub read_only: bool,
    /// Barrier misuse: thread counts that disagree or cannot be reached, warp-synchronous ops
    /// that lanes of their mask do not reach.
    pub barriers: bool,
}

impl Checks {
    /// Every check ([`Checks::ALL`]).
    pub fn all() -> Checks {
        Checks::ALL
    }

    /// No check ([`Checks::NONE`]).
    pub fn none() -> Checks {
        Checks::NONE
    }

    /// Every check.
    pub const ALL: Checks = Checks {
        races: true,
        uninitialized: true,
        bounds: true,
        read_only: true,
        barriers: true,
    };
    /// No check (values only; deadlocks are still found).
    pub const NONE: Checks = Checks {
        races: false,
        uninitialized: false,
        bounds: false,
        read_only: false,
        barriers: false,
    };
}

impl Default for Checks {
    fn default() -> Checks {
        Checks::ALL
    }
}

/// How a run is scheduled and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// Seeds every random choice (schedule, completion points, `elect.sync`'s leader).
    pub seed: u64,
    /// The scheduling policy.
    pub schedule: Schedule,
    /// The checks.
    pub checks: Checks,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            seed: 0,
            schedule: Schedule::RoundRobin,
            checks: Checks::ALL,
        }
    }
}

impl Options {
    /// Every check, with `seed` and `schedule`.
    pub fn seeded(seed: u64, schedule: Schedule) -> Options {
        Options {
            seed,
            schedule,
            checks: Checks::ALL,
        }
    }
}

/// How long a run may take and how much it reports (see [`Simulator::with_limits`](super::Simulator::with_limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    /// A run that executes more warp instructions than this stops with
    /// [`SimError::StepLimit`](super::SimError::StepLimit).
    pub max_steps: u64,
    /// Findings kept in the report; later ones are counted in
    /// [`Report::dropped`](super::Report::dropped).
    pub max_findings: usize,
    /// A run in which no memory changes and no warp ends for this many warp instructions ends
    /// as a deadlock: its warps spin on values nothing will change (a polling loop the
    /// simulator does not recognize as one, such as a weak load in a loop).
    pub stall_steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 1 << 32,
            max_findings: 100,
            stall_steps: 1 << 24,
        }
    }
}
