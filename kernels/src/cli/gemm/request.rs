//! What `rute gemm` is asked to do, as a typed value read once from the arguments: one shape
//! (run, checked, timed) or a suite, with the options every form takes.

use kernels::gemm::{Accum, Config, GemmDtype, KernelChoice};

/// Which fixed list of shapes `--suite` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Suite {
    /// square 128..8192, 38 odd shapes and 24 with rows of 16
    /// bytes (N and K multiples of 8: what TMA takes), every dtype/acc pair the kernel
    /// takes unless --dtype/--acc pick one; a table last
    #[value(verbatim_doc_comment)]
    Correctness,
    /// 4096^3, 6144^3, 8192^3, 2048^3 and 81920 x 256 x 256, each
    /// checked, then timed against cuBLAS; a table last, and in FILE.md with --out
    #[value(verbatim_doc_comment)]
    Bench,
    /// as bench, on 28 LLM projections: M 16..16384 against
    /// Llama-3 8B's 6144x4096, 28672x4096, 4096x14336 and 70B's 10240x8192 (N x K);
    /// the ratios' geometric mean last
    #[value(verbatim_doc_comment)]
    Llm,
    /// as bench, on 72 mid-size products: 24 M from 65 to 1536, each against a
    /// long-K, a wide-N and a mid-size projection of other model families (Yi,
    /// DeepSeek, Falcon, Nemotron, Granite, Phi-3, Qwen2.5, OLMo 2, InternLM2,
    /// Gemma 2) in rotation; the ratios' geometric mean last
    #[value(verbatim_doc_comment)]
    Midm,
}

impl Suite {
    /// The name `--suite` takes.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn name(self) -> &'static str {
        match self {
            Suite::Correctness => "correctness",
            Suite::Bench => "bench",
            Suite::Llm => "llm",
            Suite::Midm => "midm",
        }
    }
}

/// The options every form takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `--dtype`, if given.
    pub dtype: Option<GemmDtype>,
    /// `--acc`, if given.
    pub acc: Option<Accum>,
    /// `--kernel` (default `auto`).
    pub kernel: KernelChoice,
    /// `--config SPEC`: a configuration in the kernel's spelling, one it (or, for `auto`, some
    /// kernel) takes (default: the kernel's for the shape).
    pub config: Option<Config>,
    /// `--repeats` (default [`DEFAULT_REPEATS`], in `1..=`[`MAX_REPEATS`]).
    pub repeats: usize,
    /// `--seed` (default 1).
    pub seed: u64,
}

/// The options of `rute gemm` without flags (for the tests).
#[cfg(test)]
impl Default for Options {
    fn default() -> Options {
        Options {
            dtype: None,
            acc: None,
            kernel: KernelChoice::Auto,
            config: None,
            repeats: DEFAULT_REPEATS,
            seed: 1,
        }
    }
}

impl Options {
    /// The element type of one shape's run: `--dtype`, else f16.
    pub fn dtype_or_default(&self) -> GemmDtype {
        self.dtype.unwrap_or(GemmDtype::F16)
    }

    /// The sum type of one shape's run: `--acc`, else f32.
    pub fn acc_or_default(&self) -> Accum {
        self.acc.unwrap_or(Accum::F32)
    }
}

/// What the arguments ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// One shape.
    Single {
        /// (M, N, K).
        shape: (usize, usize, usize),
        /// `--check`.
        check: bool,
        /// `--bench`.
        bench: bool,
        /// The rest.
        opts: Options,
    },
    /// `--suite`.
    Suite {
        /// Which.
        suite: Suite,
        /// `--out`, a markdown file for the results.
        out: Option<String>,
        /// The rest.
        opts: Options,
    },
}

impl Request {
    /// The options of either form.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn opts(&self) -> &Options {
        match self {
            Request::Single { opts, .. } | Request::Suite { opts, .. } => opts,
        }
    }
}

/// Default timed repeats.
pub const DEFAULT_REPEATS: usize = 20;

/// The most timed repeats `--repeats` takes: a few seconds of GPU time at the suites' shapes
/// (and 160 KB of host memory for the samples).
pub const MAX_REPEATS: usize = 10_000;

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn suite_names_are_the_ones_the_flag_takes() {
        for s in Suite::value_variants() {
            let v = s.to_possible_value().expect("no variant is hidden");
            assert_eq!(v.get_name(), s.name());
        }
    }
}
