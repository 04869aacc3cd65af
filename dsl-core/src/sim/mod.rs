//! # A CPU simulator of rute's IR
//!
//! [`Simulator`] runs a kernel on the CPU, without a GPU: every block of the launch, every warp
//! as 32 lanes, with the semantics of each op written from the PTX ISA (not from rute's code
//! generation or atoms, so that it checks them independently). While it runs it checks:
//!
//! - data races on shared memory (also another block's, through distributed shared memory) by
//!   happens-before with vector clocks: the PTX memory model's barriers, release/acquire
//!   patterns and asynchronous completion mechanisms order accesses, anything else concurrent
//!   is a race; an async-proxy access against a generic write that no `fence.proxy.async` made
//!   visible to it is one too;
//! - data races on global memory, between the warps of a block and between blocks: two blocks
//!   writing the same bytes, or a partial sum read through a flag that was raised without the
//!   fence that releases it;
//! - reads of uninitialized registers, shared, global and local memory;
//! - out-of-bounds and misaligned accesses, writes to read-only buffers;
//! - barrier misuse: thread counts that disagree or that the threads arriving cannot reach,
//!   an aligned `bar.sync` whose waits of one phase come from two instructions (compute-sanitizer's
//!   synccheck: divergent threads in the block), warp-synchronous ops run by lanes outside their member mask, `setmaxnreg` out of order;
//!   mbarrier misuse (no initialized object, an object used by a warp, or named by its TMA
//!   or commit, that its `mbarrier.init` does not happen before, arrivals past the count,
//!   transaction counts out of range);
//! - a block's shared memory reached by another block of its cluster (a load, store, atomic,
//!   mbarrier arrival, or a copy or commit multicast into it) with nothing ordering the access
//!   before the block's exit, such as a consumer's last remote arrival on a producer block
//!   that leaves without a cluster barrier;
//! - deadlocks: when every live warp waits and nothing can wake one, the report lists each
//!   waiting warp, the op and Rust line it waits at and what it waits for (barrier arrivals,
//!   an mbarrier's phase, pending arrivals and transaction count, lanes of its warp, memory it
//!   polls), then the asynchronous operations in flight.
//!
//! Each [`Finding`] names its op, the block, warp and lane, the other party of a race, and the
//! Rust `file:line:column` of the kernel statement that emitted the op (`#[kernel]` and
//! `#[device]` stamp locations into the IR, see [`crate::ir::Location`]). The same seed,
//! schedule, launch and inputs give the same report, byte for byte.
//!
//! ## Running your own kernel
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::sim::{Arg, FindingKind, Launch, Memory, Options, Simulator};
//! use dsl_macros::kernel;
//!
//! /// Reverses each block's 64 elements through shared memory.
//! #[kernel]
//! fn reverse(#[host] sync: bool, k: &KernelBuilder, x: GlobalPtr<f32>, out: GlobalPtr<f32>) {
//!     let s = k.shared_array::<f32>("s", 64, 16);
//!     let t = thread_idx_x();
//!     let base = block_idx_x() * 64u32;
//!     s.store_at(t, x.load_at(base + t));
//!     if sync {
//!         sync_threads();
//!     }
//!     out.store_at(base + t, s.load_at(63u32 - t));
//! }
//!
//! let input: Vec<f32> = (0..128).map(|i| i as f32).collect();
//! for sync in [true, false] {
//!     let kernel = reverse(sync).unwrap();
//!     let sim = Simulator::new(kernel.check().unwrap());
//!     let mut mem = Memory::new();
//!     let x = mem.upload("x", &input);
//!     mem.set_read_only(x, true);
//!     let out = mem.alloc("out", 4 * 128);
//!     let report = sim
//!         .run(&Launch::linear(2, 64), &[Arg::Buffer(x), Arg::Buffer(out)], &mut mem, &Options::default())
//!         .unwrap();
//!     if sync {
//!         assert!(report.is_clean(), "{report}");
//!         assert_eq!(mem.read::<f32>(out)[0], 63.0);
//!     } else {
//!         // Without the barrier, thread t reads what another warp's thread writes.
//!         let race = report.of_kind(FindingKind::DataRace).next().unwrap();
//!         assert!(race.location.unwrap().line > 0 && race.other.is_some());
//!     }
//! }
//! ```
//!
//! Kernels built with the builder API by hand run the same way ([`crate::kernel::build_kernel`],
//! then [`Simulator::new`]); their instructions carry a location only where the code called
//! [`crate::kernel::set_location`].
//!
//! ## What is modelled, and what is not
//!
//! Values, not time: the simulator computes what each op writes, bit for bit, but has no notion
//! of cycles, latency, bandwidth or occupancy (`%clock` counts instructions). By IR family:
//!
//! | family | modelled | semantics |
//! |--------|----------|-----------|
//! | `Arith` | all: `add sub mul div rem min max and or xor shl shr`, `mul.hi/.wide`, `mad`, `fma` (4 roundings), `neg abs not popc clz brev`, `.approx` functions, `bfe bfi` | integers wrap; IEEE f32/f64; f16/bf16 and their pairs rounded once from the exact value; `.approx` = the f64 function rounded to the type |
//! | `Convert` | `cvt` between every pair of types (roundings, `.sat`), the f32-pair packing | as the ISA's `cvt` |
//! | `Compare` | `setp` (all 14 comparisons), `selp` | ordered/unordered float comparisons |
//! | `Data` | `mov`, special registers, symbol addresses, pack/unpack | `%clock` counts instructions |
//! | `Warp` | `shfl.sync` (4 modes, segments, clamp), `vote.sync`, `redux.sync`, `elect.sync`, `activemask`, `bar.warp.sync` | the ISA's pseudocode; every warp-synchronous op moves the warp's clock on (the lane rule) |
//! | `Memory` | `ld`/`st` in global, shared (cta and cluster), param, local (64 KiB per thread) and generic space; vectors; `.relaxed/.acquire/.release`; `prefetch` (no effect) | `.const` is [`SimError::Unsupported`] |
//! | `Atomic` | `atom`/`red`: `add` (ints, f32, f64, f16, bf16, pairs), `min max inc dec and or xor exch cas` on global and shared | lanes in lane order |
//! | `Barrier` | `bar.sync`, `barrier.sync`, `bar.arrive` (ids, thread counts), `barrier.cluster.arrive/wait` | per-warp arrival; exits release all-thread barriers |
//! | `Fence` | `membar`, `fence.sc/acq_rel`, `fence.proxy.async`, `fence.mbarrier_init`, `griddepcontrol` | a lone grid has nothing to wait for |
//! | `Address` | `cvta` (global, shared, param, local), `mapa` | |
//! | `CpAsync` | `cp.async` (4/8/16 bytes, `src-size`), `commit_group`, `wait_group`, `wait_all` | asynchronous, completed by its group's wait |
//! | `Matrix` | `ldmatrix`, `stmatrix` (`.x1/.x2/.x4`, `.trans`) | the ISA's fragment layouts |
//! | `Mma` | `mma.sync.m16n8k16` (f16/bf16 inputs, f16/f32 accumulators) | each element's exact products summed in f64, rounded once |
//! | `Setmaxnreg` | `setmaxnreg.inc/dec` | no value effect; order and warpgroup checks; an `.inc` waits for registers the block's warps released |
//! | `Mbarrier` | `init`, `inval`, `arrive` (counts, remote `.shared::cluster`), `arrive.expect_tx`, `expect_tx`, `try_wait.parity`, `test_wait.parity` | phases, pending arrivals, transaction counts; arrive releases, a completed wait acquires; `try_wait` waits without timing out |
//! | `Bulk` (TMA) | `cp.async.bulk.tensor` loads (`.multicast::cluster`, `.cta_group::2`, complete-tx on an mbarrier) and stores (bulk groups, `wait_group[.read]`), `cp.async.bulk.prefetch.tensor`, `prefetch.tensormap` | from the tensor map's description ([`Arg::Tma`]): boxes, swizzle modes, zeros out of bounds, clipped stores; writes and reads in the async proxy |
//! | `Wgmma` | `wgmma.mma_async` (shared-memory descriptors, A from registers, transposes, scales), `wgmma.fence`, `commit_group`, `wait_group` | descriptors and swizzles decoded from the ISA; asynchronous until its group's wait, its registers held until then |
//! | `Tcgen05` | `tcgen05.alloc/dealloc/relinquish_alloc_permit`, `tcgen05.mma` (`cta_group::1` and `::2`, `kind::f16`), `commit` (multicast), `ld`/`st` (`.32x32b`), `wait::ld/st`, the tcgen05 fences | tensor memory per block, 128 lanes x 512 columns; the pair's MMA split across both blocks |
//!
//! An op the simulator does not model stops the run with [`SimError::Unsupported`] (its
//! mnemonic and Rust location) when a warp reaches it, never a silent skip;
//! [`Simulator::unsupported`] lists them before a run.
//!
//! Execution: warps are the unit, with 32-lane registers. A branch whose lanes disagree splits
//! the warp into parts that the scheduler runs independently (Volta's independent thread
//! scheduling); they join again where the `if` or loop ends. A warp-synchronous op (a `.sync`
//! member mask, an `.aligned` op, a barrier) first gathers the lanes it needs; lanes that can
//! never come (they wait for it at the join) make a deadlock. The scheduler is deterministic
//! for a seed ([`Schedule`]): round-robin by default, random, or PCT; it also chooses when each
//! asynchronous operation completes within its legal window (late under round-robin: when a
//! completion mechanism needs it) and which lane `elect.sync` elects. A grid with more blocks
//! than the launch's SMs runs in waves, in block order; one that fits is all resident (a
//! persistent kernel's blocks run concurrently). A warp that reads the same value twice at one
//! ordered load or atomic with no write anywhere in between is polling: it parks until memory
//! changes, so a flag no block raises ends as a deadlock.
//!
//! Not modelled: lanes of one warp share a clock, so their accesses are told apart leniently:
//! any warp-synchronous op (not only `bar.warp.sync`, the one the ISA gives memory ordering) or
//! release between two lanes' accesses orders them (see *program order* below), and an
//! asynchronous agent's accesses are not told apart by lane; within a cluster, the
//! scopes of releases and acquires are taken as wide enough (a `.cta` release observed by
//! another block of the cluster is not reported; between clusters they are checked, see below);
//! in global memory, each byte keeps its two last reads that no later one of them happens after,
//! so of three or more unordered reads by different blocks only the last two are checked
//! against a later write.
//!
//! ## The memory-model rules implemented
//!
//! From the PTX ISA's *Memory Consistency Model* chapter: two accesses *conflict* when they
//! overlap and one writes; conflicting accesses that are not both morally strong (ordered loads
//! and stores and atomics are, with each other: *Morally strong operations*) and not ordered by
//! *causality order* are a data race (*Conflict and Data-races*). The simulator builds causality
//! order from:
//!
//! - *program order* within a thread; lanes of one warp are not in lockstep (independent thread
//!   scheduling), so two lanes' accesses to the same bytes at two instructions are a race
//!   unless `bar.warp.sync` ([`crate::kernel::sync_warp`], CUDA's `__syncwarp`), a barrier or
//!   another warp-synchronous op comes between them (each moves the warp's clock on);
//! - barriers (*Parallel Synchronization and Communication Instructions: bar, barrier*): "when a
//!   barrier completes, prior memory accesses requested by this thread are performed relative to
//!   all threads participating in the barrier", so every arrival's earlier accesses happen
//!   before every waiting warp's later ones; `bar.arrive` releases without acquiring;
//!   `barrier.cluster.arrive` (unless `.relaxed`) and `barrier.cluster.wait` do the same across
//!   the cluster;
//! - *Release and Acquire Patterns*: a release store or atomic, or a relaxed one after a release
//!   fence (`fence.acq_rel`, `fence.sc`, `membar`), publishes the warp's clock at its
//!   shared-memory location; an acquire load or atomic, or a relaxed one followed by an acquire
//!   fence, joins it (*Memory synchronization*);
//! - mbarriers (*Parallel Synchronization and Communication Instructions: mbarrier*): an arrive
//!   (`.release`, at cta or cluster scope; also a remote one on another block's barrier)
//!   publishes the arriving warp's clock to the barrier's current phase; a `try_wait` or
//!   `test_wait` that finds the phase complete (`.acquire`) joins it, so every arrival's earlier
//!   accesses happen before the waiter's later ones;
//! - asynchronous operations (*Data Movement and Conversion Instructions: cp.async*): a
//!   `cp.async` is a weak generic-proxy write by the warp's copy agent, ordered after its issue
//!   and before the `cp.async.wait_group`/`wait_all` that completes it ("no other
//!   synchronization mechanism guarantees the completion"), so another warp reading the
//!   destination needs a barrier after the wait, and two copies of one warp to the same bytes
//!   need a wait for the first between them (they complete in any order);
//! - *Proxies*: an access of the async proxy to bytes last written through the generic proxy
//!   needs a `fence.proxy.async` by the writer after the write, and happens-before from that
//!   fence to the access (*Parallel Synchronization and Communication Instructions: membar/fence*,
//!   proxy fences). This is the rule the async-proxy families (TMA, wgmma, tcgen05) are
//!   checked by. A generic access after an async-proxy write is ordered by the
//!   completion mechanism alone (an mbarrier's phase completing with its tx-count, or a bulk
//!   wait_group), and a generic read before an async-proxy write of the same bytes only needs
//!   happens-before:
//!   the consumer that releases a stage with an mbarrier arrive, and the producer whose wait on
//!   that mbarrier precedes its TMA overwrite, are ordered (*mbarrier*: arrive has release,
//!   a completed wait acquire semantics), which is what CUTLASS's pipelines rely on.
//! - An mbarrier's `mbarrier.init` is a write of the object: every operation on the barrier
//!   happens after it (*mbarrier*: "performing any mbarrier operation except mbarrier.init on a
//!   memory location prior to mbarrier.init is undefined"). Where the async proxy acts on the
//!   barrier (a TMA load's complete-tx, a `tcgen05.commit`'s arrival), the init must also have
//!   been published to it by a fence of the initializing thread after the init,
//!   `fence.mbarrier_init.release.cluster` or `fence.proxy.async` (*Proxies*; *membar/fence*),
//!   and that fence must happen before the operation's issue.
//! - Tensor memory (*Tensor Core 5th Generation: memory consistency model*): tcgen05
//!   operations of different threads are ordered only by `tcgen05.fence::before_thread_sync`,
//!   a synchronization, then `tcgen05.fence::after_thread_sync` (or an MMA's commit observed
//!   by a wait); a `tcgen05.alloc` counts as its warp's tensor-memory operation, so the first
//!   access to the columns by any other warp, and a `tcgen05.dealloc` after others' accesses,
//!   need that sandwich.
//!
//! Global memory is checked by the same rules (a [`FindingKind::GlobalRace`]), between the warps
//! of a cluster as above and between clusters: blocks of different clusters share no barrier,
//! and a later wave's blocks are not ordered after an earlier wave's, so only a release at a
//! global location (a `.release` store or atomic, or a relaxed one after `fence.acq_rel` or
//! `fence.sc`) read by an acquire in another cluster orders their accesses: what a stream-K
//! hand-over's flag, a split-K semaphore or a tile queue's atomic rely on. Between clusters the
//! scopes count (*Scope* and *Morally strong operations*): a release, an acquire or the fence
//! before a relaxed one synchronizes with another cluster only at `.gpu` or `.sys` scope, and two
//! ordered accesses (or atomics) of different blocks are morally strong with each other only
//! where each one's scope includes the other's block (`.cluster` within a cluster, `.gpu`
//! across clusters), so a flag at `.cta` scope polled by another block is a race. Read-only
//! buffers are not tracked (a write to one is a finding of its own).
//!
//! And one lifetime rule, from the CUDA programming guide's *Distributed Shared Memory*: every
//! access a block makes to another block's shared memory (a `shared::cluster` load, store or
//! atomic, a remote mbarrier arrival, a TMA copy or `tcgen05.commit` landing there) happens
//! before that block exits, as a cluster barrier (`barrier.cluster`) before the exit orders it;
//! an asynchronous unit's landing is ordered by a wait that observes it. A block's exit is the
//! join of its warps' clocks when its last warp exits.
//!
//! ## Design, for adding op families
//!
//! - [`Simulator::new`] compiles the checked kernel once into a flat program (instructions,
//!   branches, joins; the Rust location of each position): `program.rs`.
//! - `machine.rs` runs it: resident clusters of blocks, the scheduler's picks, parts of warps
//!   splitting and joining, the gathering of lanes for warp-synchronous ops, deadlocks.
//! - `op/`: one module per IR family, each a function `exec(&mut Exec, &FamilyOp) ->
//!   Result<Flow, SimError>`; a new family is a module plus an arm in `op::exec` (and in
//!   `op::sync_lanes` if its lanes must arrive together). `Exec` gives it the executing lanes,
//!   their registers (`read`, `set`), the block and cluster, global memory, the scheduler, and
//!   `find`/`find_race` to raise a finding (deduplicated per op and other party). A family that
//!   waits returns `Flow::Park(status)`, and whatever completes the wait sets the parked parts
//!   ready again (as `op/barrier.rs` does).
//! - Asynchronous operations (`asyncop.rs`): a family issues an `InFlight` with its agent's
//!   component and vector clock (the issuer's, with the agent's own epoch) and an `AsyncKind`
//!   variant of its own; its completion mechanism completes it (or the scheduler does, earlier,
//!   within the window), through one arm in `asyncop::complete`, and joins the agent's epoch into
//!   the waiting warp. Components are numbered in `clock.rs`: a `cp.async` agent per warp, and
//!   async-proxy agents per block for TMA, wgmma and tcgen05.
//! - Shared memory's shadow (`shadow.rs`) keeps FastTrack's epochs per byte and checks the
//!   async-proxy rule for accesses an async-proxy agent makes (its `Accessor::proxy`).
//! - An asynchronous copy that completes on an mbarrier (TMA's complete-tx) lowers the
//!   barrier's transaction count with `op::mbarrier::change_tx`, after joining its agent's
//!   clock into the barrier's phase, which then completes as arrivals do.

mod asyncop;
mod clock;
mod env;
mod exec;
mod float;
mod global;
mod held;
mod launch;
mod machine;
mod memory;
mod op;
mod peers;
mod program;
mod regs;
mod report;
mod sched;
mod shadow;
mod smem_matrix;
mod state;
mod tensor_map;
#[cfg(test)]
mod tests;
mod tmem;

pub use launch::{Arg, Checks, Launch, Limits, Options, Schedule};
pub use memory::{BufferId, Element, Memory};
pub use report::{Finding, FindingKind, Party, Report, SimError, Stats};
pub use tensor_map::TensorMapArg;

use crate::ir::{CheckedKernel, Kernel, Location, OpInfo};
use program::{Code, Program};

/// A kernel compiled for simulation; run it with [`Simulator::run`] as often as needed.
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The kernel's declarations (its body lives in `prog`).
    kernel: Kernel,
    prog: Program,
    limits: Limits,
}

impl Simulator {
    /// Compiles a checked kernel (see [`Kernel::check`]).
    pub fn new(kernel: CheckedKernel<'_>) -> Simulator {
        let k = kernel.kernel();
        Simulator {
            kernel: Kernel {
                name: k.name.clone(),
                params: k.params.clone(),
                shared: k.shared.clone(),
                dynamic_shared: k.dynamic_shared.clone(),
                hints: k.hints.clone(),
                regs: Vec::new(),
                body: Vec::new(),
            },
            prog: Program::compile(kernel),
            limits: Limits::default(),
        }
    }

    /// Checks `kernel` ([`Kernel::check`]) and compiles it.
    pub fn from_kernel(kernel: &Kernel) -> Result<Simulator, crate::ir::IrError> {
        Ok(Simulator::new(kernel.check()?))
    }

    /// The same simulator with other limits on a run's length and report.
    pub fn with_limits(mut self, limits: Limits) -> Simulator {
        self.limits = limits;
        self
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.kernel.name
    }

    /// The ops of the kernel that the simulator does not model, with their Rust locations, in
    /// program order: a run fails with [`SimError::Unsupported`] if a warp reaches one.
    pub fn unsupported(&self) -> Vec<(&'static str, Option<Location>)> {
        self.prog
            .code
            .iter()
            .zip(&self.prog.locs)
            .filter_map(|(c, loc)| match c {
                Code::Op(i) => {
                    let op = &self.prog.instrs[*i as usize].op;
                    (!op::modelled(op)).then(|| (op.mnemonic(), *loc))
                }
                _ => None,
            })
            .collect()
    }

    /// Runs the kernel on `launch` with `args` (one per parameter, in order) over `mem`.
    ///
    /// Returns the report (findings and counts) when the run ends, also by a deadlock (a
    /// finding). Errors: a launch the kernel cannot take, arguments that do not match its
    /// parameters, an op the simulator does not model, the step limit.
    pub fn run(
        &self,
        launch: &Launch,
        args: &[Arg],
        mem: &mut Memory,
        opts: &Options,
    ) -> Result<Report, SimError> {
        let env = env::Env::new(
            &self.kernel,
            &self.prog,
            launch,
            args,
            mem,
            opts,
            self.limits,
        )?;
        machine::Machine::new(&env, mem).run()
    }
}
