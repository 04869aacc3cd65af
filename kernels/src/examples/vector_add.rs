//! `c = a + b` over `n` floats, `VEC` consecutive elements per thread.
#![doc = concat!("\n\n# Source\n\n```rust,ignore\n", include_str!("vector_add.rs"), "```")]

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// Threads per block the kernel is compiled for (`.maxntid`); launch with at most this many.
pub const THREADS: u32 = 256;

/// The targets [`vector_add`] runs on: it uses only plain loads, stores and arithmetic.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// `c[i] = a[i] + b[i]` for every `i < n`, any `n`.
///
/// Thread `g` (its index in the grid) owns elements `g*VEC .. g*VEC + VEC`. When the whole chunk
/// is in bounds it moves it with one `VEC`-wide vector load per input and one vector store (the
/// chunk loop is unrolled on the host); the thread whose chunk straddles `n` takes the tail path, a
/// device loop up to `n`. Launch `ceil(n / VEC)` threads, at most [`THREADS`] per block.
///
/// `VEC` is 1, 2 or 4. For `VEC > 1` the three pointers must be aligned to `4 * VEC` bytes (the
/// vector width); indices are `u32`, so `n < 2^32 - VEC`.
#[kernel]
pub fn vector_add<const VEC: usize>(
    k: &KernelBuilder,
    #[len(n)] a: ConstPtr<f32>,
    #[len(n)] b: ConstPtr<f32>,
    #[len(n)] c: GlobalPtr<f32>,
    n: Var<u32>,
) {
    k.max_threads(THREADS, 1, 1);
    let vec = VEC as u32;
    let first = (block_idx_x() * block_dim_x() + thread_idx_x()) * vec;
    if (first + vec).le(n) {
        let x = (a + first).load_vec::<VEC>();
        let y = (b + first).load_vec::<VEC>();
        (c + first).store_vec::<VEC>(std::array::from_fn(|j| x[j] + y[j]));
    } else {
        for i in first..n {
            c.store_at(i, a.load_at(i) + b.load_at(i));
        }
    }
}

// SAFETY: every load and store is at an index below `n` (a whole chunk only when
// `first + VEC <= n`, the tail loop up to `n`), and the typed launch checks `n` against the
// three buffers' lengths (`#[len(n)]`); only `c` is written.
unsafe impl<const VEC: usize> TrustedKernel for VectorAddKernel<VEC> {}

/// The registry's configuration: four floats (16 bytes) per thread.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    vector_add::<4>()
}
