//! What each case of a GPU run shares: the context it runs in ([`Ctx`]), the lines that report
//! its check and its timing, and what stops a run ([`Failure`]).

use codegen_ptx::jit::Jit;
use dsl_core::ir::Target;
use kernels::gemm::harness::{case_seed, BenchOutcome, Case, CheckOutcome, Harness};
use kernels::gemm::{Accum, CublasRef, Gemm, GemmDtype, GemmError};

use super::super::request::Options;

/// What every case runs with: the JIT, rute's GEMM and the cuBLAS reference.
pub(super) struct Ctx<'j> {
    pub(super) jit: &'j Jit,
    pub(super) gemm: Gemm<'j>,
    pub(super) cublas: CublasRef<'j>,
}

impl Ctx<'_> {
    /// The case of `shape` with `opts`'s kernel and the seed [`case_seed`] mixes for it (the
    /// same for the check and the timing, so both see the same inputs).
    pub(super) fn case(shape: (usize, usize, usize), acc: Accum, opts: &Options) -> Case {
        Case {
            shape,
            acc,
            kernel: opts.kernel,
            seed: case_seed(opts.seed, shape.0, shape.1, shape.2),
        }
    }

    /// The target the GPU runs, which the prechecks check for.
    pub(super) fn target(&self) -> Target {
        self.gemm.target()
    }

    fn harness(&self) -> Harness<'_> {
        Harness {
            jit: self.jit,
            gemm: &self.gemm,
            cublas: &self.cublas,
        }
    }

    /// [`Harness::check_dtype`] of the case.
    pub(super) fn check(
        &self,
        dtype: GemmDtype,
        shape: (usize, usize, usize),
        acc: Accum,
        opts: &Options,
    ) -> Result<CheckOutcome, GemmError> {
        self.harness()
            .check_dtype(dtype, &Self::case(shape, acc, opts))
    }

    /// [`Harness::bench_dtype`] of the case, `opts.repeats` rounds.
    pub(super) fn bench(
        &self,
        dtype: GemmDtype,
        shape: (usize, usize, usize),
        acc: Accum,
        opts: &Options,
    ) -> Result<BenchOutcome, GemmError> {
        self.harness()
            .bench_dtype(dtype, &Self::case(shape, acc, opts), opts.repeats)
    }
}

pub(super) fn verdict(c: &CheckOutcome) -> &'static str {
    if c.passed() {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The check's distances and verdict: `error E vs cuBLAS; vs f64 on N entries: rute R,
/// cuBLAS C; bound B (tolerance T), U unwritten: PASS`.
pub(super) fn check_line(c: &CheckOutcome) -> String {
    let mut s = format!(
        "error {:.3e} vs cuBLAS; vs f64 on {} entries: rute {:.3e}, cuBLAS {:.3e}; bound {:.2e} (tolerance {:.1e}), {} unwritten",
        c.error,
        c.f64_entries,
        c.f64_error.0,
        c.f64_error.1,
        c.errors().bound(c.tolerance),
        c.tolerance,
        c.unwritten,
    );
    if c.reference_non_finite > 0 {
        s += &format!(
            " (cuBLAS left {} non-finite elements)",
            c.reference_non_finite
        );
    }
    s + ": " + verdict(c)
}

pub(super) fn bench_line(b: &BenchOutcome) -> String {
    format!(
        "rute {:.4} ms {:.2} TFLOP/s {:.0} GB/s | cuBLAS {:.4} ms {:.2} TFLOP/s | ratio {:.3} | a device copy of the same bytes {:.0} GB/s (median of {} repeats, {} input set{})",
        b.rute_ms,
        b.rute_tflops(),
        b.rute_gbps(),
        b.cublas_ms,
        b.cublas_tflops(),
        b.ratio(),
        b.copy_gbps(),
        b.repeats,
        b.sets,
        if b.sets == 1 { "" } else { "s" }
    )
}

/// What stops a run: the GEMM (or the GPU), or the results file.
#[derive(Debug, thiserror::Error)]
pub(super) enum Failure {
    /// The GEMM, cuBLAS or the GPU.
    #[error("{0}")]
    Gemm(#[from] GemmError),
    /// The `--out` file.
    #[error("the results could not be written to {path}: {source}")]
    Write {
        /// The path given.
        path: String,
        /// The OS's error.
        source: std::io::Error,
    },
}
