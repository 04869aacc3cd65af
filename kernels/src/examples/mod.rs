//! The example kernels, each written with `#[kernel]`: host configuration arrives as `#[host]`
//! parameters, device control flow is plain `if`/`for`/`while` on device values.
//!
//! | module | kernel | shows | targets |
//! |--------|--------|-------|---------|
//! | [`vector_add`](mod@vector_add) | `c = a + b` | a dynamic bound, vector loads, a device-loop tail | sm_80, sm_90a, sm_100a |
//! | [`transpose`](mod@transpose) | `dst = src^T` | a padded 32x32 shared tile, `bar.sync`, any extents | sm_80, sm_90a, sm_100a |
//! | [`reduce_sum`](mod@reduce_sum) | sum of `n` floats | `shfl.down` in warps, shared memory across warps, two passes | sm_80, sm_90a, sm_100a |
//! | [`async_copy`](mod@async_copy) | `dst = src` | `cp.async` into two shared buffers, `commit_group`/`wait_group` | sm_80, sm_90a, sm_100a |
//! | [`tma_round_trip`](mod@tma_round_trip) | a 2-D tensor copied box by box | mbarrier with `expect_tx`, TMA load and store, tensor maps as parameters | sm_90a, sm_100a |
//! | [`softmax`](mod@softmax) | the softmax of each row | block reductions ([`dsl_core::kernel::BlockReduce`]), the accurate `exp` and `recip` | sm_80, sm_90a, sm_100a |
//! | [`layernorm`](mod@layernorm) | each row normalized, scaled and shifted | two block sums, the accurate `rsqrt`, `mul_add` | sm_80, sm_90a, sm_100a |
//! | [`tma_pipeline`](mod@tma_pipeline) | row sums of a large matrix | a TMA producer warp, two consumer warpgroups, a 4-stage ring with full/empty barriers | sm_90a, sm_100a |
//! | [`wgmma_tile`](mod@wgmma_tile) | `D = A B^T` of one 64x64 tile | `wgmma` from swizzled shared memory through GMMA descriptors | sm_90a |
//! | [`tma_stream`](mod@tma_stream) | `D = A` in the short-K GEMM's k-tiles | a persistent ring of TMA loads and stores, stages freed by `wait_group.read` | sm_90a, sm_100a |
//!
//! Each module has the `#[kernel]` function (call it with its host configuration to get the
//! [`dsl_core::ir::Kernel`]) and its typed signature (`VectorAddKernel` for `vector_add`: `build`
//! and `launch`, see [`dsl_core::kernel::signature`]), a `TARGETS` list and a `default_kernel()`
//! with the configuration [`crate::registry`] publishes. All but `reduce_sum` (which writes one
//! element per block: its safety depends on the grid) are `TrustedKernel`s, launched safely.

pub mod async_copy;
pub mod layernorm;
pub mod reduce_sum;
pub mod softmax;
pub mod tma_pipeline;
pub mod tma_round_trip;
pub mod tma_stream;
pub mod transpose;
pub mod vector_add;
pub mod wgmma_tile;

pub use async_copy::async_copy;
pub use layernorm::layernorm;
pub use reduce_sum::reduce_sum;
pub use softmax::softmax;
pub use tma_round_trip::tma_round_trip;
pub use transpose::transpose;
pub use vector_add::vector_add;
pub use wgmma_tile::wgmma_tile;

/// The error of a registered example whose fixed configuration failed to build: a bug in the
/// example, reported as `BadArgument` with the configuration's reason.
fn config_error(kernel: &str, e: &dyn std::fmt::Display) -> dsl_core::kernel::BuildError {
    dsl_core::kernel::BuildError::BadArgument {
        kernel: kernel.into(),
        message: e.to_string(),
    }
}

/// A value in [0, 1) that jumps around with `i` (Knuth's multiplicative hash, 16 bits): the
/// reproducible input data of the runnable examples (`cargo run -p kernels --example NAME`).
pub fn scatter(i: usize) -> f32 {
    ((i as u32).wrapping_mul(2_654_435_761) >> 16) as f32 / 65536.0
}

/// The verdict line of a runnable example: `what: worst <error> <measure> (bound <bound>):
/// PASS` or `FAIL`, printed; whether it passed.
pub fn verdict(what: &str, measure: &str, worst: f32, bound: f32) -> bool {
    let pass = worst <= bound;
    println!(
        "{what}: worst {measure} {worst:.2e} (bound {bound:.0e}): {}",
        if pass { "PASS" } else { "FAIL" }
    );
    pass
}
