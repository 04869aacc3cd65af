//! TMA copy atoms (`SM90_TMA_LOAD`, `SM90_TMA_LOAD_MULTICAST`, `SM90_TMA_STORE`, and a load's
//! L2 prefetch, CuTe's `prefetch(tma, ...)`; `include/cute/atom/copy_traits_sm90_tma.hpp`),
//! made as CuTe's `make_tma_copy` makes them:
//! from the global tensor's description and the shared layout of one tile. The box, the
//! swizzle mode and the order of the dimensions follow from the two, and so does the host's
//! `CUtensorMap` ([`TmaCopy::descriptor`]): the device code and the descriptor come from one
//! value and cannot disagree.
//!
//! How the box is found: the shared layout `S` maps the tile's coordinates to shared offsets;
//! `right_inverse(S)` maps offsets back to coordinates, which the layout algebra carries as
//! coordinate vectors of the global tensor (CuTe's basis strides, encoded as in
//! [`crate::tensor::GTensor`]). Coalesced, that map is a list of modes in shared-memory order.
//! The box is their longest prefix that a tensor copy can write: the first mode along the
//! contiguous dimension with step 1 (at most the swizzle's span, and 256), then modes with step
//! 1 along dimensions further out in the driver's order (dimensions skipped get extent 1). Each
//! coordinate of the modes past the prefix is one more copy of the box, at its shared offset and
//! coordinate offset.
//!
//! ```
//! use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
//! use dsl_core::atom::tma::{make_tma_copy, TmaGlobal, TmaKind, TmaSwizzleMode};
//! use dsl_core::atom::ValType;
//! use dsl_core::layout::IntTuple;
//! // A 128 x 64 K-major tile of f16 from a row-major (M, K) matrix, 128-byte swizzled.
//! let smem = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)
//!     .unwrap()
//!     .tile_to_shape(&IntTuple::ints(&[128, 64]), None)
//!     .unwrap();
//! let tma = make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F16), &smem).unwrap();
//! assert_eq!(tma.box_dims, vec![64, 128]); // innermost (K) first
//! assert_eq!(tma.swizzle, TmaSwizzleMode::B128);
//! assert_eq!(tma.boxes.len(), 1);
//! assert_eq!(tma.bytes(), 128 * 64 * 2);
//! ```

use super::value::ValType;
use crate::ir::op::Bulk;
use crate::kernel::{emit, SharedPtr, TensorMap, Var};
use crate::layout::{
    coalesce, composition, right_inverse, ComposedLayout, IntTuple, Layout, LayoutError,
};

/// Which TMA instruction a copy issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaKind {
    /// `SM90_TMA_LOAD`: `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`.
    Load,
    /// `SM90_TMA_LOAD_MULTICAST`: the same, written to every block of a cluster mask.
    LoadMulticast,
    /// `SM90_TMA_STORE`: `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`.
    Store,
    /// `SM100_TMA_2SM_LOAD` (sm_100a): a load into this block's shared memory that completes on
    /// the barrier of the even block of its pair (`.cta_group::2`), which counts the bytes of
    /// both blocks' loads for the MMA the pair shares ([`TmaCopy::load_2sm`]).
    Load2Sm,
}

impl TmaKind {
    /// CuTe's name.
    pub fn cute_name(self) -> &'static str {
        match self {
            TmaKind::Load => "SM90_TMA_LOAD",
            TmaKind::LoadMulticast => "SM90_TMA_LOAD_MULTICAST",
            TmaKind::Store => "SM90_TMA_STORE",
            TmaKind::Load2Sm => "SM100_TMA_2SM_LOAD",
        }
    }
}

/// The shared-memory swizzle a tensor map applies (`CU_TENSOR_MAP_SWIZZLE_*`): 16-byte chunks
/// permuted within a span. The JIT's tensor maps take this type as it is
/// (`codegen_ptx::jit::TmaSwizzle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TmaSwizzleMode {
    /// No swizzle.
    #[default]
    None,
    /// 32-byte span (byte-level `Swizzle<1,4,3>`).
    B32,
    /// 64-byte span (`Swizzle<2,4,3>`).
    B64,
    /// 128-byte span (`Swizzle<3,4,3>`); shared memory must be 1024-byte aligned.
    B128,
}

impl TmaSwizzleMode {
    /// The span in bytes the box's inner extent may not exceed (`None`: no bound).
    pub fn span_bytes(self) -> Option<i64> {
        match self {
            TmaSwizzleMode::None => None,
            TmaSwizzleMode::B32 => Some(32),
            TmaSwizzleMode::B64 => Some(64),
            TmaSwizzleMode::B128 => Some(128),
        }
    }
}

/// Interleaved global layouts (`CU_TENSOR_MAP_INTERLEAVE_*`: NC/8HWC8 and NC/16HWC16 style). The
/// JIT's tensor maps take this type as it is (`codegen_ptx::jit::TmaInterleave`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TmaInterleave {
    /// Plain strided layout.
    #[default]
    None,
    /// 16-byte interleave.
    B16,
    /// 32-byte interleave.
    B32,
}

/// What out-of-bounds elements of a box read as (`CU_TENSOR_MAP_FLOAT_OOB_FILL_*`). The JIT's
/// tensor maps take this type as it is (`codegen_ptx::jit::TmaOobFill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TmaOobFill {
    /// Zero.
    #[default]
    Zero,
    /// A NaN that FMA treats as zero (floating-point types only).
    NanRequestZeroFma,
}

/// What the device code needs to know of the global tensor (its extents and strides come at
/// encode time): the element type, the rank, and which dimension is contiguous (stride 1).
/// Dimension `i` of the tensor is mode `i` of the shared tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TmaGlobal {
    /// Element type.
    pub elem: ValType,
    /// Dimensions (1..=5).
    pub rank: usize,
    /// The dimension with stride 1.
    pub contiguous: usize,
}

impl TmaGlobal {
    /// A row-major matrix `(rows, cols):(cols, 1)`: rank 2, dimension 1 contiguous.
    pub fn row_major(elem: ValType) -> TmaGlobal {
        TmaGlobal {
            elem,
            rank: 2,
            contiguous: 1,
        }
    }
}

/// One copy of the box: where it lands in the tile's shared memory and where it starts in the
/// tile's coordinates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TmaBox {
    /// Element offset in the tile's shared layout (before the swizzle).
    pub smem_offset: i64,
    /// Coordinate offset from the tile's origin, per tensor dimension.
    pub coord: Vec<i64>,
}

/// A tensor map's fields for one global tensor, in the driver's order (dimension 0 innermost),
/// as `cuTensorMapEncodeTiled` takes them; the address is the caller's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TmaDescriptor {
    /// Element type.
    pub elem: ValType,
    /// Extent of each dimension, innermost first.
    pub global_dims: Vec<u64>,
    /// Byte stride of dimensions 1.. (dimension 0 is contiguous).
    pub global_strides_bytes: Vec<u64>,
    /// The box, in elements per dimension.
    pub box_dims: Vec<u32>,
    /// Traversal strides within the box (all 1).
    pub element_strides: Vec<u32>,
    /// The swizzle.
    pub swizzle: TmaSwizzleMode,
    /// The granularity of the L2's fetches from DRAM for the copy's loads.
    pub l2_promotion: L2Promotion,
}

/// The granularity at which a TMA load's L2 misses fetch from DRAM (CuTe's `TMA::L2Promotion`,
/// `CU_TENSOR_MAP_L2_PROMOTION_*`). With [`L2Promotion::B256`] a box row of 128 bytes brings the
/// aligned 256 bytes it lies in: a K-major tile 64 16-bit elements deep fetches two k-tiles' rows
/// at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum L2Promotion {
    /// No promotion.
    None,
    /// 64 bytes.
    B64,
    /// 128 bytes: CuTe's `make_tma_copy` default.
    #[default]
    B128,
    /// 256 bytes.
    B256,
}

impl L2Promotion {
    /// The promotion of `bytes` (0 for none), if it is one of 0, 64, 128, 256.
    pub fn from_bytes(bytes: u32) -> Option<L2Promotion> {
        match bytes {
            0 => Some(L2Promotion::None),
            64 => Some(L2Promotion::B64),
            128 => Some(L2Promotion::B128),
            256 => Some(L2Promotion::B256),
            _ => None,
        }
    }

    /// Its granularity in bytes, 0 for none.
    pub fn bytes(self) -> u32 {
        match self {
            L2Promotion::None => 0,
            L2Promotion::B64 => 64,
            L2Promotion::B128 => 128,
            L2Promotion::B256 => 256,
        }
    }
}

impl TmaDescriptor {
    /// The same descriptor with `l2_promotion`.
    pub fn with_l2_promotion(mut self, l2_promotion: L2Promotion) -> TmaDescriptor {
        self.l2_promotion = l2_promotion;
        self
    }
}

/// An L2 eviction priority for a TMA copy's lines (CuTe's `TMA::CacheHintSm90`, the policy word
/// of `.L2::cache_hint`): [`CacheHint::EvictFirst`] for data read or written once (a streamed
/// operand, the output), so that it leaves the L2 before data that is reused;
/// [`CacheHint::EvictLast`] for data many blocks re-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheHint {
    /// `EVICT_NORMAL`.
    EvictNormal,
    /// `EVICT_FIRST`.
    EvictFirst,
    /// `EVICT_LAST`.
    EvictLast,
}

impl CacheHint {
    /// The 64-bit cache-policy word (CuTe's values).
    pub fn policy(self) -> u64 {
        match self {
            CacheHint::EvictNormal => 0x1000_0000_0000_0000,
            CacheHint::EvictFirst => 0x12F0_0000_0000_0000,
            CacheHint::EvictLast => 0x14F0_0000_0000_0000,
        }
    }
}

/// A TMA copy of one shared tile (CuTe's `Copy_Atom<SM90_TMA_*>` with its `TmaDescriptor`'s
/// box): made by [`make_tma_copy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmaCopy {
    /// The instruction.
    pub kind: TmaKind,
    /// The global tensor.
    pub global: TmaGlobal,
    /// Driver dimension `i` is tensor dimension `order[i]` (the contiguous one first).
    pub order: Vec<usize>,
    /// The box, driver order.
    pub box_dims: Vec<u32>,
    /// The swizzle of the shared layout.
    pub swizzle: TmaSwizzleMode,
    /// The copies of the box that fill the tile, in shared-memory order.
    pub boxes: Vec<TmaBox>,
    /// The shared layout of one tile the copy was made for.
    pub smem: ComposedLayout,
    /// The L2 eviction priority its instructions carry, if any ([`TmaCopy::with_cache_hint`]).
    pub cache_hint: Option<CacheHint>,
}

fn fail(what: &str, smem: &ComposedLayout, why: impl Into<String>) -> LayoutError {
    LayoutError::precondition("make_tma_copy", format!("{what}, {smem}"), why.into())
}

/// CuTe's `make_tma_copy(op, gtensor, slayout)`: the TMA copy of a shared tile `smem` (rank =
/// the tensor's; mode `i` along tensor dimension `i`; a plain or swizzled layout of one
/// pipeline stage) from or to a global tensor described by `global`.
///
/// Errors, each naming the layout: a rank that is not the tensor's (or past 5), a shared layout
/// that is not one to one onto its span, a swizzle TMA does not have (TMA swizzles 16-byte
/// chunks: the element-level `Sw<B, 4 - log2(bytes), 3>`, B in 1..=3), a layout whose
/// contiguous elements do not run along the tensor's contiguous dimension, or a box whose inner
/// extent is not a multiple of 16 bytes.
pub fn make_tma_copy(
    kind: TmaKind,
    global: &TmaGlobal,
    smem: &ComposedLayout,
) -> Result<TmaCopy, LayoutError> {
    let what = kind.cute_name();
    let r = global.rank;
    let bytes = i64::from(global.elem.bits() / 8);
    if !(1..=5).contains(&r) || smem.rank() != r || global.contiguous >= r || bytes == 0 {
        return Err(fail(
            what,
            smem,
            format!(
                "a rank-{r} tensor (contiguous dimension {}) takes a rank-{r} shared tile of \
                 whole-byte elements; TMA has 1 to 5 dimensions",
                global.contiguous
            ),
        ));
    }
    let swizzle = tma_swizzle(smem, bytes).ok_or_else(|| {
        fail(
            what,
            smem,
            format!(
                "TMA swizzles 16-byte chunks: for {bytes}-byte elements the swizzle is \
                 Sw<B,{},3> with B in 1..=3, or none",
                4 - bytes.trailing_zeros()
            ),
        )
    })?;
    let s = &smem.layout;
    let inverse = right_inverse(s)?;
    if inverse.size() != s.size() {
        return Err(fail(
            what,
            smem,
            "the shared layout is not one to one onto its span",
        ));
    }
    // Coordinates as encoded vectors, the contiguous dimension first (radix 1), every span
    // strictly above its extent so that no mode crosses two dimensions.
    let extents: Vec<i64> = (0..r)
        .map(|i| s.mode(i).map(|m| m.size()))
        .collect::<Result<_, _>>()?;
    let mut order = vec![global.contiguous];
    order.extend((0..r).filter(|&d| d != global.contiguous));
    let (mut radix, mut span) = (vec![0i64; r], vec![0i64; r]);
    let mut next = 1i64;
    for &d in &order {
        radix[d] = next;
        span[d] = 2 * (extents[d] as u64).next_power_of_two() as i64;
        next = next
            .checked_mul(span[d])
            .ok_or_else(|| fail(what, smem, "the tile is too large"))?;
    }
    let coords = Layout::new(IntTuple::ints(&extents), IntTuple::ints(&radix))?;
    let g = coalesce(&composition(&coords, &inverse)?);
    // (extent, dimension, step) of each mode in shared-memory order; a mode with a stride of
    // several dimensions cannot be a box dimension, nor a rest mode of whole boxes.
    let lanes =
        |stride: i64| -> Vec<i64> { (0..r).map(|d| (stride / radix[d]) % span[d]).collect() };
    let mut modes: Vec<(i64, Vec<i64>)> = g
        .shape()
        .flatten_ints()
        .into_iter()
        .zip(g.stride().flatten_ints())
        .filter(|&(e, _)| e > 1)
        .map(|(e, d)| (e, lanes(d)))
        .collect();
    if modes.is_empty() {
        modes.push((1, {
            let mut v = vec![0; r];
            v[global.contiguous] = 1;
            v
        }));
    }
    // Split the first mode at the inner limit (swizzle span, 256 elements).
    let inner_limit = swizzle.span_bytes().map_or(256, |b| (b / bytes).min(256));
    let is_unit =
        |v: &[i64], d: usize| v[d] == 1 && v.iter().enumerate().all(|(j, &x)| j == d || x == 0);
    if !is_unit(&modes[0].1, global.contiguous) {
        return Err(fail(
            what,
            smem,
            "consecutive shared elements do not run along the tensor's contiguous dimension",
        ));
    }
    let mut box_dims = vec![1i64; r];
    let mut last_driver = 0usize;
    let mut split: Vec<(i64, Vec<i64>)> = Vec::new();
    for (i, (e, v)) in modes.iter().enumerate() {
        let dim = (0..r).find(|&d| is_unit(v, d));
        let driver = dim.and_then(|d| order.iter().position(|&x| x == d));
        // The first mode is the inner box dimension; each next one must start a dimension
        // further out in the driver's order.
        let (d, p) = match (dim, driver) {
            (Some(d), Some(p)) if (i == 0 && p == 0) || (i > 0 && p > last_driver) => (d, p),
            _ => {
                split = modes[i..].to_vec();
                break;
            }
        };
        let limit = if i == 0 { inner_limit } else { 256 };
        if *e > limit {
            if e % limit != 0 {
                return Err(fail(
                    what,
                    smem,
                    format!("a box dimension of {e} elements does not split into boxes of {limit}"),
                ));
            }
            box_dims[d] = limit;
            split.push((e / limit, v.iter().map(|x| x * limit).collect()));
            split.extend(modes[i + 1..].iter().cloned());
            break;
        }
        box_dims[d] = *e;
        last_driver = p;
    }
    let inner_bytes = box_dims[global.contiguous] * bytes;
    if inner_bytes % 16 != 0 {
        return Err(fail(
            what,
            smem,
            format!("the box's inner extent is {inner_bytes} bytes, not a multiple of 16"),
        ));
    }
    let box_size: i64 = box_dims.iter().product();
    // Every coordinate of the rest modes is one box, `box_size` shared elements further per
    // step of the (column-major) rest index.
    let rest_count: i64 = split.iter().map(|(e, _)| *e).product();
    let mut boxes = Vec::with_capacity(rest_count as usize);
    for j in 0..rest_count {
        let (mut rem, mut coord) = (j, vec![0i64; r]);
        for (e, v) in &split {
            let c = rem % e;
            rem /= e;
            for d in 0..r {
                coord[d] += c * v[d];
            }
        }
        boxes.push(TmaBox {
            smem_offset: j * box_size,
            coord,
        });
    }
    Ok(TmaCopy {
        kind,
        global: *global,
        box_dims: order.iter().map(|&d| box_dims[d] as u32).collect(),
        order,
        swizzle,
        boxes,
        smem: smem.clone(),
        cache_hint: None,
    })
}

/// The TMA swizzle of a shared layout of `bytes`-byte elements, if it has one.
fn tma_swizzle(smem: &ComposedLayout, bytes: i64) -> Option<TmaSwizzleMode> {
    let sw = smem.swizzle;
    if sw.is_identity() {
        return Some(TmaSwizzleMode::None);
    }
    if smem.offset != 0
        || i64::from(sw.base()) != 4 - i64::from(bytes.trailing_zeros())
        || sw.shift() != 3
    {
        return None;
    }
    match sw.bits() {
        1 => Some(TmaSwizzleMode::B32),
        2 => Some(TmaSwizzleMode::B64),
        3 => Some(TmaSwizzleMode::B128),
        _ => None,
    }
}

impl TmaCopy {
    /// The same copy, its instructions carrying `hint` (CuTe passes it to `.with(...)`).
    ///
    /// ```
    /// use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
    /// use dsl_core::atom::tma::{make_tma_copy, CacheHint, TmaGlobal, TmaKind};
    /// use dsl_core::atom::ValType;
    /// use dsl_core::layout::IntTuple;
    /// let smem = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)
    ///     .unwrap()
    ///     .tile_to_shape(&IntTuple::ints(&[128, 64]), None)
    ///     .unwrap();
    /// // A streamed operand: read once, so let the L2 drop it first.
    /// let tma = make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::BF16), &smem)
    ///     .unwrap()
    ///     .with_cache_hint(Some(CacheHint::EvictFirst));
    /// assert_eq!(tma.cache_hint.map(CacheHint::policy), Some(0x12F0_0000_0000_0000));
    /// ```
    pub fn with_cache_hint(mut self, hint: Option<CacheHint>) -> TmaCopy {
        self.cache_hint = hint;
        self
    }

    /// Bytes one tile moves (what a load's barrier expects).
    pub fn bytes(&self) -> u32 {
        let box_elems: u32 = self.box_dims.iter().product();
        box_elems * (self.global.elem.bits() / 8) * self.boxes.len() as u32
    }

    /// The tensor map's fields for a tensor of extents `dims` and element strides `strides`
    /// (tensor order; the contiguous dimension's stride must be 1).
    pub fn descriptor(&self, dims: &[u64], strides: &[u64]) -> Result<TmaDescriptor, LayoutError> {
        let r = self.global.rank;
        if dims.len() != r || strides.len() != r || strides[self.global.contiguous] != 1 {
            return Err(fail(
                self.kind.cute_name(),
                &self.smem,
                format!(
                    "the tensor has extents {dims:?} and strides {strides:?}; the copy was made \
                     for rank {r} with dimension {} contiguous",
                    self.global.contiguous
                ),
            ));
        }
        let bytes = u64::from(self.global.elem.bits() / 8);
        if let Some(d) = self.order[1..]
            .iter()
            .find(|&&d| !(strides[d] * bytes).is_multiple_of(16))
        {
            return Err(fail(
                self.kind.cute_name(),
                &self.smem,
                format!(
                    "dimension {d} of the tensor steps {} bytes; TMA needs every stride but the \
                     contiguous one to be a multiple of 16 bytes (rows of {} elements)",
                    strides[*d] * bytes,
                    16 / bytes
                ),
            ));
        }
        Ok(TmaDescriptor {
            elem: self.global.elem,
            global_dims: self.order.iter().map(|&d| dims[d]).collect(),
            global_strides_bytes: self.order[1..]
                .iter()
                .map(|&d| strides[d] * bytes)
                .collect(),
            box_dims: self.box_dims.clone(),
            element_strides: vec![1; r],
            swizzle: self.swizzle,
            l2_promotion: L2Promotion::default(),
        })
    }

    /// The shared-memory alignment the tile needs: the swizzle pattern's (8 rows of its span),
    /// or 128 bytes.
    pub fn smem_alignment(&self) -> u32 {
        match self.swizzle.span_bytes() {
            Some(b) => (8 * b) as u32,
            None => 128,
        }
    }

    /// The coordinates of box `b` for a tile at `origin` (tensor order), in the driver's order.
    fn coords(&self, origin: &[Var<u32>], b: &TmaBox) -> Vec<crate::ir::Operand> {
        self.order
            .iter()
            .map(|&d| {
                let o = origin.get(d).copied().unwrap_or(Var::konst(0));
                let c = if b.coord[d] == 0 {
                    o
                } else {
                    o + (b.coord[d] as u32)
                };
                c.cast::<i32>().operand()
            })
            .collect()
    }

    /// The shared address of box `b` in a tile whose (unswizzled) start is `smem`.
    fn box_smem<T: crate::kernel::DeviceType>(
        &self,
        smem: SharedPtr<T>,
        b: &TmaBox,
    ) -> crate::ir::Address {
        (smem + b.smem_offset).address()
    }

    /// Issues the loads of the tile at `origin` (tensor coordinates of its first element) into
    /// shared memory at `smem` (the tile's start, aligned to [`TmaCopy::smem_alignment`]),
    /// completing on `bar`; with `multicast`, into the same offset of every block of the
    /// cluster mask. One thread issues it; the barrier must expect [`TmaCopy::bytes`].
    pub fn load<T: crate::kernel::DeviceType>(
        &self,
        map: &TensorMap,
        origin: &[Var<u32>],
        smem: SharedPtr<T>,
        bar: SharedPtr<u64>,
        multicast: Option<Var<u32>>,
    ) {
        for b in &self.boxes {
            emit(Bulk::TensorLoad {
                dst: self.box_smem(smem, b),
                tensor_map: map.to_ref(),
                coords: self.coords(origin, b),
                mbar: bar.address(),
                multicast: multicast.map(|m| m.operand()),
                cta_group: None,
                cache_policy: self.cache_hint.map(CacheHint::policy),
            });
        }
    }

    /// `SM100_TMA_2SM_LOAD`: the loads of the tile at `origin` into this block's shared memory
    /// at `smem`, completing on the barrier at `shared::cluster` address `pair_bar`, the even
    /// block's of this block's pair (a remote view of the barrier array:
    /// [`crate::pipeline::MbarrierArray::remote_view`]). Both blocks of the pair issue their
    /// loads so, and the even block's one arrival expects the bytes of both (twice
    /// [`TmaCopy::bytes`]). A copy not made as [`TmaKind::Load2Sm`] is recorded as a build error.
    pub fn load_2sm<T: crate::kernel::DeviceType>(
        &self,
        map: &TensorMap,
        origin: &[Var<u32>],
        smem: SharedPtr<T>,
        pair_bar: Var<u32>,
    ) {
        if self.kind != TmaKind::Load2Sm {
            let kind = self.kind.cute_name();
            crate::kernel::context::record_error(|kernel| crate::kernel::BuildError::BadArgument {
                kernel,
                message: format!("load_2sm is SM100_TMA_2SM_LOAD's; this copy was made as {kind}"),
            });
        }
        let bar = crate::ir::Address::reg(pair_bar.to_reg(), 0);
        for b in &self.boxes {
            emit(Bulk::TensorLoad {
                dst: self.box_smem(smem, b),
                tensor_map: map.to_ref(),
                coords: self.coords(origin, b),
                mbar: bar.clone(),
                multicast: None,
                cta_group: Some(crate::ir::op::CtaGroup::Two),
                cache_policy: self.cache_hint.map(CacheHint::policy),
            });
        }
    }

    /// Issues the stores of the tile in shared memory at `smem` to the tensor at `origin`. One
    /// thread issues it, after a `fence.proxy.async` of the threads that wrote the tile; close
    /// the group with `bulk_commit_group` and wait for it before reusing the tile.
    pub fn store<T: crate::kernel::DeviceType>(
        &self,
        map: &TensorMap,
        origin: &[Var<u32>],
        smem: SharedPtr<T>,
    ) {
        for b in &self.boxes {
            self.store_box(map, origin, smem, b);
        }
    }

    /// The store of box `b` of the tile at `origin` ([`TmaCopy::store`]'s one instruction).
    fn store_box<T: crate::kernel::DeviceType>(
        &self,
        map: &TensorMap,
        origin: &[Var<u32>],
        smem: SharedPtr<T>,
        b: &TmaBox,
    ) {
        emit(Bulk::TensorStore {
            tensor_map: map.to_ref(),
            coords: self.coords(origin, b),
            src: self.box_smem(smem, b),
            cache_policy: self.cache_hint.map(CacheHint::policy),
        });
    }

    /// The same copy with each box cut along tensor dimension `dim`, the box's outermost, into
    /// boxes of `extent` (each the box's next `extent` slices in shared memory, which TMA fills
    /// in the box's order): more instructions for the same tile, so that a store can stop at a
    /// finer boundary ([`TmaCopy::store_within`]). Errors where `dim` is not the box's outermost
    /// dimension, `extent` does not divide it, or a cut box would not start on the swizzle's
    /// alignment.
    ///
    /// ```
    /// use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
    /// use dsl_core::atom::tma::{make_tma_copy, TmaGlobal, TmaKind};
    /// use dsl_core::atom::ValType;
    /// use dsl_core::layout::IntTuple;
    /// // A 64 x 128 staging tile: two boxes of 64 columns, each cut into four of 16 rows.
    /// let smem = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)
    ///     .unwrap()
    ///     .tile_to_shape(&IntTuple::ints(&[64, 128]), None)
    ///     .unwrap();
    /// let tma = make_tma_copy(TmaKind::Store, &TmaGlobal::row_major(ValType::F16), &smem)
    ///     .unwrap()
    ///     .split_boxes(0, 16)
    ///     .unwrap();
    /// assert_eq!(tma.box_dims, vec![64, 16]);
    /// let at: Vec<(i64, i64, i64)> =
    ///     tma.boxes.iter().map(|b| (b.coord[0], b.coord[1], b.smem_offset)).collect();
    /// assert_eq!(&at[..5], &[(0, 0, 0), (16, 0, 1024), (32, 0, 2048), (48, 0, 3072), (0, 64, 4096)]);
    /// assert_eq!(tma.bytes(), 64 * 128 * 2);
    /// // Columns are the box's inner dimension: a cut there is not one TMA box.
    /// assert!(make_tma_copy(TmaKind::Store, &TmaGlobal::row_major(ValType::F16), &smem)
    ///     .unwrap()
    ///     .split_boxes(1, 32)
    ///     .is_err());
    /// ```
    pub fn split_boxes(mut self, dim: usize, extent: u32) -> Result<TmaCopy, LayoutError> {
        let what = self.kind.cute_name();
        let p = self.order.iter().position(|&d| d == dim).ok_or_else(|| {
            fail(
                what,
                &self.smem,
                format!("the tensor has no dimension {dim}"),
            )
        })?;
        let outermost = self.box_dims.iter().rposition(|&e| e > 1).unwrap_or(0);
        let whole = self.box_dims[p];
        if p != outermost || extent == 0 || !whole.is_multiple_of(extent) {
            return Err(fail(
                what,
                &self.smem,
                format!(
                    "boxes of {:?} (driver order) cut into {extent} along tensor dimension {dim}: \
                     only the box's outermost dimension cuts into boxes, by a divisor of it",
                    self.box_dims
                ),
            ));
        }
        let inner: u32 = self.box_dims[..p].iter().product();
        let bytes = inner * extent * (self.global.elem.bits() / 8);
        if !bytes.is_multiple_of(self.smem_alignment()) {
            return Err(fail(
                what,
                &self.smem,
                format!(
                    "a box cut to {extent} along dimension {dim} is {bytes} bytes, not a multiple \
                     of the swizzle's {}-byte alignment",
                    self.smem_alignment()
                ),
            ));
        }
        let step = i64::from(inner * extent);
        self.boxes = self
            .boxes
            .iter()
            .flat_map(|b| {
                (0..i64::from(whole / extent)).map(move |i| {
                    let mut coord = b.coord.clone();
                    coord[dim] += i * i64::from(extent);
                    TmaBox {
                        smem_offset: b.smem_offset + i * step,
                        coord,
                    }
                })
            })
            .collect();
        self.box_dims[p] = extent;
        Ok(self)
    }

    /// [`TmaCopy::store`] of only the boxes that start less than `extent` past `origin` along
    /// tensor dimension `dim`: a tile whose valid part ends inside the tensor (a piece of rows
    /// that another block's tile continues), which the tensor map's own bounds would not clip.
    /// The boxes starting at the origin's coordinate are stored unconditionally; the boxes at
    /// each further offset are one branch on it. The clip is as fine as the box
    /// ([`TmaCopy::split_boxes`]): a tile cut into boxes of 16 rows stores a 48-row piece whole
    /// and not a row more.
    pub fn store_within<T: crate::kernel::DeviceType>(
        &self,
        map: &TensorMap,
        origin: &[Var<u32>],
        smem: SharedPtr<T>,
        (dim, extent): (usize, Var<u32>),
    ) {
        use crate::kernel::Cond;
        let mut by_offset = std::collections::BTreeMap::<i64, Vec<&TmaBox>>::new();
        for b in &self.boxes {
            let at = b.coord.get(dim).copied().unwrap_or(0);
            by_offset.entry(at).or_default().push(b);
        }
        for (at, run) in by_offset {
            let store = || {
                for b in &run {
                    self.store_box(map, origin, smem, b);
                }
            };
            match at {
                0 => store(),
                _ => extent.gt(at as u32).if_(|_| store()),
            }
        }
    }

    /// Brings the tile at `origin` (as [`TmaCopy::load`] takes it) from global memory into L2,
    /// one `cp.async.bulk.prefetch.tensor` per box, so that its load later reads L2 instead of
    /// DRAM. One thread issues it; nothing completes on a barrier and nothing waits for it (a
    /// hint: the lines may be evicted before the load). It is not free: on the H200, a
    /// GEMM producer that prefetched each k-tile ahead of its load ran 2-30% slower (its loads
    /// queued behind the prefetches), so measure before using it.
    pub fn prefetch(&self, map: &TensorMap, origin: &[Var<u32>]) {
        for b in &self.boxes {
            emit(Bulk::TensorPrefetch {
                tensor_map: map.to_ref(),
                coords: self.coords(origin, b),
                cache_policy: self.cache_hint.map(CacheHint::policy),
            });
        }
    }
}

/// Prefetches the tensor map `map` (one thread, early: the first copy then does not wait for
/// the descriptor).
pub fn prefetch(map: &TensorMap) {
    crate::kernel::prefetch_tensor_map(map);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};

    fn k_major(t: GmmaLayoutType, rows: i64, cols: i64) -> ComposedLayout {
        gmma_atom(GmmaMajor::K, t, 2)
            .unwrap()
            .tile_to_shape(&IntTuple::ints(&[rows, cols]), None)
            .unwrap()
    }

    /// The policy words are CuTe's `TMA::CacheHintSm90` (`include/cute/arch/copy_sm90_desc.hpp`),
    /// and a hinted copy's loads and stores carry its word.
    #[test]
    fn cache_hints_are_cutes_policy_words_on_every_box() {
        assert_eq!(CacheHint::EvictNormal.policy(), 0x1000000000000000);
        assert_eq!(CacheHint::EvictFirst.policy(), 0x12F0000000000000);
        assert_eq!(CacheHint::EvictLast.policy(), 0x14F0000000000000);
        let global = TmaGlobal::row_major(ValType::F16);
        // Two boxes (a 64-byte swizzle over 64 columns): each instruction carries the word.
        let smem = k_major(GmmaLayoutType::B64, 128, 64);
        for (kind, hint) in [
            (TmaKind::Load, CacheHint::EvictFirst),
            (TmaKind::Store, CacheHint::EvictLast),
        ] {
            let tma = make_tma_copy(kind, &global, &smem)
                .unwrap()
                .with_cache_hint(Some(hint));
            let k = crate::kernel::build_kernel("hinted", |k| {
                let map = k.param_tensor_map("map");
                let tile = k.dynamic_shared::<u32>(128 * 32);
                let bar = k.shared_array::<u64>("bar", 1, 8);
                let origin = [Var::konst(0u32), Var::konst(64u32)];
                if kind == TmaKind::Load {
                    tma.load(&map, &origin, tile, bar, None);
                } else {
                    tma.store(&map, &origin, tile);
                }
            })
            .unwrap();
            let mut policies = Vec::new();
            crate::ir::for_each_instr(&k.body, &mut |i: &crate::ir::Instr| {
                if let crate::ir::Op::Bulk(
                    Bulk::TensorLoad { cache_policy, .. } | Bulk::TensorStore { cache_policy, .. },
                ) = &i.op
                {
                    policies.push(*cache_policy);
                }
            });
            assert_eq!(policies, vec![Some(hint.policy()); 2], "{kind:?}");
        }
    }

    /// A prefetch names the boxes its load names (the same coordinates, one per box, the same
    /// policy word) and nothing else: no shared address, no barrier.
    #[test]
    fn a_prefetch_names_the_boxes_of_its_load() {
        let global = TmaGlobal::row_major(ValType::F16);
        let smem = k_major(GmmaLayoutType::B64, 128, 64);
        let tma = make_tma_copy(TmaKind::Load, &global, &smem)
            .unwrap()
            .with_cache_hint(Some(CacheHint::EvictLast));
        let k = crate::kernel::build_kernel("prefetched", |k| {
            let map = k.param_tensor_map("map");
            let tile = k.dynamic_shared::<u32>(128 * 32);
            let bar = k.shared_array::<u64>("bar", 1, 8);
            let origin = [Var::konst(128u32), Var::konst(64u32)];
            tma.load(&map, &origin, tile, bar, None);
            tma.prefetch(&map, &origin);
        })
        .unwrap();
        let (mut loads, mut prefetches) = (Vec::new(), Vec::new());
        crate::ir::for_each_instr(&k.body, &mut |i: &crate::ir::Instr| match &i.op {
            crate::ir::Op::Bulk(Bulk::TensorLoad {
                coords,
                cache_policy,
                ..
            }) => loads.push((coords.clone(), *cache_policy)),
            crate::ir::Op::Bulk(Bulk::TensorPrefetch {
                coords,
                cache_policy,
                ..
            }) => prefetches.push((coords.clone(), *cache_policy)),
            _ => {}
        });
        assert_eq!(
            loads.len(),
            2,
            "a 64-byte swizzle over 64 columns is two boxes"
        );
        assert_eq!(prefetches, loads);
    }

    /// K-major 16-bit tiles (128 x 64) from a row-major (M, K) matrix under each swizzle: the
    /// box is one swizzle span of K by all 128 rows, as many boxes as spans in 64 columns, each
    /// `span * 128` elements further in shared memory and `span` columns further in K.
    ///
    /// The values are CuTe's: `make_tma_copy(SM90_TMA_LOAD{}, A, tile_to_shape(
    /// GMMA::Layout_K_SW{128,64,32}_Atom<half_t>{}, Shape<_128,_64>{}))` for A `(1000, 4096):
    /// (4096, _1)`, compiled on the host (CUTLASS 7107b0553, nvcc 13.5) with
    /// `cuTensorMapEncodeTiled` replaced by a function printing its arguments, passed
    /// globalDim (4096, 1000), globalStrides (8192), boxDim (64|32|16, 128), elementStrides
    /// (1, 1), swizzle 3|2|1 (128B|64B|32B), and its partition of one tile had 1|2|4 boxes.
    #[test]
    fn k_major_boxes_follow_the_swizzle_span() {
        for (t, mode, cols_per_box) in [
            (GmmaLayoutType::B128, TmaSwizzleMode::B128, 64),
            (GmmaLayoutType::B64, TmaSwizzleMode::B64, 32),
            (GmmaLayoutType::B32, TmaSwizzleMode::B32, 16),
        ] {
            let smem = k_major(t, 128, 64);
            let tma =
                make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F16), &smem).unwrap();
            assert_eq!(tma.box_dims, vec![cols_per_box, 128], "{t:?}");
            assert_eq!(tma.swizzle, mode);
            assert_eq!(tma.order, vec![1, 0]);
            let n = 64 / cols_per_box as i64;
            assert_eq!(tma.boxes.len() as i64, n);
            for (j, b) in tma.boxes.iter().enumerate() {
                let j = j as i64;
                assert_eq!(b.smem_offset, j * cols_per_box as i64 * 128);
                assert_eq!(b.coord, vec![0, j * cols_per_box as i64]);
            }
            assert_eq!(tma.bytes(), 128 * 64 * 2);
            let d = tma.descriptor(&[1000, 4096], &[4096, 1]).unwrap();
            assert_eq!(d.global_dims, vec![4096, 1000]);
            assert_eq!(d.global_strides_bytes, vec![8192]);
            assert_eq!(d.element_strides, vec![1, 1]);
            assert_eq!(d.box_dims, tma.box_dims);
        }
    }

    #[test]
    fn tall_tiles_split_at_256_rows_and_plain_tiles_take_whole_rows() {
        let smem = k_major(GmmaLayoutType::B128, 512, 64);
        let tma =
            make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::BF16), &smem).unwrap();
        assert_eq!(tma.box_dims, vec![64, 256]);
        assert_eq!(tma.boxes.len(), 2);
        assert_eq!(tma.boxes[1].coord, vec![256, 0]);
        let plain = ComposedLayout::new(
            crate::layout::Swizzle::identity(),
            0,
            "(32,64):(64,1)".parse().unwrap(),
        );
        let tma =
            make_tma_copy(TmaKind::Store, &TmaGlobal::row_major(ValType::F32), &plain).unwrap();
        assert_eq!(tma.box_dims, vec![64, 32]);
        assert_eq!(tma.swizzle, TmaSwizzleMode::None);
    }

    #[test]
    fn mismatches_are_refused_with_the_layout() {
        // Column-major smem of a row-major tensor: consecutive elements run along M.
        let col = ComposedLayout::new(
            crate::layout::Swizzle::identity(),
            0,
            "(64,64):(1,64)".parse().unwrap(),
        );
        let e =
            make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F16), &col).unwrap_err();
        assert!(e.to_string().contains("contiguous dimension"), "{e}");
        // The byte-level Sw<3,4,3> written on f16 element offsets swizzles 32-byte chunks.
        let wrong = ComposedLayout::new(
            crate::layout::Swizzle::new(3, 4, 3).unwrap(),
            0,
            "(8,64):(64,1)".parse().unwrap(),
        );
        let e =
            make_tma_copy(TmaKind::Load, &TmaGlobal::row_major(ValType::F16), &wrong).unwrap_err();
        assert!(e.to_string().contains("TMA swizzles 16-byte chunks"), "{e}");
        let tma = make_tma_copy(
            TmaKind::Load,
            &TmaGlobal::row_major(ValType::F16),
            &k_major(GmmaLayoutType::B128, 64, 64),
        )
        .unwrap();
        assert!(tma.descriptor(&[64, 64], &[1, 64]).is_err());
        let e = tma
            .descriptor(&[64, 833], &[833, 1])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1666 bytes") && e.contains("multiple of 16"),
            "{e}"
        );
    }
}
