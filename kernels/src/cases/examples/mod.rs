//! The example kernels' cases ([`crate::examples`]): each its problem (sizes that are not
//! multiples of the block or the tile), its launch as the example's docs say it, inputs drawn
//! from the seed and the CPU reference; the pure references are public, for the GPU tests.
//!
//! | case | kernel | compared |
//! |------|--------|----------|
//! | [`VectorAdd`] | `vector_add` | bit for bit |
//! | [`Transpose`] | `transpose` | bit for bit |
//! | [`AsyncCopy`] | `async_copy` | bit for bit |
//! | [`ReduceSum`] | `reduce_sum`, two launches | each block's and the total within 1e-5 of the magnitudes |
//! | [`RowWise`] | `softmax`, `layernorm` | each within 4e-6 relative; each within 1e-4 |
//! | [`TmaRoundTrip`] | `tma_round_trip` | bit for bit |
//! | [`TmaPipeline`] | `tma_pipeline` | each row within 1e-5 of its magnitudes |
//! | [`TmaStream`] | `tma_stream` | bit for bit |
//! | [`WgmmaTile`] | `wgmma_tile` | each within 1e-5 of its terms' magnitudes |
//!
//! Every example but `wgmma_tile` is deterministic (its order of operations is the kernel's and
//! every operation is defined to the bit), so a GPU and the simulator must agree bit for bit.

mod elementwise;
mod rows;
mod tma;
mod wgmma;

pub use elementwise::{transpose_reference, AsyncCopy, Transpose, VectorAdd, Width};
pub use rows::{block_sums, ReduceSum, RowOp, RowWise};
pub use tma::{row_sums, TmaPipeline, TmaRoundTrip, TmaStream};
pub use wgmma::{tile_product, WgmmaTile};

use dsl_core::ir::Kernel;
use dsl_core::kernel::BuildError;

use super::{CaseError, Rng};
use crate::gemm::KernelBuildError;

/// `n` values of stream `stream` of `seed`, uniform in `[-scale, scale)`.
fn floats(seed: u64, stream: u64, n: usize, scale: f32) -> Vec<f32> {
    Rng::new(seed, stream)
        .floats(n)
        .into_iter()
        .map(|v| v * scale)
        .collect()
}

/// One kernel from an example's generator, its error named after the case.
fn one(case: &dyn super::Case, k: Result<Kernel, BuildError>) -> Result<Vec<Kernel>, CaseError> {
    k.map(|k| vec![k]).map_err(|e| CaseError::Build {
        case: case.describe(),
        source: KernelBuildError::Build(e),
    })
}

/// A configuration of an example that its module refuses (a bug in the case).
fn refused(case: &dyn super::Case, e: impl std::fmt::Display) -> CaseError {
    CaseError::Build {
        case: case.describe(),
        source: KernelBuildError::Build(BuildError::BadArgument {
            kernel: case.describe(),
            message: e.to_string(),
        }),
    }
}
