//! Layer normalization of each row: `y = (x - mean) / sqrt(var + eps) * gamma + beta`, one block
//! per row, with the block reductions of `dsl_core::kernel::reduce` and the accurate `rsqrt`.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("layernorm.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// The default block size.
pub const THREADS: u32 = 256;

/// The targets [`layernorm`] runs on: shuffles, shared memory and `bar.sync`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// Normalizes each row of the row-major `rows x cols` matrix `x` into `y`: the row's mean and
/// (biased) variance, then `(x - mean) * rsqrt(var + eps) * gamma[j] + beta[j]`.
///
/// Block `r` owns row `r`; its threads stride over the columns three times: the sum (mean), the
/// sum of squared deviations (variance: two passes, so no cancellation of `E[x^2] - E[x]^2`),
/// and the outputs. Both sums are [`BlockReduce::sum`]; `rsqrt` is the accurate one (within
/// 1 ulp).
///
/// Launch exactly `threads` threads per block (`.reqntid`), a multiple of 32 up to 1024, and
/// `rows` blocks (a block past the last row does nothing); `rows * cols < 2^32`.
#[kernel]
pub fn layernorm(
    #[host] threads: u32,
    k: &KernelBuilder,
    #[len(rows * cols)] x: ConstPtr<f32>,
    #[len(cols)] gamma: ConstPtr<f32>,
    #[len(cols)] beta: ConstPtr<f32>,
    #[len(rows * cols)] y: GlobalPtr<f32>,
    rows: Var<u32>,
    cols: Var<u32>,
    eps: Var<f32>,
) {
    k.require_threads(threads, 1, 1);
    let red = BlockReduce::<f32>::new(k, "layernorm_red", threads);
    let t = thread_idx_x();
    if block_idx_x() < rows {
        let start = block_idx_x() * cols;
        let (xr, yr) = (x + start, y + start);
        let n = cols.cast::<f32>();

        let mut s = Var::konst(0.0f32).fresh();
        for j in (t..cols).step_by(threads) {
            s = s + xr.load_at(j);
        }
        let mean = red.sum(s) / n;

        let mut q = Var::konst(0.0f32).fresh();
        for j in (t..cols).step_by(threads) {
            let d = xr.load_at(j) - mean;
            q = d.mul_add(d, q);
        }
        let rstd = (red.sum(q) / n + eps).rsqrt();

        for j in (t..cols).step_by(threads) {
            let norm = (xr.load_at(j) - mean) * rstd;
            yr.store_at(j, norm.mul_add(gamma.load_at(j), beta.load_at(j)));
        }
    }
}

// SAFETY: block `r` reads and writes only row `r` of `x` and `y` (`r < rows`, checked) and the
// first `cols` elements of `gamma` and `beta`, all within their `#[len]`; only `y` is written.
// The reductions' barriers are reached by every thread of a block or by none.
unsafe impl TrustedKernel for LayernormKernel {}

/// The registry's configuration: [`THREADS`] threads per block.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    layernorm(THREADS)
}

/// The CPU reference, in f64: each row of `x` (`cols` columns) normalized, scaled by `gamma`
/// and shifted by `beta`.
pub fn reference(x: &[f32], gamma: &[f32], beta: &[f32], cols: usize, eps: f32) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            let n = cols as f64;
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / n;
            let rstd = 1.0 / (var + f64::from(eps)).sqrt();
            row.iter()
                .zip(gamma.iter().zip(beta))
                .map(move |(&v, (&g, &b))| {
                    ((f64::from(v) - mean) * rstd * f64::from(g) + f64::from(b)) as f32
                })
        })
        .collect()
}
