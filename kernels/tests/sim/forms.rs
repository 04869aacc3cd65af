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
    };
    // The main launch, then the one after it (a reduction of partial sums), each with its kernel.
    let mut kernels = vec![plan.kernel().unwrap()];
    kernels.extend(plan.reduction().map(|r| r.unwrap()));
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
        assert!(report.is_clean(), "{what}: {report}");
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
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if *w == SENTINEL {
            assert_eq!(*g, SENTINEL, "{what}: padding element {i} was written");
        } else {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{what} [{}]: element {i} is {g}, the reference {w}",
                plan.describe()
            );
        }
    }
    plan
}

fn strided() -> KernelChoice {
    KernelChoice::named("strided").unwrap()
}

/// Every operand major, padded leading dimensions, a batch with a shared A, f16 and bf16 in,
/// each output type: the strided program.
#[test]
fn strided_layouts_batches_and_types() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (9, 6, 5);
    let mut seed = 0;
    for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
        for (ma, mb) in [
            (Major::K, Major::K),
            (Major::MN, Major::K),
            (Major::K, Major::MN),
            (Major::MN, Major::MN),
        ] {
            for out in [None, Some(OutType::F32), Some(OutType::Bf16)] {
                let lay = |major, rows: usize| OperandLayout {
                    major,
                    ld: match major {
                        Major::K => k + 3,
                        Major::MN => rows + 1,
                    },
                };
                let (a, b) = (lay(ma, m), lay(mb, n));
                let ldd = n + 2;
                let batch = Batch {
                    count: 2,
                    a: 0,
                    b: b.span(n, k) + 1,
                    c: 0,
                    d: (m - 1) * ldd + n + 3,
                    residual: 0,
                };
                let form = Form {
                    a,
                    b,
                    ldd,
                    batch,
                    out,
                    ..Form::packed(m, n, k)
                };
                seed += 1;
                let case = Case {
                    m,
                    n,
                    k,
                    dtype,
                    form,
                    kernel: strided(),
                };
                run(&case, &device, seed);
            }
        }
    }
}

/// Every epilogue: alpha and beta with C, biases per row and column, each activation, the
/// residual, gated pairs, a user's device function.
#[test]
fn strided_epilogues() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (7, 10, 6);
    let mut epilogues = vec![
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Relu),
            residual: Residual::Add,
        }),
        Epilogue::RESIDUAL,
        Epilogue::Elementwise(Elementwise {
            map: Map::Device(causal()),
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
    ];
    for act in Activation::ALL {
        epilogues.push(Epilogue::bias_act(act));
        epilogues.push(Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act,
            residual: Residual::Add,
        }));
    }
    epilogues.push(Epilogue::SWIGLU);
    for (i, epilogue) in epilogues.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            alpha: 0.75,
            beta: -1.5,
            ldc: cols + 1,
            ldd: cols + 4,
            ldr: cols,
            out: if i % 2 == 0 { None } else { Some(OutType::F32) },
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: if i % 3 == 0 {
                GemmDtype::Bf16
            } else {
                GemmDtype::F16
            },
            form,
            kernel: strided(),
        };
        run(&case, &device, 100 + i as u64);
    }
}

/// K = 0 (BLAS's `beta C`) through `auto` (the multistage program) and the strided one, and a
/// packed problem through `auto`, which goes to the multistage program as before.
#[test]
fn strided_edges_and_auto() {
    let device = Device::unknown(Target::Sm80);
    let beta_c = Form {
        epilogue: Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        }),
        beta: 2.0,
        ..Form::packed(5, 3, 0)
    };
    let case = Case {
        m: 5,
        n: 3,
        k: 0,
        dtype: GemmDtype::F16,
        form: beta_c,
        kernel: KernelChoice::Auto,
    };
    let plan = run(&case, &device, 7);
    assert_eq!(plan.program(), "multistage");
    let plan = run(
        &Case {
            kernel: strided(),
            ..case
        },
        &device,
        7,
    );
    assert_eq!(plan.program(), "strided");
    let packed = Case {
        m: 17,
        n: 5,
        k: 3,
        dtype: GemmDtype::Bf16,
        form: Form::packed(17, 5, 3),
        kernel: KernelChoice::Auto,
    };
    let plan = run(&packed, &device, 8);
    assert_eq!(plan.program(), "multistage");
    // On the H200, K = 0 with rows TMA could map: no tensor map has an extent of 0, so the
    // Hopper program passes it on, saying why, and D is beta C.
    let h200 = Device {
        sms: 4,
        ..Device::h200()
    };
    let rows_of_8 = OperandLayout {
        major: Major::K,
        ld: 8,
    };
    let k0 = Case {
        m: 24,
        n: 16,
        form: Form {
            a: rows_of_8,
            b: rows_of_8,
            ldc: 16,
            ldd: 16,
            ..beta_c
        },
        ..case
    };
    let plan = run(&k0, &h200, 9);
    assert_ne!(plan.program(), "hopper_ws", "{}", plan.describe());
    assert!(
        plan.describe().contains("K = 0 leaves TMA nothing to load"),
        "{}",
        plan.describe()
    );
}

fn multistage() -> KernelChoice {
    KernelChoice::named("multistage").unwrap()
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

/// Every pair of operand majors (an MN-major operand staged MN-major and read by
/// `ldmatrix.trans`), padded leading dimensions, a batch in one launch: the multistage program.
#[test]
fn multistage_every_major_pair_and_batch() {
    let device = Device::unknown(Target::Sm80);
    // Three k-tiles: the ring of three stages lapped.
    let (m, n, k) = (72, 80, 96);
    for (i, (ma, mb)) in [
        (Major::K, Major::K),
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ]
    .into_iter()
    .enumerate()
    {
        let (a, b) = (padded(ma, m, k, 8), padded(mb, n, k, 16));
        let ldd = n + 8;
        let batch = Batch {
            count: 2,
            a: a.span(m, k) + 8,
            b: b.span(n, k) + 40,
            c: 0,
            d: (m - 1) * ldd + n + 8,
            residual: 0,
        };
        let form = Form {
            a,
            b,
            ldd,
            batch,
            ..Form::packed(m, n, k)
        };
        let dtype = if i % 2 == 0 {
            GemmDtype::F16
        } else {
            GemmDtype::Bf16
        };
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: multistage(),
        };
        let plan = run(&case, &device, 200 + i as u64);
        assert!(
            plan.describe()
                .contains(&format!("A {}-major, B {}-major", ma.name(), mb.name())),
            "{}",
            plan.describe()
        );
    }
}

/// Rows and leading dimensions that allow only 4-, 2- and 1-element copies.
#[test]
fn multistage_narrow_copies() {
    let device = Device::unknown(Target::Sm80);
    for (i, (m, n, k, pad, want)) in [
        (68, 36, 20, 4, "64-bit copies"),
        (66, 34, 22, 2, "32-bit copies"),
        (65, 33, 23, 1, "16-bit copies"),
    ]
    .into_iter()
    .enumerate()
    {
        let form = Form {
            a: padded(Major::MN, m, k, pad),
            b: padded(Major::K, n, k, pad),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            form,
            kernel: multistage(),
        };
        let plan = run(&case, &device, 300 + i as u64);
        assert!(plan.describe().contains(want), "{}", plan.describe());
    }
}

/// Epilogues and output types through the multistage program's registers.
#[test]
fn multistage_epilogues() {
    let device = Device::unknown(Target::Sm80);
    let (m, n, k) = (40, 48, 32);
    let epilogues = [
        (
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerRow),
                map: Map::Activation(Activation::GeluTanh),
                residual: Residual::Add,
            }),
            Some(OutType::F32),
        ),
        (Epilogue::bias_act(Activation::Silu), None),
        (
            Epilogue::Gated(Gated {
                bias: Some(Bias::PerColumn),
                act: Activation::GeluErf,
                residual: Residual::Add,
            }),
            Some(OutType::Bf16),
        ),
        (Epilogue::SWIGLU, None),
        (
            Epilogue::Elementwise(Elementwise {
                map: Map::Device(causal()),
                ..Elementwise::IDENTITY
            }),
            Some(OutType::F32),
        ),
    ];
    for (i, (epilogue, out)) in epilogues.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            out,
            alpha: 1.25,
            beta: 0.5,
            ldc: cols + 8,
            ldd: cols + 2,
            ldr: cols + 4,
            b: padded(Major::MN, n, k, 0),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            form,
            kernel: multistage(),
        };
        run(&case, &device, 400 + i as u64);
    }
}

fn hopper() -> KernelChoice {
    KernelChoice::named("hopper_ws").unwrap()
}

/// The Hopper program's forms on the H200's facts: K-major operands with their own leading
/// dimensions (TMA maps over the padded rows) and every kind of epilogue on the accumulators
/// before the schedule's store. (Other output types: [`hopper_output_types`]; strided batches:
/// [`hopper_strided_batches`].)
#[test]
fn hopper_leading_dimensions_and_epilogues() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (136, 144, 200);
    let forms = [
        Form {
            a: padded(Major::K, m, k, 8),
            b: padded(Major::K, n, k, 24),
            ldd: n + 8,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerColumn),
                map: Map::Activation(Activation::GeluTanh),
                residual: Residual::Add,
            }),
            alpha: 1.25,
            beta: 0.5,
            ldc: n + 8,
            ldr: n + 16,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::bias_act(Activation::Silu),
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::SWIGLU,
            ..Form::packed(m, n, k)
        },
        Form {
            epilogue: Epilogue::Elementwise(Elementwise {
                map: Map::Device(causal()),
                ..Elementwise::IDENTITY
            }),
            ..Form::packed(m, n, k)
        },
    ];
    for (i, form) in forms.into_iter().enumerate() {
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let plan = run(&case, &device, 500 + i as u64);
        assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
    }
}

/// MN-major operands on the Hopper program: every pair of majors but the packed one (an
/// MN-major operand's tile staged in GMMA's MN-major swizzled layout by TMA boxes over its
/// columns, the `wgmma` transposing it), padded leading dimensions, M, N and K off the tiles,
/// f16 and bf16, under the chooser's schedule and under schedules that share tiles in a
/// cluster (multicast slices), swap A and B (`_t`), run ping-pong consumers (`_p`) and take a
/// tile N (80) that only the 32-byte swizzle's 16-row atoms divide, and multicast slices of
/// 104 rows that only unswizzled 8-row core matrices divide.
#[test]
fn hopper_mn_major_operands() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (136, 144, 200);
    let pairs = [
        (Major::MN, Major::K),
        (Major::K, Major::MN),
        (Major::MN, Major::MN),
    ];
    let schedules = [
        None,
        Some("128x128x64s4_c2x1"),
        Some("128x64x64s4_c1x2_t"),
        Some("64x128x64s4_p"),
        Some("128x80x64s4"),
        Some("128x208x64s3_c2x1_t"),
    ];
    let mut seed = 700;
    for (s, spec) in schedules.into_iter().enumerate() {
        for (p, (ma, mb)) in pairs.into_iter().enumerate() {
            let form = Form {
                a: padded(ma, m, k, 8 * (1 + p)),
                b: padded(mb, n, k, 16),
                ldd: n + 8,
                ..Form::packed(m, n, k)
            };
            let case = Case {
                m,
                n,
                k,
                dtype: [GemmDtype::F16, GemmDtype::Bf16][(s + p) % 2],
                form,
                kernel: hopper(),
            };
            let schedule = spec.map(|sp| sp.parse::<HopperSchedule>().unwrap());
            let config = schedule.map(|sc| Config::of(&HopperWs, sc));
            seed += 1;
            let plan = run_config(&case, config, &device, seed);
            assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
            let planned = plan.downcast_ref::<HopperGemm>().unwrap().schedule();
            assert!(
                schedule.is_none_or(|sc| *planned == sc),
                "{}",
                plan.describe()
            );
        }
    }
}

/// The Hopper program's plan of `case` under `spec` (`None`: the chooser's), run in the
/// simulator with `seed`; returns its schedule, after checking that the plan is hopper_ws's
/// and the schedule the one asked for.
fn hopper_run(case: &Case, spec: Option<&str>, device: &Device, seed: u64) -> HopperSchedule {
    let schedule = spec.map(|sp| sp.parse::<HopperSchedule>().unwrap());
    let config = schedule.map(|sc| Config::of(&HopperWs, sc));
    let plan = run_config(case, config, device, seed);
    assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
    let planned = *plan.downcast_ref::<HopperGemm>().unwrap().schedule();
    assert!(
        schedule.is_none_or(|sc| planned == sc),
        "{}",
        plan.describe()
    );
    planned
}

/// D in a type other than the operands' on the Hopper program: f32 (stored from the registers,
/// in 8-byte pairs or, swapped, one by one: no staging, no map over D) and bf16 from f16 inputs
/// (the schedule's own store, rounded to bf16), with the plain sum, bias + GELU, C with alpha
/// and beta and a residual, under the chooser's schedule and schedules that swap A and B
/// (`_t`), store D from the registers (`_u`), run ping-pong consumers (`_p`, taking turns on
/// one staging tile: `_o`) and share tiles in a cluster (`_c2x1`); M, N and K off the tiles, D's leading dimension past its columns (odd,
/// for the swapped f32 D stored one value at a time). Two SMs, so that each block walks
/// several tiles.
#[test]
fn hopper_output_types() {
    let device = Device {
        sms: 2,
        ..Device::h200()
    };
    let (m, n, k) = (100, 72, 72);
    let epilogues = [
        Epilogue::Plain,
        Epilogue::bias_act(Activation::GeluTanh),
        Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            ..Elementwise::IDENTITY
        }),
        Epilogue::RESIDUAL,
    ];
    let schedules = [
        None,
        Some("128x64x64s4_t"),
        Some("128x128x64s4_u16"),
        Some("64x64x64s4_p_o"),
        Some("128x64x64s4_c2x1"),
    ];
    let mut seed = 900;
    for (s, spec) in schedules.into_iter().enumerate() {
        for (i, out) in [OutType::F32, OutType::F32, OutType::Bf16]
            .into_iter()
            .enumerate()
        {
            let epilogue = epilogues[(s + i) % epilogues.len()];
            let swapped_f32 = out == OutType::F32 && spec.is_some_and(|sp| sp.ends_with("_t"));
            let ldd = match out {
                OutType::F32 if swapped_f32 => n + 1,
                OutType::F32 => n + 2,
                _ => n + 8,
            };
            let form = Form {
                epilogue,
                out: Some(out),
                alpha: 1.25,
                beta: 0.5,
                ldc: n + 3,
                ldd,
                ldr: n + 5,
                a: padded(Major::K, m, k, 8),
                ..Form::packed(m, n, k)
            };
            let case = Case {
                m,
                n,
                k,
                dtype: [GemmDtype::Bf16, GemmDtype::F16][usize::from(out == OutType::Bf16)],
                form,
                kernel: hopper(),
            };
            seed += 1;
            hopper_run(&case, spec, &device, seed);
        }
    }
}

/// Gated epilogues (SwiGLU, GEGLU) on the Hopper program under schedules that swap A and B
/// (`_t`: the tile is D's transpose, each gate and up pair in two lanes that trade one value),
/// with a bias per column or per row and with a residual, D in the input type or f32: given
/// schedules (in a cluster, streamed over every SM by stream-K) and the chooser's own for few
/// tokens; M, N and K off the tiles.
#[test]
fn hopper_gated_epilogues_swapped() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (n, k) = (144, 72);
    let gated = |act, bias, residual| {
        Epilogue::Gated(Gated {
            bias,
            act,
            residual,
        })
    };
    let cases = [
        (
            100,
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::None),
            None,
            Some("128x64x64s4_c1x2_t"),
        ),
        (
            100,
            gated(Activation::GeluTanh, None, Residual::Add),
            Some(OutType::F32),
            Some("128x80x64s4_t"),
        ),
        (
            40,
            gated(Activation::GeluErf, Some(Bias::PerRow), Residual::Add),
            None,
            Some("128x48x64s4_c2x1_k_t"),
        ),
        (
            40,
            gated(Activation::Silu, Some(Bias::PerColumn), Residual::Add),
            None,
            None,
        ),
    ];
    for (i, (m, epilogue, out, spec)) in cases.into_iter().enumerate() {
        let cols = epilogue.out_cols(n);
        let form = Form {
            epilogue,
            out,
            alpha: 0.75,
            ldd: cols + 8,
            ldr: cols + 3,
            b: padded(Major::K, n, k, 16),
            ..Form::packed(m, n, k)
        };
        let case = Case {
            m,
            n,
            k,
            dtype: [GemmDtype::F16, GemmDtype::Bf16][i % 2],
            form,
            kernel: hopper(),
        };
        let schedule = hopper_run(&case, spec, &device, 950 + i as u64);
        assert!(schedule.swapped(), "{schedule}");
    }
}

/// A strided batch of `count` GEMMs of `m x n x k` with operands in `majors`, padded leading
/// dimensions, and batch strides past each matrix (gaps between the GEMMs that D's must keep),
/// every stride a multiple of 8 elements (16 bytes, as TMA steps); `epilogue` with its C, bias
/// and residual.
fn strided_batch(
    (m, n, k): (usize, usize, usize),
    count: usize,
    (ma, mb): (Major, Major),
    epilogue: Epilogue,
) -> Form {
    let (a, b) = (padded(ma, m, k, 8), padded(mb, n, k, 16));
    let cols = epilogue.out_cols(n);
    let (ldc, ldd, ldr) = (cols + 8, cols + 16, cols + 24);
    // Each matrix's rows (or, MN-major, its k) `ld` apart, then a gap.
    let covered = |l: &OperandLayout, rows: usize| match l.major {
        Major::K => rows * l.ld,
        Major::MN => k * l.ld,
    };
    let batch = Batch {
        count,
        a: covered(&a, m) + 24,
        b: covered(&b, n) + 8,
        c: m * ldc + 40,
        d: m * ldd + 32,
        residual: m * ldr + 16,
    };
    Form {
        a,
        b,
        ldc,
        ldd,
        ldr,
        batch,
        epilogue,
        alpha: 0.75,
        beta: -1.25,
        ..Form::packed(m, n, k)
    }
}

/// `C`, a per-column bias and a residual: what a strided batch's epilogue reads per GEMM (C
/// and the residual) and shares (the bias).
fn batch_epilogue() -> Epilogue {
    Epilogue::Elementwise(Elementwise {
        source: Source::C,
        bias: Some(Bias::PerColumn),
        map: Map::Activation(Activation::Relu),
        residual: Residual::Add,
    })
}

/// A strided batch whose D is not the operands' type or whose epilogue is gated: f32 D (stored
/// from the registers at each GEMM's D) and bf16 D from f16 inputs (the schedule's store, its
/// map's third coordinate the batch), SwiGLU and GEGLU with a bias and a residual, under the
/// chooser's schedule and a swapped one (`_t`, gate and up traded between lanes).
#[test]
fn hopper_strided_batches_of_other_outputs_and_gated_epilogues() {
    use GemmDtype::{Bf16, F16};
    use Major::{K, MN};
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let gated = |act| {
        Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act,
            residual: Residual::Add,
        })
    };
    let small = (72, 40, 72);
    let cases = [
        (None, (K, K), batch_epilogue(), Some(OutType::F32), F16),
        (
            Some("128x64x64s4_t"),
            (MN, K),
            batch_epilogue(),
            Some(OutType::F32),
            Bf16,
        ),
        (None, (K, MN), batch_epilogue(), Some(OutType::Bf16), F16),
        (None, (K, K), gated(Activation::Silu), None, Bf16),
        (
            Some("128x64x64s4_t"),
            (K, MN),
            gated(Activation::GeluTanh),
            None,
            F16,
        ),
        (
            Some("128x64x64s4_t"),
            (K, K),
            gated(Activation::Silu),
            Some(OutType::F32),
            Bf16,
        ),
    ];
    for (i, (spec, majors, epilogue, out, dtype)) in cases.into_iter().enumerate() {
        let form = Form {
            out,
            ..strided_batch(small, 3, majors, epilogue)
        };
        let (m, n, k) = small;
        let case = Case {
            m,
            n,
            k,
            dtype,
            form,
            kernel: hopper(),
        };
        hopper_run(&case, spec, &device, 950 + i as u64);
    }
}

/// One batched case of [`hopper_strided_batches`]: the schedule asked for (`None`: the
/// chooser's), the shape, the batch's count, the operands' majors, the epilogue, the element
/// type and which operands the batch shares (a stride of 0).
struct BatchCase {
    schedule: Option<&'static str>,
    shape: (usize, usize, usize),
    count: usize,
    majors: (Major, Major),
    epilogue: bool,
    dtype: GemmDtype,
    shared: (bool, bool),
}

/// A strided batch in one launch of the Hopper program: 2 to 5 GEMMs, M, N and K off the
/// tiles, every pair of operand majors, padded leading dimensions and gaps between the batch's
/// matrices (D's never written), f16 and bf16, the plain sum and an epilogue with C, a bias and
/// a residual; under the chooser's schedule and schedules with a cluster along M or N (its
/// blocks multicasting slices of one GEMM's B or A), ping-pong consumers with tiles from a
/// queue (`_p_q`), A and B swapped (`_t`), D stored from the registers (`_u`), stream-K over
/// every tile (`_k`: a tile's k-tiles shared between blocks, each GEMM's partial sums its own),
/// the Hilbert order over the batch's tiles (`_h`), an A or a B the batch shares (stride 0), and
/// that B resident (`_r`). Each plan is `hopper_ws`'s, one launch.
#[test]
fn hopper_strided_batches() {
    use GemmDtype::{Bf16, F16};
    use Major::{K, MN};
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let case = |schedule, shape, count, majors, epilogue, dtype| BatchCase {
        schedule,
        shape,
        count,
        majors,
        epilogue,
        dtype,
        shared: (false, false),
    };
    let small = (72, 40, 72);
    let cases = [
        case(None, small, 3, (K, K), true, F16),
        case(None, small, 2, (MN, K), false, Bf16),
        case(None, small, 4, (K, MN), true, Bf16),
        case(None, small, 5, (MN, MN), false, F16),
        case(
            Some("128x64x64s4_c2x1"),
            (136, 72, 40),
            2,
            (K, MN),
            true,
            Bf16,
        ),
        case(
            Some("128x64x64s4_c1x2"),
            (72, 136, 40),
            3,
            (MN, K),
            false,
            F16,
        ),
        case(Some("64x64x64s4_p_q"), small, 3, (MN, K), true, F16),
        case(Some("128x64x64s4_t"), small, 4, (MN, MN), true, Bf16),
        BatchCase {
            shared: (true, false),
            ..case(Some("128x64x64s4_t"), small, 3, (K, K), false, F16)
        },
        case(Some("128x64x64s4_u8"), small, 2, (K, MN), true, F16),
        case(Some("128x64x64s4_k"), small, 3, (MN, K), true, Bf16),
        case(Some("64x64x64s4_h"), small, 5, (K, K), false, Bf16),
        BatchCase {
            shared: (false, true),
            ..case(Some("64x64x64s4_r2_p"), small, 3, (K, MN), true, F16)
        },
    ];
    for (i, c) in cases.iter().enumerate() {
        let (m, n, k) = c.shape;
        let epilogue = if c.epilogue {
            batch_epilogue()
        } else {
            Epilogue::Plain
        };
        let mut form = strided_batch(c.shape, c.count, c.majors, epilogue);
        if c.shared.0 {
            form.batch.a = 0;
        }
        if c.shared.1 {
            form.batch.b = 0;
        }
        let run_case = Case {
            m,
            n,
            k,
            dtype: c.dtype,
            form,
            kernel: hopper(),
        };
        let schedule = c.schedule.map(|sp| sp.parse::<HopperSchedule>().unwrap());
        let config = schedule.map(|sc| Config::of(&HopperWs, sc));
        let plan = run_config(&run_case, config, &device, 900 + i as u64);
        assert_eq!(plan.program(), "hopper_ws", "{}", plan.describe());
        assert!(
            plan.describe().contains("a strided batch in one launch"),
            "{}",
            plan.describe()
        );
        let planned = plan.downcast_ref::<HopperGemm>().unwrap().schedule();
        assert!(
            schedule.is_none_or(|sc| *planned == sc),
            "{}",
            plan.describe()
        );
    }
}

/// What the Hopper program cannot batch goes elsewhere with its reason: a batch stride TMA
/// cannot step by (not a multiple of 16 bytes) to the multistage program, the stride named in
/// the plan's description; a schedule asked for that holds one GEMM's B resident through the
/// walk is refused with its sentence.
#[test]
fn hopper_batches_it_cannot_take() {
    let device = Device {
        sms: 4,
        ..Device::h200()
    };
    let (m, n, k) = (72, 40, 72);
    let mut form = strided_batch((m, n, k), 2, (Major::K, Major::K), Epilogue::Plain);
    form.batch.b += 4;
    let case = Case {
        m,
        n,
        k,
        dtype: GemmDtype::F16,
        form,
        kernel: KernelChoice::Auto,
    };
    let plan = run(&case, &device, 950);
    assert_eq!(plan.program(), "multistage");
    let why = plan.fallback().unwrap_or_default();
    assert!(
        why.contains("the hopper_ws kernel cannot run it")
            && why.contains("B's batch stride of 3532 elements is 7064 bytes"),
        "{why}"
    );
    let form = strided_batch((m, n, k), 2, (Major::K, Major::K), Epilogue::Plain);
    let spans = form.spans(m, n, k).unwrap();
    let lens = FormLens {
        a: spans.a,
        b: spans.b,
        d: spans.d,
        ..FormLens::default()
    };
    let resident: HopperSchedule = "64x64x64s4_r2_p".parse().unwrap();
    let problem = Problem {
        m,
        n,
        k,
        dtype: GemmDtype::F16,
        acc: Accum::F32,
        kernel: hopper(),
        config: Some(Config::of(&HopperWs, resident)),
    };
    let e = check_form(&problem, &form, lens, &device)
        .unwrap_err()
        .to_string();
    assert!(e.contains("keeps B resident (_rR)"), "{e}");
}
