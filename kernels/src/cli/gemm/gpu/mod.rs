//! The GPU half of `rute gemm` (feature `gpu`): the device found, the memory checked again
//! against it, then one shape or a suite run on it ([`suites`]).

use std::io::Write;

use codegen_ptx::jit::{DeviceRepr, Jit};
use half::{bf16, f16};
use kernels::gemm::harness::{free_device_memory, l2_bytes, Case, Operands};
use kernels::gemm::metric::count_non_finite;
use kernels::gemm::{BufferLens, CublasRef, Gemm, GemmDtype, GemmElem, GemmError};

use super::memory::{check_memory, host_available, Memory};
use super::request::{Options, Request, Suite};
use super::suites::problem;
use crate::cli::streams::{report, Streams, FAILURE, SUCCESS};

mod case;
mod suites;

use self::case::{bench_line, check_line, Ctx, Failure};

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
                Some(c) => gemm.with_schedule(c),
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
            .as_ref()
            .map_or(String::new(), |c| format!(" config={c}"))
    );
    // A problem the device's programs refuse (a program asked for by name that does not run on
    // this target) is refused before anything is allocated, as the runtime would refuse it.
    let p = problem(shape, dtype, acc, opts);
    if let Some(lens) = BufferLens::for_shape(m, n, k) {
        ctx.gemm
            .tuning()
            .check(&p, lens, ctx.gemm.device())
            .map_err(GemmError::from)?;
    }
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
