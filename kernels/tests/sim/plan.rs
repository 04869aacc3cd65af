//! A GEMM plan's launch run in the simulator as the runtime would launch it: its grid, block,
//! cluster and shared memory, its arguments made from the operands (tensor maps by their
//! description over the operand's buffer, the tile-order table, the zeroed workspace), then the
//! launch queued after it, if any; and the inputs and CPU references the tests hold outputs to.

use dsl_core::sim::{
    Arg, BufferId, Launch, Limits, Memory, Options, Report, Simulator, TensorMapArg,
};
use half::{bf16, f16};
use kernels::gemm::{GemmArg, GemmDtype, GemmOperand, LaunchPlan};

/// The SMs of the device the benchmark plans for: a small persistent grid (the plans size
/// theirs by the device; the simulator runs every block of it at once).
pub const SMS: u32 = 8;

/// The buffers of one problem: A (`m x k`), B (`n x k`) and D (`m x n`), row-major.
pub struct Operands {
    pub a: BufferId,
    pub b: BufferId,
    pub d: BufferId,
}

/// What a run gave: the report of each launch, and D's elements.
pub struct Outcome {
    pub reports: Vec<Report>,
    pub d: Vec<u16>,
}

impl Outcome {
    /// Every launch's findings, printed.
    pub fn findings(&self) -> String {
        self.reports
            .iter()
            .filter(|r| !r.is_clean())
            .map(|r| r.to_string())
            .collect()
    }

    pub fn is_clean(&self) -> bool {
        self.reports.iter().all(Report::is_clean)
    }
}

/// Inputs of a problem: small integers in `-range..=range` (every partial sum exact in f32 and
/// the result exact in the element type when `range * k` is small), or uniform in [-1, 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    Integers { range: i32 },
    Random,
}

/// `len` elements of `dtype` for `seed`.
pub fn inputs(kind: Inputs, seed: u64, len: usize, dtype: GemmDtype) -> Vec<u16> {
    let f = super::floats(seed, len);
    f.into_iter()
        .map(|x| {
            let v = match kind {
                Inputs::Integers { range } => {
                    ((x * (range as f32 + 0.5)).round()).clamp(-range as f32, range as f32)
                }
                Inputs::Random => x,
            };
            match dtype {
                GemmDtype::F16 => f16::from_f32(v).to_bits(),
                GemmDtype::Bf16 => bf16::from_f32(v).to_bits(),
            }
        })
        .collect()
}

pub fn value(bits: u16, dtype: GemmDtype) -> f64 {
    match dtype {
        GemmDtype::F16 => f16::from_bits(bits).to_f64(),
        GemmDtype::Bf16 => bf16::from_bits(bits).to_f64(),
    }
}

/// `D = A B^T` in f64.
pub fn reference(
    a: &[u16],
    b: &[u16],
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
) -> Vec<f64> {
    let af: Vec<f64> = a.iter().map(|&x| value(x, dtype)).collect();
    let bf: Vec<f64> = b.iter().map(|&x| value(x, dtype)).collect();
    let mut d = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = (0..k).map(|p| af[i * k + p] * bf[j * k + p]).sum();
        }
    }
    d
}

/// The reference rounded to the element type, as bits.
pub fn rounded(want: &[f64], dtype: GemmDtype) -> Vec<u16> {
    want.iter()
        .map(|&v| match dtype {
            GemmDtype::F16 => f16::from_f64(v).to_bits(),
            GemmDtype::Bf16 => bf16::from_f64(v).to_bits(),
        })
        .collect()
}

/// The relative Frobenius error of `got` against `want`.
pub fn relative_error(got: &[u16], want: &[f64], dtype: GemmDtype) -> f64 {
    let (mut err, mut norm) = (0f64, 0f64);
    for (g, w) in got.iter().zip(want) {
        err += (value(*g, dtype) - w).powi(2);
        norm += w * w;
    }
    (err / norm.max(f64::MIN_POSITIVE)).sqrt()
}

/// The arguments of `plan` for `m x n x k` over `ops` (the workspace allocated in `mem`,
/// zeroed).
fn args(
    plan: &LaunchPlan,
    (m, n, k): (usize, usize, usize),
    ops: &Operands,
    workspace: Option<BufferId>,
    mem: &mut Memory,
) -> Vec<Arg> {
    let buffer = |o: GemmOperand| match o {
        GemmOperand::A => ops.a,
        GemmOperand::B => ops.b,
        GemmOperand::D => ops.d,
    };
    plan.args
        .iter()
        .map(|a| match a {
            GemmArg::D => Arg::Buffer(ops.d),
            GemmArg::A => Arg::Buffer(ops.a),
            GemmArg::B => Arg::Buffer(ops.b),
            GemmArg::M => Arg::u32(m as u32),
            GemmArg::N => Arg::u32(n as u32),
            GemmArg::K => Arg::u32(k as u32),
            GemmArg::TensorMap {
                operand,
                descriptor,
            } => Arg::Tma(Box::new(TensorMapArg::new(
                buffer(*operand),
                descriptor.clone(),
            ))),
            GemmArg::Table(t) => {
                let b = mem.upload("table", &t[..]);
                mem.set_read_only(b, true);
                Arg::Buffer(b)
            }
            GemmArg::U32(v) => Arg::u32(*v),
            GemmArg::Workspace => Arg::Buffer(workspace.expect("the plan asks for a workspace")),
        })
        .collect()
}

/// The simulator's launch of `plan`: its grid all resident (the plans launch persistent grids
/// of as many blocks as the device runs at once).
fn launch_of(plan: &LaunchPlan) -> Launch {
    let (gx, gy, gz) = plan.grid;
    let (bx, by, bz) = plan.block;
    let c = plan.cluster.unwrap_or((1, 1, 1));
    Launch::new([gx, gy, gz], [bx, by, bz])
        .with_cluster([c.0, c.1, c.2])
        .with_dynamic_smem(plan.dynamic_smem_bytes)
        .with_sms(gx * gy * gz)
}

/// Runs `kernel` (and `then`, the kernel of the launch queued after it) as `plan` launches it
/// for `m x n x k` of `dtype` on inputs `a`, `b` (read-only), under `opts`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    sims: &[&Simulator],
    plan: &LaunchPlan,
    (m, n, k): (usize, usize, usize),
    a: &[u16],
    b: &[u16],
    opts: &Options,
) -> Outcome {
    let mut mem = Memory::new();
    let ops = Operands {
        a: mem.upload("a", a),
        b: mem.upload("b", b),
        d: mem.alloc("d", 2 * m * n),
    };
    mem.set_read_only(ops.a, true);
    mem.set_read_only(ops.b, true);
    let workspace =
        (plan.workspace > 0).then(|| mem.alloc_zeroed("workspace", 4 * plan.workspace as usize));
    let mut reports = Vec::new();
    let mut launches = vec![plan];
    if let Some(t) = &plan.then {
        launches.push(t);
    }
    for (sim, p) in sims.iter().zip(launches) {
        let args = args(p, (m, n, k), &ops, workspace, &mut mem);
        let sim = (*sim).clone().with_limits(Limits {
            max_steps: 1 << 36,
            ..Limits::default()
        });
        let r = sim
            .run(&launch_of(p), &args, &mut mem, opts)
            .unwrap_or_else(|e| panic!("{}: {e}", sim.name()));
        reports.push(r);
    }
    Outcome {
        reports,
        d: mem.read::<u16>(ops.d),
    }
}

/// Asserts D against the CPU: bit-equal for integer inputs, within the GEMM tolerance for
/// random ones.
pub fn assert_result(
    d: &[u16],
    a: &[u16],
    b: &[u16],
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    kind: Inputs,
    what: &str,
) {
    let want = reference(a, b, (m, n, k), dtype);
    match kind {
        Inputs::Integers { .. } => {
            let want = rounded(&want, dtype);
            if let Some(i) = d.iter().zip(&want).position(|(g, w)| g != w) {
                panic!(
                    "{what}: D[{}][{}] = {:#06x}, want {:#06x}",
                    i / n,
                    i % n,
                    d[i],
                    want[i]
                );
            }
        }
        Inputs::Random => {
            let e = relative_error(d, &want, dtype);
            assert!(e < 4e-3, "{what}: relative error {e:.3e}");
        }
    }
}
