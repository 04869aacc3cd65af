//! # A CPU simulator of rute's IR
//!
//! [`Simulator`] runs a kernel on the CPU, without a GPU: every block of the launch, every warp
//! as 32 lanes, with the semantics of each op written from the PTX ISA (not from rute's own
//! code generation or atoms, so that it checks them independently). While it runs it checks:
//!
//! - data races on shared memory, by happens-before with vector clocks (the PTX memory model's
//!   barriers, release/acquire patterns and asynchronous completion mechanisms order accesses;
//!   anything else concurrent is a race), including an async-proxy access against a generic
//!   write that no `fence.proxy.async` made visible to it;
//! - reads of uninitialized registers, shared memory and global memory;
//! - out-of-bounds and misaligned accesses, writes to read-only buffers;
//! - barrier misuse: thread counts that disagree or cannot be reached, warp-synchronous ops that
//!   lanes of their member mask do not reach;
//! - deadlocks: when every live warp waits and nothing can wake one, the report lists each
//!   waiting warp, the op and Rust line it waits at and what it waits for, then the asynchronous
//!   operations in flight.
//!
//! Each [`Finding`] names its op, the block, warp and lane, the other party of a race, and the
//! Rust `file:line:column` of the kernel statement that emitted the op (`#[kernel]` and
//! `#[device]` stamp locations into the IR, see [`crate::ir::Location`]). The same seed,
//! schedule, launch and inputs give the same report, byte for byte.
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_core::sim::{Arg, Launch, Memory, Options, Simulator};
//!
//! // out[i] = 2 * x[i], for i < n.
//! let kernel = build_kernel("double", |k| {
//!     let x = k.param_ptr::<f32>("x");
//!     let out = k.param_ptr::<f32>("out");
//!     let n = k.param::<u32>("n");
//!     let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!     i.lt(n).if_(|_| out.store_at(i, x.load_at(i) * 2.0f32));
//! })
//! .unwrap();
//! let sim = Simulator::new(kernel.check().unwrap());
//!
//! let mut mem = Memory::new();
//! let x = mem.upload("x", &(0..100).map(|i| i as f32).collect::<Vec<_>>());
//! let out = mem.alloc("out", 400);
//! mem.set_read_only(x, true);
//! let args = [Arg::Buffer(x), Arg::Buffer(out), Arg::u32(100)];
//! let report = sim
//!     .run(&Launch::linear(4, 32), &args, &mut mem, &Options::default())
//!     .unwrap();
//! assert!(report.is_clean(), "{report}");
//! assert_eq!(mem.read::<f32>(out)[99], 198.0);
//! ```
//!
//! ## What is modelled, and what is not
//!
//! Values, not time: the simulator computes what each op writes, bit for bit, but has no notion
//! of cycles, latency, bandwidth or occupancy (`%clock` counts instructions). The families it
//! runs are listed in [`op`]'s module; an op of another family stops the run with
//! [`SimError::Unsupported`] when a warp reaches it (never a silent skip), and
//! [`Simulator::unsupported`] lists them before a run.
//!
//! Execution: warps are the unit, with 32-lane registers. A branch whose lanes disagree splits
//! the warp into parts that the scheduler runs independently (Volta's independent thread
//! scheduling); they join again where the `if` or loop ends. A warp-synchronous op waits for the
//! lanes it needs (its member mask, or the whole warp for `.aligned` ops and barriers); if they
//! can never come (they wait at the join for it) that is a deadlock. The scheduler is
//! deterministic for a seed ([`Schedule`]): round-robin by default, random, or PCT; it also
//! chooses when each asynchronous operation completes within its legal window (late by default:
//! when a completion mechanism needs it) and which lane `elect.sync` elects. A grid larger than
//! the launch's SMs runs in waves, in block order; a grid that fits is all resident.
//!
//! Lanes of one warp share a clock: the simulator orders them by the warp's program order, so
//! it does not report races between lanes of one warp. Global memory is checked for bounds,
//! initialization and read-only marks, not for races. Scopes are taken as wide enough (a
//! `.cta` release observed by another block is not reported).
//!
//! ## The memory-model rules implemented
//!
//! From the PTX ISA's *Memory Consistency Model* chapter: accesses conflict when they overlap
//! and one writes (*Conflict and Data-races*); two conflicting accesses that are not both
//! morally strong (atomics are, with each other) and not ordered by *causality order* are a data
//! race. Causality order is built from:
//!
//! - *program order* within a warp (the simulator's granularity);
//! - barriers (*Parallel Synchronization and Communication Instructions: bar, barrier*): when a
//!   named barrier completes, every arrival's prior accesses happen before every waiting warp's
//!   later ones; `bar.arrive` releases without acquiring; `barrier.cluster.arrive` (unless
//!   `.relaxed`) and `barrier.cluster.wait` do the same across the cluster;
//! - *Release and Acquire Patterns*: a release store or atomic (or a relaxed one after a release
//!   fence, `fence.acq_rel`/`fence.sc`/`membar`) publishes the warp's clock at its shared-memory
//!   location; an acquire load or atomic (or a relaxed one followed by an acquire fence) joins
//!   it;
//! - asynchronous operations: a `cp.async` is a weak generic-proxy write by the warp's copy
//!   agent, ordered after its issue and before the `cp.async.wait_group` that completes it (the
//!   ISA's *async-group completion mechanism*; nothing else completes it);
//! - *Proxies*: an access of the async proxy to bytes last written through the generic proxy
//!   needs a `fence.proxy.async` by the writer after the write, and happens-before from that
//!   fence to the access. A generic access after an async write is ordered by the completion
//!   mechanism alone (the mbarrier complete-tx or wait_group that the later families model),
//!   which is the ordering CUTLASS's pipelines rely on.
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
//!   their registers, the block and cluster, global memory, and `find`/`find_race` to raise a
//!   finding (deduplicated per op and other party).
//! - Asynchronous operations (`asyncop.rs`): a family issues an `InFlight` with its agent's
//!   component and vector clock and an `AsyncKind` variant of its own, completes it from its
//!   completion mechanism (or the scheduler completes it earlier, within the window), and adds
//!   its arm to `asyncop::complete`. Agents' components are numbered in `clock.rs` (per warp
//!   for `cp.async`, per block for the async proxy).
//! - Shared memory's shadow (`shadow.rs`) keeps FastTrack's epochs per byte and checks the
//!   async-proxy rule for accesses marked as async-proxy ones.

mod asyncop;
mod clock;
mod env;
mod exec;
mod float;
mod launch;
mod machine;
mod memory;
pub mod op;
mod program;
mod regs;
mod report;
mod sched;
mod shadow;
mod state;
#[cfg(test)]
mod tests;

pub use launch::{Arg, Checks, Launch, Options, Schedule};
pub use memory::{BufferId, Element, Memory};
pub use report::{Finding, FindingKind, Party, Report, SimError, Site, Stats};

use crate::ir::{CheckedKernel, Kernel, Location, OpInfo};
use program::{Code, Program};

/// A kernel compiled for simulation; run it with [`Simulator::run`] as often as needed.
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The kernel's declarations (its body lives in `prog`).
    kernel: Kernel,
    prog: Program,
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
        }
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
        let env = env::Env::new(&self.kernel, &self.prog, launch, args, mem, opts)?;
        machine::Machine::new(&env, mem).run()
    }
}
