//! `kernels::Blas` through cudarc's cuBLAS traits, beside cuBLAS itself, on the GPU (feature
//! `gpu`; without it the tests are listed as ignored).
//!
//! [`run_all`] is a program written against cudarc's `Gemm<T>` trait only, as a Rust user of
//! cuBLAS writes one: every transpose pair, alpha and beta, odd and padded leading dimensions,
//! strided batches (one with a shared operand), f16 and bf16. It runs unchanged with
//! `CudaBlas` and with `kernels::Blas`, the handle's type the only difference; each C is checked
//! against an f64 column-major reference of the same inputs, rute's error no more than cuBLAS's
//! allowance, and the elements of C between `m` and `ldc` must keep their values. Calls cuBLAS
//! refuses must be refused by `Blas` with the same status, and a sentence in `last_error`.
//! The row-major API's fused epilogues are checked against the f64 reference of the whole
//! expression.

use std::sync::Arc;

use codegen_ptx::jit::cudarc;
use cudarc::cublas::result::CublasError;
use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use cudarc::cublas::sys::cublasStatus_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::{CudaContext, CudaStream, DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};
use kernels::blas::colmajor::{colmajor_reference, ColMajor, Op};
use kernels::blas::rowmajor::Strided3;
use kernels::blas::{Fusion, RowMajor};
use kernels::gemm::epilogue::{
    Activation, Bias, Elementwise, Epilogue, Gated, Map, Residual, Source,
};
use kernels::gemm::layout::OutType;
use kernels::gemm::reference::{reference, Inputs};
use kernels::Blas;

/// An element type of these tests.
trait Elem: Copy + DeviceRepr + ValidAsZeroBits + Unpin + Send + Sync + 'static {
    const NAME: &'static str;
    fn of(x: f64) -> Self;
    fn f64(self) -> f64;
}

impl Elem for f16 {
    const NAME: &'static str = "f16";
    fn of(x: f64) -> Self {
        f16::from_f64(x)
    }
    fn f64(self) -> f64 {
        self.to_f64()
    }
}

impl Elem for bf16 {
    const NAME: &'static str = "bf16";
    fn of(x: f64) -> Self {
        bf16::from_f64(x)
    }
    fn f64(self) -> f64 {
        self.to_f64()
    }
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    fn of(x: f64) -> Self {
        x as f32
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

/// Reproducible values in [-1, 1).
fn values(seed: u64, len: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f64 / (1u64 << 24) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn stream() -> Arc<CudaStream> {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("the GPU tests need a GPU: {e}"));
    ctx.new_stream().unwrap()
}

/// One call as a cuBLAS user writes it (a batch of 1 is `gemm`, more `gemm_strided_batched`).
#[derive(Debug, Clone, Copy)]
struct Call {
    op: (Op, Op),
    mnk: (i32, i32, i32),
    ld: (i32, i32, i32),
    alpha: f32,
    beta: f32,
    batch: i32,
    strides: (i64, i64, i64),
}

impl Call {
    fn colmajor(&self) -> ColMajor {
        ColMajor {
            transa: self.op.0,
            transb: self.op.1,
            m: self.mnk.0.into(),
            n: self.mnk.1.into(),
            k: self.mnk.2.into(),
            alpha: self.alpha,
            lda: self.ld.0.into(),
            ldb: self.ld.1.into(),
            beta: self.beta,
            ldc: self.ld.2.into(),
            batch: self.batch.into(),
            stride_a: self.strides.0,
            stride_b: self.strides.1,
            stride_c: self.strides.2,
        }
    }

    /// Elements of A, B and C the call reaches (at least 1).
    fn lens(&self) -> (usize, usize, usize) {
        let (m, n, k) = (self.mnk.0 as i64, self.mnk.1 as i64, self.mnk.2 as i64);
        let cols = |op: Op, n_cols: i64, t_cols: i64| match op {
            Op::N => n_cols,
            Op::T => t_cols,
        };
        let span = |ld: i32, cols: i64, stride: i64| {
            (i64::from(ld) * cols + i64::from(self.batch - 1) * stride).max(1) as usize
        };
        (
            span(self.ld.0, cols(self.op.0, k, m), self.strides.0),
            span(self.ld.1, cols(self.op.1, n, k), self.strides.1),
            span(self.ld.2, n, self.strides.2),
        )
    }
}

fn cublas_op(op: Op) -> cudarc::cublas::sys::cublasOperation_t {
    match op {
        Op::N => CUBLAS_OP_N,
        Op::T => CUBLAS_OP_T,
    }
}

/// Every transpose pair on aligned, odd and padded shapes, scaled and accumulating, with k = 0,
/// and strided batches (one with B shared).
fn calls() -> Vec<Call> {
    let mut v = Vec::new();
    for op in Op::PAIRS {
        for (m, n, k) in [
            (64, 48, 32),
            (127, 65, 33),
            (256, 256, 256),
            (1000, 777, 520),
        ] {
            for pad in [0, 1, 8] {
                for (alpha, beta) in [(1.0, 0.0), (-1.5, 0.25)] {
                    let rows = |o: Op, nr: i32, tr: i32| if o == Op::N { nr } else { tr };
                    v.push(Call {
                        op,
                        mnk: (m, n, k),
                        ld: (rows(op.0, m, k) + pad, rows(op.1, k, n) + pad, m + pad),
                        alpha,
                        beta,
                        batch: 1,
                        strides: (0, 0, 0),
                    });
                }
            }
        }
        // k = 0: C = beta C, neither A nor B read (rows of A and B on 2 bytes: the fallback
        // program's element-wise copies).
        let rows = |o: Op, nr: i32, tr: i32| if o == Op::N { nr } else { tr };
        v.push(Call {
            op,
            mnk: (65, 48, 0),
            ld: (rows(op.0, 65, 0).max(1), rows(op.1, 0, 48).max(1), 65),
            alpha: 1.5,
            beta: 0.25,
            batch: 1,
            strides: (0, 0, 0),
        });
        for (batch, (m, n, k), share_b) in [(16, (128, 96, 64), false), (5, (33, 70, 24), true)] {
            let rows = |o: Op, nr: i32, tr: i32| if o == Op::N { nr } else { tr };
            let cols = |o: Op, nc: i32, tc: i32| if o == Op::N { nc } else { tc };
            let ld = (rows(op.0, m, k), rows(op.1, k, n), m);
            let sa = i64::from(ld.0 * cols(op.0, k, m));
            let sb = i64::from(ld.1 * cols(op.1, n, k));
            v.push(Call {
                op,
                mnk: (m, n, k),
                ld,
                alpha: 1.0,
                beta: if share_b { 1.0 } else { 0.0 },
                batch,
                strides: (sa + 8, if share_b { 0 } else { sb }, i64::from(m * n) + 16),
            });
        }
    }
    v
}

/// The program written against cudarc's `Gemm<T>`: every call on `g`, each C downloaded (or the
/// error the handle returned). Nothing here names the handle's type.
fn run_all<T: Elem, G: Gemm<T>>(
    g: &G,
    stream: &Arc<CudaStream>,
    calls: &[Call],
) -> Vec<Result<Vec<T>, CublasError>> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let (la, lb, lc) = call.lens();
            let up = |seed: u64, len: usize| {
                let host: Vec<T> = values(seed, len).into_iter().map(T::of).collect();
                stream.clone_htod(&host).unwrap()
            };
            let (a, b) = (up(3 * i as u64 + 1, la), up(3 * i as u64 + 2, lb));
            let mut c = up(3 * i as u64 + 3, lc);
            let gemm = GemmConfig {
                transa: cublas_op(call.op.0),
                transb: cublas_op(call.op.1),
                m: call.mnk.0,
                n: call.mnk.1,
                k: call.mnk.2,
                alpha: T::of(f64::from(call.alpha)),
                lda: call.ld.0,
                ldb: call.ld.1,
                beta: T::of(f64::from(call.beta)),
                ldc: call.ld.2,
            };
            // SAFETY: a, b and c hold what the call reaches (Call::lens).
            let r = unsafe {
                if call.batch == 1 {
                    g.gemm(gemm, &a, &b, &mut c)
                } else {
                    let cfg = StridedBatchedConfig {
                        gemm,
                        batch_size: call.batch,
                        stride_a: call.strides.0,
                        stride_b: call.strides.1,
                        stride_c: call.strides.2,
                    };
                    g.gemm_strided_batched(cfg, &a, &b, &mut c)
                }
            };
            r.map(|()| stream.clone_dtoh(&c).unwrap())
        })
        .collect()
}

/// The relative Frobenius error of `got` against `want` over C's extents.
fn error(call: &Call, got: &[f64], want: &[f64]) -> f64 {
    let (mut e, mut norm) = (0.0, 0.0);
    let (m, n, ldc) = (call.mnk.0 as usize, call.mnk.1 as usize, call.ld.2 as usize);
    for z in 0..call.batch as usize {
        for col in 0..n {
            for r in 0..m {
                let at = z * call.strides.2 as usize + col * ldc + r;
                e += (got[at] - want[at]).powi(2);
                norm += want[at] * want[at];
            }
        }
    }
    (e / norm.max(f64::MIN_POSITIVE)).sqrt()
}

fn same_calls<T: Elem + kernels::blas::BlasElem>()
where
    CudaBlas: Gemm<T>,
    Blas: Gemm<T>,
{
    compare_calls::<T>(&calls());
}

/// Runs `calls` through cuBLAS and `kernels::Blas` and checks rute's C against the f64 reference
/// (see the module's docs); returns the plan rute ran for each.
fn compare_calls<T: Elem + kernels::blas::BlasElem>(calls: &[Call]) -> Vec<String>
where
    CudaBlas: Gemm<T>,
    Blas: Gemm<T>,
{
    let stream = stream();
    let cublas = CudaBlas::new(stream.clone()).unwrap();
    let rute = Blas::new(stream.clone()).unwrap();
    let mut plans = Vec::new();
    let theirs = run_all(&cublas, &stream, calls);
    let ours = run_all(&rute, &stream, calls);
    let tol: f64 = if T::NAME == "bf16" { 8e-3 } else { 2e-3 };
    for (i, ((call, theirs), ours)) in calls.iter().zip(theirs).zip(ours).enumerate() {
        let plan = rute
            .plan_for::<T>(&call.colmajor())
            .ok()
            .flatten()
            .map(|p| p.describe())
            .unwrap_or_default();
        let what = format!("{} call {i} {call:?} [{plan}]", T::NAME);
        let theirs: Vec<f64> = theirs.unwrap().into_iter().map(Elem::f64).collect();
        let ours: Vec<f64> = ours
            .unwrap_or_else(|e| panic!("{what}: {e:?}: {:?}", rute.last_error()))
            .into_iter()
            .map(Elem::f64)
            .collect();
        let (la, lb, lc) = call.lens();
        let a = values(3 * i as u64 + 1, la);
        let b = values(3 * i as u64 + 2, lb);
        let c0: Vec<f64> = values(3 * i as u64 + 3, lc)
            .into_iter()
            .map(|x| T::of(x).f64())
            .collect();
        let round = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|x| T::of(x).f64()).collect() };
        let (a, b) = (round(a), round(b));
        let mut want = c0.clone();
        colmajor_reference(&call.colmajor(), &a, &b, &mut want);
        let (e_rute, e_cublas) = (error(call, &ours, &want), error(call, &theirs, &want));
        assert!(
            e_rute <= tol.max(2.0 * e_cublas),
            "{what}: rute's error {e_rute:.2e}, cuBLAS's {e_cublas:.2e}"
        );
        // Outside C's extents every element keeps its value.
        let m = call.mnk.0 as usize;
        for (at, (o, c)) in ours.iter().zip(&c0).enumerate() {
            let (z, rest) = if call.batch > 1 {
                (at / call.strides.2 as usize, at % call.strides.2 as usize)
            } else {
                (0, at)
            };
            let (col, r) = (rest / call.ld.2 as usize, rest % call.ld.2 as usize);
            let inside = (z as i32) < call.batch && r < m && (col as i32) < call.mnk.1;
            if !inside {
                assert_eq!(
                    o.to_bits(),
                    c.to_bits(),
                    "{what}: element {at} outside C written"
                );
            }
        }
        println!("{what}: rute {e_rute:.2e}, cuBLAS {e_cublas:.2e}");
        plans.push(plan);
    }
    plans
}

/// Strided batches in every transpose pair (packed, with padded leading dimensions and gaps
/// between the matrices and beta, with a B the batch shares), each as cuBLAS's strided batched
/// call computes it; on an sm_90 device each runs in one launch of the Hopper program.
fn hopper_batches<T: Elem + kernels::blas::BlasElem>()
where
    CudaBlas: Gemm<T>,
    Blas: Gemm<T>,
{
    let rows = |o: Op, nr: i32, tr: i32| if o == Op::N { nr } else { tr };
    let cols = |o: Op, nc: i32, tc: i32| if o == Op::N { nc } else { tc };
    let cases = [
        ((Op::T, Op::N), 16, (256, 192, 128), 0, 0, false),
        ((Op::N, Op::N), 64, (128, 128, 64), 0, 0, false),
        ((Op::N, Op::T), 5, (200, 136, 72), 8, 24, false),
        ((Op::T, Op::T), 3, (256, 128, 128), 16, 8, true),
    ];
    let calls: Vec<Call> = cases
        .into_iter()
        .map(|(op, batch, (m, n, k), pad, gap, share_b)| {
            let ld = (rows(op.0, m, k) + pad, rows(op.1, k, n) + pad, m + pad);
            let sa = i64::from(ld.0 * cols(op.0, k, m) + gap);
            let sb = i64::from(ld.1 * cols(op.1, n, k) + gap);
            Call {
                op,
                mnk: (m, n, k),
                ld,
                alpha: 1.0,
                beta: if gap > 0 { 0.5 } else { 0.0 },
                batch,
                strides: (sa, if share_b { 0 } else { sb }, i64::from(ld.2 * n + gap)),
            }
        })
        .collect();
    let plans = compare_calls::<T>(&calls);
    let ctx = CudaContext::new(0).unwrap();
    if ctx.compute_capability().unwrap() == (9, 0) {
        for plan in plans {
            assert!(
                plan.starts_with("hopper_ws") && plan.contains("a strided batch in one launch"),
                "{plan}"
            );
        }
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn strided_batches_in_one_hopper_launch_f16() {
    hopper_batches::<f16>();
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn strided_batches_in_one_hopper_launch_bf16() {
    hopper_batches::<bf16>();
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn blas_runs_what_cublas_runs_f16() {
    same_calls::<f16>();
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn blas_runs_what_cublas_runs_bf16() {
    same_calls::<bf16>();
}

/// Calls cuBLAS refuses: `Blas` refuses them with the same status, and says why.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn refusals_have_cublas_statuses_and_sentences() {
    let stream = stream();
    let cublas = CudaBlas::new(stream.clone()).unwrap();
    let rute = Blas::new(stream.clone()).unwrap();
    let ok = Call {
        op: (Op::N, Op::N),
        mnk: (64, 64, 64),
        ld: (64, 64, 64),
        alpha: 1.0,
        beta: 0.0,
        batch: 1,
        strides: (0, 0, 0),
    };
    let bad = [
        Call {
            ld: (63, 64, 64),
            ..ok
        },
        Call {
            ld: (64, 63, 64),
            ..ok
        },
        Call {
            ld: (64, 64, 63),
            ..ok
        },
        Call {
            mnk: (-1, 64, 64),
            ..ok
        },
    ];
    for call in bad {
        let theirs = run_all::<f16, _>(&cublas, &stream, &[call]).remove(0);
        let ours = run_all::<f16, _>(&rute, &stream, &[call]).remove(0);
        assert_eq!(
            ours.as_ref().err(),
            Some(&CublasError(cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE)),
            "{call:?}"
        );
        assert_eq!(theirs.err(), ours.err(), "{call:?}");
        let sentence = rute.last_error().unwrap().to_string();
        assert!(
            sentence.contains("is below") || sentence.contains("negative"),
            "{sentence}"
        );
    }
}

/// The row-major API's fused epilogues on rute's programs, against the f64 reference of the
/// whole expression: bias + GELU, bias + SiLU, SwiGLU, a residual, C with alpha and beta, D in
/// f32 and in the other 16-bit type; on shapes the Hopper program takes (its plan, asserted:
/// a prefill, and a decode batch and a few tokens, whose schedules swap A and B, so that a gated
/// epilogue trades its pairs between lanes) and on an odd one.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn fused_epilogues_match_the_reference() {
    let stream = stream();
    let blas = Blas::try_new(stream.clone()).unwrap();
    let epilogues = [
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::bias_act(Activation::GeluErf),
        Epilogue::bias_act(Activation::Silu),
        Epilogue::bias_act(Activation::Relu),
        Epilogue::SWIGLU,
        Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act: Activation::GeluTanh,
            residual: Residual::Add,
        }),
        Epilogue::RESIDUAL,
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Identity),
            residual: Residual::None,
        }),
    ];
    for (m, n, k) in [
        (512, 1024, 768),
        (16, 1024, 768),
        (64, 2048, 768),
        (333, 250, 100),
    ] {
        let hopper = n % 8 == 0 && k % 8 == 0;
        let mut plans = Vec::new();
        for (i, epilogue) in epilogues.iter().enumerate() {
            let e = *epilogue;
            plans.push(fused_case::<bf16, bf16>(
                &blas,
                &stream,
                (m, n, k),
                e,
                i as u64,
            ));
            plans.push(fused_case::<f16, f16>(
                &blas,
                &stream,
                (m, n, k),
                e,
                i as u64,
            ));
            if m != 64 {
                plans.push(fused_case::<bf16, f32>(
                    &blas,
                    &stream,
                    (m, n, k),
                    e,
                    50 + i as u64,
                ));
            }
        }
        plans.push(fused_case::<f16, f32>(
            &blas,
            &stream,
            (m, n, k),
            epilogues[0],
            99,
        ));
        plans.push(fused_case::<f16, bf16>(
            &blas,
            &stream,
            (m, n, k),
            epilogues[6],
            98,
        ));
        for plan in plans.iter().filter(|_| hopper) {
            assert!(plan.starts_with("hopper_ws"), "{m}x{n}x{k}: {plan}");
        }
    }
}

/// The elementwise epilogues under the Hopper schedule's epilogue warps (`_x`, asked for: the
/// producer warpgroup's idle warps finish each staged tile), D in each 16-bit type, M and N
/// off the tiles and several tiles per SM, against the f64 reference.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn epilogue_warps_match_the_reference() {
    let stream = stream();
    let blas = Blas::try_new(stream.clone())
        .unwrap()
        .with_config("128x128x64s4_x")
        .unwrap();
    let epilogues = [
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::bias_act(Activation::GeluErf),
        Epilogue::bias_act(Activation::Silu),
        Epilogue::bias_act(Activation::Relu),
        Epilogue::RESIDUAL,
        Epilogue::Elementwise(Elementwise {
            source: Source::None,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Silu),
            residual: Residual::Add,
        }),
    ];
    for (m, n, k) in [(520, 1040, 512), (333, 256, 2048)] {
        for (i, e) in epilogues.into_iter().enumerate() {
            let seed = 200 + i as u64;
            let plans = [
                fused_case::<bf16, bf16>(&blas, &stream, (m, n, k), e, seed),
                fused_case::<f16, f16>(&blas, &stream, (m, n, k), e, seed),
                fused_case::<f16, bf16>(&blas, &stream, (m, n, k), e, seed),
            ];
            for plan in plans {
                assert!(
                    plan.contains("finished and stored by the idle producer warps"),
                    "{m}x{n}x{k}: {plan}"
                );
            }
        }
    }
}

/// `D = fused(x w^T)` row-major: x `[m, k]`, w `[n, k]` (a linear layer's weight). Returns the
/// plan's description.
fn fused_case<T, O>(
    blas: &Blas,
    stream: &Arc<CudaStream>,
    (m, n, k): (usize, usize, usize),
    epilogue: Epilogue,
    seed: u64,
) -> String
where
    T: Elem + kernels::blas::BlasElem,
    O: Elem + kernels::gemm::strided::OutElem + codegen_ptx::jit::AnyBitPattern,
{
    let cols = epilogue.out_cols(n);
    let round_in = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|x| T::of(x).f64()).collect() };
    let round_out = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|x| O::of(x).f64()).collect() };
    let (x, w) = (
        round_in(values(seed, m * k)),
        round_in(values(seed + 1, n * k)),
    );
    let bias = round_out(values(seed + 2, m.max(n)));
    let res = round_out(values(seed + 3, m * cols));
    let c = round_out(values(seed + 4, m * cols));
    let up_in = |v: &[f64]| {
        stream
            .clone_htod(&v.iter().map(|&x| T::of(x)).collect::<Vec<T>>())
            .unwrap()
    };
    let up_out = |v: &[f64]| {
        stream
            .clone_htod(&v.iter().map(|&x| O::of(x)).collect::<Vec<O>>())
            .unwrap()
    };
    let (dx, dw) = (up_in(&x), up_in(&w));
    let (dbias, dres) = (up_out(&bias), up_out(&res));
    let mut dd = up_out(&c);
    let wt = Strided3 {
        shape: [1, k, n],
        strides: [0, 1, k],
    };
    let fusion = Fusion {
        epilogue,
        alpha: 0.75,
        beta: 0.5,
        c: None,
        bias: Some(dbias.as_view()),
        residual: Some(RowMajor {
            data: dres.as_view(),
            ld: cols,
            batch_stride: 0,
        }),
    };
    let plan = blas
        .matmul(&dx, Strided3::matrix(m, k), &dw, wt, &mut dd, cols, &fusion)
        .unwrap_or_else(|e| panic!("{epilogue:?}: {e}"))
        .unwrap();
    let got: Vec<f64> = stream
        .clone_dtoh(&dd)
        .unwrap()
        .into_iter()
        .map(Elem::f64)
        .collect();
    let (_, _, _, form) = kernels::blas::rowmajor::Matmul {
        a: Strided3::matrix(m, k),
        b: wt,
        d_ld: cols,
    }
    .to_rute()
    .unwrap();
    let form = kernels::gemm::layout::Form {
        epilogue,
        alpha: 0.75,
        beta: 0.5,
        out: Some(if O::NAME == "f32" {
            OutType::F32
        } else if O::NAME == "bf16" {
            OutType::Bf16
        } else {
            OutType::F16
        }),
        ..form
    };
    let mut want = c.clone();
    let inputs = Inputs {
        a: &x,
        b: &w,
        c: &c,
        bias: &bias,
        residual: &res,
        ..Inputs::default()
    };
    reference((m, n, k), &form, &inputs, &mut want);
    let (mut e, mut norm) = (0.0, 0.0);
    for (g, w) in got.iter().zip(&want) {
        e += (g - w).powi(2);
        norm += w * w;
    }
    let e = (e / norm).sqrt();
    let tol = if T::NAME == "bf16" { 8e-3 } else { 3e-3 };
    println!(
        "{} -> {} {m}x{n}x{k} {}: {e:.2e} [{}]",
        T::NAME,
        O::NAME,
        epilogue.describe(),
        plan.describe()
    );
    assert!(
        e < tol,
        "{}: error {e:.2e} [{}]",
        epilogue.describe(),
        plan.describe()
    );
    plan.describe()
}
