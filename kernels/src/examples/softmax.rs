//! Row softmax: `y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r)`, one block per
//! row, with the block reductions of `dsl_core::kernel::reduce` and the accurate `exp`.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("softmax.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The default block size.
pub const THREADS: u32 = 256;

/// The targets [`softmax`] runs on: shuffles, shared memory and `bar.sync`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// The softmax of each row of the row-major `rows x cols` matrix `x` into `y`, any `cols`.
///
/// Block `r` owns row `r`; its threads stride over the columns three times: the row's maximum
/// ([`BlockReduce::max`]), the sum of `exp(x - max)` ([`BlockReduce::sum`]), and the outputs
/// `exp(x - max) / sum` (one `rcp.rn` per row). Subtracting the maximum keeps every `exp` at
/// most 1, so no row overflows. `x.exp()` is the accurate exponential (within 1 ulp);
/// `exp_fast` would use `ex2.approx` instead.
///
/// Launch exactly `threads` threads per block (`.reqntid`), a multiple of 32 up to 1024, and
/// `rows` blocks (a block past the last row does nothing); `rows * cols < 2^32`.
#[kernel]
pub fn softmax(
    #[host] threads: u32,
    k: &KernelBuilder,
    #[len(rows * cols)] x: ConstPtr<f32>,
    #[len(rows * cols)] y: GlobalPtr<f32>,
    rows: Var<u32>,
    cols: Var<u32>,
) {
    k.require_threads(threads, 1, 1);
    let red = BlockReduce::<f32>::new(k, "softmax_red", threads);
    let t = thread_idx_x();
    if block_idx_x() < rows {
        let start = block_idx_x() * cols;
        let (xr, yr) = (x + start, y + start);

        let mut m = Var::konst(f32::NEG_INFINITY).fresh();
        for j in (t..cols).step_by(threads) {
            m = m.max(xr.load_at(j));
        }
        let m = red.max(m);

        let mut s = Var::konst(0.0f32).fresh();
        for j in (t..cols).step_by(threads) {
            s = s + (xr.load_at(j) - m).exp();
        }
        let inv = red.sum(s).recip();

        for j in (t..cols).step_by(threads) {
            yr.store_at(j, (xr.load_at(j) - m).exp() * inv);
        }
    }
}

// SAFETY: block `r` reads and writes only row `r` (`r < rows`, checked), columns below `cols`,
// so every access is below `rows * cols`, the two buffers' `#[len]`; only `y` is written. The
// block-wide barriers of the reductions are reached by every thread of a block or by none (the
// condition is the block's).
unsafe impl TrustedKernel for SoftmaxKernel {}

/// The registry's configuration: [`THREADS`] threads per block.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    softmax(THREADS)
}

/// The CPU reference: the softmax of each row of `x` (`cols` columns), in f64.
pub fn reference(x: &[f32], cols: usize) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let e: Vec<f64> = row.iter().map(|&v| f64::from(v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.into_iter().map(move |v| (v / s) as f32)
        })
        .collect()
}
