//! `rute gemm`'s arguments: the flags (read by clap, each value checked as it is read), then the
//! rules across them (a shape or a suite), into a [`Request`]; the `--out` file's check.
//!
//! `--config` is read in one place, [`config`]: the spelling is parsed into the kernel's typed
//! schedule, which is what runs.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use kernels::gemm::check::MAX_DIM;
use kernels::gemm::{Accum, Config, ConfigError, GemmDtype, KernelChoice, PROGRAMS};

use super::request::{Options, Request, Suite, DEFAULT_REPEATS, MAX_REPEATS};
use crate::cli::args::{integer, named, Usage};

/// The end of `rute gemm --help`.
const AFTER_HELP: &str = "\
Defaults: --dtype f16 --acc f32 --kernel auto; a suite runs every dtype/acc pair the kernel
takes unless --dtype/--acc pick one. Without --check or --bench the GEMM runs once and every
output is checked to have been written. A run that needs more host or GPU memory than there
is (A, B, D and the copies the check and the timing make) is refused before anything is
allocated.

Exit status: 0 all passed, 1 a check failed or the GPU (or the build) could not run it,
2 a usage error.";

/// run rute's GEMM on random data: --check against cuBLAS, --bench, --suite
///
/// D = A * B^T with A (M x K) and B (N x K) row-major (K contiguous) and D (M x N) row-major,
/// on random inputs uniform in [-1, 1) (seeded), the output poisoned with NaN before each run.
#[derive(clap::Args, Debug)]
#[command(
    verbatim_doc_comment,
    override_usage = "\
rute gemm --m M --n N --k K [--dtype f16|bf16] [--acc f16|f32] [--kernel NAME]
                 [--config SPEC] [--check] [--bench] [--repeats R] [--seed S]
       rute gemm --suite correctness|bench|llm|midm [--dtype ..] [--acc ..] [--kernel ..]
                 [--config ..] [--repeats R] [--seed S] [--out FILE.md]",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// the rows of A and D
    #[arg(long, value_name = "M", value_parser = dimension(), allow_negative_numbers = true)]
    m: Option<u64>,
    /// the rows of B, the columns of D
    #[arg(long, value_name = "N", value_parser = dimension(), allow_negative_numbers = true)]
    n: Option<u64>,
    /// the columns of A and B (the sum's length)
    #[arg(long, value_name = "K", value_parser = dimension(), allow_negative_numbers = true)]
    k: Option<u64>,
    /// the element type of A, B and D
    #[arg(long, value_parser = named(&[GemmDtype::F16, GemmDtype::Bf16], GemmDtype::name))]
    dtype: Option<GemmDtype>,
    /// the type the products are summed in
    #[arg(long, value_parser = named(&[Accum::F16, Accum::F32], Accum::name))]
    acc: Option<Accum>,
    /// the GEMM program; auto: the first kernel, in the order listed, that takes the
    /// problem (and, given --config, its spelling)
    #[arg(long, value_name = "NAME", value_parser = kernel(), default_value = "auto", verbatim_doc_comment)]
    kernel: KernelChoice,
    /// a configuration in the kernel's spelling (each kernel's under --kernel); without
    /// it, the kernel's default for the shape
    #[arg(long, value_name = "SPEC", verbatim_doc_comment)]
    config: Option<String>,
    /// measure D against the exact product (f64 on the host: every entry of small
    /// products, 512 sampled entries of large ones) and against cuBLAS (f32 compute),
    /// relative Frobenius errors; PASS when rute's distance to the exact product is
    /// within the tolerance, 1e-2 (f16 accumulation), 2e-3 (f32, f16 out) or 4e-3
    /// (f32, bf16 out), or within 1.5x cuBLAS's own, and its distance to cuBLAS within
    /// what the two allow; exit status 1 on FAIL
    #[arg(long, verbatim_doc_comment)]
    check: bool,
    /// time rute and cuBLAS in the same run (CUDA events, warm-up, median of R repeats,
    /// input sets rotated when they fit in L2): ms, TFLOP/s, ratio; then, as many times,
    /// a device copy of as many bytes as the GEMM reads and writes (GB/s: the
    /// memory-bound ceiling beside rute's rate)
    #[arg(long, verbatim_doc_comment)]
    bench: bool,
    /// timed repeats
    #[arg(
        long,
        value_name = "R",
        value_parser = integer(1..=MAX_REPEATS as u64),
        default_value_t = DEFAULT_REPEATS as u64,
        allow_negative_numbers = true
    )]
    repeats: u64,
    /// seed of the random inputs
    #[arg(
        long,
        value_name = "S",
        value_parser = integer(0..=u64::MAX),
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    seed: u64,
    /// run a fixed list of shapes instead of one, each checked (and, but for
    /// correctness, timed); progress on stderr where it is a terminal
    #[arg(long, value_name = "SUITE", verbatim_doc_comment)]
    suite: Option<Suite>,
    /// with --suite: the table also into FILE.md (checked writable before anything runs)
    #[arg(long, value_name = "FILE.md")]
    out: Option<String>,
}

/// A value parser of M, N and K: `1..=MAX_DIM`.
pub(crate) fn dimension(
) -> impl Fn(&str) -> Result<u64, crate::cli::args::Expected> + Clone + Send + Sync {
    integer(1..=MAX_DIM as u64)
}

/// `--kernel`'s value parser: `auto` or a program of this build, each listed in the long help
/// with its summary and its `--config` spelling, in the order `auto` tries them.
pub(crate) fn kernel() -> impl TypedValueParser<Value = KernelChoice> {
    let auto =
        PossibleValue::new("auto").help("the first of the kernels below that takes the problem");
    let programs = PROGRAMS.iter().map(|p| {
        let help =
            wrap(p.summary(), 66) + "\n" + &wrap(&format!("--config: {}", p.config_syntax()), 80);
        PossibleValue::new(p.name()).help(help)
    });
    PossibleValuesParser::new(std::iter::once(auto).chain(programs))
        .try_map(|name: String| KernelChoice::named(&name))
}

/// `text` in lines of at most 80 columns, the first of `first` (a longer word alone on its
/// line): clap writes the first line of a kernel's help after its name, the others indented
/// less.
fn wrap(text: &str, first: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split_whitespace() {
        let width = if lines.len() == 1 { first } else { 80 };
        let line = lines.last_mut().expect("one line at least");
        if line.is_empty() {
            line.push_str(word);
        } else if line.len() + 1 + word.len() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_string());
        }
    }
    lines.join("\n")
}

/// `--config SPEC` for `kernel`: parsed into the kernel's schedule (for `auto`, the first
/// kernel's that takes it); refused with each kernel's reason. The one place the command line
/// reads a configuration: what runs carries the parsed value.
pub(crate) fn config(kernel: KernelChoice, spec: &str) -> Result<Config, Usage> {
    Config::parse(kernel, spec).map_err(|e| {
        Usage(match e {
            ConfigError::Refused { .. } => format!("--config: {e}"),
            ConfigError::NoProgram { .. } => format!("--config {e}"),
        })
    })
}

impl Args {
    /// The request: one shape (`--m`, `--n` and `--k`) or a suite, with the flags that go with
    /// each; the sentence saying what is missing or extra otherwise.
    pub fn request(self) -> Result<Request, Usage> {
        let opts = Options {
            dtype: self.dtype,
            acc: self.acc,
            kernel: self.kernel,
            config: match &self.config {
                Some(spec) => Some(config(self.kernel, spec)?),
                None => None,
            },
            // Both within MAX_REPEATS and u64's range by their parsers.
            repeats: self.repeats as usize,
            seed: self.seed,
        };
        let dims = [self.m, self.n, self.k];
        match (self.suite, dims) {
            (Some(suite), [None, None, None]) => {
                if self.check || self.bench {
                    return Err(Usage(
                        "--suite checks (and, for bench, times) by itself; drop --check/--bench"
                            .into(),
                    ));
                }
                Ok(Request::Suite {
                    suite,
                    out: self.out,
                    opts,
                })
            }
            (Some(_), _) => Err(Usage(
                "--suite runs its own shapes; drop --m/--n/--k".into(),
            )),
            (None, [Some(m), Some(n), Some(k)]) => {
                if self.out.is_some() {
                    return Err(Usage("--out goes with --suite".into()));
                }
                Ok(Request::Single {
                    // Each at most MAX_DIM by its parser.
                    shape: (m as usize, n as usize, k as usize),
                    check: self.check,
                    bench: self.bench,
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
                Err(Usage(format!(
                    "{} missing: give --m, --n and --k, or --suite",
                    missing.join(", ")
                )))
            }
        }
    }
}

/// Checks, before anything runs, that the `--out` file can be written, leaving the file system
/// as it was: an existing file is opened for appending (and not written), a missing one is
/// created and removed again.
pub fn check_out_file(path: &str) -> Result<(), Usage> {
    use std::fs::OpenOptions;
    let p = std::path::Path::new(path);
    if path.is_empty() {
        return Err(Usage("--out needs a file name, not ``".into()));
    }
    if p.is_dir() {
        return Err(Usage(format!("--out `{path}` is a directory, not a file")));
    }
    let refused = |e: std::io::Error| Usage(format!("--out `{path}` cannot be created: {e}"));
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

#[cfg(test)]
mod tests {
    use clap::Args as _;
    use kernels::gemm::{Accum, GemmDtype, KernelChoice};

    use super::*;
    use crate::cli::args::Stop;

    /// `rute gemm ARGS` read into its request, or the sentence refusing them.
    fn parse(s: &str) -> Result<Request, String> {
        let words: Vec<String> = s.split_whitespace().map(String::from).collect();
        let command = Args::augment_args(clap::Command::new("rute gemm"));
        match crate::cli::args::parse::<Args>(command, &words) {
            Ok(a) => a.request().map_err(|u| u.0),
            Err(Stop::Usage(u)) => Err(u.0),
            Err(Stop::Help(_)) => Err("help".into()),
        }
    }

    fn opts() -> Options {
        Options::default()
    }

    fn kernel(name: &str) -> KernelChoice {
        KernelChoice::named(name).unwrap()
    }

    #[test]
    fn single_shape_with_every_option() {
        let r = parse(
            "--m 4096 --n=256 --k 72 --dtype bf16 --acc f32 --kernel multistage --config t256x128s4_r2_se --check --bench --repeats 5 --seed 9",
        );
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
            parse("--k 8 --m 2 --n 3 --config tuned").map(|r| match r {
                Request::Single { opts, .. } => opts.config,
                _ => None,
            }),
            Ok(Config::parse(KernelChoice::Auto, "tuned").ok())
        );
        // A spelling no kernel takes is a usage error, with each kernel's reason.
        let e = parse("--k 8 --m 2 --n 3 --config fastest").unwrap_err();
        assert!(
            e.starts_with("--config `fastest` is no kernel's configuration: the hopper_ws kernel: `fastest` is not a hopper_ws configuration: it starts with MxNxKsS")
                && e.contains("the multistage kernel: `fastest` is not a configuration")
                && e.contains("e.g. 128x256x32s4_r2_se")
                && e.ends_with("the strided kernel: it takes no --config, and `fastest` was given"),
            "{e}"
        );
        assert_eq!(
            parse("--k 8 --m 2 --n 3 --kernel naive --config tuned"),
            Err("--config: the naive kernel: it takes no --config, and `tuned` was given".into())
        );
        assert_eq!(
            parse("--k 8 --m 2 --n 3 --kernel multistage --config 128x128x48s3"),
            Err("--config: the multistage kernel: `128x128x48s3`: tile_k is 32 or 64".into())
        );
        assert_eq!(
            parse("--k 1 --m 2 --n 3"),
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
            parse("--suite bench --out results.md --kernel multistage"),
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
            parse("--suite=correctness"),
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
                "--kernel takes auto, hopper_ws, blackwell_ws, multistage, naive or strided, not `fast`",
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
                "--suite takes correctness, bench, llm or midm, not `fast`",
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
            assert_eq!(parse(a), Err(want.to_string()), "{a}");
        }
        assert_eq!(parse("--m 1 --help"), Err("help".into()));
        assert_eq!(
            parse("--m 2147483647 --n 1 --k 1 --repeats 10000 --seed 18446744073709551615").map(
                |r| match r {
                    Request::Single { shape, opts, .. } => (shape, opts.repeats, opts.seed),
                    _ => ((0, 0, 0), 0, 0),
                }
            ),
            Ok(((2147483647, 1, 1), 10000, u64::MAX))
        );
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
        let e = check_out_file(missing.to_str().unwrap()).unwrap_err().0;
        assert!(
            e.contains("cannot be created: No such file or directory"),
            "{e}"
        );
        let e = check_out_file(dir.to_str().unwrap()).unwrap_err().0;
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        assert_eq!(
            check_out_file(""),
            Err(Usage("--out needs a file name, not ``".into()))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
