//! The shapes of rute's GEMM suites (`rute gemm --suite correctness`, `bench`, `llm`, `midm`),
//! as data: what the command line runs and the benchmarks time, one list each.
//!
//! ```
//! use kernels::gemm::suites::{llm_shapes, midm_shapes, BENCH_SHAPES};
//! assert_eq!(BENCH_SHAPES[0], (4096, 4096, 4096));
//! assert_eq!(llm_shapes().len(), 28);
//! assert_eq!(midm_shapes().len(), 72);
//! ```

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

/// The `M` of the mid-size suite: a batch of 65 tokens (one past the decode rows) to a prefill
/// chunk of 1536, dense where a 128-row tile's residue moves (65 to 200, and 333, 500, 1000),
/// the range where LLM serving's prefill chunks and batched decode live.
pub const MIDM_M: [usize; 24] = [
    65, 80, 96, 100, 112, 128, 144, 160, 176, 192, 200, 256, 288, 320, 333, 384, 448, 500, 512,
    640, 768, 1000, 1280, 1536,
];

/// One weight of a model: the projection's output features (N) and input features (K), from the
/// model's published configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Projection {
    /// The model.
    pub model: &'static str,
    /// The family, for the suite's check that each M meets several.
    pub family: &'static str,
    /// Which projection.
    pub what: &'static str,
    /// Output features.
    pub n: usize,
    /// Input features.
    pub k: usize,
}

const fn proj(
    model: &'static str,
    family: &'static str,
    what: &'static str,
    n: usize,
    k: usize,
) -> Projection {
    Projection {
        model,
        family,
        what,
        n,
        k,
    }
}

/// The mid-size suite's projections, in three groups that every M meets once each: long K
/// (12800 and more, six of 16384 and more: MLP down projections and an attention output, where
/// few tokens stream long rows of weights); wide N (59136 to 256000: output heads over
/// vocabularies and a fused gate+up, the weights many tiles wide); mid-size (fused attention
/// inputs and MLP up projections, N from 4672, a residue of 64 on 128-row tiles, to 27648, K
/// from 1536 to 7168).
pub const MIDM_GROUPS: [[Projection; 8]; 3] = [
    [
        proj("Yi-34B", "Yi", "MLP down", 7168, 20480),
        proj("DeepSeek-V3", "DeepSeek", "attention out", 7168, 16384),
        proj("Falcon-40B", "Falcon", "MLP down", 8192, 32768),
        proj("Nemotron-4-15B", "Nemotron", "MLP down", 6144, 24576),
        proj("Granite-3.0-8B", "Granite", "MLP down", 4096, 12800),
        proj("Phi-3-medium", "Phi-3", "MLP down", 5120, 17920),
        proj("Qwen2.5-72B", "Qwen", "MLP down", 8192, 29568),
        proj("OLMo-2-13B", "OLMo", "MLP down", 5120, 13824),
    ],
    [
        proj("Falcon-7B", "Falcon", "LM head", 65024, 4544),
        proj("OLMo-2-7B", "OLMo", "LM head", 100352, 4096),
        proj("InternLM2-7B", "InternLM", "LM head", 92544, 4096),
        proj("DeepSeek-V2-Lite", "DeepSeek", "LM head", 102400, 2048),
        proj("Yi-34B", "Yi", "LM head", 64000, 7168),
        proj("Qwen2.5-72B", "Qwen", "MLP gate+up", 59136, 8192),
        proj("Gemma-2-2B", "Gemma", "LM head", 256000, 2304),
        proj("Qwen2.5-1.5B", "Qwen", "LM head", 151936, 1536),
    ],
    [
        proj("Phi-3-mini", "Phi-3", "MLP gate+up", 16384, 3072),
        proj("Phi-3-medium", "Phi-3", "attention QKV", 7680, 5120),
        proj("DeepSeek-V3", "DeepSeek", "MLP gate", 18432, 7168),
        proj("DeepSeek-V3", "DeepSeek", "MLA query up", 24576, 1536),
        proj("Falcon-7B", "Falcon", "attention QKV", 4672, 4544),
        proj("Granite-3.0-8B", "Granite", "MLP gate+up", 25600, 4096),
        proj("OLMo-2-13B", "OLMo", "MLP gate+up", 27648, 5120),
        proj("Nemotron-4-15B", "Nemotron", "attention QKV", 8192, 6144),
    ],
];

/// The mid-size suite: every [`MIDM_M`] against one projection of each of [`MIDM_GROUPS`] (a
/// long K, a wide N, a mid-size one), 72 shapes.
///
/// Why a rotation and not every pair: 24 M by 24 projections would be 576 shapes, about twenty
/// minutes of device time per element type, where a suite should take a few. The `i`-th M
/// takes projection `(i + 3g) mod 8` of group `g`, so that each M meets a long K, a wide N and
/// a mid-size projection, of three families, and each projection meets three M eight apart in
/// [`MIDM_M`]: one of the few-token rows (65 to 160), one of the middle (176 to 384) and one of
/// the larger (448 to 1536). That covers the schedules' regimes (the tokens' residue on a tile,
/// a K long enough to share out, a wave of weight tiles or many) without every combination:
/// the chooser is built for the regime, and shapes outside the suite measure it the same way.
pub fn midm_shapes() -> Vec<(usize, usize, usize)> {
    MIDM_M
        .iter()
        .enumerate()
        .flat_map(|(i, &m)| {
            MIDM_GROUPS.iter().enumerate().map(move |(g, group)| {
                let p = group[(i + 3 * g) % group.len()];
                (m, p.n, p.k)
            })
        })
        .collect()
}
