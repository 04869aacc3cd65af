//! The layer normalization of `kernels::examples::layernorm`: prints its PTX, then, on a machine
//! with an NVIDIA GPU, runs it on a 512 x 4099 matrix of pseudo-random values (with a mean far
//! from zero) and compares with a CPU reference (f64), printing PASS or FAIL. Without a GPU it
//! prints the PTX and says why it did not run.
//!
//! `cargo run -p kernels --example layernorm`

use codegen_ptx::emit;
use codegen_ptx::jit::{Jit, Launch};
use dsl_core::ir::Target;
use kernels::examples;
use kernels::examples::layernorm::{self, LayernormKernel};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let kernel = LayernormKernel::build(layernorm::THREADS)?;
    let ptx = emit(&kernel, Target::Sm90a)?;
    println!("{ptx}");
    let jit = match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => {
            println!("layernorm: not run ({e}); the PTX above is the kernel");
            return Ok(());
        }
    };
    let (rows, cols, eps) = (512usize, 4099usize, 1e-5f32);
    let x: Vec<f32> = (0..rows * cols)
        .map(|i| 1.0 + 4.0 * examples::scatter(i))
        .collect();
    let gamma: Vec<f32> = (0..cols).map(|j| 0.5 + examples::scatter(j + 7)).collect();
    let beta: Vec<f32> = (0..cols)
        .map(|j| 2.0 * examples::scatter(j + 13) - 1.0)
        .collect();
    let want = layernorm::reference(&x, &gamma, &beta, cols, eps);

    // The typed launch: arguments by type, each buffer's length checked against its `#[len]`.
    let f = jit.compile(&kernel, Target::Sm90a)?;
    let (dx, dg, db) = (jit.upload(&x)?, jit.upload(&gamma)?, jit.upload(&beta)?);
    let mut dy = jit.alloc_zeros::<f32>(rows * cols)?;
    let grid = Launch::new((rows as u32, 1, 1), (layernorm::THREADS, 1, 1));
    LayernormKernel::launch(
        f.with(&grid),
        &dx,
        &dg,
        &db,
        &mut dy,
        rows as u32,
        cols as u32,
        eps,
    )?;
    let got = jit.download(&dy)?;

    // Outputs are O(1): compare absolutely.
    let worst = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f32, f32::max);
    let what = format!("layernorm {rows} x {cols} on {}", jit.device_name()?);
    if !examples::verdict(&what, "absolute error", worst, 1e-4) {
        std::process::exit(1);
    }
    Ok(())
}
