//! `rute sim`: run a registered kernel, or a GEMM program's plan, in the CPU simulator
//! (`dsl_core::sim`, every check on) on seeded random inputs against its CPU reference.
//!
//! ```text
//! rute sim NAME [--seed S] [--seeds N] [--schedule round-robin|random|pct]
//! rute sim gemm --m M --n N --k K [--kernel NAME] [--config SPEC] [--dtype f16|bf16]
//!               [--acc f16|f32] [--values random|integers] [--sms N] [--seed S] [--seeds N]
//!               [--schedule ..]
//! rute sim --list
//! ```
//!
//! Each seed (the inputs' and the schedule's) prints one line, PASS or FAIL; a failing seed
//! prints each finding (its kind, op, block, warp and lane, the other party of a race, what
//! happened, the Rust `file:line:column` of the statement) and each wrong answer, each with
//! the seed, then the command that reproduces it.

use dsl_core::sim::Schedule;
use kernels::cases::gemm::device_for;
use kernels::cases::simulate::{schedule_name, Outcome, Simulated, SCHEDULES};
use kernels::cases::{Case, CaseError, GemmCase, Values};
use kernels::gemm::{Accum, GemmDtype, KernelChoice, Problem};
use kernels::registry;

use super::args::{integer, named, Usage};
use super::gemm::args::{config, dimension, kernel};
use super::streams::{report, Streams, FAILURE, SUCCESS};

/// The name that asks for a GEMM program's plan instead of a registered kernel.
const GEMM: &str = "gemm";

/// The end of `rute sim --help`.
const AFTER_HELP: &str = "\
Exit status: 0 every seed passed; 1 a finding, a wrong answer, or a run the simulator could
not finish (an op it does not model yet); 2 a usage error.";

/// run a registered kernel in the CPU simulator against its reference
///
/// Runs NAME's test case (`rute sim --list` names them; its inputs drawn from the seed, its
/// launch, its CPU reference) in the simulator with every check on: data races in shared and
/// global memory (between warps, lanes of a warp, blocks), barrier and mbarrier misuse,
/// deadlocks, uninitialized and out-of-bounds accesses. `rute sim gemm` runs
/// a GEMM program's plan for one problem instead, its launch as the runtime makes it. Each
/// seed seeds the inputs and the schedule.
#[derive(clap::Args, Debug)]
#[command(
    verbatim_doc_comment,
    override_usage = "\
rute sim NAME [--seed S] [--seeds N] [--schedule round-robin|random|pct]
       rute sim gemm --m M --n N --k K [--kernel NAME] [--config SPEC] [--dtype f16|bf16]
                     [--acc f16|f32] [--values random|integers] [--sms N] [--seed S]
                     [--seeds N] [--schedule ..]
       rute sim --list",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// list the registered kernels `rute sim` runs
    #[arg(long)]
    list: bool,
    /// the first seed (of the inputs and of the schedule)
    #[arg(long, value_name = "S", value_parser = integer(0..=u64::MAX), default_value_t = 0, allow_negative_numbers = true)]
    seed: u64,
    /// how many seeds, from --seed on
    #[arg(long, value_name = "N", value_parser = integer(1..=10_000), default_value_t = 1, allow_negative_numbers = true)]
    seeds: u64,
    /// how the simulator picks the next warp: round-robin (asynchronous copies complete as
    /// late as allowed), random, or pct (probabilistic concurrency testing, depth 3)
    #[arg(long, value_parser = named(&SCHEDULES, schedule_name), default_value = "round-robin", verbatim_doc_comment)]
    schedule: Schedule,
    /// with gemm: the rows of A and D
    #[arg(long, value_name = "M", value_parser = dimension(), allow_negative_numbers = true)]
    m: Option<u64>,
    /// with gemm: the rows of B, the columns of D
    #[arg(long, value_name = "N", value_parser = dimension(), allow_negative_numbers = true)]
    n: Option<u64>,
    /// with gemm: the columns of A and B
    #[arg(long, value_name = "K", value_parser = dimension(), allow_negative_numbers = true)]
    k: Option<u64>,
    /// with gemm: the GEMM program (as `rute gemm --kernel` takes it; default auto)
    #[arg(long, value_name = "NAME", value_parser = kernel())]
    kernel: Option<KernelChoice>,
    /// with gemm: a configuration in the program's spelling (`rute gemm --help`)
    #[arg(long, value_name = "SPEC")]
    config: Option<String>,
    /// with gemm: the element type of A, B and D (default f16)
    #[arg(long, value_parser = named(&[GemmDtype::F16, GemmDtype::Bf16], GemmDtype::name))]
    dtype: Option<GemmDtype>,
    /// with gemm: the type the products are summed in (default f32)
    #[arg(long, value_parser = named(&[Accum::F16, Accum::F32], Accum::name))]
    acc: Option<Accum>,
    /// with gemm: random inputs in [-1, 1) (D within the tolerance), or small integers (D
    /// exact, bit for bit; default random)
    #[arg(long, value_parser = named(&VALUES, values_name), verbatim_doc_comment)]
    values: Option<Values>,
    /// with gemm: the SMs of the device the plan is made for (default: the device's); a
    /// persistent grid has one block per SM, so a few (4 to 8) simulate in seconds what the
    /// device's whole grid would in minutes
    #[arg(long, value_name = "N", value_parser = integer(1..=1024), verbatim_doc_comment)]
    sms: Option<u64>,
    /// the registered kernel, or gemm
    #[arg(value_name = "NAME")]
    names: Vec<String>,
}

const VALUES: [Values; 2] = [Values::Random, Values::SmallIntegers];

fn values_name(v: Values) -> &'static str {
    match v {
        Values::Random => "random",
        Values::SmallIntegers => "integers",
    }
}

/// The GEMM problem of `rute sim gemm`, as given.
#[derive(Debug)]
struct GemmRequest {
    problem: Problem,
    values: Values,
    /// The device's SMs, where given.
    sms: Option<u32>,
}

/// What the arguments ask for.
#[derive(Debug)]
enum Request {
    List,
    Kernel(&'static registry::Registered),
    Gemm(GemmRequest),
}

impl Args {
    /// The request, or the sentence saying what is missing, unknown or extra.
    fn request(&self) -> Result<Request, Usage> {
        let name = match &self.names[..] {
            [] => None,
            [name] => Some(name.as_str()),
            [first, second, ..] => {
                return Err(Usage(format!(
                    "one kernel at a time: got `{first}` and `{second}`"
                )))
            }
        };
        let gemm_flags: Vec<&str> = [
            ("--m", self.m.is_some()),
            ("--n", self.n.is_some()),
            ("--k", self.k.is_some()),
            ("--kernel", self.kernel.is_some()),
            ("--config", self.config.is_some()),
            ("--dtype", self.dtype.is_some()),
            ("--acc", self.acc.is_some()),
            ("--values", self.values.is_some()),
            ("--sms", self.sms.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect();
        match name {
            None if self.list => Ok(Request::List),
            Some(_) if self.list => Err(Usage("--list takes no kernel name".into())),
            None => Err(Usage(format!("which kernel? {}", known()))),
            Some(GEMM) => self.gemm().map(Request::Gemm),
            Some(name) => {
                let k = registry::find(name)
                    .map_err(|_| Usage(format!("unknown kernel `{name}`; {}", known())))?;
                match gemm_flags.first() {
                    Some(flag) => Err(Usage(format!(
                        "{flag} goes with `rute sim gemm`, not with a registered kernel"
                    ))),
                    None => Ok(Request::Kernel(k)),
                }
            }
        }
    }

    fn gemm(&self) -> Result<GemmRequest, Usage> {
        let [Some(m), Some(n), Some(k)] = [self.m, self.n, self.k] else {
            let missing: Vec<&str> = ["--m", "--n", "--k"]
                .into_iter()
                .zip([self.m, self.n, self.k])
                .filter_map(|(flag, d)| d.is_none().then_some(flag))
                .collect();
            return Err(Usage(format!(
                "rute sim gemm needs --m, --n and --k: {} missing",
                missing.join(", ")
            )));
        };
        let kernel = self.kernel.unwrap_or(KernelChoice::Auto);
        let config = match &self.config {
            Some(spec) => Some(config(kernel, spec)?),
            None => None,
        };
        Ok(GemmRequest {
            // Each at most MAX_DIM by its parser.
            problem: Problem {
                m: m as usize,
                n: n as usize,
                k: k as usize,
                dtype: self.dtype.unwrap_or(GemmDtype::F16),
                acc: self.acc.unwrap_or(Accum::F32),
                kernel,
                config,
            },
            values: self.values.unwrap_or(Values::Random),
            // At most 1024 by its parser.
            sms: self.sms.map(|s| s as u32),
        })
    }

    /// The command that reruns `seed` of this request alone.
    fn rerun(&self, seed: u64) -> String {
        let mut words = vec!["rute sim".to_string()];
        words.extend(self.names.iter().cloned());
        for (flag, v) in [("--m", self.m), ("--n", self.n), ("--k", self.k)] {
            if let Some(v) = v {
                words.push(format!("{flag} {v}"));
            }
        }
        if let Some(k) = self.kernel {
            words.push(format!("--kernel {}", k.name()));
        }
        if let Some(c) = &self.config {
            words.push(format!("--config {c}"));
        }
        if let Some(d) = self.dtype {
            words.push(format!("--dtype {d}"));
        }
        if let Some(a) = self.acc {
            words.push(format!("--acc {a}"));
        }
        if let Some(v) = self.values {
            words.push(format!("--values {}", values_name(v)));
        }
        if let Some(s) = self.sms {
            words.push(format!("--sms {s}"));
        }
        words.push(format!("--seed {seed}"));
        words.push(format!("--schedule {}", schedule_name(self.schedule)));
        words.join(" ")
    }
}

/// `the registered kernels are ...; or gemm`.
fn known() -> String {
    let names: Vec<&str> = registry::KERNELS.iter().map(|k| k.name).collect();
    format!(
        "registered kernels: {}; or `gemm` with --m, --n and --k",
        names.join(", ")
    )
}

/// Runs `rute sim`; returns the exit status.
pub fn run(args: Args, io: &mut Streams) -> Result<i32, Usage> {
    let case: Box<dyn Case> = match args.request()? {
        Request::List => {
            for k in registry::KERNELS {
                let _ = writeln!(io.out, "{}", k.name);
            }
            let _ = writeln!(io.out, "{GEMM}");
            return Ok(SUCCESS);
        }
        Request::Kernel(k) => match (k.case)() {
            Ok(c) => c,
            Err(e) => return Ok(failed(io, &e)),
        },
        Request::Gemm(g) => {
            let mut device = device_for(g.problem.kernel);
            if let Some(sms) = g.sms {
                device.sms = sms;
            }
            match GemmCase::on(g.problem.clone(), g.values, device) {
                Ok(c) => Box::new(c),
                Err(e) => return Ok(failed(io, &e)),
            }
        }
    };
    Ok(simulate(
        case.as_ref(),
        (args.seed, args.seeds),
        args.schedule,
        &|seed| args.rerun(seed),
        io,
    ))
}

/// Runs `case` for `count` seeds from `first` with `schedule`, printing each seed's verdict
/// (and a failing one's findings, wrong answers and `rerun` command); the exit status.
fn simulate(
    case: &dyn Case,
    (first, count): (u64, u64),
    schedule: Schedule,
    rerun: &dyn Fn(u64) -> String,
    io: &mut Streams,
) -> i32 {
    let sim = match Simulated::new(case) {
        Ok(s) => s,
        Err(e) => return failed(io, &e),
    };
    let _ = writeln!(io.out, "{}", case.describe());
    let mut passed = 0u64;
    for seed in (0..count).map(|i| first.wrapping_add(i)) {
        match sim.run(seed, schedule) {
            Ok(o) if o.passed() => {
                passed += 1;
                let _ = writeln!(io.out, "{}", pass_line(&o));
            }
            Ok(o) => print_failure(io, &o, &rerun(seed)),
            Err(e) => {
                let _ = writeln!(
                    io.out,
                    "seed {seed}, schedule {}: did not finish",
                    schedule_name(schedule)
                );
                return failed(io, &e);
            }
        }
    }
    let _ = writeln!(io.out, "{passed} of {count} seeds passed");
    if passed == count {
        SUCCESS
    } else {
        FAILURE
    }
}

/// `seed S, schedule X: PASS (L launches: B blocks, W warp instructions)`.
fn pass_line(o: &Outcome) -> String {
    let (blocks, instructions) = o.reports.iter().fold((0, 0), |(b, w), (_, r)| {
        (b + r.stats.blocks, w + r.stats.warp_instructions)
    });
    format!(
        "seed {}, schedule {}: PASS ({}: {}, {instructions} warp instructions)",
        o.seed,
        schedule_name(o.schedule),
        plural(o.reports.len() as u64, "launch", "launches"),
        plural(blocks, "block", "blocks"),
    )
}

/// `1 block`, `3 blocks`.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A failing seed: the line, each finding and wrong answer with the seed, the rerun command.
fn print_failure(io: &mut Streams, o: &Outcome, rerun: &str) {
    let seed = o.seed;
    let _ = writeln!(
        io.out,
        "seed {seed}, schedule {}: FAIL",
        schedule_name(o.schedule)
    );
    for (i, (kernel, report)) in o.reports.iter().enumerate() {
        for f in &report.findings {
            let _ = writeln!(io.out, "  seed {seed}, launch {} (`{kernel}`): {f}", i + 1);
        }
        if report.dropped > 0 {
            let _ = writeln!(
                io.out,
                "  seed {seed}, launch {}: {} more findings not kept",
                i + 1,
                report.dropped
            );
        }
    }
    for m in &o.mismatches {
        let _ = writeln!(io.out, "  seed {seed}: {m}");
    }
    let _ = writeln!(io.out, "  reproduce: {rerun}");
}

/// Reports a case that could not run; the exit status.
fn failed(io: &mut Streams, e: &CaseError) -> i32 {
    report(io.err, &e.to_string());
    FAILURE
}

#[cfg(test)]
mod tests {
    use dsl_core::ir::Kernel;
    use dsl_core::kernel::*;
    use kernels::cases::{Buffer, CaseArg, Data, Elem, Expect, Run, Shape, Step};

    use super::*;
    use crate::cli::streams::USAGE_ERROR;
    use crate::cli::tests::rute;

    fn sim(a: &str) -> (i32, String, String) {
        let args: Vec<&str> = std::iter::once("sim").chain(a.split_whitespace()).collect();
        rute(&args, "")
    }

    #[test]
    fn a_registered_kernel_passes_each_seed() {
        let (code, out, err) = sim("vector_add --seed 5 --seeds 2 --schedule random");
        assert_eq!((code, err.as_str()), (0, ""), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "vector_add, 4 per thread, n = 2503");
        assert!(
            lines[1].starts_with("seed 5, schedule random: PASS (1 launch: 3 blocks"),
            "{out}"
        );
        assert!(
            lines[2].starts_with("seed 6, schedule random: PASS"),
            "{out}"
        );
        assert_eq!(lines[3], "2 of 2 seeds passed");
    }

    #[test]
    fn the_list_names_every_registered_kernel_and_gemm() {
        let (code, out, _) = sim("--list");
        assert_eq!(code, 0);
        assert!(out.starts_with("vector_add\ntranspose\n"), "{out}");
        assert!(out.ends_with("multistage_f16_tuned\ngemm\n"), "{out}");
    }

    #[test]
    fn usage_errors_are_sentences() {
        for (args, want) in [
            ("", "error: which kernel? registered kernels: vector_add, "),
            (
                "nope",
                "error: unknown kernel `nope`; registered kernels: vector_add",
            ),
            ("a b", "error: one kernel at a time: got `a` and `b`"),
            ("--list x", "error: --list takes no kernel name"),
            (
                "vector_add --m 4",
                "error: --m goes with `rute sim gemm`, not with a registered kernel",
            ),
            (
                "gemm --m 4 --k 2",
                "error: rute sim gemm needs --m, --n and --k: --n missing",
            ),
            (
                "vector_add --seeds 0",
                "error: --seeds takes an integer from 1 to 10000, not `0`",
            ),
            (
                "vector_add --schedule fair",
                "error: --schedule takes round-robin, random or pct, not `fair`",
            ),
            (
                "gemm --m 4 --n 4 --k 4 --kernel naive --config x",
                "error: --config: the naive kernel",
            ),
        ] {
            let (code, out, err) = sim(args);
            assert_eq!((code, out.as_str()), (USAGE_ERROR, ""), "{args}: {err}");
            assert!(err.starts_with(want), "{args}: {err}");
            assert!(err.contains("Usage: rute sim"), "{args}: {err}");
        }
    }

    #[test]
    fn a_gemm_problem_runs_its_programs_plan() {
        let (code, out, err) =
            sim("gemm --kernel naive --m 20 --n 18 --k 9 --dtype bf16 --values integers");
        assert_eq!((code, err.as_str()), (0, ""), "{out}");
        assert!(
            out.starts_with("naive bf16 (f32 acc) at 20x18x9, small-integer inputs\nseed 0, schedule round-robin: PASS"),
            "{out}"
        );
        // A problem the program refuses is an input that failed, said as rute gemm says it.
        let (code, _, err) = sim("gemm --kernel naive --acc f16 --m 20 --n 18 --k 9");
        assert_eq!(code, 1);
        assert!(err.contains("accumulates in f32 only"), "{err}");
    }

    /// Each thread stores its index to shared memory and reads its neighbour's a warp over,
    /// with no barrier between.
    #[dsl_macros::kernel]
    fn racy(k: &KernelBuilder, out: GlobalPtr<u32>) {
        let s = k.shared_array::<u32>("s", 64, 16);
        let t = thread_idx_x();
        s.store_at(t, t);
        out.store_at(t, s.load_at((t + 32u32) % 64u32));
    }

    #[derive(Debug)]
    struct Racy;

    impl Case for Racy {
        fn describe(&self) -> String {
            "racy".into()
        }
        fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
            Ok(vec![racy().unwrap()])
        }
        fn run(&self, _: u64) -> Result<Run, CaseError> {
            let want = (0..64).map(|t| (t + 32) % 64).collect();
            Ok(Run {
                buffers: vec![Buffer::output("out", Elem::U32, 64)],
                steps: vec![Step {
                    kernel: 0,
                    shape: Shape::linear(1, 64),
                    args: vec![CaseArg::Buffer(0)],
                }],
                expect: vec![Expect::bits(0, Data::U32(want))],
            })
        }
    }

    #[test]
    fn a_finding_fails_its_seed_and_says_how_to_reproduce_it() {
        let (code, out, err) = crate::cli::streams::capture(
            |io| {
                simulate(
                    &Racy,
                    (3, 2),
                    Schedule::Random,
                    &|seed| format!("rerun {seed}"),
                    io,
                )
            },
            "",
        );
        assert_eq!((code, err.as_str()), (1, ""), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[..2],
            ["racy", "seed 3, schedule random: FAIL"],
            "{out}"
        );
        let race = lines
            .iter()
            .find(|l| l.starts_with("  seed 3, launch 1 (`racy`): data race: `"))
            .unwrap_or_else(|| panic!("{out}"));
        // The op, where it ran, the other party and the Rust line of each.
        assert!(
            race.contains("cli/sim.rs:") && race.contains("(block (0,0,0), warp "),
            "{race}"
        );
        assert!(
            race.contains("; written by `st` at ") || race.contains("; read by `ld` at "),
            "{race}"
        );
        assert!(out.contains("  reproduce: rerun 3\n"), "{out}");
        assert!(out.contains("seed 4, schedule random: FAIL"), "{out}");
        assert!(out.ends_with("0 of 2 seeds passed\n"), "{out}");
    }

    #[test]
    fn a_kernel_with_tensor_maps_and_wgmma_runs() {
        let (code, out, err) = sim("wgmma_tile --seeds 1");
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.ends_with("1 of 1 seeds passed\n"), "{out}");
        let (code, out, err) = sim("tma_round_trip --seeds 1");
        assert_eq!(code, 0, "{out}{err}");
    }
}
