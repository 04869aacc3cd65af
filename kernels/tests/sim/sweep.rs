//! Every configuration of every GEMM program's tuning sweep (`kernels::cases::gemm::sweep`),
//! and each program's default where it has no sweep, on a shape with residues in M, N and K
//! and a ring lapped (`shapes_for`), over the four seeds: random inputs on the first three,
//! small-integer inputs on the fourth (D then equals the exact product bit for bit).

use std::time::Instant;

use kernels::cases::gemm::sweep;
use kernels::cases::{Case, GemmCase, Values};
use kernels::gemm::{Accum, GemmDtype, PROGRAMS};
use kernels::multistage::MultistageConfig;

/// The element and accumulator types the configurations rotate through.
const TYPES: [(GemmDtype, Accum); 3] = [
    (GemmDtype::F16, Accum::F32),
    (GemmDtype::Bf16, Accum::F32),
    (GemmDtype::F16, Accum::F16),
];

/// The case of `program` with `config`, at the `i`-th types of the rotation or the next the
/// program takes.
fn case(program: &str, config: Option<&str>, i: usize, values: Values) -> GemmCase {
    (0..TYPES.len())
        .find_map(|j| GemmCase::sized(program, config, TYPES[(i + j) % TYPES.len()], values).ok())
        .unwrap_or_else(|| panic!("{program} {config:?} plans for none of the types"))
}

#[test]
fn every_sweep_configuration_matches_the_product_with_no_finding() {
    for program in PROGRAMS.iter() {
        let name = program.name();
        let configs: Vec<Option<&str>> = match sweep(name) {
            [] => vec![None],
            s => s.iter().copied().map(Some).collect(),
        };
        for (i, config) in configs.into_iter().enumerate() {
            let t = Instant::now();
            let random = case(name, config, i, Values::Random);
            super::passes_on(&random, &super::SEEDS[..3]);
            let exact = case(name, config, i, Values::SmallIntegers);
            super::passes_on(&exact, &super::SEEDS[3..]);
            eprintln!("{} in {:.1?}", random.describe(), t.elapsed());
        }
    }
}

/// The configurations the multistage program takes for K not a multiple of 8: narrower
/// `cp.async` (8 and 4 bytes) and element-wise copies.
#[test]
fn multistage_with_narrow_copies_matches_the_product() {
    for (i, (m, n, k)) in [(145, 137, 100), (150, 131, 98), (77, 70, 99)]
        .into_iter()
        .enumerate()
    {
        let t = Instant::now();
        let c = GemmCase::program("multistage", None, TYPES[i], (m, n, k), Values::Random)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(c.describe().contains("-bit copies"), "{}", c.describe());
        super::passes(&c);
        eprintln!("{} in {:.1?}", c.describe(), t.elapsed());
    }
}

/// The multistage main loop reads the next k-tile's first k-block ahead; after the last
/// k-tile there is none, and where K spans exactly `stages - 1` k-tiles the stage after it is
/// one nothing wrote (the prologue fills `stages - 1`, no tile is left to load into the last).
/// The kernel peels the last k-tile so that no `ldmatrix` reads past it; the simulator reports
/// any read of shared memory nothing wrote. Every sweep configuration at K of one k-tile, of
/// `stages - 1` k-tiles, and of `stages - 1` with the last partial (a residue of 8).
#[test]
fn multistage_with_k_spanning_one_stage_less_than_the_ring_reads_only_what_it_wrote() {
    for (i, config) in sweep("multistage").iter().enumerate() {
        let t = Instant::now();
        let probe = case("multistage", Some(config), i, Values::Random);
        let cfg = *probe
            .plan()
            .downcast_ref::<MultistageConfig>()
            .expect("a multistage plan");
        let (p, tk, stages) = (probe.problem(), cfg.tile_k as usize, cfg.stages as usize);
        let (m, n) = (cfg.tile_m as usize + 17, cfg.tile_n as usize + 9);
        let mut ks = vec![tk, (stages - 2) * tk + 8, (stages - 1) * tk];
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            let c = GemmCase::program(
                "multistage",
                Some(config),
                (p.dtype, p.acc),
                (m, n, k),
                Values::Random,
            )
            .unwrap_or_else(|e| panic!("{config} at K = {k}: {e}"));
            super::passes_on(&c, &super::SEEDS[..1]);
        }
        eprintln!("{config} in {:.1?}", t.elapsed());
    }
}
