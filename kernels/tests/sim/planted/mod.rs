//! Planted bugs, each a small kernel written with `#[kernel]` on rute's real building blocks
//! (`dsl_core::pipeline`'s `PipelineState`, mbarrier arrays and named barriers, `cp.async` with
//! `ldmatrix` and `mma.sync`, TMA, `wgmma`), with a `#[host]` knob that plants the bug: the
//! simulator reports it with the right kind at the planted statement's Rust line (a marker
//! comment on that line names it), and the same kernel without the bug (its fixed twin) runs
//! clean against its reference, over the four seeds.
//!
//! | bug | kind | module |
//! |-----|------|--------|
//! | (a) producer and consumer `PipelineState`s both at phase 0; a consumer at phase 1 | deadlock; a read of a stage not yet written | [`sync`] |
//! | (g) a named barrier whose count differs from the threads that arrive | barrier count | [`sync`] |
//! | (i) an mbarrier initialized one arrival short | a read the barrier does not order | [`sync`] |
//! | (f) the multistage loop without the barrier between `cp.async.wait_group` and `ldmatrix` | race | [`memory`] |
//! | (h) a stream-K end waiting on a flag no block raises | deadlock | [`memory`] |
//! | (b) expect-tx bytes that do not count every block that loads | mbarrier misuse | [`async_proxy`] |
//! | (c) a TMA store of shared memory written without `fence.proxy.async` | async-proxy race | [`async_proxy`] |
//! | (d) an accumulator read before `wgmma.wait_group` | race | [`async_proxy`] |
//! | (e) a stage released to the producer before the `wgmma` reading it retires | race | [`async_proxy`] |
//! | (j) a block of a cluster that exits before its peer's last arrival on its mbarrier | access past a block's exit | [`cluster`] |
//! | (k) a stream-K start that raises its flag without the fence that releases its partial sums | global-memory race | [`global`] |
//! | (l) two blocks whose output tiles overlap | global-memory race | [`global`] |
//! | (m) lanes of one warp passing values through shared memory without `sync_warp` | race | [`sync`] |
//! | (n) two `cp.async` of one warp to the same bytes with no wait between | race | [`memory`] |
//! | (o) a staging tile handed back to its writer (a named barrier) before its reader reads it | race | [`sync`] |
//! | (p) an mbarrier another warp uses with no barrier after its init | mbarrier misuse (or the deadlock that follows) | [`sync`] |
//! | (q) a TMA load completing on an mbarrier whose init no `fence.mbarrier_init` (or `fence.proxy.async`) published | mbarrier misuse | [`async_proxy`] |

mod async_proxy;
mod cluster;
mod global;
mod memory;
mod sync;

use dsl_core::ir::Kernel;
use dsl_core::sim::{Finding, FindingKind, Options, Report};
use kernels::cases::simulate::{verify, Simulated};
use kernels::cases::{Buffer, Case, CaseArg, CaseError, Data, Elem, Expect, Run, Shape, Step};

/// A planted kernel and one run of it (buffers, launches, reference) as a case.
#[derive(Debug)]
pub struct Planted {
    pub kernel: Kernel,
    pub run: Run,
}

impl Case for Planted {
    fn describe(&self) -> String {
        format!("planted `{}`", self.kernel.name)
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        Ok(vec![self.kernel.clone()])
    }

    fn run(&self, _seed: u64) -> Result<Run, CaseError> {
        Ok(self.run.clone())
    }
}

impl Planted {
    /// `kernel` launched as one block of `threads` threads with two arguments, a `u32` input `x`
    /// and a `u32` output that must end as `want`.
    pub fn one_block_in_out(kernel: Kernel, threads: u32, x: Vec<u32>, want: Vec<u32>) -> Planted {
        Planted {
            kernel,
            run: Run {
                buffers: vec![
                    Buffer::input("x", Data::U32(x)),
                    Buffer::output("out", Elem::U32, want.len()),
                ],
                steps: vec![Step {
                    kernel: 0,
                    shape: Shape::linear(1, threads),
                    args: vec![CaseArg::Buffer(0), CaseArg::Buffer(1)],
                }],
                expect: vec![Expect::bits(1, Data::U32(want))],
            },
        }
    }

    /// `kernel` launched as one block of `threads` threads with one argument, a `u32` output
    /// that must end as `want`.
    pub fn one_block(kernel: Kernel, threads: u32, want: Vec<u32>) -> Planted {
        Planted {
            kernel,
            run: Run {
                buffers: vec![Buffer::output("out", Elem::U32, want.len())],
                steps: vec![Step {
                    kernel: 0,
                    shape: Shape::linear(1, threads),
                    args: vec![CaseArg::Buffer(0)],
                }],
                expect: vec![Expect::bits(0, Data::U32(want))],
            },
        }
    }
}

/// The line of this directory's file `file` (its source, `include_str!`) that ends with the
/// comment `// planted: TAG`.
pub fn marked(source: &str, tag: &str) -> u32 {
    let marker = format!("// planted: {tag}");
    let lines: Vec<u32> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&marker))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(lines.len(), 1, "one line marked `{marker}`");
    lines[0]
}

/// The reports of `planted`'s run over the four seeds; the run's outputs checked against its
/// reference where every launch ran clean.
pub fn reports(planted: &Planted) -> Vec<Report> {
    let sim = Simulated::new(planted).unwrap_or_else(|e| panic!("{e}"));
    super::SEEDS
        .iter()
        .map(|&(seed, schedule)| {
            let done = sim
                .execute(&planted.run, &Options::seeded(seed, schedule))
                .unwrap_or_else(|e| panic!("{}: {e}", planted.describe()));
            let mut reports: Vec<Report> = done.reports.into_iter().map(|(_, r)| r).collect();
            let report = reports.remove(0);
            if report.is_clean() {
                let wrong = verify(&planted.run, &done.outputs);
                assert!(wrong.is_empty(), "{}: {wrong:?}", planted.describe());
            }
            report
        })
        .collect()
}

/// The fixed twin: every seed clean, every output as the reference says.
pub fn clean(planted: &Planted) {
    for r in reports(planted) {
        assert!(r.is_clean(), "{}: {r}", planted.describe());
    }
}

/// Whether `f` is at one of `lines` of `file`: its own location or, for a deadlock, a waiting
/// warp's line in its details.
fn at(f: &Finding, file: &str, lines: &[u32]) -> bool {
    let own = f
        .location
        .is_some_and(|l| l.file.ends_with(file) && lines.contains(&l.line));
    let waiting = f.kind == FindingKind::Deadlock
        && lines
            .iter()
            .any(|l| f.details.contains(&format!("{file}:{l}:")));
    own || waiting
}

/// On every seed, a finding of one of `kinds` at one of `lines` of `file`; returns the first
/// seed's.
pub fn caught(planted: &Planted, kinds: &[FindingKind], file: &str, lines: &[u32]) -> Finding {
    let mut first = None;
    for r in reports(planted) {
        let f = r
            .findings
            .iter()
            .find(|f| kinds.contains(&f.kind) && at(f, file, lines))
            .unwrap_or_else(|| {
                panic!(
                    "{}: no {kinds:?} at {file}:{lines:?}\n{r}",
                    planted.describe()
                )
            });
        first.get_or_insert_with(|| f.clone());
    }
    first.expect("four seeds")
}
