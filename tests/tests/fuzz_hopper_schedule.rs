//! A fuzz of `hopper_ws`'s schedules, through their spelling and through their parts'
//! constructors, from a fixed seed: every schedule accepted builds (a plan, a kernel, PTX), fits
//! the shared memory with its static barriers (as the kernel declares them), round-trips its
//! spelling, plans any problem in well under a second, and on a sample assembles with ptxas
//! without spills or a stack frame within the consumers' registers; everything else is refused
//! with a sentence; nothing panics.
//!
//! `RUTE_FUZZ_CASES` sets the cases (default 1200) and `RUTE_FUZZ_PTXAS` one accepted schedule
//! in how many goes through ptxas (default 8; 1 for all). The ptxas part needs `RUTE_PTXAS`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::ir::Target;
use dsl_core::pipeline::{Raster, StreamKRegion};
use kernels::gemm::{check, Accum, BufferLens, Config, Device, GemmDtype, KernelChoice, Problem};
use kernels::hopper::schedule::*;
use kernels::hopper::{hopper_kernel, HopperWs};

/// The harness's seeded generator, with the draws the fuzz makes: the cases are the same on
/// every run.
struct Rng(kernels::gemm::harness::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(kernels::gemm::harness::Rng::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A spelling near the grammar: the parts of one kind of consumers (cooperative, ping-pong or
/// swapped) with values near their ranges, in any order; in a quarter of the cases mutated: a
/// part of another kind, a part twice, out-of-range values, an unknown part or garbage.
fn random_spelling(rng: &mut Rng) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        Cooperative,
        PingPong,
        Swapped,
    }
    let kind = rng.pick(&[
        Kind::Cooperative,
        Kind::Cooperative,
        Kind::PingPong,
        Kind::Swapped,
    ]);
    let m = match kind {
        Kind::PingPong => rng.pick(&[64, 64, 128]),
        _ => rng.pick(&[64, 128, 128, 256]),
    };
    let widest = match (kind, m) {
        (Kind::PingPong, 128) => 128,
        (Kind::Cooperative, 256) => 160,
        _ => 256,
    };
    let n = 16 * (1 + rng.below(widest / 16));
    let k = if rng.chance(85) { 64 } else { 128 };
    let deep = rng.chance(30);
    let s = 2 + rng.below(if deep { 15 } else { 7 });
    let mut parts: Vec<String> = Vec::new();
    fn add(parts: &mut Vec<String>, p: u64, part: String, rng: &mut Rng) {
        if rng.chance(p) {
            parts.push(part);
        }
    }
    let c = rng.pick(&["2x1", "1x2", "4x1", "1x4"]);
    add(
        &mut parts,
        if kind == Kind::PingPong { 3 } else { 12 },
        format!("c{c}"),
        rng,
    );
    let order = rng.pick(&["h", "g1", "g4", "g16", "gm"]);
    add(&mut parts, 25, order.to_string(), rng);
    add(&mut parts, 35, "f1".into(), rng);
    let divisors: Vec<u64> = (1..n / 16)
        .map(|d| 16 * d)
        .filter(|e| n.is_multiple_of(*e))
        .collect();
    let direct = kind != Kind::Swapped && rng.chance(20);
    if !direct && kind != Kind::Swapped && !divisors.is_empty() && rng.chance(25) {
        let e = rng.pick(&divisors);
        parts.push(format!("e{e}"));
        add(&mut parts, 25, "d2".into(), rng);
    }
    if direct {
        let u = rng.pick(&[4, 8, 16]);
        parts.push(format!("u{u}"));
    }
    let resident =
        kind != Kind::Swapped && rng.chance(if kind == Kind::PingPong { 50 } else { 15 });
    if resident {
        let r = rng.pick(&[1, 2, 4, 4, 8]);
        parts.push(format!("r{r}"));
        let a = 1 + rng.below(4);
        add(&mut parts, 8, format!("a{a}"), rng);
    }
    match kind {
        Kind::PingPong => {
            parts.push("p".into());
            let q = rng.pick(&["q", "ql"]);
            add(&mut parts, 25, q.into(), rng);
            add(&mut parts, if direct { 0 } else { 20 }, "o".into(), rng);
            add(&mut parts, if resident { 20 } else { 0 }, "b".into(), rng);
        }
        Kind::Cooperative => add(&mut parts, 10, "w".into(), rng),
        Kind::Swapped => parts.push("t".into()),
    }
    add(&mut parts, 15, "n".into(), rng);
    // Stream-K over every tile: cooperative consumers' (a mutation elsewhere).
    add(
        &mut parts,
        if kind == Kind::PingPong { 3 } else { 15 },
        "k".into(),
        rng,
    );
    let l = rng.pick(&[0, 64, 128, 256]);
    add(&mut parts, 15, format!("l{l}"), rng);
    let letters = ['n', 'e', 'f', 'l'];
    let v: String = (0..3).map(|_| rng.pick(&letters)).collect();
    add(&mut parts, 20, format!("v{v}"), rng);
    // Mutations: what the grammar refuses.
    if rng.chance(25) {
        let odd = rng.pick(&[
            "p", "o", "q", "b", "w", "t", "k", "e24", "e0", "d2", "d3", "r0", "r17", "a5", "f2",
            "f0", "u2", "l100", "vfx", "vnnnn", "c2x2", "c0x1", "g0", "gx", "z", "", "x1", "c",
            "pp",
        ]);
        parts.push(odd.into());
    }
    for i in (1..parts.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        parts.swap(i, j);
    }
    if !parts.is_empty() && rng.chance(5) {
        let again = parts[rng.below(parts.len() as u64) as usize].clone();
        parts.push(again);
    }
    let (m, n, k, s) = if rng.chance(5) {
        (
            rng.pick(&[0, 32, 96, 192, 512]),
            rng.pick(&[0, 8, 24, 264, 1000]),
            rng.pick(&[0, 32, 256]),
            rng.pick(&[0, 1, 17, u64::from(u32::MAX)]),
        )
    } else {
        (m, n, k, s)
    };
    let mut spec = format!("{m}x{n}x{k}s{s}");
    for p in parts {
        spec.push('_');
        spec.push_str(&p);
    }
    if rng.chance(2) {
        spec = rng
            .pick(&["", "wide", "128x256x64", "x_y", "128x256x64s3__", "¿"])
            .into();
    }
    spec
}

/// A schedule built from its parts' constructors with random values (most near their ranges,
/// some far outside them): the constructors' refusal, or the value.
fn random_parts(rng: &mut Rng) -> Result<HopperSchedule, Refusal> {
    let wide = |rng: &mut Rng, near: u32| -> u32 {
        match rng.below(20) {
            0 => u32::MAX,
            1 => 0,
            2 => rng.next() as u32,
            _ => near,
        }
    };
    let m = rng.pick(&[64, 128, 128, 256]);
    let widths = if m == 256 { 10 } else { 16 };
    let n = 16 * (1 + rng.below(widths) as u32);
    let k = if rng.chance(85) { 64 } else { 128 };
    let deep = rng.chance(30);
    let s = 2 + rng.below(if deep { 15 } else { 7 }) as u32;
    let tile = Tile::new(wide(rng, m), wide(rng, n), wide(rng, k), wide(rng, s))?;
    let (x, y) = rng.pick(&[(1, 1), (1, 1), (1, 1), (2, 1), (1, 2), (4, 1), (1, 4)]);
    let cluster = Cluster::new(wide(rng, x), wide(rng, y))?;
    let b = if rng.chance(30) {
        let r = rng.pick(&[1, 2, 4, 8, 16]);
        let a = if rng.chance(10) {
            rng.below(5) as u32
        } else {
            0
        };
        BPlacement::Resident(ResidentB::new(wide(rng, r), wide(rng, a))?)
    } else {
        BPlacement::Ring
    };
    let sub_tile = if rng.chance(30) {
        let cols = 16 * (1 + rng.below(15) as u32);
        let buffers = rng.pick(&[Buffers::One, Buffers::Two]);
        SubTile::Columns(Columns::new(wide(rng, cols), buffers)?)
    } else {
        SubTile::Whole
    };
    let width = rng.pick(&[StoreWidth::B4, StoreWidth::B8, StoreWidth::B16]);
    let direct = rng.chance(20);
    let consumers = if rng.chance(35) {
        let store = if direct {
            PingPongStore::Direct(width)
        } else {
            PingPongStore::Tma {
                sub_tile,
                staging: rng.pick(&[Staging::Own, Staging::Shared]),
            }
        };
        Consumers::PingPong(PingPong {
            b,
            store,
            source: rng.pick(&[
                TileSource::Static,
                TileSource::Queue(Take::Early),
                TileSource::Queue(Take::Late),
            ]),
            last_wave: rng.pick(&[LastWave::AsIs, LastWave::Evened, LastWave::RowsSharedOut]),
        })
    } else {
        let operands = if rng.chance(15) {
            Operands::Swapped(rng.pick(&[TransposedStaging::Plain, TransposedStaging::Swizzled]))
        } else {
            Operands::AsGiven {
                b,
                store: if direct {
                    Store::Direct(width)
                } else {
                    Store::Tma(sub_tile)
                },
            }
        };
        Consumers::Cooperative(Cooperative {
            operands,
            stream_k: rng.pick(&[StreamKRegion::First, StreamKRegion::Last]),
            waves: rng.pick(&[Waves::AsMany, Waves::Evened, Waves::Streamed]),
        })
    };
    let hints = [
        None,
        Some(CacheHint::EvictFirst),
        Some(CacheHint::EvictLast),
        Some(CacheHint::EvictNormal),
    ];
    let schedule = HopperSchedule {
        tile,
        cluster,
        in_flight: rng.pick(&[InFlight::Zero, InFlight::One]),
        consumers,
        order: rng.pick(&[
            Raster::Hilbert,
            Raster::AlongM,
            Raster::Grouped { group: 8 },
            Raster::Grouped { group: 1 },
            Raster::Grouped { group: 0 },
        ]),
        l2: L2Policy {
            promotion: rng.pick(&[
                L2Promotion::None,
                L2Promotion::B64,
                L2Promotion::B128,
                L2Promotion::B256,
            ]),
            hints: CacheHints {
                a: rng.pick(&hints),
                b: rng.pick(&hints),
                d: rng.pick(&hints),
            },
        },
    };
    schedule.check().map(|()| schedule)
}

/// A refusal is a sentence: words, no debug dump, no placeholder.
fn assert_sentence(what: &str, e: &str, failures: &mut Vec<String>) {
    let ok = e.len() > 20
        && e.contains(' ')
        && !e.contains("{:")
        && !e.contains("Some(")
        && !e.contains("Refusal")
        && !e.ends_with(' ');
    if !ok {
        failures.push(format!("{what}: refused without a sentence: {e:?}"));
    }
}

/// A problem the command line accepts: each dimension up to `i32::MAX`, N and K multiples of 8
/// where the schedule's program needs it (the rest are refused by the check, not planned).
fn random_problem(rng: &mut Rng) -> (usize, usize, usize) {
    let mut dim = |multiple: u64| -> usize {
        let v = match rng.below(4) {
            0 => 1 + rng.below(256),
            1 => 1 + rng.below(1 << 16),
            2 => 1 + rng.below(1 << 24),
            _ => 1 + rng.below(i32::MAX as u64),
        };
        (v.next_multiple_of(multiple)
            .min(i32::MAX as u64 / multiple * multiple)) as usize
    };
    (dim(1), dim(8), dim(8))
}

/// Plans `problem` with `config` (or the default) and makes its launch, timed: under a second,
/// and a refusal, if any, a sentence.
fn plan_in_time(
    (m, n, k): (usize, usize, usize),
    config: Option<Config>,
    device: &Device,
    failures: &mut Vec<String>,
) {
    let p = Problem {
        m,
        n,
        k,
        dtype: GemmDtype::Bf16,
        acc: Accum::F32,
        kernel: KernelChoice::Program(&HopperWs),
        config: config.clone(),
    };
    let lens = BufferLens {
        a: m * k,
        b: n * k,
        d: m * n,
    };
    let start = Instant::now();
    let planned = catch_unwind(AssertUnwindSafe(|| {
        check(&p, lens, device).map(|plan| plan.launch(m as u32, n as u32, k as u32, device))
    }));
    let took = start.elapsed();
    let what = format!(
        "{m} x {n} x {k} with {}",
        config
            .as_ref()
            .map_or("the default".into(), |c| c.to_string())
    );
    match planned {
        Err(_) => failures.push(format!("{what}: planning panicked")),
        Ok(Err(e)) => assert_sentence(&what, &e.to_string(), failures),
        Ok(Ok(launch)) => {
            if let Err(e) = launch.check() {
                failures.push(format!("{what}: its launch: {e}"));
            }
        }
    }
    if took > Duration::from_secs(1) {
        failures.push(format!("{what}: planning took {took:?}"));
    }
}

/// What every accepted schedule must show.
fn builds(schedule: HopperSchedule, assemble: bool, rng: &mut Rng, failures: &mut Vec<String>) {
    let spelled = schedule.to_string();
    match spelled.parse::<HopperSchedule>() {
        Ok(back) if back == schedule => {}
        other => failures.push(format!("{spelled}: spelled and read back: {other:?}")),
    }
    if schedule.block_smem_bytes() > SMEM_LIMIT {
        failures.push(format!("{spelled}: accepted past the shared memory"));
    }
    let dtype = if rng.chance(50) {
        GemmDtype::F16
    } else {
        GemmDtype::Bf16
    };
    let kernel = match catch_unwind(|| hopper_kernel(schedule, dtype)) {
        Ok(Ok(k)) => k,
        Ok(Err(e)) => return failures.push(format!("{spelled} {dtype}: does not generate: {e}")),
        Err(_) => return failures.push(format!("{spelled} {dtype}: generating panicked")),
    };
    let declared: u64 = kernel.shared.iter().fold(0u64, |at, a| {
        at.next_multiple_of(u64::from(a.align)) + a.bytes
    });
    if declared != u64::from(schedule.static_smem_bytes()) {
        failures.push(format!(
            "{spelled}: {declared} bytes of static shared memory, the schedule counts {}",
            schedule.static_smem_bytes()
        ));
    }
    let ptx = match codegen_ptx::emit(&kernel, Target::Sm90a) {
        Ok(p) => p,
        Err(e) => return failures.push(format!("{spelled} {dtype}: does not emit: {e}")),
    };
    if assemble {
        match codegen_ptx::ptxas::assemble(&ptx, Target::Sm90a) {
            Err(e) => failures.push(format!("{spelled} {dtype}: ptxas: {e}")),
            Ok(r) => {
                if r.spill_store_bytes + r.spill_load_bytes + r.stack_frame_bytes > 0
                    || r.registers > REGISTERS.1
                    || r.registers * schedule.threads() > 65536
                {
                    failures.push(format!(
                        "{spelled} {dtype}: {} registers, spills {}/{}, stack {}",
                        r.registers, r.spill_store_bytes, r.spill_load_bytes, r.stack_frame_bytes
                    ));
                }
                // ptxas counts the static memory padded to the dynamic memory's alignment, as
                // the schedule's fit does.
                let padded = schedule.block_smem_bytes() - schedule.smem_bytes();
                if r.shared_bytes != u64::from(padded) {
                    failures.push(format!(
                        "{spelled}: ptxas says {} bytes of static shared memory, the schedule \
                         counts {padded}",
                        r.shared_bytes
                    ));
                }
            }
        }
    }
    let device = Device::h200();
    let config = Config::of(&HopperWs, schedule);
    for _ in 0..2 {
        plan_in_time(random_problem(rng), Some(config.clone()), &device, failures);
    }
}

#[test]
fn every_accepted_schedule_builds_fits_and_assembles() {
    let cases = env("RUTE_FUZZ_CASES", 1200);
    let ptxas_every = env("RUTE_FUZZ_PTXAS", 8).max(1);
    let mut rng = Rng::new(0x5eed_0f40_77e5);
    let (mut accepted, mut assembled) = (0, 0);
    let mut failures = Vec::new();
    for case in 0..cases {
        // Half of the cases through the spelling, half through the parts.
        let (what, schedule) = if case % 2 == 0 {
            let spec = random_spelling(&mut rng);
            match catch_unwind(|| spec.parse::<HopperSchedule>()) {
                Err(_) => {
                    failures.push(format!("`{spec}`: parsing panicked"));
                    continue;
                }
                Ok(r) => (spec, r.map_err(|e| e.to_string())),
            }
        } else {
            match catch_unwind(AssertUnwindSafe(|| random_parts(&mut rng))) {
                Err(_) => {
                    failures.push(format!("case {case}: building from parts panicked"));
                    continue;
                }
                Ok(r) => (
                    "a schedule from parts".to_string(),
                    r.map_err(|e| e.to_string()),
                ),
            }
        };
        match schedule {
            Err(e) => assert_sentence(&what, &e, &mut failures),
            Ok(s) => {
                accepted += 1;
                let assemble = accepted % ptxas_every == 0;
                assembled += usize::from(assemble);
                builds(s, assemble, &mut rng, &mut failures);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {cases} cases ({accepted} accepted, {assembled} assembled):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The generator reaches the accepted schedules, and ptxas sees some of them.
    assert!(accepted >= cases / 8, "{accepted} of {cases} accepted");
    assert!(assembled >= accepted / ptxas_every, "{assembled} assembled");
    println!("{cases} cases, {accepted} accepted, {assembled} assembled");
}

/// Planning is fast for every problem the command line accepts, whatever its default: the
/// Hilbert order's table is linear in its tiles and bounded, the rest of the plan constant.
#[test]
fn planning_any_problem_takes_under_a_second() {
    let device = Device::h200();
    let mut failures = Vec::new();
    // One row of 65535 tiles of 256 columns, each dimension at its largest, and a few edges.
    for shape in [
        (128, 16_776_960, 64),
        (1, 8, 8),
        (i32::MAX as usize, 8, 8),
        (8, 2_147_483_640, 8),
        (8, 8, 2_147_483_640),
        (65536, 65536, 65536),
        (1 << 24, 1 << 16, 1024),
    ] {
        plan_in_time(shape, None, &device, &mut failures);
    }
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..200 {
        plan_in_time(random_problem(&mut rng), None, &device, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
