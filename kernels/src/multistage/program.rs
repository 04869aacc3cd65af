//! The multistage GEMM program, top-down like CuTe's tutorial (`09_multistage_gemm.cu`): the
//! tensors and their partitions, the prologue that fills `stages - 1` shared tiles, the main loop
//! (per k-tile: `ldmatrix` of the next k-block, `cp.async` of a new tile at the first k-block,
//! `mma.sync` of the current one; `wait_group stages-2` and `bar.sync` before the last k-block
//! switches the read stage), and the register epilogue.

use std::cell::RefCell;

use dsl_core::kernel::*;
use dsl_core::layout::LayoutError;
use dsl_core::tensor::{
    clear, copy_g2s, copy_s2r, cp_async_fence, cp_async_wait_n, gemm, store_fragment, Fragment,
    GTensor, Idx, STensor,
};
use dsl_core::tiled::Side;
use dsl_macros::kernel;

use super::{Acc, MultistageError, Plan};

use Idx::{All, At, Dyn};

/// The accumulator fragment: f16 pairs in 32-bit registers, or f32 registers.
#[derive(Clone, Debug)]
enum Accum {
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

/// The multistage GEMM of `plan` for elements of type `T` (`half::f16` or `half::bf16`).
/// Parameters: `(d, a, b, m, n, k)`; see [`super`].
#[kernel]
pub fn multistage<T: DeviceType>(
    #[host] plan: &Plan,
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
    let (bm, bn, bk) = (cfg.tile_m, cfg.tile_n, cfg.tile_k);
    let stages = cfg.stages;
    let nk = plan.frag_a.mode(2)?.size(); // k-blocks (of 16) per k-tile
    kb.require_threads(super::THREADS, 1, 1);
    let failed = RefCell::new(None::<LayoutError>);

    let idx = thread_idx_x();
    let bx = block_idx_x();
    let by = block_idx_y();
    let m0 = by * bm;
    let n0 = bx * bn;

    // ---- Global tensors: this block's strips of A and B (k-tiles as the last mode), D's tile ----
    let ga = GTensor::tile(
        a + m0 * k,
        k,
        plan.gmem_a.clone(),
        Some(((m - m0).cast::<i32>(), k.cast::<i32>())),
    );
    let gb = GTensor::tile(
        b + n0 * k,
        k,
        plan.gmem_b.clone(),
        Some(((n - n0).cast::<i32>(), k.cast::<i32>())),
    );
    let gd = GTensor::tile(
        d + (m0 * n + n0),
        n,
        plan.gmem_d.clone(),
        Some(((m - m0).cast::<i32>(), (n - n0).cast::<i32>())),
    );

    // ---- Shared memory: `stages` tiles of A, then of B ----
    let smem = kb.dynamic_shared::<T>(128);
    let sa = STensor::new(smem, plan.smem_a.clone())?;
    let sb = STensor::new(smem + (plan.smem_a.cosize() as u32), plan.smem_b.clone())?;

    // ---- MMA fragments ----
    let t_cr_a = Fragment::<u32>::new(plan.frag_a.clone(), 2)?;
    let t_cr_b = Fragment::<u32>::new(plan.frag_b.clone(), 2)?;
    let acc = match cfg.acc {
        Acc::F16 => Accum::F16(Fragment::new(plan.frag_c.clone(), 2)?),
        Acc::F32 => Accum::F32(Fragment::new(plan.frag_c.clone(), 1)?),
    };
    match &acc {
        Accum::F16(f) => clear(f),
        Accum::F32(f) => clear(f),
    }

    // ---- S2R: ldmatrix partitions of the shared tiles, fragments retiled to match ----
    let t_as_a = sa.partition(&plan.s2r_a, Side::Src, idx)?; // (CPY, CPY_M, CPY_K, stage)
    let t_bs_b = sb.partition(&plan.s2r_b, Side::Src, idx)?;
    let t_cr_a_view = t_cr_a.with_layout(plan.retile_a.clone());
    let t_cr_b_view = t_cr_b.with_layout(plan.retile_b.clone());

    // ---- G2S: cp.async partitions ----
    let t_ag_a = ga.partition(&plan.g2s, Side::Src, idx)?; // (CPY, CPY_M, CPY_K, k-tile)
    let t_as_a_copy = sa.partition(&plan.g2s, Side::Dst, idx)?; // (CPY, CPY_M, CPY_K, stage)
    let t_bg_b = gb.partition(&plan.g2s, Side::Src, idx)?;
    let t_bs_b_copy = sb.partition(&plan.g2s, Side::Dst, idx)?;

    // One k-tile of A and B from global into a stage.
    let load_tile = |tile: Idx, stage: Idx| -> Result<(), LayoutError> {
        let (g, s) = ([All, All, All, tile], [All, All, All, stage]);
        copy_g2s(&plan.g2s_atom, &t_ag_a.slice(&g)?, &t_as_a_copy.slice(&s)?)?;
        copy_g2s(&plan.g2s_atom, &t_bg_b.slice(&g)?, &t_bs_b_copy.slice(&s)?)
    };
    // One k-block of A and B from a stage into registers.
    let load_kblock = |kblock: i64, stage: Var<u32>| -> Result<(), LayoutError> {
        let (s, r) = ([All, All, At(kblock), Dyn(stage)], [All, All, At(kblock)]);
        copy_s2r(&plan.s2r_atom, &t_as_a.slice(&s)?, &t_cr_a_view.slice(&r)?)?;
        copy_s2r(&plan.s2r_atom, &t_bs_b.slice(&s)?, &t_cr_b_view.slice(&r)?)
    };
    let mma_kblock = |kblock: i64| -> Result<(), LayoutError> {
        let (fa, fb) = (
            t_cr_a.slice(&[All, All, At(kblock)])?,
            t_cr_b.slice(&[All, All, At(kblock)])?,
        );
        match &acc {
            Accum::F16(c) => gemm(&plan.mma, c, &fa, &fb),
            Accum::F32(c) => gemm(&plan.mma, c, &fa, &fb),
        }
    };

    // ---- Pipeline state ----
    let ntile = (k + (bk - 1)) / bk;
    let mut itile_to_read = Var::konst(stages - 1).fresh();
    let mut ismem_read = Var::konst(0u32).fresh();
    let mut ismem_write = Var::konst(stages - 1).fresh();

    // ---- Prologue: fill stages - 1 tiles (tiles past K are zero-filled by the predicate) ----
    for istage in 0..i64::from(stages - 1) {
        note(&failed, load_tile(At(istage), At(istage)));
        cp_async_fence();
    }
    cp_async_wait_n(stages - 2);
    sync_threads();
    note(&failed, load_kblock(0, ismem_read));

    // ---- Main loop over k-tiles ----
    for _itile in 0u32..ntile {
        for ik in 0..nk {
            let ik_next = (ik + 1) % nk;
            if ik == nk - 1 {
                // The next stage must have landed before its first k-block is read.
                cp_async_wait_n(stages - 2);
                sync_threads();
                ismem_read = select(ismem_read.eq_(stages - 1), 0u32, ismem_read + 1u32);
            }
            note(&failed, load_kblock(ik_next, ismem_read));
            if ik == 0 {
                if itile_to_read.lt(ntile) {
                    note(&failed, load_tile(Dyn(itile_to_read), Dyn(ismem_write)));
                    itile_to_read = itile_to_read + 1u32;
                    ismem_write = select(ismem_write.eq_(stages - 1), 0u32, ismem_write + 1u32);
                }
                cp_async_fence();
            }
            note(&failed, mma_kblock(ik));
        }
    }
    failed.into_inner().map_or(Ok(()), Err)?;

    // ---- Epilogue: accumulators to D, each element stored where it exists ----
    let t_cg_d = gd.partition_c(&plan.mma, idx)?;
    match &acc {
        Accum::F16(c) => store_fragment(c, &t_cg_d)?,
        Accum::F32(c) => store_fragment(c, &t_cg_d)?,
    }
    Ok(())
}
