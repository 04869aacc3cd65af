//! A TMA producer/consumer pipeline (sm_90a): the L2 norm of each row of an f32 matrix,
//! `out[r] = sqrt(sum_c X[r][c]^2)`.
//!
//! Block `b` owns rows `64 b .. 64 b + 63` and walks their 64-column tiles through a ring of
//! [`STAGES`] shared buffers:
//!
//! - the producer, one elected lane of warpgroup 0, waits until a stage is empty, tells the
//!   stage's `full` barrier how many bytes to expect, and has the TMA unit load the tile into it;
//! - the consumer, warpgroup 1 (128 threads: row `t % 64`, 32 columns from `32 (t / 64)`), waits
//!   until the stage is full, squares and adds its values, and once all 128 threads have read it
//!   (a named barrier) one elected lane marks the stage empty again.
//!
//! The barriers and the stage/phase bookkeeping are `dsl_core::pipeline`'s (`TmaBarriers`,
//! `Barriers`, `PipelineState`), the TMA load and the stage's register copy come from atoms and
//! layouts. TMA fills what lies past the matrix with zeros, so any extents work.
//!
//! Run it with `cargo run --example tma_pipeline`: it prints the kernel's PTX, then, on an sm_90
//! GPU, runs it through its typed launch on a 1000 x 1000 + 36 matrix and prints `PASS` when
//! every row is within 1e-5 of the f64 norm.

use codegen_ptx::jit::{tensor_map_spec, Jit, JitError, Launch};
use dsl_core::atom::tma::{make_tma_copy, TmaCopy, TmaGlobal, TmaKind};
use dsl_core::atom::{CopyAtom, UniversalCopy, ValType};
use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError, Swizzle};
use dsl_core::pipeline::{
    elect_one, warp_id_in_warpgroup, warpgroup_id, warpgroup_sync, Barriers, NamedBarrier,
    PipelineState, TmaBarriers,
};
use dsl_core::tensor::{copy, Fragment, Idx, STensor};
use dsl_core::tiled::{make_fragment_like, make_tiled_copy, Side, TiledCopy, View};
use dsl_macros::{device, kernel, layout};

/// Depth of the ring.
const STAGES: u32 = 4;
/// Rows and columns of a tile.
const TILE: u32 = 64;
/// The producer warpgroup and the consumer warpgroup.
const THREADS: u32 = 256;

/// What the host computes once: the TMA copy of a tile, the ring's layout, the consumer's copy
/// of a stage into registers and its fragment.
struct Plan {
    tma: TmaCopy,
    ring: Layout,
    s2r: TiledCopy,
    frag: Layout,
}

impl Plan {
    fn new() -> Result<Plan, LayoutError> {
        let tile = layout!((64, 64):(64, 1));
        let smem = ComposedLayout::new(Swizzle::identity(), 0, tile.clone());
        let tma = make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F32), &smem)?;
        let ring = Layout::new(
            IntTuple::ints(&[64, 64, i64::from(STAGES)]),
            IntTuple::ints(&[64, 1, 64 * 64]),
        )?;
        // 128 threads: thread t reads 32 consecutive columns of row t % 64, 16 bytes at a time.
        let atom = CopyAtom::new(UniversalCopy { bits: 128 }, ValType::F32)?;
        let s2r = make_tiled_copy(atom, &layout!((64, 2):(1, 64)), &layout!((1, 32):(0, 1)))?;
        let frag = make_fragment_like(&s2r.partition(Side::Src, &View::from(tile))?.layout)?;
        Ok(Plan {
            tma,
            ring,
            s2r,
            frag,
        })
    }
}

/// Why the kernel could not be generated.
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

/// The producer: one elected lane streams the block's tiles into the ring.
#[device]
fn producer(
    plan: &Plan,
    map: &TensorMap,
    full: &TmaBarriers,
    empty: &Barriers,
    ring: SharedPtr<f32>,
    row0: Var<u32>,
    tiles: Var<u32>,
) {
    if warp_id_in_warpgroup() == 0 && elect_one() {
        let mut ps = PipelineState::producer(STAGES);
        for kt in 0..tiles {
            empty.wait(&ps);
            full.arrive_expect_tx(&ps, plan.tma.bytes());
            let stage = ring + ps.stage() * (TILE * TILE);
            plan.tma
                .load(map, &[row0, kt * TILE], stage, full.at(ps.stage()), None);
            ps.advance();
        }
    }
}

/// The consumer: each thread's sum of squares over its columns of every tile.
#[device]
fn consumer(
    plan: &Plan,
    full: &TmaBarriers,
    empty: &Barriers,
    ring: SharedPtr<f32>,
    tiles: Var<u32>,
) -> Result<Var<f32>, Error> {
    let t = thread_idx_x() - 128;
    let mine = STensor::new(ring, plan.ring.clone())?.partition(&plan.s2r, Side::Src, t)?;
    let mut sum = Var::konst(0.0f32).fresh();
    let mut cs = PipelineState::consumer(STAGES);
    for _kt in 0..tiles {
        full.wait(&cs);
        let vals = Fragment::<f32>::new(plan.frag.clone(), 1)?;
        let stage = mine.slice(&[Idx::All, Idx::All, Idx::All, Idx::Dyn(cs.stage())])?;
        copy(&plan.s2r.atom, &stage, &vals)?;
        for v in &vals.regs {
            sum = v.mul_add(*v, sum);
        }
        // All 128 threads have read the stage: one arrival frees it.
        warpgroup_sync(1);
        if warp_id_in_warpgroup() == 0 && elect_one() {
            empty.arrive(&cs);
        }
        cs.advance();
    }
    Ok(sum)
}

/// `out[r] = sqrt(sum_c X[r][c]^2)` for `r < rows`, X read through `x_map`.
#[kernel]
fn row_norms(
    #[host] plan: &Plan,
    kb: &KernelBuilder,
    #[len(rows)] out: GlobalPtr<f32>,
    x_map: ConstTensorMap,
    rows: Var<u32>,
    cols: Var<u32>,
) -> Result<(), Error> {
    kb.require_threads(THREADS, 1, 1);
    let ring = kb.dynamic_shared::<f32>(plan.tma.smem_alignment());
    let full = TmaBarriers::new(kb, "full", STAGES, 1);
    let empty = Barriers::new(kb, "empty", STAGES, 1);
    let partial = kb.shared_array::<f32>("partial", 128, 16);
    if thread_idx_x() == 0 {
        prefetch_tensor_map(&x_map);
        full.init();
        empty.init();
        fence_mbarrier_init();
    }
    sync_threads();

    let row0 = block_idx_x() * TILE;
    let tiles = (cols + (TILE - 1)) / TILE;
    if warpgroup_id() == 0 {
        producer(plan, &x_map, &full, &empty, ring, row0, tiles);
    } else {
        let t = thread_idx_x() - 128;
        let s = consumer(plan, &full, &empty, ring, tiles)?;
        partial.store_at(t, s);
        NamedBarrier::new(2, 128).sync();
        let r = row0 + t;
        if t < TILE && r < rows {
            let total = partial.load_at(t) + partial.load_at(t + TILE);
            out.store_at(r, sqrt_approx(total));
        }
    }
    Ok(())
}

// SAFETY: X is read only through its map, whose extent the encoder checks against the buffer
// (TMA fills what lies past it with zeros); `out` is written only below `rows`, which the typed
// launch checks against its length.
unsafe impl TrustedKernel for RowNormsKernel {}

/// Runs the kernel on `jit` and compares it with the CPU; `Ok(worst relative error)`.
fn run(
    jit: &Jit,
    plan: &Plan,
    rows: usize,
    cols: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let f = jit.compile(&RowNormsKernel::build(plan)?, Target::Sm90a)?;
    // Pseudo-random values in [-1, 1).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let x: Vec<f32> = (0..rows * cols)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    let dx = jit.upload(&x)?;
    let desc = plan
        .tma
        .descriptor(&[rows as u64, cols as u64], &[cols as u64, 1])?;
    let map = jit.tensor_map(&tensor_map_spec(&desc).map_err(JitError::from)?, &dx)?;
    let mut out = jit.alloc_zeros::<f32>(rows)?;
    let grid = (rows as u32).div_ceil(TILE);
    let smem = STAGES * TILE * TILE * 4;
    let cfg = Launch::new((grid, 1, 1), (THREADS, 1, 1)).with_dynamic_smem(smem);
    RowNormsKernel::launch(f.with(&cfg), &mut out, &map, rows as u32, cols as u32)?;
    let got = jit.download(&out)?;
    let mut worst = 0f64;
    for (r, &g) in got.iter().enumerate() {
        let want = x[r * cols..(r + 1) * cols]
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>()
            .sqrt();
        worst = worst.max((f64::from(g) - want).abs() / want.max(1e-30));
    }
    Ok(worst)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plan = Plan::new()?;
    let kernel = RowNormsKernel::build(&plan)?;
    println!("{}", codegen_ptx::emit(&kernel, Target::Sm90a)?);
    let jit = match Jit::new(0) {
        Ok(jit) => jit,
        Err(e) => {
            println!("no GPU ({e}): the PTX above is the whole result");
            return Ok(());
        }
    };
    if jit.target()? != Target::Sm90a {
        println!(
            "TMA and this kernel need an sm_90 GPU; this one is {:?}",
            jit.limits().compute_capability
        );
        return Ok(());
    }
    // Extents that are not multiples of the tile: a partial last row strip and column tile.
    let (rows, cols) = (1000, 1036);
    let worst = run(&jit, &plan, rows, cols)?;
    if worst < 1e-5 {
        println!("PASS: {rows} x {cols} row norms, worst relative error {worst:.2e}");
        Ok(())
    } else {
        Err(format!("FAIL: worst relative error {worst:.2e}").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel assembles for sm_90a without spills (needs `RUTE_PTXAS`); the GPU run is
    /// `cargo run --example tma_pipeline`.
    #[test]
    fn the_kernel_assembles_without_spills() {
        let plan = Plan::new().unwrap();
        let ptx = codegen_ptx::emit(&RowNormsKernel::build(&plan).unwrap(), Target::Sm90a).unwrap();
        let report = codegen_ptx::ptxas::assemble(&ptx, Target::Sm90a).unwrap();
        assert_eq!((report.spill_store_bytes, report.spill_load_bytes), (0, 0));
    }
}
