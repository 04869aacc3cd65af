//! Kernels written with the builder API, run in the simulator: values against a host
//! reference ([`families`]), and each check caught in a planted bug while the fixed twin stays
//! clean ([`checks`]).

mod checks;
mod families;
mod mbarrier;
mod product;
mod tcgen05;
mod tma;
mod wgmma;

use crate::ir::Kernel;
use crate::sim::{Arg, Finding, Launch, Memory, Options, Report, Schedule, SimError, Simulator};

/// Records the current Rust line as the location of what follows, and returns it.
macro_rules! here {
    () => {{
        let line = line!();
        crate::kernel::set_location(file!(), line, column!());
        line
    }};
}
pub(crate) use here;

fn sim(k: &Kernel) -> Simulator {
    Simulator::new(k.check().expect("a valid kernel"))
}

/// Runs `k` on `launch` with `args` over `mem`.
fn run_with(
    k: &Kernel,
    launch: Launch,
    args: &[Arg],
    mem: &mut Memory,
    opts: Options,
) -> Result<Report, SimError> {
    sim(k).run(&launch, args, mem, &opts)
}

/// Runs `k` on `launch` with one argument, a fresh uninitialized output buffer of `bytes`;
/// returns the report and the output's words.
fn run_out(k: &Kernel, launch: Launch, bytes: usize, opts: Options) -> (Report, Vec<u32>) {
    let mut mem = Memory::new();
    let out = mem.alloc("out", bytes);
    let r =
        run_with(k, launch, &[Arg::Buffer(out)], &mut mem, opts).unwrap_or_else(|e| panic!("{e}"));
    (r, mem.read::<u32>(out))
}

/// Loads the word at `s` with `order` until it is not zero.
fn spin_while_zero(s: crate::kernel::SharedPtr<u32>, order: crate::ir::MemOrder) {
    use crate::ir::op::Memory as MemOp;
    use crate::ir::{StateSpace, Type};
    use crate::kernel::{emit, while_, Var};
    let flag = Var::<u32>::uninit();
    while_(
        || {
            emit(MemOp::Ld {
                space: StateSpace::Shared,
                ty: Type::U32,
                dsts: vec![flag.to_reg()],
                addr: s.address(),
                cache: None,
                nc: false,
                order: Some(order),
            });
            flag.eq_(0u32)
        },
        || {},
    );
}

fn opts(seed: u64, schedule: Schedule) -> Options {
    Options::seeded(seed, schedule)
}

const SCHEDULES: [Schedule; 3] = [
    Schedule::RoundRobin,
    Schedule::Random,
    Schedule::Pct { depth: 3 },
];

fn line(f: &Finding) -> u32 {
    f.location.map_or(0, |l| l.line)
}
