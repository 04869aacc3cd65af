// A first kernel: a row softmax, its PTX, and a checked launch against a CPU reference. This
// file is the guide's code (`kernels::guide`, "Write your first kernel") and its doc test.
// Run it: `RUTE_PTXAS=/path/to/ptxas cargo run -p kernels --example first_kernel`.

use codegen_ptx::jit::{Jit, Launch};
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn row_softmax(
    #[host] threads: u32,
    k: &KernelBuilder,
    #[len(rows * cols)] x: ConstPtr<f32>,
    #[len(rows * cols)] y: GlobalPtr<f32>,
    rows: Var<u32>,
    cols: Var<u32>,
) {
    k.require_threads(threads, 1, 1);
    let red = BlockReduce::<f32>::new(k, "red", threads);
    let t = thread_idx_x();
    // A block past the last row does nothing: the kernel stays inside `rows * cols` whatever
    // the grid, which is what lets its launch be safe (below).
    if block_idx_x() < rows {
        let row = block_idx_x() * cols;
        let (x, y) = (x + row, y + row);

        // The row's maximum: each thread's, then the block's (in every thread).
        let mut m = Var::konst(f32::NEG_INFINITY).fresh();
        for j in (t..cols).step_by(threads) {
            m = m.max(x.load_at(j));
        }
        let m = red.max(m);

        // The sum of exp(x - max), then its reciprocal.
        let mut s = Var::konst(0.0f32).fresh();
        for j in (t..cols).step_by(threads) {
            s = s + (x.load_at(j) - m).exp();
        }
        let inv = red.sum(s).recip();

        for j in (t..cols).step_by(threads) {
            y.store_at(j, (x.load_at(j) - m).exp() * inv);
        }
    }
}

// `#[kernel]` also made `RowSoftmaxKernel`, the kernel's typed signature: `build` generates
// it, `launch` takes one argument per parameter, by type. A safe launch needs the promise
// that the code stays inside what the signature gives it: `x` is only read, and every access
// is below `rows * cols`, the length `#[len]` makes the launch check on each buffer.
// SAFETY: as just said: block `r` touches row `r < rows` only, columns below `cols`.
unsafe impl TrustedKernel for RowSoftmaxKernel {}

fn main() {
    // ## 2. Its PTX
    //
    // Calling the function with its host arguments builds the kernel's IR; `emit` turns it into
    // PTX text for a target, and ptxas (through `RUTE_PTXAS`) checks that it assembles.
    let kernel = RowSoftmaxKernel::build(256).unwrap();
    let ptx = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
    assert!(ptx.contains(".visible .entry row_softmax("));
    assert!(ptx.contains("shfl.sync.bfly.b32") && ptx.contains("bar.sync 0"));
    println!("{ptx}");
    let report = codegen_ptx::ptxas::assemble(&ptx, Target::Sm90a).unwrap();
    assert_eq!(report.spill_store_bytes, 0);

    // ## 3. A checked launch
    //
    // The JIT compiles the typed kernel; the launch takes the arguments in the signature's order
    // and types (a `&mut` buffer for `y`, which the kernel writes: a `&` one would not compile),
    // checks each buffer's length and the launch against the device's limits, then launches.
    let jit = match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => {
            println!("no launch on this machine: {e}");
            return;
        }
    };
    let (rows, cols) = (300usize, 1000usize);
    let x: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 37) % 101) as f32 / 10.0 - 5.0)
        .collect();
    let dx = jit.upload(&x).unwrap();
    let mut dy = jit.alloc_zeros::<f32>(rows * cols).unwrap();
    let f = jit.compile(&kernel, Target::Sm90a).unwrap();
    let grid = Launch::new((rows as u32, 1, 1), (256, 1, 1));
    RowSoftmaxKernel::launch(f.with(&grid), &dx, &mut dy, rows as u32, cols as u32).unwrap();
    let y = jit.download(&dy).unwrap();

    // The CPU reference, in f64.
    for (xr, yr) in x.chunks(cols).zip(y.chunks(cols)) {
        let m = xr.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let e: Vec<f64> = xr.iter().map(|&v| f64::from(v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        for (got, want) in yr.iter().zip(e.iter().map(|v| v / s)) {
            // exp and recip within 1 ulp, a tree of about 20 rounded additions: under 4e-6.
            assert!(
                (f64::from(*got) - want).abs() <= 4e-6 * want,
                "{got} vs {want}"
            );
        }
    }
    println!("PASS");
}
