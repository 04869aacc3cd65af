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
use kernels::hopper::fixup::flag_words;
use kernels::hopper::schedule::Consumers;
use kernels::hopper::{
    cluster_tiles, hopper_kernel, launch, tile_order, HopperLaunch, HopperPlan, HopperSchedule,
};
use rute_tests::gpu::{jit, Watchdog};

mod timing;

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
        let raised = flags[..flag_words(&c.plan.schedule) as usize]
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
