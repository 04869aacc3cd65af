//! The GPU half of `rute gemm` (feature `gpu`): the device found, the memory checked again
//! against it, then one shape or a suite run on it ([`suites`]).

use std::io::Write;

use codegen_ptx::jit::{DeviceRepr, Jit};
use dsl_core::ir::Target;
use half::{bf16, f16};
use kernels::gemm::harness::{
    case_seed, free_device_memory, l2_bytes, BenchOutcome, Case, CheckOutcome, Harness, Operands,
};
use kernels::gemm::metric::count_non_finite;
use kernels::gemm::{Accum, CublasRef, Gemm, GemmDtype, GemmElem, GemmError};

use super::memory::{check_memory, host_available, Memory};
use super::request::{Options, Request, Suite};
use crate::cli::streams::{report, Streams, FAILURE, SUCCESS};

mod suites;

/// What every case runs with: the JIT, rute's GEMM and the cuBLAS reference.
struct Ctx<'j> {
    jit: &'j Jit,
    gemm: Gemm<'j>,
    cublas: CublasRef<'j>,
}

/// Device memory the memory check leaves for what it does not count: cuBLAS's handle and
/// workspace (32 MiB on Hopper) and the modules the run loads.
const DEVICE_HEADROOM: u64 = 256 << 20;

/// Runs `request` on the first GPU; returns the exit status.
pub fn execute(request: &Request, io: &mut Streams) -> i32 {
    let jit = match Jit::new(0) {
        Ok(j) => j,
        Err(e) => {
            report(io.err, &e.to_string());
            return FAILURE;
        }
    };
    // Before anything is allocated: a run larger than the device's free memory (or the
    // host's) is refused, naming what it needs and what there is.
    let device_free = match free_device_memory(&jit) {
        Ok(free) => free,
        Err(e) => {
            report(io.err, &e.to_string());
            return FAILURE;
        }
    };
    let available = Memory {
        host: host_available().unwrap_or(u64::MAX),
        device: device_free.saturating_sub(DEVICE_HEADROOM),
    };
    if let Err(e) = check_memory(request, l2_bytes(&jit) as u64, available) {
        report(io.err, &e.to_string());
        return FAILURE;
    }
    let config = request.opts().config.clone();
    let ctx = match Gemm::new(&jit).and_then(|gemm| {
        Ok(Ctx {
            jit: &jit,
            gemm: match config {
                Some(c) => gemm.with_config(c),
                None => gemm,
            },
            cublas: CublasRef::new(&jit)?,
        })
    }) {
        Ok(c) => c,
        Err(e) => {
            report(io.err, &e.to_string());
            return FAILURE;
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
    let _ = writeln!(io.out, "device: {device}");
    let result = match request {
        Request::Single {
            shape,
            check,
            bench,
            opts,
        } => single(&ctx, *shape, *check, *bench, opts, io.out),
        Request::Suite {
            suite: Suite::Correctness,
            out: file,
            opts,
        } => suites::correctness(&ctx, opts, file.as_deref(), &device, io),
        Request::Suite {
            suite,
            out: file,
            opts,
        } => suites::timed(&ctx, *suite, opts, file.as_deref(), &device, io),
    };
    match result {
        Ok(true) => SUCCESS,
        Ok(false) => FAILURE,
        Err(e) => {
            report(io.err, &e.to_string());
            FAILURE
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
    let dtype = opts.dtype_or_default();
    let acc = opts.acc_or_default();
    let (m, n, k) = shape;
    let _ = writeln!(
        out,
        "gemm: M={m} N={n} K={k} dtype={dtype} acc={acc} kernel={}{}",
        opts.kernel,
        opts.config
            .as_deref()
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
enum Failure {
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
