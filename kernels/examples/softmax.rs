//! The row softmax of `kernels::examples::softmax`: prints its PTX, then, on a machine with an
//! NVIDIA GPU, runs it on a 1000 x 3001 matrix of pseudo-random values and compares each row
//! with a CPU reference (f64), printing PASS or FAIL. Without a GPU it prints the PTX and says
//! why it did not run.
//!
//! `cargo run -p kernels --example softmax`

use codegen_ptx::emit;
use codegen_ptx::jit::{Jit, Launch};
use dsl_core::ir::Target;
use kernels::examples;
use kernels::examples::softmax::{self, SoftmaxKernel};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let kernel = SoftmaxKernel::build(softmax::THREADS)?;
    let ptx = emit(&kernel, Target::Sm90a)?;
    println!("{ptx}");
    let jit = match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => {
            println!("softmax: not run ({e}); the PTX above is the kernel");
            return Ok(());
        }
    };
    let (rows, cols) = (1000usize, 3001usize);
    // Values in [-8, 8): exp spans six orders of magnitude within a row.
    let x: Vec<f32> = (0..rows * cols)
        .map(|i| 16.0 * examples::scatter(i) - 8.0)
        .collect();
    let want = softmax::reference(&x, cols);

    // The typed launch: the arguments' types are the kernel's (a wrong one does not compile),
    // and each buffer is checked to hold `rows * cols` elements before anything runs.
    let f = jit.compile(&kernel, Target::Sm90a)?;
    let dx = jit.upload(&x)?;
    let mut dy = jit.alloc_zeros::<f32>(rows * cols)?;
    let grid = Launch::new((rows as u32, 1, 1), (softmax::THREADS, 1, 1));
    SoftmaxKernel::launch(f.with(&grid), &dx, &mut dy, rows as u32, cols as u32)?;
    let got = jit.download(&dy)?;

    // exp within 1 ulp, sums of 3001 terms in a tree: a relative error of a few 2^-24.
    let worst = got
        .iter()
        .zip(&want)
        .map(|(g, w)| ((g - w) / w).abs())
        .fold(0.0f32, f32::max);
    let what = format!("softmax {rows} x {cols} on {}", jit.device_name()?);
    if !examples::verdict(&what, "relative error", worst, 1e-5) {
        std::process::exit(1);
    }
    Ok(())
}
