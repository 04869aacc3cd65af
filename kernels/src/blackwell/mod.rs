//! The warp-specialized Blackwell GEMM (`blackwell_ws`, sm_100a): `D = A B^T` with f16 or bf16
//! A, B and D and f32 accumulation in tensor memory, written as the warp-specialization chapter
//! of TVM's TIRx GEMM tutorial ("the tutorial" below: "Scaling GEMM with Warp Specialization and
//! Clusters", steps 7, 8 and 9) builds it, each step a configuration of one program ([`Step`]).
//!
//! **Status: this program has not run on Blackwell hardware.** No sm_100 GPU was available
//! while it was written, and none has run it since. What has checked it:
//!
//! - `ptxas` for sm_100a assembles every step, for f16 and bf16, with no spills and no stack
//!   frame (the PTX snapshot tests, which also hold the generated PTX byte for byte);
//! - the barrier protocol of each configuration, read back from the kernel's IR
//!   ([`protocol`]), is the tutorial's: who waits and who arrives on each barrier, the counts,
//!   the CTA masks and the bytes; the tutorial's first two exercises planted as bugs break it;
//! - the UMMA instruction and shared-memory descriptors and the atoms' layouts are tested
//!   against values worked out by hand from the PTX ISA's tables, and the launch against the
//!   kernel's parameters;
//! - rute's CPU simulator (`dsl_core::sim`, which models `tcgen05`, tensor memory, TMA and
//!   clusters from the PTX ISA, independently of the atoms that emit them) runs every step on
//!   shapes with residues in M, N and K and several tiles per cluster (512x256x256,
//!   1024x768x320, 1000x776x264, and one block or pair walking six tiles), under four seeds and
//!   three scheduling policies: no race, barrier misuse, deadlock or uninitialized read, and D
//!   bit-equal to the exact product on small-integer inputs (`kernels/tests/sim/blackwell.rs`;
//!   `rute sim gemm --kernel blackwell_ws --config step9 --m 512 --n 256 --k 256`). The first two
//!   exercises planted in the program are caught there: the deadlock at the producer's wait,
//!   and the MMA reading the odd block's stage before its bytes land.
//!
//! The simulator checks the program's logic and its synchronization, not its speed, and it is
//! rute's reading of the PTX ISA, not the hardware: until the program has run on a B200, treat
//! its results as unverified. So the GEMM runtime's `auto` never chooses it ([`BlackwellWs`]);
//! `rute gemm --kernel blackwell_ws` runs it on an sm_100a device and refuses it, with a
//! sentence, on any other.
//!
//! # The steps
//!
//! | step | spelled | configuration | cluster tile | warpgroups | what it adds |
//! |------|---------|---------------|--------------|------------|--------------|
//! | 7 | `step7` | [`BlackwellConfig::step7`] | 128 x 128 | 2 | warp roles: a TMA producer warp, an MMA warp, a writeback warpgroup, four barriers |
//! | 8 | `step8` | [`BlackwellConfig::step8`] | 256 x 256 | 2 | the two-block cluster: one `cta_group::2` MMA for the pair |
//! | 9 | `step9` | [`BlackwellConfig::step9`] | 512 x 256 | 3 | two MMA consumers sharing each stage's B |
//!
//! The configuration's parts are independent ([`BlackwellConfig`]): pipeline depth, B rows per
//! block, one block or a pair ([`CtaGroup`](dsl_core::ir::op::CtaGroup)), one consumer or two
//! ([`Consumers`]), the epilogue's chunk; any combination that fits shared memory and TMEM is a
//! program. A configuration is spelled as a step and the parts that differ from it
//! ([`spelling`]): `step7_d4` is step 7 with a ring of 4 stages.
//!
//! # Roles and barriers
//!
//! Warpgroup `C` (the last; `C` consumers) holds the TMA producer (warp 3) and the MMA consumers
//! (warps `0..C`), each one elected lane; warpgroups `0..C` write back. The four barriers are
//! named `source2destination`:
//!
//! | barrier | kind | slots | count | arrives | waits |
//! |---------|------|-------|-------|--------|-------|
//! | `tma2mma` | TMA bytes | depth | 1 | the (even) block's producer, `arrive.expect_tx` of `G x` the stage's bytes; the loads complete the bytes | MMA |
//! | `mma2tma` | `tcgen05.commit` | depth | `C` | each MMA consumer once it has read the stage (a pair: in both blocks, mask `0b11`) | producer |
//! | `mma2ld` | `tcgen05.commit` | `C` | 1 | consumer `c` once its tile's MMAs are done (both blocks) | writeback `c` |
//! | `ld2mma` | arrivals | `C` | `128 G` | every writeback thread of every block, once it has read TMEM (a pair: the even block's barrier) | MMA consumer `c` |
//!
//! `G` is the CTA group (1 or 2). Each role keeps its own `PipelineState`: the producer starts at
//! phase 1 (its buffers start free), the MMA at phase 0 on `tma2mma` and at 1 on `ld2mma` (the
//! accumulator starts free), the writeback at 0. The writeback warpgroup meets on its own named
//! barrier (`bar.sync 10 + c, 128`) around each chunk's TMA store, never on the block's.
//!
//! Where rute differs from the tutorial's listing: the blocks of a pair meet at a cluster barrier
//! after initializing their barriers (the odd block's loads and arrivals reach the even block's
//! barriers, which must be initialized first); the MMA fences after its `ld2mma` wait and the
//! writeback before its arrival (`tcgen05.fence::{after,before}_thread_sync`: the TMEM reads
//! and the next tile's MMA writes are ordered through the barrier); the writeback frees the
//! accumulator after its last chunk's TMEM load (the tutorial's steps 8 and 9: after its last
//! store); the block allocates the TMEM columns its accumulators need (128, 256, 512) rather
//! than always 512.
//!
//! # The exercises
//!
//! The tutorial's three exercises are answered in [`exercises`], each with a function and a test:
//! the deadlock of two phases at 0 (drawn, and a host model of the ring), the bytes each
//! barrier sees with a pair, and the bytes per output tile of sharing B or A.
//!
//! # Behind the GEMM seam
//!
//! [`BlackwellWs`] is the program `rute gemm --kernel blackwell_ws --config step9` and
//! `kernels::gemm::Gemm` run: its schedule is a [`BlackwellConfig`], its plan
//! ([`BlackwellGemm`]) makes the kernel and its launch ([`BlackwellPlan::launch`]: persistent
//! clusters, the block's threads, the dynamic shared memory, the tensor maps of A, B and D).
//! `rute ptx blackwell_ws_f16 --target sm_100a --config step8` prints a configuration's PTX.
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::blackwell::{blackwell_kernel, BlackwellConfig, BlackwellPlan};
//! use kernels::gemm::GemmDtype;
//! let cfg = BlackwellConfig::step9(4);
//! let kernel = blackwell_kernel(cfg, GemmDtype::F16).unwrap();
//! let ptx = codegen_ptx::emit(&kernel, Target::Sm100a).unwrap();
//! assert!(ptx.contains("tcgen05.mma.cta_group::2.kind::f16"));
//! // The launch: persistent pairs of 384-thread blocks.
//! let plan = BlackwellPlan::new(cfg, GemmDtype::F16).unwrap();
//! let launch = plan.launch(4096, 4096, 4096, 148).unwrap();
//! assert_eq!((launch.grid, launch.block, launch.cluster), ((148, 1, 1), (384, 1, 1), Some((2, 1, 1))));
//! ```

mod config;
pub mod exercises;
mod plan;
mod program;
pub mod protocol;
pub mod seam;
pub mod spelling;
#[cfg(test)]
mod tests;

pub use config::{
    BarrierCounts, BlackwellConfig, ConfigError, Consumers, PlantedBug, Step, BLOCK_K, BLOCK_M,
    ELEM_BYTES, MAX_DEPTH, SMEM_PER_BLOCK, STATIC_SMEM_BYTES, WRITEBACK_BARRIER,
};
pub use plan::BlackwellPlan;
pub use program::blackwell_ws;
pub use seam::{BlackwellGemm, BlackwellWs};
pub use spelling::SpellingError;

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use dsl_core::layout::LayoutError;
use thiserror::Error;

use crate::gemm::GemmDtype;

/// The targets the program runs on: tcgen05 and TMEM are sm_100a's.
pub const TARGETS: &[Target] = &[Target::Sm100a];

/// Why a kernel of the program could not be generated.
#[derive(Debug, Error)]
pub enum BlackwellError {
    /// The configuration is outside what the program supports.
    #[error("{0}")]
    Config(ConfigError),
    /// A layout operation failed while generating (a bug for a configuration that checked).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// The PTX entry of `cfg` for `dtype`: `blackwell_ws_{dtype}_{cfg}`, e.g.
/// `blackwell_ws_f16_step7_d4`.
pub fn entry_name(cfg: &BlackwellConfig, dtype: GemmDtype) -> String {
    format!("blackwell_ws_{dtype}_{cfg}")
}

/// The registry's `blackwell_ws_f16` / `blackwell_ws_bf16`: the program's default
/// ([`BlackwellWs::DEFAULT`]), named after the registry's entry.
pub fn default_kernel(dtype: GemmDtype) -> Result<Kernel, BuildError> {
    let cfg = BlackwellWs::DEFAULT.tutorial_config();
    let mut k = blackwell_kernel(cfg, dtype).map_err(|e| match e {
        BlackwellError::Build(b) => b,
        other => BuildError::BadArgument {
            kernel: format!("blackwell_ws_{dtype}"),
            message: other.to_string(),
        },
    })?;
    k.name = format!("blackwell_ws_{dtype}");
    Ok(k)
}

/// The kernel of the configuration spelled `spec` for `dtype`, named [`entry_name`]: what `rute
/// ptx blackwell_ws_{dtype} --config SPEC` prints. The error is a sentence.
pub fn configured_kernel(spec: &str, dtype: GemmDtype) -> Result<Kernel, String> {
    let cfg: BlackwellConfig = spec.parse().map_err(|e: SpellingError| e.to_string())?;
    blackwell_kernel(cfg, dtype).map_err(|e| e.to_string())
}

/// The kernel of `cfg` for elements of `dtype`, for sm_100a, named [`entry_name`].
pub fn blackwell_kernel(cfg: BlackwellConfig, dtype: GemmDtype) -> Result<Kernel, BlackwellError> {
    kernel_of(&BlackwellPlan::new(cfg, dtype)?)
}

/// The kernel of `plan`, named [`entry_name`].
pub fn kernel_of(plan: &BlackwellPlan) -> Result<Kernel, BlackwellError> {
    let mut k = match plan.dtype {
        GemmDtype::F16 => program::blackwell_ws::<half::f16>(plan)?,
        GemmDtype::Bf16 => program::blackwell_ws::<half::bf16>(plan)?,
    };
    k.name = entry_name(&plan.cfg, plan.dtype);
    Ok(k)
}
