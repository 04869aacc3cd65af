//! # kernels
//!
//! Programs written in rute, the runtime GEMM call, and the `rute` command line tool.
//!
//! - [`guide`]: write your first kernel (a row softmax: the kernel, its PTX, a checked launch).
//! - [`examples`]: small kernels written with `#[kernel]`, one idea each:
//!   [`vector_add`](mod@examples::vector_add) (a dynamic bound and a tail),
//!   [`transpose`](mod@examples::transpose) (a padded shared tile and `bar.sync`),
//!   [`reduce_sum`](mod@examples::reduce_sum) (warp shuffles and shared memory),
//!   [`async_copy`](mod@examples::async_copy) (double-buffered `cp.async`),
//!   [`tma_round_trip`](mod@examples::tma_round_trip) (mbarrier and TMA),
//!   [`tma_pipeline`](mod@examples::tma_pipeline) (a TMA producer warp and consumer warpgroups),
//!   [`tma_stream`](mod@examples::tma_stream) (a persistent ring of TMA loads and stores) and
//!   [`wgmma_tile`](mod@examples::wgmma_tile) (one warpgroup's `wgmma`), the last four sm_90a and
//!   up. Each declares the targets it supports, shows its code on its page, and runs on the GPU
//!   through its typed launch against a CPU reference (crate `rute-tests`, feature `gpu`).
//! - [`gemm`]: the GEMM programs behind one seam ([`gemm::GemmProgram`]; [`gemm::PROGRAMS`] lists
//!   this build's), the checks, the metric and (feature `gpu`) the runtime call `Gemm`.
//! - [`hopper`]: the warp-specialized Hopper GEMM, its schedule a typed value
//!   ([`hopper::HopperSchedule`]), its default chosen by a table and a cost model over the
//!   device ([`hopper::chooser`]), and a tuner that records faster schedules ([`hopper::tune`],
//!   `rute tune`).
//! - [`multistage`]: the multistage GEMM (`cp.async`, `ldmatrix`, `mma.sync`) as a `#[kernel]`
//!   program, f16/bf16 in, f16 or f32 accumulate, any M, N and K; the GEMM program
//!   [`multistage::Multistage`].
//! - [`blackwell`]: the warp-specialized Blackwell GEMM (`tcgen05`, TMEM, two-block clusters),
//!   the warp-specialization tutorial's steps 7, 8 and 9 as configurations of one program for
//!   sm_100a ([`blackwell::BlackwellWs`], behind the same seam: `rute gemm --kernel blackwell_ws
//!   --config step9`); checked by ptxas and by tests of its barrier protocol, not yet run on
//!   Blackwell hardware, so `auto` never chooses it.
//! - [`registry`]: the kernels published by name, with their targets and a default
//!   configuration; `rute ptx NAME --target T` prints one's PTX and `rute ptx --list` lists them.
//!   Their PTX is snapshot-tested under `snapshots/` and assembled with ptxas (crate `rute-tests`).
//! - [`cases`]: each registered kernel's test case (its launch, seeded inputs and CPU
//!   reference), run in the CPU simulator (`dsl_core::sim`; `rute sim NAME`) and, with the
//!   feature `gpu`, on the GPU with the same inputs.
//!
//! Runnable programs live in `examples/` of the repository: `cargo run --example tma_pipeline`
//! (a TMA producer/consumer pipeline) and `cargo run --example gemm_bias_relu` (a tile GEMM whose
//! bias + ReLU epilogue is written in the kernel body) print their kernel's PTX, and on an sm_90
//! GPU run it and print `PASS` against a CPU reference.
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::{examples, registry};
//!
//! // A kernel with a configuration of your own: 2 floats per thread.
//! let kernel = examples::vector_add::<2>().unwrap();
//! let ptx = codegen_ptx::emit(&kernel, Target::Sm80).unwrap();
//! assert!(ptx.contains(".visible .entry vector_add("));
//!
//! // The registry's default configuration, by name.
//! let ptx = registry::ptx("tma_round_trip", Target::Sm90a).unwrap();
//! assert!(ptx.contains("cp.async.bulk.tensor.2d"));
//! assert!(registry::ptx("tma_round_trip", Target::Sm80).is_err());
//! ```

#![warn(missing_docs)]

pub mod blackwell;
pub mod blas;
pub mod cases;
pub mod examples;
pub mod gemm;
pub mod guide;
pub mod hopper;
pub mod multistage;
pub mod registry;

#[cfg(feature = "gpu")]
pub use blas::Blas;
#[cfg(feature = "gpu")]
pub use gemm::{Gemm, GemmArgs};
