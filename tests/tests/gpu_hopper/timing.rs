//! The Hopper GEMM's timings against cuBLAS in the same process, interleaved: levers on shapes
//! from the environment, the square and skinny suites, the host's time to queue a call, the
//! sweeps of levers and rasterization, and the trace of a run's phases.

use super::*;

/// One shape's sets of A, B and D (rotated past L2), rute's output for the checks, and cuBLAS's
/// result on the first set: what the timing tests check a configuration against, then time it
/// beside. Each set has its own D, which rute and cuBLAS both write, as `rute gemm --bench`
/// times: with one D for every launch, a memory-bound GEMM finds the lines of D the launch
/// before wrote still in L2 as far as that launch's eviction hints kept them there (with one D,
/// the levers of one loop at 81920 x 256 x 256 ran 1.12 to 1.25 of cuBLAS where `rute gemm
/// --bench` had just timed the first of them at 1.04).
struct Bench<'j, T> {
    jit: &'j Jit,
    blas: &'j CublasRef<'j>,
    shape: (usize, usize, usize),
    sets: Vec<Set<T>>,
    checked: CudaSlice<T>,
    want: Vec<T>,
}

/// The seed of a shape's inputs, and of its lever loop's orders.
fn shape_seed((m, n, k): (usize, usize, usize)) -> u64 {
    (m * 31 + n * 7 + k) as u64
}

/// One input set and the output its GEMMs write.
struct Set<T> {
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    d: CudaSlice<T>,
}

impl<'j, T> Bench<'j, T>
where
    T: BenchElem,
{
    /// Random inputs for `shape`: at least 200 MB of sets (2 to 16) with their outputs, so that
    /// a set is out of L2 by the time its turn comes again, and cuBLAS's product of the first.
    fn new(jit: &'j Jit, blas: &'j CublasRef<'j>, shape: (usize, usize, usize)) -> Self {
        let (m, n, k) = shape;
        let count = (200usize << 20)
            .div_ceil((m * k + n * k + m * n) * 2)
            .clamp(2, 16);
        let mut rng = Rng::new(shape_seed(shape));
        let mut sets: Vec<_> = (0..count)
            .map(|_| Set {
                a: jit.upload(&rng.matrix::<T>(m * k)).unwrap(),
                b: jit.upload(&rng.matrix::<T>(n * k)).unwrap(),
                d: jit.alloc_zeros::<T>(m * n).unwrap(),
            })
            .collect();
        let first = &mut sets[0];
        blas.gemm(m, n, k, &first.a, &first.b, &mut first.d)
            .unwrap();
        let want = jit.download(&first.d).unwrap();
        Bench {
            jit,
            blas,
            shape,
            sets,
            checked: jit.alloc_zeros::<T>(m * n).unwrap(),
            want,
        }
    }

    /// Runs `c` as `l` launches it on the first set, into a poisoned output, and checks that
    /// output against cuBLAS's.
    fn check(
        &mut self,
        c: &Compiled,
        spec: &str,
        (l, order, ws): (&HopperLaunch, &CudaSlice<u32>, &mut CudaSlice<f32>),
    ) {
        let (jit, shape) = (self.jit, self.shape);
        let (m, n, k) = shape;
        poison(jit, &mut self.checked).unwrap();
        let first = &self.sets[0];
        run(
            jit,
            c,
            shape,
            &first.a,
            &first.b,
            &mut self.checked,
            order,
            (l, ws),
        );
        let err = relative_frobenius_error(&jit.download(&self.checked).unwrap(), &self.want);
        assert!(
            err < 1e-2,
            "{spec} {m}x{n}x{k} {:?}: {err:.2e} from cuBLAS",
            l.split
        );
    }

    /// Checks `c` (stream-K as [`launch`] chooses, or `force`) against cuBLAS on the first set,
    /// then times the two interleaved, median of 20: `(split, rute ms, cuBLAS ms)`.
    fn check_and_time(
        &mut self,
        c: &Compiled,
        spec: &str,
        force: Option<StreamKSplit>,
    ) -> (StreamKSplit, f64, f64) {
        let (jit, shape) = (self.jit, self.shape);
        let (m, n, k) = shape;
        let (l, order, mut ws) = prepare(jit, c, shape, force);
        self.check(c, spec, (&l, &order, &mut ws));
        let count = self.sets.len();
        let (sets, blas) = (&mut self.sets, self.blas);
        let mut round = 0usize;
        let t = jit
            .time_interleaved(20, 2, |piece| {
                // Every call a different set: one call's inputs are out of L2 by its next.
                let Set { a, b, d } = &mut sets[round % count];
                round += 1;
                if piece == 0 {
                    run(jit, c, shape, a, b, d, &order, (&l, &mut ws));
                    Ok(())
                } else {
                    blas.gemm(m, n, k, a, b, d)
                        .map_err(|e| codegen_ptx::jit::JitError::NoGpu {
                            reason: e.to_string(),
                        })
                }
            })
            .unwrap();
        (
            l.split,
            f64::from(t[0].median_ms()),
            f64::from(t[1].median_ms()),
        )
    }
}

/// A lever to time: a configuration (any spelling `--config` takes), its stream-K split, and
/// whether it launches programmatically (the launch's default) or plainly.
struct Lever {
    spec: String,
    split: SplitChoice,
    programmatic: bool,
}

/// How [`interleaved_levers`] splits a lever's tiles.
#[derive(Clone, Copy, Debug)]
enum SplitChoice {
    /// As the launch chooses.
    Auto,
    /// Every tile whole.
    Whole,
    /// Every tile shared out over every resident cluster.
    All,
    /// Past a wave, the last partial wave's tiles and the `n - 1` full waves before it (`@tail`
    /// one, `@tail2` two) shared out over every resident cluster: CUTLASS's "data-parallel
    /// and one stream-K wave" is `@tail2`.
    LastWaves(u32),
}

impl SplitChoice {
    fn parse(s: &str) -> SplitChoice {
        match s {
            "auto" => SplitChoice::Auto,
            "dp" => SplitChoice::Whole,
            "all" => SplitChoice::All,
            "tail" => SplitChoice::LastWaves(1),
            _ => match s.strip_prefix("tail").map(str::parse::<u32>) {
                Some(Ok(waves)) if waves >= 1 => SplitChoice::LastWaves(waves),
                _ => panic!("a lever's split is @auto, @dp, @all or @tail[N], not @{s}"),
            },
        }
    }

    /// The forced split for `c` on `shape` (`None`: the launch's).
    fn force(self, c: &Compiled, shape: (usize, usize, usize)) -> Option<StreamKSplit> {
        let (tiles, kt) = tiles_of(c, shape);
        let share = |sk_tiles: u32| shared_out(c, sk_tiles, kt, c.resident);
        match self {
            SplitChoice::Auto => None,
            SplitChoice::Whole => Some(StreamKSplit::DATA_PARALLEL),
            SplitChoice::All => Some(share(tiles)),
            SplitChoice::LastWaves(waves) if tiles > c.resident => {
                let shared = tiles % c.resident + (waves - 1) * c.resident;
                Some(share(shared.min(tiles)))
            }
            SplitChoice::LastWaves(_) => Some(StreamKSplit::DATA_PARALLEL),
        }
    }
}

/// `RUTE_LEVERS`: comma-separated `config[@auto|@dp|@all|@tail[N]][!]` (default `@auto`; `!`
/// launches plainly rather than programmatically).
fn levers() -> Vec<Lever> {
    let spec = std::env::var("RUTE_LEVERS")
        .unwrap_or_else(|_| "128x256x64s3@auto,128x256x64s3@tail,128x256x64s4_e64@auto".into());
    spec.split(',')
        .map(|l| {
            let l = l.trim();
            let (l, plain) = l.strip_suffix('!').map_or((l, false), |l| (l, true));
            let (spec, split) = l.split_once('@').unwrap_or((l, "auto"));
            Lever {
                spec: spec.to_string(),
                split: SplitChoice::parse(split),
                programmatic: !plain,
            }
        })
        .collect()
}

/// `RUTE_LEVER_SHAPES`: comma-separated `MxNxK` (default the three squares).
fn lever_shapes() -> Vec<(usize, usize, usize)> {
    shapes_from_env(
        "RUTE_LEVER_SHAPES",
        "4096x4096x4096,6144x6144x6144,8192x8192x8192",
    )
}

/// The levers of `RUTE_LEVERS` on the shapes of `RUTE_LEVER_SHAPES` (bf16, or `RUTE_DTYPE=f16`),
/// each checked against cuBLAS, then all of a shape's and cuBLAS timed in one interleaved loop
/// whose rounds each take the pieces in an order of their own (`Jit::time_shuffled`), so that
/// their times compare with each other within a row group as well as with cuBLAS's.
/// As `rute gemm --bench` times, a sample is one GEMM on every input set back to back (the sets
/// together past L2), divided by the set count; median of 20.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn interleaved_levers() {
    if std::env::var("RUTE_DTYPE").as_deref() == Ok("f16") {
        interleaved_levers_of::<half::f16>();
    } else {
        interleaved_levers_of::<half::bf16>();
    }
}

fn interleaved_levers_of<T>()
where
    T: BenchElem,
{
    let jit = jit();
    let blas = CublasRef::new(&jit).unwrap();
    let levers = levers();
    let mut compiled: Vec<(String, Compiled)> = Vec::new();
    for l in &levers {
        if !compiled.iter().any(|(s, _)| *s == l.spec) {
            let cfg = l.spec.parse().unwrap_or_else(|e| panic!("{e}"));
            compiled.push((l.spec.clone(), compile(&jit, cfg, T::DTYPE)));
        }
    }
    let of = |spec: &str| &compiled.iter().find(|(s, _)| s == spec).unwrap().1;
    println!("| dtype | MxNxK | lever | stream-K tiles/clusters | rute ms | cuBLAS ms | rute TFLOP/s | ratio |");
    for shape in lever_shapes() {
        let (m, n, k) = shape;
        let mut bench = Bench::<T>::new(&jit, &blas, shape);
        let mut runs = Vec::new();
        for l in &levers {
            let c = of(&l.spec);
            if c.plan.schedule.takes(m as u32, n as u32, k as u32).is_err() {
                continue;
            }
            let (mut launch, order, mut ws) = prepare(&jit, c, shape, l.split.force(c, shape));
            launch.programmatic = l.programmatic;
            bench.check(c, &l.spec, (&launch, &order, &mut ws));
            runs.push((l, c, launch, order, ws));
        }
        let sets = bench.sets.len();
        let pieces = runs.len() + 1;
        // Each round in an order of its own: at a memory-bound shape a lever's time depends on
        // the L2 the one before it left.
        let t = jit
            .time_shuffled(20, pieces, shape_seed(shape), |piece| {
                for Set { a, b, d } in bench.sets.iter_mut() {
                    if piece == 0 {
                        blas.gemm(m, n, k, a, b, d).map_err(|e| {
                            codegen_ptx::jit::JitError::NoGpu {
                                reason: e.to_string(),
                            }
                        })?;
                    } else {
                        let (_, c, launch, order, ws) = &mut runs[piece - 1];
                        run(&jit, c, shape, a, b, d, order, (launch, ws));
                    }
                }
                Ok(())
            })
            .unwrap();
        let per = |t: &codegen_ptx::jit::Timing| f64::from(t.median_ms()) / sets as f64;
        let theirs = per(&t[0]);
        let runs_resident: Vec<u32> = runs.iter().map(|r| r.1.resident).collect();
        for (i, (l, _, launch, _, _)) in runs.iter().enumerate() {
            let ours = per(&t[i + 1]);
            println!(
                "| {} | {m}x{n}x{k} | {}@{:?}{} ({} resident) | {}/{} | {ours:.4} | {theirs:.4} | {:.0} | {:.3} |",
                T::DTYPE,
                l.spec,
                l.split,
                if l.programmatic { "" } else { " plain" },
                runs_resident[i],
                launch.split.sk_tiles,
                launch.split.sk_blocks,
                2.0 * (m * n * k) as f64 / ours / 1e9,
                theirs / ours
            );
        }
    }
}

/// Times `configs` (stream-K as [`launch`] chooses) against cuBLAS on `shapes`, `T` in, f32
/// sums: median of 20 interleaved rounds over input sets rotated past L2 (at least 200 MB of
/// them), after checking each configuration's output against cuBLAS's on the same inputs.
/// Prints one table row per (shape, configuration) and returns the ratios (cuBLAS time over
/// rute's).
fn time_against_cublas<T>(jit: &Jit, shapes: &[(usize, usize, usize)], configs: &[&str]) -> Vec<f64>
where
    T: BenchElem,
{
    let blas = CublasRef::new(jit).unwrap();
    let dtype = T::DTYPE;
    let compiled: Vec<Compiled> = configs
        .iter()
        .map(|spec| compile(jit, spec.parse().unwrap(), dtype))
        .collect();
    let mut ratios = Vec::new();
    for &(m, n, k) in shapes {
        let mut bench = Bench::<T>::new(jit, &blas, (m, n, k));
        for (spec, c) in configs.iter().zip(&compiled) {
            if c.plan.schedule.takes(m as u32, n as u32, k as u32).is_err() {
                continue;
            }
            let (split, ours, theirs) = bench.check_and_time(c, spec, None);
            let tflops = 2.0 * (m * n * k) as f64 / ours / 1e9;
            let split = format!("{}/{}", split.sk_tiles, split.sk_blocks);
            println!(
                "| {dtype} | {m}x{n}x{k} | {spec} | {split} | {ours:.4} | {theirs:.4} | {tflops:.0} | {:.3} |",
                theirs / ours
            );
            ratios.push(theirs / ours);
        }
    }
    ratios
}

const HEADER: &str =
    "| dtype | MxNxK | config | stream-K tiles/clusters | rute ms | cuBLAS ms | rute TFLOP/s | ratio |";

/// Every sweep configuration against cuBLAS at 4096^3, 6144^3 and 8192^3, bf16 and f16.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn square_timing_against_cublas() {
    let jit = jit();
    let shapes = [(4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192)];
    println!("{HEADER}");
    let configs = sweep();
    let configs: Vec<&str> = configs.iter().map(String::as_str).collect();
    time_against_cublas::<half::bf16>(&jit, &shapes, &configs);
    time_against_cublas::<half::f16>(&jit, &shapes, &configs);
}

/// Decode and skinny shapes (stream-K where the tiles do not fill the device) against cuBLAS.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn skinny_timing_against_cublas() {
    let jit = jit();
    let shapes = [
        (16, 4096, 4096),
        (64, 4096, 4096),
        (128, 4096, 4096),
        (16, 28672, 4096),
        (128, 28672, 4096),
        (16, 4096, 14336),
        (128, 4096, 14336),
        (512, 4096, 4096),
        (512, 8192, 8192),
        (2048, 4096, 4096),
        (81920, 256, 256),
    ];
    println!("{HEADER}");
    time_against_cublas::<half::bf16>(
        &jit,
        &shapes,
        &[
            "128x256x64s3",
            "128x128x64s5",
            "128x128x64s5_f1",
            "128x256x64s3_f1",
        ],
    );
}

/// The host's time to queue one GEMM (what a decode step pays before the GPU sees the work):
/// the test's direct launch and the runtime's `Gemm::run`, split and unsplit, and cuBLAS's call
/// beside them; 200 calls each, the GPU kept busy behind a long spin so that queueing never
/// waits for it. Prints microseconds per call.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn host_time_to_queue_a_gemm() {
    use kernels::gemm::{Accum, Gemm, GemmArgs, KernelChoice};
    let jit = jit();
    let blas = CublasRef::new(&jit).unwrap();
    let gemm = Gemm::new(&jit).unwrap();
    let spin = jit
        .load(codegen_ptx::jit::SPIN_PTX)
        .and_then(|m| m.function("rute_timing_spin"))
        .unwrap();
    let c = compile(&jit, "128x128x64s5".parse().unwrap(), GemmDtype::Bf16);
    for (m, n, k) in [(16usize, 4096usize, 4096usize), (512, 4096, 4096)] {
        let mut rng = Rng::new(5);
        let a = jit.upload(&rng.matrix::<half::bf16>(m * k)).unwrap();
        let b = jit.upload(&rng.matrix::<half::bf16>(n * k)).unwrap();
        let mut d = jit.alloc_zeros::<half::bf16>(m * n).unwrap();
        let (l, order, mut ws) = prepare(&jit, &c, (m, n, k), None);
        let calls = 200u32;
        let per_call = |f: &mut dyn FnMut()| {
            f();
            jit.synchronize().unwrap();
            // 200 calls at up to 100 us each fit under the spin.
            // SAFETY: SPIN_PTX reads its one scalar and touches no memory.
            unsafe {
                spin.launch(
                    &Launch::new((1, 1, 1), (1, 1, 1)),
                    &[KernelArg::U64(40_000_000)],
                )
            }
            .unwrap();
            let t = std::time::Instant::now();
            for _ in 0..calls {
                f();
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(calls);
            jit.synchronize().unwrap();
            us
        };
        let direct =
            per_call(&mut || run(&jit, &c, (m, n, k), &a, &b, &mut d, &order, (&l, &mut ws)));
        let runtime = per_call(&mut || {
            gemm.run(GemmArgs {
                m,
                n,
                k,
                a: &a,
                b: &b,
                d: &mut d,
                acc: Accum::F32,
                kernel: KernelChoice::Auto,
            })
            .unwrap();
        });
        let cublas = per_call(&mut || blas.gemm(m, n, k, &a, &b, &mut d).unwrap());
        println!(
            "host us per call, {m}x{n}x{k} ({:?}): direct {direct:.1}, Gemm::run {runtime:.1}, cuBLAS {cublas:.1}",
            l.split
        );
    }
}

/// The levers for skinny and decode shapes, measured: each (shape, configuration, split) against
/// cuBLAS, checked first; the table the stream-K and tile heuristics are chosen from.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn skinny_lever_sweep() {
    let jit = jit();
    let blas = CublasRef::new(&jit).unwrap();
    let configs = [
        "128x256x64s3",
        "128x128x64s5",
        "128x64x64s8",
        "128x192x64s4",
        "128x16x64s8_t",
        "128x64x64s8_t",
        "256x64x64s4_t",
        "128x128x64s6_t",
        "256x128x64s3",
    ];
    let compiled: Vec<Compiled> = configs
        .iter()
        .map(|s| compile(&jit, s.parse().unwrap(), GemmDtype::Bf16))
        .collect();
    let shapes = [
        (16usize, 6144usize, 4096usize),
        (64, 6144, 4096),
        (16, 4096, 14336),
        (64, 4096, 14336),
        (128, 4096, 14336),
        (128, 6144, 4096),
        (128, 10240, 8192),
        (512, 10240, 8192),
    ];
    println!("| MxNxK | config | stream-K tiles/clusters | rute ms | cuBLAS ms | ratio |");
    for (m, n, k) in shapes {
        let mut bench = Bench::<half::bf16>::new(&jit, &blas, (m, n, k));
        for (spec, c) in configs.iter().zip(&compiled) {
            if c.plan.schedule.swapped() && m > 128 {
                continue;
            }
            // As the launch chooses, every tile whole, every tile shared out over all the
            // clusters or half of them, and only the last partial wave's tiles shared out.
            let (tiles, kt) = tiles_of(c, (m, n, k));
            let share = |sk_tiles: u32, blocks: u32| shared_out(c, sk_tiles, kt, blocks);
            let all = share(tiles, c.resident);
            let half = share(tiles, c.resident / 2);
            let tail = share(tiles % c.resident, c.resident);
            let mut forces = vec![
                None,
                Some(StreamKSplit::DATA_PARALLEL),
                Some(all),
                Some(half),
            ];
            if tiles > c.resident && tiles % c.resident > 0 {
                forces.push(Some(tail));
            }
            for force in forces {
                let (split, ours, theirs) = bench.check_and_time(c, spec, force);
                println!(
                    "| {m}x{n}x{k} | {spec} | {}/{} | {ours:.4} | {theirs:.4} | {:.3} |",
                    split.sk_tiles,
                    split.sk_blocks,
                    theirs / ours
                );
            }
        }
    }
}

/// The raster levers on square shapes: grouped with 2, 4, 8 and 16 rows, and Hilbert.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn square_raster_sweep() {
    let jit = jit();
    let shapes = [(4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192)];
    println!("{HEADER}");
    time_against_cublas::<half::bf16>(
        &jit,
        &shapes,
        &[
            "128x256x64s3",
            "128x256x64s3_g2",
            "128x256x64s3_g4",
            "128x256x64s3_g16",
            "128x256x64s3_h",
        ],
    );
}

/// Where a launch's time goes, block by block ([`kernels::hopper::trace`]): the diagnostic
/// build of each configuration of `RUTE_TRACE_CONFIGS` (default: the short K's default at
/// 81920 x 256 x 256) at each shape of `RUTE_TRACE_SHAPES` (default 81920x256x256 and
/// 8448x256x256, one tile per block), bf16, checked against cuBLAS, then launched on input
/// sets in turn (each past L2 by its turn) and the last launch's stamps read back. Prints, per
/// phase, the blocks' earliest, median and latest time after the first block's start, in
/// microseconds; fails where a block missed a phase or stamped them out of order.
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn trace_of_the_phases() {
    use kernels::hopper::trace::{Phase, PhaseTimes, WORDS_PER_BLOCK};
    let jit = jit();
    let blas = CublasRef::new(&jit).unwrap();
    let configs = std::env::var("RUTE_TRACE_CONFIGS")
        .unwrap_or_else(|_| "64x256x64s6_f1_e128_r4_p_l256_vnnf".into());
    let shapes = shapes_from_env("RUTE_TRACE_SHAPES", "81920x256x256,8448x256x256");
    for spec in configs.split(',') {
        let cfg: HopperSchedule = spec.parse().unwrap_or_else(|e| panic!("{e}"));
        let kernel = kernels::hopper::traced_kernel(cfg, GemmDtype::Bf16).unwrap();
        let c = compile_kernel(&jit, cfg, GemmDtype::Bf16, kernel);
        for &shape in &shapes {
            let (l, order, _) = prepare(&jit, &c, shape, None);
            assert_eq!(
                l.split.sk_tiles, 0,
                "{spec}: a traced launch is data-parallel"
            );
            let blocks = l.grid.0 as usize;
            let mut ws = jit
                .alloc_zeros::<f32>(blocks * WORDS_PER_BLOCK * 2 + QUEUE_WORDS as usize)
                .unwrap();
            let mut bench = Bench::<half::bf16>::new(&jit, &blas, shape);
            bench.check(&c, spec, (&l, &order, &mut ws));
            for _ in 0..3 {
                for Set { a, b, d } in bench.sets.iter_mut() {
                    run(&jit, &c, shape, a, b, d, &order, (&l, &mut ws));
                }
            }
            let words: Vec<u64> = jit
                .download(&ws)
                .unwrap()
                .chunks_exact(2)
                .map(|w| u64::from(w[0].to_bits()) | (u64::from(w[1].to_bits()) << 32))
                .collect();
            let times = PhaseTimes::of_blocks(&words);
            let start = times.iter().map(|t| t.ns(Phase::Entry)).min().unwrap();
            let ordered = [
                Phase::Entry,
                Phase::Ready,
                Phase::ConsumerStart,
                Phase::FirstMainLoop,
                Phase::FirstEpilogue,
                Phase::Consumer0Done,
            ];
            for (b, t) in times.iter().enumerate() {
                for w in ordered.windows(2) {
                    assert!(
                        t.ns(w[0]) > 0 && t.ns(w[0]) <= t.ns(w[1]),
                        "{spec} {shape:?}: block {b} stamped {:?} at {} and {:?} at {}",
                        w[0],
                        t.ns(w[0]),
                        w[1],
                        t.ns(w[1])
                    );
                }
                assert!(
                    t.ns(Phase::ProducerDone) >= t.ns(Phase::Ready),
                    "{spec}: block {b}"
                );
            }
            println!("trace {spec} {shape:?}, {blocks} blocks: us after the first block's start (earliest / median / latest)");
            for p in Phase::ALL {
                let mut us: Vec<f64> = times
                    .iter()
                    .filter(|t| t.ns(p) > 0)
                    .map(|t| (t.ns(p) - start) as f64 / 1e3)
                    .collect();
                if us.is_empty() {
                    println!("| {p:?} | - | - | - |");
                    continue;
                }
                us.sort_by(f64::total_cmp);
                println!(
                    "| {p:?} | {:.2} | {:.2} | {:.2} |",
                    us[0],
                    us[us.len() / 2],
                    us[us.len() - 1]
                );
            }
        }
    }
}
