//! Mutants: rute's own kernels with one synchronizing instruction taken out (a barrier, a
//! fence, a wait, an arrival), a count or a wait weakened, a device-scope order narrowed to the
//! block, an acquire or release relaxed, or a release or a wait moved past the memory access
//! next to it, each run in the simulator on its case's inputs. A mutant is
//! caught where the run reports a finding, misses its reference or cannot finish; it survives
//! where it runs clean and right. The kinds of defect the planted tests name, drawn from every
//! such instruction of real kernels rather than written one by one: how much of what the
//! simulator is for it finds.
//!
//! A survivor is not a failure by itself: some instructions order nothing a run can observe
//! (the last barrier before a block's exit, a fence with nothing after it). Each test says which
//! it expects to survive, and why.

use dsl_core::ir::op::{Atomic, Barrier, Bulk, CpAsync, Fence, Mbarrier, Memory, Wgmma};
use dsl_core::ir::{Kernel, MemOrder, Op, OpInfo, Operand, Scope, Stmt};
use dsl_core::sim::Schedule;
use kernels::cases::simulate::Simulated;
use kernels::cases::{Case, CaseError, Run};

/// The instructions a mutant leaves out: those that order other threads', the async proxy's or
/// the tensor core's work. (Not `mbarrier.try_wait`: without it a wait loop reads a register nothing
/// wrote, which is caught, but says nothing about ordering.)
const SYNCHRONIZING: [&str; 24] = [
    "bar.sync",
    "barrier.sync",
    "bar.arrive",
    "barrier.arrive",
    "barrier.cluster.arrive",
    "barrier.cluster.wait",
    "bar.warp.sync",
    "fence",
    "fence.proxy.async",
    "membar",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "cp.async.bulk.wait_group",
    "wgmma.wait_group",
    "mbarrier.arrive",
    "fence.mbarrier_init",
    "wgmma.fence",
    "wgmma.commit_group",
    "cp.async.commit_group",
    "cp.async.bulk.commit_group",
    "tcgen05.wait::ld",
    "tcgen05.wait::st",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
];

/// Whether `mnemonic` is one [`SYNCHRONIZING`] names.
fn synchronizing(mnemonic: &str) -> bool {
    SYNCHRONIZING.contains(&mnemonic)
}

/// How a mutant changes one instruction of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mutation {
    /// A [`SYNCHRONIZING`] instruction left out.
    Remove,
    /// A count or a wait weakened ([`weakened`]): a named barrier expecting a warp fewer, an
    /// mbarrier initialized for an arrival fewer (a warp's fewer where it counts threads, one
    /// more where it expects one), a phase's
    /// transaction bytes halved, a `cp.async`, bulk or `wgmma` wait leaving one more group
    /// pending.
    Weaken,
    /// A fence, an ordered load or store or an atomic at device or system scope narrowed to
    /// the block's ([`narrowed`]): what a flag between blocks of different clusters relies on.
    Narrow,
    /// An acquire or release load, store, atomic or fence made relaxed ([`relaxed`]).
    Relax,
    /// A release (an arrival, a barrier, a proxy fence) moved above the memory access just
    /// before it: a stage handed back before it is read, a tile published before it is written.
    Hoist,
    /// A wait (a barrier, a `cp.async`, bulk, `wgmma` or tcgen05 wait) moved below the memory
    /// access just after it: data used before it has landed.
    Sink,
    /// An unaligned named barrier made aligned ([`aligned`]): `barrier.sync` as `bar.sync`,
    /// `barrier.arrive` as `bar.arrive`. Not a class of the mutants below: one wait made aligned
    /// beside unaligned ones is no finding (`dsl_core::sim`'s barrier rules); the planted
    /// `the_hand_over_made_aligned_is_caught` makes every one aligned.
    Align,
}

/// The releases [`Mutation::Hoist`] moves.
const RELEASES: [&str; 8] = [
    "mbarrier.arrive",
    "bar.arrive",
    "barrier.arrive",
    "bar.sync",
    "barrier.sync",
    "barrier.cluster.arrive",
    "fence.proxy.async",
    "tcgen05.fence::before_thread_sync",
];

/// The waits [`Mutation::Sink`] moves.
const WAITS: [&str; 8] = [
    "bar.sync",
    "barrier.sync",
    "barrier.cluster.wait",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "cp.async.bulk.wait_group",
    "wgmma.wait_group",
    "tcgen05.wait::ld",
];

/// The memory accesses a hoisted release or a sunk wait moves past: loads and stores, the
/// matrix copies, asynchronous copies and tensor-memory loads.
const ACCESSES: [&str; 7] = [
    "ld",
    "st",
    "ldmatrix",
    "stmatrix",
    "cp.async",
    "cp.async.bulk.tensor",
    "tcgen05.ld",
];

fn is_op(stmt: Option<&Stmt>, names: &[&str]) -> bool {
    matches!(stmt, Some(Stmt::Op(i)) if names.contains(&i.op.mnemonic()))
}

/// Whether a statement-moving `mutation` applies to `stmts[i]`, given its neighbours.
fn moves(mutation: Mutation, stmts: &[Stmt], i: usize) -> bool {
    match mutation {
        Mutation::Hoist => {
            i > 0 && is_op(stmts.get(i), &RELEASES) && is_op(stmts.get(i - 1), &ACCESSES)
        }
        Mutation::Sink => is_op(stmts.get(i), &WAITS) && is_op(stmts.get(i + 1), &ACCESSES),
        _ => false,
    }
}

/// `order` at block scope, where its scope is the device's or the system's.
fn narrow_order(order: MemOrder) -> Option<MemOrder> {
    use MemOrder::*;
    let narrow = |s: Scope| (s >= Scope::Gpu).then_some(Scope::Cta);
    Some(match order {
        Relaxed(s) => Relaxed(narrow(s)?),
        Acquire(s) => Acquire(narrow(s)?),
        Release(s) => Release(narrow(s)?),
        AcqRel(s) => AcqRel(narrow(s)?),
    })
}

/// `order` relaxed, where it acquires or releases.
fn relax_order(order: MemOrder) -> Option<MemOrder> {
    use MemOrder::*;
    match order {
        Relaxed(_) => None,
        Acquire(s) | Release(s) | AcqRel(s) => Some(Relaxed(s)),
    }
}

/// `op` with its memory order changed by `change`, where it has one that `change` takes;
/// fences are changed as the order of the same strength and scope would be.
fn reordered(op: &Op, change: fn(MemOrder) -> Option<MemOrder>) -> Option<Op> {
    let mut op = op.clone();
    match &mut op {
        Op::Memory(Memory::Ld { order, .. } | Memory::St { order, .. })
        | Op::Atomic(Atomic::Atom { order, .. } | Atomic::Red { order, .. }) => {
            *order = Some(change((*order)?)?);
        }
        Op::Fence(Fence::Fence { scope, .. } | Fence::Membar { scope }) => {
            match change(MemOrder::AcqRel(*scope))? {
                // A relaxed fence orders nothing: the fence left out.
                MemOrder::Relaxed(_) => return None,
                narrowed => *scope = narrowed.scope(),
            }
        }
        _ => return None,
    }
    Some(op)
}

/// `op` at block scope ([`Mutation::Narrow`]).
fn narrowed(op: &Op) -> Option<Op> {
    reordered(op, narrow_order)
}

/// `op` relaxed ([`Mutation::Relax`]).
fn relaxed(op: &Op) -> Option<Op> {
    reordered(op, relax_order)
}

/// `op` with its count or wait weakened, where [`Mutation::Weaken`] applies to it.
fn weakened(op: &Op) -> Option<Op> {
    let fewer = |o: &Operand, by: i64, floor: i64| match *o {
        Operand::Imm(c) if c - by >= floor => Some(Operand::Imm(c - by)),
        _ => None,
    };
    Some(match op {
        Op::Barrier(Barrier::Sync { id, count: Some(c) }) => Op::Barrier(Barrier::Sync {
            id: *id,
            count: Some(fewer(c, 32, 32)?),
        }),
        Op::Barrier(Barrier::SyncUnaligned { id, count: Some(c) }) => {
            Op::Barrier(Barrier::SyncUnaligned {
                id: *id,
                count: Some(fewer(c, 32, 32)?),
            })
        }
        Op::Barrier(Barrier::Arrive { id, count }) => Op::Barrier(Barrier::Arrive {
            id: *id,
            count: fewer(count, 32, 32)?,
        }),
        Op::Barrier(Barrier::ArriveUnaligned { id, count }) => {
            Op::Barrier(Barrier::ArriveUnaligned {
                id: *id,
                count: fewer(count, 32, 32)?,
            })
        }
        Op::Mbarrier(Mbarrier::Init { addr, count }) => Op::Mbarrier(Mbarrier::Init {
            addr: addr.clone(),
            // One arrival fewer, or one warp's where every thread arrives (a warp's lanes
            // arrive together, so a lane fewer completes the phase within the same warp).
            count: match *count {
                Operand::Imm(1) => Operand::Imm(2),
                Operand::Imm(c) if c >= 64 => Operand::Imm(c - 32),
                _ => fewer(count, 1, 1)?,
            },
        }),
        Op::Mbarrier(Mbarrier::ArriveExpectTx {
            state,
            space,
            scope,
            addr,
            tx_count: Operand::Imm(b),
        }) if *b >= 32 => Op::Mbarrier(Mbarrier::ArriveExpectTx {
            state: *state,
            space: *space,
            scope: *scope,
            addr: addr.clone(),
            tx_count: Operand::Imm(b / 2),
        }),
        Op::CpAsync(CpAsync::WaitGroup(n)) => Op::CpAsync(CpAsync::WaitGroup(n + 1)),
        Op::Wgmma(Wgmma::WaitGroup(n)) => Op::Wgmma(Wgmma::WaitGroup(n + 1)),
        Op::Bulk(Bulk::WaitGroup { n, read }) => Op::Bulk(Bulk::WaitGroup {
            n: n + 1,
            read: *read,
        }),
        _ => return None,
    })
}

/// `op`, an unaligned named barrier, as its aligned form ([`Mutation::Align`]).
fn aligned(op: &Op) -> Option<Op> {
    Some(match *op {
        Op::Barrier(Barrier::SyncUnaligned { id, count }) => {
            Op::Barrier(Barrier::Sync { id, count })
        }
        Op::Barrier(Barrier::ArriveUnaligned { id, count }) => {
            Op::Barrier(Barrier::Arrive { id, count })
        }
        _ => return None,
    })
}

/// `op` changed by `mutation`, where that mutation rewrites an op and applies to this one.
fn changed(mutation: Mutation, op: &Op) -> Option<Op> {
    match mutation {
        Mutation::Weaken => weakened(op),
        Mutation::Narrow => narrowed(op),
        Mutation::Relax => relaxed(op),
        Mutation::Align => aligned(op),
        Mutation::Remove | Mutation::Hoist | Mutation::Sink => None,
    }
}

/// Whether `mutation` applies to the instruction at `stmts[i]` (a move looks at its
/// neighbours: [`moves`]).
fn applies_at(mutation: Mutation, stmts: &[Stmt], i: usize) -> bool {
    let Stmt::Op(instr) = &stmts[i] else {
        return false;
    };
    match mutation {
        Mutation::Remove => synchronizing(instr.op.mnemonic()),
        Mutation::Weaken | Mutation::Narrow | Mutation::Relax | Mutation::Align => {
            changed(mutation, &instr.op).is_some()
        }
        Mutation::Hoist | Mutation::Sink => moves(mutation, stmts, i),
    }
}

/// Calls `f` with each position of `stmts` (nested blocks in order) where `mutation` applies,
/// until it returns true; whether it did. The one order both the sites and the mutants count
/// in.
fn each_site(
    stmts: &mut Vec<Stmt>,
    mutation: Mutation,
    f: &mut dyn FnMut(&mut Vec<Stmt>, usize) -> bool,
) -> bool {
    for i in 0..stmts.len() {
        if applies_at(mutation, stmts, i) {
            if f(stmts, i) {
                return true;
            }
            continue;
        }
        let found = match &mut stmts[i] {
            Stmt::For { body, .. } => each_site(body, mutation, f),
            Stmt::If { then, else_, .. } => {
                each_site(then, mutation, f) || each_site(else_, mutation, f)
            }
            Stmt::While {
                cond_block, body, ..
            } => each_site(cond_block, mutation, f) || each_site(body, mutation, f),
            _ => false,
        };
        if found {
            return true;
        }
    }
    false
}

/// Applies `mutation` to the `n`th instruction of `stmts` it applies to: true where there was
/// one.
pub(crate) fn mutate_nth(stmts: &mut Vec<Stmt>, mutation: Mutation, mut n: usize) -> bool {
    each_site(stmts, mutation, &mut |stmts, i| {
        if n > 0 {
            n -= 1;
            return false;
        }
        match mutation {
            Mutation::Remove => {
                stmts.remove(i);
            }
            Mutation::Hoist => stmts.swap(i - 1, i),
            Mutation::Sink => stmts.swap(i, i + 1),
            Mutation::Weaken | Mutation::Narrow | Mutation::Relax | Mutation::Align => {
                if let Stmt::Op(instr) = &mut stmts[i] {
                    instr.op = changed(mutation, &instr.op).expect("it applies");
                }
            }
        }
        true
    })
}

/// A case whose kernel `kernel` has `mutation` applied to the `nth` instruction it applies to.
#[derive(Debug)]
struct Mutant<'c> {
    case: &'c dyn Case,
    kernel: usize,
    mutation: Mutation,
    nth: usize,
}

impl Case for Mutant<'_> {
    fn describe(&self) -> String {
        format!(
            "{} with {:?} at instruction {} of kernel {}",
            self.case.describe(),
            self.mutation,
            self.nth,
            self.kernel
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        let mut ks = self.case.kernels()?;
        assert!(
            mutate_nth(&mut ks[self.kernel].body, self.mutation, self.nth),
            "{}",
            self.describe()
        );
        Ok(ks)
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        self.case.run(seed)
    }
}

/// The mnemonic and Rust line of each instruction of `kernel` that `mutation` applies to, in
/// the order [`mutate_nth`] counts them.
pub(crate) fn sites(kernel: &Kernel, mutation: Mutation) -> Vec<String> {
    let mut v = Vec::new();
    each_site(&mut kernel.body.clone(), mutation, &mut |stmts, i| {
        if let Stmt::Op(instr) = &stmts[i] {
            let at = instr
                .loc
                .as_ref()
                .map_or("?".to_string(), |l| format!("{}:{}", l.file, l.line));
            v.push(format!("{} at {at}", instr.op.mnemonic()));
        }
        false
    });
    v
}

/// What the mutants of a run came to: each mutant's site (`Remove bar.sync at file:line`) with
/// whether it was caught.
type Verdicts = Vec<(String, bool)>;

/// Every mutant of `case` by `mutation` over seeds 0 (round-robin) and 1 (random): a mutant is
/// caught where either seed's run reports a finding, misses the reference or cannot finish.
fn verdicts(case: &dyn Case, mutation: Mutation) -> Verdicts {
    let kernels = case.kernels().expect("the case's kernels");
    let mut out = Vec::new();
    for (ki, k) in kernels.iter().enumerate() {
        for (nth, site) in sites(k, mutation).iter().enumerate() {
            let m = Mutant {
                case,
                kernel: ki,
                mutation,
                nth,
            };
            let caught = match Simulated::new(&m) {
                Err(_) => true,
                Ok(sim) => [(0, Schedule::RoundRobin), (1, Schedule::Random)]
                    .iter()
                    .any(|&(seed, s)| sim.run(seed, s).map_or(true, |o| !o.passed())),
            };
            out.push((format!("{mutation:?} {site}"), caught));
        }
    }
    out
}

/// Where an equivalent mutant's instruction is: every instruction of its mnemonic that a file's
/// statements emit, or those of one statement (its text, found in the file).
enum Place {
    File(&'static str),
    Statement(&'static str, &'static str),
}

/// The instructions whose removal a run cannot observe, by where they are and their mnemonic,
/// each with the reason: the mutants the simulator is right to let pass.
const EQUIVALENT: [(Place, &str, &str); 7] = [
    (
        Place::File("examples/softmax.rs"),
        "bar.sync",
        "the last block reduction's closing barrier guards its scratch against a next \
         reduction, and there is none",
    ),
    (
        Place::File("examples/layernorm.rs"),
        "bar.sync",
        "as softmax's: the closing barrier of the last reduction",
    ),
    (
        Place::File("examples/async_copy.rs"),
        "bar.sync",
        "the barrier after reading a stage back: each thread reads only the elements its own \
         copies wrote, so no thread's next copy reaches another's read",
    ),
    (
        Place::File("examples/tma_round_trip.rs"),
        "bar.sync",
        "the plain round trip writes nothing between the load's wait and the store, and the \
         storing thread waited for the load itself",
    ),
    (
        Place::File("multistage/program.rs"),
        "cp.async.wait_all",
        "before the staged epilogue reuses the ring: the peeled last k-tile left no copy \
         pending",
    ),
    (
        Place::Statement("blackwell/program.rs", "let tmem_base = tmem.address();"),
        "tcgen05.fence::after_thread_sync",
        "the fence after the setup barrier: each role that touches tensor memory (the MMA \
         warps, the epilogue warps) fences after its own pipeline wait before its first access",
    ),
    (
        Place::Statement("blackwell/program.rs", "tmem.release(alloc_warp);"),
        "tcgen05.fence::before_thread_sync",
        "the fence before the closing barrier: the epilogue warps fenced after their last \
         tensor-memory load (before releasing the accumulator), and the MMA warps' last \
         accesses are published by their commits",
    ),
];

/// Whether the removal at `site` (`Remove mnemonic at file:line`) is one [`EQUIVALENT`] names.
fn equivalent(site: &str) -> bool {
    EQUIVALENT.iter().any(|(place, op, _)| match place {
        Place::File(file) => site.starts_with(&format!("Remove {op} at kernels/src/{file}:")),
        Place::Statement(file, text) => {
            let path = format!("{}/src/{file}", env!("CARGO_MANIFEST_DIR"));
            let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let lines: Vec<usize> = source
                .lines()
                .enumerate()
                .filter(|(_, l)| l.trim() == *text)
                .map(|(i, _)| i + 1)
                .collect();
            assert_eq!(lines.len(), 1, "`{text}` is not one line of {file}");
            site == format!("Remove {op} at kernels/src/{file}:{}", lines[0])
        }
    })
}

/// Every registered kernel's case, and runs that take every path a mutant can break (rings that
/// lap, stream-K splitting tiles between SMs, ping-pong consumers and Blackwell pairs walking
/// several tiles each), mutated both ways ([`Mutation`]): every mutant is caught but the
/// equivalent ones, and a weakened count or wait in a registered case whose ring never laps
/// is caught in the lapping run of the same kernel.
#[test]
fn every_mutant_of_rute_kernels_is_caught_but_the_equivalent_ones() {
    use kernels::cases::Values;
    use kernels::gemm::GemmDtype;
    let mut cases: Vec<Box<dyn Case>> = kernels::registry::KERNELS
        .iter()
        // One type of each; the Hopper program's small case walks whole tiles only, so its
        // schedules below stand for it.
        .filter(|k| !k.name.ends_with("_bf16") && !k.name.starts_with("hopper_ws"))
        .map(|k| (k.case)().unwrap_or_else(|e| panic!("{}: {e}", k.name)))
        .collect();
    // Runs whose rings lap and whose blocks walk several tiles, so that a count or a wait
    // weakened on the way shows: the stream through a ring of two stages, the Blackwell pair
    // over several cluster tiles, and the Hopper schedules.
    cases.push(Box::new(kernels::cases::examples::TmaStream {
        rows: 330,
        cols: 200,
        tile_rows: 64,
        stages: 2,
        lag: 1,
    }));
    for (program, config, shape, sms) in [
        ("blackwell_ws", "step8", (520, 264, 136), 2),
        ("hopper_ws", "128x256x64s4_e128_k", (300, 520, 1000), 4),
        ("hopper_ws", "128x128x64s4_k", (300, 200, 1000), 4),
        ("hopper_ws", "64x128x64s4_p", (300, 200, 200), 1),
    ] {
        let case = super::gemm_case(
            program,
            Some(config),
            shape,
            sms,
            GemmDtype::F16,
            Values::SmallIntegers,
        );
        cases.push(Box::new(case));
    }
    let all: Verdicts = cases
        .iter()
        .flat_map(|case| {
            [
                Mutation::Remove,
                Mutation::Weaken,
                Mutation::Narrow,
                Mutation::Relax,
                Mutation::Hoist,
                Mutation::Sink,
            ]
            .into_iter()
            .flat_map(|mutation| verdicts(case.as_ref(), mutation))
        })
        .collect();
    let (total, caught) = (all.len(), all.iter().filter(|(_, c)| *c).count());
    // A site that survives in one run (a ring that never laps, one tile a block) counts only
    // where no run of the same kernel catches it.
    let caught_sites: std::collections::BTreeSet<&str> = all
        .iter()
        .filter(|(_, c)| *c)
        .map(|(s, _)| s.as_str())
        .collect();
    let unexplained: std::collections::BTreeSet<&str> = all
        .iter()
        .filter(|(s, c)| !c && !caught_sites.contains(s.as_str()) && !equivalent(s))
        .map(|(s, _)| s.as_str())
        .collect();
    eprintln!("{caught} of {total} mutants caught");
    assert!(
        unexplained.is_empty(),
        "mutants the simulator let pass: {unexplained:#?}"
    );
}
