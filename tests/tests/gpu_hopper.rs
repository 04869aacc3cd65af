//! The warp-specialized Hopper GEMM (`kernels::hopper`) on the H200 (feature `gpu`): every
//! configuration of the sweep (or `RUTE_CONFIGS`'s, on `RUTE_EXTRA_SHAPES` too), f16 and bf16,
//! on shapes with residues in M, N and K, tiny M and K
//! below one k-tile, against f64 (every element for the small shapes, 4096 sampled ones for the
//! large), the output poisoned (NaN) so an element not written shows, stream-K as the launch
//! chooses it and forced onto shapes it would walk whole (the flags checked lowered after each
//! run); then timings against cuBLAS in the same process, interleaved.
//!
//! Without the feature the tests are compiled and listed as ignored.

use codegen_ptx::jit::{tensor_map_spec, CudaSlice, Jit, JitFunction, KernelArg, Launch};
use dsl_core::ir::Target;
use dsl_core::pipeline::StreamKSplit;
use dsl_core::pipeline::QUEUE_WORDS;
use kernels::gemm::harness::{poison, Rng};
use kernels::gemm::metric::{relative_frobenius_error, sampled_f64_error};
use kernels::gemm::{CublasRef, GemmDtype, GemmElem};
use kernels::hopper::fixup::FLAG_WORDS;
use kernels::hopper::schedule::Consumers;
use kernels::hopper::{
    cluster_tiles, hopper_kernel, launch, tile_order, HopperLaunch, HopperPlan, HopperSchedule,
};
use rute_tests::gpu::{jit, Watchdog};

/// A compiled configuration and its plan.
struct Compiled {
    plan: HopperPlan,
    f: JitFunction,
    /// Clusters the device runs at once for this kernel.
    resident: u32,
    /// The device's L2, bytes.
    l2_bytes: u64,
}

fn compile(jit: &Jit, cfg: HopperSchedule, dtype: GemmDtype) -> Compiled {
    let kernel = hopper_kernel(cfg, dtype).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    compile_kernel(jit, cfg, dtype, kernel)
}

/// [`compile`] of a kernel already generated for `cfg` (its diagnostic build, say).
fn compile_kernel(
    jit: &Jit,
    cfg: HopperSchedule,
    dtype: GemmDtype,
    kernel: dsl_core::ir::Kernel,
) -> Compiled {
    let ptx = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
    let f = jit
        .load(&ptx)
        .and_then(|m| m.function(&kernel.name))
        .unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let probe = HopperLaunch::probe(&cfg);
    let mut shape =
        Launch::new(probe.grid, probe.block).with_dynamic_smem(probe.dynamic_smem_bytes);
    if let Some(cl) = probe.cluster {
        shape = shape.with_cluster(cl);
    }
    let resident = f
        .max_active_clusters(&shape)
        .unwrap_or_else(|e| panic!("{cfg}: {e}"));
    assert!(resident > 0, "{cfg}: the device cannot run one cluster");
    Compiled {
        plan: HopperPlan::new(cfg, dtype).unwrap(),
        l2_bytes: kernels::gemm::harness::l2_bytes(jit) as u64,
        f,
        resident,
    }
}

/// The kernel's `(m, n)` for a problem's: swapped for a `_t` configuration.
fn kernel_dims(c: &Compiled, m: usize, n: usize) -> (u32, u32) {
    c.plan.schedule.kernel_dims(m as u32, n as u32)
}

/// The cluster tiles and k-tiles of `shape` for `c`.
fn tiles_of(c: &Compiled, (m, n, k): (usize, usize, usize)) -> (u32, u32) {
    let (km, kn) = kernel_dims(c, m, n);
    let (tm, tn) = cluster_tiles(&c.plan.schedule, km, kn);
    (tm * tn, (k as u32).div_ceil(c.plan.schedule.tile.k()))
}

/// What a launch of `shape` needs beside the operands: the launch (its stream-K split as
/// [`launch`] chooses, or `force` on a grid of every resident cluster), the tile order and the
/// workspace, zeroed (its flags must start lowered).
fn prepare(
    jit: &Jit,
    c: &Compiled,
    (m, n, k): (usize, usize, usize),
    force: Option<StreamKSplit>,
) -> (HopperLaunch, CudaSlice<u32>, CudaSlice<f32>) {
    let (km, kn) = kernel_dims(c, m, n);
    let mut l = launch(&c.plan.schedule, km, kn, k as u32, c.resident, c.l2_bytes);
    if let Some(split) = force {
        let (tiles, kt) = tiles_of(c, (m, n, k));
        assert!(
            split.sk_tiles <= tiles
                && split.sk_blocks <= c.resident
                && split.sk_blocks <= split.sk_tiles * kt,
            "{}: {split:?} does not fit {tiles} tiles of {kt} k-tiles on {} clusters",
            c.plan.schedule,
            c.resident
        );
        l.split = split;
        l.grid.0 = c.resident * c.plan.schedule.cluster_shape().size();
    }
    let order = jit.upload(&tile_order(&c.plan.schedule, km, kn)).unwrap();
    let ws = jit
        .alloc_zeros::<f32>(l.workspace_elems(&c.plan.schedule).max(1) as usize)
        .unwrap();
    (l, order, ws)
}

/// Queues `D = A * B^T` of `m x n x k` on the buffers as `l` launches it.
#[allow(clippy::too_many_arguments)]
fn run<T: GemmElem + codegen_ptx::jit::DeviceRepr + codegen_ptx::jit::AnyBitPattern>(
    jit: &Jit,
    c: &Compiled,
    (m, n, k): (usize, usize, usize),
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    d: &mut CudaSlice<T>,
    order: &CudaSlice<u32>,
    (l, workspace): (&HopperLaunch, &mut CudaSlice<f32>),
) {
    let p = &c.plan;
    let spec = |desc| tensor_map_spec(&desc).unwrap();
    // Swapped, the kernel's A is B, its (m, n) are (n, m), and it sees D transposed.
    let (km, kn) = kernel_dims(c, m, n);
    let (ka, kb) = if p.schedule.swapped() { (b, a) } else { (a, b) };
    let [a_desc, b_desc, d_desc] = p.descriptors(km, kn, k as u32).unwrap();
    let map_a = jit.tensor_map(&spec(a_desc), ka).unwrap();
    let map_b = jit.tensor_map(&spec(b_desc), kb).unwrap();
    let map_d = jit.tensor_map_mut(&spec(d_desc), d).unwrap();
    let mut cfg = Launch::new(l.grid, l.block).with_dynamic_smem(l.dynamic_smem_bytes);
    if let Some(cl) = l.cluster {
        cfg = cfg.with_cluster(cl);
    }
    if l.programmatic {
        cfg = cfg.with_programmatic_launch();
    }
    // SAFETY: hopper_ws reaches A, B and D only through maps whose extents the encoder checked
    // against these buffers, and D's direct stores, the tile order and the workspace inside the
    // lengths `prepare` gave them for this plan and shape; it writes D and the workspace, passed
    // writable.
    unsafe {
        c.f.launch(
            &cfg,
            &[
                (&map_a).into(),
                (&map_b).into(),
                (&map_d).into(),
                KernelArg::MapBuffer(&map_d),
                KernelArg::U32(km),
                KernelArg::U32(kn),
                KernelArg::U32(k as u32),
                jit.buffer(order),
                KernelArg::U32(l.split.sk_tiles),
                KernelArg::U32(l.split.sk_blocks),
                jit.buffer_mut(workspace),
            ],
        )
    }
    .unwrap_or_else(|e| panic!("{}: {e}", p.schedule));
}

/// Runs `shape` (stream-K as [`launch`] chooses, or `force`; on a grid of `blocks` blocks
/// where given: for tiles from a queue, few blocks walking many tiles each, so that the queue's
/// ring of indices wraps) on random data and returns the error against f64 and the split used;
/// every flag of the workspace must be lowered again.
fn check<T: GemmElem + codegen_ptx::jit::DeviceRepr + codegen_ptx::jit::AnyBitPattern>(
    jit: &Jit,
    c: &Compiled,
    shape: (usize, usize, usize),
    seed: u64,
    force: Option<StreamKSplit>,
    blocks: Option<u32>,
) -> (f64, StreamKSplit) {
    let (m, n, k) = shape;
    let mut rng = Rng::new(seed);
    let (ha, hb) = (rng.matrix::<T>(m * k), rng.matrix::<T>(n * k));
    let (a, b) = (jit.upload(&ha).unwrap(), jit.upload(&hb).unwrap());
    let mut d = jit.upload(&vec![T::from_f32(f32::NAN); m * n]).unwrap();
    let (mut l, order, mut ws) = prepare(jit, c, shape, force);
    if let Some(blocks) = blocks {
        l.grid.0 = blocks;
    }
    run(jit, c, shape, &a, &b, &mut d, &order, (&l, &mut ws));
    // Tiles from a queue: the launch lowers the queue's words again, and a second launch on
    // the same workspace (poisoned D) takes every tile once more.
    if c.plan.schedule.queue().is_some() {
        let words = jit.download(&ws).unwrap();
        assert!(
            words[..QUEUE_WORDS as usize]
                .iter()
                .all(|w| w.to_bits() == 0),
            "{} {m}x{n}x{k}: the queue's words left {:?}",
            c.plan.schedule,
            &words[..QUEUE_WORDS as usize]
        );
        d = jit.upload(&vec![T::from_f32(f32::NAN); m * n]).unwrap();
        run(jit, c, shape, &a, &b, &mut d, &order, (&l, &mut ws));
    }
    let hd = jit
        .download(&d)
        .unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", c.plan.schedule));
    let unwritten = hd.iter().filter(|v| !v.to_f64().is_finite()).count();
    assert_eq!(
        unwritten, 0,
        "{} {m}x{n}x{k}: {unwritten} elements not written",
        c.plan.schedule
    );
    if l.split.sk_tiles > 0 {
        let flags = jit.download(&ws).unwrap();
        let raised = flags[..FLAG_WORDS as usize]
            .iter()
            .filter(|f| f.to_bits() != 0)
            .count();
        assert_eq!(
            raised, 0,
            "{} {m}x{n}x{k} {:?}: {raised} flags left raised",
            c.plan.schedule, l.split
        );
    }
    let samples = if m * n <= 1 << 16 { m * n } else { 4096 };
    (
        sampled_f64_error(&ha, &hb, &hd, shape, samples, seed),
        l.split,
    )
}

/// The first `sk_tiles` tiles (of `kt` k-tiles each) shared out between `blocks` clusters, as
/// many as the k-tiles and the resident clusters allow.
fn shared_out(c: &Compiled, sk_tiles: u32, kt: u32, blocks: u32) -> StreamKSplit {
    StreamKSplit {
        sk_tiles,
        sk_blocks: blocks.min(sk_tiles * kt).min(c.resident),
    }
}

/// Stream-K forced onto `shape`: every tile shared between `blocks` clusters (or, `hybrid`, a
/// third of the tiles, the rest whole), as many as the k-tiles allow.
fn forced(c: &Compiled, shape: (usize, usize, usize), blocks: u32, hybrid: bool) -> StreamKSplit {
    let (tiles, kt) = tiles_of(c, shape);
    let sk_tiles = if hybrid { (tiles / 3).max(1) } else { tiles };
    shared_out(c, sk_tiles, kt, blocks)
}

/// The sweep's configurations, or the configurations `RUTE_CONFIGS` names (comma-separated,
/// any spelling `--config` takes: a candidate before it joins the sweep), for a device run short
/// of time; a name that does not parse is an error, so a typo does not pass as an empty run.
fn sweep() -> Vec<String> {
    let Ok(only) = std::env::var("RUTE_CONFIGS") else {
        return HopperSchedule::SWEEP
            .iter()
            .map(|s| s.to_string())
            .collect();
    };
    only.split(',')
        .map(|name| {
            let name = name.trim();
            if let Err(e) = name.parse::<HopperSchedule>() {
                panic!("RUTE_CONFIGS: {e}");
            }
            name.to_string()
        })
        .collect()
}

/// Shapes a resident B (`_r`) takes (N up to its tile's, K up to its k-tiles), beside those of
/// [`SHAPES`] that fit it: residues in M, N and K, and many tiles over one B.
const RESIDENT_SHAPES: [(usize, usize, usize); 4] = [
    (8192, 256, 256),
    (3000, 256, 136),
    (777, 248, 200),
    // 313 tiles on 132 blocks: with `_b`, 264 whole, then 130 pieces of 24 rows (the last 8).
    (20000, 256, 256),
];

/// Shapes with residues in every dimension (rows 16-byte aligned: N and K multiples of 8), tiny
/// M, K below one k-tile, and whole tiles; the decode shapes are split along K.
const SHAPES: [(usize, usize, usize); 12] = [
    (16, 4096, 4096),
    (1, 1024, 2056),
    (100, 1032, 3000),
    (256, 256, 256),
    (300, 520, 200),
    (129, 136, 72),
    (1, 256, 64),
    (17, 1000, 8),
    (640, 768, 1024),
    (1000, 1000, 1000),
    (2048, 2048, 4096),
    (77, 4096, 4160),
];

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn every_configuration_matches_f64() {
    let jit = jit();
    // A kernel that waits forever on a barrier would stall the run: each GEMM gets 60 s (the
    // largest shape's f64 check included).
    let watchdog = Watchdog::new(std::time::Duration::from_secs(60));
    let mut worst = [0f64; 2];
    let mut runs = 0;
    // Shapes of a regime the candidates are for (`RUTE_EXTRA_SHAPES`, comma-separated MxNxK),
    // beside the residues every configuration meets.
    let extra = shapes_from_env("RUTE_EXTRA_SHAPES", "");
    for spec in sweep() {
        let cfg: HopperSchedule = spec.parse().unwrap();
        for (i, dtype) in [GemmDtype::F16, GemmDtype::Bf16].into_iter().enumerate() {
            let c = compile(&jit, cfg, dtype);
            eprintln!("{spec} {dtype}: {} clusters resident", c.resident);
            // Every shape as the launch chooses, then stream-K forced: every tile shared out
            // unevenly, and a third of the tiles shared with the rest whole.
            // A resident B takes only a B of one tile: its own shapes (residues in M and K,
            // N below the tile's), the sweep's shapes that fit it, and stream-K forced.
            // Ping-pong consumers own whole tiles: never shared out.
            let forced_runs: &[((usize, usize, usize), u32, bool)] =
                if matches!(cfg.consumers, Consumers::PingPong(_)) {
                    &[]
                } else if cfg.resident_b().is_some() {
                    &[((2048, 256, 256), 5, false), ((1000, 200, 240), 3, true)]
                } else {
                    &[
                        ((300, 520, 1000), 7, false),
                        ((129, 136, 520), 5, false),
                        ((640, 768, 1024), 11, true),
                    ]
                };
            let own: &[(usize, usize, usize)] = if cfg.resident_b().is_some() {
                &RESIDENT_SHAPES
            } else {
                &[]
            };
            let runs_of = SHAPES
                .iter()
                .chain(own)
                .chain(&extra)
                .filter(|&&(m, n, k)| cfg.takes(m as u32, n as u32, k as u32).is_ok())
                .map(|&s| (s, None, None))
                .chain(
                    forced_runs
                        .iter()
                        .map(|&(s, blocks, hybrid)| (s, Some(forced(&c, s, blocks, hybrid)), None)),
                )
                // Tiles from a queue on three blocks: 104-105 tiles each, the ring wrapping.
                .chain(
                    cfg.queue()
                        .is_some()
                        .then_some(((20000, 256, 256), None, Some(3))),
                );
            for (j, (shape, force, blocks)) in runs_of.enumerate() {
                watchdog.step(format!(
                    "{spec} {dtype} {shape:?} split {force:?} blocks {blocks:?}"
                ));
                let (err, split) = match dtype {
                    GemmDtype::F16 => {
                        check::<half::f16>(&jit, &c, shape, 7 + j as u64, force, blocks)
                    }
                    GemmDtype::Bf16 => {
                        check::<half::bf16>(&jit, &c, shape, 7 + j as u64, force, blocks)
                    }
                };
                let tol = if dtype == GemmDtype::F16 { 2e-3 } else { 4e-3 };
                assert!(
                    err <= tol,
                    "{spec} {dtype} {shape:?} {split:?}: error {err:.3e} > {tol:.0e}"
                );
                eprintln!("  {shape:?} {split:?}: error {err:.2e}");
                // The decode shape is shared out where its tiles are few: swapped (32 weight
                // tiles) and on the 128x256 tiles (16 of them).
                if shape == (16, 4096, 4096) && (cfg.swapped() || spec == "128x256x64s3") {
                    assert!(split.sk_tiles > 0, "{spec}: 16x4096x4096 is walked whole");
                }
                worst[i] = worst[i].max(err);
                runs += 1;
            }
        }
    }
    println!(
        "hopper_ws: {runs} runs ({} configurations x f16, bf16 x up to 15 shapes) match f64; worst f16 {:.2e}, bf16 {:.2e}",
        sweep().len(),
        worst[0],
        worst[1]
    );
}

/// One small shape of every configuration, whole and shared out by stream-K, f16 and bf16: the run
/// compute-sanitizer's memcheck, racecheck and synccheck check (`scripts/gpu_sanitize.sh`).
#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn small_shape_of_every_configuration() {
    let jit = jit();
    for spec in sweep() {
        let cfg: HopperSchedule = spec.parse().unwrap();
        for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
            let c = compile(&jit, cfg, dtype);
            // A resident B takes N up to its tile's and K up to its k-tiles.
            let (whole, split) = if cfg.resident_b().is_some() {
                ((200, 256, 136), (40, 256, 256))
            } else {
                ((200, 264, 136), (40, 264, 520))
            };
            // Ping-pong consumers own whole tiles: the second shape walked whole too. Tiles
            // from a queue also on three blocks, 16 tiles: the queue's ring wraps.
            let shared = (!matches!(cfg.consumers, Consumers::PingPong(_)))
                .then(|| forced(&c, split, 3, false));
            let queued = cfg
                .queue()
                .is_some()
                .then_some(((1000, 256, 136), None, Some(3)));
            for (shape, force, blocks) in [(whole, None, None), (split, shared, None)]
                .into_iter()
                .chain(queued)
            {
                let (err, _) = match dtype {
                    GemmDtype::F16 => check::<half::f16>(&jit, &c, shape, 3, force, blocks),
                    GemmDtype::Bf16 => check::<half::bf16>(&jit, &c, shape, 3, force, blocks),
                };
                assert!(err <= 4e-3, "{spec} {dtype} {shape:?}: error {err:.3e}");
            }
        }
    }
    println!(
        "hopper_ws: every configuration on 200x264x136 and 40x264x520 (stream-K over 3 clusters) matches f64"
    );
}

/// An element type the timing tests upload, download and zero: f16 or bf16.
trait BenchElem:
    GemmElem
    + codegen_ptx::jit::DeviceRepr
    + codegen_ptx::jit::AnyBitPattern
    + codegen_ptx::jit::ValidAsZeroBits
    + Copy
{
}

impl<T> BenchElem for T where
    T: GemmElem
        + codegen_ptx::jit::DeviceRepr
        + codegen_ptx::jit::AnyBitPattern
        + codegen_ptx::jit::ValidAsZeroBits
        + Copy
{
}

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

/// The comma-separated `MxNxK` shapes of the environment variable `var`, else of `default`.
fn shapes_from_env(var: &str, default: &str) -> Vec<(usize, usize, usize)> {
    let spec = std::env::var(var).unwrap_or_else(|_| default.into());
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let d: Vec<usize> = s
                .trim()
                .split('x')
                .map(|v| v.parse().unwrap_or_else(|_| panic!("shape {s} is MxNxK")))
                .collect();
            assert_eq!(d.len(), 3, "shape {s} is MxNxK");
            (d[0], d[1], d[2])
        })
        .collect()
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
