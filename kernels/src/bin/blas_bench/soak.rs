//! `blas-bench soak`: one fused form launched back to back for a few seconds, so that the
//! card's clock and power settle on that form alone (`nvidia-smi` sampled beside it, as
//! `scripts/gpu_next.sh soak` does). The interleaved benches cannot say whether a form's added
//! DRAM traffic and work meet the card's power cap: their rounds mix the forms, and the host's
//! work between launches keeps nvidia-smi's one-second power average low.

use std::time::{Duration, Instant};

use super::{filled, handles_in, transposed, Elem, Error, Layer};
use kernels::blas::rowmajor::Strided3;
use kernels::blas::{Fusion, RowMajor};
use kernels::gemm::epilogue::{Activation, Epilogue};

/// The forms the fused benches time, as `--form` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoakForm {
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

impl std::str::FromStr for SoakForm {
    type Err = String;

    fn from_str(s: &str) -> Result<SoakForm, String> {
        Ok(match s {
            "plain" => SoakForm::Plain,
            "gelu" => SoakForm::BiasGelu,
            "silu" => SoakForm::BiasSilu,
            "swiglu" => SoakForm::Swiglu,
            "residual" => SoakForm::Residual,
            other => {
                return Err(format!(
                    "--form takes plain, gelu, silu, swiglu or residual, not `{other}`"
                ))
            }
        })
    }
}

/// Launches between waits: enough that the queue never runs dry, few enough that the run
/// stops close to its time.
const BATCH: usize = 20;

/// Runs `form` at `layer` (N, tokens, K) for `seconds` (after one checked warm-up launch), in
/// the default schedule or `config`, and prints the launches and their mean time.
pub fn soak<T: Elem>(
    layer: &Layer,
    form: SoakForm,
    seconds: f64,
    config: Option<&str>,
) -> Result<(), Error> {
    let h = handles_in(config)?;
    let (name, (n, tokens, k)) = (layer.0.as_str(), layer.1);
    let x = filled::<T>(&h.stream, tokens * k, 1)?;
    let w = filled::<T>(&h.stream, n * k, 2)?;
    let bias = filled::<T>(&h.stream, n, 3)?;
    let residual = filled::<T>(&h.stream, tokens * n, 4)?;
    let mut y = filled::<T>(&h.stream, tokens * n, 5)?;
    let (xv, wt) = (Strided3::matrix(tokens, k), transposed(k, n));
    let with_bias = |act| Fusion {
        bias: Some(bias.as_view()),
        ..Fusion::epilogue(Epilogue::bias_act(act))
    };
    let fusion = match form {
        SoakForm::Plain => Fusion::none(),
        SoakForm::BiasGelu => with_bias(Activation::GeluTanh),
        SoakForm::BiasSilu => with_bias(Activation::Silu),
        SoakForm::Swiglu => Fusion::epilogue(Epilogue::SWIGLU),
        SoakForm::Residual => Fusion {
            residual: Some(RowMajor {
                data: residual.as_view(),
                ld: n,
                batch_stride: 0,
            }),
            ..Fusion::epilogue(Epilogue::RESIDUAL)
        },
    };
    let cols = fusion.epilogue.out_cols(n);
    let plan = h.rute.matmul(&x, xv, &w, wt, &mut y, cols, &fusion)?;
    h.stream.synchronize()?;
    let run = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut launches = 0usize;
    while start.elapsed() < run {
        for _ in 0..BATCH {
            h.rute.matmul(&x, xv, &w, wt, &mut y, cols, &fusion)?;
        }
        h.stream.synchronize()?;
        launches += BATCH;
    }
    let took = start.elapsed().as_secs_f64();
    println!(
        "soak {name} {form:?} {}: {launches} launches in {took:.2} s, {:.4} ms each; {}",
        T::NAME,
        1e3 * took / launches as f64,
        plan.map(|p| p.describe()).unwrap_or_default()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::SoakForm;

    #[test]
    fn forms_parse_by_their_names_and_refuse_others() {
        assert_eq!("residual".parse(), Ok(SoakForm::Residual));
        assert_eq!("gelu".parse(), Ok(SoakForm::BiasGelu));
        let e = "relu".parse::<SoakForm>().unwrap_err();
        assert!(e.contains("not `relu`"), "{e}");
    }
}
