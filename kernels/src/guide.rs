//! # Write your first kernel
//!
//! This page writes a row softmax, `y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r)`,
//! prints its PTX, and launches it on a GPU against a CPU reference. Its code is the example
//! `first_kernel` (`kernels/examples/first_kernel.rs`), shown whole below: `cargo run -p kernels
//! --example first_kernel` runs it, and `cargo test -p kernels --doc guide` runs it as this page's
//! doc test. Both generate the kernel and assemble it with ptxas (set `RUTE_PTXAS` to a `ptxas`
//! binary); on a machine with an NVIDIA GPU they also launch it and print PASS.
//!
//! ## 1. The kernel
//!
//! A kernel is a Rust function marked `#[kernel]`. Running it on the host *generates* the
//! kernel: host values (`threads` below, marked `#[host]`, and every plain Rust value) are
//! computed now, while device values ([`Var<T>`](dsl_core::kernel::Var), pointers like
//! [`GlobalPtr<f32>`](dsl_core::kernel::GlobalPtr)) become PTX registers. `if` and `for` work on
//! both: a `for` over a range with a device bound becomes a loop in the PTX, one over a host
//! range unrolls.
//!
//! One block per row: each thread strides over the row's columns, and the block combines the
//! threads' partial results with a [`BlockReduce`](dsl_core::kernel::BlockReduce) (warp
//! shuffles, then shared memory across warps). [`Var::exp`](dsl_core::kernel::Var::exp) is the
//! accurate exponential (within 1 ulp, like CUDA's `expf`); `exp_fast` is the hardware's
//! `ex2.approx` (like `__expf`). See [`dsl_core::kernel::math`] for the other functions and their
//! accuracy.
//!
#![doc = concat!("```\n", include_str!("../examples/first_kernel.rs"), "```")]
//!
//! ## What to read next
//!
//! - [`examples::softmax`](mod@crate::examples::softmax) is this kernel as a registered example,
//!   and [`examples::layernorm`](mod@crate::examples::layernorm) a second one; `cargo run -p kernels
//!   --example softmax` runs it, `rute ptx softmax --target sm_90a` prints its PTX.
//! - [`dsl_core::kernel::math`]: `exp`, `ln`, `tanh`, `erf`, `sin`, ... for f32, f16, bf16 and
//!   the 16-bit pairs, accurate and fast, with their measured errors.
//! - [`dsl_core::kernel::reduce`]: warp and block sums, maxima and minima.
//! - Masked loads with a fill value (Triton's `other=`): `x.load_at_or(j, j.lt(cols), 0.0)`.
//! - [`dsl_core::kernel::half2`]: pack, unpack and broadcast 16-bit pairs.
//! - Threads that pass data through memory need what CUDA needs: `sync_threads()` in a block
//!   (`__syncthreads`), [`sync_warp`](dsl_core::kernel::sync_warp) between lanes of one warp
//!   (`__syncwarp`: lanes are not in lockstep), a fence and a release/acquire flag between blocks.
//!   [`dsl_core::sim`] runs a kernel on the CPU and names the Rust line of each missing one (a
//!   race in shared or global memory, a deadlock, a barrier count): `rute sim softmax` runs the
//!   registered example, and the module's doc test shows a kernel of your own.
