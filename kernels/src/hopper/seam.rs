//! The warp-specialized Hopper program behind the GEMM seam: [`HopperWs`] takes f16 and bf16
//! problems with an f32 sum on sm_90a whose rows TMA can address, one GEMM or a strided batch of
//! them in one launch, takes a [`HopperSchedule`] (the default for the shape and the device,
//! [`chooser::choose`], or the one asked for), and its plan ([`HopperGemm`]) launches the
//! persistent kernel, which shares the k-tiles of its last wave of tiles out (stream-K) where
//! whole tiles would leave SMs idle.

use std::sync::Arc;

use dsl_core::ir::{Kernel, Target};

use super::batch::{check_tma_stride, check_tma_strides, Batching, StridedBatch};
use super::chooser::{self, Choice, Operands};
use super::launch::{launch_batched, tile_order_batched};
use super::params::{HopperParams, OnHost};
use super::plan::HopperPlan;
use super::schedule::HopperSchedule;
use super::staged_residual::stages_its_residual;
use super::{entry_name, parts_kernel, HopperError, TARGETS};
use crate::gemm::epilogue::Epilogue;
use crate::gemm::fused::FormParams;
use crate::gemm::layout::{Form, FormParts, Operand, OutType};
use crate::gemm::program::aligned_for;
use crate::gemm::{
    tma_rows, Accum, Device, GemmArg, GemmDtype, GemmOperand, GemmProgram, KernelBuildError,
    LaunchPlan, Origin, Plan, Problem, ProgramPlan,
};

/// The warp-specialized TMA + `wgmma` program (see [`super`]).
///
/// Without a schedule: [`chooser::choose`] for the shape and the device ([`chooser::choose_for`]
/// for a form's operand majors and strided batch). Refused (so that `auto` falls back to the multistage program, saying
/// why): targets other than sm_90a, an f16 sum, K or N that are not multiples of 8 (TMA
/// addresses rows of 16 bytes), a batch stride TMA cannot step by
/// ([`super::batch::check_tma_strides`]), and a schedule that cannot run the problem
/// ([`HopperSchedule::takes`], and for a batch [`HopperSchedule::check_batch`]) or does not fit
/// the device's shared memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct HopperWs;

/// Largest M, N or K the program takes: the kernel's tile arithmetic is 32-bit.
pub const MAX_DIM: usize = 1 << 30;

impl GemmProgram for HopperWs {
    type Schedule = HopperSchedule;

    fn name(&self) -> &'static str {
        "hopper_ws"
    }

    fn summary(&self) -> &'static str {
        "warp-specialized TMA + wgmma (sm_90a): a producer warp and one to three consumer warpgroups, \
         persistent over the tiles (a strided batch's in one launch), stream-K for few tiles; f16 \
         or bf16 with an f32 sum, N and K multiples of 8"
    }

    fn config_syntax(&self) -> &'static str {
        "MxNxKsS[_cXxY][_h|_gG|_gm][_f1][_eE][_d2][_rR][_p][_q|_ql][_aN][_o][_lB][_vABD][_w][_uB|_x][_b][_n|_k][_t[_z]]: \
         the block tile (M 64 with one consumer warpgroup, 128 or 256 with two, 192 with three; N a multiple of 16 up to 256, \
         of 8 with _t; K 64 or 128), S stages (up to 16), blocks per cluster along M and N \
         (1x1, 2x1, 1x2, 4x1 or 1x4, TMA multicast of the shared operand; K 64), Hilbert tile \
         order (_h), groups of G tile rows (default 8; _g1 along N) or along M (_gm), one wgmma \
         batch left in flight (_f1), the output staged E columns at a time (_eE, a multiple of \
         16, leaving room for a stage more) through two staging tiles in turns (_d2, an even \
         number of sub-tiles), B's R k-tiles resident in shared memory (_rR, for a B of one \
         tile, or with _p_g1 one column of tiles per block), ping-pong consumers each owning \
         whole tiles (_p, M 64 or 128, up to 128 x 128), taking them from a queue as they go \
         (_q, one-block clusters; _ql taking each once the last tile's loads are issued) and \
         staging through one shared tile in turns (_o), the next N waves' A prefetched into L2 \
         at the start (_aN, with _rR), the loads' L2 promotion (_lB: 0, 64, 128 or 256 bytes, \
         default 128), L2 eviction hints of A's loads, B's loads and D's stores (_vABD, each n \
         none, e normal, f evict first, l evict last), the stream-K region walked after the whole \
         tiles, not before (_w), D stored from the registers (_uB: 4, 8 or 16 bytes per store, \
         no staging tile) or each staged tile finished and stored by the producer warpgroup's \
         three idle warps (_x: a form's elementwise epilogue of a 16-bit D runs under the next \
         tile's main loop; cooperative, the whole tile staged), the last wave's rows cut into one piece per block (_b: with _rR and \
         _p, stored from the registers or in 16-row TMA boxes), as few blocks as take as many \
         waves (_n: evened waves, each block walking as many tiles) or every tile's k-tiles shared \
         out over every SM (_k: stream-K over the whole problem, cooperative consumers), A and B \
         swapped (_t: the weights fill the tile's M, the tokens its N; _t_z: its transposed \
         staging 128-byte swizzled, 64 rows per consumer); e.g. 128x256x64s3_c2x1; \
         or `wide` \
         (128x256x64s3); each part at most once. Without it: a tuning record's (rute tune), else \
         by shape and the device's facts \
         (for M up to 64, 64x{M rounded up to 8, at least 16}x128_f1_vfln_t \
         where those tiles fit in one wave, else 128x{the same}x64s8_vfln_t, in clusters of four \
         with a batch in flight where 64-wide tiles pass a wave; for M up to 128, the 128-row \
         tile as narrow as fills one wave, with a batch in flight, 256-byte L2 promotion and \
         _vlfn (where it is narrower than 48 over a K of 8192 or more, \
         128x64x64s8_c1x2_f1_vlfn shared out by stream-K; for M 65 to 111 where it would be 48 \
         to 64 wide, 64x{M rounded up to 8}x64_f1_vfln_k_t, the tokens one tile, every \
         tile streamed over every SM); for K up to 512, 128x256x64s4_e128 \
         (64x256x64s8_f1_e128_r4_p_l0_vfnf where B is one tile 256 wide, \
         64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf for its K of 256 past the L2); \
         for M 129 to 160 where the weights' 64-row tiles fill at most 3/4 of a wave, \
         64x{M rounded up to 8}x64_f1_vfln_k_t; for M 209 to 256 where the weights' 128-row \
         tiles fit one wave, 128x128x64s6_c2x1_n (_k over a K of 16384 or more); for M 129 to \
         320 otherwise, 128x{M/2 rounded up to 8}x64_c1x2_n_t (two token tiles sharing each \
         weight tile's load); else the \
         tile whose waves cost least (for M up to 512 also the tokens in two swapped tiles as \
         narrow as hold them), in evened waves, the 128x256 tile in Hilbert order unless \
         stream-K shares its last wave out, or, where the tiles do not fill a wave, every tile \
         streamed over every SM where that costs at most 0.85 of the whole tiles' waves)"
    }

    fn runs_on(&self, target: Target) -> bool {
        TARGETS.contains(&target)
    }

    fn plan(
        &self,
        p: &Problem,
        device: &Device,
        schedule: Option<&HopperSchedule>,
    ) -> Result<Plan, String> {
        self.plan_parts(
            p,
            device,
            schedule,
            (None, Finish::Consumers),
            StridedBatch::ONE,
        )
    }

    /// The packed form as [`GemmProgram::plan`] plans it (its rows aligned to 16 bytes);
    /// otherwise a form whose operands TMA loads as they lie: A and B of either major (an
    /// MN-major one staged in GMMA's MN-major layout, the `wgmma` transposing it) with rows
    /// of 16 bytes (leading dimensions multiples of 8 elements, buffers 16-byte aligned), every
    /// epilogue, D in f16, bf16 or f32; one GEMM, or a strided batch in one launch
    /// ([`super::batch`]: the batch as the tensor maps' third dimension, its strides multiples
    /// of 16 bytes that step past a matrix, A's and B's also 0, and a schedule that walks every
    /// GEMM's tiles: [`HopperSchedule::check_batch`]). D of a 16-bit type (either) goes out
    /// through the schedule's store, its rows on 16 bytes; an f32 D, and a gated epilogue's,
    /// from the registers, its rows on the stores' width (an element, or two for an f32 D
    /// stored in pairs); a gated epilogue under a swapped schedule (`_t`, whose tile is D's
    /// transpose) trades each gate and up value between two lanes. The rest goes to the
    /// programs after it.
    fn plan_form(
        &self,
        p: &Problem,
        form: &Form,
        device: &Device,
        schedule: Option<&HopperSchedule>,
    ) -> Result<Plan, String> {
        if form.is_packed(p.m, p.n, p.k, p.dtype) {
            let plan = self.plan(p, device, schedule)?;
            aligned_for(&plan, form, p.dtype)?;
            return Ok(plan);
        }
        let parts = form.parts(p.dtype);
        if form.batch.is_batched() {
            let bytes = p.dtype.bytes();
            check_tma_strides(form, (p.m, p.n, p.k), bytes, parts.out.bytes())?;
        }
        for (what, operand, ld) in [("A", Operand::A, form.a.ld), ("B", Operand::B, form.b.ld)] {
            if form.row_alignment(operand, p.dtype.bytes()) < 16 {
                return Err(format!(
                    "TMA needs rows of {what} on 16 bytes, and ld = {ld} with this buffer does \
                     not give them"
                ));
            }
        }
        let finish = Finish::of(p, form, parts);
        let plan = self.plan_parts(
            p,
            device,
            schedule,
            (Some(parts), finish),
            StridedBatch::of(form),
        )?;
        if let Some(h) = plan.downcast_ref::<HopperGemm>() {
            if h.schedule.epilogue_warps() {
                epilogue_warps_aligned(form, parts, p.m)?;
            }
        }
        let needs = plan.output_alignment();
        if form.row_alignment(Operand::D, parts.out.bytes()) < needs {
            let by = if needs == 16 {
                "TMA needs"
            } else {
                "its stores from the registers need"
            };
            return Err(format!(
                "{by} rows of D on {needs} bytes, and ld = {} with this buffer does not give them",
                form.ldd
            ));
        }
        Ok(plan)
    }
}

/// Who finishes a form's epilogue under the chooser's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finish {
    /// The consumers, as the schedule has it.
    Consumers,
    /// The epilogue warps (`_x`) where the schedule has room for them and they pay
    /// ([`chooser::finish`]): an elementwise epilogue of a 16-bit D without C whose bias and
    /// residual they may read 16 bytes at a time.
    EpilogueWarps(Epilogue),
    /// The consumers, from their registers straight to D (D in f32, a gated epilogue): the
    /// schedule's staging tile, which such a form never writes, is given to stages
    /// ([`HopperSchedule::without_staging`]).
    Registers,
}

impl Finish {
    /// Who may finish `form`'s epilogue (its `parts`) for `p`.
    fn of(p: &Problem, form: &Form, parts: FormParts) -> Finish {
        if parts.epilogue.is_gated() || parts.out == OutType::F32 {
            return Finish::Registers;
        }
        // Not with C: the staged `alpha * acc` is rounded to D's type before `beta * C` is
        // added, and a BLAS call whose C cancels the product (a residual `b - A x`) would
        // keep that rounding's error, not D's. The warps take C only where asked for.
        let elementwise = matches!(parts.epilogue, Epilogue::Elementwise(_));
        let sixteen_bits = parts.out != OutType::F32;
        let without_c = !parts.epilogue.reads_c();
        if elementwise
            && without_c
            && sixteen_bits
            && epilogue_warps_aligned(form, parts, p.m).is_ok()
            && p.k > 0
        {
            Finish::EpilogueWarps(parts.epilogue)
        } else {
            Finish::Consumers
        }
    }

    /// `schedule` with the epilogue warps where they may take it and pay over `m x n x k` on
    /// `device`, or without its staging tile where the form does not use it; else as it is.
    fn apply(
        self,
        schedule: HopperSchedule,
        (mnk, batch): ((usize, usize, usize), StridedBatch),
        device: &Device,
    ) -> HopperSchedule {
        match self {
            Finish::Consumers => schedule,
            Finish::Registers => schedule
                .without_staging(device.smem_per_block)
                .unwrap_or(schedule),
            // Only where the warps' staging fits beside the schedule's ring: a schedule that
            // stages sub-tiles (`_e`) keeps its consumers' finish. The residual on the warps at a
            // stage less (512 x 28672 x 4096, 128x224 s4 `_e112` -> s3 `_x`) cost +13.5% over
            // plain against the consumers' +9.5% (H100, results/blas.md, eighth session).
            // A batch's fourth stage (the chooser's, for the plain form) took the whole staging
            // tile the warps need: a batch that hands them its epilogue goes back to three.
            Finish::EpilogueWarps(epilogue) => {
                let whole = batch
                    .is_batched()
                    .then(|| chooser::model::without_fourth_stage(&schedule))
                    .flatten()
                    .unwrap_or(schedule);
                match whole.with_epilogue_warps() {
                    Some(s)
                        if chooser::finish::epilogue_warps_pay(&s, mnk, &epilogue, device.sms) =>
                    {
                        s
                    }
                    _ => schedule,
                }
            }
        }
    }
}

/// `Ok` where the epilogue warps (`_x`) may read `form`'s C, bias and residual 16 bytes at a
/// time (rows of each on 16 bytes, the bias's start too), and where they take the residual
/// alone by TMA ([`super::staged_residual`]), step through a batch of `m`-row residuals as TMA
/// does; else why not.
fn epilogue_warps_aligned(form: &Form, parts: FormParts, m: usize) -> Result<(), String> {
    let e = &parts.epilogue;
    let bytes = parts.out.bytes();
    if stages_its_residual(e) && form.batch.is_batched() {
        let cover = m as u64 * form.ldr as u64;
        check_tma_stride("the residual", (form.batch.residual, cover), bytes, false)?;
    }
    for (read, name, operand, ld) in [
        (e.reads_c(), "C", Operand::C, form.ldc),
        (
            e.adds_residual(),
            "the residual",
            Operand::Residual,
            form.ldr,
        ),
    ] {
        if read && form.row_alignment(operand, bytes) < 16 {
            return Err(format!(
                "the epilogue warps (_x) read rows of {name} 16 bytes at a time, and ld = {ld} \
                 with this buffer does not start them on 16 bytes"
            ));
        }
    }
    if e.bias().is_some() && form.base_align < 16 {
        return Err(format!(
            "the epilogue warps (_x) read the bias 16 bytes at a time, and it starts on {} \
             bytes",
            form.base_align
        ));
    }
    Ok(())
}

impl HopperWs {
    /// The plan of `p` in the form's `parts` (`None`: the packed form), one GEMM or a strided
    /// `batch` of them in one launch; `finish` says whether the chooser's schedule may hand
    /// the form's epilogue to the epilogue warps.
    fn plan_parts(
        &self,
        p: &Problem,
        device: &Device,
        schedule: Option<&HopperSchedule>,
        (parts, finish): (Option<FormParts>, Finish),
        batch: StridedBatch,
    ) -> Result<Plan, String> {
        let target = device.target;
        if !TARGETS.contains(&target) {
            return Err(format!("it runs on sm_90a only, not {target}"));
        }
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32, not {}", p.acc));
        }
        tma_rows(p, MAX_DIM)?;
        let Choice { schedule, origin } = match schedule {
            None => {
                let choice = chooser::choose_for(p.m, p.n, p.k, Operands::of(parts, batch), device);
                Choice {
                    schedule: finish.apply(choice.schedule, ((p.m, p.n, p.k), batch), device),
                    ..choice
                }
            }
            Some(s) => Choice {
                schedule: *s,
                origin: p
                    .config
                    .as_ref()
                    .map_or(Origin::Given, |c| c.origin().clone()),
            },
        };
        // A schedule built from its parts is checked here; a parsed one was at its parse.
        schedule
            .check()
            .and_then(|()| schedule.check_fit(device.smem_per_block))
            .map_err(|e| format!("{schedule}: {e}"))?;
        let dim = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        schedule.takes(dim(p.m), dim(p.n), dim(p.k))?;
        let batching = if batch.is_batched() {
            schedule
                .check_batch(dim(p.m), dim(p.n), dim(p.k), batch)
                .map_err(|e| e.to_string())?;
            Batching::Strided
        } else {
            Batching::Single
        };
        // The host plan (the layouts and copies) is made now, so that a launch has it.
        host_plan(schedule, p.dtype, parts, batching)?;
        Ok(Plan::new(HopperGemm {
            schedule,
            dtype: p.dtype,
            origin,
            form: parts,
            batching,
        }))
    }
}

impl HopperWs {
    /// The default schedule for `m x n x k` on `device` ([`chooser::choose`]'s).
    pub fn default_schedule(m: usize, n: usize, k: usize, device: &Device) -> HopperSchedule {
        chooser::choose(m, n, k, device).schedule
    }
}

/// The program's plan: a schedule, the element type, and where the schedule came from. Made by
/// [`HopperWs`]'s `plan` only, which checked the schedule against the problem and the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopperGemm {
    schedule: HopperSchedule,
    dtype: GemmDtype,
    origin: Origin,
    form: Option<FormParts>,
    batching: Batching,
}

impl HopperGemm {
    /// The schedule.
    pub fn schedule(&self) -> &HopperSchedule {
        &self.schedule
    }

    /// A, B and D's element type.
    pub fn dtype(&self) -> GemmDtype {
        self.dtype
    }

    /// Where the schedule came from (given, a tuning record, the table or the model).
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// One GEMM per launch, or a strided batch in one launch.
    pub fn batching(&self) -> Batching {
        self.batching
    }
}

// SAFETY: hopper_ws reaches A, B and D through tensor maps whose extents are m, n and k (the TMA
// unit clips boxes to them) and D's direct stores are bounded by m and n (a form's stores from
// the registers, and its reads of C, the bias and the residual, by D's rows and columns); it
// writes only D (map and pointer) and the workspace its launch sizes, and reads its tile order
// within the table.
unsafe impl ProgramPlan for HopperGemm {
    fn program(&self) -> &'static str {
        "hopper_ws"
    }

    fn key(&self) -> String {
        self.entry()
    }

    /// `hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, groups of 8, stream-K by shape;
    /// schedule from the cost model)`: the schedule ([`HopperSchedule::describe`]) and, unless it
    /// was given, where it came from.
    fn describe(&self) -> String {
        let from = match &self.origin {
            Origin::Given => String::new(),
            origin => format!("; schedule from {origin}"),
        };
        let form = match &self.form {
            None => String::new(),
            Some(f) if f.out == OutType::of(self.dtype) => format!("; {}", f.epilogue.describe()),
            Some(f) => format!("; {}, D in {}", f.epilogue.describe(), f.out),
        };
        let form = match self.batching {
            Batching::Single => form,
            Batching::Strided => format!("{form}; a strided batch in one launch"),
        };
        format!(
            "hopper_ws {} (f32 acc, {}{from}{form})",
            self.dtype,
            self.schedule.describe()
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        parts_kernel(self.schedule, self.dtype, self.form, self.batching).map_err(|e| match e {
            HopperError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("hopper_ws", other),
        })
    }

    fn entry(&self) -> String {
        let mut name = entry_name(&self.schedule, self.dtype);
        if let Some(f) = &self.form {
            name.push_str(&f.tag());
        }
        name.push_str(self.batching.tag());
        name
    }

    /// TMA reads global memory from 16-byte aligned addresses.
    fn operand_alignment(&self) -> u64 {
        16
    }

    /// And writes D through a TMA store (16); or a form's D from the registers, as wide as
    /// its stores.
    fn output_alignment(&self) -> u64 {
        let out = self.form.map_or(OutType::of(self.dtype), |f| f.out);
        self.host_plan().form_store.d_row_bytes(out)
    }

    fn launch(&self, m: u32, n: u32, k: u32, device: &Device) -> LaunchPlan {
        self.launch_any(m, n, k, None, device)
    }

    fn launch_form(&self, m: u32, n: u32, k: u32, form: &Form, device: &Device) -> LaunchPlan {
        self.launch_any(m, n, k, self.form.map(|_| form), device)
    }
}

impl HopperGemm {
    /// The host plan ([`host_plan`]), made when the problem was planned.
    fn host_plan(&self) -> Arc<HopperPlan> {
        host_plan(self.schedule, self.dtype, self.form, self.batching)
            .expect("the plan was made when the problem was planned")
    }

    /// The launch for `m x n x k`, with a form's leading dimensions and parameters where the
    /// plan has one.
    fn launch_any(
        &self,
        m: u32,
        n: u32,
        k: u32,
        form: Option<&Form>,
        device: &Device,
    ) -> LaunchPlan {
        let s = &self.schedule;
        let plan = self.host_plan();
        let resident = device.sms / s.cluster.size();
        // Swapped, the kernel's A is B and its M is N.
        let (km, kn) = s.kernel_dims(m, n);
        let (ka, kb) = if s.swapped() {
            (GemmOperand::B, GemmOperand::A)
        } else {
            (GemmOperand::A, GemmOperand::B)
        };
        // A strided batch's GEMMs (plan_form bounded the count); one for one GEMM.
        let count = match (self.batching, form) {
            (Batching::Strided, Some(f)) => u32::try_from(f.batch.count).unwrap_or(u32::MAX),
            _ => 1,
        };
        let l = launch_batched(s, (km, kn, k), count, resident, device.l2_bytes);
        // plan() took N and K multiples of 8, plan_form rows of 16 bytes (D's where it has a
        // map): every stride is a multiple of 16 bytes.
        let [a_desc, b_desc, d_desc] = match form {
            None => plan.descriptors(km, kn, k),
            Some(f) => plan.descriptors_form((km, kn, k), f),
        }
        .expect("rows of 16-byte multiples");
        let map = |operand, descriptor| GemmArg::TensorMap {
            operand,
            descriptor,
        };
        // A D stored from the registers has no map: A's stands in, over A.
        let d_over = if plan.form_store.maps_d() {
            GemmOperand::D
        } else {
            ka
        };
        let params = HopperParams::<OnHost> {
            a_map: map(ka, a_desc),
            b_map: map(kb, b_desc),
            d_map: map(d_over, d_desc),
            d: GemmArg::D,
            m: GemmArg::U32(km),
            n: GemmArg::U32(kn),
            k: GemmArg::K,
            order: GemmArg::Table(Arc::new(tile_order_batched(s, km, kn, count))),
            sk_tiles: GemmArg::U32(l.split.sk_tiles),
            sk_blocks: GemmArg::U32(l.split.sk_blocks),
            workspace: GemmArg::Workspace,
        };
        let mut args = params.into_args();
        if let Some(f) = form {
            args.extend(FormParams::args(f));
        }
        if self.batching == Batching::Strided {
            args.push(GemmArg::U32(count));
        }
        // The residual's map, where the consumers take R through the staging: the kernel's last
        // parameter.
        if let Some(f) = form {
            if let Some(descriptor) = plan
                .residual_descriptor((km, kn), f)
                .expect("rows of 16-byte multiples")
            {
                args.push(map(GemmOperand::Residual, descriptor));
            }
        }
        LaunchPlan {
            grid: l.grid,
            block: l.block,
            cluster: l.cluster,
            dynamic_smem_bytes: l.dynamic_smem_bytes,
            args,
            // Without a split the kernel never touches the workspace, but its parameter is a
            // buffer.
            workspace: l.workspace_elems(s).max(1),
            then: None,
            programmatic: l.programmatic,
        }
    }
}

/// The host plan of `schedule` for `dtype` in a form's parts, one GEMM or a strided batch (its
/// atoms, layouts and TMA copies: the layout algebra's work, about a tenth of a millisecond),
/// made once per process and shared; or why it could not be made, as a clause.
fn host_plan(
    schedule: HopperSchedule,
    dtype: GemmDtype,
    form: Option<FormParts>,
    batching: Batching,
) -> Result<Arc<HopperPlan>, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Key = (HopperSchedule, GemmDtype, Option<FormParts>, Batching);
    type Plans = Mutex<HashMap<Key, Arc<HopperPlan>>>;
    static PLANS: OnceLock<Plans> = OnceLock::new();
    let plans = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut plans = plans
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (schedule, dtype, form, batching);
    if let Some(p) = plans.get(&key) {
        return Ok(Arc::clone(p));
    }
    let plan = HopperPlan::with_parts(schedule, dtype, form, batching)
        .map_err(|e| format!("{schedule}: {e}"))?;
    let plan = Arc::new(plan);
    plans.insert(key, Arc::clone(&plan));
    Ok(plan)
}

#[cfg(test)]
mod tests;
