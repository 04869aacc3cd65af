//! The multistage GEMM (cp.async, ldmatrix, mma.sync) in the simulator: on shapes with
//! residues in M, N and K and more than one k-tile per block it matches the CPU product with no
//! finding under several schedules and seeds; with the barrier between `cp.async.wait_group` and
//! the `ldmatrix` reads of the landed stage removed (a planted bug), the simulator reports the
//! race at the `ldmatrix`'s Rust line, and the fixed kernel (the real one) stays clean.

use dsl_core::ir::op::{Barrier, CpAsync};
use dsl_core::ir::{Kernel, Op, Stmt};
use dsl_core::sim::{FindingKind, Launch, Memory, Options, Report, Schedule, Simulator};
use half::{bf16, f16};
use kernels::gemm::{Accum, GemmDtype};
use kernels::multistage::{multistage_kernel, MultistageConfig};

fn inputs(seed: u64, len: usize, dtype: GemmDtype) -> Vec<u16> {
    super::floats(seed, len)
        .into_iter()
        .map(|x| match dtype {
            GemmDtype::F16 => f16::from_f32(x).to_bits(),
            GemmDtype::Bf16 => bf16::from_f32(x).to_bits(),
        })
        .collect()
}

fn value(bits: u16, dtype: GemmDtype) -> f64 {
    match dtype {
        GemmDtype::F16 => f16::from_bits(bits).to_f64(),
        GemmDtype::Bf16 => bf16::from_bits(bits).to_f64(),
    }
}

/// Runs `kernel` (made for `cfg`) on an `m x n x k` problem; returns the report and the relative
/// Frobenius error of D.
fn run(
    kernel: &Kernel,
    cfg: &MultistageConfig,
    (m, n, k): (usize, usize, usize),
    opts: &Options,
) -> (Report, f64) {
    let sim = Simulator::new(kernel.check().unwrap());
    let a = inputs(11 + m as u64, m * k, cfg.dtype);
    let b = inputs(17 + n as u64, n * k, cfg.dtype);
    let mut mem = Memory::new();
    let d = mem.alloc("d", 2 * m * n);
    let (da, db) = (mem.upload("a", &a), mem.upload("b", &b));
    mem.set_read_only(da, true);
    mem.set_read_only(db, true);
    let (gx, gy, gz) = cfg.grid(m as u32, n as u32);
    let launch = Launch::new([gx, gy, gz], [cfg.threads(), 1, 1])
        .with_dynamic_smem(cfg.smem_bytes())
        .with_sms(4);
    let args = super::gemm_args(d, da, db, (m, n, k));
    let report = sim
        .run(&launch, &args, &mut mem, opts)
        .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
    let got = mem.read::<u16>(d);
    let (mut err, mut norm) = (0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k)
                .map(|p| value(a[i * k + p], cfg.dtype) * value(b[j * k + p], cfg.dtype))
                .sum();
            err += (value(got[i * n + j], cfg.dtype) - want).powi(2);
            norm += want * want;
        }
    }
    (report, (err / norm.max(f64::MIN_POSITIVE)).sqrt())
}

#[test]
fn multistage_matches_the_cpu_with_no_finding() {
    for (dtype, acc, tol) in [
        (GemmDtype::F16, Accum::F32, 2e-3),
        (GemmDtype::Bf16, Accum::F32, 4e-3),
        (GemmDtype::F16, Accum::F16, 1e-2),
    ] {
        let cfg = MultistageConfig::reference(dtype, acc);
        let kernel = multistage_kernel(&cfg).unwrap();
        for shape in [(130, 129, 104), (77, 40, 16)] {
            for (seed, schedule) in [
                (0, Schedule::RoundRobin),
                (1, Schedule::Random),
                (2, Schedule::Pct { depth: 3 }),
                (3, Schedule::Random),
            ] {
                let (report, e) = run(&kernel, &cfg, shape, &Options::seeded(seed, schedule));
                let what = format!("{} {shape:?} {schedule:?} seed {seed}", cfg.name());
                assert!(report.is_clean(), "{what}: {report}");
                assert!(e < tol, "{what}: relative error {e:.3e}");
            }
        }
    }
}

/// Removes every `bar.sync` that directly follows a `cp.async.wait_group` in the same block of
/// statements; returns how many it removed.
fn drop_barrier_after_wait(stmts: &mut Vec<Stmt>) -> usize {
    let mut removed = 0;
    let mut i = 0;
    while i < stmts.len() {
        let after_wait = i > 0
            && matches!(&stmts[i - 1], Stmt::Op(w) if matches!(w.op, Op::CpAsync(CpAsync::WaitGroup(_))));
        if after_wait
            && matches!(&stmts[i], Stmt::Op(b) if matches!(b.op, Op::Barrier(Barrier::Sync { .. })))
        {
            stmts.remove(i);
            removed += 1;
            continue;
        }
        match &mut stmts[i] {
            Stmt::For { body, .. } => removed += drop_barrier_after_wait(body),
            Stmt::If { then, else_, .. } => {
                removed += drop_barrier_after_wait(then);
                removed += drop_barrier_after_wait(else_);
            }
            Stmt::While {
                cond_block, body, ..
            } => {
                removed += drop_barrier_after_wait(cond_block);
                removed += drop_barrier_after_wait(body);
            }
            _ => {}
        }
        i += 1;
    }
    removed
}

#[test]
fn the_mainloop_without_the_barrier_after_the_wait_races_at_the_ldmatrix() {
    let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F32);
    let good = multistage_kernel(&cfg).unwrap();
    let mut bad = good.clone();
    assert!(
        drop_barrier_after_wait(&mut bad.body) > 0,
        "no barrier follows a wait"
    );
    for seed in 0..4 {
        let opts = Options::seeded(seed, Schedule::Random);
        let (report, _) = run(&bad, &cfg, (128, 128, 256), &opts);
        let f = report
            .first_of(&[FindingKind::DataRace, FindingKind::UninitializedShared])
            .unwrap_or_else(|| panic!("seed {seed}: {report}"));
        assert_eq!(f.op, "ldmatrix", "{report}");
        let loc = f.location.expect("a located ldmatrix");
        assert!(loc.file.contains("kernels/src"), "{loc}");
        if let Some(other) = &f.other {
            assert_eq!(other.op, "cp.async", "{report}");
        }
        let (report, e) = run(&good, &cfg, (128, 128, 256), &opts);
        assert!(report.is_clean() && e < 2e-3, "the fixed twin: {report}");
    }
}
