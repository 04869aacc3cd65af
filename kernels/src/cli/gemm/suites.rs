//! The suites' shape lists (`--suite correctness`, `bench`, `llm`), the (dtype, sum) pairs a
//! suite runs, and the check of one case without a GPU.

use dsl_core::ir::Target;
use kernels::gemm::{check, Accum, BufferLens, Device, GemmDtype, Problem};

use super::request::{Options, Suite};

/// The shapes `suite` runs, in order.
pub fn shapes(suite: Suite) -> Vec<(usize, usize, usize)> {
    match suite {
        Suite::Correctness => correctness_shapes(),
        Suite::Bench => BENCH_SHAPES.to_vec(),
        Suite::Llm => llm_shapes(),
    }
}

#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
/// Square sizes of the correctness suite: 128 to 8192, powers of two.
pub fn square_shapes() -> Vec<(usize, usize, usize)> {
    (7..=13).map(|p| (1usize << p, 1 << p, 1 << p)).collect()
}

/// Odd shapes of the correctness suite: M and N not multiples of 128 (most not of 16 or 8),
/// K below the 32-deep k-tile, K multiples of 8 for kernels that need 16-byte rows, and a few
/// K that are not (a kernel that cannot take them refuses or falls back).
pub const ODD_SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 8),
    (1, 1, 1),
    (7, 9, 8),
    (17, 33, 16),
    (31, 63, 24),
    (100, 100, 40),
    (127, 129, 32),
    (129, 127, 64),
    (255, 257, 136),
    (200, 72, 8),
    (72, 200, 16),
    (333, 111, 96),
    (513, 385, 200),
    (1000, 8, 64),
    (8, 1000, 64),
    (1023, 1025, 1016),
    (1500, 700, 512),
    (640, 1800, 24),
    (2047, 129, 2056),
    (129, 2047, 2040),
    (3000, 3000, 1000),
    (4095, 4097, 72),
    (4097, 255, 4104),
    (81919, 257, 256),
    (257, 8191, 128),
    (5000, 96, 3000),
    (96, 5000, 3000),
    (1, 4096, 4096),
    (4096, 1, 4096),
    (6000, 6000, 8),
    (4000, 3, 264),
    (11, 6000, 520),
    (33, 65, 13),
    (100, 37, 1),
    (513, 129, 77),
    (1, 4095, 255),
    (2000, 3000, 1001),
    (777, 333, 4099),
];

/// The correctness suite's shapes: the squares, [`ODD_SHAPES`], then [`TMA_ODD_SHAPES`].
pub fn correctness_shapes() -> Vec<(usize, usize, usize)> {
    square_shapes()
        .into_iter()
        .chain(ODD_SHAPES.iter().copied())
        .chain(TMA_ODD_SHAPES.iter().copied())
        .collect()
}

/// The correctness suite's odd shapes that TMA can address (N and K multiples of 8, so rows of
/// 16 bytes; what the `hopper_ws` program takes): residues of every tile in M, N and K, tiny M,
/// K below one 64-wide k-tile, decode shapes that split K, and an M past 80k.
pub const TMA_ODD_SHAPES: &[(usize, usize, usize)] = &[
    (1, 8, 8),
    (3, 16, 64),
    (17, 24, 40),
    (63, 136, 56),
    (65, 264, 72),
    (127, 392, 128),
    (129, 520, 200),
    (255, 1000, 8),
    (257, 1032, 1000),
    (333, 776, 4104),
    (511, 2056, 520),
    (1023, 1016, 1032),
    (1500, 704, 2040),
    (2047, 4104, 136),
    (4097, 264, 8),
    (8191, 128, 512),
    (16, 4096, 4096),
    (64, 6144, 4096),
    (128, 8192, 2048),
    (100, 57344, 64),
    (3, 28672, 8192),
    (81921, 256, 256),
    (129, 129 * 8, 129 * 8),
    (300, 2048, 14336),
];

/// Shapes of the benchmark suite, in the issue's order.
pub const BENCH_SHAPES: &[(usize, usize, usize)] = &[
    (4096, 4096, 4096),
    (6144, 6144, 6144),
    (8192, 8192, 8192),
    (2048, 2048, 2048),
    (81920, 256, 256),
];

/// The `M` of the LLM suite: a decode batch of 16 to a prefill of 16k tokens.
pub const LLM_M: [usize; 7] = [16, 64, 128, 512, 2048, 8192, 16384];

/// The `(N, K)` of the LLM suite: Llama-3 8B's fused QKV (6144 x 4096), gate+up (28672 x 4096)
/// and down (4096 x 14336) projections, and 70B's fused QKV (10240 x 8192).
pub const LLM_NK: [(usize, usize); 4] = [(6144, 4096), (28672, 4096), (4096, 14336), (10240, 8192)];

/// The LLM suite's shapes: every [`LLM_M`] against every [`LLM_NK`].
pub fn llm_shapes() -> Vec<(usize, usize, usize)> {
    LLM_NK
        .iter()
        .flat_map(|&(n, k)| LLM_M.iter().map(move |&m| (m, n, k)))
        .collect()
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
        assert_eq!(
            shapes(Suite::Correctness).len(),
            square_shapes().len() + ODD_SHAPES.len() + TMA_ODD_SHAPES.len()
        );
    }
}
