//! `blas-bench out-f32`: D in f32 (the unrounded sum after the epilogue) timed beside the plain
//! GEMM's 16-bit D, on the pair and fused sections' shapes and the LLM suite's decode and
//! few-token gate+up and down projections (whose schedules swap A and B).

use super::{filled, handles, shapes_of, transposed, Elem, Error, Layer, SHAPES};
use kernels::blas::rowmajor::Strided3;
use kernels::blas::Fusion;
use kernels::gemm::epilogue::{Activation, Epilogue};

/// The shapes: the pair section's, and the LLM suite's few-token projections.
fn layers() -> Vec<Layer> {
    let mut v = shapes_of(&SHAPES);
    for (m, n, k) in [(16, 28672, 4096), (64, 28672, 4096), (16, 4096, 14336)] {
        v.push((format!("llm {m}x{n}x{k}"), (n, m, k)));
    }
    v
}

/// The table: per shape, rute's plain GEMM with D in the input type, then D in f32 plain, with
/// bias + GELU and with SwiGLU, each timed in the same shuffled rounds; and what f32 costs over
/// the 16-bit D.
pub fn out_f32<T: Elem>(repeats: usize) -> Result<(), Error> {
    let h = handles()?;
    println!(
        "| shape | dtype | rute plain (D {}) | plain, D f32 | bias+GELU, D f32 | SwiGLU, D f32 | D f32 over 16-bit (plain) |\n|---|---|---|---|---|---|---|",
        T::NAME
    );
    for (name, (n, tokens, k)) in layers() {
        let x = filled::<T>(&h.stream, tokens * k, 1)?;
        let w = filled::<T>(&h.stream, n * k, 2)?;
        let mut y = filled::<T>(&h.stream, tokens * n, 5)?;
        let bias = h.stream.clone_htod(&vec![0.25f32; n])?;
        let mut y32 = h.stream.alloc_zeros::<f32>(tokens * n)?;
        let (xv, wt) = (Strided3::matrix(tokens, k), transposed(k, n));
        let f32_fusions = [
            Fusion::<f32>::none(),
            Fusion {
                bias: Some(bias.as_view()),
                ..Fusion::epilogue(Epilogue::bias_act(Activation::GeluTanh))
            },
            Fusion::epilogue(Epilogue::SWIGLU),
        ];
        let plain = Fusion::<T>::none();
        let mut plans = vec![String::new(); 4];
        let jit = h.rute.runtime().jit();
        let times = jit.time_shuffled(repeats, 4, 17, |i| {
            let fail = |e: String| codegen_ptx::jit::JitError::Driver {
                call: "bench",
                reason: e,
            };
            let plan = if i == 0 {
                h.rute.matmul(&x, xv, &w, wt, &mut y, n, &plain)
            } else {
                let f = &f32_fusions[i - 1];
                let cols = f.epilogue.out_cols(n);
                h.rute.matmul(&x, xv, &w, wt, &mut y32, cols, f)
            }
            .map_err(|e| fail(e.to_string()))?;
            plans[i] = plan.map(|p| p.describe()).unwrap_or_default();
            Ok(())
        })?;
        let ms: Vec<f64> = times.iter().map(|t| t.median_ms() as f64).collect();
        println!(
            "| {name} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:+.1}% |",
            T::NAME,
            ms[0],
            ms[1],
            ms[2],
            ms[3],
            100.0 * (ms[1] / ms[0] - 1.0)
        );
        for (what, p) in ["plain", "plain, D f32", "bias+GELU, D f32", "SwiGLU, D f32"]
            .iter()
            .zip(&plans)
        {
            println!("  {name} {what}: {p}");
        }
    }
    Ok(())
}
