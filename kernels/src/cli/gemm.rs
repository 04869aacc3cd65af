//! `rute gemm`: run rute's GEMM on random data, check it against cuBLAS, time both.
//!
//! Parsing and the suites' shape lists are pure (tested here without a GPU); running needs the
//! `gpu` feature and a device. Exit status: 0 all passed, 1 a check failed or the GPU (or the
//! build) could not run it, 2 a usage error.

use std::io::{BufRead, Write};

use dsl_core::ir::Target;
use kernels::gemm::check::MAX_DIM;
use kernels::gemm::rotation::{self, rotating_sets};
use kernels::gemm::{
    check, Accum, BufferLens, Config, ConfigError, Device, GemmDtype, KernelChoice, Problem,
    PROGRAMS,
};

use super::args::{self, Flag};
use super::{report, USAGE_ERROR};

/// The usage lines, before the list of kernels (`{kernels}`: their names).
const HELP_USAGE: &str = "\
usage: rute gemm --m M --n N --k K [--dtype f16|bf16] [--acc f16|f32]
                 [--kernel auto|{kernels}] [--config SPEC] [--check] [--bench]
                 [--repeats R] [--seed S]
       rute gemm --suite correctness|bench|llm [--dtype ..] [--acc ..] [--kernel ..] [--config ..]
                 [--repeats R] [--seed S] [--out FILE.md]

D = A * B^T with A (M x K) and B (N x K) row-major (K contiguous) and D (M x N) row-major,
on random inputs uniform in [-1, 1) (seeded), the output poisoned with NaN before each run.

  --kernel    the GEMM program (the kernels below); auto, the default: the first of them
              that takes the problem (and, given --config, its spelling)
  --config    a configuration in the kernel's spelling (below); without it, the kernel's
              default for the shape
  --check     measure D against the exact product (f64 on the host: every entry of small
              products, 512 sampled entries of large ones) and against cuBLAS (f32 compute),
              relative Frobenius errors; PASS when rute's distance to the exact product is
              within the tolerance, 1e-2 (f16 accumulation), 2e-3 (f32, f16 out) or 4e-3
              (f32, bf16 out), or within 1.5x cuBLAS's own, and its distance to cuBLAS within
              what the two allow; exit status 1 on FAIL
  --bench     time rute and cuBLAS in the same run (CUDA events, warm-up, median of R
              repeats, input sets rotated when they fit in L2): ms, TFLOP/s, ratio; then, as
              many times, a device copy of as many bytes as the GEMM reads and writes (GB/s:
              the memory-bound ceiling beside rute's rate)
  --repeats   timed repeats, 1 to 10000 (default 20)
  --seed      seed of the random inputs (default 1)
  --suite correctness   square 128..8192, 38 odd shapes and 24 with rows of 16 bytes (N and
                        K multiples of 8: what TMA takes), every dtype/acc pair the kernel
                        takes unless --dtype/--acc pick one; a table last
  --suite bench         4096^3, 6144^3, 8192^3, 2048^3 and 81920 x 256 x 256, each checked,
                        then timed against cuBLAS; a table last, and in FILE.md with --out
                        (checked writable before anything runs)
  --suite llm           as bench, on 28 LLM projections: M 16..16384 against Llama-3 8B's
                        6144x4096, 28672x4096, 4096x14336 and 70B's 10240x8192 (N x K); the
                        ratios' geometric mean last
";

/// The end of the help, after the list of kernels.
const HELP_DEFAULTS: &str = "\
Defaults: --dtype f16 --acc f32 --kernel auto. Without --check or --bench the GEMM runs once
and every output is checked to have been written. A run that needs more host or GPU memory
than there is (A, B, D and the copies the check and the timing make) is refused before
anything is allocated.";

/// `rute gemm --help`: the usage, then each kernel of this build ([`PROGRAMS`], in the order
/// `auto` tries them) with its summary and its `--config` spelling.
pub fn help() -> String {
    let names: Vec<&str> = PROGRAMS.iter().map(|p| p.name()).collect();
    let mut s = HELP_USAGE.replace("{kernels}", &names.join("|"));
    s += "\nKernels, in the order auto tries them:\n";
    for p in PROGRAMS {
        s += &wrap(&format!("  {:<11} ", p.name()), p.summary(), 14);
        s += &wrap(
            &" ".repeat(14),
            &format!("--config: {}", p.config_syntax()),
            14,
        );
    }
    s + "\n" + HELP_DEFAULTS
}

/// `text` after `prefix`, in lines of at most 92 columns (a longer word alone on its line), the
/// lines after the first indented by `indent` spaces, each ending in a newline.
fn wrap(prefix: &str, text: &str, indent: usize) -> String {
    const WIDTH: usize = 92;
    let mut out = String::new();
    let mut line = prefix.to_string();
    let mut fresh = true;
    for word in text.split_whitespace() {
        if !fresh && line.len() + 1 + word.len() > WIDTH {
            out += &line;
            out.push('\n');
            line = " ".repeat(indent);
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line += word;
        fresh = false;
    }
    out += &line;
    out.push('\n');
    out
}

/// Which fixed list of shapes `--suite` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// Square powers of two and odd shapes, checked against cuBLAS.
    Correctness,
    /// The benchmark shapes, checked then timed.
    Bench,
    /// LLM projection shapes (decode to prefill), checked then timed, with their geometric mean.
    Llm,
}

impl Suite {
    /// The shapes the suite runs.
    pub fn shapes(self) -> Vec<(usize, usize, usize)> {
        match self {
            Suite::Correctness => correctness_shapes(),
            Suite::Bench => BENCH_SHAPES.to_vec(),
            Suite::Llm => llm_shapes(),
        }
    }

    /// The name `--suite` takes.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn name(self) -> &'static str {
        match self {
            Suite::Correctness => "correctness",
            Suite::Bench => "bench",
            Suite::Llm => "llm",
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
    /// `--repeats` (default 20, in `1..=`[`MAX_REPEATS`]).
    pub repeats: usize,
    /// `--seed` (default 1).
    pub seed: u64,
}

/// What the arguments ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `--help`.
    Help,
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

/// Default timed repeats.
pub const DEFAULT_REPEATS: usize = 20;

/// The most timed repeats `--repeats` takes: a few seconds of GPU time at the suites' shapes
/// (and 160 KB of host memory for the samples).
pub const MAX_REPEATS: usize = 10_000;

const FLAGS: &[Flag] = &[
    Flag::value("--m", "a positive integer"),
    Flag::value("--n", "a positive integer"),
    Flag::value("--k", "a positive integer"),
    Flag::value("--dtype", "f16 or bf16"),
    Flag::value("--acc", "f16 or f32"),
    Flag::value("--kernel", "auto or a kernel `rute gemm --help` lists"),
    Flag::value(
        "--config",
        "a configuration (e.g. 128x256x32s4_r2_se, tuned)",
    ),
    Flag::value("--repeats", "a positive integer"),
    Flag::value("--seed", "an integer"),
    Flag::value("--suite", "correctness or bench"),
    Flag::value("--out", "a file path"),
    Flag::switch("--check"),
    Flag::switch("--bench"),
];

/// Parses `rute gemm`'s arguments; the error is a sentence for the usage message.
///
/// On success every number is in range: M, N and K in `1..=MAX_DIM` (i32::MAX), the repeats in
/// `1..=`[`MAX_REPEATS`], the seed any u64.
pub fn parse(args: &[String]) -> Result<Request, String> {
    let a = args::read(args, FLAGS)?;
    if a.help {
        return Ok(Request::Help);
    }
    if let Some(p) = a.positional.first() {
        return Err(format!(
            "unexpected argument `{p}`: rute gemm takes only options"
        ));
    }
    let dim = |name: &str| -> Result<Option<usize>, String> {
        a.value(name)
            .map(|v| args::integer(name, v, 1..=MAX_DIM as u64).map(|d| d as usize))
            .transpose()
    };
    let dims = [dim("--m")?, dim("--n")?, dim("--k")?];
    let mut opts = Options {
        dtype: None,
        acc: None,
        kernel: KernelChoice::Auto,
        config: None,
        repeats: DEFAULT_REPEATS,
        seed: 1,
    };
    if let Some(v) = a.value("--dtype") {
        opts.dtype = Some(match v {
            "f16" => GemmDtype::F16,
            "bf16" => GemmDtype::Bf16,
            v => return Err(format!("--dtype takes f16 or bf16, not `{v}`")),
        });
    }
    if let Some(v) = a.value("--acc") {
        opts.acc = Some(match v {
            "f16" => Accum::F16,
            "f32" => Accum::F32,
            v => return Err(format!("--acc takes f16 or f32, not `{v}`")),
        });
    }
    if let Some(v) = a.value("--kernel") {
        opts.kernel = KernelChoice::named(v).map_err(|_| {
            format!(
                "--kernel takes {}, not `{v}`",
                KernelChoice::names().join(", ")
            )
        })?;
    }
    if let Some(v) = a.value("--config") {
        opts.config = Some(check_config(opts.kernel, v)?);
    }
    if let Some(v) = a.value("--repeats") {
        opts.repeats = args::integer("--repeats", v, 1..=MAX_REPEATS as u64)? as usize;
    }
    if let Some(v) = a.value("--seed") {
        opts.seed = args::integer("--seed", v, 0..=u64::MAX)?;
    }
    let suite = match a.value("--suite") {
        None => None,
        Some("correctness") => Some(Suite::Correctness),
        Some("bench") => Some(Suite::Bench),
        Some("llm") => Some(Suite::Llm),
        Some(v) => {
            return Err(format!(
                "--suite takes correctness, bench or llm, not `{v}`"
            ))
        }
    };
    let out = a.value("--out").map(str::to_string);
    let (check, bench) = (a.has("--check"), a.has("--bench"));
    match (suite, dims) {
        (Some(suite), [None, None, None]) => {
            if check || bench {
                return Err(
                    "--suite checks (and, for bench, times) by itself; drop --check/--bench".into(),
                );
            }
            Ok(Request::Suite { suite, out, opts })
        }
        (Some(_), _) => Err("--suite runs its own shapes; drop --m/--n/--k".into()),
        (None, [Some(m), Some(n), Some(k)]) => {
            if out.is_some() {
                return Err("--out goes with --suite".into());
            }
            Ok(Request::Single {
                shape: (m, n, k),
                check,
                bench,
                opts,
            })
        }
        (None, _) => {
            let missing: Vec<&str> = ["--m", "--n", "--k"]
                .into_iter()
                .zip(dims)
                .filter(|(_, d)| d.is_none())
                .map(|(n, _)| n)
                .collect();
            Err(format!(
                "{} missing: give --m, --n and --k, or --suite",
                missing.join(", ")
            ))
        }
    }
}

/// Refuses a `--config` spelling the kernel does not take (for `auto`, that no kernel takes),
/// with each kernel's reason.
fn check_config(kernel: KernelChoice, spec: &str) -> Result<Config, String> {
    Config::parse(kernel, spec).map_err(|e| match e {
        ConfigError::Refused { .. } => format!("--config: {e}"),
        ConfigError::NoProgram { .. } => format!("--config {e}"),
    })
}

/// Checks, before anything runs, that the `--out` file can be written, leaving the file system
/// as it was: an existing file is opened for appending (and not written), a missing one is
/// created and removed again.
pub fn check_out_file(path: &str) -> Result<(), String> {
    use std::fs::OpenOptions;
    let p = std::path::Path::new(path);
    if path.is_empty() {
        return Err("--out needs a file name, not ``".into());
    }
    if p.is_dir() {
        return Err(format!("--out `{path}` is a directory, not a file"));
    }
    let refused = |e: std::io::Error| format!("--out `{path}` cannot be created: {e}");
    match OpenOptions::new().append(true).open(p) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)
                .map_err(refused)?;
            std::fs::remove_file(p).map_err(refused)
        }
        Err(e) => Err(refused(e)),
    }
}

/// Bytes of memory, on the host and on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// Host memory, bytes.
    pub host: u64,
    /// Device (GPU) memory, bytes.
    pub device: u64,
}

/// A run that does not fit: the case with the largest need on the side that is short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{case} needs {} of {side} memory ({what}), more than the {} available", bytes(*.needed), bytes(*.available))]
pub struct MemoryError {
    /// The case, e.g. `1 x 2147483647 x 2147483647 (f16)`.
    pub case: String,
    /// `host` or `device`.
    pub side: &'static str,
    /// What the bytes are for.
    pub what: &'static str,
    /// Bytes the case needs there at its peak.
    pub needed: u64,
    /// Bytes there are.
    pub available: u64,
}

/// `n` bytes in binary units with the exact count, e.g. `8.0 EiB (9223372028264841218 bytes)`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let exp = (0..UNITS.len())
        .rev()
        .find(|&e| n >> (10 * e) > 0)
        .unwrap_or(0);
    if exp == 0 {
        format!("{n} bytes")
    } else {
        let scaled = n as f64 / (1u64 << (10 * exp)) as f64;
        format!("{scaled:.1} {} ({n} bytes)", UNITS[exp])
    }
}

/// What one case of a run allocates at its peak, on the host and on the device.
///
/// A, B and D (m*k, n*k, m*n elements of `dtype`) live on the device in every form. Without
/// `check` and `bench` the GEMM runs once: the host holds one operand at a time while uploading,
/// then D. `check` adds cuBLAS's D on the device and holds A, B and both Ds on the host at once
/// (the f64 reference and the comparison). `bench` keeps the rotating input sets on the device
/// ([`rotating_sets`] of the device's `l2_bytes`, the harness's; `u64::MAX` gives the most any L2
/// would, [`rotation::MAX_SETS`] sets within [`rotation::CAP_BYTES`]), each with its copy's
/// source and destination (half a set each, in 4-byte words), and on the host one operand or one
/// copy source at a time and 16 bytes per repeat for the samples. The phases run one after the other, so each side's peak is the largest of its
/// phases. Saturates at `u64::MAX`.
pub fn case_memory(
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    check: bool,
    bench: bool,
    repeats: usize,
    l2_bytes: u64,
) -> Memory {
    let elem: u128 = match dtype {
        GemmDtype::F16 | GemmDtype::Bf16 => 2,
    };
    let (m, n, k) = (m as u128, n as u128, k as u128);
    let (a, b, d) = (
        m.saturating_mul(k).saturating_mul(elem),
        n.saturating_mul(k).saturating_mul(elem),
        m.saturating_mul(n).saturating_mul(elem),
    );
    let set = a.saturating_add(b).saturating_add(d);
    let one_operand = a.max(b).max(d);
    let mut host = 0u128;
    let mut device = 0u128;
    if !check && !bench {
        host = one_operand;
        device = set;
    }
    if check {
        let both = set.saturating_add(d);
        host = host.max(both);
        device = device.max(both);
    }
    if bench {
        let samples = 16u128.saturating_mul(repeats as u128);
        let copy_half = rotation::copy_buffer_bytes(set);
        host = host.max(one_operand.max(copy_half).saturating_add(samples));
        let sets = rotating_sets(set, l2_bytes, rotation::CAP_BYTES) as u128;
        let with_copy = set.saturating_add(copy_half.saturating_mul(2));
        device = device.max(with_copy.saturating_mul(sets));
    }
    let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    Memory {
        host: clamp(host),
        device: clamp(device),
    }
}

/// The cases `request` runs, each with what it allocates ([`case_memory`]): its shape, dtype
/// and memory. Cases [`precheck`] refuses are left out: they are refused before allocating.
fn cases_memory(
    request: &Request,
    l2_bytes: u64,
) -> Vec<((usize, usize, usize), GemmDtype, Memory)> {
    let (opts, shapes, check, bench): (_, Vec<_>, _, _) = match request {
        Request::Help => return Vec::new(),
        Request::Single {
            shape,
            check,
            bench,
            opts,
        } => (opts, vec![*shape], *check, *bench),
        Request::Suite {
            suite: Suite::Correctness,
            opts,
            ..
        } => (opts, correctness_shapes(), true, false),
        Request::Suite { suite, opts, .. } => (opts, suite.shapes(), true, true),
    };
    let dtype_accs = match request {
        Request::Suite {
            suite: Suite::Correctness,
            ..
        } => pairs(opts),
        _ => vec![(
            opts.dtype.unwrap_or(GemmDtype::F16),
            opts.acc.unwrap_or(Accum::F32),
        )],
    };
    let mut cases = Vec::new();
    for (dtype, acc) in dtype_accs {
        for &shape in &shapes {
            if precheck(&problem(shape, dtype, acc, opts), &Target::ALL).is_ok() {
                let need = case_memory(shape, dtype, check, bench, opts.repeats, l2_bytes);
                cases.push((shape, dtype, need));
            }
        }
    }
    cases
}

/// The most `request` allocates at once on the host and on the device: the largest
/// [`case_memory`] of its cases, each side on its own (the cases run one after the other). Pass
/// the device's L2 size in bytes, or `u64::MAX` for the most any device would take.
pub fn memory_needed(request: &Request, l2_bytes: u64) -> Memory {
    cases_memory(request, l2_bytes)
        .into_iter()
        .fold(Memory::default(), |acc, (_, _, need)| Memory {
            host: acc.host.max(need.host),
            device: acc.device.max(need.device),
        })
}

/// What the runner calls once it knows the machine, before it allocates anything: refuses
/// `request` when one of its cases needs more than `available` on the host or on the device,
/// naming the first such case (host before device), what it needs and what there is. Pass the
/// device's free memory (`cuMemGetInfo`), [`host_available`] (or `u64::MAX` where unknown) and
/// the device's L2 size. On success, returns [`memory_needed`]. cuBLAS's workspace, the CUDA
/// context and the loaded modules are not counted: leave them room in `available`.
pub fn check_memory(
    request: &Request,
    l2_bytes: u64,
    available: Memory,
) -> Result<Memory, MemoryError> {
    let cases = cases_memory(request, l2_bytes);
    for (side, get, have, what) in [
        (
            "host",
            (|m: &Memory| m.host) as fn(&Memory) -> u64,
            available.host,
            "A, B and D as they are drawn, and the copies a check compares",
        ),
        (
            "device",
            |m: &Memory| m.device,
            available.device,
            "A, B, D and the reference or the timing's input sets",
        ),
    ] {
        if let Some(((m, n, k), dtype, need)) = cases.iter().find(|(_, _, need)| get(need) > have) {
            return Err(MemoryError {
                case: format!("{m} x {n} x {k} ({dtype})"),
                side,
                what,
                needed: get(need),
                available: have,
            });
        }
    }
    Ok(memory_needed(request, l2_bytes))
}

/// The host memory available to a new allocation, in bytes: `MemAvailable` of `/proc/meminfo`
/// (`None` where there is no such file, as off Linux).
pub fn host_available() -> Option<u64> {
    meminfo_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable:   123456 kB` of a `/proc/meminfo` text, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line["MemAvailable:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then(|| kib.saturating_mul(1024))
}

// Used by the GPU half only; tested in every build.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
/// Square sizes of the correctness suite: 128 to 8192, powers of two.
pub fn square_shapes() -> Vec<(usize, usize, usize)> {
    (7..=13).map(|p| (1usize << p, 1 << p, 1 << p)).collect()
}

// Used by the GPU half only; tested in every build.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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

// Used by the GPU half only; tested in every build.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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

// Used by the GPU half only; tested in every build.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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
fn problem(shape: (usize, usize, usize), dtype: GemmDtype, acc: Accum, opts: &Options) -> Problem {
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
fn precheck(p: &Problem, targets: &[Target]) -> Result<(), String> {
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

/// Runs `rute gemm` with `args`; returns the exit status.
pub fn run(args: &[String], _: &mut dyn BufRead, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let request = match parse(args) {
        Ok(Request::Help) => {
            let _ = writeln!(out, "{}", help());
            return 0;
        }
        Ok(r) => r,
        Err(message) => {
            report(err, &message);
            let _ = writeln!(err, "\n{}", help());
            return USAGE_ERROR;
        }
    };
    // The results file is checked before hours of suite are run for it.
    if let Request::Suite {
        out: Some(path), ..
    } = &request
    {
        if let Err(message) = check_out_file(path) {
            report(err, &message);
            return USAGE_ERROR;
        }
    }
    // Inputs that no kernel takes are refused before a GPU is looked for.
    if let Request::Single { shape, opts, .. } = &request {
        let p = problem(
            *shape,
            opts.dtype.unwrap_or(GemmDtype::F16),
            opts.acc.unwrap_or(Accum::F32),
            opts,
        );
        if let Err(e) = precheck(&p, &Target::ALL) {
            report(err, &e);
            return 1;
        }
    }
    // So are runs larger than the host's memory; the runner checks the device's (and the host's
    // again) once it has one, before it allocates.
    if let Some(host) = host_available() {
        let available = Memory {
            host,
            device: u64::MAX,
        };
        if let Err(e) = check_memory(&request, u64::MAX, available) {
            report(err, &e.to_string());
            return 1;
        }
    }
    execute(&request, out, err)
}

#[cfg(not(feature = "gpu"))]
fn execute(_: &Request, _: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let _ = writeln!(
        err,
        "error: this rute was built without GPU support; rebuild with `cargo build --release -p kernels --features gpu`"
    );
    1
}

#[cfg(feature = "gpu")]
fn execute(request: &Request, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    gpu::execute(request, out, err)
}

#[cfg(feature = "gpu")]
mod gpu {
    //! The GPU half of `rute gemm`.

    use std::io::Write;

    use codegen_ptx::jit::{DeviceRepr, Jit};
    use half::{bf16, f16};
    use kernels::gemm::harness::{
        case_seed, free_device_memory, l2_bytes, BenchOutcome, Case, CheckOutcome, Harness,
        Operands,
    };
    use kernels::gemm::metric::count_non_finite;
    use kernels::gemm::{Accum, CublasRef, Gemm, GemmDtype, GemmElem, GemmError};

    use super::{
        check_memory, correctness_shapes, host_available, pairs, precheck, problem, Memory,
        Options, Request, Suite, Target,
    };

    struct Ctx<'j> {
        jit: &'j Jit,
        gemm: Gemm<'j>,
        cublas: CublasRef<'j>,
    }

    /// Device memory the memory check leaves for what it does not count: cuBLAS's handle and
    /// workspace (32 MiB on Hopper) and the modules the run loads.
    const DEVICE_HEADROOM: u64 = 256 << 20;

    pub(super) fn execute(request: &Request, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
        let jit = match Jit::new(0) {
            Ok(j) => j,
            Err(e) => {
                super::report(err, &e.to_string());
                return 1;
            }
        };
        // Before anything is allocated: a run larger than the device's free memory (or the
        // host's) is refused, naming what it needs and what there is.
        let device_free = match free_device_memory(&jit) {
            Ok(free) => free,
            Err(e) => {
                super::report(err, &e.to_string());
                return 1;
            }
        };
        let available = Memory {
            host: host_available().unwrap_or(u64::MAX),
            device: device_free.saturating_sub(DEVICE_HEADROOM),
        };
        if let Err(e) = check_memory(request, l2_bytes(&jit) as u64, available) {
            super::report(err, &e.to_string());
            return 1;
        }
        let config = match request {
            Request::Single { opts, .. } | Request::Suite { opts, .. } => opts.config.clone(),
            Request::Help => None,
        };
        let ctx = match Gemm::new(&jit).and_then(|gemm| {
            Ok(Ctx {
                jit: &jit,
                gemm: match config {
                    Some(c) => gemm.with_schedule(c),
                    None => gemm,
                },
                cublas: CublasRef::new(&jit)?,
            })
        }) {
            Ok(c) => c,
            Err(e) => {
                super::report(err, &e.to_string());
                return 1;
            }
        };
        let limits = jit.limits();
        let device = format!(
            "{} (cc {}.{}, {} SMs, driver {}, PTX target {})",
            jit.device_name().unwrap_or_else(|_| "unnamed GPU".into()),
            limits.compute_capability.0,
            limits.compute_capability.1,
            limits.multiprocessors,
            jit.driver_version(),
            ctx.gemm.target()
        );
        let _ = writeln!(out, "device: {device}");
        let result = match request {
            Request::Help => Ok(true),
            Request::Single {
                shape,
                check,
                bench,
                opts,
            } => single(&ctx, *shape, *check, *bench, opts, out),
            Request::Suite {
                suite: Suite::Correctness,
                out: file,
                opts,
            } => correctness(&ctx, opts, file.as_deref(), &device, out),
            Request::Suite {
                suite,
                out: file,
                opts,
            } => bench_suite(&ctx, *suite, opts, file.as_deref(), &device, out),
        };
        match result {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(e) => {
                super::report(err, &e.to_string());
                1
            }
        }
    }

    /// Runs `f::<T>` for the element type `dtype` names.
    macro_rules! by_dtype {
        ($dtype:expr, $f:ident($($arg:expr),*)) => {
            match $dtype {
                GemmDtype::F16 => $f::<f16>($($arg),*),
                GemmDtype::Bf16 => $f::<bf16>($($arg),*),
            }
        };
    }

    impl Ctx<'_> {
        /// The case of `shape` with `opts`'s kernel and the seed [`case_seed`] mixes for it (the
        /// same for the check and the timing, so both see the same inputs).
        fn case(shape: (usize, usize, usize), acc: Accum, opts: &Options) -> Case {
            Case {
                shape,
                acc,
                kernel: opts.kernel,
                seed: case_seed(opts.seed, shape.0, shape.1, shape.2),
            }
        }

        /// The target the GPU runs, which the prechecks check for.
        fn target(&self) -> Target {
            self.gemm.target()
        }

        fn harness(&self) -> Harness<'_> {
            Harness {
                jit: self.jit,
                gemm: &self.gemm,
                cublas: &self.cublas,
            }
        }

        /// [`Harness::check_dtype`] of the case.
        fn check(
            &self,
            dtype: GemmDtype,
            shape: (usize, usize, usize),
            acc: Accum,
            opts: &Options,
        ) -> Result<CheckOutcome, GemmError> {
            self.harness()
                .check_dtype(dtype, &Self::case(shape, acc, opts))
        }

        /// [`Harness::bench_dtype`] of the case, `opts.repeats` rounds.
        fn bench(
            &self,
            dtype: GemmDtype,
            shape: (usize, usize, usize),
            acc: Accum,
            opts: &Options,
        ) -> Result<BenchOutcome, GemmError> {
            self.harness()
                .bench_dtype(dtype, &Self::case(shape, acc, opts), opts.repeats)
        }
    }

    fn verdict(c: &CheckOutcome) -> &'static str {
        if c.passed() {
            "PASS"
        } else {
            "FAIL"
        }
    }

    /// The check's distances and verdict: `error E vs cuBLAS; vs f64 on N entries: rute R,
    /// cuBLAS C; bound B (tolerance T), U unwritten: PASS`.
    fn check_line(c: &CheckOutcome) -> String {
        let mut s = format!(
            "error {:.3e} vs cuBLAS; vs f64 on {} entries: rute {:.3e}, cuBLAS {:.3e}; bound {:.2e} (tolerance {:.1e}), {} unwritten",
            c.error,
            c.f64_entries,
            c.f64_error.0,
            c.f64_error.1,
            c.errors().bound(c.tolerance),
            c.tolerance,
            c.unwritten,
        );
        if c.reference_non_finite > 0 {
            s += &format!(
                " (cuBLAS left {} non-finite elements)",
                c.reference_non_finite
            );
        }
        s + ": " + verdict(c)
    }

    fn bench_line(b: &BenchOutcome) -> String {
        format!(
            "rute {:.4} ms {:.2} TFLOP/s {:.0} GB/s | cuBLAS {:.4} ms {:.2} TFLOP/s | ratio {:.3} | a device copy of the same bytes {:.0} GB/s (median of {} repeats, {} input set{})",
            b.rute_ms,
            b.rute_tflops(),
            b.rute_gbps(),
            b.cublas_ms,
            b.cublas_tflops(),
            b.ratio(),
            b.copy_gbps(),
            b.repeats,
            b.sets,
            if b.sets == 1 { "" } else { "s" }
        )
    }

    /// One run of the case without a check or timing: its plan and how many outputs it left
    /// unwritten.
    fn run_once<T: GemmElem + DeviceRepr>(
        ctx: &Ctx<'_>,
        case: &Case,
    ) -> Result<(String, usize), GemmError> {
        let (m, n, k) = case.shape;
        let mut ops = Operands::<T>::random(ctx.jit, m, n, k, case.seed)?;
        let plan = ops.run(&ctx.gemm, case)?;
        let d = ctx.jit.download(&ops.d)?;
        Ok((plan.describe(), count_non_finite(&d)))
    }

    fn single(
        ctx: &Ctx<'_>,
        shape: (usize, usize, usize),
        check: bool,
        bench: bool,
        opts: &Options,
        out: &mut dyn Write,
    ) -> Result<bool, Failure> {
        let dtype = opts.dtype.unwrap_or(GemmDtype::F16);
        let acc = opts.acc.unwrap_or(Accum::F32);
        let (m, n, k) = shape;
        let _ = writeln!(
            out,
            "gemm: M={m} N={n} K={k} dtype={dtype} acc={acc} kernel={}{}",
            opts.kernel,
            opts.config
                .as_ref()
                .map_or(String::new(), |c| format!(" config={c}"))
        );
        let mut ok = true;
        if !check && !bench {
            let case = Ctx::case(shape, acc, opts);
            let (plan, unwritten) = by_dtype!(dtype, run_once(ctx, &case))?;
            ok = unwritten == 0;
            let _ = writeln!(
                out,
                "ran: {plan}; {unwritten} of {} outputs unwritten: {}",
                m * n,
                if ok { "PASS" } else { "FAIL" }
            );
        }
        if check {
            let c = ctx.check(dtype, shape, acc, opts)?;
            let _ = writeln!(out, "plan: {}", c.plan.describe());
            let _ = writeln!(out, "check: {}", check_line(&c));
            ok &= c.passed();
        }
        if bench {
            let b = ctx.bench(dtype, shape, acc, opts)?;
            if !check {
                let _ = writeln!(out, "plan: {}", b.plan.describe());
            }
            let _ = writeln!(out, "bench: {}", bench_line(&b));
        }
        Ok(ok)
    }

    /// What stops a run: the GEMM (or the GPU), or the results file.
    #[derive(Debug, thiserror::Error)]
    pub(super) enum Failure {
        /// The GEMM, cuBLAS or the GPU.
        #[error("{0}")]
        Gemm(#[from] GemmError),
        /// The `--out` file.
        #[error("the results could not be written to {path}: {source}")]
        Write {
            /// The path given.
            path: String,
            /// The OS's error.
            source: std::io::Error,
        },
    }

    fn write_file(path: &str, text: &str, out: &mut dyn Write) -> Result<(), Failure> {
        std::fs::write(path, text).map_err(|source| Failure::Write {
            path: path.to_string(),
            source,
        })?;
        let _ = writeln!(out, "results written to {path}");
        Ok(())
    }

    fn header(title: &str, device: &str, opts: &Options) -> String {
        let when = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        format!(
            "# {title}\n\n- device: {device}\n- kernel: {}\n- config: {}\n- seed: {}, repeats: {}\n- unix time: {when}\n\n",
            opts.kernel,
            opts.config.as_ref().map_or("the kernel's default for the shape", kernels::gemm::Config::spelling),
            opts.seed,
            opts.repeats
        )
    }

    fn correctness(
        ctx: &Ctx<'_>,
        opts: &Options,
        file: Option<&str>,
        device: &str,
        out: &mut dyn Write,
    ) -> Result<bool, Failure> {
        let shapes = correctness_shapes();
        let mut rows = String::from("| dtype | acc | M | N | K | plan | vs f64 | cuBLAS vs f64 | vs cuBLAS | bound | unwritten | result |\n|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n");
        let mut summary = Vec::new();
        let mut all_ok = true;
        for (dtype, acc) in pairs(opts) {
            let (mut pass, mut fail, mut refused, mut errors) = (0, 0, 0, 0);
            let mut worst = 0.0f64;
            for &shape in &shapes {
                let (m, n, k) = shape;
                let label = format!("{dtype} {acc} {m:>6} x {n:>6} x {k:>6}");
                if let Err(reason) = precheck(&problem(shape, dtype, acc, opts), &[ctx.target()]) {
                    refused += 1;
                    let _ = writeln!(out, "{label}  refused: {reason}");
                    rows += &format!("| {dtype} | {acc} | {m} | {n} | {k} | - | - | - | - | - | - | refused: {reason} |\n");
                    continue;
                }
                match ctx.check(dtype, shape, acc, opts) {
                    Ok(c) => {
                        if c.passed() {
                            pass += 1;
                        } else {
                            fail += 1;
                        }
                        // A NaN (unwritten output) stays the worst error once seen.
                        let e = c.f64_error.0;
                        worst = if worst.is_nan() || e.is_nan() {
                            f64::NAN
                        } else {
                            worst.max(e)
                        };
                        let _ = writeln!(out, "{label}  {}  {}", c.plan.describe(), check_line(&c));
                        rows += &format!(
                            "| {dtype} | {acc} | {m} | {n} | {k} | {} | {:.3e} | {:.3e} | {:.3e} | {:.2e} | {} | {} |\n",
                            c.plan.describe(),
                            c.f64_error.0,
                            c.f64_error.1,
                            c.error,
                            c.errors().bound(c.tolerance),
                            c.unwritten,
                            verdict(&c)
                        );
                    }
                    Err(e) => {
                        errors += 1;
                        let _ = writeln!(out, "{label}  ERROR: {e}");
                        rows += &format!(
                            "| {dtype} | {acc} | {m} | {n} | {k} | - | - | - | - | - | - | ERROR: {e} |\n"
                        );
                        // A fault poisons the context; later cases would only repeat it.
                        if matches!(e, GemmError::Jit(_)) {
                            summary.push((dtype, acc, pass, fail, refused, errors, worst));
                            finish_correctness(&summary, &rows, file, device, opts, out)?;
                            return Ok(false);
                        }
                    }
                }
            }
            all_ok &= fail == 0 && errors == 0;
            summary.push((dtype, acc, pass, fail, refused, errors, worst));
        }
        finish_correctness(&summary, &rows, file, device, opts, out)?;
        Ok(all_ok)
    }

    type SummaryRow = (GemmDtype, Accum, usize, usize, usize, usize, f64);

    fn finish_correctness(
        summary: &[SummaryRow],
        rows: &str,
        file: Option<&str>,
        device: &str,
        opts: &Options,
        out: &mut dyn Write,
    ) -> Result<(), Failure> {
        let mut table = String::from("| dtype | acc | pass | fail | refused | errors | worst vs f64 |\n|---|---|---:|---:|---:|---:|---:|\n");
        for (d, a, p, f, r, e, w) in summary {
            table += &format!("| {d} | {a} | {p} | {f} | {r} | {e} | {w:.3e} |\n");
        }
        if let Some(path) = file {
            let text = format!(
                "{}## Summary\n\n{table}\n## Cases\n\n{rows}",
                header("rute gemm --suite correctness", device, opts)
            );
            write_file(path, &text, out)?;
        }
        let _ = write!(out, "\n{table}");
        Ok(())
    }

    /// A timing suite (`bench` or `llm`): each shape checked, then timed against cuBLAS; the
    /// table, then the ratios' geometric mean, smallest and largest.
    fn bench_suite(
        ctx: &Ctx<'_>,
        suite: Suite,
        opts: &Options,
        file: Option<&str>,
        device: &str,
        out: &mut dyn Write,
    ) -> Result<bool, Failure> {
        let dtype = opts.dtype.unwrap_or(GemmDtype::F16);
        let acc = opts.acc.unwrap_or(Accum::F32);
        let mut table = String::from(
            "| M | N | K | dtype | acc | plan | vs f64 | check | rute ms | rute TFLOP/s | rute GB/s | copy GB/s | cuBLAS ms | cuBLAS TFLOP/s | ratio |\n|---:|---:|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut all_ok = true;
        let mut ratios = Vec::new();
        for shape in suite.shapes() {
            let (m, n, k) = shape;
            let _ = writeln!(out, "{m} x {n} x {k} {dtype} {acc}");
            if let Err(reason) = precheck(&problem(shape, dtype, acc, opts), &[ctx.target()]) {
                all_ok = false;
                let _ = writeln!(out, "  refused: {reason}");
                table += &format!(
                    "| {m} | {n} | {k} | {dtype} | {acc} | refused: {reason} | | | | | | | | | |\n"
                );
                continue;
            }
            // Correct first: a wrong result is not timed.
            let c = ctx.check(dtype, shape, acc, opts)?;
            let _ = writeln!(out, "  {}: check: {}", c.plan.describe(), check_line(&c));
            if !c.passed() {
                all_ok = false;
                table += &format!(
                    "| {m} | {n} | {k} | {dtype} | {acc} | {} | {:.3e} | FAIL | | | | | | | |\n",
                    c.plan.describe(),
                    c.f64_error.0
                );
                continue;
            }
            let b = ctx.bench(dtype, shape, acc, opts)?;
            let _ = writeln!(out, "  bench: {}", bench_line(&b));
            table += &format!(
                "| {m} | {n} | {k} | {dtype} | {acc} | {} | {:.3e} | PASS | {:.4} | {:.2} | {:.0} | {:.0} | {:.4} | {:.2} | {:.3} |\n",
                b.plan.describe(),
                c.f64_error.0,
                b.rute_ms,
                b.rute_tflops(),
                b.rute_gbps(),
                b.copy_gbps(),
                b.cublas_ms,
                b.cublas_tflops(),
                b.ratio()
            );
            ratios.push(b.ratio());
        }
        if !ratios.is_empty() {
            let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
            let (min, max) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
                (lo.min(r), hi.max(r))
            });
            table += &format!(
                "\n{} shapes timed: geometric mean ratio {geomean:.3}, smallest {min:.3}, largest {max:.3}\n",
                ratios.len()
            );
        }
        if let Some(path) = file {
            let text = format!(
                "{}ratio = rute throughput / cuBLAS throughput, both timed in this run (CUDA events, median; each sample runs one GEMM per rotating input set). GB/s: the bytes of A, B and D once each over rute's time; copy GB/s: the device's own copy (cuMemcpyDtoD) of as many bytes read and written, timed right after the two, the rate a memory-bound GEMM can approach.\n\n{table}",
                header(&format!("rute gemm --suite {}", suite.name()), device, opts)
            );
            write_file(path, &text, out)?;
        }
        let _ = write!(out, "\n{table}");
        Ok(all_ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn opts() -> Options {
        Options {
            dtype: None,
            acc: None,
            kernel: KernelChoice::Auto,
            config: None,
            repeats: DEFAULT_REPEATS,
            seed: 1,
        }
    }

    fn kernel(name: &str) -> KernelChoice {
        KernelChoice::named(name).unwrap()
    }

    #[test]
    fn single_shape_with_every_option() {
        let r = parse(&args(
            "--m 4096 --n=256 --k 72 --dtype bf16 --acc f32 --kernel multistage --config t256x128s4_r2_se --check --bench --repeats 5 --seed 9",
        ));
        assert_eq!(
            r,
            Ok(Request::Single {
                shape: (4096, 256, 72),
                check: true,
                bench: true,
                opts: Options {
                    dtype: Some(GemmDtype::Bf16),
                    acc: Some(Accum::F32),
                    kernel: kernel("multistage"),
                    config: Config::parse(kernel("multistage"), "t256x128s4_r2_se").ok(),
                    repeats: 5,
                    seed: 9,
                },
            })
        );
        assert_eq!(
            parse(&args("--k 8 --m 2 --n 3 --config tuned")).map(|r| match r {
                Request::Single { opts, .. } => opts.config,
                _ => None,
            }),
            Ok(Config::parse(KernelChoice::Auto, "tuned").ok())
        );
        // A spelling no kernel takes is a usage error, with each kernel's reason.
        let e = parse(&args("--k 8 --m 2 --n 3 --config fastest")).unwrap_err();
        assert!(
            e.starts_with("--config `fastest` is no kernel's configuration: the hopper_ws kernel: `fastest` is not a hopper_ws configuration: it starts with MxNxKsS")
                && e.contains("the multistage kernel: `fastest` is not a configuration")
                && e.contains("e.g. 128x256x32s4_r2_se")
                && e.ends_with("the naive kernel: it takes no --config, and `fastest` was given"),
            "{e}"
        );
        assert_eq!(
            parse(&args("--k 8 --m 2 --n 3 --kernel naive --config tuned")),
            Err("--config: the naive kernel: it takes no --config, and `tuned` was given".into())
        );
        assert_eq!(
            parse(&args(
                "--k 8 --m 2 --n 3 --kernel multistage --config 128x128x48s3"
            )),
            Err("--config: the multistage kernel: `128x128x48s3`: tile_k is 32 or 64".into())
        );
        assert_eq!(
            parse(&args("--k 1 --m 2 --n 3")),
            Ok(Request::Single {
                shape: (2, 3, 1),
                check: false,
                bench: false,
                opts: opts()
            })
        );
    }

    #[test]
    fn suites_and_their_output_file() {
        assert_eq!(
            parse(&args("--suite bench --out results.md --kernel multistage")),
            Ok(Request::Suite {
                suite: Suite::Bench,
                out: Some("results.md".into()),
                opts: Options {
                    kernel: kernel("multistage"),
                    ..opts()
                }
            })
        );
        assert_eq!(
            parse(&args("--suite=correctness")),
            Ok(Request::Suite {
                suite: Suite::Correctness,
                out: None,
                opts: opts()
            })
        );
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        let cases = [
            (
                "--m 1 --n 2",
                "--k missing: give --m, --n and --k, or --suite",
            ),
            (
                "",
                "--m, --n, --k missing: give --m, --n and --k, or --suite",
            ),
            (
                "--m x --n 1 --k 1",
                "--m takes an integer from 1 to 2147483647, not `x`",
            ),
            (
                "--m -3 --n 1 --k 1",
                "--m takes an integer from 1 to 2147483647, not `-3`",
            ),
            (
                "--m 0 --n 1 --k 1",
                "--m takes an integer from 1 to 2147483647, not `0`",
            ),
            (
                "--m 1 --n 2147483648 --k 1",
                "--n takes an integer from 1 to 2147483647, not `2147483648`",
            ),
            (
                "--m 1 --n 1 --k 1 --dtype f32",
                "--dtype takes f16 or bf16, not `f32`",
            ),
            (
                "--m 1 --n 1 --k 1 --acc bf16",
                "--acc takes f16 or f32, not `bf16`",
            ),
            (
                "--m 1 --n 1 --k 1 --kernel fast",
                "--kernel takes auto, hopper_ws, multistage, naive, not `fast`",
            ),
            (
                "--m 1 --n 1 --k 1 --repeats 0",
                "--repeats takes an integer from 1 to 10000, not `0`",
            ),
            (
                "--m 1 --n 1 --k 1 --bench --repeats 18446744073709551615",
                "--repeats takes an integer from 1 to 10000, not `18446744073709551615`",
            ),
            (
                "--m 1 --n 1 --k 1 --bench --repeats 1000000000000",
                "--repeats takes an integer from 1 to 10000, not `1000000000000`",
            ),
            (
                "--m 1 --n 1 --k 1 --seed -1",
                "--seed takes an integer from 0 to 18446744073709551615, not `-1`",
            ),
            (
                "--m 1 --m 2 --n 1 --k 1",
                "--m is given twice (`1`, then `2`); give it once",
            ),
            (
                "--m 1 --n 1 --k 1 --bench --bench",
                "--bench is given twice; give it once",
            ),
            (
                "--m 1 --n 1 --k 1 4096",
                "unexpected argument `4096`: rute gemm takes only options",
            ),
            (
                "--m 1 --n 1 --k 1 --dtype",
                "--dtype needs a value: f16 or bf16",
            ),
            (
                "--suite fast",
                "--suite takes correctness, bench or llm, not `fast`",
            ),
            (
                "--suite bench --m 4",
                "--suite runs its own shapes; drop --m/--n/--k",
            ),
            (
                "--suite bench --check",
                "--suite checks (and, for bench, times) by itself; drop --check/--bench",
            ),
            ("--m 1 --n 1 --k 1 --out x.md", "--out goes with --suite"),
            ("--m 1 --n 1 --k 1 --frob", "unknown option `--frob`"),
            (
                "--m 1 --n 1 --k 1 --check=yes",
                "--check takes no value, not `--check=yes`",
            ),
        ];
        for (a, want) in cases {
            assert_eq!(parse(&args(a)), Err(want.to_string()), "{a}");
        }
        assert_eq!(parse(&args("--m 1 --help")), Ok(Request::Help));
        assert_eq!(
            parse(&args(
                "--m 2147483647 --n 1 --k 1 --repeats 10000 --seed 18446744073709551615"
            ))
            .map(|r| match r {
                Request::Single { shape, opts, .. } => (shape, opts.repeats, opts.seed),
                _ => ((0, 0, 0), 0, 0),
            }),
            Ok(((2147483647, 1, 1), 10000, u64::MAX))
        );
    }

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
            pairs(&opts()),
            [
                (GemmDtype::F16, Accum::F32),
                (GemmDtype::F16, Accum::F16),
                (GemmDtype::Bf16, Accum::F32)
            ]
        );
        let bf16_f16 = Options {
            dtype: Some(GemmDtype::Bf16),
            acc: Some(Accum::F16),
            ..opts()
        };
        // Asked for explicitly: kept, so that its refusal is reported.
        assert_eq!(pairs(&bf16_f16), [(GemmDtype::Bf16, Accum::F16)]);
    }

    const GIB: u64 = 1 << 30;

    fn single(shape: (usize, usize, usize), check: bool, bench: bool, opts: Options) -> Request {
        Request::Single {
            shape,
            check,
            bench,
            opts,
        }
    }

    #[test]
    fn memory_counts_the_operands_and_the_copies_of_each_form() {
        // 4096^3 f16: A, B, D 32 MiB each.
        let (mib, shape) = (1u64 << 20, (4096, 4096, 4096));
        let run = case_memory(shape, GemmDtype::F16, false, false, 20, 0);
        assert_eq!(
            run,
            Memory {
                host: 32 * mib,
                device: 96 * mib
            }
        );
        // The check: cuBLAS's D on the device; A, B and both Ds on the host.
        let check = case_memory(shape, GemmDtype::Bf16, true, false, 20, 0);
        assert_eq!(
            check,
            Memory {
                host: 128 * mib,
                device: 128 * mib
            }
        );
        // The timing: one set when twice the L2 (40 MiB) is below a set (96 MiB), two when it is
        // not, each with a copy's source and destination of 48 MiB; on the host one copy source
        // (larger than an operand) and 16 bytes a repeat.
        let bench = case_memory(shape, GemmDtype::F16, false, true, 10_000, 40 << 20);
        assert_eq!(
            bench,
            Memory {
                host: 48 * mib + 160_000,
                device: 192 * mib
            }
        );
        let bench = case_memory(shape, GemmDtype::F16, false, true, 20, 50 << 20);
        assert_eq!(bench.device, 2 * 192 * mib);
        // Without the L2 size: the most rotation any device would make, 16 sets within 4 GiB.
        let most = case_memory(shape, GemmDtype::F16, false, true, 20, u64::MAX);
        assert_eq!(most.device, 16 * 192 * mib);
        let most = case_memory(
            (8192, 8192, 8192),
            GemmDtype::F16,
            false,
            true,
            20,
            u64::MAX,
        );
        assert_eq!(most.device, 10 * 768 * mib);
        let small = case_memory((64, 64, 64), GemmDtype::F16, false, true, 20, u64::MAX);
        assert_eq!(small.device, 16 * 2 * 3 * 64 * 64 * 2);
        // Check and time: each side's peak is its larger phase.
        let both = case_memory(shape, GemmDtype::F16, true, true, 20, 40 << 20);
        assert_eq!(
            both,
            Memory {
                host: 128 * mib,
                device: 192 * mib
            }
        );
        // The largest shapes saturate instead of overflowing.
        let max = MAX_DIM;
        let huge = case_memory(
            (max, max, max),
            GemmDtype::F16,
            true,
            true,
            10_000,
            u64::MAX,
        );
        assert!(
            huge.host > u64::MAX / 2 && huge.device == u64::MAX,
            "{huge:?}"
        );
    }

    #[test]
    fn requests_need_their_largest_case() {
        let need = memory_needed(
            &single(
                (1, 1048576, 1048576),
                false,
                false,
                Options {
                    kernel: kernel("naive"),
                    ..opts()
                },
            ),
            u64::MAX,
        );
        // B is 2^40 f16 elements: 2 TiB on either side.
        assert_eq!(
            need,
            Memory {
                host: 2 << 40,
                device: (2 << 40) + 4 * (1 << 20)
            }
        );
        assert_eq!(memory_needed(&Request::Help, 0), Memory::default());
        // The correctness suite's largest case is 8192^3 checked: 4 matrices of 128 MiB.
        let suite = Request::Suite {
            suite: Suite::Correctness,
            out: None,
            opts: opts(),
        };
        assert_eq!(
            memory_needed(&suite, 50 << 20),
            Memory {
                host: 512 << 20,
                device: 512 << 20
            }
        );
        // The bench suite: 8192^3 timed (one set of 384 MiB and its copy's 2 x 192 MiB; 2048^3
        // rotated through 5 sets is less).
        let bench = Request::Suite {
            suite: Suite::Bench,
            out: None,
            opts: opts(),
        };
        assert_eq!(memory_needed(&bench, 50 << 20).device, 768 << 20);
    }

    #[test]
    fn check_memory_names_the_case_and_both_sizes() {
        let h200 = Memory {
            host: 100 * GIB,
            device: 139 * GIB,
        };
        let naive = single(
            (1, 1048576, 1048576),
            false,
            false,
            Options {
                kernel: kernel("naive"),
                ..opts()
            },
        );
        let e = check_memory(&naive, 50 << 20, h200).unwrap_err();
        assert_eq!(
            (e.side, e.needed, e.available),
            ("host", 2 << 40, 100 * GIB)
        );
        assert_eq!(
            e.to_string(),
            "1 x 1048576 x 1048576 (f16) needs 2.0 TiB (2199023255552 bytes) of host memory \
             (A, B and D as they are drawn, and the copies a check compares), more than the 100.0 GiB (107374182400 bytes) available"
        );
        let roomy_host = Memory {
            host: u64::MAX,
            ..h200
        };
        let e = check_memory(&naive, 50 << 20, roomy_host).unwrap_err();
        assert_eq!(e.side, "device");
        assert!(e.to_string().contains("of device memory (A, B, D and the reference or the timing's input sets), more than the 139.0 GiB"), "{e}");
        let absurd = single((1, 2147483647, 2147483647), true, false, opts());
        let e = check_memory(&absurd, u64::MAX, h200).unwrap_err();
        assert!(e.to_string().starts_with("1 x 2147483647 x 2147483647 (f16) needs 8.0 EiB (9223372041149743100 bytes) of host memory"), "{e}");
        // The device check gpu_run.sh makes: one matrix at a time fits the host, the three do not
        // fit the device.
        let large = single((170000, 170000, 170000), false, false, opts());
        assert_eq!(
            precheck(
                &problem(
                    (170000, 170000, 170000),
                    GemmDtype::F16,
                    Accum::F32,
                    &opts()
                ),
                &Target::ALL
            ),
            Ok(())
        );
        let e = check_memory(&large, 50 << 20, h200).unwrap_err();
        assert_eq!(
            e.to_string(),
            "170000 x 170000 x 170000 (f16) needs 161.5 GiB (173400000000 bytes) of device memory \
             (A, B, D and the reference or the timing's input sets), more than the 139.0 GiB \
             (149250113536 bytes) available"
        );
        // What fits passes and says what it needs.
        let fits = single((4096, 4096, 4096), true, true, opts());
        assert_eq!(
            check_memory(&fits, 50 << 20, h200),
            Ok(memory_needed(&fits, 50 << 20))
        );
        let suite = Request::Suite {
            suite: Suite::Correctness,
            out: None,
            opts: opts(),
        };
        let e = check_memory(
            &suite,
            0,
            Memory {
                host: GIB,
                device: 256 << 20,
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "8192 x 8192 x 8192 (f16) needs 512.0 MiB (536870912 bytes) of device memory"
            ),
            "{e}"
        );
    }

    #[test]
    fn host_memory_is_read_from_meminfo() {
        let text =
            "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   65536000 kB\n";
        assert_eq!(meminfo_available(text), Some(65536000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);
        assert_eq!(meminfo_available("MemAvailable: x kB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(host_available().is_some_and(|b| b > 0));
        }
    }

    #[test]
    fn the_out_file_is_checked_without_changing_anything() {
        let dir = std::env::temp_dir().join(format!("rute-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let new = dir.join("new.md");
        let path = new.to_str().unwrap();
        assert_eq!(check_out_file(path), Ok(()));
        assert!(!new.exists(), "the probe leaves no file behind");
        let old = dir.join("old.md");
        std::fs::write(&old, "kept").unwrap();
        assert_eq!(check_out_file(old.to_str().unwrap()), Ok(()));
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "kept");
        let missing = dir.join("no-such-dir").join("x.md");
        let e = check_out_file(missing.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("cannot be created: No such file or directory"),
            "{e}"
        );
        let e = check_out_file(dir.to_str().unwrap()).unwrap_err();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        assert_eq!(
            check_out_file(""),
            Err("--out needs a file name, not ``".into())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn rute(a: &str) -> (i32, String, String) {
        super::super::capture(run, &a.split_whitespace().collect::<Vec<_>>(), "")
    }

    #[test]
    fn bad_problems_are_refused_before_any_gpu() {
        let (code, out, err) = rute("--m 0 --n 4 --k 4");
        assert_eq!((code, out.as_str()), (USAGE_ERROR, ""));
        assert!(
            err.starts_with("error: --m takes an integer from 1 to 2147483647, not `0`\n"),
            "{err}"
        );
        let (code, _, err) = rute("--m 4 --n 4 --k 4 --dtype bf16 --acc f16");
        assert_eq!(code, 1);
        assert!(
            err.contains("bf16 inputs with f16 accumulation are not supported"),
            "{err}"
        );
        let (code, _, err) = rute("--m 4 --n 4 --k 4 --kernel nope");
        assert_eq!(code, USAGE_ERROR);
        assert!(err.contains("usage: rute gemm"), "{err}");
    }

    /// Without the feature the subcommand says so; with it, on a machine without a GPU it says
    /// why the GPU cannot be used (exit status 1, a sentence on stderr), and on one with a GPU
    /// the check passes.
    #[test]
    fn a_valid_problem_runs_or_fails_loudly() {
        let (code, out, err) = rute("--m 64 --n 48 --k 40 --check");
        if !cfg!(feature = "gpu") {
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("built without GPU support"), "{err}");
        } else if code == 0 {
            assert!(
                out.contains("check: error ") && out.contains(": PASS"),
                "{out}"
            );
        } else {
            assert_eq!(code, 1, "{out}{err}");
            assert!(err.starts_with("error: no usable GPU: "), "{err}");
        }
    }
}
