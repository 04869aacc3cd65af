//! `blas-bench`: rute's BLAS handle and row-major API timed beside cuBLAS and cuBLASLt in the
//! same process, on the same stream and buffers (CUDA events, each repeat queued behind a spin,
//! the pieces of a comparison interleaved in shuffled rounds), and the first call's cost.
//!
//! ```text
//! blas-bench pairs   [--dtype bf16|f16] [--repeats N] [--config SPEC] [--shape MxNxK]
//!                                                      every transpose pair at 4096^3, 8192^3 and three LLM shapes
//! blas-bench batched [--dtype ..] [--repeats N] [--config SPEC] [--batches BxMxNxK,..]
//!                                                      strided batches: 16 x 1024^3, 64 x 512x512x128 (TN and NN),
//!                                                      or the batches listed (B GEMMs of cuBLAS's m x n x k each),
//!                                                      rute in its default schedule or in SPEC (e.g. a hopper_ws one)
//! blas-bench fused   [--dtype ..] [--repeats N] [--config SPEC] bias+GELU, bias+SiLU, SwiGLU, residual add against the plain GEMM and cuBLASLt's bias+GELU
//! blas-bench fused-llm [--dtype ..] [--repeats N] [--config SPEC] the same over the LLM suite's 28 shapes (`rute gemm --suite llm`: a decode batch of 16 tokens to a prefill of 16k)
//!                                                      (either with --shape MxNxK: that one shape, M the tokens;
//!                                                      with --config, a form SPEC cannot take runs in the default's)
//! blas-bench out-f32 [--dtype ..] [--repeats N]         D in f32 (plain, bias+GELU, SwiGLU) against the plain GEMM's 16-bit D
//! blas-bench soak --shape MxNxK --form plain|gelu|silu|swiglu|residual [--seconds S] [--config SPEC]
//!                                                      one form back to back for S seconds (default 5), for nvidia-smi's clock and power
//! blas-bench first-call CASE                            one case's first call, step by step (run it in a fresh process)
//! blas-bench prepare                                    the warm-up call: every case compiled before traffic
//! blas-bench sanitize                                   one small call through each new path, for compute-sanitizer
//! ```
//!
//! The first-call cases: `tn` (the Hopper program, 4096^3 TN), `nn` (an MN-major operand),
//! `odd` (odd leading dimensions), `fused` (bias + GELU through the row-major API),
//! `batched` (a strided batch).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use cudarc::cublas::result::CublasError;
use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::cublaslt::{CudaBlasLT, Matmul};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use half::{bf16, f16};
use kernels::blas::colmajor::{ColMajor, Op};
use kernels::blas::rowmajor::Strided3;
use kernels::blas::{Blas, BlasElem, Fusion, RowMajor};
use kernels::gemm::epilogue::{Activation, Epilogue};
use kernels::gemm::harness::{case_seed, Rng};

#[path = "blas_bench/fused.rs"]
mod fused;
use fused::FusedForm;
#[path = "blas_bench/out_f32.rs"]
mod out_f32;
#[path = "blas_bench/soak.rs"]
mod soak;

type Error = Box<dyn std::error::Error>;

/// The element types the bench runs.
trait Elem: BlasElem + Copy + Default + cudarc::driver::ValidAsZeroBits + 'static {
    const NAME: &'static str;
    fn of(x: f32) -> Self;
}

impl Elem for bf16 {
    const NAME: &'static str = "bf16";
    fn of(x: f32) -> Self {
        bf16::from_f32(x)
    }
}

impl Elem for f16 {
    const NAME: &'static str = "f16";
    fn of(x: f32) -> Self {
        f16::from_f32(x)
    }
}

/// What the command line asked for.
struct Args {
    section: String,
    case: Option<String>,
    dtype: String,
    repeats: usize,
    /// A schedule every rute call runs in (`--config`), instead of its program's default.
    config: Option<String>,
    /// One shape (`--shape MxNxK`, M the tokens) in place of the section's list, for a profiler
    /// that should see only its launches.
    shape: Option<Layer>,
    /// The strided batches `batched` runs (`--batches`) in place of its two.
    batches: Option<Vec<BatchShape>>,
    /// The form `soak` runs (`--form`), parsed at the edge.
    form: Option<FusedForm>,
    /// How long `soak` runs (`--seconds`).
    seconds: f64,
}

/// The dimensions of `text` (`AxBx..`), each a positive integer at most `most`; `None` if any
/// is not.
fn positive_dims(text: &str, most: usize) -> Option<Vec<usize>> {
    text.split('x')
        .map(|d| d.parse::<usize>().ok().filter(|&d| d > 0 && d <= most))
        .collect()
}

/// `MxNxK` (M tokens, N output features, K input features) as a linear layer named by it.
fn parse_shape(text: &str) -> Result<Layer, String> {
    let dims = positive_dims(text, usize::MAX)
        .ok_or_else(|| format!("--shape takes MxNxK (positive dimensions), not `{text}`"))?;
    let [m, n, k] = dims[..] else {
        return Err(format!(
            "--shape takes MxNxK, three dimensions, not `{text}`"
        ));
    };
    Ok((text.to_string(), (n, m, k)))
}

/// A strided batch: its count and each GEMM's cuBLAS m, n and k.
type BatchShape = (i64, (i64, i64, i64));

/// The batches' own shapes (the section's two).
const BATCHES: [BatchShape; 2] = [(16, (1024, 1024, 1024)), (64, (512, 512, 128))];

/// `BxMxNxK[,BxMxNxK..]`: each a batch of B GEMMs of cuBLAS's m x n x k.
fn parse_batches(text: &str) -> Result<Vec<BatchShape>, String> {
    text.split(',')
        .map(|one| match positive_dims(one, 1 << 20).as_deref() {
            Some(&[b, m, n, k]) => Ok((b as i64, (m as i64, n as i64, k as i64))),
            _ => Err(format!(
                "--batches takes BxMxNxK (four positive dimensions), comma-separated, not `{one}`"
            )),
        })
        .collect()
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let section = it.next().ok_or(
        "give a section: pairs, batched, fused, fused-llm, out-f32, first-call or prepare",
    )?;
    let mut args = Args {
        section,
        case: None,
        dtype: "bf16".into(),
        repeats: 20,
        config: None,
        shape: None,
        batches: None,
        form: None,
        seconds: 5.0,
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dtype" => args.dtype = it.next().ok_or("--dtype takes bf16 or f16")?,
            "--repeats" => {
                args.repeats = it
                    .next()
                    .and_then(|r| r.parse().ok())
                    .ok_or("--repeats takes a count")?
            }
            "--config" => args.config = Some(it.next().ok_or("--config takes a schedule")?),
            "--shape" => args.shape = Some(parse_shape(&it.next().ok_or("--shape takes MxNxK")?)?),
            "--batches" => {
                args.batches = Some(parse_batches(
                    &it.next().ok_or("--batches takes BxMxNxK,..")?,
                )?)
            }
            "--form" => args.form = Some(it.next().ok_or("--form takes a form's name")?.parse()?),
            "--seconds" => {
                args.seconds = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 600.0)
                    .ok_or("--seconds takes a time in seconds, up to 600")?
            }
            case if args.case.is_none() && !case.starts_with("--") => args.case = Some(case.into()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let run = match args.dtype.as_str() {
        "bf16" => dispatch::<bf16>(&args),
        "f16" => dispatch::<f16>(&args),
        other => Err(format!("--dtype takes bf16 or f16, not {other}").into()),
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn dispatch<T: Elem>(args: &Args) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    match args.section.as_str() {
        "pairs" => {
            let layers = match &args.shape {
                Some(one) => vec![one.clone()],
                None => shapes_of(&SHAPES),
            };
            pairs::<T>(&layers, args.repeats, args.config.as_deref())
        }
        "batched" => batched::<T>(
            args.batches.as_deref().unwrap_or(&BATCHES),
            args.repeats,
            args.config.as_deref(),
        ),
        "fused" | "fused-llm" => {
            let layers = match (&args.shape, args.section.as_str()) {
                (Some(one), _) => vec![one.clone()],
                (None, "fused") => shapes_of(&SHAPES),
                (None, _) => llm_shapes(),
            };
            fused::fused::<T>(&layers, args.repeats, args.config.as_deref())
        }
        "out-f32" => out_f32::out_f32::<T>(args.repeats),
        "soak" => match (&args.shape, args.form) {
            (Some(layer), Some(form)) => {
                soak::soak::<T>(layer, form, args.seconds, args.config.as_deref())
            }
            _ => Err("soak takes --shape MxNxK and --form plain|gelu|silu|swiglu|residual".into()),
        },
        "first-call" => first_call::<T>(args.case.as_deref().unwrap_or("tn")),
        "prepare" => prepare::<T>(),
        "sanitize" => sanitize::<T>(),
        other => Err(format!("unknown section `{other}`").into()),
    }
}

/// The handles, on one stream.
struct Handles {
    stream: Arc<CudaStream>,
    rute: Blas,
    cublas: CudaBlas,
}

fn handles() -> Result<Handles, Error> {
    let stream = CudaContext::new(0)?.new_stream()?;
    let rute = Blas::try_new(stream.clone())?;
    let cublas = CudaBlas::new(stream.clone())?;
    Ok(Handles {
        stream,
        rute,
        cublas,
    })
}

/// [`handles`] with rute's calls in the schedule spelled `config`, where one is given.
fn handles_in(config: Option<&str>) -> Result<Handles, Error> {
    let mut h = handles()?;
    if let Some(spelling) = config {
        h.rute = h.rute.with_config(spelling)?;
    }
    Ok(h)
}

/// `len` values uniform in [-0.5, 0.5), drawn from `seed` by the generator `rute gemm` uses. Not
/// a cheap hash of the index: its regular bits toggle fewer of the multipliers' bits, and the
/// card then draws less power and holds a higher clock than on real data. On the H100, cuBLAS
/// took 1.23 ms at 28672 x 4096 x 4096 on such a hash here and 1.45 ms on random values in
/// `rute gemm`'s lever runs, and rute's ratio to it read 0.95-0.98 and 1.03 (results/blas.md,
/// eighth 2026-12-06 session).
fn filled<T: Elem>(stream: &Arc<CudaStream>, len: usize, seed: u32) -> Result<CudaSlice<T>, Error> {
    let mut rng = Rng::new(case_seed(u64::from(seed), len, 0, 0));
    let host: Vec<T> = (0..len).map(|_| T::of(0.5 * rng.uniform())).collect();
    Ok(stream.clone_htod(&host)?)
}

fn op_name(op: Op) -> char {
    match op {
        Op::N => 'N',
        Op::T => 'T',
    }
}

fn cublas_op(op: Op) -> cudarc::cublas::sys::cublasOperation_t {
    match op {
        Op::N => CUBLAS_OP_N,
        Op::T => CUBLAS_OP_T,
    }
}

/// One column-major call's configuration for the trait.
fn config<T: Elem>(c: &ColMajor) -> GemmConfig<T> {
    GemmConfig {
        transa: cublas_op(c.transa),
        transb: cublas_op(c.transb),
        m: c.m as i32,
        n: c.n as i32,
        k: c.k as i32,
        alpha: T::of(c.alpha),
        lda: c.lda as i32,
        ldb: c.ldb as i32,
        beta: T::of(c.beta),
        ldc: c.ldc as i32,
    }
}

/// A call's buffers.
struct Operands<T> {
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
}

/// A, B and C of `call`, filled, each as long as the call reaches (every batch).
fn operands<T: Elem>(stream: &Arc<CudaStream>, call: &ColMajor) -> Result<Operands<T>, Error> {
    let cols = |op: Op, n: i64, t: i64| if op == Op::N { n } else { t };
    // At least one element: a k = 0 call's A or B spans none, and an allocation of none fails.
    let span =
        |ld: i64, c: i64, stride: i64| ((ld * c + (call.batch - 1) * stride) as usize).max(1);
    let a = filled::<T>(
        stream,
        span(call.lda, cols(call.transa, call.k, call.m), call.stride_a),
        1,
    )?;
    let b = filled::<T>(
        stream,
        span(call.ldb, cols(call.transb, call.n, call.k), call.stride_b),
        2,
    )?;
    let c = filled::<T>(stream, span(call.ldc, call.n, call.stride_c), 3)?;
    Ok(Operands { a, b, c })
}

/// Queues `call` through `blas` (rute's handle or cuBLAS): one GEMM, or a strided batch.
///
/// # Safety
///
/// `a`, `b` and `c` hold what the call reaches ([`operands`]).
unsafe fn queue<T: Elem, G: Gemm<T>>(
    blas: &G,
    call: &ColMajor,
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    c: &mut CudaSlice<T>,
) -> Result<(), CublasError> {
    let gemm = config::<T>(call);
    // SAFETY: this function's contract.
    unsafe {
        if call.batch == 1 {
            blas.gemm(gemm, a, b, c)
        } else {
            let cfg = StridedBatchedConfig {
                gemm,
                batch_size: call.batch as i32,
                stride_a: call.stride_a,
                stride_b: call.stride_b,
                stride_c: call.stride_c,
            };
            blas.gemm_strided_batched(cfg, a, b, c)
        }
    }
}

/// W `[n, k]` row-major read as the `k x n` matrix `W^T`.
fn transposed(k: usize, n: usize) -> Strided3 {
    Strided3 {
        shape: [1, k, n],
        strides: [0, 1, k],
    }
}

/// Times rute and cuBLAS on `call` (one GEMM or a strided batch) on the same buffers; prints a
/// table row: the call, each one's median time and TFLOP/s, cuBLAS's time over rute's, and the
/// plan rute ran.
fn compare<T: Elem>(h: &Handles, call: &ColMajor, label: &str, repeats: usize) -> Result<f64, Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let Operands { a, b, mut c } = operands::<T>(&h.stream, call)?;
    let plan = h
        .rute
        .plan_for::<T>(call)?
        .map(|p| p.describe())
        .unwrap_or_default();
    let jit = h.rute.runtime().jit();
    let mut piece = |i: usize| {
        // SAFETY: a, b and c hold what the call reaches (`operands`).
        let r = unsafe {
            if i == 0 {
                queue(&h.rute, call, &a, &b, &mut c)
            } else {
                queue(&h.cublas, call, &a, &b, &mut c)
            }
        };
        r.map_err(|e| codegen_ptx::jit::JitError::Driver {
            call: if i == 0 { "rute" } else { "cuBLAS" },
            reason: format!("{e:?}: {:?}", h.rute.last_error()),
        })
    };
    // One launch per sample: rute's Hopper launches are programmatic (each overlaps its setup
    // with the kernel before it), so launches back to back in one sample would time rute's
    // overlap against cuBLAS's none.
    let times = jit.time_shuffled(repeats, 2, 7, &mut piece)?;
    let (rute, cublas) = (
        f64::from(times[0].median_ms()),
        f64::from(times[1].median_ms()),
    );
    let flop = 2.0 * (call.m * call.n * call.k * call.batch) as f64;
    let tflops = |ms: f64| flop / ms / 1e9;
    println!(
        "| {label} | {} | {:.4} ms {:.0} TFLOP/s | {:.4} ms {:.0} TFLOP/s | {:.3} | {plan} |",
        T::NAME,
        rute,
        tflops(rute),
        cublas,
        tflops(cublas),
        cublas / rute
    );
    Ok(cublas / rute)
}

/// The shapes of the pair and fused sections, as (cuBLAS m, n, k) of a linear layer `y = x W^T`
/// with `x` of n tokens: m output features, k input features.
const SHAPES: [(&str, (i64, i64, i64)); 5] = [
    ("4096^3", (4096, 4096, 4096)),
    ("8192^3", (8192, 8192, 8192)),
    ("llm qkv 6144x4096x4096", (6144, 4096, 4096)),
    ("llm up+gate 28672x4096x4096", (28672, 4096, 4096)),
    ("llm down 4096x4096x14336", (4096, 4096, 14336)),
];

/// A linear layer `y = x W^T`: its name, and (output features, tokens, input features).
type Layer = (String, (usize, usize, usize));

/// [`SHAPES`] as linear layers (cuBLAS's m is the output features, its n the tokens).
fn shapes_of(shapes: &[(&str, (i64, i64, i64))]) -> Vec<Layer> {
    shapes
        .iter()
        .map(|&(name, (n, tokens, k))| {
            (name.to_string(), (n as usize, tokens as usize, k as usize))
        })
        .collect()
}

/// The LLM suite's shapes (`rute gemm --suite llm`) as linear layers: `llm MxNxK` with M
/// tokens.
fn llm_shapes() -> Vec<Layer> {
    kernels::gemm::suites::llm_shapes()
        .into_iter()
        .map(|(m, n, k)| (format!("llm {m}x{n}x{k}"), (n, m, k)))
        .collect()
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

/// [`compare`]'s table over `calls` (each with its label), rute's calls in the schedule spelled
/// `config` where one is given, and the geometric mean of cuBLAS's time over rute's.
fn compare_all_in<T: Elem>(
    calls: Vec<(String, ColMajor)>,
    repeats: usize,
    config: Option<&str>,
) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let h = handles_in(config)?;
    println!(
        "| call | dtype | rute | cuBLAS | cuBLAS / rute | rute's plan |\n|---|---|---|---|---|---|"
    );
    let mut ratios = Vec::new();
    for (label, call) in &calls {
        ratios.push(compare::<T>(&h, call, label, repeats)?);
    }
    println!("\ngeometric mean of cuBLAS / rute: {:.3}", geomean(&ratios));
    Ok(())
}

/// Every transpose pair of each layer, rute in its default schedule or in `config`.
fn pairs<T: Elem>(layers: &[Layer], repeats: usize, config: Option<&str>) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let mut calls = Vec::new();
    for (name, (features, tokens, k)) in layers {
        let (m, n, k) = (*features as i64, *tokens as i64, *k as i64);
        for op in Op::PAIRS {
            let label = format!("{}{} {name}", op_name(op.0), op_name(op.1));
            calls.push((label, ColMajor::packed(op.0, op.1, m, n, k)));
        }
    }
    compare_all_in::<T>(calls, repeats, config)
}

fn batched<T: Elem>(
    batches: &[BatchShape],
    repeats: usize,
    config: Option<&str>,
) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let mut calls = Vec::new();
    for &(batch, (m, n, k)) in batches {
        for op in [(Op::T, Op::N), (Op::N, Op::N)] {
            let base = ColMajor::packed(op.0, op.1, m, n, k);
            let call = ColMajor {
                batch,
                stride_a: m * k,
                stride_b: k * n,
                stride_c: m * n,
                ..base
            };
            let label = format!("{}{} {batch} x {m}x{n}x{k}", op_name(op.0), op_name(op.1));
            calls.push((label, call));
        }
    }
    compare_all_in::<T>(calls, repeats, config)
}

/// One first-call case: the call, on buffers made for it.
fn case_call(case: &str) -> Result<ColMajor, Error> {
    Ok(match case {
        "tn" => ColMajor::packed(Op::T, Op::N, 4096, 4096, 4096),
        "nn" => ColMajor::packed(Op::N, Op::N, 4096, 4096, 4096),
        "odd" => ColMajor {
            lda: 4097,
            ldb: 4097,
            ldc: 4097,
            ..ColMajor::packed(Op::T, Op::N, 4096, 4096, 4096)
        },
        "batched" => ColMajor {
            batch: 16,
            stride_a: 1024 * 1024,
            stride_b: 1024 * 1024,
            stride_c: 1024 * 1024,
            ..ColMajor::packed(Op::T, Op::N, 1024, 1024, 1024)
        },
        other => {
            return Err(format!("unknown case `{other}`: tn, nn, odd, batched or fused").into())
        }
    })
}

/// A first call, step by step, in this (fresh) process: the context (not counted in the first
/// call: a server has one), planning, generating the kernel, emitting its PTX, the driver's
/// JIT and module load, the first launch to completion, and a second launch.
fn first_call<T: Elem>(case: &str) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let h = handles()?;
    h.stream.synchronize()?;
    let context_ms = ms(t);
    let cache = std::env::var("CUDA_CACHE_PATH").unwrap_or_else(|_| "~/.nv/ComputeCache".into());
    let disabled = std::env::var("CUDA_CACHE_DISABLE").is_ok_and(|v| v == "1");
    if case == "fused" {
        let (tokens, n, k) = (4096, 4096, 4096);
        let x = filled::<T>(&h.stream, tokens * k, 1)?;
        let w = filled::<T>(&h.stream, n * k, 2)?;
        let bias = filled::<T>(&h.stream, n, 3)?;
        let mut y = filled::<T>(&h.stream, tokens * n, 5)?;
        h.stream.synchronize()?;
        let wt = transposed(k, n);
        let fusion = Fusion {
            bias: Some(bias.as_view()),
            ..Fusion::epilogue(Epilogue::bias_act(Activation::GeluTanh))
        };
        let t = Instant::now();
        h.rute
            .matmul(&x, Strided3::matrix(tokens, k), &w, wt, &mut y, n, &fusion)?;
        h.stream.synchronize()?;
        let first = ms(t);
        let t = Instant::now();
        h.rute
            .matmul(&x, Strided3::matrix(tokens, k), &w, wt, &mut y, n, &fusion)?;
        h.stream.synchronize()?;
        println!(
            "| fused | {} | context {context_ms:.1} ms | first call {first:.1} ms (plan, generate, emit, JIT, load, launch) | second {:.2} ms | cache {cache}{} |",
            T::NAME,
            ms(t),
            if disabled { " (disabled)" } else { "" }
        );
        return Ok(());
    }
    let call = case_call(case)?;
    let Operands { a, b, mut c } = operands::<T>(&h.stream, &call)?;
    h.stream.synchronize()?;
    let t = Instant::now();
    let plan = h.rute.plan_for::<T>(&call)?.ok_or("nothing to compute")?;
    let plan_ms = ms(t);
    let t = Instant::now();
    let kernel = plan.kernel()?;
    let generate_ms = ms(t);
    let t = Instant::now();
    let ptx = codegen_ptx::emit(&kernel, h.rute.runtime().target())?;
    let emit_ms = ms(t);
    // The driver's JIT and load of that PTX, timed alone; the runtime's own cache then
    // generates and emits the same text again, which the JIT's module cache (keyed by the
    // text) hands back without a second driver JIT.
    let t = Instant::now();
    h.rute.runtime().jit().load(&ptx)?;
    let load_ms = ms(t);
    h.rute.runtime().function(&plan)?;
    let run = |c: &mut CudaSlice<T>| -> Result<(), Error> {
        // SAFETY: a, b and c hold what the call reaches (`operands`).
        unsafe { queue(&h.rute, &call, &a, &b, c)? };
        h.stream.synchronize()?;
        Ok(())
    };
    let t = Instant::now();
    run(&mut c)?;
    let launch_ms = ms(t);
    let t = Instant::now();
    run(&mut c)?;
    let second_ms = ms(t);
    println!(
        "| {case} | {} | context {context_ms:.1} ms | plan {plan_ms:.2} ms | generate {generate_ms:.1} ms | emit {emit_ms:.1} ms ({} KiB of PTX) | driver JIT + load {load_ms:.1} ms | first launch {launch_ms:.2} ms | first call {:.1} ms | second call {second_ms:.2} ms | cache {cache}{} | {} |",
        T::NAME,
        ptx.len() / 1024,
        plan_ms + generate_ms + emit_ms + load_ms + launch_ms,
        if disabled { " (disabled)" } else { "" },
        plan.describe()
    );
    Ok(())
}

/// The warm-up call: every first-call case prepared (compiled and loaded) before traffic, then
/// each case's first call.
fn prepare<T: Elem>() -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let h = handles()?;
    let calls: Vec<ColMajor> = ["tn", "nn", "odd", "batched"]
        .iter()
        .map(|c| case_call(c))
        .collect::<Result<_, _>>()?;
    let t = Instant::now();
    let plans = h.rute.prepare::<T>(&calls)?;
    println!(
        "prepare: {} plans compiled and loaded in {:.1} ms",
        plans.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    for (call, plan) in calls.iter().zip(&plans) {
        let Operands { a, b, mut c } = operands::<T>(&h.stream, call)?;
        h.stream.synchronize()?;
        let t = Instant::now();
        // SAFETY: a, b and c hold what the call reaches (`operands`).
        unsafe { queue(&h.rute, call, &a, &b, &mut c)? };
        h.stream.synchronize()?;
        println!(
            "  first call after prepare: {:.2} ms ({})",
            t.elapsed().as_secs_f64() * 1e3,
            plan.describe()
        );
    }
    Ok(())
}

/// One small call through each new path (every transpose pair, odd leading dimensions, a
/// strided batch, accumulation into C, and the row-major API's fused epilogues), checked
/// against nothing: for compute-sanitizer's memcheck, racecheck and synccheck, which report any
/// access outside the buffers, race or barrier misuse.
fn sanitize<T: Elem>() -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    let h = handles()?;
    let mut calls = Vec::new();
    for op in Op::PAIRS {
        calls.push(ColMajor {
            beta: 0.5,
            ..ColMajor::packed(op.0, op.1, 200, 136, 72)
        });
        let p = ColMajor::packed(op.0, op.1, 99, 37, 45);
        calls.push(ColMajor {
            lda: p.lda + 3,
            ldb: p.ldb + 1,
            ldc: p.ldc + 5,
            ..p
        });
        // k = 0 (C = beta C) with rows of A and B off 16 bytes: the multistage program, which
        // must read neither.
        let empty = ColMajor::packed(op.0, op.1, 65, 48, 0);
        calls.push(ColMajor {
            lda: empty.lda.max(1) + 1,
            ldb: empty.ldb.max(1) + 1,
            beta: 0.5,
            ..empty
        });
        calls.push(ColMajor {
            batch: 3,
            stride_a: 256 * 256,
            stride_b: 0,
            stride_c: 256 * 256,
            ..ColMajor::packed(op.0, op.1, 256, 256, 64)
        });
    }
    for call in &calls {
        let Operands { a, b, mut c } = operands::<T>(&h.stream, call)?;
        // SAFETY: a, b and c hold what the call reaches (`operands`).
        unsafe { queue(&h.rute, call, &a, &b, &mut c)? };
        h.stream.synchronize()?;
        println!(
            "{call:?}: {}",
            h.rute
                .plan_for::<T>(call)?
                .map(|p| p.describe())
                .unwrap_or_default()
        );
    }
    // The fused epilogues on a prefill's tokens and on a decode batch's (whose schedule swaps A
    // and B), D in the input type and in f32.
    let (n, k) = (512, 256);
    let every = [
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::bias_act(Activation::Silu),
        Epilogue::SWIGLU,
        Epilogue::RESIDUAL,
    ];
    for tokens in [300, 16] {
        sanitize_fused::<T, T>(&h, (tokens, n, k), &every)?;
        sanitize_fused::<T, f32>(&h, (tokens, n, k), &every)?;
    }
    // The epilogue warps (`_x`, asked for: at this K the chooser leaves the epilogue to the
    // consumers) on the elementwise epilogues, M and N off the tiles, several tiles per block.
    let handed = handles_in(Some("128x128x64s4_x"))?;
    sanitize_fused::<T, T>(&handed, (300, 1040, k), &[every[0], every[1], every[3]])?;
    Ok(())
}

/// The row-major API's fused `epilogues` on `tokens x k` times a weight `n x k`, D of type `O`.
fn sanitize_fused<T: Elem, O>(
    h: &Handles,
    (tokens, n, k): (usize, usize, usize),
    epilogues: &[Epilogue],
) -> Result<(), Error>
where
    O: kernels::gemm::strided::OutElem
        + codegen_ptx::jit::AnyBitPattern
        + cudarc::driver::DeviceRepr
        + cudarc::driver::ValidAsZeroBits,
{
    let x = filled::<T>(&h.stream, tokens * k, 1)?;
    let w = filled::<T>(&h.stream, n * k, 2)?;
    let bias = h.stream.alloc_zeros::<O>(n)?;
    let residual = h.stream.alloc_zeros::<O>(tokens * n)?;
    let mut y = h.stream.alloc_zeros::<O>(tokens * n)?;
    let wt = transposed(k, n);
    for &epilogue in epilogues {
        let fusion = Fusion {
            bias: Some(bias.as_view()),
            residual: Some(RowMajor {
                data: residual.as_view(),
                ld: n,
                batch_stride: 0,
            }),
            ..Fusion::epilogue(epilogue)
        };
        let cols = epilogue.out_cols(n);
        let plan = h.rute.matmul(
            &x,
            Strided3::matrix(tokens, k),
            &w,
            wt,
            &mut y,
            cols,
            &fusion,
        )?;
        h.stream.synchronize()?;
        println!(
            "{tokens} tokens, {}: {}",
            epilogue.describe(),
            plan.map(|p| p.describe()).unwrap_or_default()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--shape` takes M tokens first and gives the layer's (output features, tokens, input
    /// features), as `pairs`, `fused` and `soak` read it; anything else is refused by name.
    #[test]
    fn shapes_parse_tokens_first_and_refuse_others() {
        assert_eq!(
            parse_shape("4096x28672x4096"),
            Ok(("4096x28672x4096".to_string(), (28672, 4096, 4096)))
        );
        for bad in ["4096x28672", "4096x0x4096", "ax2x3", "1x2x3x4", ""] {
            let e = parse_shape(bad).unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
    }

    /// `--batches` takes a list of BxMxNxK, each checked, and names the one it refuses.
    #[test]
    fn batches_parse_as_a_list_and_refuse_others() {
        assert_eq!(
            parse_batches("16x1024x1024x1024,8x2048x512x256"),
            Ok(vec![(16, (1024, 1024, 1024)), (8, (2048, 512, 256))])
        );
        for bad in [
            "16x1024x1024",
            "0x1x1x1",
            "4x1x1x1,x",
            "16x1024x1024x1024x1",
        ] {
            let e = parse_batches(bad).unwrap_err();
            let named = bad.split(',').any(|one| e.contains(&format!("`{one}`")));
            assert!(named, "{bad}: {e}");
        }
    }
}
