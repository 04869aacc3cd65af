//! The epilogue warps (`_x`): the producer warpgroup's warps 1 to 3, idle otherwise, finish
//! each tile the cooperative consumers stage, so that a fused epilogue runs under the next
//! tile's `wgmma` rather than between tiles.
//!
//! The hand-over is two named barriers between the consumers and these 96 threads, used once
//! per tile in turn, so that one never runs a phase ahead of the other:
//!
//! | consumers (each tile) | epilogue warps (each tile) |
//! |---|---|
//! | `free.sync`: the last tile's store has read the staging | `free.arrive`: it has (at the first tile: nothing was stored) |
//! | `alpha * acc` rounded to D's type, `stmatrix` into the staging | |
//! | `staged.arrive`, then the next tile's main loop | `staged.sync` |
//! | | each thread's 16-byte chunks: C, the bias, the map, the residual, in place |
//! | | `fence.proxy.async`, their own barrier, one thread's TMA store of each consumer's tile, its wait until the store has read them, their own barrier |
//!
//! Pass `p` takes chunk `e + 96 p` of the tile, row by row; where a row's chunks divide 96 a
//! thread keeps its 8 columns in every pass, so that a bias per column is read once per tile.
//! Rows past M and chunks past N (a multiple of 8: no chunk crosses it) are left as staged:
//! the TMA store clips them.

use dsl_core::kernel::*;
use dsl_core::layout::Layout;
use dsl_core::pipeline::{NamedBarrier, NamedBarriers, WARPGROUP_THREADS};
use dsl_core::tensor::{eval_dyn, swizzle_dyn};
use dsl_macros::device;
use half::{bf16, f16};

use super::epilogue::{staging_of, FormStore};
use super::plan::HopperPlan;
use super::roles::{Output, Unit, Walk};
use super::schedule::{EPILOGUE_CHUNK_COLS, EPILOGUE_THREADS};
use super::staged_residual::load_residual;
use super::HopperError;
use crate::gemm::epilogue::{Bias, DeviceEpilogue, Epilogue};
use crate::gemm::fused::FormParams;
use crate::gemm::strided::OutElem;
use crate::gemm::{GemmDtype, GemmElem};

/// The named barriers of the hand-over: `staged` (the consumers arrive once a tile is in the
/// staging, the epilogue warps wait), `free` (the other way: the staging may be written) and
/// the epilogue warps' own.
#[derive(Debug, Clone, Copy)]
pub(super) struct HandOff {
    staged: NamedBarrier,
    free: NamedBarrier,
    own: NamedBarrier,
    /// The threads on `staged` and `free`: the consumers' and the warps'.
    everyone: u32,
}

impl HandOff {
    /// The hand-over's barriers for `consumers` consumer warpgroups, taken from `ids`.
    pub(super) fn allocate(ids: &mut NamedBarriers, consumers: u32) -> HandOff {
        let both = consumers * WARPGROUP_THREADS + EPILOGUE_THREADS;
        // Unaligned: each consumer warpgroup reaches `staged` and `free` from its own copy of
        // the consumer's code, and the epilogue warps from theirs; the aligned `bar.sync` wants
        // one instruction (compute-sanitizer's synccheck on the H100 flagged the second
        // consumer's `free` wait, "Divergent thread(s) in block", under `bar.sync`).
        let [staged, free] = ids.take(both).map(NamedBarrier::unaligned);
        let [own] = ids.take(EPILOGUE_THREADS);
        HandOff {
            staged,
            free,
            own,
            everyone: both,
        }
    }

    /// A consumer: waits until the staging may be written.
    pub(super) fn wait_free(&self) {
        self.free.sync();
    }

    /// A consumer: its part of `unit`'s tile is staged (and fenced for the TMA store). On the
    /// block's last tile (`last`) the consumers have nothing left to do but help: they finish
    /// the tile with the warps (consumer thread `helper` of the consumers' threads), every
    /// thread a share of the chunks, so that the walk's end waits on 11 warps, not 3.
    pub(super) fn staged<T: GemmElem>(
        &self,
        finisher: &Finisher<T>,
        unit: &Unit,
        (last, helper): (Var<bool>, Var<u32>),
    ) {
        last.if_else(|arm| match arm {
            Arm::Then => {
                self.staged.sync();
                finisher.finish(unit, (EPILOGUE_THREADS + helper, self.everyone));
                fence_proxy_async_shared();
                // The passes' branches may leave the warp diverged: `staged` is unaligned.
                self.staged.sync();
            }
            Arm::Else => self.staged.arrive(),
        });
    }
}

/// The epilogue warps' walk: for every unit that writes a tile (the consumers' walk, unit by
/// unit), the hand-over, the form's epilogue over the staged tile and its TMA store. Thread
/// `e` of the 96 is the block's thread `32 + e`.
#[device]
pub(super) fn epilogue_warps<T: GemmElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    walk: Walk,
    handoff: &HandOff,
) -> Result<(), HopperError> {
    let e = thread_idx_x() - 32u32;
    let finisher = Finisher::new(plan, out)?;
    let mut tiles = walk.scheduler(plan);
    while tiles.valid() {
        if tiles.writes_tile() {
            let unit = walk.unit(plan, &tiles);
            // The consumers are in this tile's main loop: its C and residual rows come to L2
            // meanwhile, so that the passes below wait on L2, not on memory; or R comes by TMA
            // into the staging, which the last tile's store has read.
            finisher.prefetch(&unit, e);
            if let Some(r) = &out.residual {
                load_residual(r, plan, out, &unit, e);
            }
            handoff.free.arrive();
            handoff.staged.sync();
            let last = tiles.ends_after();
            if last {
                // The block's last tile: the consumers help ([`HandOff::staged`]).
                finisher.finish(&unit, (e, handoff.everyone));
                fence_proxy_async_shared();
                // The passes' branches may leave the warp diverged: `staged` is unaligned.
                handoff.staged.sync();
                if e.eq_(0u32) {
                    store_tile(plan, out, &unit);
                }
            } else {
                finisher.finish(&unit, (e, EPILOGUE_THREADS));
                // The TMA store reads through the async proxy what these threads wrote.
                fence_proxy_async_shared();
                sync_warp();
                handoff.own.sync();
                if e.eq_(0u32) {
                    store_tile(plan, out, &unit);
                    // The next tile's `free` says the staging may be written: once this has
                    // read it.
                    bulk_wait_group_read(0);
                }
                sync_warp();
                handoff.own.sync();
            }
        }
        tiles.next_unit();
    }
    // D is written before the block exits.
    if e.eq_(0u32) {
        bulk_wait_group(0);
    }
    Ok(())
}

/// The TMA store of `unit`'s staged tile, each consumer's part, as one bulk group.
fn store_tile<T: GemmElem>(plan: &HopperPlan, out: &Output<T>, unit: &Unit) {
    for (origin, staging) in consumer_tiles(plan, out, unit) {
        plan.tma_d.store(out.d_map, &origin, staging);
    }
    bulk_commit_group();
}

/// Each consumer's part of `unit`'s tile: its origin in D (of a batch, the unit's GEMM third)
/// and its staging tile, what the TMA copies of the staged tile take. Lazy: each part's
/// addresses are emitted where its copy is.
pub(super) fn consumer_tiles<'a, T: GemmElem>(
    plan: &'a HopperPlan,
    out: &'a Output<T>,
    unit: &'a Unit,
) -> impl ExactSizeIterator<Item = ([Var<u32>; 3], SharedPtr<T>)> + 'a {
    let s = &plan.schedule;
    (0..s.consumers()).map(move |c| {
        let origin = [unit.m0 + c * s.consumer_rows(), unit.n0, unit.z];
        (origin, staging_of(plan, out, Var::konst(c)))
    })
}

/// What finishing a staged tile takes, made once per role: the form (none, or the plain one:
/// the staged sums are D already), D's 16-bit type, and the staging tile's row and column
/// modes, their strides checked here so that the passes' evaluations cannot fail.
pub(super) struct Finisher<'a, T: GemmElem> {
    plan: &'a HopperPlan,
    out: &'a Output<'a, T>,
    form: Option<(Epilogue, FormParams, GemmDtype)>,
    modes: (Layout, Layout),
}

impl<'a, T: GemmElem> Finisher<'a, T> {
    /// The finisher of `plan`'s tiles to `out`.
    pub(super) fn new(plan: &'a HopperPlan, out: &'a Output<'a, T>) -> Result<Self, HopperError> {
        let FormStore::Schedule(d16) = plan.form_store else {
            return Err(HopperError::Plan(super::PlanError::EpilogueWarps));
        };
        // With the residual through the staging, the consumers staged D: the warps store it.
        let form = match (plan.form, out.form) {
            (Some(parts), Some(params))
                if parts.epilogue != Epilogue::Plain && plan.tma_residual.is_none() =>
            {
                Some((parts.epilogue, params, d16))
            }
            _ => None,
        };
        let s = &plan.schedule;
        let smem_d = &plan.smem_d;
        let modes = (smem_d.layout.mode(0)?, smem_d.layout.mode(1)?);
        eval_dyn(&modes.0, Var::konst(0u32), i64::from(s.consumer_rows()))?;
        eval_dyn(&modes.1, Var::konst(0u32), i64::from(s.tile.n()))?;
        Ok(Finisher {
            plan,
            out,
            form,
            modes,
        })
    }

    /// Asks L2 for the C and residual rows `unit`'s tile will read ([`prefetch_rows`]; nothing
    /// where the epilogue reads neither).
    pub(super) fn prefetch(&self, unit: &Unit, e: Var<u32>) {
        let Some((epilogue, params, d16)) = &self.form else {
            return;
        };
        if !epilogue.reads_c() && !epilogue.adds_residual() {
            return;
        }
        let form = (epilogue, *params);
        match d16 {
            GemmDtype::F16 => prefetch_rows::<T, f16>(self.plan, self.out, unit, form, e),
            GemmDtype::Bf16 => prefetch_rows::<T, bf16>(self.plan, self.out, unit, form, e),
        }
    }

    /// The form's epilogue over `unit`'s staged tile, thread `e` of `threads` ([`finish`]).
    pub(super) fn finish(&self, unit: &Unit, (e, threads): (Var<u32>, u32)) {
        let Some((epilogue, params, d16)) = &self.form else {
            return;
        };
        let form = (epilogue, *params);
        let chunks = Chunks::of(self.plan, (e, threads));
        match d16 {
            GemmDtype::F16 => finish::<T, f16>(self, unit, form, &chunks),
            GemmDtype::Bf16 => finish::<T, bf16>(self, unit, form, &chunks),
        }
    }
}

/// Asks L2 for the lines of C's and the residual's rows that `unit`'s tile reads, one
/// prefetch per 128-byte line: the threads whose chunk starts a line, over the rows their
/// passes take.
#[device]
fn prefetch_rows<T: GemmElem, O: OutElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    unit: &Unit,
    (epilogue, params): (&Epilogue, FormParams),
    e: Var<u32>,
) {
    let chunks = Chunks::of(plan, (e, EPILOGUE_THREADS));
    let per_line = LINE_BYTES / O::OUT.bytes() as u32;
    let ops = params.operands::<O>(out.d.cast::<u32>(), unit.z);
    let rows: Vec<(GlobalPtr<O>, Var<u32>)> = [
        (epilogue.reads_c(), ops.c, ops.ldc),
        (epilogue.adds_residual(), ops.residual, ops.ldr),
    ]
    .into_iter()
    .filter_map(|(read, p, ld)| read.then_some((p, ld)))
    .collect();
    for pass in Var::konst(0u32)..Var::konst(chunks.passes) {
        let at = chunks.at(pass, unit);
        let n_col = unit.n0 + at.col;
        let starts_line = (at.col & (per_line - 1)).eq_(0u32) & n_col.lt(out.n);
        if chunks.inside(&at, unit) & starts_line {
            for (p, ld) in &rows {
                (*p + at.m.cast::<u64>() * ld.cast::<u64>() + n_col).prefetch(CacheLevel::L2);
            }
        }
    }
}

/// A thread's chunks of a tile: chunk `e + threads * pass` in pass `pass`, the tile's chunks
/// taken row by row, `chunks` to a row. Where a row's chunks divide the threads the thread keeps
/// its 8 columns in every pass (`fixed`: its row moves on by `threads / chunks`), so that what
/// depends on the column alone (a bias per column, the staging's column offset) is made once
/// per tile.
struct Chunks {
    e: Var<u32>,
    threads: u32,
    chunks: u32,
    fixed: Option<Fixed>,
    passes: u32,
    tile_rows: u32,
}

/// A thread's chunks where its columns stay: its first row, its column in the tile, and rows
/// per pass.
#[derive(Clone, Copy)]
struct Fixed {
    first_row: Var<u32>,
    col: Var<u32>,
    per_pass: u32,
}

/// Where a pass takes a thread: the chunk's row and first column in the tile, and its row in D.
#[derive(Clone, Copy)]
struct ChunkAt {
    row: Var<u32>,
    col: Var<u32>,
    m: Var<u32>,
}

impl Chunks {
    /// Thread `e`'s chunks of a tile of `plan`, of `threads` threads in all.
    fn of(plan: &HopperPlan, (e, threads): (Var<u32>, u32)) -> Chunks {
        let (bm, bn) = (plan.schedule.tile.m(), plan.schedule.tile.n());
        let chunks = bn / EPILOGUE_CHUNK_COLS;
        let fixed = threads.is_multiple_of(chunks).then(|| {
            let (first_row, chunk) = split(e, chunks);
            Fixed {
                first_row,
                col: chunk * EPILOGUE_CHUNK_COLS,
                per_pass: threads / chunks,
            }
        });
        Chunks {
            e,
            threads,
            chunks,
            fixed,
            passes: (bm * chunks).div_ceil(threads),
            tile_rows: bm,
        }
    }

    /// The thread's column in the tile where it keeps one.
    fn fixed_col(&self) -> Option<Var<u32>> {
        self.fixed.map(|f| f.col)
    }

    /// Where `pass` takes the thread in `unit`'s tile.
    fn at(&self, pass: Var<u32>, unit: &Unit) -> ChunkAt {
        let (row, col) = match self.fixed {
            Some(f) => (f.first_row + pass * f.per_pass, f.col),
            None => {
                let (row, chunk) = split(self.e + pass * self.threads, self.chunks);
                (row, chunk * EPILOGUE_CHUNK_COLS)
            }
        };
        ChunkAt {
            row,
            col,
            m: unit.m0 + row,
        }
    }

    /// Whether the chunk `at` is in the tile and in D's rows (rows past M, like columns past
    /// N, are left to the TMA store's clipping).
    fn inside(&self, at: &ChunkAt, unit: &Unit) -> Var<bool> {
        let inside = at.m.lt(unit.m_end);
        let whole_passes = (self.tile_rows * self.chunks).is_multiple_of(self.threads);
        if whole_passes {
            inside
        } else {
            inside & at.row.lt(self.tile_rows)
        }
    }
}

/// Bytes of a cache line: what one prefetch brings.
const LINE_BYTES: u32 = 128;

/// The form's epilogue over the staged tile of `unit`, D of the 16-bit type `O`, over a
/// thread's `chunks`.
#[device]
fn finish<T: GemmElem, O: Packed>(
    finisher: &Finisher<T>,
    unit: &Unit,
    (epilogue, params): (&Epilogue, FormParams),
    chunks: &Chunks,
) {
    let (plan, out) = (finisher.plan, finisher.out);
    let (bn, rows) = (plan.schedule.tile.n(), plan.schedule.consumer_rows());
    let ops = params.operands::<O>(out.d.cast::<u32>(), unit.z);
    let epi = DeviceEpilogue {
        epilogue,
        alpha: Var::konst(1.0f32),
        beta: params.beta,
    };
    // The staging's offsets: the layout's column mode at the chunk's columns, its row mode at
    // its row, the swizzle over their sum (the modes' strides checked by `Finisher::new`).
    let smem_d = &plan.smem_d;
    let (row_mode, col_mode) = &finisher.modes;
    let columns = |col: Var<u32>| {
        let offset = eval_dyn(col_mode, col, i64::from(bn)).expect("checked by Finisher::new");
        let n_col = unit.n0 + col;
        (n_col, n_col.lt(out.n), offset + smem_d.offset as u32)
    };
    // Where the thread keeps its columns, what depends on them alone is made once: the bias
    // per column among it.
    let kept = chunks.fixed_col().map(columns);
    let kept_bias = match (epilogue.bias(), kept) {
        (Some(Bias::PerColumn), Some((n_col, in_cols, _))) => {
            let held: [Var<f32>; 8] = std::array::from_fn(|_| Var::konst(0.0f32).fresh());
            in_cols.if_(|_| set8(&held, load8(ops.bias + n_col)));
            Some(held)
        }
        _ => None,
    };
    // C's and the residual's chunks come passes ahead, as many as `AHEAD_CHUNKS` hold
    // ([`Ahead`]).
    let ahead = Ahead::new(
        [
            (epilogue.reads_c(), ops.c, ops.ldc),
            (epilogue.adds_residual(), ops.residual, ops.ldr),
        ]
        .into_iter()
        .filter_map(|(read, p, ld)| read.then_some((p, ld)))
        .collect(),
        chunks.passes,
    );
    let depth = ahead.depth();
    let chunk_at = |pass: Var<u32>| {
        let at = chunks.at(pass, unit);
        let (n_col, in_cols, _) = kept.unwrap_or_else(|| columns(at.col));
        (chunks.inside(&at, unit) & in_cols, at.m, n_col)
    };
    for slot in 0..depth {
        ahead.fetch_at(slot, Var::konst(slot), &chunk_at);
    }
    // Passes in groups of `depth`, the group's passes unrolled: pass `g * depth + slot` takes
    // its chunks from register slot `slot` and loads the chunks `depth` passes on into it.
    let pass_in = |pass: Var<u32>, slot: u32| {
        let at = chunks.at(pass, unit);
        let (n_col, in_cols, col_offset) = kept.unwrap_or_else(|| columns(at.col));
        let (m, inside) = (at.m, chunks.inside(&at, unit) & in_cols);
        let (c, r) = split(at.row, rows);
        let pre =
            eval_dyn(row_mode, r, i64::from(rows)).expect("checked by Finisher::new") + col_offset;
        let staged = staging_at::<T, O>(plan, out, c) + swizzle_dyn(&smem_d.swizzle, pre);
        let fetched = ahead.take(slot);
        ahead.fetch_ahead(slot, pass, chunks.passes, &chunk_at);
        inside.if_(|_| {
            let bias = match epilogue.bias() {
                Some(Bias::PerColumn) => Some(kept_bias.unwrap_or_else(|| load8(ops.bias + n_col))),
                _ => None,
            };
            let x: [Var<O>; 8] = staged.load_vec::<8>();
            let mut rows_read = fetched
                .iter()
                .map(|words| halves::<O>(words).map(|v| v.cast::<f32>()));
            let c_row = epi.epilogue.reads_c().then(|| rows_read.next()).flatten();
            let r_row = epi
                .epilogue
                .adds_residual()
                .then(|| rows_read.next())
                .flatten();
            let row_bias = match epilogue.bias() {
                Some(Bias::PerRow) => Some((ops.bias + m).load().cast::<f32>()),
                _ => None,
            };
            let y: [Var<O>; 8] = std::array::from_fn(|i| {
                let mut v = x[i].cast::<f32>();
                if let Some(c) = &c_row {
                    v = c[i].mul_add(epi.beta, v);
                }
                if let Some(b) = &bias {
                    v += b[i];
                }
                if let Some(b) = row_bias {
                    v += b;
                }
                let v = epi.map(v, m, n_col + i as u32);
                epi.residual(v, || r_row.as_ref().expect("R is added")[i])
                    .cast::<O>()
            });
            staged.store_vec(y);
        });
    };
    let whole_groups = chunks.passes.is_multiple_of(depth);
    for group in Var::konst(0u32)..Var::konst(chunks.passes.div_ceil(depth)) {
        for slot in 0..depth {
            let pass = if depth == 1 {
                group
            } else {
                group * depth + slot
            };
            if whole_groups {
                pass_in(pass, slot);
            } else {
                pass.lt(chunks.passes).if_(|_| pass_in(pass, slot));
            }
        }
    }
}

/// A thread's 16-byte chunks of C and the residual in flight at once, each in registers of its
/// own (4 a chunk), over the passes ahead: four passes where the warps read one of them (a
/// residual after a bias or a map; the residual alone comes through the staging instead:
/// [`super::staged_residual`]), two where they read both. A pass waits on L2 (or, where the
/// prefetch lost the race, on memory) for its loads, and one pass ahead left most of that wait
/// exposed (the residual cost 3.3-12.9% over the
/// plain GEMM on the H100, 2026-12-06). Within the producer warpgroup's budget under `_x`
/// ([`super::schedule::REGISTERS_EPILOGUE_WARPS`]): ptxas spilled at six (three passes of two).
pub const AHEAD_CHUNKS: u32 = 4;

/// Where a pass's chunk of C or the residual is: whether it is inside D, its row and its first
/// column.
type ChunkSource = (Var<bool>, Var<u32>, Var<u32>);

/// The chunks of C and of the residual (each where the epilogue reads it) that a thread's next
/// passes read (as many as [`AHEAD_CHUNKS`] hold), loaded while the current pass computes.
/// Their rows were asked into L2 under the tile's main loop ([`prefetch_rows`]), but a pass
/// that loads its own chunks still waits on L2 for them before it can start, pass after pass:
/// measured on an H100, the residual cost `_x` twice what bias + GELU did. Passes ahead, that
/// wait overlaps passes' arithmetic.
/// The registers start at zero, so that a chunk a thread skips (past M or N) is never read
/// unset.
struct Ahead<O> {
    sources: Vec<(GlobalPtr<O>, Var<u32>)>,
    /// Per slot (a pass modulo the depth), per source, the chunk's registers: its four 32-bit
    /// words as loaded, two elements each ([`halves`]).
    held: Vec<Vec<[Var<u32>; 4]>>,
}

impl<O: OutElem> Ahead<O> {
    /// Registers for the chunks of `sources` (each a buffer's first element and its rows'
    /// stride) over a tile of `passes` passes: as many passes ahead as [`AHEAD_CHUNKS`] hold,
    /// at most the tile's; one where nothing is loaded (unrolled passes would only take
    /// registers).
    fn new(sources: Vec<(GlobalPtr<O>, Var<u32>)>, passes: u32) -> Ahead<O> {
        let depth = match sources.len() as u32 {
            0 => 1,
            n => (AHEAD_CHUNKS / n).clamp(1, passes.max(1)),
        };
        let held = (0..depth)
            .map(|_| {
                sources
                    .iter()
                    .map(|_| std::array::from_fn(|_| Var::konst(0u32).fresh()))
                    .collect()
            })
            .collect();
        Ahead { sources, held }
    }

    /// Passes whose chunks are held at once: the slots.
    fn depth(&self) -> u32 {
        self.held.len() as u32
    }

    /// Loads each source's chunk of `pass` (`chunk_at(pass)`: where it is inside, its row in D
    /// and its first column) into slot `slot`, where it is inside.
    fn fetch_at(&self, slot: u32, pass: Var<u32>, chunk_at: &impl Fn(Var<u32>) -> ChunkSource) {
        if self.sources.is_empty() {
            return;
        }
        let (inside, m, n_col) = chunk_at(pass);
        inside.if_(|_| {
            for ((p, ld), held) in self.sources.iter().zip(&self.held[slot as usize]) {
                let row = *p + m.cast::<u64>() * ld.cast::<u64>();
                let loaded: [Var<u32>; 4] = (row + n_col).cast::<u32>().load_vec::<4>();
                for (h, v) in held.iter().zip(loaded) {
                    let mut h = *h;
                    h.set(v);
                }
            }
        });
    }

    /// The chunks of the pass a depth after `pass` into `pass`'s slot, where there is one.
    fn fetch_ahead(
        &self,
        slot: u32,
        pass: Var<u32>,
        passes: u32,
        chunk_at: &impl Fn(Var<u32>) -> ChunkSource,
    ) {
        if self.sources.is_empty() {
            return;
        }
        let next = pass + self.depth();
        next.lt(passes).if_(|_| self.fetch_at(slot, next, chunk_at));
    }

    /// Copies of the chunks slot `slot` holds for its pass, taken before the loads of the pass a
    /// depth later overwrite them.
    fn take(&self, slot: u32) -> Vec<[Var<u32>; 4]> {
        self.held[slot as usize]
            .iter()
            .map(|row| row.map(|v| v.fresh()))
            .collect()
    }
}

/// `(x / d, x % d)` for a host divisor: a shift and a mask where `d` is a power of two (every
/// tile's rows, most tiles' chunks per row), as the compiler does not always see through a
/// division by a constant.
fn split(x: Var<u32>, d: u32) -> (Var<u32>, Var<u32>) {
    if d.is_power_of_two() {
        (x >> d.trailing_zeros(), x & (d - 1))
    } else {
        (x / d, x % d)
    }
}

/// D's 16-bit types, each with the type of two of them in one 32-bit word.
pub(super) trait Packed: OutElem {
    /// Two elements in a word (the first in the low bits).
    type Pair: Pair<Half = Self> + Num;
}

impl Packed for f16 {
    type Pair = F16x2;
}

impl Packed for bf16 {
    type Pair = BF16x2;
}

/// A chunk's eight elements from its four words (element `2j` from the low bits of word `j`).
fn halves<O: Packed>(words: &[Var<u32>; 4]) -> [Var<O>; 8] {
    let pairs = words.map(|w| w.bitcast::<O::Pair>().unpack());
    std::array::from_fn(|i| pairs[i / 2][i % 2])
}

/// 8 elements from `p` (16 bytes) widened to f32.
fn load8<O: OutElem>(p: GlobalPtr<O>) -> [Var<f32>; 8] {
    let loaded: [Var<O>; 8] = p.load_vec::<8>();
    loaded.map(|v| v.cast::<f32>())
}

/// Sets the registers `held` to `values`. (A plain function: in a `#[device]` body, `let mut`
/// copies a value into a register of its own.)
fn set8(held: &[Var<f32>; 8], values: [Var<f32>; 8]) {
    for (h, v) in held.iter().zip(values) {
        let mut h = *h;
        h.set(v);
    }
}

/// Consumer `c`'s staging tile, seen as D's 16-bit type `O` (the consumers staged `O`'s bits).
fn staging_at<T: GemmElem, O: OutElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    c: Var<u32>,
) -> SharedPtr<O> {
    let s = &plan.schedule;
    let first = staging_of(plan, out, Var::konst(0u32)).cast::<O>();
    match s.consumers() {
        1 => first,
        _ => first + c * s.staging_tile_elems(),
    }
}
