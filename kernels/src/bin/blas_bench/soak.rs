//! `blas-bench soak`: one fused form launched back to back for a few seconds, so that the
//! card's clock and power settle on that form alone (`nvidia-smi` sampled beside it, as
//! `scripts/gpu_next.sh soak` does). The interleaved benches cannot say whether a form's added
//! DRAM traffic and work meet the card's power cap: their rounds mix the forms, and the host's
//! work between launches keeps nvidia-smi's one-second power average low.

use std::time::{Duration, Instant};

use super::fused::{FusedForm, LayerOperands};
use super::{handles_in, transposed, Elem, Error, Layer};
use kernels::blas::rowmajor::Strided3;

/// Launches between waits: enough that the queue never runs dry, few enough that the run
/// stops close to its time.
const BATCH: usize = 20;

/// Runs `form` at `layer` (N, tokens, K) for `seconds` (after one checked warm-up launch), in
/// the default schedule or `config`, and prints the launches and their mean time.
pub fn soak<T: Elem>(
    layer: &Layer,
    form: FusedForm,
    seconds: f64,
    config: Option<&str>,
) -> Result<(), Error> {
    let h = handles_in(config)?;
    let (name, (n, tokens, k)) = (layer.0.as_str(), layer.1);
    let LayerOperands {
        x,
        w,
        bias,
        residual,
        mut y,
    } = LayerOperands::<T>::new(&h.stream, (n, tokens, k))?;
    let (xv, wt) = (Strided3::matrix(tokens, k), transposed(k, n));
    let fusion = form.fusion(&bias, &residual, n);
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
    use super::FusedForm;

    #[test]
    fn forms_parse_by_their_names_and_refuse_others() {
        assert_eq!("residual".parse(), Ok(FusedForm::Residual));
        assert_eq!("gelu".parse(), Ok(FusedForm::BiasGelu));
        let e = "relu".parse::<FusedForm>().unwrap_err();
        assert!(e.contains("not `relu`"), "{e}");
    }
}
