//! `rute tune`: times candidate schedules of the Hopper program for one problem on the device
//! and records the fastest in the tuning file, which `rute gemm` (and the runtime) then prefer.
//! The tuning itself is the library's ([`kernels::hopper::tune`]); this is its command line.

use std::io::{BufRead, Write};

use kernels::gemm::check::MAX_DIM;
use kernels::gemm::{GemmDtype, TuningFile};

use super::args::{self, Flag};
use super::{report, USAGE_ERROR};

const HELP: &str =
    "usage: rute tune --m M --n N --k K [--dtype bf16|f16] [--repeats R] [--file PATH]

Times the hopper_ws program's candidate schedules for M x N x K on this GPU (the default and
its neighbours, in interleaved rounds), checks the fastest against cuBLAS, and records it in the
tuning file for the device, the element type and the shape's class (M, N and K each rounded up
to a power of two). `rute gemm` and the runtime prefer a record to the default schedule.

  --dtype    bf16 (default) or f16
  --repeats  timed rounds (default 20)
  --file     the tuning file (default: $RUTE_TUNING_FILE, else rute/tuning.txt under
             $XDG_CACHE_HOME or ~/.cache)";

const FLAGS: &[Flag] = &[
    Flag::value("--m", "a positive integer"),
    Flag::value("--n", "a positive integer"),
    Flag::value("--k", "a positive integer"),
    Flag::value("--dtype", "f16 or bf16"),
    Flag::value("--repeats", "a positive integer"),
    Flag::value("--file", "a file path"),
];

/// What `rute tune` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tune {
    shape: (usize, usize, usize),
    dtype: GemmDtype,
    repeats: usize,
    file: std::path::PathBuf,
}

fn parse(args: &[String]) -> Result<Option<Tune>, String> {
    let a = args::read(args, FLAGS)?;
    if a.help {
        return Ok(None);
    }
    if let Some(p) = a.positional.first() {
        return Err(format!(
            "unexpected argument `{p}`: rute tune takes only options"
        ));
    }
    let dim = |name: &str| -> Result<usize, String> {
        let v = a
            .value(name)
            .ok_or_else(|| format!("{name} missing: give --m, --n and --k"))?;
        Ok(args::integer(name, v, 1..=MAX_DIM as u64)? as usize)
    };
    let shape = (dim("--m")?, dim("--n")?, dim("--k")?);
    let dtype = match a.value("--dtype") {
        None | Some("bf16") => GemmDtype::Bf16,
        Some("f16") => GemmDtype::F16,
        Some(v) => return Err(format!("--dtype takes f16 or bf16, not `{v}`")),
    };
    let repeats = match a.value("--repeats") {
        None => 20,
        Some(v) => args::integer("--repeats", v, 1..=10_000)? as usize,
    };
    let file = match a.value("--file") {
        Some(p) => p.into(),
        None => TuningFile::default_path().ok_or(
            "no tuning file: give --file, or set RUTE_TUNING_FILE, XDG_CACHE_HOME or HOME",
        )?,
    };
    Ok(Some(Tune {
        shape,
        dtype,
        repeats,
        file,
    }))
}

/// `rute tune`'s entry point.
pub fn run(args: &[String], _: &mut dyn BufRead, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match parse(args) {
        Ok(None) => {
            let _ = writeln!(out, "{HELP}");
            0
        }
        Ok(Some(t)) => execute(&t, out, err),
        Err(message) => {
            report(err, &message);
            let _ = writeln!(err, "\n{HELP}");
            USAGE_ERROR
        }
    }
}

#[cfg(not(feature = "gpu"))]
fn execute(_: &Tune, _: &mut dyn Write, err: &mut dyn Write) -> i32 {
    report(
        err,
        "this rute was built without GPU support; rebuild with `cargo build --release -p kernels --features gpu`",
    );
    1
}

#[cfg(feature = "gpu")]
fn execute(t: &Tune, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
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
            report(err, &e);
            return 1;
        }
    };
    let _ = write!(out, "{}", outcome.table());
    if let Err(e) = record(&outcome, &t.file) {
        report(err, &e.to_string());
        return 1;
    }
    let _ = writeln!(
        out,
        "recorded {} for {} {} {} in {}",
        outcome.record.schedule,
        outcome.device.name,
        outcome.record.dtype,
        outcome.record.class,
        t.file.display()
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn tune_reads_its_problem_and_refuses_with_a_sentence() {
        let t = parse(&args(
            "--m 128 --n 6144 --k 4096 --dtype f16 --repeats 5 --file /t/x",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            (t.shape, t.dtype, t.repeats, t.file.to_str()),
            ((128, 6144, 4096), GemmDtype::F16, 5, Some("/t/x"))
        );
        assert_eq!(parse(&args("--help")), Ok(None));
        for (bad, why) in [
            ("--m 128 --n 6144", "--k missing"),
            ("--m 0 --n 1 --k 1", "--m"),
            ("--m 1 --n 1 --k 1 --dtype f32", "--dtype takes f16 or bf16"),
            ("--m 1 --n 1 --k 1 extra", "unexpected argument"),
        ] {
            let e = parse(&args(bad)).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
