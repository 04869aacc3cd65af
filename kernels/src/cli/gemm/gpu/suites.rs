//! The suites on the GPU: `correctness` (every case checked, a summary per dtype and sum) and
//! the timed ones, `bench` and `llm` (each case checked, then timed against cuBLAS, the ratios'
//! geometric mean last); their tables on stdout and, with `--out`, in a markdown file. A
//! progress line on stderr, where it is a terminal.

use std::io::Write;

use kernels::gemm::{Accum, Config, GemmDtype, GemmError};

use super::super::request::{Options, Suite};
use super::super::suites::{pairs, precheck, problem, shape_label, shapes};
use super::case::{bench_line, check_line, verdict, Ctx, Failure};
use crate::cli::progress::Progress;
use crate::cli::streams::Streams;

/// Writes `text` to the `--out` file `path`, and says so on `out`.
fn write_file(path: &str, text: &str, out: &mut dyn Write) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|source| Failure::Write {
        path: path.to_string(),
        source,
    })?;
    let _ = writeln!(out, "results written to {path}");
    Ok(())
}

/// The results file's header: the suite, the device and the options it ran with.
fn header(title: &str, device: &str, opts: &Options) -> String {
    let when = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "# {title}\n\n- device: {device}\n- kernel: {}\n- config: {}\n- seed: {}, repeats: {}\n- unix time: {when}\n\n",
        opts.kernel,
        opts.config.as_ref().map_or("the kernel's default for the shape", Config::spelling),
        opts.seed,
        opts.repeats
    )
}

/// The correctness suite: every (dtype, sum) pair [`pairs`] gives, each shape checked; the
/// cases, then a summary per pair. A fault of the GPU ends it (later cases would repeat it).
pub(super) fn correctness(
    ctx: &Ctx<'_>,
    opts: &Options,
    file: Option<&str>,
    device: &str,
    io: &mut Streams,
) -> Result<bool, Failure> {
    let shapes = shapes(Suite::Correctness);
    let pairs = pairs(opts);
    let mut progress = Progress::new(pairs.len() * shapes.len(), io.err_is_terminal);
    let out = &mut *io.out;
    let mut rows = String::from("| dtype | acc | M | N | K | plan | vs f64 | cuBLAS vs f64 | vs cuBLAS | bound | unwritten | result |\n|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n");
    let mut summary = Vec::new();
    let mut all_ok = true;
    for (dtype, acc) in pairs {
        let (mut pass, mut fail, mut refused, mut errors) = (0, 0, 0, 0);
        let mut worst = 0.0f64;
        for &shape in &shapes {
            let (m, n, k) = shape;
            let label = format!("{dtype} {acc} {m:>6} x {n:>6} x {k:>6}");
            progress.start(io.err, &label);
            let checked = precheck(&problem(shape, dtype, acc, opts), &[ctx.target()])
                .map(|()| ctx.check(dtype, shape, acc, opts));
            progress.clear(io.err);
            let checked = match checked {
                Ok(checked) => checked,
                Err(reason) => {
                    refused += 1;
                    let _ = writeln!(out, "{label}  refused: {reason}");
                    rows += &format!("| {dtype} | {acc} | {m} | {n} | {k} | - | - | - | - | - | - | refused: {reason} |\n");
                    continue;
                }
            };
            match checked {
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

/// Writes the correctness suite's summary (and, given `file`, the whole table there).
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
pub(super) fn timed(
    ctx: &Ctx<'_>,
    suite: Suite,
    opts: &Options,
    file: Option<&str>,
    device: &str,
    io: &mut Streams,
) -> Result<bool, Failure> {
    let dtype = opts.dtype_or_default();
    let acc = opts.acc_or_default();
    let shapes = shapes(suite);
    let mut progress = Progress::new(shapes.len(), io.err_is_terminal);
    let out = &mut *io.out;
    let mut table = String::from(
        "| M | N | K | dtype | acc | plan | vs f64 | check | rute ms | rute TFLOP/s | rute GB/s | copy GB/s | cuBLAS ms | cuBLAS TFLOP/s | ratio |\n|---:|---:|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut all_ok = true;
    let mut ratios = Vec::new();
    for shape in shapes {
        let (m, n, k) = shape;
        let label = format!("{m} x {n} x {k} {dtype} {acc}");
        let what = shape_label(suite, shape).map_or(String::new(), |w| format!(" ({w})"));
        let _ = writeln!(out, "{label}{what}");
        progress.start(io.err, &format!("{label}: check"));
        if let Err(reason) = precheck(&problem(shape, dtype, acc, opts), &[ctx.target()]) {
            all_ok = false;
            progress.clear(io.err);
            let _ = writeln!(out, "  refused: {reason}");
            table += &format!(
                "| {m} | {n} | {k} | {dtype} | {acc} | refused: {reason} | | | | | | | | | |\n"
            );
            continue;
        }
        // Correct first: a wrong result is not timed.
        let c = ctx.check(dtype, shape, acc, opts);
        progress.clear(io.err);
        let c = c?;
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
        progress.step(io.err, &format!("{label}: bench"));
        let b = ctx.bench(dtype, shape, acc, opts);
        progress.clear(io.err);
        let b = b?;
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
        // The mid-size issue's floor, counted for every suite: how many shapes a user who
        // measures one would find clearly behind cuBLAS.
        let below = ratios.iter().filter(|&&r| r < 0.95).count();
        table += &format!(
            "\n{} shapes timed: geometric mean ratio {geomean:.3}, smallest {min:.3}, largest {max:.3}, {below} below 0.95\n",
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
