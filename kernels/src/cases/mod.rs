//! # Each registered kernel's test case: its launch, seeded inputs and CPU reference
//!
//! A [`Case`] is one problem for one registered kernel (an example, or a GEMM program's plan):
//! it says which kernels run ([`Case::kernels`]), and for a seed the [`Run`]: the buffers with
//! inputs drawn from the seed, the launches in order (grid, block, cluster, dynamic shared
//! memory, arguments), and what the outputs must hold ([`Expect`]: the CPU reference and how
//! close). The same run goes to the simulator ([`simulate`]: `dsl_core::sim`, every check on)
//! and, with the feature `gpu`, to the GPU through the JIT (`gpu`), so that the two are
//! compared on the same inputs.
//!
//! A GEMM case ([`GemmCase`]) runs the launch the program's plan makes ([`LaunchPlan`]:
//! grid, cluster, tensor maps, tables, workspace, the reduction after) unchanged; the adapter
//! ([`gemm::steps`]) turns its arguments into buffers and arguments of a [`Run`].
//!
//! Every registered kernel has its default case ([`crate::registry::Registered::case`]), which
//! `rute sim NAME` runs; the tests run more (other configurations and sizes, the sweep's GEMM
//! configurations).
//!
//! ```
//! use dsl_core::sim::Schedule;
//! use kernels::cases::{simulate::Simulated, Case};
//! use kernels::registry;
//!
//! let case = (registry::find("vector_add").unwrap().case)().unwrap();
//! let sim = Simulated::new(case.as_ref()).unwrap();
//! let outcome = sim.run(7, Schedule::Random).unwrap();
//! assert!(outcome.passed(), "{outcome}");
//! // The same seed gives the same report, byte for byte.
//! assert_eq!(outcome.to_string(), sim.run(7, Schedule::Random).unwrap().to_string());
//! ```

pub mod examples;
pub mod expect;
pub mod gemm;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod run;
pub mod simulate;

pub use expect::{Agreement, Check, Expect, Mismatch};
pub use gemm::{GemmCase, Values};
pub use run::{Buffer, CaseArg, Contents, Data, Elem, Run, Shape, Step};

use dsl_core::ir::{IrError, Kernel};
use dsl_core::sim::SimError;
use thiserror::Error;

use crate::gemm::{Device, KernelBuildError, LaunchPlan};

/// One problem for one registered kernel: its kernels, and for each seed its run.
pub trait Case: std::fmt::Debug + Send + Sync {
    /// What runs on which problem, in a few words: `vector_add, 4 per thread, n = 1003`.
    fn describe(&self) -> String;

    /// The kernels the run's steps launch ([`Step::kernel`] indexes them).
    fn kernels(&self) -> Result<Vec<Kernel>, CaseError>;

    /// The run for `seed`: inputs drawn from it, the launches, the reference.
    fn run(&self, seed: u64) -> Result<Run, CaseError>;
}

/// Why a case could not run (not a wrong answer: that is a [`Mismatch`]).
#[derive(Debug, Error)]
pub enum CaseError {
    /// Generating a kernel failed.
    #[error("generating the kernel of {case} failed: {source}")]
    Build {
        /// The case.
        case: String,
        /// Why.
        source: KernelBuildError,
    },
    /// A generated kernel failed the IR's checks (a bug in the kernel or the builder).
    #[error("the kernel `{kernel}` is not well formed: {source}")]
    Ir {
        /// The kernel.
        kernel: String,
        /// The check's error.
        source: IrError,
    },
    /// The problem or the configuration was refused (a sentence saying why).
    #[error("{0}")]
    Refused(String),
    /// The simulator stopped (an op it does not model, a bad launch, the step limit).
    #[error("simulating launch {step} (`{kernel}`): {source}")]
    Sim {
        /// The launch, counted from 1.
        step: usize,
        /// Its kernel.
        kernel: String,
        /// The simulator's error.
        source: SimError,
    },
    /// The run's description is inconsistent (a bug in the case).
    #[error("the run of {case} is inconsistent: {reason}")]
    BadRun {
        /// The case.
        case: String,
        /// What is wrong.
        reason: String,
    },
    /// The GPU failed (feature `gpu`).
    #[cfg(feature = "gpu")]
    #[error("on the GPU: {0}")]
    Gpu(Box<codegen_ptx::jit::JitError>),
}

#[cfg(feature = "gpu")]
impl From<codegen_ptx::jit::JitError> for CaseError {
    fn from(e: codegen_ptx::jit::JitError) -> CaseError {
        CaseError::Gpu(Box::new(e))
    }
}

impl CaseError {
    /// Whether the run stopped because a family of ops the kernel uses is not modelled by the
    /// simulator yet: not a defect of the kernel.
    pub fn is_unmodelled(&self) -> bool {
        matches!(
            self,
            CaseError::Sim {
                source: SimError::Unsupported { .. },
                ..
            }
        )
    }
}

/// SMs of the device the cases plan for and the simulator runs with: few, so that a persistent
/// grid walks several tiles per block and every block is resident at once.
pub const SMS: u32 = 4;

/// The device the cases plan GEMMs for: an H200 with [`SMS`] SMs.
pub fn device() -> Device {
    Device {
        sms: SMS,
        ..Device::h200()
    }
}

/// Reproducible inputs: a splitmix64 stream, one per seed and buffer.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The stream for `seed` and `stream` (each input buffer draws from its own stream, so that
    /// a change of one buffer's length leaves the others' values).
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xd134_2543_de82_ef95));
        r.next_u64();
        r
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`, in steps of 2^-23, never exactly 0 (a 0 in an output then means
    /// a term was lost, not that the inputs cancelled).
    pub fn uniform(&mut self) -> f32 {
        match (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0 {
            0.0 => 0.5,
            v => v,
        }
    }

    /// `n` values of [`Rng::uniform`].
    pub fn floats(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.uniform()).collect()
    }

    /// `n` values of [`Rng::uniform`] rounded to f16.
    pub fn halves(&mut self, n: usize) -> Vec<half::f16> {
        (0..n)
            .map(|_| half::f16::from_f32(self.uniform()))
            .collect()
    }

    /// An integer in `-bound..=bound`.
    pub fn int(&mut self, bound: u32) -> i32 {
        let span = 2 * u64::from(bound) + 1;
        (self.next_u64() % span) as i32 - bound as i32
    }
}

/// A [`LaunchPlan`]'s grid, block and cluster as a [`Shape`].
pub fn shape_of(plan: &LaunchPlan) -> Shape {
    let t = |(x, y, z): (u32, u32, u32)| [x, y, z];
    Shape {
        grid: t(plan.grid),
        block: t(plan.block),
        cluster: plan.cluster.map(t),
        dynamic_smem: plan.dynamic_smem_bytes,
        programmatic: plan.programmatic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = {
            let mut r = Rng::new(3, 0);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let mut again = Rng::new(3, 0);
        assert!(a.iter().all(|&x| x == again.next_u64()));
        assert_ne!(Rng::new(3, 1).next_u64(), a[0]);
        assert_ne!(Rng::new(4, 0).next_u64(), a[0]);
        let mut r = Rng::new(0, 0);
        for _ in 0..1000 {
            let (u, i) = (r.uniform(), r.int(2));
            assert!((-1.0..1.0).contains(&u) && u != 0.0);
            assert!((-2..=2).contains(&i));
        }
    }
}
