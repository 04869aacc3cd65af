//! The multistage GEMM program, top-down like CuTe's tutorial (`09_multistage_gemm.cu`): the
//! tensors and their partitions, the prologue that fills `stages - 1` shared tiles, the main loop
//! (per k-tile: `ldmatrix` of the next k-block, `cp.async` of a new tile at the first k-block,
//! `mma.sync` of the current one; `wait_group stages-2` and `bar.sync` before the last k-block
//! switches the read stage; the last k-tile peeled, reading no k-block past it), and the
//! epilogue (registers to D, or through shared memory with `st.shared` or `stmatrix`).
//!
//! Where rute goes past the tutorial: the main loop is generated twice with one body. Blocks
//! whose rows of A and B all exist run the first copy while the k-tile to load is whole, with
//! `cp.async` that carry no predicate and no source size; the second copy, with predicated,
//! zero-filling copies, takes the remaining k-tiles and every block at the edge of M or N. On
//! the H200 that took about 100 integer instructions per k-tile out of the loop (`ptxas` keeps
//! the 16 copies' row addresses in registers) and the reference from 0.54x to about 0.61x of
//! cuBLAS at 4096^3.

use std::cell::RefCell;

use dsl_core::kernel::*;
use dsl_core::layout::LayoutError;
use dsl_core::tensor::{
    clear, copy, copy_s2g, cp_async_fence, cp_async_wait_n, gemm, store_fragment,
    store_fragment_smem, CTensor, Fragment, GTensor, Idx, STensor,
};
use dsl_core::tiled::Side;
use dsl_macros::kernel;

use super::{Epilogue, MultistageError, Setup};
use crate::gemm::epilogue::DeviceEpilogue;
use crate::gemm::fused::{elementwise, store_gated, FormParams, FusedOperands, ThreadTile};
use crate::gemm::layout::{Major, OutType};
use crate::gemm::strided::OutElem;
use crate::gemm::Accum;

use Idx::{All, At, Dyn};

/// The accumulator fragment: f16 pairs in 32-bit registers, or f32 registers.
#[derive(Clone, Debug)]
enum AccFragment {
    F16(Fragment<u32>),
    F32(Fragment<f32>),
}

/// Keeps the first error of an operation generated inside device control flow, where `?` cannot
/// leave the closure the branch or loop body runs in.
fn note(slot: &RefCell<Option<LayoutError>>, r: Result<(), LayoutError>) {
    if let Err(e) = r {
        slot.borrow_mut().get_or_insert(e);
    }
}

/// The ring buffer's stage after `stage` (of `stages`).
fn next_stage(stage: Var<u32>, stages: u32) -> Var<u32> {
    select(stage.eq_(stages - 1), 0u32, stage + 1u32)
}

/// This block's tile of D, `(M tile, N tile)`, and how many rows of A and D exist for it (`m`,
/// or 0 for a block with nothing to do).
///
/// In plain order block `(x, y)` computes tile `(y, x)`. With `raster_log2 = s` the grid is
/// `(tiles_n << s, ceil(tiles_m / 2^s))` and block `(x, y)` computes M tile `(y << s) + x % 2^s`
/// and N tile `x >> s`: consecutive blocks sweep `2^s` M tiles of one N tile before moving on, so
/// the blocks resident at one time share tiles of A and B in L2. A block whose M tile is past
/// the end sees a matrix of no rows at tile 0: it reads and writes nothing, and no address it
/// forms leaves the matrices.
fn block_tile(cfg: &super::MultistageConfig, m: Var<u32>) -> (Var<u32>, Var<u32>, Var<u32>) {
    let (bx, by) = (block_idx_x(), block_idx_y());
    let s = cfg.raster_log2;
    if s == 0 {
        return (by, bx, m);
    }
    let tile_m = (by << s) + (bx & ((1u32 << s) - 1));
    let inside = tile_m.lt((m + (cfg.tile_m - 1)) / cfg.tile_m);
    (
        select(inside, tile_m, 0u32),
        bx >> s,
        select(inside, m, 0u32),
    )
}

/// Where a thread's part of D is: D's `rows x n`, the block's tile `(tm, tn)`, the thread.
struct DTileAt {
    rows: Var<u32>,
    n: Var<u32>,
    tm: Var<u32>,
    tn: Var<u32>,
    thread: Var<u32>,
}

/// A form's store of a thread's sums `acc` (placed by `tile`): a gated epilogue stores
/// its pairs' results; the others rewrite the sums in their registers and store them as the
/// register epilogue does, to the block's tile of D (`rows x n` seen from tile `(tm, tn)`,
/// partitioned like the sums for the thread).
fn fused_store<O: OutElem>(
    plan: &Setup,
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
    at: &DTileAt,
) -> Result<(), LayoutError> {
    let DTileAt {
        rows,
        n,
        tm,
        tn,
        thread: idx,
    } = *at;
    if epi.epilogue.is_gated() {
        store_gated(epi, acc, tile, ops);
        return Ok(());
    }
    if *epi.epilogue != crate::gemm::epilogue::Epilogue::Plain {
        elementwise(epi, acc, tile, ops);
    }
    let (bm, bn) = (i64::from(plan.cfg.tile_m), i64::from(plan.cfg.tile_n));
    let gd = GTensor::new(ops.d, &[rows, n], &[ops.ldd, Var::konst(1)])
        .local_tile(&[bm, bn], &[Dyn(tm), Dyn(tn)])?;
    store_fragment(acc, &gd.partition_c(&plan.mma, idx)?)
}

/// The multistage GEMM of `plan` (its [`Setup`]) for elements of type `T` (`half::f16` or `half::bf16`).
/// Parameters: `(d, a, b, m, n, k)`; see [`super`].
#[kernel]
pub fn multistage<T: DeviceType>(
    #[host] plan: &Setup,
    kb: &KernelBuilder,
    d: GlobalPtr<T>,
    a: GlobalPtr<T>,
    b: GlobalPtr<T>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) -> Result<(), MultistageError> {
    // ---- Configuration ----
    let cfg = &plan.cfg;
    let bk = cfg.tile_k;
    let stages = cfg.stages;
    let nk = plan.frag_a.mode(2)?.size(); // k-blocks (of 16) per k-tile
    kb.require_threads(cfg.threads(), 1, 1);
    let failed = RefCell::new(None::<LayoutError>);

    let idx = thread_idx_x();
    // This block's tile of D and the rows of A and D it sees (none for a block past the last
    // M tile, which the rasterized grid may have).
    let (tm, tn, rows) = block_tile(cfg, m);
    let (bm, bn) = (i64::from(cfg.tile_m), i64::from(cfg.tile_n));

    // ---- A form's parameters (leading dimensions, batch strides, the epilogue's operands) ----
    let fp = plan.form.map(|_| FormParams::declare(kb));
    // The batch's GEMM: grid z (a packed kernel reads no z).
    let z = match plan.form {
        Some(_) => block_idx_z(),
        None => Var::konst(0u32),
    };
    // An operand in the form's layout: its batch's start, its leading dimension along the
    // major's other axis; packed, row-major as always.
    let operand = |p: GlobalPtr<T>,
                   rows: Var<u32>,
                   major: Major,
                   ld: fn(&FormParams) -> (Var<u32>, Var<u64>)| {
        match fp {
            None => GTensor::row_major(p, rows, k),
            Some(fp) => {
                let (ld, stride) = ld(&fp);
                let start = p + z.cast::<u64>() * stride;
                let strides = match major {
                    Major::K => [ld, Var::konst(1u32)],
                    Major::MN => [Var::konst(1u32), ld],
                };
                GTensor::new(start, &[rows, k], &strides)
            }
        }
    };
    let (major_a, major_b) = plan.form.map_or((Major::K, Major::K), |f| (f.a, f.b));

    // ---- Global tensors: this block's strips of A and B (k-tiles as the last mode), D's tile ----
    let ga = operand(a, rows, major_a, |f| (f.lda, f.batch_a))
        .local_tile(&[bm, i64::from(bk)], &[Dyn(tm), All])?;
    let gb = operand(b, n, major_b, |f| (f.ldb, f.batch_b))
        .local_tile(&[bn, i64::from(bk)], &[Dyn(tn), All])?;
    // The same strips without bounds, for the k-tiles of blocks whose rows all exist: those
    // copies need no predicates and no clamped addresses (most of the main loop's integer work).
    let (ga_full, gb_full) = (ga.without_bounds(), gb.without_bounds());
    let interior = ga.remaining(0).ge(cfg.tile_m as i32) & gb.remaining(0).ge(cfg.tile_n as i32);
    let gd = GTensor::row_major(d, rows, n).local_tile(&[bm, bn], &[Dyn(tm), Dyn(tn)])?;

    // ---- Shared memory: `stages` tiles of A, then of B ----
    let smem = kb.dynamic_shared::<T>(128);
    let sa = STensor::new(smem, plan.smem_a.clone())?;
    let sb = STensor::new(smem + (plan.smem_a.cosize() as u32), plan.smem_b.clone())?;

    // ---- MMA fragments ----
    let t_cr_a = Fragment::<u32>::new(plan.frag_a.clone(), 2)?;
    let t_cr_b = Fragment::<u32>::new(plan.frag_b.clone(), 2)?;
    let acc = match cfg.acc {
        Accum::F16 => AccFragment::F16(Fragment::new(plan.frag_c.clone(), 2)?),
        Accum::F32 => AccFragment::F32(Fragment::new(plan.frag_c.clone(), 1)?),
    };
    match &acc {
        AccFragment::F16(f) => clear(f),
        AccFragment::F32(f) => clear(f),
    }

    // ---- S2R: ldmatrix partitions of the shared tiles, fragments retiled to match ----
    let t_as_a = sa.partition(&plan.s2r_a, Side::Src, idx)?; // (CPY, CPY_M, CPY_K, stage)
    let t_bs_b = sb.partition(&plan.s2r_b, Side::Src, idx)?;
    let t_cr_a_view = t_cr_a.with_layout(plan.retile_a.clone());
    let t_cr_b_view = t_cr_b.with_layout(plan.retile_b.clone());

    // ---- G2S: cp.async partitions ----
    let t_ag_a = ga.partition(&plan.g2s, Side::Src, idx)?; // (CPY, CPY_M, CPY_K, k-tile)
    let t_as_a_copy = sa.partition(&plan.g2s, Side::Dst, idx)?; // (CPY, CPY_M, CPY_K, stage)
    let t_bg_b = gb.partition(&plan.g2s_b, Side::Src, idx)?;
    let t_bs_b_copy = sb.partition(&plan.g2s_b, Side::Dst, idx)?;
    let t_ag_a_full = ga_full.partition(&plan.g2s, Side::Src, idx)?;
    let t_bg_b_full = gb_full.partition(&plan.g2s_b, Side::Src, idx)?;

    // One k-tile of A and B from global into a stage; `full`: every row and column of it exists.
    let load_tile = |tile: Idx, stage: Idx, full: bool| -> Result<(), LayoutError> {
        let (g, s) = ([All, All, All, tile], [All, All, All, stage]);
        let (ta, tb) = if full {
            (&t_ag_a_full, &t_bg_b_full)
        } else {
            (&t_ag_a, &t_bg_b)
        };
        copy(&plan.g2s_atom, &ta.slice(&g)?, &t_as_a_copy.slice(&s)?)?;
        copy(&plan.g2s_atom, &tb.slice(&g)?, &t_bs_b_copy.slice(&s)?)
    };
    // One k-block of A and B from a stage into registers.
    let load_kblock = |kblock: i64, stage: Var<u32>| -> Result<(), LayoutError> {
        let (s, r) = ([All, All, At(kblock), Dyn(stage)], [All, All, At(kblock)]);
        copy(&plan.s2r_atom, &t_as_a.slice(&s)?, &t_cr_a_view.slice(&r)?)?;
        copy(
            &plan.s2r_b_atom,
            &t_bs_b.slice(&s)?,
            &t_cr_b_view.slice(&r)?,
        )
    };
    let mma_kblock = |kblock: i64| -> Result<(), LayoutError> {
        let (fa, fb) = (
            t_cr_a.slice(&[All, All, At(kblock)])?,
            t_cr_b.slice(&[All, All, At(kblock)])?,
        );
        match &acc {
            AccFragment::F16(c) => gemm(&plan.mma, c, &fa, &fb),
            AccFragment::F32(c) => gemm(&plan.mma, c, &fa, &fb),
        }
    };

    // ---- Pipeline state ----
    let ntile = (k + (bk - 1)) / bk;
    let nfull = k / bk; // k-tiles whose columns all exist

    // The k-tiles the loops take: all but the last, which is peeled (below). K = 0 has no last
    // k-tile; the peeled one then sums the prologue's zero-filled tile 0, adding nothing.
    let nlooped = ntile.max(1u32) - 1u32;
    let mut itile_to_read = Var::konst(stages - 1).fresh();
    let mut ismem_read = Var::konst(0u32).fresh();
    let mut ismem_write = Var::konst(stages - 1).fresh();

    // ---- K = 0: nothing to sum ----
    // The copies below point a k-tile past K at the block's first column of A and B, read
    // and zeroed; with no columns there is no such element (A and B may be empty), so the
    // whole main loop is skipped and the sums stay zero (a BLAS call with k = 0 computes
    // `beta C`).
    if k.gt(0u32) {
        // ---- Prologue: fill stages - 1 tiles (tiles past K are zero-filled by the predicate) ----
        for istage in 0..i64::from(stages - 1) {
            note(&failed, load_tile(At(istage), At(istage), false));
            cp_async_fence();
        }
        cp_async_wait_n(stages - 2);
        sync_threads();
        note(&failed, load_kblock(0, ismem_read));

        // ---- Main loop over k-tiles ----
        // Two loops with one body: the first while the k-tile to load is whole and the block's rows
        // all exist (its copies carry no predicates; a branch inside one loop would be if-converted
        // by ptxas, which then issues both copies), the second for the rest (predicated copies).
        // Configurations with copies narrower than 16 bytes (the fallbacks for K not a multiple of 8)
        // keep the one predicated loop: their many copies' hoisted addresses would spill.
        let fast_loop = cfg.copy_bits == 128;
        let loops = &[true, false][usize::from(!fast_loop)..];
        let n_fast = if fast_loop {
            select(interior & nfull.gt(stages - 1), nfull - (stages - 1), 0u32)
        } else {
            Var::konst(0u32)
        };
        for &fast in loops {
            let (first, last) = if fast {
                (0u32.into_var(), n_fast)
            } else {
                (n_fast, nlooped)
            };
            for _itile in first..last {
                for ik in 0..nk {
                    let ik_next = (ik + 1) % nk;
                    if ik == nk - 1 {
                        // The next stage must have landed before its first k-block is read.
                        cp_async_wait_n(stages - 2);
                        sync_threads();
                        ismem_read = next_stage(ismem_read, stages);
                    }
                    note(&failed, load_kblock(ik_next, ismem_read));
                    if ik == 0 {
                        if fast {
                            note(
                                &failed,
                                load_tile(Dyn(itile_to_read), Dyn(ismem_write), true),
                            );
                            itile_to_read = itile_to_read + 1u32;
                            ismem_write = next_stage(ismem_write, stages);
                        } else if itile_to_read.lt(ntile) {
                            note(
                                &failed,
                                load_tile(Dyn(itile_to_read), Dyn(ismem_write), false),
                            );
                            itile_to_read = itile_to_read + 1u32;
                            ismem_write = next_stage(ismem_write, stages);
                        }
                        cp_async_fence();
                    }
                    note(&failed, mma_kblock(ik));
                }
            }
        }

        // ---- The last k-tile, peeled: no read-ahead past it ----
        // In the loops each k-tile's last k-block reads the next k-tile's first. After the last
        // k-tile that read would land in the stage after it, which nothing writes where K spans
        // exactly `stages - 1` k-tiles (the prologue fills `stages - 1` stages, no tile is left to
        // load into the last): an `ldmatrix` of uninitialized shared memory. Peeled rather than
        // guarded so that the loops carry no test; it also drops the last k-tile's wait and
        // barrier, which guarded a stage nobody reads, and its empty `cp.async` group.
        for ik in 0..nk {
            if ik + 1 < nk {
                note(&failed, load_kblock(ik + 1, ismem_read));
            }
            note(&failed, mma_kblock(ik));
        }
    }

    failed.into_inner().map_or(Ok(()), Err)?;

    // ---- A form's epilogue: through the registers, each value placed in D ----
    if let (Some(form), Some(fp)) = (plan.form, fp) {
        let AccFragment::F32(acc) = &acc else {
            return Err(MultistageError::Config {
                cfg: cfg.parts(),
                reason: "a form's epilogue takes f32 sums".into(),
            });
        };
        // This thread's accumulators in the sum: the block's tile at (tm, tn), the thread's
        // first value within it, the plan's offsets from there.
        let (bm32, bn32) = (cfg.tile_m, cfg.tile_n);
        let first = CTensor::new(&[Var::konst(bm32), Var::konst(bn32)])
            .local_tile(&[bm, bn], &[At(0), At(0)])?
            .partition_c(&plan.mma, idx)?
            .origin();
        let (row0, col0) = (tm * bm32, tn * bn32);
        let tile = ThreadTile {
            base: (row0 + first[0], col0 + first[1]),
            values: plan.acc_offsets.clone(),
            extents: (rows, n),
            whole: (row0 + bm32).le(rows) & (col0 + bn32).le(n),
        };
        let epi = DeviceEpilogue {
            epilogue: &form.epilogue,
            alpha: fp.alpha,
            beta: fp.beta,
        };
        let dp = d.cast::<u32>();
        let at = DTileAt {
            rows,
            n,
            tm,
            tn,
            thread: idx,
        };
        let tile = &tile;
        match form.out {
            OutType::F16 => {
                fused_store(plan, &epi, acc, tile, &fp.operands::<half::f16>(dp, z), &at)?
            }
            OutType::Bf16 => fused_store(
                plan,
                &epi,
                acc,
                tile,
                &fp.operands::<half::bf16>(dp, z),
                &at,
            )?,
            OutType::F32 => fused_store(plan, &epi, acc, tile, &fp.operands::<f32>(dp, z), &at)?,
        }
        return Ok(());
    }

    // ---- Epilogue: accumulators to D, each element stored where it exists ----
    match cfg.epilogue {
        Epilogue::Registers => {
            let t_cg_d = gd.partition_c(&plan.mma, idx)?;
            match &acc {
                AccFragment::F16(c) => store_fragment(c, &t_cg_d)?,
                AccFragment::F32(c) => store_fragment(c, &t_cg_d)?,
            }
        }
        Epilogue::Smem | Epilogue::Stmatrix => {
            // The pipeline's buffers become D's tile once every copy has landed and every warp
            // has read its last k-block.
            cp_async_wait_n(0);
            sync_threads();
            let sd = STensor::new(smem, plan.smem_d.clone())?;
            match (cfg.epilogue, &acc) {
                (Epilogue::Stmatrix, acc) => {
                    // CuTe's sm90 epilogue: accumulators as 16-bit pairs, `stmatrix.x4` through
                    // `make_tiled_copy_C`.
                    let t_cs_d = sd.partition(&plan.r2s, Side::Dst, idx)?;
                    let pairs = match acc {
                        AccFragment::F16(c) => c.clone(),
                        AccFragment::F32(c) => c.to_pairs::<T>()?,
                    };
                    copy(
                        &plan.r2s_atom,
                        &pairs.with_layout(plan.retile_c.clone()),
                        &t_cs_d,
                    )?;
                }
                (_, AccFragment::F16(c)) => {
                    store_fragment_smem(c, &sd.partition_c(&plan.mma, idx)?)?
                }
                (_, AccFragment::F32(c)) => {
                    store_fragment_smem(c, &sd.partition_c(&plan.mma, idx)?)?
                }
            }
            sync_threads();
            let t_ds_d = sd.partition(&plan.s2g, Side::Src, idx)?;
            let t_dg_d = gd.partition(&plan.s2g, Side::Dst, idx)?;
            copy_s2g(&plan.s2g_atom, &t_ds_d, &t_dg_d)?;
        }
    }
    Ok(())
}
