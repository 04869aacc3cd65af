//! [`HopperPlan`]: what the program computes on the host from a schedule and the element type:
//! the atoms, the tiled MMA of one consumer, the shared layouts and the TMA copies.

use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
use dsl_core::atom::tma::{make_tma_copy, CacheHint, TmaCopy, TmaDescriptor, TmaGlobal, TmaKind};
use dsl_core::atom::{CopyAtom, Gmma, GmmaA, MmaAtom, StsmN, ValType};
use dsl_core::layout::{append_to_rank, ComposedLayout, IntTuple, Layout, LayoutError};
use dsl_core::tiled::{
    local_tile, make_identity_tensor, make_tiled_copy_c, make_tiled_mma, Idx, TiledCopy, TiledMma,
    View,
};

use super::batch::{batch_dim, covered, Batching};
use super::direct::{direct_stores, gated_stores, DirectLayoutError, ThreadStore};
pub use super::epilogue::FormStore;
use super::epilogue::GatedPairs;
pub use super::operand::OperandMajors;
use super::operand::{atom_rows, global_of, operand_atom, operand_tile};
use super::schedule::{
    Consumers, HopperSchedule, Refusal, Store, TransposedStaging, STAGING_BLOCK_ROWS,
};
use super::staged_residual::staged_residual;
use crate::gemm::epilogue::Epilogue;
use crate::gemm::fused::{accumulator_offsets, AccValue};
use crate::gemm::layout::{Form, FormParts, Major, OutType};
use crate::gemm::GemmDtype;

/// What the program computes on the host from a schedule and the element type: the atoms, the
/// tiled MMA of one consumer, the shared layouts and the TMA copies.
#[derive(Debug, Clone)]
pub struct HopperPlan {
    /// The schedule.
    pub schedule: HopperSchedule,
    /// The element type of A, B and D.
    pub dtype: GemmDtype,
    /// One consumer's tiled MMA: `SM90_64x{N}x16_F32{T}{T}_SS` over its `(consumer_rows, tile_n)`.
    pub mma: TiledMma,
    /// The majors of the kernel's A and B in global and shared memory (swapped, the
    /// problem's B's and A's).
    pub majors: OperandMajors,
    /// The ring of A: `(tile_m, tile_k, stages)` in GMMA's canonical layout of A's major
    /// ([`operand_atom`]).
    pub smem_a: ComposedLayout,
    /// The ring of B: `(tile_n, tile_k, stages)`.
    pub smem_b: ComposedLayout,
    /// Consumer `c`'s rows of the ring of A (`View` of `smem_a` offset to them).
    pub smem_a_consumer: Vec<View>,
    /// One consumer's output staging tile in shared memory, `(consumer_rows, E)` for the epilogue's
    /// `E` columns, 128-byte swizzled (or plain where `E` is not a multiple of 64; column-major
    /// when A and B are swapped).
    pub smem_d: ComposedLayout,
    /// TMA loads of one stage of A and of B.
    pub tma_a: TmaCopy,
    /// The B load (multicast in a cluster along M).
    pub tma_b: TmaCopy,
    /// A block's slice of the A load, multicast (a cluster along N): each of the `cluster.y`
    /// blocks that share the A tile loads `tile_m / cluster.y` of its rows into all of them.
    pub tma_a_multicast: TmaCopy,
    /// A block's slice of the B load, multicast (a cluster along M): `tile_n / cluster.x` rows
    /// of the shared B tile each.
    pub tma_b_multicast: TmaCopy,
    /// The TMA store of one consumer's output tile (in the kernel's coordinates: swapped, D is
    /// seen column-major).
    pub tma_d: TmaCopy,
    /// With the epilogue warps and the residual alone (`D = alpha acc + R`), the TMA load of
    /// R's tile into a consumer's staging tile, the same boxes as [`HopperPlan::tma_d`]'s
    /// ([`super::staged_residual`]); `None` otherwise.
    pub tma_residual: Option<TmaCopy>,
    /// The accumulators of a consumer thread: `(MMA, MMA_M, MMA_N)`.
    pub frag_c: Layout,
    /// How a consumer's accumulators are written into its staging tile: `stmatrix`, or (swapped)
    /// one element at a time ([`StagingWrite`]; [`HopperPlan::stmatrix`] for the copy).
    pub staging_write: StagingWrite,
    /// With D stored from the registers (`_u`), a consumer thread's stores
    /// ([`direct_stores`]); empty otherwise.
    pub direct: Vec<ThreadStore>,
    /// With a gated epilogue whose gate and up pairs are in one thread, a consumer thread's
    /// 16-byte stores of D ([`gated_stores`], [`super::gated`]); empty otherwise.
    pub gated: Vec<ThreadStore>,
    /// Whether the kernel stamps its phases into the workspace ([`super::trace`]): false
    /// except in [`super::traced_kernel`]'s diagnostic build.
    pub trace: bool,
    /// The form's parts the kernel is generated for (`None`: the packed form, the kernel as it
    /// always was): its epilogue runs on the accumulators before the store
    /// ([`super::epilogue`]), and it takes the form's parameters after its own.
    pub form: Option<FormParts>,
    /// A consumer thread's accumulators' offsets from its first value, for a form's epilogue
    /// (empty without a form).
    pub acc_offsets: Vec<AccValue>,
    /// How the epilogue's values leave the registers: the schedule's store in D's 16-bit type
    /// (the packed form's: the input type), or (f32 D, a gated epilogue) stores from the
    /// registers, their layouts proved ([`FormStore::of`]).
    pub form_store: FormStore,
    /// One GEMM, or a strided batch ([`super::batch`]): the TMA copies are then of rank 3, the
    /// batch their third dimension (the shared tiles one deep along it).
    pub batching: Batching,
}

impl HopperPlan {
    /// The plan of `schedule` for elements of `dtype` (f32 accumulation), or why the program
    /// does not take the schedule.
    pub fn new(schedule: HopperSchedule, dtype: GemmDtype) -> Result<HopperPlan, PlanError> {
        HopperPlan::with_majors(schedule, dtype, OperandMajors::K, Batching::Single)
    }

    /// [`HopperPlan::new`] for the kernel's A and B in `majors`, one GEMM or a strided batch.
    fn with_majors(
        schedule: HopperSchedule,
        dtype: GemmDtype,
        majors: OperandMajors,
        batching: Batching,
    ) -> Result<HopperPlan, PlanError> {
        schedule.check()?;
        let cfg = &schedule;
        let (bm, bn, bk) = (
            i64::from(cfg.tile.m()),
            i64::from(cfg.tile.n()),
            i64::from(cfg.tile.k()),
        );
        let st = i64::from(cfg.tile.stages());
        let val = dtype.val_type();
        let rows = i64::from(cfg.consumer_rows());
        let atom = MmaAtom::new(Gmma {
            a: GmmaA::Shared(majors.a),
            b_major: majors.b,
            ..Gmma::ss(cfg.tile.n(), ValType::F32, val)
        });
        let perm = [
            Some(Layout::vector(rows, 1)?),
            Some(Layout::vector(bn, 1)?),
            Some(Layout::vector(16, 1)?),
        ];
        let mma = make_tiled_mma(atom, &Layout::col_major(IntTuple::ints(&[1, 1, 1]))?, &perm)?;
        let sw128 = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)?;
        let (cx, cy) = cfg.cluster.blocks();
        let (cx, cy) = (i64::from(cx), i64::from(cy));
        let (rows_a, rows_b) = atom_rows(cfg);
        let atom_a = operand_atom(majors.a, rows_a, "A")?;
        let atom_b = operand_atom(majors.b, rows_b, "B")?;
        let smem_a = operand_tile(&atom_a, majors.a, &[bm, bk, st])?;
        let b_slots = i64::from(cfg.b_slots());
        let smem_b = operand_tile(&atom_b, majors.b, &[bn, bk, b_slots])?;
        // Ping-pong, each consumer reads the whole stage of its own tile.
        let smem_a_consumer = (0..i64::from(cfg.consumers()))
            .map(|c| {
                let half = match cfg.consumers {
                    Consumers::PingPong(_) => 0,
                    Consumers::Cooperative(_) => c,
                };
                local_tile(
                    &View::from(smem_a.clone()),
                    &[rows, bk, st],
                    &[Idx::At(half), Idx::At(0), Idx::At(0)],
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        // One stage of A and of B, the tile each TMA load fills (of a batch, one deep along it).
        let stage_a =
            |rows: i64| batch_tile(operand_tile(&atom_a, majors.a, &[rows, bk])?, batching);
        let stage_b =
            |rows: i64| batch_tile(operand_tile(&atom_b, majors.b, &[rows, bk])?, batching);
        let global = TmaGlobal::row_major(val);
        let (global_a, global_b) = (
            batch_global(global_of(majors.a, val), batching),
            batch_global(global_of(majors.b, val), batching),
        );
        let [hint_a, hint_b, hint_d] = cfg.l2.hints.each();
        let tma_a = make_tma_copy(TmaKind::Load, &global_a, &stage_a(bm)?)?.with_cache_hint(hint_a);
        let tma_b = make_tma_copy(TmaKind::Load, &global_b, &stage_b(bn)?)?.with_cache_hint(hint_b);
        // A slice of a shared tile is whole swizzle atoms, contiguous in the stage (K-major: K
        // is one atom deep in a cluster, check() asks it; MN-major: the atoms run along K
        // first), so it lands at its rows' offset, `rows * tile_k`.
        let tma_a_multicast = make_tma_copy(TmaKind::LoadMulticast, &global_a, &stage_a(bm / cy)?)?
            .with_cache_hint(hint_a);
        let tma_b_multicast = make_tma_copy(TmaKind::LoadMulticast, &global_b, &stage_b(bn / cx)?)?
            .with_cache_hint(hint_b);
        let epi = i64::from(cfg.epilogue_cols());
        let plain = |stride: [i64; 2]| -> Result<ComposedLayout, LayoutError> {
            Ok(ComposedLayout::new(
                dsl_core::layout::Swizzle::identity(),
                0,
                Layout::new(IntTuple::ints(&[rows, epi]), IntTuple::ints(&stride))?,
            ))
        };
        // Swapped, the kernel's tile is D's transposed: its rows run along D's rows, so the
        // staging tile is column-major and D, seen in the kernel's coordinates, too.
        let (smem_d, d_global) = if let Some(staging) = cfg.transposed_staging() {
            let column_major = TmaGlobal {
                contiguous: 0,
                ..global
            };
            let tile = match staging {
                TransposedStaging::Plain => plain([1, rows])?,
                // Each column of 64 rows is one 128-byte row of the MN-major swizzle atom
                // (check() asks 64 rows per consumer).
                TransposedStaging::Swizzled => {
                    gmma_atom(GmmaMajor::MN, GmmaLayoutType::B128, 2)?
                        .tile_to_shape(&IntTuple::ints(&[rows, epi]), None)?
                }
            };
            (tile, column_major)
        } else if epi % 64 == 0 {
            (
                sw128.tile_to_shape(&IntTuple::ints(&[rows, epi]), None)?,
                global,
            )
        } else {
            // Rows of a width the 128-byte swizzle does not tile: plain rows, whose `stmatrix`
            // stores meet some bank conflicts (an epilogue's cost, not the main loop's).
            (plain([epi, 1])?, global)
        };
        let tma_d = make_tma_copy(
            TmaKind::Store,
            &batch_global(d_global, batching),
            &batch_tile(smem_d.clone(), batching)?,
        )?
        .with_cache_hint(hint_d);
        // Pieces of the last wave end inside D: boxes of 16 rows, so that a piece's store stops
        // at its last (check() took the swizzled, unswapped staging tile).
        let tma_d = if cfg.row_split() && cfg.sub_tile().is_some() {
            tma_d.split_boxes(0, STAGING_BLOCK_ROWS)?
        } else {
            tma_d
        };
        let row_major = |cols: i64| -> Result<View, LayoutError> {
            Ok(View::from(Layout::new(
                IntTuple::ints(&[rows, cols]),
                IntTuple::ints(&[cols, 1]),
            )?))
        };
        let frag_c = mma.get_slice(0)?.partition_fragment_c(&row_major(bn)?)?;
        // The epilogue's sub-tile: the same accumulators, `epi` columns of them at a time, seen
        // as the fragment of a consumer MMA that is `epi` wide.
        let epi_mma = if epi == bn {
            mma.clone()
        } else {
            let atom = MmaAtom::new(Gmma::ss(epi as u32, ValType::F32, val));
            let perm = [
                Some(Layout::vector(rows, 1)?),
                Some(Layout::vector(epi, 1)?),
                Some(Layout::vector(16, 1)?),
            ];
            make_tiled_mma(atom, &Layout::col_major(IntTuple::ints(&[1, 1, 1]))?, &perm)?
        };
        let frag_epi = epi_mma
            .get_slice(0)?
            .partition_fragment_c(&row_major(epi)?)?;
        check_epilogue_slices(&mma, &epi_mma, &frag_c, &frag_epi, (rows, bn, epi))?;
        // Swapped, the staging tile is column-major, which `stmatrix` does not write, and N a
        // multiple of 8, which it does not take: the accumulators are stored one at a time.
        let staging_write = if cfg.swapped() {
            StagingWrite::Single
        } else {
            let r2s = make_tiled_copy_c(CopyAtom::new(StsmN { n: 4 }, val)?, &epi_mma)?;
            let retile_c = r2s.get_slice(0)?.retile_s(&frag_epi)?;
            StagingWrite::Stmatrix(Box::new(StmatrixCopy { r2s, retile_c }))
        };
        let direct = match cfg.store() {
            Store::Tma(_) | Store::EpilogueWarps => Vec::new(),
            Store::Direct(width) => direct_stores(&mma, &frag_c, (rows, bn), width)?,
        };
        if cfg.epilogue_warps() {
            check_epilogue_chunks(&smem_d, (rows, bn))?;
        }
        Ok(HopperPlan {
            schedule,
            dtype,
            majors,
            mma,
            smem_a,
            smem_b,
            smem_a_consumer,
            smem_d,
            tma_a,
            tma_b,
            tma_a_multicast,
            tma_b_multicast,
            tma_d,
            tma_residual: None,
            frag_c,
            staging_write,
            direct,
            gated: Vec::new(),
            trace: false,
            form: None,
            acc_offsets: Vec::new(),
            form_store: FormStore::Schedule(dtype),
            batching,
        })
    }

    /// The plan of `schedule` for `dtype` in a form's parts (`None`: [`HopperPlan::new`]'s).
    pub fn with_form(
        schedule: HopperSchedule,
        dtype: GemmDtype,
        form: Option<FormParts>,
    ) -> Result<HopperPlan, PlanError> {
        HopperPlan::with_parts(schedule, dtype, form, Batching::Single)
    }

    /// The plan of `schedule` for `dtype` in a form's parts, for a strided batch of GEMMs in
    /// one launch ([`super::batch`]).
    pub fn for_batch(
        schedule: HopperSchedule,
        dtype: GemmDtype,
        form: FormParts,
    ) -> Result<HopperPlan, PlanError> {
        HopperPlan::with_parts(schedule, dtype, Some(form), Batching::Strided)
    }

    /// The plan of `schedule` for `dtype` in a form's parts (`None`: the packed form), one GEMM
    /// or a strided batch: the program's plan of any kernel.
    pub fn with_parts(
        schedule: HopperSchedule,
        dtype: GemmDtype,
        form: Option<FormParts>,
        batching: Batching,
    ) -> Result<HopperPlan, PlanError> {
        // A batch's strides are a form's parameters: a batch of packed GEMMs is in the packed
        // form's parts.
        let form = match (form, batching) {
            (None, Batching::Strided) => Some(FormParts {
                a: Major::K,
                b: Major::K,
                epilogue: Epilogue::Plain,
                out: OutType::of(dtype),
            }),
            (form, _) => form,
        };
        let majors = match form {
            None => OperandMajors::K,
            Some(f) => OperandMajors::of_kernel(f.a, f.b, schedule.swapped()),
        };
        let plain = HopperPlan::with_majors(schedule, dtype, majors, batching)?;
        let rows = i64::from(schedule.consumer_rows());
        let bn = i64::from(schedule.tile.n());
        let acc_offsets = match form {
            None => Vec::new(),
            Some(_) => accumulator_offsets(&plain.mma, &plain.frag_c, (rows, bn))
                .map_err(PlanError::Gated)?,
        };
        let form_store = FormStore::of(form, &plain, (rows, bn)).map_err(PlanError::Gated)?;
        if schedule.epilogue_warps() && !form_store.maps_d() {
            return Err(PlanError::EpilogueWarps);
        }
        let gated = match form_store {
            FormStore::Gated(GatedPairs::InThread) => {
                gated_stores(&plain.mma, &plain.frag_c, (rows, bn))?
            }
            _ => Vec::new(),
        };
        let tma_residual = match form {
            Some(f) if staged_residual(&schedule, &f.epilogue) => Some(
                make_tma_copy(TmaKind::Load, &plain.tma_d.global, &plain.tma_d.smem)?
                    .with_cache_hint(Some(CacheHint::EvictFirst)),
            ),
            _ => None,
        };
        Ok(HopperPlan {
            form,
            tma_residual,
            acc_offsets,
            form_store,
            gated,
            ..plain
        })
    }

    /// [`HopperPlan::descriptors`] for a form: A's and B's rows `lda` and `ldb` apart, D's
    /// `ldd` apart and `out_cols` wide (half of `kn` for a gated epilogue; swapped, D's
    /// transposed in the kernel's coordinates); where the kernel stores D from the registers
    /// ([`FormStore::maps_d`]), A's map in D's place. A plan of a strided batch has the batch as
    /// each map's third dimension, its stride the form's ([`batch_dim`]: one deep for an operand
    /// the batch shares).
    pub fn descriptors_form(
        &self,
        (km, kn, k): (u32, u32, u32),
        form: &Form,
    ) -> Result<[TmaDescriptor; 3], LayoutError> {
        let (mu, ku) = (u64::from(km), u64::from(k));
        let nu = u64::from(kn);
        let (lda, ldb, ldd) = (form.a.ld as u64, form.b.ld as u64, form.ldd as u64);
        // Swapped, the kernel's A is the problem's B (and its rows the problem's B's).
        let (lda, ldb) = if self.schedule.swapped() {
            (ldb, lda)
        } else {
            (lda, ldb)
        };
        let d = if !self.form_store.maps_d() {
            None
        } else if self.schedule.swapped() {
            Some(([mu, nu], [1, ldd]))
        } else {
            let cols = form.out_cols(kn as usize) as u64;
            Some(([mu, cols], [ldd, 1]))
        };
        let batch = match self.batching {
            Batching::Single => None,
            Batching::Strided => Some(self.batch_dims(km, kn, k, form)),
        };
        self.descriptors_of((mu, nu, ku), (lda, ldb), d, batch)
    }

    /// The batch's dimension of the kernel's A, B and D maps, `(extent, stride)` each
    /// ([`batch_dim`]).
    fn batch_dims(&self, km: u32, kn: u32, k: u32, form: &Form) -> [(u64, u64); 3] {
        let (m, n) = self.schedule.kernel_dims(km, kn);
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let count = form.batch.count as u64;
        let dim = |stride: usize, cover: u64| batch_dim(count, stride as u64, cover);
        let a = dim(form.batch.a, covered(&form.a, m, k));
        let b = dim(form.batch.b, covered(&form.b, n, k));
        let d = dim(form.batch.d, m as u64 * form.ldd as u64);
        // Swapped, the kernel's A is the problem's B.
        if self.schedule.swapped() {
            [b, a, d]
        } else {
            [a, b, d]
        }
    }

    /// The map of the residual that [`HopperPlan::tma_residual`] loads, where the plan has that
    /// copy: R in D's coordinates (`km x kn`, rows `ldr` apart), of a batch with its third
    /// dimension (the form's residual stride).
    pub fn residual_descriptor(
        &self,
        (km, kn): (u32, u32),
        form: &Form,
    ) -> Result<Option<TmaDescriptor>, LayoutError> {
        let Some(copy) = &self.tma_residual else {
            return Ok(None);
        };
        let (mu, nu, ldr) = (u64::from(km), u64::from(kn), form.ldr as u64);
        let (mut dims, mut strides) = (vec![mu, nu], vec![ldr, 1]);
        if self.batching == Batching::Strided {
            let count = form.batch.count as u64;
            let (extent, stride) = batch_dim(count, form.batch.residual as u64, mu * ldr);
            dims.push(extent);
            strides.push(stride);
        }
        copy.descriptor(&dims, &strides).map(Some)
    }

    /// Bytes a stage's loads bring to one block (A's and B's tiles; A's alone with B resident).
    pub fn stage_bytes(&self) -> u32 {
        if self.schedule.resident_b().is_some() {
            self.tma_a.bytes()
        } else {
            self.tma_a.bytes() + self.tma_b.bytes()
        }
    }

    /// The fields of the kernel's three tensor maps for its `km x kn x k` (the problem's, with
    /// M and N swapped for a swapped schedule: [`HopperSchedule::kernel_dims`]): its A (`km x
    /// k`), its B (`kn x k`), and D in its coordinates (`km x kn`; swapped, D's transposed, so
    /// column-major), each row-major with rows of `k` (or D's row) elements. An error where a
    /// row is not a multiple of 16 bytes.
    pub fn descriptors(&self, km: u32, kn: u32, k: u32) -> Result<[TmaDescriptor; 3], LayoutError> {
        let (mu, nu, ku) = (u64::from(km), u64::from(kn), u64::from(k));
        let d_strides = if self.schedule.swapped() {
            [1, mu]
        } else {
            [nu, 1]
        };
        self.descriptors_of((mu, nu, ku), (ku, ku), Some(([mu, nu], d_strides)), None)
    }

    /// The three maps' fields: the kernel's A (`mu x ku`, rows (or, MN-major, columns) `lda`
    /// apart) and B (`nu x ku`, `ldb` apart) with the schedule's L2 promotion, and D of `d_dims`
    /// and `d_strides` (`None` for a D the kernel stores from the registers, whose map it never
    /// reads: A's stands in, and D's rows need not suit TMA then); of a batch, each with its
    /// third dimension `(extent, stride)` from `batch` (A's, B's, D's).
    fn descriptors_of(
        &self,
        (mu, nu, ku): (u64, u64, u64),
        (lda, ldb): (u64, u64),
        d: Option<([u64; 2], [u64; 2])>,
        batch: Option<[(u64, u64); 3]>,
    ) -> Result<[TmaDescriptor; 3], LayoutError> {
        // A shared tile's loads are its blocks' slices: the tensor map holds the slice's box.
        let (cx, cy) = self.schedule.cluster.blocks();
        let a = if cy > 1 {
            &self.tma_a_multicast
        } else {
            &self.tma_a
        };
        let b = if cx > 1 {
            &self.tma_b_multicast
        } else {
            &self.tma_b
        };
        let promotion = self.schedule.l2.promotion;
        let strides = |major: GmmaMajor, ld: u64| match major {
            GmmaMajor::K => [ld, 1],
            GmmaMajor::MN => [1, ld],
        };
        // A matrix's dims and strides, with the batch's dimension where there is one.
        let of = |dims: [u64; 2], strides: [u64; 2], i: usize| -> (Vec<u64>, Vec<u64>) {
            let (mut dims, mut strides) = (dims.to_vec(), strides.to_vec());
            if let Some((extent, stride)) = batch.map(|b| b[i]) {
                dims.push(extent);
                strides.push(stride);
            }
            (dims, strides)
        };
        let (a_dims, a_strides) = of([mu, ku], strides(self.majors.a, lda), 0);
        let (b_dims, b_strides) = of([nu, ku], strides(self.majors.b, ldb), 1);
        let a = a
            .descriptor(&a_dims, &a_strides)?
            .with_l2_promotion(promotion);
        let d = match d {
            Some((dims, strides)) => {
                let (d_dims, d_strides) = of(dims, strides, 2);
                self.tma_d.descriptor(&d_dims, &d_strides)?
            }
            None => a.clone(),
        };
        Ok([
            a,
            b.descriptor(&b_dims, &b_strides)?
                .with_l2_promotion(promotion),
            d,
        ])
    }

    /// The `stmatrix` copy of an epilogue sub-tile to the staging tile, or (a swapped tile,
    /// whose staging is written one element at a time) an error: the epilogue asks for it only
    /// where the schedule stages rows, so the error is a bug.
    pub fn stmatrix(&self) -> Result<&StmatrixCopy, PlanError> {
        match &self.staging_write {
            StagingWrite::Stmatrix(copy) => Ok(copy.as_ref()),
            StagingWrite::Single => Err(PlanError::NoStmatrix),
        }
    }

    /// Accumulator values of one thread in one epilogue sub-tile.
    pub fn epilogue_values(&self) -> u32 {
        (self.frag_c.cosize() as u32) * self.schedule.epilogue_cols() / self.schedule.tile.n()
    }

    /// The accumulator that value `v` of epilogue sub-tile `j` is ([`epilogue_source`] for
    /// this plan's fragment).
    pub fn epilogue_source(&self, j: u32, v: u32) -> u32 {
        let rows = self.schedule.consumer_rows();
        epilogue_source(
            self.frag_c.cosize() as u32,
            self.epilogue_values(),
            rows / 64,
            j,
            v,
        )
    }

    /// This block's slice of a stage's A and B tiles, shared in a cluster: the rows each loads
    /// for all the blocks that share the tile (0 for an unshared tile), as `(A's, B's)`.
    pub fn multicast_slice_rows(&self) -> (u32, u32) {
        let (m, n, _) = self.schedule.tile.mnk();
        let (cx, cy) = self.schedule.cluster.blocks();
        (m / cy, n / cx)
    }

    /// Elements of one stage of A and of B.
    pub fn stage_elems(&self) -> (u32, u32) {
        let (m, n, k) = self.schedule.tile.mnk();
        (m * k, n * k)
    }
}

/// How a consumer's accumulators are written into its staging tile, chosen by the schedule.
#[derive(Debug, Clone)]
pub enum StagingWrite {
    /// `stmatrix.x4` of each epilogue sub-tile, 16 columns at a time (a tile not swapped,
    /// staged in rows: tile N and the sub-tile's width multiples of 16).
    Stmatrix(Box<StmatrixCopy>),
    /// Each accumulator alone (`st.shared`) at its place in the MMA's own partition of the tile:
    /// a swapped tile (`_t`), staged column-major as D's transpose, which `stmatrix` does not
    /// write, its N a multiple of 8.
    Single,
}

/// The `stmatrix` copy of one epilogue sub-tile (the whole tile without `_eE`) from a consumer's
/// accumulators to its staging tile.
#[derive(Debug, Clone)]
pub struct StmatrixCopy {
    /// Registers -> shared (`stmatrix.x4`): `make_tiled_copy_C` of an MMA as wide as the
    /// sub-tile.
    pub r2s: TiledCopy,
    /// `retile_S` of a sub-tile's accumulators for that copy: sub-tile `j`'s values are the
    /// tile's [`HopperPlan::epilogue_source`] names ([`check_epilogue_slices`] proves it per
    /// plan).
    pub retile_c: Layout,
}

/// `tile` as a copy of `batching` takes it: as it is for one GEMM; of a strided batch, one deep
/// along the batch (CuTe's `append<3>`, a `1:0` mode: the same elements at the same offsets).
fn batch_tile(tile: ComposedLayout, batching: Batching) -> Result<ComposedLayout, LayoutError> {
    match batching {
        Batching::Single => Ok(tile),
        Batching::Strided => Ok(tile.with_layout(append_to_rank(&tile.layout, 3)?)),
    }
}

/// A matrix's global tensor as a copy of `batching` reads it: of a strided batch, with the
/// batch as its third dimension.
fn batch_global(global: TmaGlobal, batching: Batching) -> TmaGlobal {
    match batching {
        Batching::Single => global,
        Batching::Strided => TmaGlobal { rank: 3, ..global },
    }
}

/// The accumulator that value `v` of epilogue sub-tile `j` is, for a thread holding `full`
/// accumulators, `per` of them in each sub-tile, over `blocks` 64-row `wgmma` blocks: each
/// block's values run along the columns, so a sub-tile is the same run of `per / blocks` values
/// in every block ([`check_epilogue_slices`] proves it per plan).
pub fn epilogue_source(full: u32, per: u32, blocks: u32, j: u32, v: u32) -> u32 {
    let (in_block, sub_in_block) = (full / blocks, per / blocks);
    (v / sub_in_block) * in_block + j * sub_in_block + v % sub_in_block
}

/// That sub-tile `j` of `epi` columns of every thread's accumulators (the fragment `frag_c` of
/// the consumer's `mma` over `rows x bn`) is the fragment `frag_epi` of `epi_mma` over `rows x
/// epi`, its value `v` being accumulator [`epilogue_source`]`(j, v)`: the epilogue copies it to
/// column `j * epi` on. An error names the first
/// value that lands elsewhere.
pub fn check_epilogue_slices(
    mma: &TiledMma,
    epi_mma: &TiledMma,
    frag_c: &Layout,
    frag_epi: &Layout,
    (rows, bn, epi): (i64, i64, i64),
) -> Result<(), PlanError> {
    let (full_id, epi_id) = (
        make_identity_tensor(&[rows, bn])?,
        make_identity_tensor(&[rows, epi])?,
    );
    let per = frag_epi.cosize();
    let fulls = mma.partition_c_each(full_id.view())?;
    let subs = epi_mma.partition_c_each(epi_id.view())?;
    for (t, (full, sub)) in (0i64..).zip(fulls.iter().zip(&subs)) {
        let full = full_id.coords_of(full)?;
        let sub = epi_id.coords_of(sub)?;
        // Accumulator -> (row, column) of this thread's values.
        let mut at = vec![Vec::new(); frag_c.cosize() as usize];
        for (i, c) in full.into_iter().enumerate() {
            at[frag_c.eval(i as i64)? as usize] = c;
        }
        for j in 0..bn / epi {
            for (i, c) in sub.iter().enumerate() {
                let want = vec![c[0], c[1] + j * epi];
                let v = epilogue_source(
                    frag_c.cosize() as u32,
                    per as u32,
                    (rows / 64) as u32,
                    j as u32,
                    frag_epi.eval(i as i64)? as u32,
                );
                if at.get(v as usize) != Some(&want) {
                    return Err(PlanError::EpilogueSlice {
                        sub_tile: j,
                        cols: epi,
                        thread: t,
                        value: v,
                        at: want,
                    });
                }
            }
        }
    }
    Ok(())
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The program does not take the schedule.
    #[error(transparent)]
    Schedule(#[from] Refusal),
    /// An epilogue sub-tile's values are not the accumulators the epilogue copies (a bug in
    /// the layouts for a schedule that passed the checks).
    #[error(
        "epilogue sub-tile {sub_tile} of {cols} columns: thread {thread}'s value {value} is not at \
         {at:?} of the tile"
    )]
    EpilogueSlice {
        /// The sub-tile.
        sub_tile: i64,
        /// Its columns.
        cols: i64,
        /// The consumer thread.
        thread: i64,
        /// The accumulator.
        value: u32,
        /// The coordinate of the tile the sub-tile's value is at.
        at: Vec<i64>,
    },
    /// The accumulators are not held as the direct stores take them.
    #[error(transparent)]
    Direct(#[from] DirectLayoutError),
    /// An MN-major operand's tile rows (or the consumer's or slice's part) that no GMMA
    /// swizzle atom divides.
    #[error(
        "it loads an MN-major {operand} in GMMA atoms of 64, 32, 16 or 8 rows, and none divides \
         the {rows} rows of its tile that must be whole atoms"
    )]
    MnMajorRows {
        /// `A` or `B` (the kernel's).
        operand: &'static str,
        /// The rows.
        rows: i64,
    },
    /// A layout operation failed (a bug for a schedule that passed the checks).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The accumulators are not laid out as a form's epilogue takes them (pairs of columns
    /// for a gated one, the same offsets in every thread).
    #[error("a form's epilogue: {0}")]
    Gated(String),
    /// The `stmatrix` copy asked of a plan that writes its staging one element at a time (a
    /// swapped tile: a bug in the epilogue, which asks only where the schedule stages rows).
    #[error(
        "the epilogue asked for the stmatrix copy of a swapped tile (_t), whose column-major \
         staging is written one element at a time"
    )]
    NoStmatrix,
    /// Epilogue warps (`_x`) for a form whose D does not go through the staging tile.
    #[error(
        "the epilogue warps (_x) finish an elementwise epilogue of D in a 16-bit type through \
         the staging tile, and this form stores D from the registers: D in f32 (twice the \
         staging's bytes), or a gated epilogue (whose gate and up values, rounded to 16 bits \
         before their product, would lose the f32 sums' precision the product magnifies)"
    )]
    EpilogueWarps,
    /// A 16-byte chunk of the staging tile that is not 8 contiguous, aligned elements (a bug in
    /// the layouts for a schedule that passed the checks).
    #[error(
        "the epilogue warps (_x) read the staging tile 8 columns at a time, and row {row}'s \
         columns from {col} are not 8 aligned, contiguous elements of {layout}"
    )]
    EpilogueChunk {
        /// The chunk's row.
        row: i64,
        /// Its first column.
        col: i64,
        /// The staging tile's layout.
        layout: String,
    },
}

/// Proves that the staging tile `smem_d` (`rows x cols`) holds each row's 8-column chunks as 8
/// contiguous elements from a multiple of 8 (16 aligned bytes): what the epilogue warps' vector
/// accesses read and write.
fn check_epilogue_chunks(
    smem_d: &ComposedLayout,
    (rows, cols): (i64, i64),
) -> Result<(), PlanError> {
    let chunk = i64::from(super::schedule::EPILOGUE_CHUNK_COLS);
    // Offsets in the layout's (column-major) index order: (row, col) at row + rows * col.
    let offsets = smem_d.values()?;
    for row in 0..rows {
        for col in (0..cols).step_by(chunk as usize) {
            let at = |c: i64| offsets.get((row + rows * c) as usize).copied();
            let first = at(col).unwrap_or(-1);
            let contiguous = (1..chunk).all(|i| at(col + i) == Some(first + i));
            if first % chunk != 0 || !contiguous {
                return Err(PlanError::EpilogueChunk {
                    row,
                    col,
                    layout: smem_d.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hopper::schedule::Consumers;
    use dsl_core::atom::tma::{CacheHint, L2Promotion};

    /// `_l{B}` sets the L2 promotion of A's and B's tensor maps, not D's (a store), and is
    /// spelled only where it is not CuTe's default of 128 bytes.
    #[test]
    fn l2_promotion_goes_to_the_loads_maps() {
        for (spec, want) in [
            ("128x80x64s7_l256", L2Promotion::B256),
            ("128x16x64s8_l0_t", L2Promotion::None),
            ("128x256x64s3", L2Promotion::B128),
        ] {
            let cfg: HopperSchedule = spec.parse().unwrap();
            assert_eq!(cfg.to_string(), spec);
            let plan = HopperPlan::new(cfg, GemmDtype::Bf16).unwrap();
            let [a, b, d] = plan.descriptors(1000, 2048, 512).unwrap();
            assert_eq!((a.l2_promotion, b.l2_promotion), (want, want), "{spec}");
            assert_eq!(d.l2_promotion, L2Promotion::B128, "{spec}");
        }
        assert_eq!(
            "128x80x64s7_l128"
                .parse::<HopperSchedule>()
                .unwrap()
                .to_string(),
            "128x80x64s7"
        );
    }

    /// `_v{A}{B}{D}` puts its hints on the copies it names (the multicast loads too), and is
    /// spelled only where some copy has one.
    #[test]
    fn cache_hints_go_to_the_copies_they_name() {
        let (f, l, e) = (
            Some(CacheHint::EvictFirst),
            Some(CacheHint::EvictLast),
            Some(CacheHint::EvictNormal),
        );
        for (spec, want) in [
            ("64x256x64s8_f1_e128_r4_p_vfnf", [f, None, f]),
            ("128x256x64s3_c2x1_vlle", [l, l, e]),
            ("128x64x64s8_vfln_t", [f, l, None]),
            ("128x256x64s3", [None; 3]),
        ] {
            let cfg: HopperSchedule = spec.parse().unwrap();
            assert_eq!(cfg.l2.hints.each(), want, "{spec}");
            assert_eq!(cfg.to_string(), spec);
            let p = HopperPlan::new(cfg, GemmDtype::F16).unwrap();
            let got = [p.tma_a.cache_hint, p.tma_b.cache_hint, p.tma_d.cache_hint];
            assert_eq!(got, want, "{spec}");
            assert_eq!(
                (p.tma_a_multicast.cache_hint, p.tma_b_multicast.cache_hint),
                (want[0], want[1]),
                "{spec}"
            );
        }
        assert_eq!(
            "128x256x64s3_vnnn"
                .parse::<HopperSchedule>()
                .unwrap()
                .to_string(),
            "128x256x64s3"
        );
        for spec in [
            "128x256x64s3_vff",
            "128x256x64s3_vffff",
            "128x256x64s3_vfxf",
        ] {
            let e = spec.parse::<HopperSchedule>().unwrap_err().to_string();
            assert!(e.contains("_v takes three letters"), "{spec}: {e}");
        }
    }

    /// The sub-tile check passes the plans' own fragments and names the value that a wrong
    /// sub-tile width would put elsewhere.
    #[test]
    fn epilogue_slices_are_checked() {
        let p = HopperPlan::new("128x256x64s4_e64".parse().unwrap(), GemmDtype::F16).unwrap();
        assert_eq!(p.epilogue_values(), 32);
        let plan = |spec: &str| HopperPlan::new(spec.parse().unwrap(), GemmDtype::F16).unwrap();
        let (wide, narrow) = (plan("128x256x64s3"), plan("128x128x64s6_e64"));
        let narrow_mma_frag = HopperPlan::new("128x64x64s8".parse().unwrap(), GemmDtype::F16)
            .unwrap()
            .frag_c;
        // The 64-wide fragment seen as 128-wide sub-tiles of the 256-wide tile: misplaced.
        let e = check_epilogue_slices(
            &wide.mma,
            &narrow.mma,
            &wide.frag_c,
            &narrow_mma_frag,
            (64, 256, 128),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not at"), "{e}");
    }

    /// A 256-row tile's consumer holds two 64-row `wgmma` blocks: a sub-tile is the same run of
    /// values in each block, not one run of the whole fragment.
    #[test]
    fn epilogue_sub_tiles_take_their_run_in_every_block() {
        // One block: sub-tile 1 of 2 is the second half of the values.
        assert_eq!(epilogue_source(64, 32, 1, 1, 5), 37);
        // Two blocks of 80 values, sub-tiles of 40 (20 per block): value 25 of sub-tile 1 is
        // value 5 of block 1's second run.
        assert_eq!(epilogue_source(160, 40, 2, 1, 25), 80 + 20 + 5);
        let plan = HopperPlan::new("256x160x64s3_e80".parse().unwrap(), GemmDtype::Bf16).unwrap();
        assert_eq!(plan.epilogue_values(), 80);
        let sources: Vec<u32> = (0..80).map(|v| plan.epilogue_source(1, v)).collect();
        assert_eq!(&sources[..3], &[40, 41, 42]);
        assert_eq!(&sources[40..43], &[120, 121, 122]);
    }

    /// MN-major operands: TMA boxes run along the rows (the contiguous dimension) one atom
    /// wide and over the tile's whole K, the atom the widest that divides the rows that must be
    /// whole atoms, the maps' strides transposed, and the MMA atom's majors the operands'
    /// (exchanged with the schedule's A and B).
    #[test]
    fn mn_major_operands_plan_column_boxes() {
        use crate::gemm::epilogue::Epilogue;
        use crate::gemm::layout::{FormParts, Major, OutType};
        let parts = |a, b| FormParts {
            a,
            b,
            epilogue: Epilogue::Plain,
            out: OutType::F16,
        };
        let plan = |spec: &str, a, b| {
            let cfg: HopperSchedule = spec.parse().unwrap();
            HopperPlan::with_form(cfg, GemmDtype::F16, Some(parts(a, b))).unwrap()
        };
        let p = plan("128x256x64s3", Major::MN, Major::MN);
        assert_eq!(
            p.majors,
            OperandMajors {
                a: GmmaMajor::MN,
                b: GmmaMajor::MN
            }
        );
        assert_eq!(p.mma.atom.name(), "SM90_64x256x16_F32F16F16_SS<MN,MN>");
        // Boxes of 64 rows by 64 of K: two for A, four for B.
        assert_eq!(p.tma_a.box_dims, vec![64, 64]);
        assert_eq!((p.tma_a.boxes.len(), p.tma_b.boxes.len()), (2, 4));
        assert_eq!(p.tma_b.boxes[1].coord, vec![64, 0]);
        assert_eq!(p.tma_b.boxes[1].smem_offset, 64 * 64);
        let [a, b, _] = p
            .descriptors_form(
                (1000, 2048, 512),
                &Form {
                    a: crate::gemm::layout::OperandLayout {
                        major: Major::MN,
                        ld: 1008,
                    },
                    ..Form::packed(1000, 2048, 512)
                },
            )
            .unwrap();
        // Innermost first: A's rows (M) contiguous, K columns 1008 elements apart.
        assert_eq!(a.global_dims, vec![1000, 512]);
        assert_eq!(a.global_strides_bytes, vec![1008 * 2]);
        assert_eq!(b.global_dims, vec![2048, 512]);
        // Swapped, the kernel's A is the problem's B (K-major here) and its B the MN-major A.
        let t = plan("128x80x64s4_t", Major::MN, Major::K);
        assert_eq!(
            t.majors,
            OperandMajors {
                a: GmmaMajor::K,
                b: GmmaMajor::MN
            }
        );
        // 80 rows: the 32-byte swizzle's 16-row atoms, boxes 16 rows wide.
        assert_eq!(t.tma_b.box_dims, vec![16, 64]);
        assert_eq!(t.tma_b.boxes.len(), 5);
        assert_eq!(t.tma_b.swizzle, dsl_core::atom::tma::TmaSwizzleMode::B32);
        let e = operand_atom(GmmaMajor::MN, 4, "B").unwrap_err().to_string();
        assert!(e.contains("none divides the 4 rows"), "{e}");
    }

    #[test]
    fn plans_of_every_sweep_configuration() {
        for s in HopperSchedule::SWEEP {
            let cfg: HopperSchedule = s.parse().unwrap();
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let p = HopperPlan::new(cfg, dtype).unwrap();
                let (m, n, k) = cfg.tile.mnk();
                // One box per 64 of K (a 128-byte swizzled row each).
                assert_eq!(p.tma_a.box_dims, vec![64, m.min(256)], "{s}");
                assert_eq!(p.tma_b.box_dims, vec![64, n], "{s}");
                assert_eq!(p.tma_a.boxes.len() as u32, k / 64, "{s}");
                // In a cluster each block multicasts its slice of the shared tile's rows.
                let (cx, cy) = cfg.cluster.blocks();
                assert_eq!(p.multicast_slice_rows(), (m / cy, n / cx), "{s}");
                assert_eq!(p.tma_b_multicast.box_dims, vec![64, n / cx], "{s}");
                assert_eq!(
                    p.tma_a_multicast.box_dims,
                    vec![64, (m / cy).min(256)],
                    "{s}"
                );
                let b_in_ring = if cfg.resident_b().is_some() { 0 } else { n };
                assert_eq!(p.stage_bytes(), (m + b_in_ring) * k * 2, "{s}");
                assert_eq!(p.mma.size(), 128);
                let rows = cfg.consumer_rows();
                assert_eq!(p.tma_d.bytes(), rows * cfg.epilogue_cols() * 2, "{s}");
                assert_eq!(p.smem_a_consumer.len() as u32, cfg.consumers(), "{s}");
                if let Some(second) = p.smem_a_consumer.get(1) {
                    let offset = match cfg.consumers {
                        Consumers::PingPong(_) => 0,
                        Consumers::Cooperative(_) => rows * 64,
                    };
                    assert_eq!(second.base, i64::from(offset), "{s}");
                }
            }
        }
    }
}
