//! `rute tune`: times candidate schedules of the Hopper program for one problem on the device
//! and records the fastest in the tuning file, which `rute gemm` (and the runtime) then prefer.
//! The tuning itself is the library's ([`kernels::hopper::tune`]); this is its command line.

use std::path::PathBuf;

use kernels::gemm::check::MAX_DIM;
use kernels::gemm::{GemmDtype, TuningFile};

use super::args::{integer, named, Usage};
use super::streams::Streams;

/// time schedules for one GEMM shape on the GPU and record the fastest
///
/// Times the hopper_ws program's candidate schedules for M x N x K on this GPU (the default and
/// its neighbours, in interleaved rounds), checks the fastest against cuBLAS, and records it in
/// the tuning file for the device, the element type and the shape's class (M, N and K each
/// rounded up to a power of two). `rute gemm` and the runtime prefer a record to the default
/// schedule, and say so in the plan's description.
#[derive(clap::Args, Debug)]
#[command(
    verbatim_doc_comment,
    override_usage = "rute tune --m M --n N --k K [--dtype bf16|f16] [--repeats R] [--file PATH]"
)]
pub struct Args {
    /// the rows of A and D
    #[arg(long, value_name = "M", value_parser = integer(1..=MAX_DIM as u64), allow_negative_numbers = true)]
    m: u64,
    /// the rows of B, the columns of D
    #[arg(long, value_name = "N", value_parser = integer(1..=MAX_DIM as u64), allow_negative_numbers = true)]
    n: u64,
    /// the columns of A and B (the sum's length)
    #[arg(long, value_name = "K", value_parser = integer(1..=MAX_DIM as u64), allow_negative_numbers = true)]
    k: u64,
    /// the element type of A, B and D
    #[arg(long, value_parser = named(&[GemmDtype::F16, GemmDtype::Bf16], GemmDtype::name), default_value = "bf16")]
    dtype: GemmDtype,
    /// timed rounds
    #[arg(long, value_name = "R", value_parser = integer(1..=10_000), default_value_t = 20, allow_negative_numbers = true)]
    repeats: u64,
    /// the tuning file (default: $RUTE_TUNING_FILE, else rute/tuning.txt under
    /// $XDG_CACHE_HOME or ~/.cache)
    #[arg(long, value_name = "PATH", verbatim_doc_comment)]
    file: Option<PathBuf>,
}

/// What `rute tune` was asked for, with the tuning file resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tune {
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    repeats: usize,
    file: PathBuf,
}

impl Args {
    fn request(self) -> Result<Tune, Usage> {
        let file = match self.file {
            Some(p) => p,
            None => TuningFile::default_path().ok_or_else(|| {
                Usage(
                    "no tuning file: give --file, or set RUTE_TUNING_FILE, XDG_CACHE_HOME or HOME"
                        .into(),
                )
            })?,
        };
        // Within MAX_DIM and 10000 by their parsers, so within usize.
        Ok(Tune {
            shape: (self.m as usize, self.n as usize, self.k as usize),
            dtype: self.dtype,
            repeats: self.repeats as usize,
            file,
        })
    }
}

/// Runs `rute tune`; returns the exit status.
pub fn run(args: Args, io: &mut Streams) -> Result<i32, Usage> {
    let t = args.request()?;
    Ok(execute(&t, io))
}

#[cfg(not(feature = "gpu"))]
fn execute(_: &Tune, io: &mut Streams) -> i32 {
    super::streams::report(
        io.err,
        "this rute was built without GPU support; rebuild with `cargo build --release -p kernels --features gpu`",
    );
    super::streams::FAILURE
}

#[cfg(feature = "gpu")]
fn execute(t: &Tune, io: &mut Streams) -> i32 {
    use super::streams::{report, FAILURE, SUCCESS};
    use codegen_ptx::jit::Jit;
    use kernels::hopper::tune::{record, tune, TuneRequest};
    let (m, n, k) = t.shape;
    let request = TuneRequest {
        m,
        n,
        k,
        dtype: t.dtype,
        repeats: t.repeats,
    };
    let outcome = match Jit::new(0)
        .map_err(|e| e.to_string())
        .and_then(|jit| tune(&jit, &request).map_err(|e| e.to_string()))
    {
        Ok(o) => o,
        Err(e) => {
            report(io.err, &e);
            return FAILURE;
        }
    };
    let _ = write!(io.out, "{}", outcome.table());
    if let Err(e) = record(&outcome, &t.file) {
        report(io.err, &e.to_string());
        return FAILURE;
    }
    let _ = writeln!(
        io.out,
        "recorded {} for {} {} {} in {}",
        outcome.record.schedule,
        outcome.device.name,
        outcome.record.dtype,
        outcome.record.class,
        t.file.display()
    );
    SUCCESS
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::rute;

    #[test]
    fn tune_refuses_with_a_sentence() {
        for (bad, why) in [
            ("--m 128 --n 6144", "--k"),
            ("--m 0 --n 1 --k 1", "--m"),
            ("--m 1 --n 1 --k 1 --dtype f32", "--dtype takes f16 or bf16"),
            ("--m 1 --n 1 --k 1 extra", "extra"),
        ] {
            let args: Vec<&str> = std::iter::once("tune").chain(bad.split(' ')).collect();
            let (code, out, err) = rute(&args, "");
            assert_eq!((code, out.as_str()), (2, ""), "{bad}: {err}");
            assert!(
                err.starts_with("error: ") && err.contains(why),
                "{bad}: {err}"
            );
        }
        let (code, out, _) = rute(&["tune", "--help"], "");
        assert_eq!(code, 0);
        assert!(out.contains("tuning file"), "{out}");
    }

    #[cfg(not(feature = "gpu"))]
    #[test]
    fn tune_without_gpu_support_says_how_to_get_it() {
        let (code, _, err) = rute(
            &[
                "tune", "--m", "1", "--n", "8", "--k", "8", "--file", "/tmp/x",
            ],
            "",
        );
        assert_eq!(code, 1);
        assert!(err.contains("--features gpu"), "{err}");
    }
}
