//! # rute-tests
//!
//! rute's integration tests across crates live in `tests/` (PTX snapshots, the layout conformance
//! suite, the GEMM simulator, and the GPU tests behind the `gpu` feature). This library holds what
//! several of them share.

/// Helpers of the PTX tests.
pub mod ptx {
    use codegen_ptx::ptxas::{assemble, PtxasReport};
    use dsl_core::ir::Target;
    use kernels::registry::Registered;

    /// Where the PTX snapshots live (`snapshots/` at the workspace root).
    pub const SNAPSHOTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots");

    /// A registered kernel's PTX for `target`; panics naming both if it cannot be produced.
    pub fn ptx_of(k: &Registered, target: Target) -> String {
        k.ptx(target)
            .unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name))
    }

    /// Asserts that the `.snap` files in [`SNAPSHOTS`] whose names start with `prefix` are
    /// exactly `expected` (file names): no snapshot outlives its kernel or target.
    pub fn assert_no_stale_snapshots(prefix: &str, expected: &[String]) {
        let mut on_disk: Vec<String> = std::fs::read_dir(SNAPSHOTS)
            .unwrap_or_else(|e| panic!("{SNAPSHOTS}: {e}"))
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|f| f.starts_with(prefix) && f.ends_with(".snap"))
            .collect();
        on_disk.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(on_disk, expected, "stale or missing files in {SNAPSHOTS}");
    }

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

/// Helpers of the GEMM programs' tests.
pub mod gemm {
    use codegen_ptx::jit::{ptx_signature, PtxClass, PtxParam, PtxParamKind};
    use dsl_core::ir::Target;
    use kernels::gemm::{GemmArg, LaunchPlan, Plan};

    /// Whether the runtime's argument for `arg` fills `param`: pointers (D, A, B, a table) a
    /// 64-bit unsigned or untyped scalar or `.ptr`, the dimensions and scalars a 32-bit one (a
    /// 64-bit scalar a 64-bit one, an f32 a 32-bit float), a tensor map a 128-byte, 64-byte
    /// aligned array.
    pub fn fits(arg: &GemmArg, param: &PtxParam) -> bool {
        let scalar = |bits: u32| match param.kind {
            PtxParamKind::Scalar(t) | PtxParamKind::Pointer { ty: t, .. } => {
                t.bits == bits && matches!(t.class, PtxClass::Unsigned | PtxClass::Bits)
            }
            PtxParamKind::Array { .. } => false,
        };
        let float = |bits: u32| match param.kind {
            PtxParamKind::Scalar(t) => {
                t.bits == bits && matches!(t.class, PtxClass::Float | PtxClass::Bits)
            }
            _ => false,
        };
        match arg {
            GemmArg::D
            | GemmArg::A
            | GemmArg::B
            | GemmArg::C
            | GemmArg::Bias
            | GemmArg::Residual
            | GemmArg::Table(_)
            | GemmArg::Workspace
            | GemmArg::U64(_) => scalar(64),
            GemmArg::M | GemmArg::N | GemmArg::K | GemmArg::U32(_) => scalar(32),
            GemmArg::F32(_) => float(32),
            GemmArg::TensorMap { .. } => param.is_tensor_map(),
        }
    }

    /// Asserts that `launch`, `plan`'s launch of some problem, names as many arguments as the
    /// plan's kernel for `target` has parameters, each of a kind the parameter takes ([`fits`]);
    /// and the same of the launch after it against the plan's reduction kernel.
    pub fn assert_args_fit(plan: &Plan, launch: &LaunchPlan, target: Target) {
        let what = format!("{} for {target}", plan.describe());
        let kernel = plan.kernel().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_fits(&kernel, &plan.entry(), launch, target, &what);
        if let Some(then) = &launch.then {
            let reduction = plan
                .reduction()
                .unwrap_or_else(|| panic!("{what}: a launch after, and no reduction kernel"))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let name = reduction.name.clone();
            assert_fits(&reduction, &name, then, target, &what);
        }
    }

    fn assert_fits(
        kernel: &dsl_core::ir::Kernel,
        entry: &str,
        launch: &LaunchPlan,
        target: Target,
        what: &str,
    ) {
        let ptx = codegen_ptx::emit(kernel, target).unwrap_or_else(|e| panic!("{what}: {e}"));
        let params = ptx_signature(&ptx, entry)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .unwrap_or_else(|| panic!("{what}: no entry {entry}"));
        assert_eq!(launch.args.len(), params.len(), "{what}: {:?}", launch.args);
        for (arg, param) in launch.args.iter().zip(&params) {
            assert!(fits(arg, param), "{what}: {arg:?} cannot fill {param}");
        }
    }
}

/// Helpers of the GPU tests.
pub mod gpu {
    use codegen_ptx::jit::Jit;

    /// Device 0; a GPU test fails loudly, naming the reason, when there is none.
    pub fn jit() -> Jit {
        Jit::new(0).unwrap_or_else(|e| panic!("the GPU tests need an NVIDIA GPU: {e}"))
    }

    /// Reproducible pseudo-random test data: the GEMM harness's generator
    /// ([`kernels::gemm::harness::Rng`]) with zero replaced, so that a zero in an output means
    /// "not written".
    pub struct Rng(kernels::gemm::harness::Rng);

    impl Rng {
        /// A generator seeded with `seed`.
        pub fn new(seed: u64) -> Self {
            Rng(kernels::gemm::harness::Rng::new(seed))
        }

        /// Uniform in [-1, 1), never exactly zero.
        pub fn f32(&mut self) -> f32 {
            match self.0.uniform() {
                0.0 => 0.5,
                v => v,
            }
        }

        /// `n` values of [`Rng::f32`].
        pub fn vec(&mut self, n: usize) -> Vec<f32> {
            (0..n).map(|_| self.f32()).collect()
        }
    }

    /// A watchdog for GPU tests that could hang (a kernel waiting on a barrier nobody arrives
    /// at): each step is announced with [`Watchdog::step`]; if one takes longer than the limit,
    /// the process prints the step and exits with status 1, so the hang fails the test run
    /// instead of stalling it. Dropping the watchdog stops it.
    pub struct Watchdog {
        tx: Option<std::sync::mpsc::Sender<String>>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Watchdog {
        /// A watchdog allowing each step `limit`.
        pub fn new(limit: std::time::Duration) -> Self {
            let (tx, rx) = std::sync::mpsc::channel::<String>();
            let thread = std::thread::spawn(move || {
                let mut current = String::from("(before the first step)");
                loop {
                    match rx.recv_timeout(limit) {
                        Ok(step) => current = step,
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            eprintln!("watchdog: `{current}` took longer than {limit:?}: a hang");
                            std::process::exit(1);
                        }
                    }
                }
            });
            Watchdog {
                tx: Some(tx),
                thread: Some(thread),
            }
        }

        /// Starts step `name` (and ends the one before).
        pub fn step(&self, name: impl Into<String>) {
            if let Some(tx) = &self.tx {
                let _ = tx.send(name.into());
            }
        }
    }

    impl Drop for Watchdog {
        fn drop(&mut self) {
            self.tx.take();
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
