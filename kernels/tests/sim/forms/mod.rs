//! GEMMs in forms past the packed one (operand majors, leading dimensions, batches, epilogues,
//! output types) in the simulator, each planned by `check_form` and launched as its plan's
//! `launch_form` says (the argument list is the one the runtime builds): D equals the f64
//! reference of the whole expression within the output type's rounding, the elements between
//! D's extents and its leading dimension keep the sentinel they were given, and the report has
//! no finding.

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::sim::{Arg, BufferId, Launch, Memory, Options, Schedule, Simulator, TensorMapArg};
use dsl_macros::device;
use half::{bf16, f16};
use kernels::gemm::epilogue::{
    Activation, Bias, DeviceFn, Elementwise, Epilogue, Gated, Map, Residual, Source,
};
use kernels::gemm::layout::{Batch, Form, Major, OperandLayout, OutType};
use kernels::gemm::reference::{reference, Inputs};
use kernels::gemm::{
    check_form, Accum, Config, Device, FormLens, GemmArg, GemmDtype, GemmOperand, KernelChoice,
    Plan, Problem,
};
use kernels::hopper::{HopperGemm, HopperSchedule, HopperWs};

/// A value D's padding is set to, which no GEMM here produces.
const SENTINEL: f64 = -1024.0;

/// One GEMM in a form, and the program asked for.
#[derive(Clone, Copy)]
pub(crate) struct Case {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) dtype: GemmDtype,
    pub(crate) form: Form,
    pub(crate) kernel: KernelChoice,
}

fn bits_of(x: f64, t: OutType) -> Vec<u8> {
    match t {
        OutType::F16 => f16::from_f64(x).to_bits().to_le_bytes().to_vec(),
        OutType::Bf16 => bf16::from_f64(x).to_bits().to_le_bytes().to_vec(),
        OutType::F32 => (x as f32).to_bits().to_le_bytes().to_vec(),
    }
}

fn value_of(bytes: &[u8], t: OutType) -> f64 {
    match t {
        OutType::F16 => f16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]])).to_f64(),
        OutType::Bf16 => bf16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]])).to_f64(),
        OutType::F32 => f64::from(f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
    }
}

/// `len` values in [-1, 1) rounded to `t` (so the reference sees what the kernel reads).
fn values(seed: u64, len: usize, t: OutType) -> Vec<f64> {
    kernels::cases::Rng::new(seed, 0)
        .floats(len)
        .into_iter()
        .map(|x| t.round(f64::from(x)))
        .collect()
}

fn upload(mem: &mut Memory, name: &str, v: &[f64], t: OutType) -> BufferId {
    let bytes: Vec<u8> = v.iter().flat_map(|&x| bits_of(x, t)).collect();
    // A buffer of no elements is still a pointer a kernel may be handed.
    let bytes = if bytes.is_empty() { vec![0; 4] } else { bytes };
    let id = mem.upload(name, &bytes);
    mem.set_read_only(id, true);
    id
}

/// The host twin of [`causal_scale`].
fn causal_scale_host(x: f64, row: usize, col: usize) -> f64 {
    if col > row {
        0.0
    } else {
        3.0 * x
    }
}

/// A user's epilogue: zero above the diagonal, three times the value on and below it.
#[device]
fn causal_scale(x: Var<f32>, row: Var<u32>, col: Var<u32>) -> Var<f32> {
    select(col.gt(row), Var::konst(0.0f32), x * 3.0f32)
}

/// The device epilogue of these tests.
pub(crate) fn causal() -> DeviceFn {
    DeviceFn::new("causal_scale", causal_scale)
}

/// Plans `case` and runs it in the simulator with `seed`; panics with the case on a finding,
/// a wrong element or a written padding element. Returns the plan.
pub(crate) fn run(case: &Case, device: &Device, seed: u64) -> Plan {
    run_config(case, None, device, seed)
}

/// [`run`] with the schedule `config` asked for (`None`: the program's choice).
fn run_config(case: &Case, config: Option<Config>, device: &Device, seed: u64) -> Plan {
    simulate(case, config, device, seed, None).0
}

/// A change made to a plan's main kernel before it runs: a planted bug.
pub(crate) type Plant<'a> = &'a dyn Fn(&mut dsl_core::ir::Kernel);

/// [`run_config`]; with `plant`, the main kernel changed by it first, and then the reports
/// returned as they are with D's first element off the reference, if any (neither checked:
/// what a planted bug comes to is the caller's to say).
pub(crate) fn simulate(
    case: &Case,
    config: Option<Config>,
    device: &Device,
    seed: u64,
    plant: Option<Plant>,
) -> (Plan, Vec<dsl_core::sim::Report>, Option<String>) {
    let Case {
        m,
        n,
        k,
        dtype,
        form,
        kernel,
    } = *case;
    let what = format!(
        "{m}x{n}x{k} {dtype} A {} B {} ldd {} batch {:?} {} -> {}",
        form.a,
        form.b,
        form.ldd,
        form.batch,
        form.epilogue.describe(),
        form.out_type(dtype)
    );
    let spans = form.spans(m, n, k).unwrap();
    let (inp, out) = (OutType::of(dtype), form.out_type(dtype));
    let a = values(seed ^ 1, spans.a, inp);
    let b = values(seed ^ 2, spans.b, inp);
    let c = values(seed ^ 3, spans.c, out);
    let bias = values(seed ^ 4, spans.bias, out);
    let residual = values(seed ^ 5, spans.residual, out);
    let problem = Problem {
        m,
        n,
        k,
        dtype,
        acc: Accum::F32,
        kernel,
        config,
    };
    let lens = FormLens::from(spans);
    let plan = check_form(&problem, &form, lens, device).unwrap_or_else(|e| panic!("{what}: {e}"));
    let launch = plan.launch_form(m as u32, n as u32, k as u32, &form, device);
    let mut mem = Memory::new();
    let d0 = vec![SENTINEL; spans.d];
    let d_bytes: Vec<u8> = d0.iter().flat_map(|&x| bits_of(x, out)).collect();
    let d = mem.upload("d", &d_bytes);
    let ids = [
        upload(&mut mem, "a", &a, inp),
        upload(&mut mem, "b", &b, inp),
        upload(&mut mem, "c", &c, out),
        upload(&mut mem, "bias", &bias, out),
        upload(&mut mem, "residual", &residual, out),
    ];
    // The runtime's scratch: zeroed, as it allocates it.
    let workspace = mem.upload("workspace", &vec![0f32; launch.workspace as usize]);
    let operand = |o: GemmOperand| match o {
        GemmOperand::A => ids[0],
        GemmOperand::B => ids[1],
        GemmOperand::D => d,
        GemmOperand::Residual => ids[4],
    };
    // The main launch, then the one after it (a reduction of partial sums), each with its kernel.
    let mut kernels = vec![plan.kernel().unwrap()];
    kernels.extend(plan.reduction().map(|r| r.unwrap()));
    if let Some(plant) = plant {
        plant(&mut kernels[0]);
    }
    let mut reports = Vec::new();
    let mut step = Some(&launch);
    for kernel in &kernels {
        let l = step.unwrap_or_else(|| panic!("{what}: a kernel without its launch"));
        let sim = Simulator::new(kernel.check().unwrap_or_else(|e| panic!("{what}: {e}")));
        let args: Vec<Arg> = l
            .args
            .iter()
            .map(|arg| match arg {
                GemmArg::D => Arg::Buffer(d),
                GemmArg::A => Arg::Buffer(ids[0]),
                GemmArg::B => Arg::Buffer(ids[1]),
                GemmArg::C => Arg::Buffer(ids[2]),
                GemmArg::Bias => Arg::Buffer(ids[3]),
                GemmArg::Residual => Arg::Buffer(ids[4]),
                GemmArg::M => Arg::u32(m as u32),
                GemmArg::N => Arg::u32(n as u32),
                GemmArg::K => Arg::u32(k as u32),
                GemmArg::U32(v) => Arg::u32(*v),
                GemmArg::U64(v) => Arg::u64(*v),
                GemmArg::F32(v) => Arg::f32(*v),
                GemmArg::Workspace => Arg::Buffer(workspace),
                GemmArg::TensorMap {
                    operand: o,
                    descriptor,
                } => Arg::Tma(Box::new(TensorMapArg::new(operand(*o), descriptor.clone()))),
                GemmArg::Table(t) => {
                    let table = mem.upload("table", t.as_slice());
                    mem.set_read_only(table, true);
                    Arg::Buffer(table)
                }
            })
            .collect();
        let (gx, gy, gz) = l.grid;
        let (bx, by, bz) = l.block;
        let mut sim_launch = Launch::new([gx, gy, gz], [bx, by, bz])
            .with_dynamic_smem(l.dynamic_smem_bytes)
            .with_sms(4);
        if let Some((cx, cy, cz)) = l.cluster {
            sim_launch = sim_launch.with_cluster([cx, cy, cz]);
        }
        let report = sim
            .run(
                &sim_launch,
                &args,
                &mut mem,
                &Options::seeded(seed, Schedule::Random),
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        if plant.is_none() {
            assert!(report.is_clean(), "{what}: {report}");
        }
        reports.push(report);
        step = l.then.as_deref();
    }
    let got_bytes = mem.read::<u8>(d);
    let got: Vec<f64> = got_bytes
        .chunks_exact(out.bytes())
        .map(|b| value_of(b, out))
        .collect();
    let custom = causal_scale_host;
    let inputs = Inputs {
        a: &a,
        b: &b,
        c: &c,
        bias: &bias,
        residual: &residual,
        custom: &custom,
    };
    let mut want = d0.clone();
    reference((m, n, k), &form, &inputs, &mut want);
    // The kernel sums in f32 and rounds once to D's type; the fast activations add their own
    // error (tanh.approx near 2^-11).
    let tol = match out {
        OutType::F32 => 2e-3,
        OutType::F16 => 4e-3,
        OutType::Bf16 => 1e-2,
    };
    let off = got.iter().zip(&want).enumerate().find_map(|(i, (g, w))| {
        if *w == SENTINEL {
            (*g != SENTINEL).then(|| format!("{what}: padding element {i} was written"))
        } else {
            ((g - w).abs() > tol * (1.0 + w.abs())).then(|| {
                format!(
                    "{what} [{}]: element {i} is {g}, the reference {w}",
                    plan.describe()
                )
            })
        }
    });
    if plant.is_none() {
        if let Some(off) = off {
            panic!("{off}");
        }
    }
    (plan, reports, off)
}

/// A gated epilogue with `act`, `bias` and `residual`.
fn gated(act: Activation, bias: Option<Bias>, residual: Residual) -> Epilogue {
    Epilogue::Gated(Gated {
        bias,
        act,
        residual,
    })
}

/// The padded layout of an operand of `rows x k` in `major`, its leading dimension `pad` past
/// the extent it steps over.
fn padded(major: Major, rows: usize, k: usize, pad: usize) -> OperandLayout {
    OperandLayout {
        major,
        ld: match major {
            Major::K => k + pad,
            Major::MN => rows + pad,
        },
    }
}

fn hopper() -> KernelChoice {
    KernelChoice::named("hopper_ws").unwrap()
}

/// The Hopper program's plan of `case` under `spec` (`None`: the chooser's), run in the
/// simulator with `seed`; returns the plan, after checking that it is hopper_ws's and its
/// schedule the one asked for.
fn hopper_run(case: &Case, spec: Option<&str>, device: &Device, seed: u64) -> Plan {
    let schedule = spec.map(|sp| sp.parse::<HopperSchedule>().unwrap());
    let config = schedule.map(|sc| Config::of(&HopperWs, sc));
    let plan = run_config(case, config, device, seed);
    assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
    let planned = *hopper_schedule(&plan);
    assert!(
        schedule.is_none_or(|sc| planned == sc),
        "{}",
        plan.describe()
    );
    plan
}

/// Whether `plan`'s kernel takes the residual through the staging (R's map among its
/// parameters: [`kernels::hopper::staged_residual`]).
fn stages_residual(plan: &Plan) -> bool {
    let kernel = plan.kernel().unwrap();
    kernel.params.iter().any(|p| p.name == "residual_map")
}

/// The schedule of a hopper_ws plan.
fn hopper_schedule(plan: &Plan) -> &HopperSchedule {
    plan.downcast_ref::<HopperGemm>().unwrap().schedule()
}

mod fuzz;
mod hopper;
mod hopper_batch;
mod multistage;
mod strided;
