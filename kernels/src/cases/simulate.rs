//! A case in the simulator (`dsl_core::sim`): its kernels compiled once ([`Simulated::new`]),
//! then run per seed and schedule with every check on ([`Simulated::run`]); the outcome is
//! the simulator's report of each launch and the outputs' mismatches against the reference.

use std::fmt;

use dsl_core::ir::Location;
use dsl_core::sim::{
    Arg, BufferId, Finding, Launch, Memory, Options, Report, Schedule, Simulator, TensorMapArg,
};

use super::run::{CaseArg, Contents, Data, Run};
use super::{Case, CaseError, Mismatch, SMS};

/// A case's kernels compiled for the simulator.
#[derive(Debug)]
pub struct Simulated<'c> {
    case: &'c dyn Case,
    sims: Vec<Simulator>,
    sms: u32,
}

/// What one run left: each launch's report (up to the first that found something) and each
/// buffer's contents afterwards (`None` for an input).
#[derive(Debug, Clone)]
pub struct Executed {
    /// Each launch's kernel name and report, in order; a launch after one with findings does
    /// not run.
    pub reports: Vec<(String, Report)>,
    /// Each buffer's contents after the last launch that ran (`None` for inputs).
    pub outputs: Vec<Option<Data>>,
    /// Whether every launch ran.
    pub complete: bool,
}

/// The outcome of one seed: the reports and the wrong answers.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The case, described.
    pub case: String,
    /// The seed of the inputs and of the schedule.
    pub seed: u64,
    /// The schedule.
    pub schedule: Schedule,
    /// Each launch's kernel and report.
    pub reports: Vec<(String, Report)>,
    /// The outputs that do not hold what the reference says (none checked when a launch found
    /// something and the ones after it did not run).
    pub mismatches: Vec<Mismatch>,
}

impl Outcome {
    /// No finding in any launch and every output as the reference says.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.reports.iter().all(|(_, r)| r.is_clean())
    }

    /// Every finding of every launch, in order.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.reports.iter().flat_map(|(_, r)| r.findings.iter())
    }
}

/// The schedules `rute sim --schedule` takes, by [`schedule_name`]: PCT with depth 3.
pub const SCHEDULES: [Schedule; 3] = [
    Schedule::RoundRobin,
    Schedule::Random,
    Schedule::Pct { depth: 3 },
];

/// A schedule's name on the command line: `round-robin`, `random` or `pct` (of any depth).
pub fn schedule_name(s: Schedule) -> &'static str {
    match s {
        Schedule::RoundRobin => "round-robin",
        Schedule::Random => "random",
        Schedule::Pct { .. } => "pct",
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let depth = match self.schedule {
            Schedule::Pct { depth } if depth != 3 => format!(" (depth {depth})"),
            _ => String::new(),
        };
        writeln!(
            f,
            "{}, seed {}, schedule {}{depth}: {}",
            self.case,
            self.seed,
            schedule_name(self.schedule),
            if self.passed() { "PASS" } else { "FAIL" }
        )?;
        for (i, (kernel, report)) in self.reports.iter().enumerate() {
            write!(f, "launch {} (`{kernel}`): {report}", i + 1)?;
        }
        for m in &self.mismatches {
            writeln!(f, "{m}")?;
        }
        Ok(())
    }
}

impl<'c> Simulated<'c> {
    /// `case`'s kernels, checked and compiled for the simulator, run with [`SMS`] SMs.
    pub fn new(case: &'c dyn Case) -> Result<Simulated<'c>, CaseError> {
        let sims = case
            .kernels()?
            .iter()
            .map(|k| {
                Simulator::from_kernel(k).map_err(|source| CaseError::Ir {
                    kernel: k.name.clone(),
                    source,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Simulated {
            case,
            sims,
            sms: SMS,
        })
    }

    /// The same, run with `sms` resident blocks.
    pub fn with_sms(self, sms: u32) -> Simulated<'c> {
        Simulated { sms, ..self }
    }

    /// The ops of the case's kernels that the simulator does not model, with their locations.
    pub fn unsupported(&self) -> Vec<(&'static str, Option<Location>)> {
        self.sims.iter().flat_map(|s| s.unsupported()).collect()
    }

    /// The case's run for `seed`, simulated with `schedule` seeded with `seed`, and its outputs
    /// checked.
    pub fn run(&self, seed: u64, schedule: Schedule) -> Result<Outcome, CaseError> {
        let run = self.case.run(seed)?;
        let done = self.execute(&run, &Options::seeded(seed, schedule))?;
        let mismatches = if done.complete {
            verify(&run, &done.outputs)
        } else {
            Vec::new()
        };
        Ok(Outcome {
            case: self.case.describe(),
            seed,
            schedule,
            reports: done.reports,
            mismatches,
        })
    }

    /// The run of this case is inconsistent for `reason` (a bug in the case).
    fn bad(&self, reason: String) -> CaseError {
        CaseError::BadRun {
            case: self.case.describe(),
            reason,
        }
    }

    /// Runs `run`'s launches in order over one memory with `opts`; stops after a launch whose
    /// report has findings.
    pub fn execute(&self, run: &Run, opts: &Options) -> Result<Executed, CaseError> {
        let mut mem = Memory::new();
        let ids: Vec<BufferId> = run
            .buffers
            .iter()
            .map(|b| match &b.contents {
                Contents::Input(d) => {
                    let id = mem.upload(&b.name, &d.to_bytes());
                    mem.set_read_only(id, true);
                    id
                }
                Contents::Output { elem, len } => mem.alloc(&b.name, elem.bytes() * len),
                Contents::Scratch { elem, len } => mem.alloc_zeroed(&b.name, elem.bytes() * len),
            })
            .collect();
        run.check_borrows().map_err(|reason| self.bad(reason))?;
        let mut reports = Vec::with_capacity(run.steps.len());
        let mut complete = true;
        for (i, step) in run.steps.iter().enumerate() {
            let sim = self.sims.get(step.kernel).ok_or_else(|| {
                self.bad(format!(
                    "launch {} names kernel {} of {}",
                    i + 1,
                    step.kernel,
                    self.sims.len()
                ))
            })?;
            let args = step
                .args
                .iter()
                .map(|a| self.arg(&ids, a, i + 1))
                .collect::<Result<Vec<Arg>, CaseError>>()?;
            let s = step.shape;
            let launch = Launch::new(s.grid, s.block)
                .with_cluster(s.cluster.unwrap_or([1, 1, 1]))
                .with_dynamic_smem(s.dynamic_smem)
                .with_sms(self.sms);
            let report =
                sim.run(&launch, &args, &mut mem, opts)
                    .map_err(|source| CaseError::Sim {
                        step: i + 1,
                        kernel: sim.name().to_string(),
                        source,
                    })?;
            let clean = report.is_clean();
            reports.push((sim.name().to_string(), report));
            if !clean {
                complete = i + 1 == run.steps.len();
                break;
            }
        }
        let outputs = run
            .buffers
            .iter()
            .zip(&ids)
            .map(|(b, &id)| {
                b.contents
                    .writable()
                    .then(|| Data::from_bytes(b.contents.elem(), mem.bytes(id)))
            })
            .collect();
        Ok(Executed {
            reports,
            outputs,
            complete,
        })
    }

    fn arg(&self, ids: &[BufferId], arg: &CaseArg, step: usize) -> Result<Arg, CaseError> {
        let buffer = |i: usize| {
            ids.get(i)
                .copied()
                .ok_or_else(|| self.bad(format!("launch {step} names buffer {i} of {}", ids.len())))
        };
        Ok(match arg {
            CaseArg::Buffer(i) => Arg::Buffer(buffer(*i)?),
            CaseArg::U32(v) => Arg::u32(*v),
            CaseArg::U64(v) => Arg::u64(*v),
            CaseArg::F32(v) => Arg::f32(*v),
            CaseArg::TensorMap {
                buffer: i,
                descriptor,
            } => Arg::Tma(Box::new(TensorMapArg::new(buffer(*i)?, descriptor.clone()))),
        })
    }
}

/// Each expectation of `run` against the outputs (`outputs[i]` buffer `i`'s contents).
pub fn verify(run: &Run, outputs: &[Option<Data>]) -> Vec<Mismatch> {
    run.expect
        .iter()
        .filter_map(|e| {
            let name = run.buffers.get(e.buffer).map_or("?", |b| b.name.as_str());
            let got = match (run.input(e.buffer), outputs.get(e.buffer)) {
                (_, Some(Some(d))) => d,
                (Some(d), _) => d,
                _ => {
                    return Some(Mismatch {
                        buffer: name.into(),
                        detail: "the run has no such buffer".into(),
                    })
                }
            };
            e.verify(name, got).err()
        })
        .collect()
}
