//! The suites' shapes by name (the lists themselves: [`kernels::gemm::suites`]), the (dtype,
//! sum) pairs a suite runs, and the check of one case without a GPU.

use dsl_core::ir::Target;
pub use kernels::gemm::suites::*;
use kernels::gemm::{check, Accum, BufferLens, Device, GemmDtype, Problem};

use super::request::{Options, Suite};

/// The shapes `suite` runs, in order.
pub fn shapes(suite: Suite) -> Vec<(usize, usize, usize)> {
    match suite {
        Suite::Correctness => correctness_shapes(),
        Suite::Bench => BENCH_SHAPES.to_vec(),
        Suite::Llm => llm_shapes(),
        Suite::Midm => midm_shapes(),
    }
}

/// What a suite's shape is, where the suite names it: the projection of a `midm` shape.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub fn shape_label(suite: Suite, (m, n, k): (usize, usize, usize)) -> Option<String> {
    match suite {
        Suite::Midm => MIDM_GROUPS
            .iter()
            .flat_map(|g| g.iter())
            .find(|p| (p.n, p.k) == (n, k))
            .map(|p| format!("{} {}, {m} tokens", p.model, p.what)),
        _ => None,
    }
}

/// The (dtype, acc) pairs a suite runs: the ones given, else every supported pair.
pub fn pairs(opts: &Options) -> Vec<(GemmDtype, Accum)> {
    let dtypes = opts
        .dtype
        .map_or(vec![GemmDtype::F16, GemmDtype::Bf16], |d| vec![d]);
    let accs = opts.acc.map_or(vec![Accum::F32, Accum::F16], |a| vec![a]);
    let explicit = opts.dtype.is_some() && opts.acc.is_some();
    dtypes
        .iter()
        .flat_map(|&d| accs.iter().map(move |&a| (d, a)))
        // An unsupported pair nobody asked for is no case; one asked for reports its error.
        .filter(|&(d, a)| explicit || !(d == GemmDtype::Bf16 && a == Accum::F16))
        .collect()
}

/// The problem of one case.
pub fn problem(
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    acc: Accum,
    opts: &Options,
) -> Problem {
    Problem {
        m: shape.0,
        n: shape.1,
        k: shape.2,
        dtype,
        acc,
        kernel: opts.kernel,
        config: opts.config.clone(),
    }
}

/// Checks `p` without a GPU (shapes, types, the kernel's limits) for the first of `targets` it
/// passes on: before a GPU is found, every target ([`Target::ALL`]), for that GPU its own. The
/// error is the check's, or where the targets refuse it differently, each target's.
pub fn precheck(p: &Problem, targets: &[Target]) -> Result<(), String> {
    let lens = BufferLens::for_shape(p.m, p.n, p.k).ok_or_else(|| {
        format!(
            "{} x {} x {} has operands too large to count",
            p.m, p.n, p.k
        )
    })?;
    let mut refusals: Vec<(Target, String)> = Vec::new();
    for &t in targets {
        match check(p, lens, &Device::unknown(t)) {
            Ok(_) => return Ok(()),
            Err(e) => refusals.push((t, e.to_string())),
        }
    }
    let first = refusals.first().map(|(_, e)| e.clone()).unwrap_or_default();
    if refusals.iter().all(|(_, e)| *e == first) {
        return Err(first);
    }
    let each: Vec<String> = refusals
        .iter()
        .map(|(t, e)| format!("on {t}: {e}"))
        .collect();
    Err(each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_shapes_cover_the_issue() {
        let squares = square_shapes();
        assert_eq!(
            squares.iter().map(|s| s.0).collect::<Vec<_>>(),
            [128, 256, 512, 1024, 2048, 4096, 8192]
        );
        assert!(squares.iter().all(|&(m, n, k)| m == n && n == k));
        assert!(ODD_SHAPES.len() >= 30);
        // Every odd shape has M or N off the 128 grid, and none repeats.
        for (i, &(m, n, k)) in ODD_SHAPES.iter().enumerate() {
            assert!(m % 128 != 0 || n % 128 != 0, "{m} x {n} x {k}");
            assert!(
                !ODD_SHAPES[..i].contains(&(m, n, k)),
                "{m} x {n} x {k} twice"
            );
        }
        let k_below_tile = ODD_SHAPES.iter().filter(|s| s.2 < 32).count();
        let k_aligned = ODD_SHAPES.iter().filter(|s| s.2 % 8 == 0).count();
        assert!(
            k_below_tile >= 5 && k_aligned >= 30,
            "{k_below_tile} {k_aligned}"
        );
        assert!(ODD_SHAPES.iter().any(|s| s.2 % 8 != 0));
        // What the hopper_ws program runs (rows of 16 bytes): at least 30 odd shapes, K below
        // one 64-wide k-tile, tiny M; none twice in the suite.
        let all = correctness_shapes();
        for (i, s) in all.iter().enumerate() {
            assert!(!all[..i].contains(s), "{s:?} twice");
        }
        let tma: Vec<_> = all
            .iter()
            .filter(|&&(m, n, k)| n % 8 == 0 && k % 8 == 0 && (m % 128 != 0 || n % 128 != 0))
            .collect();
        assert!(tma.len() >= 30, "{}", tma.len());
        assert!(tma.iter().filter(|s| s.2 < 64).count() >= 8);
        assert!(tma.iter().filter(|s| s.0 <= 16).count() >= 6);
        assert!(tma
            .iter()
            .any(|s| s.2 % 64 != 0 && s.1 % 128 != 0 && s.0 % 128 != 0));
        assert_eq!(
            BENCH_SHAPES,
            [
                (4096, 4096, 4096),
                (6144, 6144, 6144),
                (8192, 8192, 8192),
                (2048, 2048, 2048),
                (81920, 256, 256)
            ]
        );
    }

    #[test]
    fn suite_pairs_follow_the_options() {
        assert_eq!(
            pairs(&Options::default()),
            [
                (GemmDtype::F16, Accum::F32),
                (GemmDtype::F16, Accum::F16),
                (GemmDtype::Bf16, Accum::F32)
            ]
        );
        let bf16_f16 = Options {
            dtype: Some(GemmDtype::Bf16),
            acc: Some(Accum::F16),
            ..Options::default()
        };
        // Asked for explicitly: kept, so that its refusal is reported.
        assert_eq!(pairs(&bf16_f16), [(GemmDtype::Bf16, Accum::F16)]);
    }

    /// The mid-size suite: every M meets three projections of three families, including a K of
    /// 12800 or more and an N of 50000 or more; each projection meets a few-token M, a middle
    /// one and a larger one; every shape is one TMA can address, none twice; six or more
    /// families other than Llama-3, whose shapes are not the llm suite's.
    #[test]
    fn the_midm_suite_meets_every_regime() {
        let shapes = midm_shapes();
        assert_eq!(shapes.len(), MIDM_M.len() * MIDM_GROUPS.len());
        for (i, s) in shapes.iter().enumerate() {
            assert!(!shapes[..i].contains(s), "{s:?} twice");
            assert!(s.1 % 8 == 0 && s.2 % 8 == 0, "{s:?}");
            assert!(!llm_shapes().contains(s), "{s:?}");
        }
        let all: Vec<&Projection> = MIDM_GROUPS.iter().flat_map(|g| g.iter()).collect();
        let of = |n: usize, k: usize| all.iter().find(|p| (p.n, p.k) == (n, k)).copied();
        for &m in &MIDM_M {
            let met: Vec<&Projection> = shapes
                .iter()
                .filter(|s| s.0 == m)
                .map(|s| of(s.1, s.2).expect("every shape is a projection"))
                .collect();
            let mut families: Vec<&str> = met.iter().map(|p| p.family).collect();
            families.sort();
            families.dedup();
            assert_eq!(families.len(), 3, "M = {m}: {met:?}");
            assert!(met.iter().any(|p| p.k >= 12800), "M = {m}");
            assert!(met.iter().any(|p| p.n >= 50000), "M = {m}");
        }
        for p in &all {
            let ms: Vec<usize> = shapes
                .iter()
                .filter(|s| (s.1, s.2) == (p.n, p.k))
                .map(|s| s.0)
                .collect();
            assert_eq!(ms.len(), 3, "{p:?}");
            assert!(
                ms[0] <= 160 && (176..=384).contains(&ms[1]) && ms[2] >= 448,
                "{p:?}"
            );
        }
        let mut families: Vec<&str> = all.iter().map(|p| p.family).collect();
        families.sort();
        families.dedup();
        assert!(
            families.len() >= 6 && !families.contains(&"Llama"),
            "{families:?}"
        );
        assert!(all.iter().filter(|p| p.k >= 16384).count() >= 6);
        assert_eq!(
            shape_label(Suite::Midm, (144, 7168, 20480)).as_deref(),
            Some("Yi-34B MLP down, 144 tokens")
        );
        assert_eq!(shape_label(Suite::Llm, (16, 6144, 4096)), None);
    }

    /// `--suite`'s help counts the shapes these lists hold.
    #[test]
    fn the_help_counts_the_shapes() {
        use clap::ValueEnum;
        let help = |s: Suite| {
            let v = s.to_possible_value().expect("listed");
            v.get_help().map(|h| h.to_string()).unwrap_or_default()
        };
        let correctness = help(Suite::Correctness);
        let counts = format!(
            "{} odd shapes and {} with rows of 16",
            ODD_SHAPES.len(),
            TMA_ODD_SHAPES.len()
        );
        assert!(correctness.contains(&counts), "{correctness}");
        let llm = help(Suite::Llm);
        assert!(
            llm.contains(&format!("{} LLM projections", llm_shapes().len())),
            "{llm}"
        );
        let midm = help(Suite::Midm);
        assert!(
            midm.contains(&format!("{} mid-size products", midm_shapes().len())),
            "{midm}"
        );
        assert_eq!(
            shapes(Suite::Correctness).len(),
            square_shapes().len() + ODD_SHAPES.len() + TMA_ODD_SHAPES.len()
        );
    }
}
