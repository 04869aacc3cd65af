//! The multistage GEMM: `cp.async` global -> shared into a `stages`-deep ring buffer, `ldmatrix`
//! shared -> registers, `mma.sync.m16n8k16`, written the way CuTe's tutorial writes it
//! (config, prologue, mainloop, epilogue; see [`program`]).
//!
//! `D = A * B^T`: A is `M x K` and B is `N x K`, both K-major (row-major, row stride K); D is
//! `M x N` row-major. Inputs f16 or bf16, output the same type, accumulation in f16 (f16 inputs
//! only) or f32.
//!
//! The kernel's parameters, in order: `d` (D's global pointer), `a`, `b`, `m`, `n`, `k` (all
//! `u32`). Launch it with [`MultistageConfig::grid`], [`MultistageConfig::block`] and
//! [`MultistageParts::smem_bytes`] of dynamic shared memory.
//!
//! Requirements the caller checks (the kernel does not): `K` a multiple of
//! [`MultistageParts::k_multiple`] (8 for the reference's 16-byte `cp.async`, which needs
//! 16-byte aligned rows; configurations with 8- or 4-byte copies take K a multiple of 4 or 2, and
//! one with element-wise copies any K, see [`MultistageConfig::reference_for_k`]), A, B 16-byte
//! aligned,
//! D 2-byte aligned, and `M * K`, `N * K`, `M * N` below `2^32` (element offsets are 32-bit).
//! Any `M`, `N`, `K` otherwise: the tails of M, N and K are predicated (out-of-range rows and
//! columns of A and B are zero-filled by the copy, out-of-range elements of D are not stored).
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::gemm::{Accum, GemmDtype};
//! use kernels::multistage::{multistage_kernel, MultistageConfig};
//! let cfg = MultistageConfig::reference(GemmDtype::F16, Accum::F16);
//! let kernel = multistage_kernel(&cfg).unwrap();
//! assert_eq!(kernel.name, "multistage_f16");
//! assert_eq!(cfg.grid(1000, 300), (3, 8, 1));
//! assert_eq!(cfg.block(), (128, 1, 1));
//! assert_eq!(cfg.smem_bytes(), 49152);
//! let ptx = codegen_ptx::emit(&kernel, Target::Sm80).unwrap();
//! assert!(ptx.contains("mma.sync.aligned.m16n8k16"));
//! ```

pub mod form;
pub mod program;
pub mod seam;
pub mod tune;

pub use seam::{Multistage, MAX_K};
pub use tune::{Tune, TuneError};

use dsl_core::atom::{
    CopyAtom, CpAsyncCacheAlways, CpAsyncCacheGlobal, LdsmN, LdsmT, MmaAtom, Sm80Mma, StsmN,
    UniversalCopy,
};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use dsl_core::layout::{ComposedLayout, IntTuple, Layout, LayoutError, Swizzle};
use dsl_core::tiled::{
    make_tiled_copy, make_tiled_copy_a, make_tiled_copy_b, make_tiled_copy_c, make_tiled_mma,
    TiledCopy, TiledMma, View,
};
use thiserror::Error;

use crate::gemm::layout::Major;
use crate::gemm::{Accum, GemmDtype};

/// The targets the multistage GEMM runs on: `cp.async` and `mma.sync` exist from sm_80.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// How the accumulators reach D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Epilogue {
    /// As CuTe's tutorial does: each thread stores its accumulators straight to global memory (pairs of
    /// values as 32-bit stores where aligned).
    Registers,
    /// Through shared memory: accumulators to a swizzled `(tile_m, tile_n)` tile (32-bit
    /// `st.shared` of value pairs), then 16-byte coalesced rows to D (16-byte stores where N is a
    /// multiple of 8 and D 16-byte aligned).
    Smem,
    /// As [`Epilogue::Smem`], the shared tile written by `stmatrix.x4` (sm_90 and later: four
    /// 8x8 matrices per instruction, a quarter of the store instructions). A kernel with it emits
    /// for sm_90a and sm_100a only; [`MultistageConfig::for_target`] swaps it for
    /// [`Epilogue::Smem`] below.
    Stmatrix,
}

impl Epilogue {
    /// Whether D goes through shared memory.
    pub fn via_smem(self) -> bool {
        self != Epilogue::Registers
    }
}

/// The parts of a [`MultistageConfig`], any values: [`MultistageConfig::new`] checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MultistageParts {
    /// Element type of A, B and D.
    pub dtype: GemmDtype,
    /// Accumulator type: f16 (f16 inputs only, `SM80_16x8x16_F16F16F16F16_TN`) or f32
    /// (`SM80_16x8x16_F32F16F16F32_TN` or `..._F32BF16BF16F32_TN`).
    pub acc: Accum,
    /// Rows of D per block.
    pub tile_m: u32,
    /// Columns of D per block.
    pub tile_n: u32,
    /// K per main-loop step (the shared tile's width): 32 or 64.
    pub tile_k: u32,
    /// Depth of the shared-memory ring buffer (at least 2).
    pub stages: u32,
    /// Bits per global -> shared copy: 128 (`cp.async.cg`, K a multiple of 8), 64 or 32
    /// (`cp.async.ca`, K a multiple of 4 or 2: rows of A and B aligned to 8 or 4 bytes), or 16
    /// (synchronous `ld.global` + `st.shared` of single elements, any K; slow).
    /// [`MultistageConfig::copy_bits_for`] picks the widest a K allows.
    pub copy_bits: u32,
    /// Warps along M and N (`AtomLayoutMNK = (warps_m, warps_n, 1)`); the MMA's permutation tile
    /// is `(16 warps_m, 16 warps_n, 16)`, so each warp covers 16 rows and 16 columns per step
    /// (the reference: 2 x 2 warps, tile `(32, 32, 16)`).
    pub warps: (u32, u32),
    /// Block rasterization: consecutive blocks cover `2^raster_log2` M tiles of one N tile (0:
    /// one row of N tiles after another). See [`MultistageConfig::grid`].
    pub raster_log2: u32,
    /// How the accumulators reach D.
    pub epilogue: Epilogue,
}

/// A configuration of the multistage GEMM: [`MultistageParts`] the program supports, checked
/// when made ([`MultistageConfig::new`]), so that its grid, block and shared memory are what a
/// launch can take (no tile of 0, no stages past 8). Its parts read as fields (`cfg.tile_m`).
///
/// ```
/// use kernels::gemm::{Accum, GemmDtype};
/// use kernels::multistage::{MultistageConfig, MultistageParts};
/// let reference = MultistageConfig::reference(GemmDtype::F16, Accum::F32);
/// let deeper = MultistageConfig::new(MultistageParts { stages: 4, ..reference.parts() }).unwrap();
/// assert_eq!((deeper.tile_m, deeper.stages), (128, 4));
/// let zero = MultistageParts { tile_m: 0, ..reference.parts() };
/// assert!(MultistageConfig::new(zero).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MultistageConfig(MultistageParts);

impl std::ops::Deref for MultistageConfig {
    type Target = MultistageParts;
    fn deref(&self) -> &MultistageParts {
        &self.0
    }
}

/// Why a multistage kernel could not be generated.
#[derive(Debug, Error)]
pub enum MultistageError {
    /// The configuration is outside what the program supports.
    #[error("unsupported multistage configuration {cfg:?}: {reason}")]
    Config {
        /// The configuration's parts.
        cfg: MultistageParts,
        /// Why.
        reason: String,
    },
    /// A layout operation failed (a bug in the program for a configuration that passed the
    /// checks).
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// The builder failed.
    #[error("builder: {0}")]
    Build(#[from] BuildError),
}

impl MultistageConfig {
    /// The start of a plan's description, shared by the packed and the form plans: `f16 (f32
    /// acc, 128x256x32 tile, 4 stages, 2x4 warps`, then the copy width where it is not 128 bits
    /// (the closing parenthesis is the caller's, after what it adds).
    pub(crate) fn describe_shape(&self) -> String {
        let copies = if self.copy_bits == 128 {
            String::new()
        } else {
            format!(", {}-bit copies", self.copy_bits)
        };
        format!(
            "{} ({} acc, {}x{}x{} tile, {} stages, {}x{} warps{copies}",
            self.dtype,
            self.acc,
            self.tile_m,
            self.tile_n,
            self.tile_k,
            self.stages,
            self.warps.0,
            self.warps.1,
        )
    }

    /// The configuration of `parts`, or why the program does not support it.
    pub fn new(parts: MultistageParts) -> Result<MultistageConfig, MultistageError> {
        parts.check()?;
        Ok(MultistageConfig(parts))
    }

    /// Its parts, to change some and make another ([`MultistageConfig::new`]).
    pub fn parts(&self) -> MultistageParts {
        self.0
    }

    /// The configuration of CuTe's multistage tutorial: 128x128x32 tiles, 3 stages.
    pub fn reference(dtype: GemmDtype, acc: Accum) -> Self {
        MultistageConfig(MultistageParts {
            dtype,
            acc,
            tile_m: 128,
            tile_n: 128,
            tile_k: 32,
            stages: 3,
            copy_bits: 128,
            warps: (2, 2),
            raster_log2: 0,
            epilogue: Epilogue::Registers,
        })
    }

    /// The tuned configuration: 128x256 tiles computed by 2x4 warps (each still 64x64, so the
    /// shared-memory reads per MMA stay, while each byte brought to shared memory feeds twice the
    /// MMAs), 4 stages, blocks rasterized in groups of 4 M tiles (L2 reuse of B) and the
    /// shared-memory epilogue written by `stmatrix` (16-byte coalesced stores to D); `acc` as
    /// given. The best across the H200 sweeps (`results/h200_gemm_sweep*.md`). For sm_80 take
    /// [`MultistageConfig::for_target`] of it.
    pub fn tuned(dtype: GemmDtype, acc: Accum) -> Self {
        MultistageConfig(MultistageParts {
            tile_n: 256,
            warps: (2, 4),
            stages: 4,
            raster_log2: 2,
            epilogue: Epilogue::Stmatrix,
            ..Self::reference(dtype, acc).0
        })
    }

    /// This configuration as `target` can run it: [`Epilogue::Stmatrix`] becomes
    /// [`Epilogue::Smem`] below sm_90 (`stmatrix` is sm_90's); everything else stays.
    pub fn for_target(self, target: Target) -> Self {
        if self.epilogue == Epilogue::Stmatrix && target < Target::Sm90a {
            // The same tile through shared memory: the check does not tell the two apart.
            MultistageConfig(MultistageParts {
                epilogue: Epilogue::Smem,
                ..self.0
            })
        } else {
            self
        }
    }

    /// The widest global -> shared copy whose alignment every row of a K-major `x K` matrix of
    /// 16-bit elements keeps (given a 16-byte aligned base): 128 bits for `K % 8 == 0`, 64 for
    /// `K % 4 == 0`, 32 for even K, 16 (element-wise, synchronous) for odd K.
    pub fn copy_bits_for(k: u32) -> u32 {
        match k {
            k if k % 8 == 0 => 128,
            k if k % 4 == 0 => 64,
            k if k % 2 == 0 => 32,
            _ => 16,
        }
    }

    /// The reference configuration with the widest copy `k` allows (see
    /// [`MultistageConfig::copy_bits_for`]).
    ///
    /// For odd K the tile is 64x64 with 4 stages: element-wise copies keep many loads in flight,
    /// and with the 128x128 tile's accumulators they would not fit in registers (the depth is
    /// where ptxas happened to need no spills on sm_80 and sm_90a).
    pub fn reference_for_k(dtype: GemmDtype, acc: Accum, k: u32) -> Self {
        let copy_bits = Self::copy_bits_for(k);
        let (tile_m, tile_n, stages) = if copy_bits == 16 {
            (64, 64, 4)
        } else {
            (128, 128, 3)
        };
        MultistageConfig(MultistageParts {
            copy_bits,
            tile_m,
            tile_n,
            stages,
            ..Self::reference(dtype, acc).0
        })
    }

    /// The PTX entry name: `multistage_f16` (f16 accumulate), `multistage_f16_f32acc`,
    /// `multistage_bf16` (f32 accumulate), with `_{m}x{n}x{k}s{stages}` appended for other tiles
    /// and `_cp{bits}` for narrower copies.
    pub fn name(&self) -> String {
        let base = match (self.dtype, self.acc) {
            (GemmDtype::F16, Accum::F16) => "multistage_f16",
            (GemmDtype::F16, Accum::F32) => "multistage_f16_f32acc",
            (GemmDtype::Bf16, Accum::F32) => "multistage_bf16",
            (GemmDtype::Bf16, Accum::F16) => "multistage_bf16_f16acc",
        };
        let r = Self::reference(self.dtype, self.acc);
        let mut name = base.to_string();
        if (self.tile_m, self.tile_n, self.tile_k, self.stages)
            != (r.tile_m, r.tile_n, r.tile_k, r.stages)
        {
            name += &format!(
                "_{}x{}x{}s{}",
                self.tile_m, self.tile_n, self.tile_k, self.stages
            );
        }
        if self.copy_bits != r.copy_bits {
            name += &format!("_cp{}", self.copy_bits);
        }
        if self.warps != r.warps {
            name += &format!("_w{}x{}", self.warps.0, self.warps.1);
        }
        if self.raster_log2 != 0 {
            name += &format!("_r{}", self.raster_log2);
        }
        match self.epilogue {
            Epilogue::Registers => {}
            Epilogue::Smem => name += "_se",
            Epilogue::Stmatrix => name += "_stsm",
        }
        name
    }

    /// Threads per block: 32 per warp (128 for the reference's 2x2 warps).
    pub fn block(&self) -> (u32, u32, u32) {
        (self.threads(), 1, 1)
    }

    /// The grid for an `m x n` output: x over N tiles, y over M tiles; with rasterization
    /// (`raster_log2 = s`), x over `2^s` M tiles of each N tile and y over groups of `2^s` M tiles.
    pub fn grid(&self, m: u32, n: u32) -> (u32, u32, u32) {
        let (tm, tn) = (m.div_ceil(self.tile_m), n.div_ceil(self.tile_n));
        let s = self.raster_log2;
        (tn << s, tm.div_ceil(1 << s), 1)
    }
}

impl MultistageParts {
    /// K must be a multiple of this (copies of `copy_bits` stay inside aligned rows).
    pub fn k_multiple(&self) -> u32 {
        self.copy_bits / 16
    }

    /// Threads per block (saturating: parts out of range have no launch).
    pub fn threads(&self) -> u32 {
        32u32
            .saturating_mul(self.warps.0)
            .saturating_mul(self.warps.1)
    }

    /// Dynamic shared memory per block: `stages` tiles of A and of B (saturating: parts out of
    /// range do not fit).
    pub fn smem_bytes(&self) -> u32 {
        let (m, n, k) = (
            u64::from(self.tile_m),
            u64::from(self.tile_n),
            u64::from(self.tile_k),
        );
        let pipeline = (m + n) * k * u64::from(self.stages) * 2;
        let bytes = if self.epilogue.via_smem() {
            pipeline.max(m * n * 2)
        } else {
            pipeline
        };
        u32::try_from(bytes).unwrap_or(u32::MAX)
    }

    fn fail(&self, reason: impl Into<String>) -> MultistageError {
        MultistageError::Config {
            cfg: *self,
            reason: reason.into(),
        }
    }

    fn check(&self) -> Result<(), MultistageError> {
        if self.dtype == GemmDtype::Bf16 && self.acc == Accum::F16 {
            return Err(
                self.fail("bf16 inputs accumulate in f32 (mma.sync has no bf16 -> f16 form)")
            );
        }
        if !matches!(self.tile_k, 32 | 64) {
            return Err(self.fail("tile_k is 32 or 64"));
        }
        if !matches!(self.copy_bits, 16 | 32 | 64 | 128) {
            return Err(self.fail("copy_bits is 16, 32, 64 or 128"));
        }
        let (wm, wn) = self.warps;
        if !matches!(wm, 1 | 2 | 4) || !matches!(wn, 1 | 2 | 4) {
            return Err(self.fail("warps along M and N are 1, 2 or 4"));
        }
        let g2s_rows = self.threads() * self.k_multiple() / self.tile_k;
        for (what, t, w) in [("tile_m", self.tile_m, wm), ("tile_n", self.tile_n, wn)] {
            let unit = (16 * w).max(g2s_rows).max(32);
            if t == 0 || t % unit != 0 || t > 256 {
                return Err(self.fail(format!("{what} is a multiple of {unit} up to 256")));
            }
        }
        if self.epilogue.via_smem() {
            let per_row = self.tile_n / 8;
            if !self.tile_n.is_power_of_two()
                || !self.threads().is_multiple_of(per_row)
                || !self.tile_m.is_multiple_of(self.threads() / per_row)
            {
                return Err(self.fail(
                    "the shared epilogue needs tile_n a power of two and whole passes of 16-byte rows",
                ));
            }
        }
        if self.raster_log2 > 4 {
            return Err(self.fail("raster_log2 is 0..=4"));
        }
        if !(2..=8).contains(&self.stages) {
            return Err(self.fail("stages is 2..=8"));
        }
        if self.smem_bytes() > 227 * 1024 {
            return Err(self.fail("the stages do not fit in shared memory"));
        }
        Ok(())
    }
}

/// Threads per block of the reference configuration.
pub const THREADS: u32 = 128;

/// Everything the program needs that is computed on the host: the atoms, tiled copies and MMA,
/// shared layouts and fragment layouts. Built by [`Setup::new`] from a configuration.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The configuration.
    pub cfg: MultistageConfig,
    /// The tiled MMA: `(warps_m, warps_n, 1)` atoms, a `(16 warps_m, 16 warps_n, 16)` tile.
    pub mma: TiledMma,
    /// The cp.async atom (128-bit, `.cg`).
    pub g2s_atom: CopyAtom,
    /// G2S tiled copy (the same for A and B).
    pub g2s: TiledCopy,
    /// The ldmatrix atom.
    pub s2r_atom: CopyAtom,
    /// S2R tiled copy of A (`make_tiled_copy_A`).
    pub s2r_a: TiledCopy,
    /// S2R tiled copy of B (`make_tiled_copy_B`).
    pub s2r_b: TiledCopy,
    /// Shared layout of A: `(tile_m, tile_k, stages)`, swizzled.
    pub smem_a: ComposedLayout,
    /// Shared layout of B: `(tile_n, tile_k, stages)`, swizzled.
    pub smem_b: ComposedLayout,
    /// `partition_fragment_A` of one k-tile: `(MMA, MMA_M, MMA_K)`.
    pub frag_a: Layout,
    /// `partition_fragment_B`: `(MMA, MMA_N, MMA_K)`.
    pub frag_b: Layout,
    /// `partition_fragment_C`: `(MMA, MMA_M, MMA_N)`.
    pub frag_c: Layout,
    /// `retile_D(frag_a)` for the S2R copy of A.
    pub retile_a: Layout,
    /// `retile_D(frag_b)` for the S2R copy of B.
    pub retile_b: Layout,
    /// The shared tile of D for [`Epilogue::Smem`]: `Swizzle<3,3,log2(tile_n)-3> o
    /// (tile_m, tile_n):(tile_n, 1)` (a row's 16-byte chunks XORed with the row's low bits, so
    /// the accumulator stores of 8 rows hit 8 different chunks).
    pub smem_d: ComposedLayout,
    /// The `stmatrix` atom of [`Epilogue::Stmatrix`] (`SM90_U32x4_STSM_N`).
    pub r2s_atom: CopyAtom,
    /// Registers -> shared tiled copy of [`Epilogue::Stmatrix`] (`make_tiled_copy_C`).
    pub r2s: TiledCopy,
    /// `retile_S(frag_c)` for the `stmatrix` copy of the accumulators.
    pub retile_c: Layout,
    /// The 16-byte atom of the shared epilogue (`UniversalCopy<uint128_t>`).
    pub s2g_atom: CopyAtom,
    /// Shared -> global tiled copy of the epilogue: threads along rows, 8 values each.
    pub s2g: TiledCopy,
    /// G2S tiled copy of B (`g2s` is A's; they differ where the operands' majors do).
    pub g2s_b: TiledCopy,
    /// The ldmatrix atom of B (`s2r_atom` is A's: `.trans` for an MN-major operand).
    pub s2r_b_atom: CopyAtom,
    /// The form's parts the kernel is generated for (`None`: the packed form, the kernel as it
    /// always was).
    pub form: Option<crate::gemm::layout::FormParts>,
    /// A thread's accumulators' offsets from its first value in the block tile, for a form's
    /// epilogue (empty without a form).
    pub acc_offsets: Vec<crate::gemm::fused::AccValue>,
}

impl Setup {
    /// The setup of `cfg`.
    pub fn new(cfg: &MultistageConfig) -> Result<Setup, MultistageError> {
        Setup::with_form(cfg, None)
    }

    /// The setup of `cfg` for a form's parts (`None`: the packed form, as [`Setup::new`]): an
    /// MN-major operand is staged MN-major (`Swizzle<3,3,3> o (64,8):(1,64)` tiles, copies
    /// along M or N) and read by `ldmatrix.trans`.
    pub fn with_form(
        cfg: &MultistageConfig,
        form: Option<crate::gemm::layout::FormParts>,
    ) -> Result<Setup, MultistageError> {
        cfg.check()?;
        let (bm, bn, bk, st) = (
            i64::from(cfg.tile_m),
            i64::from(cfg.tile_n),
            i64::from(cfg.tile_k),
            i64::from(cfg.stages),
        );
        let op = match (cfg.dtype, cfg.acc) {
            (GemmDtype::F16, Accum::F16) => Sm80Mma::F16F16F16F16,
            (GemmDtype::F16, Accum::F32) => Sm80Mma::F32F16F16F32,
            _ => Sm80Mma::F32BF16BF16F32,
        };
        let val = cfg.dtype.val_type();
        let (wm, wn) = (i64::from(cfg.warps.0), i64::from(cfg.warps.1));
        let perm = [
            Some(Layout::vector(16 * wm, 1)?),
            Some(Layout::vector(16 * wn, 1)?),
            Some(Layout::vector(16, 1)?),
        ];
        let atoms = Layout::col_major(IntTuple::ints(&[wm, wn, 1]))?;
        let mma = make_tiled_mma(MmaAtom::new(op), &atoms, &perm)?;

        // Shared memory: Swizzle<3,3,3> o (8, tile_k):(tile_k, 1) tiled to (tile, tile_k, stages).
        let atom = ComposedLayout::new(
            Swizzle::new(3, 3, 3)?,
            0,
            Layout::new(IntTuple::ints(&[8, bk]), IntTuple::ints(&[bk, 1]))?,
        );
        let (major_a, major_b) = form.map_or((Major::K, Major::K), |f| (f.a, f.b));
        // MN-major: 64 rows of 8 k, the rows contiguous, 16-byte chunks swizzled per k.
        let mn_atom = ComposedLayout::new(
            Swizzle::new(3, 3, 3)?,
            0,
            Layout::new(IntTuple::ints(&[64, 8]), IntTuple::ints(&[1, 64]))?,
        );
        let staged = |major: Major, rows: i64| match major {
            Major::K => atom.tile_to_shape(&IntTuple::ints(&[rows, bk, st]), None),
            Major::MN => mn_atom.tile_to_shape(&IntTuple::ints(&[rows, bk, st]), None),
        };
        let smem_a = staged(major_a, bm)?;
        let smem_b = staged(major_b, bn)?;

        // G2S: cp.async of `copy_bits` (v values along K), threads (128*v/tile_k, tile_k/v)
        // row-major: 16 bytes through L2 only (`.cg`) as the seed, narrower ones `.ca`.
        let v = i64::from(cfg.k_multiple());
        let g2s_atom = match cfg.copy_bits {
            128 => CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, val)?,
            16 => CopyAtom::new(UniversalCopy { bits: 16 }, val)?,
            bits => CopyAtom::new(CpAsyncCacheAlways { bits }, val)?,
        };
        let threads = i64::from(cfg.threads());
        let g2s_of = |major: Major, rows: i64| -> Result<TiledCopy, LayoutError> {
            let (thr, vals) = match major {
                // Threads along K, v values each: consecutive threads read one row.
                Major::K => {
                    let tk = bk / v;
                    (
                        Layout::new(
                            IntTuple::ints(&[threads / tk, tk]),
                            IntTuple::ints(&[tk, 1]),
                        )?,
                        Layout::new(IntTuple::ints(&[1, v]), IntTuple::ints(&[0, 1]))?,
                    )
                }
                // Threads along the rows, v values each: consecutive threads read one k.
                Major::MN => {
                    let tm = rows / v;
                    (
                        Layout::new(
                            IntTuple::ints(&[tm, threads / tm]),
                            IntTuple::ints(&[1, tm]),
                        )?,
                        Layout::new(IntTuple::ints(&[v, 1]), IntTuple::ints(&[1, 0]))?,
                    )
                }
            };
            make_tiled_copy(g2s_atom.clone(), &thr, &vals)
        };
        let g2s = g2s_of(major_a, bm)?;
        let g2s_b = g2s_of(major_b, bn)?;

        // S2R: ldmatrix x4 (`.trans` from an MN-major stage), the MMA's A and B fragments.
        let ldsm = |major: Major| match major {
            Major::K => CopyAtom::new(LdsmN { n: 4 }, val),
            Major::MN => CopyAtom::new(LdsmT { n: 4 }, val),
        };
        let s2r_atom = ldsm(major_a)?;
        let s2r_b_atom = ldsm(major_b)?;
        let s2r_a = make_tiled_copy_a(s2r_atom.clone(), &mma)?;
        let s2r_b = make_tiled_copy_b(s2r_b_atom.clone(), &mma)?;

        // Fragments of one k-tile of A and B and of D's tile, as CuTe's partition_fragment_* of
        // row-major tiles.
        let thr0 = mma.get_slice(0)?;
        let tile = |rows: i64, cols: i64| {
            Layout::new(IntTuple::ints(&[rows, cols]), IntTuple::ints(&[cols, 1])).map(View::from)
        };
        let frag_a = thr0.partition_fragment_a(&tile(bm, bk)?)?;
        let frag_b = thr0.partition_fragment_b(&tile(bn, bk)?)?;
        let frag_c = thr0.partition_fragment_c(&tile(bm, bn)?)?;
        let retile_a = s2r_a.get_slice(0)?.retile_d(&frag_a)?;
        let retile_b = s2r_b.get_slice(0)?.retile_d(&frag_b)?;

        // Epilogue through shared memory.
        let sw = i64::from(cfg.tile_n.max(8).trailing_zeros()) - 3;
        let smem_d = ComposedLayout::new(
            Swizzle::new(3.min(sw), 3, sw.max(3))?,
            0,
            Layout::new(IntTuple::ints(&[bm, bn]), IntTuple::ints(&[bn, 1]))?,
        );
        let r2s_atom = CopyAtom::new(StsmN { n: 4 }, val)?;
        let r2s = make_tiled_copy_c(r2s_atom.clone(), &mma)?;
        let retile_c = r2s.get_slice(0)?.retile_s(&frag_c)?;
        let s2g_atom = CopyAtom::new(UniversalCopy { bits: 128 }, val)?;
        let per_row = (bn / 8).max(1);
        let s2g = make_tiled_copy(
            s2g_atom.clone(),
            &Layout::new(
                IntTuple::ints(&[i64::from(cfg.threads()) / per_row, per_row]),
                IntTuple::ints(&[per_row, 1]),
            )?,
            &Layout::new(IntTuple::ints(&[1, 8]), IntTuple::ints(&[0, 1]))?,
        )?;
        let acc_offsets = match form {
            None => Vec::new(),
            Some(_) => crate::gemm::fused::accumulator_offsets(&mma, &frag_c, (bm, bn)).map_err(
                |reason| MultistageError::Config {
                    cfg: cfg.parts(),
                    reason,
                },
            )?,
        };
        Ok(Setup {
            cfg: *cfg,
            mma,
            g2s_atom,
            g2s,
            s2r_atom,
            s2r_a,
            s2r_b,
            smem_a,
            smem_b,
            frag_a,
            frag_b,
            frag_c,
            retile_a,
            retile_b,
            smem_d,
            r2s_atom,
            r2s,
            retile_c,
            s2g_atom,
            s2g,
            g2s_b,
            s2r_b_atom,
            acc_offsets,
            form,
        })
    }
}

/// The multistage GEMM kernel of `cfg`, named [`MultistageConfig::name`]. Parameters, in order:
/// `(d: D ptr, a: A ptr, b: B ptr, m: u32, n: u32, k: u32)`.
///
/// Errors: [`MultistageError::Config`] for a configuration the program does not support.
pub fn multistage_kernel(cfg: &MultistageConfig) -> Result<Kernel, MultistageError> {
    let mut kernel = multistage_kernel_of(&Setup::new(cfg)?)?;
    kernel.name = cfg.name();
    Ok(kernel)
}

/// The multistage kernel of `setup`, for its element type.
fn multistage_kernel_of(setup: &Setup) -> Result<Kernel, MultistageError> {
    Ok(match setup.cfg.dtype {
        GemmDtype::F16 => program::multistage::<half::f16>(setup)?,
        GemmDtype::Bf16 => program::multistage::<half::bf16>(setup)?,
    })
}

/// The registry's `multistage_f16`: the reference configuration, f16 accumulate.
pub fn default_f16() -> Result<Kernel, BuildError> {
    registry_build(MultistageConfig::reference(GemmDtype::F16, Accum::F16))
}

/// The registry's `multistage_f16_f32acc`: the reference configuration, f32 accumulate.
pub fn default_f16_f32acc() -> Result<Kernel, BuildError> {
    registry_build(MultistageConfig::reference(GemmDtype::F16, Accum::F32))
}

/// The registry's `multistage_bf16`: the reference configuration, bf16 in, f32 accumulate.
pub fn default_bf16() -> Result<Kernel, BuildError> {
    registry_build(MultistageConfig::reference(GemmDtype::Bf16, Accum::F32))
}

/// The registry's `multistage_f16_tuned`: [`MultistageConfig::tuned`], f16 in, f32 accumulate,
/// as `target` runs it ([`MultistageConfig::for_target`]).
pub fn default_f16_tuned(target: Target) -> Result<Kernel, BuildError> {
    let mut k =
        registry_build(MultistageConfig::tuned(GemmDtype::F16, Accum::F32).for_target(target))?;
    k.name = "multistage_f16_tuned".to_string();
    Ok(k)
}

fn registry_build(cfg: MultistageConfig) -> Result<Kernel, BuildError> {
    multistage_kernel(&cfg).map_err(|e| match e {
        MultistageError::Build(b) => b,
        other => BuildError::BadArgument {
            kernel: cfg.name(),
            message: other.to_string(),
        },
    })
}

#[cfg(test)]
mod tests;
