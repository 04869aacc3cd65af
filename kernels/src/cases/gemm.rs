//! GEMM cases: a program's plan for a problem ([`GemmCase`]), run as the runtime runs it: the
//! plan's [`LaunchPlan`] unchanged (grid, block, cluster, shared memory, the arguments in
//! order, the workspace, the reduction launched after), its arguments made from A, B and D by
//! [`steps`], the adapter to a [`Run`]. Inputs are random or small integers ([`Values`]); the
//! reference is the exact product in f64.

use std::fmt;
use std::sync::Arc;

use dsl_core::ir::{Kernel, Target};
use half::{bf16, f16};

use super::expect::{Agreement, Check, Expect};
use super::run::{Buffer, CaseArg, Data, Elem, Run, Step};
use super::{device, shape_of, Case, CaseError, Rng};
use crate::blackwell::BlackwellGemm;
use crate::gemm::{
    check, Accum, BufferLens, Config, Device, GemmArg, GemmDtype, GemmOperand, KernelChoice,
    LaunchPlan, Plan, Problem,
};
use crate::hopper::{HopperGemm, HopperSchedule};
use crate::multistage::{MultistageConfig, Tune};

/// What the inputs of a GEMM case hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Values {
    /// Uniform in `[-1, 1)`, rounded to the element type; D within the program's tolerance of
    /// the exact product (relative Frobenius error).
    Random,
    /// Small integers whose every partial sum is exact in the accumulator and in D's type: D
    /// equals the exact product bit for bit, whatever order the products are summed in.
    SmallIntegers,
}

impl fmt::Display for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Values::Random => "random inputs",
            Values::SmallIntegers => "small-integer inputs",
        })
    }
}

/// The cases' device ([`device`]), or for a program that does not run on its target (the
/// Blackwell program on the H200's sm_90a), the same device with the first target it runs on:
/// a case runs in the simulator, which needs no such hardware.
pub fn device_for(choice: KernelChoice) -> Device {
    let device = device();
    match choice {
        KernelChoice::Program(p) if !p.runs_on(device.target) => {
            match Target::ALL.into_iter().find(|&t| p.runs_on(t)) {
                Some(target) => Device { target, ..device },
                None => device,
            }
        }
        _ => device,
    }
}

/// A GEMM program's plan for one problem, as a [`Case`].
#[derive(Debug, Clone)]
pub struct GemmCase {
    problem: Problem,
    plan: Plan,
    device: Device,
    values: Values,
}

impl GemmCase {
    /// `problem` planned for the cases' device ([`super::device`]).
    ///
    /// Errors: the problem refused by `check` (its sentence).
    pub fn new(problem: Problem, values: Values) -> Result<GemmCase, CaseError> {
        GemmCase::on(problem, values, device())
    }

    /// `problem` planned for `device`.
    pub fn on(problem: Problem, values: Values, device: Device) -> Result<GemmCase, CaseError> {
        let lens = BufferLens::for_shape(problem.m, problem.n, problem.k)
            .ok_or_else(|| CaseError::Refused("the shape's buffers overflow".into()))?;
        let plan = check(&problem, lens, &device).map_err(|e| CaseError::Refused(e.to_string()))?;
        Ok(GemmCase {
            problem,
            plan,
            device,
            values,
        })
    }

    /// The program called `kernel` (or `auto`) with the configuration spelled `config` (`None`:
    /// its default) on an `m x n x k` problem of `dtype` summed in `acc`.
    ///
    /// Errors: an unknown program, a configuration it refuses, a problem it cannot run; each
    /// as the sentence `rute gemm` prints.
    pub fn program(
        kernel: &str,
        config: Option<&str>,
        (dtype, acc): (GemmDtype, Accum),
        (m, n, k): (usize, usize, usize),
        values: Values,
    ) -> Result<GemmCase, CaseError> {
        let refused = |e: &dyn fmt::Display| CaseError::Refused(e.to_string());
        let choice = KernelChoice::named(kernel).map_err(|e| refused(&e))?;
        let config = match config {
            Some(spec) => Some(Config::parse(choice, spec).map_err(|e| refused(&e))?),
            None => None,
        };
        let problem = Problem {
            m,
            n,
            k,
            dtype,
            acc,
            kernel: choice,
            config,
        };
        GemmCase::on(problem, values, device_for(choice))
    }

    /// The same problem planned again for the device with `sms` SMs (a persistent grid's
    /// size), as the simulator runs a small grid in place of the device's.
    ///
    /// Errors: the program refuses the problem on that device (its sentence).
    pub fn on_sms(self, sms: u32) -> Result<GemmCase, CaseError> {
        let device = Device { sms, ..self.device };
        GemmCase::on(self.problem, self.values, device)
    }

    /// As [`GemmCase::program`], on the first problem of [`shapes_for`] the plan's tile that
    /// the program takes (planned first at 256 x 256 x 256 to learn the tile).
    ///
    /// Errors: the program refuses the probe, or every shape (the last refusal).
    pub fn sized(
        kernel: &str,
        config: Option<&str>,
        types: (GemmDtype, Accum),
        values: Values,
    ) -> Result<GemmCase, CaseError> {
        let probe = GemmCase::program(kernel, config, types, (256, 256, 256), values)?;
        let mut last = None;
        for shape in shapes_for(probe.plan()) {
            match GemmCase::program(kernel, config, types, shape, values) {
                Ok(c) => return Ok(c),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| CaseError::Refused("no shape to try".into())))
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The problem.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The plan's launch for the problem on the case's device.
    pub fn launch(&self) -> LaunchPlan {
        let (m, n, k) = self.dims();
        self.plan.launch(m, n, k, &self.device)
    }

    fn dims(&self) -> (u32, u32, u32) {
        // `check` bounds every dimension far below u32::MAX.
        let p = &self.problem;
        (p.m as u32, p.n as u32, p.k as u32)
    }

    /// A and B for `seed`.
    fn operands(&self, seed: u64) -> (Data, Data) {
        let p = &self.problem;
        let (bound, cols) = int_bound(p.k, p.dtype, p.acc);
        let draw = |stream: u64, rows: usize| -> Vec<f32> {
            let mut rng = Rng::new(seed, stream);
            match self.values {
                Values::Random => rng.floats(rows * p.k),
                Values::SmallIntegers => (0..rows * p.k)
                    .map(|i| {
                        if i % p.k < cols {
                            rng.int(bound) as f32
                        } else {
                            0.0
                        }
                    })
                    .collect(),
            }
        };
        let typed = |v: Vec<f32>| match p.dtype {
            GemmDtype::F16 => Data::F16(v.into_iter().map(f16::from_f32).collect()),
            GemmDtype::Bf16 => Data::Bf16(v.into_iter().map(bf16::from_f32).collect()),
        };
        (typed(draw(1, p.m)), typed(draw(2, p.n)))
    }
}

/// For small-integer inputs with a `k`-long sum: the bound of the integers and how many
/// columns of K hold them (the rest are 0), so that every partial sum is an integer that the
/// accumulator and D's type hold exactly (f16: 2^11, bf16: 2^8, an f32 sum: 2^24).
fn int_bound(k: usize, dtype: GemmDtype, acc: Accum) -> (u32, usize) {
    let out = match dtype {
        GemmDtype::F16 => 1usize << 11,
        GemmDtype::Bf16 => 1 << 8,
    };
    let sum = match acc {
        Accum::F16 => 1usize << 11,
        Accum::F32 => 1 << 24,
    };
    let limit = out.min(sum);
    if 4 * k <= limit {
        (2, k)
    } else {
        (1, k.min(limit))
    }
}

impl Case for GemmCase {
    fn describe(&self) -> String {
        let p = &self.problem;
        format!(
            "{} at {}x{}x{}, {}",
            self.plan.describe(),
            p.m,
            p.n,
            p.k,
            self.values
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        let build = |r: Result<Kernel, _>| {
            r.map_err(|source| CaseError::Build {
                case: self.describe(),
                source,
            })
        };
        let mut kernels = vec![build(self.plan.kernel())?];
        if let Some(reduction) = self.plan.reduction() {
            kernels.push(build(reduction)?);
        }
        Ok(kernels)
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let (m, n, k) = (self.problem.m, self.problem.n, self.problem.k);
        let (a, b) = self.operands(seed);
        let want = product(&a, &b, (m, n, k));
        let (buffers, steps) =
            steps(&self.launch(), self.dims(), a, b).map_err(|reason| CaseError::BadRun {
                case: self.describe(),
                reason,
            })?;
        let expect = match self.values {
            Values::SmallIntegers => Expect::bits(D, typed_like(&buffers[A], &want)),
            Values::Random => Expect {
                buffer: D,
                check: Check::Frobenius {
                    want,
                    tol: self.problem.acc.tolerance(self.problem.dtype),
                },
                agreement: Agreement::Tolerance,
            },
        };
        Ok(Run {
            buffers,
            steps,
            expect: vec![expect],
        })
    }
}

/// The buffers' places in a GEMM's run: A, B, D first.
const A: usize = 0;
const B: usize = 1;
const D: usize = 2;

/// `values` rounded to the element type of `like` (exact for values that type holds).
fn typed_like(like: &Buffer, values: &[f64]) -> Data {
    match like.contents.elem() {
        Elem::Bf16 => Data::Bf16(values.iter().map(|&v| bf16::from_f64(v)).collect()),
        _ => Data::F16(values.iter().map(|&v| f16::from_f64(v)).collect()),
    }
}

/// `A (m x k) * B (n x k)^T` in f64, row-major.
fn product(a: &Data, b: &Data, (m, n, k): (usize, usize, usize)) -> Vec<f64> {
    let av: Vec<f64> = (0..m * k).map(|i| a.value(i)).collect();
    let bv: Vec<f64> = (0..n * k).map(|i| b.value(i)).collect();
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        let row = &av[i * k..(i + 1) * k];
        for j in 0..n {
            let col = &bv[j * k..(j + 1) * k];
            d[i * n + j] = row.iter().zip(col).map(|(x, y)| x * y).sum();
        }
    }
    d
}

/// The adapter from a plan's launch to a run: buffers A (`a`), B (`b`) and D (an output of
/// `m * n` elements of A's type), then the workspace (zeroed f32, [`LaunchPlan::workspace`]
/// elements) where the launch asks for one, then one read-only buffer per distinct table; and
/// one step per launch (the main kernel is kernel 0, the reduction after it kernel 1), each
/// argument as the runtime makes it: D, A and B their buffers, tensor maps over them with the
/// plan's fields, M, N, K and the program's scalars `u32`s.
///
/// Errors: a launch [`LaunchPlan::check`] refuses, or one whose arguments name a workspace it
/// did not ask for; the reason as a clause.
pub fn steps(
    launch: &LaunchPlan,
    (m, n, k): (u32, u32, u32),
    a: Data,
    b: Data,
) -> Result<(Vec<Buffer>, Vec<Step>), String> {
    launch.check()?;
    let d_elem = a.elem();
    let mut buffers = vec![
        Buffer::input("a", a),
        Buffer::input("b", b),
        Buffer::output("d", d_elem, m as usize * n as usize),
    ];
    let workspace = (launch.workspace > 0).then(|| {
        buffers.push(Buffer::scratch(
            "workspace",
            Elem::F32,
            launch.workspace as usize,
        ));
        buffers.len() - 1
    });
    let mut tables: Vec<(Arc<Vec<u32>>, usize)> = Vec::new();
    let mut unread: Option<usize> = None;
    let mut step = |kernel: usize, l: &LaunchPlan| -> Result<Step, String> {
        let operand = |o: &GemmOperand| match o {
            GemmOperand::A => Ok(A),
            GemmOperand::B => Ok(B),
            GemmOperand::D => Ok(D),
            GemmOperand::Residual => {
                Err("its launch maps a residual, which a packed problem does not have".to_string())
            }
        };
        let args = l
            .args
            .iter()
            .map(|arg| {
                Ok(match arg {
                    GemmArg::D => CaseArg::Buffer(D),
                    GemmArg::A => CaseArg::Buffer(A),
                    GemmArg::B => CaseArg::Buffer(B),
                    GemmArg::M => CaseArg::U32(m),
                    GemmArg::N => CaseArg::U32(n),
                    GemmArg::K => CaseArg::U32(k),
                    GemmArg::U32(v) => CaseArg::U32(*v),
                    GemmArg::F32(v) => CaseArg::F32(*v),
                    GemmArg::U64(v) => CaseArg::U64(*v),
                    // A packed problem's epilogue is `D = acc`: a program whose kernel takes C,
                    // a bias or a residual reads none of them, and gets one read-only word (an
                    // input, so that the three pointers may name it together: a launch may not
                    // name a buffer it writes twice).
                    GemmArg::C | GemmArg::Bias | GemmArg::Residual => {
                        CaseArg::Buffer(*unread.get_or_insert_with(|| {
                            buffers.push(Buffer::input("unread", Data::U32(vec![0])));
                            buffers.len() - 1
                        }))
                    }
                    GemmArg::TensorMap {
                        operand: o,
                        descriptor,
                    } => CaseArg::TensorMap {
                        buffer: operand(o)?,
                        descriptor: descriptor.clone(),
                    },
                    GemmArg::Table(t) => {
                        let i = match tables.iter().find(|(have, _)| have == t) {
                            Some(&(_, i)) => i,
                            None => {
                                buffers.push(Buffer::input(
                                    &format!("table{}", tables.len()),
                                    Data::U32(t.as_ref().clone()),
                                ));
                                tables.push((Arc::clone(t), buffers.len() - 1));
                                buffers.len() - 1
                            }
                        };
                        CaseArg::Buffer(i)
                    }
                    GemmArg::Workspace => CaseArg::Buffer(
                        workspace
                            .ok_or("its arguments name the workspace, and it asks for none")?,
                    ),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Step {
            kernel,
            shape: shape_of(l),
            args,
        })
    };
    let mut steps = vec![step(0, launch)?];
    if let Some(then) = &launch.then {
        steps.push(step(1, then)?);
    }
    Ok((buffers, steps))
}

/// The configurations the tuning sweeps time for `program` (as `--config` spells them): what
/// the tests run each of in the simulator. Empty for a program without a sweep.
pub fn sweep(program: &str) -> &'static [&'static str] {
    match program {
        "multistage" => &Tune::SWEEP,
        "hopper_ws" => &HopperSchedule::SWEEP,
        _ => &[],
    }
}

/// Problems for `plan`'s tile, best first: `(m, n, k)` with a residue in M, N and K, more
/// k-tiles than the ring has stages and, for a persistent program, more tiles than
/// [`super::SMS`] blocks; then the same with N and K within one tile (with residues), for
/// schedules that keep an operand resident. Programs whose tile is not known here get
/// `(41, 23, 19)` (residues against tiles of 8, 16 and 32).
pub fn shapes_for(plan: &Plan) -> Vec<(usize, usize, usize)> {
    if let Some(c) = plan.downcast_ref::<MultistageConfig>() {
        // One tile and a residue each way; the ring lapped (a k-tile more than the stages,
        // the last partial: a residue of 8).
        let (tm, tn, tk) = (c.tile_m as usize, c.tile_n as usize, c.tile_k as usize);
        return vec![(tm + 17, tn + 9, c.stages as usize * tk + 8)];
    }
    if let Some(h) = plan.downcast_ref::<HopperGemm>() {
        let s = h.schedule();
        let (cm, cn) = s.cluster.blocks();
        let (tm, tn, tk) = (
            s.tile.m() as usize,
            s.tile.n() as usize,
            s.tile.k() as usize,
        );
        // (2 cm + 1) x (cn + 1) tiles: more than SMS, the last in each direction partial.
        let m = 2 * cm as usize * tm + tm / 2 + 3;
        return vec![
            (m, cn as usize * tn + tn / 2 + 8, 2 * tk + 24),
            (m, tn - 8, 2 * tk + 24),
            (m, tn - 8, tk + 24),
        ];
    }
    if plan.downcast_ref::<BlackwellGemm>().is_some() {
        // The shapes the Blackwell steps are held to: residues in M, N and K (N and K multiples
        // of 8, as TMA takes), several tiles per cluster on the cases' few SMs, and two whole.
        return vec![(1000, 520, 200), (512, 256, 256), (1024, 768, 320)];
    }
    vec![(41, 23, 19)]
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::KernelChoice;

    fn problem(kernel: &str, config: Option<&str>, (m, n, k): (usize, usize, usize)) -> Problem {
        let kernel = KernelChoice::named(kernel).unwrap();
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            acc: Accum::F32,
            kernel,
            config: config.map(|c| crate::gemm::Config::parse(kernel, c).unwrap()),
        }
    }

    #[test]
    fn a_plans_launch_becomes_the_runs_steps() {
        let case = GemmCase::new(
            problem("multistage", Some("ref"), (150, 140, 72)),
            Values::Random,
        )
        .unwrap();
        let run = case.run(1).unwrap();
        assert_eq!(run.buffers.len(), 3);
        assert_eq!(run.steps.len(), 1);
        let l = case.launch();
        assert_eq!(run.steps[0].shape, shape_of(&l));
        assert_eq!(
            run.steps[0].args,
            [
                CaseArg::Buffer(D),
                CaseArg::Buffer(A),
                CaseArg::Buffer(B),
                CaseArg::U32(150),
                CaseArg::U32(140),
                CaseArg::U32(72)
            ]
        );
        assert!(case
            .describe()
            .starts_with("multistage f16 (f32 acc, 128x128x32 tile"));
    }

    #[test]
    fn tensor_maps_tables_and_the_workspace_become_buffers() {
        let case =
            GemmCase::new(problem("hopper_ws", None, (300, 296, 128)), Values::Random).unwrap();
        let run = case.run(0).unwrap();
        let names: Vec<&str> = run.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "d", "workspace", "table0"]);
        let maps: Vec<usize> = run.steps[0]
            .args
            .iter()
            .filter_map(|a| match a {
                CaseArg::TensorMap { buffer, .. } => Some(*buffer),
                _ => None,
            })
            .collect();
        assert_eq!(maps.len(), 3, "{:?}", run.steps[0].args);
        assert!(maps.contains(&A) && maps.contains(&B) && maps.contains(&D));
        // The plan names D once as a pointer (beside its map); once more is refused.
        let mut twice = case.launch();
        twice.args.push(GemmArg::D);
        let (a, b) = case.operands(0);
        assert!(steps(&twice, (300, 296, 128), a, b)
            .unwrap_err()
            .contains("D 2 times as a pointer"));
    }

    #[test]
    fn small_integers_keep_every_partial_sum_exact() {
        for (k, dtype, acc) in [
            (72, GemmDtype::Bf16, Accum::F32),
            (1000, GemmDtype::Bf16, Accum::F32),
            (5000, GemmDtype::F16, Accum::F16),
        ] {
            let (b, cols) = int_bound(k, dtype, acc);
            let limit = if dtype == GemmDtype::Bf16 { 256 } else { 2048 };
            assert!((b * b) as usize * cols <= limit, "{k} {dtype} {acc}");
        }
        let p = Problem {
            dtype: GemmDtype::Bf16,
            ..problem("naive", None, (20, 30, 400))
        };
        let case = GemmCase::new(p, Values::SmallIntegers).unwrap();
        let run = case.run(5).unwrap();
        let Check::Bits(want) = &run.expect[0].check else {
            panic!("small integers are checked bit for bit")
        };
        let exact = product(run.input(A).unwrap(), run.input(B).unwrap(), (20, 30, 400));
        assert!((0..want.len()).all(|i| want.value(i) == exact[i]));
        assert!(exact.iter().any(|&v| v.abs() > 4.0));
    }

    #[test]
    fn sweep_shapes_have_residues_and_several_k_tiles() {
        for spec in sweep("multistage") {
            let p = problem("multistage", Some(spec), (64, 64, 64));
            let case = GemmCase::new(p, Values::Random).unwrap();
            let c = *case.plan().downcast_ref::<MultistageConfig>().unwrap();
            let (m, n, k) = shapes_for(case.plan())[0];
            assert!(
                m % c.tile_m as usize != 0 && m > c.tile_m as usize,
                "{spec}"
            );
            assert!(
                n % c.tile_n as usize != 0 && n > c.tile_n as usize,
                "{spec}"
            );
            let k_tiles = k.div_ceil(c.tile_k as usize);
            assert!(
                k % c.tile_k as usize != 0 && k_tiles > c.stages as usize,
                "{spec}"
            );
        }
    }
}
