//! # rute-tests
//!
//! rute's integration tests across crates live in `tests/` (PTX snapshots, the layout conformance
//! suite, the GEMM simulator, and the GPU tests behind the `gpu` feature). This library holds what
//! several of them share.

/// Helpers of the PTX tests.
pub mod ptx {
    use codegen_ptx::ptxas::{assemble, PtxasReport};
    use dsl_core::ir::Target;

    /// Assembles `ptx` (kernel `name`) for `target` and asserts what every published kernel must
    /// show: no spills, no stack frame, no ptxas warnings. Needs `RUTE_PTXAS`.
    pub fn assemble_clean(ptx: &str, target: Target, name: &str) -> PtxasReport {
        let report = assemble(ptx, target).unwrap_or_else(|e| panic!("{name} for {target}: {e}"));
        assert_eq!(
            (report.spill_store_bytes, report.spill_load_bytes),
            (0, 0),
            "{name} for {target} spills:\n{}",
            report.log
        );
        assert_eq!(report.stack_frame_bytes, 0, "{name} for {target}");
        assert!(
            report.warnings.is_empty(),
            "{name} for {target}: {:?}",
            report.warnings
        );
        report
    }
}

/// Helpers of the GPU tests.
pub mod gpu {
    use codegen_ptx::jit::Jit;

    /// Device 0; a GPU test fails loudly, naming the reason, when there is none.
    pub fn jit() -> Jit {
        Jit::new(0).unwrap_or_else(|e| panic!("the GPU tests need an NVIDIA GPU: {e}"))
    }

    /// xorshift64*: reproducible pseudo-random test data without a dependency.
    pub struct Rng(pub u64);

    impl Rng {
        /// The next 64 random bits.
        pub fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        /// Uniform in [-1, 1), never exactly zero (so a zero in an output means "not written").
        pub fn f32(&mut self) -> f32 {
            let v = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            if v == 0.0 {
                0.5
            } else {
                v
            }
        }

        /// `n` values of [`Rng::f32`].
        pub fn vec(&mut self, n: usize) -> Vec<f32> {
            (0..n).map(|_| self.f32()).collect()
        }
    }
}
