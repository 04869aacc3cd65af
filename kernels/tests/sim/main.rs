//! rute's kernels in the CPU simulator (`dsl_core::sim`) through their cases
//! (`kernels::cases`): every registered kernel and every configuration of the GEMM programs'
//! sweeps against its CPU reference with no finding, over four seeds and the three schedules;
//! the same seed repeats byte for byte; planted bugs caught with their kind and Rust line.

mod blackwell;
mod forms;
mod hopper;
mod mutants;
mod planted;
mod registered;
mod sweep;

use dsl_core::sim::Schedule;
use kernels::cases::simulate::{Outcome, Simulated};
use kernels::cases::Case;

/// The seeds every case runs, each with its schedule: round-robin, random, PCT and random again.
pub const SEEDS: [(u64, Schedule); 4] = [
    (0, Schedule::RoundRobin),
    (1, Schedule::Random),
    (2, Schedule::Pct { depth: 3 }),
    (3, Schedule::Random),
];

/// Runs `case` over [`SEEDS`]: each outcome passes (no finding, the reference holds). Returns
/// the outcomes.
pub fn passes(case: &dyn Case) -> Vec<Outcome> {
    passes_on(case, &SEEDS)
}

/// Runs `case` over `seeds`: each outcome passes. Returns the outcomes.
pub fn passes_on(case: &dyn Case, seeds: &[(u64, Schedule)]) -> Vec<Outcome> {
    let sim = Simulated::new(case).unwrap_or_else(|e| panic!("{}: {e}", case.describe()));
    seeds
        .iter()
        .map(|&(seed, schedule)| {
            let o = sim
                .run(seed, schedule)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", case.describe()));
            assert!(o.passed(), "{o}");
            o
        })
        .collect()
}

/// [`passes`], then seed 1 again: the same report byte for byte.
pub fn passes_and_repeats(case: &dyn Case) {
    let outcomes = passes(case);
    let again = Simulated::new(case)
        .and_then(|s| s.run(SEEDS[1].0, SEEDS[1].1))
        .unwrap_or_else(|e| panic!("{}: {e}", case.describe()));
    assert_eq!(
        outcomes[1].to_string(),
        again.to_string(),
        "{}: the same seed gave another report",
        case.describe()
    );
}

/// GEMM program `program` at `config` (`None`: its default) on `(m, n, k)` planned for the
/// cases' device with `sms` SMs: small-integer inputs over the four seeds, bf16 and f16 in turn
/// (D bit-equal to the exact product), then random bf16 inputs over one seed (D within the
/// program's tolerance).
pub fn gemm_runs(program: &str, config: Option<&str>, shape: (usize, usize, usize), sms: u32) {
    use kernels::cases::Values;
    use kernels::gemm::GemmDtype;
    for (i, seed) in SEEDS.iter().enumerate() {
        let dtype = [GemmDtype::Bf16, GemmDtype::F16][i % 2];
        passes_on(
            &gemm_case(program, config, shape, sms, dtype, Values::SmallIntegers),
            std::slice::from_ref(seed),
        );
    }
    let random = gemm_case(program, config, shape, sms, GemmDtype::Bf16, Values::Random);
    passes_on(&random, &SEEDS[1..2]);
    eprintln!("{}", random.describe());
}

/// The case of GEMM program `program` at `config` on `(m, n, k)` of `dtype` (f32 sums) with
/// `values`, planned for the cases' device (with the program's target) with `sms` SMs.
pub fn gemm_case(
    program: &str,
    config: Option<&str>,
    shape: (usize, usize, usize),
    sms: u32,
    dtype: kernels::gemm::GemmDtype,
    values: kernels::cases::Values,
) -> kernels::cases::GemmCase {
    use kernels::cases::GemmCase;
    use kernels::gemm::Accum;
    GemmCase::program(program, config, (dtype, Accum::F32), shape, values)
        .and_then(|c| c.on_sms(sms))
        .unwrap_or_else(|e| panic!("{program} {config:?} {shape:?}: {e}"))
}
