//! Mutants: rute's own kernels with one synchronizing instruction taken out (a barrier, a
//! fence, a wait, an arrival), each run in the simulator on its case's inputs. A mutant is
//! caught where the run reports a finding, misses its reference or cannot finish; it survives
//! where it runs clean and right. The kinds of defect the planted tests name, drawn from every
//! such instruction of real kernels rather than written one by one: how much of what the
//! simulator is for it finds.
//!
//! A survivor is not a failure by itself: some instructions order nothing a run can observe
//! (the last barrier before a block's exit, a fence with nothing after it). Each test says which
//! it expects to survive, and why.

use dsl_core::ir::{Kernel, OpInfo, Stmt};
use dsl_core::sim::Schedule;
use kernels::cases::simulate::Simulated;
use kernels::cases::{Case, CaseError, Run};

/// The instructions a mutant leaves out: those that order other threads' or the async
/// proxy's work. (Not `mbarrier.try_wait`: without it a wait loop reads a register nothing
/// wrote, which is caught, but says nothing about ordering.)
const SYNCHRONIZING: [&str; 14] = [
    "bar.sync",
    "barrier.sync",
    "bar.arrive",
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
];

/// Whether `mnemonic` is one [`SYNCHRONIZING`] names.
fn synchronizing(mnemonic: &str) -> bool {
    SYNCHRONIZING.contains(&mnemonic)
}

/// Where the `n`th synchronizing instruction of `stmts` is, removed: true where there was one.
fn remove_nth(stmts: &mut Vec<Stmt>, n: &mut usize) -> bool {
    let mut i = 0;
    while i < stmts.len() {
        let found = match &mut stmts[i] {
            Stmt::Op(instr) if synchronizing(instr.op.mnemonic()) => {
                if *n == 0 {
                    stmts.remove(i);
                    return true;
                }
                *n -= 1;
                false
            }
            Stmt::For { body, .. } => remove_nth(body, n),
            Stmt::If { then, else_, .. } => remove_nth(then, n) || remove_nth(else_, n),
            Stmt::While {
                cond_block, body, ..
            } => remove_nth(cond_block, n) || remove_nth(body, n),
            _ => false,
        };
        if found {
            return true;
        }
        i += 1;
    }
    false
}

/// How many synchronizing instructions `stmts` holds.
fn count(stmts: &[Stmt]) -> usize {
    let mut c = 0;
    dsl_core::ir::visit::for_each_instr(stmts, &mut |i| {
        if synchronizing(i.op.mnemonic()) {
            c += 1;
        }
    });
    c
}

/// A case whose kernel `kernel` has its `nth` synchronizing instruction left out.
#[derive(Debug)]
struct Mutant<'c> {
    case: &'c dyn Case,
    kernel: usize,
    nth: usize,
}

impl Case for Mutant<'_> {
    fn describe(&self) -> String {
        format!(
            "{} without synchronizing instruction {} of kernel {}",
            self.case.describe(),
            self.nth,
            self.kernel
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        let mut ks = self.case.kernels()?;
        let mut n = self.nth;
        assert!(
            remove_nth(&mut ks[self.kernel].body, &mut n),
            "{}",
            self.describe()
        );
        Ok(ks)
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        self.case.run(seed)
    }
}

/// The mnemonic and Rust line of each synchronizing instruction of `kernel`, in order.
fn sites(kernel: &Kernel) -> Vec<String> {
    let mut v = Vec::new();
    dsl_core::ir::visit::for_each_instr(&kernel.body, &mut |i| {
        if synchronizing(i.op.mnemonic()) {
            let at = i
                .loc
                .as_ref()
                .map_or("?".to_string(), |l| format!("{}:{}", l.file, l.line));
            v.push(format!("{} at {at}", i.op.mnemonic()));
        }
    });
    v
}

/// Every mutant of `case` over seeds 0 (round-robin) and 1 (random): the sites of the
/// survivors (a mutant is caught where either seed's run reports a finding, misses the
/// reference or cannot finish).
fn survivors(case: &dyn Case) -> (usize, Vec<String>) {
    let kernels = case.kernels().expect("the case's kernels");
    let mut total = 0;
    let mut left = Vec::new();
    for (ki, k) in kernels.iter().enumerate() {
        let at = sites(k);
        assert_eq!(at.len(), count(&k.body));
        for (nth, site) in at.iter().enumerate() {
            total += 1;
            let m = Mutant {
                case,
                kernel: ki,
                nth,
            };
            let caught = match Simulated::new(&m) {
                Err(_) => true,
                Ok(sim) => [(0, Schedule::RoundRobin), (1, Schedule::Random)]
                    .iter()
                    .any(|&(seed, s)| sim.run(seed, s).map_or(true, |o| !o.passed())),
            };
            if !caught {
                left.push(format!("{}: {site}", k.name));
            }
        }
    }
    (total, left)
}

/// The instructions whose removal a run cannot observe, by the file and mnemonic of the
/// statement that emits them, each with the reason: the mutants the simulator is right to
/// let pass.
const EQUIVALENT: [(&str, &str, &str); 5] = [
    (
        "examples/softmax.rs",
        "bar.sync",
        "the last block reduction's closing barrier guards its scratch against a next \
         reduction, and there is none",
    ),
    (
        "examples/layernorm.rs",
        "bar.sync",
        "as softmax's: the closing barrier of the last reduction",
    ),
    (
        "examples/async_copy.rs",
        "bar.sync",
        "the barrier after reading a stage back: each thread reads only the elements its own \
         copies wrote, so no thread's next copy reaches another's read",
    ),
    (
        "examples/tma_round_trip.rs",
        "bar.sync",
        "the plain round trip writes nothing between the load's wait and the store, and the \
         storing thread waited for the load itself",
    ),
    (
        "multistage/program.rs",
        "cp.async.wait_all",
        "before the staged epilogue reuses the ring: the peeled last k-tile left no copy \
         pending",
    ),
];

/// Whether the survivor `site` (`kernel: mnemonic at file:line`) is one [`EQUIVALENT`] names.
fn equivalent(site: &str) -> bool {
    EQUIVALENT
        .iter()
        .any(|(file, op, _)| site.contains(&format!(": {op} at kernels/src/{file}:")))
}

/// Every registered kernel's case, and Hopper schedules whose runs take every path a mutant
/// can break (stream-K splitting tiles between SMs, ping-pong consumers walking several tiles
/// each): every mutant is caught but the equivalent ones.
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
    for (config, shape, sms) in [
        ("128x256x64s4_e128_k", (300, 520, 1000), 4),
        ("128x128x64s4_k", (300, 200, 1000), 4),
        ("64x128x64s4_p", (300, 200, 200), 1),
    ] {
        let case = super::gemm_case(
            "hopper_ws",
            Some(config),
            shape,
            sms,
            GemmDtype::F16,
            Values::SmallIntegers,
        );
        cases.push(Box::new(case));
    }
    let (mut total, mut caught, mut unexplained) = (0, 0, Vec::new());
    for case in &cases {
        let (n, left) = survivors(case.as_ref());
        total += n;
        caught += n - left.len();
        unexplained.extend(left.into_iter().filter(|s| !equivalent(s)));
    }
    eprintln!("{caught} of {total} mutants caught");
    assert!(
        unexplained.is_empty(),
        "mutants the simulator let pass: {unexplained:#?}"
    );
}
