//! `blas-bench fused` and `fused-llm`: the fused epilogues (bias + GELU, bias + SiLU, SwiGLU,
//! the residual) timed beside rute's plain GEMM and cuBLASLt's plain and bias + GELU on each
//! linear layer, and the forms and layer operands `soak` shares.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm};
use cudarc::cublaslt::{Activation as LtActivation, CudaBlasLT, Matmul, MatmulConfig};
use cudarc::driver::{CudaSlice, CudaStream};
use kernels::blas::rowmajor::Strided3;
use kernels::blas::{Blas, Fusion, RowMajor};
use kernels::gemm::epilogue::{Activation, Epilogue};
use kernels::hopper::chooser::finish::epilogue_warps_pay;
use kernels::hopper::HopperWs;

use super::{filled, handles_in, transposed, Elem, Error, Layer};

/// The forms the fused benches time, in their tables' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FusedForm {
    /// `D = A B`.
    Plain,
    /// `D = gelu_tanh(A B + bias)`.
    BiasGelu,
    /// `D = silu(A B + bias)`.
    BiasSilu,
    /// `D = silu(gate) * up` over interleaved columns.
    Swiglu,
    /// `D = A B + R`.
    Residual,
}

impl FusedForm {
    const ALL: [FusedForm; 5] = [
        FusedForm::Plain,
        FusedForm::BiasGelu,
        FusedForm::BiasSilu,
        FusedForm::Swiglu,
        FusedForm::Residual,
    ];

    /// The form over a layer of `n` output features, its bias and residual (`tokens x n`) those
    /// given.
    pub(super) fn fusion<'a, T>(
        self,
        bias: &'a CudaSlice<T>,
        residual: &'a CudaSlice<T>,
        n: usize,
    ) -> Fusion<'a, T> {
        let with_bias = |act| Fusion {
            bias: Some(bias.as_view()),
            ..Fusion::epilogue(Epilogue::bias_act(act))
        };
        match self {
            FusedForm::Plain => Fusion::none(),
            FusedForm::BiasGelu => with_bias(Activation::GeluTanh),
            FusedForm::BiasSilu => with_bias(Activation::Silu),
            FusedForm::Swiglu => Fusion::epilogue(Epilogue::SWIGLU),
            FusedForm::Residual => Fusion {
                residual: Some(RowMajor {
                    data: residual.as_view(),
                    ld: n,
                    batch_stride: 0,
                }),
                ..Fusion::epilogue(Epilogue::RESIDUAL)
            },
        }
    }
}

impl std::str::FromStr for FusedForm {
    type Err = String;

    fn from_str(s: &str) -> Result<FusedForm, String> {
        Ok(match s {
            "plain" => FusedForm::Plain,
            "gelu" => FusedForm::BiasGelu,
            "silu" => FusedForm::BiasSilu,
            "swiglu" => FusedForm::Swiglu,
            "residual" => FusedForm::Residual,
            other => {
                return Err(format!(
                    "--form takes plain, gelu, silu, swiglu or residual, not `{other}`"
                ))
            }
        })
    }
}

/// A linear layer's operands, random: x (`tokens x k`), W (`n x k`), the bias (`n`), the
/// residual and y (`tokens x n`).
pub(super) struct LayerOperands<T> {
    pub(super) x: CudaSlice<T>,
    pub(super) w: CudaSlice<T>,
    pub(super) bias: CudaSlice<T>,
    pub(super) residual: CudaSlice<T>,
    pub(super) y: CudaSlice<T>,
}

impl<T: Elem> LayerOperands<T> {
    pub(super) fn new(
        stream: &Arc<CudaStream>,
        (n, tokens, k): (usize, usize, usize),
    ) -> Result<LayerOperands<T>, Error> {
        Ok(LayerOperands {
            x: filled(stream, tokens * k, 1)?,
            w: filled(stream, n * k, 2)?,
            bias: filled(stream, n, 3)?,
            residual: filled(stream, tokens * n, 4)?,
            y: filled(stream, tokens * n, 5)?,
        })
    }
}

/// The fused epilogues timed beside rute's plain GEMM and cuBLASLt (plain and bias+GELU) on each
/// linear layer `y = epilogue(x W^T)` of `layers`, row-major x `[tokens, k]` and W `[n, k]`.
pub(super) fn fused<T: Elem>(
    layers: &[Layer],
    repeats: usize,
    config: Option<&str>,
) -> Result<(), Error>
where
    CudaBlas: Gemm<T>,
    CudaBlasLT: Matmul<T>,
    Blas: Gemm<T>,
{
    // A schedule to weigh beside the defaults (a ping-pong one, whose consumers take turns so
    // that one's epilogue runs under the other's main loop), for every rute call.
    let h = handles_in(config)?;
    let lt = CudaBlasLT::new(h.stream.clone())?;
    println!(
        "| shape | dtype | rute plain | rute bias+GELU | bias+SiLU | SwiGLU | residual | cuBLASLt plain | cuBLASLt bias+GELU | rute fused over plain (worst) | cuBLASLt bias+GELU / rute bias+GELU | bias+GELU, the other finish (epilogue warps or consumers) | bias+SiLU, other finish | residual, other finish | SwiGLU, staging kept | cuBLASLt D = AB + C | residual over plain: rute, cuBLASLt (C) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (name, (n, tokens, k)) in layers {
        let (name, tokens, n, k) = (name.as_str(), *tokens, *n, *k);
        let LayerOperands {
            x,
            w,
            bias,
            residual,
            mut y,
        } = LayerOperands::new(&h.stream, (n, tokens, k))?;
        let xv = Strided3::matrix(tokens, k);
        let wt = transposed(k, n);
        let [plain, gelu, silu, swiglu, res] =
            FusedForm::ALL.map(|form| form.fusion(&bias, &residual, n));
        let fusions = [&plain, &gelu, &silu, &swiglu, &res];
        let lt_cfg = MatmulConfig {
            transa: true,
            transb: false,
            transc: false,
            m: n as u64,
            n: tokens as u64,
            k: k as u64,
            alpha: 1.0,
            lda: k as i64,
            ldb: k as i64,
            beta: 0.0,
            ldc: n as i64,
            stride_a: None,
            stride_b: None,
            stride_c: None,
            stride_bias: None,
            batch_size: None,
        };
        // The other finish of bias + GELU, bias + SiLU and the residual, timed beside the
        // default's on a second handle on the same stream: where the default hands bias + GELU
        // to the epilogue warps (`_x`), the same schedule without them; where it does not (one
        // tile a block, a short K), the same schedule with them. The A/B of the epilogue warps
        // in one process, either way (each piece's plan is printed below the table). Where the
        // schedule cannot take the warps, or a schedule is given, the default handle again.
        let device = h.rute.runtime().device().clone();
        let without = HopperWs::default_schedule(tokens, n, k, &device);
        let other = without.with_epilogue_warps().map(|with| {
            let gelu = Epilogue::bias_act(Activation::GeluTanh);
            if epilogue_warps_pay(&with, (tokens, n, k), &gelu, device.sms) {
                without
            } else {
                with
            }
        });
        let other = match (&config, other) {
            (None, Some(schedule)) => {
                Some(Blas::try_new(h.stream.clone())?.with_config(&schedule.to_string())?)
            }
            _ => None,
        };
        let other = other.as_ref().unwrap_or(&h.rute);
        // Where the default gives SwiGLU the plain schedule's staging tile as stages (a gated
        // form never writes it), the plain schedule with its staging on a third handle: that
        // lever's A/B. Elsewhere the default handle again.
        let freed = without.without_staging(device.smem_per_block);
        let kept = match (&config, freed) {
            (None, Some(_)) => {
                Some(Blas::try_new(h.stream.clone())?.with_config(&without.to_string())?)
            }
            _ => None,
        };
        let kept = kept.as_ref().unwrap_or(&h.rute);
        // With a schedule given, a form it cannot take (a gated one under `_x`) runs in the
        // default's, found once before the timing; its plan line below says which it ran.
        let default = match config {
            Some(_) => Some(Blas::try_new(h.stream.clone())?),
            None => None,
        };
        let rute_piece = |i: usize| match i {
            0..=4 => Some((&h.rute, fusions[i])),
            7..=9 => Some((other, [&gelu, &silu, &res][i - 7])),
            10 => Some((kept, &swiglu)),
            _ => None,
        };
        let mut refused = [false; 12];
        if let Some(default) = &default {
            for (i, r) in refused.iter_mut().enumerate() {
                if let Some((handle, f)) = rute_piece(i) {
                    let cols = f.epilogue.out_cols(n);
                    if handle.matmul(&x, xv, &w, wt, &mut y, cols, f).is_err() {
                        *r = true;
                        default.matmul(&x, xv, &w, wt, &mut y, cols, f)?;
                    }
                }
            }
        }
        // Each rute piece's plan, by piece (the rounds' orders are shuffled).
        let mut plans: [Option<String>; 12] = Default::default();
        let jit = h.rute.runtime().jit();
        let mut piece = |i: usize| {
            let fail = |e: String| codegen_ptx::jit::JitError::Driver {
                call: "bench",
                reason: e,
            };
            // Piece `i` is column `i` of the table below: a rute call on its handle (the
            // default's, the other finish's, the staging kept's), else a cuBLASLt call (plain,
            // bias + GELU, reading C).
            let rute = rute_piece(i).map(|(handle, f)| match (&default, refused[i]) {
                (Some(d), true) => (d, f),
                _ => (handle, f),
            });
            if let Some((handle, f)) = rute {
                let cols = f.epilogue.out_cols(n);
                let p = handle
                    .matmul(&x, xv, &w, wt, &mut y, cols, f)
                    .map_err(|e| fail(e.to_string()))?;
                plans[i].get_or_insert_with(|| p.map(|p| p.describe()).unwrap_or_default());
                return Ok(());
            }
            let cfg = match i {
                5 | 6 => lt_cfg,
                // cuBLASLt reading C (beta = 1, C in place of D): the peer's residual add,
                // whose cost over its plain call says what reading one more matrix costs.
                _ => MatmulConfig {
                    beta: 1.0,
                    ..lt_cfg
                },
            };
            let act = (i == 6).then_some(LtActivation::Gelu);
            let b = (i == 6).then_some(&bias);
            // SAFETY: w, x and y hold the n x k, tokens x k and tokens x n matrices; with beta
            // = 1, C is D, read before it is written.
            unsafe { lt.matmul(cfg, &w, &x, &mut y, b, act.as_ref()) }
                .map_err(|e| fail(format!("cuBLASLt: {e:?}")))
        };
        // One launch per sample, as `compare` says.
        let times = jit.time_shuffled(repeats, 12, 11, &mut piece)?;
        let ms: Vec<f64> = times.iter().map(|t| f64::from(t.median_ms())).collect();
        let worst = ms[1..5].iter().cloned().fold(0.0, f64::max) / ms[0] - 1.0;
        println!(
            "| {name} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:+.1}% | {:.3} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:+.1}%, {:+.1}% |",
            T::NAME,
            ms[0],
            ms[1],
            ms[2],
            ms[3],
            ms[4],
            ms[5],
            ms[6],
            100.0 * worst,
            ms[6] / ms[1],
            ms[7],
            ms[8],
            ms[9],
            ms[10],
            ms[11],
            100.0 * (ms[4] / ms[0] - 1.0),
            100.0 * (ms[11] / ms[5] - 1.0)
        );
        let labels = [
            "plain",
            "bias+GELU",
            "bias+SiLU",
            "SwiGLU",
            "residual",
            "",
            "",
            "bias+GELU, other finish",
            "bias+SiLU, other finish",
            "residual, other finish",
            "SwiGLU, staging kept",
        ];
        for (what, p) in labels.iter().zip(&plans) {
            if let Some(p) = p {
                println!("  {name} {what}: {p}");
            }
        }
    }
    Ok(())
}
