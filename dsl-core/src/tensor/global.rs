//! Global-memory tensors whose shape and strides may be device values (CuTe's
//! `make_tensor(make_gmem_ptr(p), make_layout(shape, stride))` with dynamic leaves), and
//! coordinate tensors (CuTe's `make_identity_tensor`), tiled with `local_tile` and partitioned
//! by tiled copies and MMAs like any tensor.
//!
//! The layout algebra runs on host integers, so a tensor keeps its dynamic part apart from its
//! static part, as CuTe's arithmetic-tuple (`E<i>`) strides do:
//! - per dimension `d` of the matrix: its extent, the tile's origin and how many elements remain
//!   from it (for bounds), device values; a global tensor also has each dimension's element
//!   stride (`ld`, or the constant 1) and the tile's origin pointer;
//! - the *view*: a static layout from the tile's coordinates to *coordinate vectors* of the
//!   matrix. A coordinate vector is encoded as one integer, `sum_d c_d * R_d`, with the radix
//!   `R_d` chosen from the tile's static extents (the contiguous dimension first, `R = 1`; each
//!   span strictly above its extent), so that the algebra's arithmetic on strides (scaling,
//!   adding, merging modes whose ends meet) is exactly its arithmetic on the vectors: no lane of
//!   a stride or offset inside the tile reaches the next radix, and no mode spans two
//!   dimensions;
//! - the thread's (and slice's) device coordinate offsets per dimension, from the index
//!   layouts of partitions, decoded lane by lane;
//! - trailing *dynamic modes*: modes whose extent is only known on the device (the k-tiles of
//!   `local_tile(A, (BM, BK), (m, _))`), sliced with a device index.
//!
//! An element at static view offset `o` (decoded to `c_d`) has coordinates
//! `origin_d + thread_d + c_d`; in a global tensor it is at
//! `origin_ptr + sum_d (thread_d + c_d) * stride_d`, in bounds when `thread_d + c_d <
//! remaining_d` for every dimension.

use std::collections::BTreeMap;

use super::dyn_eval::{add, eval_dyn, scale};
use super::shared::DynItems;
use super::Idx;
use crate::ir::Address;
use crate::kernel::{select, DeviceType, GlobalPtr, Var};
use crate::layout::{IntTuple, Layout, LayoutError};
use crate::tiled::View;

/// A mode whose extent is only known on the device: `extent` steps of `step` along dimension
/// `dim` (the tiles along K of a K-major operand).
#[derive(Clone, Debug)]
struct DynMode {
    dim: usize,
    step: i64,
    extent: Var<u32>,
}

/// `a * b`, a shift or nothing where `b` is a host constant.
fn times(a: Var<u32>, b: Var<u32>) -> Var<u32> {
    match b.as_const() {
        Some(c) => scale(a, c),
        None => a * b,
    }
}

fn bad(l: &Layout, msg: impl Into<String>) -> LayoutError {
    LayoutError::precondition("tensor", l.to_string(), msg.into())
}

/// Per dimension, the device offset of a tile's origin (`None` where the tiles stay a mode).
type TileOrigins = Vec<Option<Var<u32>>>;

/// A row of a global tile: its address and whether it exists.
type Row = (Var<u64>, Option<Var<bool>>);

/// The coordinate machinery every global and coordinate tensor has (see the module docs).
#[derive(Clone, Debug)]
struct Coords {
    origin: Vec<Var<u32>>,
    remaining: Vec<Var<i32>>,
    bounded: bool,
    /// Which dimension is contiguous in memory (encoded with radix 1), if any.
    contiguous: Option<usize>,
    radix: Vec<i64>,
    span: Vec<i64>,
    base: i64,
    layout: Layout,
    thread: Vec<Var<u32>>,
    dyn_modes: Vec<DynMode>,
}

impl Coords {
    fn new(shape: &[Var<u32>], contiguous: Option<usize>) -> Coords {
        let rank = shape.len();
        Coords {
            origin: vec![Var::konst(0); rank],
            remaining: shape.iter().map(|e| e.cast::<i32>()).collect(),
            bounded: true,
            contiguous,
            radix: vec![1; rank],
            span: vec![1; rank],
            base: 0,
            layout: Layout::from_modes(vec![]),
            thread: vec![Var::konst(0); rank],
            dyn_modes: Vec::new(),
        }
    }

    fn rank(&self) -> usize {
        self.origin.len()
    }

    /// `local_tile`: the tiled coordinates and, per dimension, the device offset of the tile's
    /// origin (`None` for dimensions whose tiles are kept as a dynamic mode).
    fn local_tile(
        &self,
        tiler: &[i64],
        coord: &[Idx],
    ) -> Result<(Coords, TileOrigins), LayoutError> {
        let r = self.rank();
        if tiler.len() != r || coord.len() != r || self.layout.rank() != 0 {
            return Err(bad(
                &self.layout,
                format!(
                    "local_tile of a rank-{r} tensor takes {r} tile extents and {r} coordinates \
                     ({tiler:?}, {} given), once",
                    coord.len()
                ),
            ));
        }
        if let Some(e) = tiler.iter().find(|&&e| e < 1 || e > i64::from(u32::MAX)) {
            return Err(bad(
                &self.layout,
                format!("tile extent {e} is not in 1..2^32"),
            ));
        }
        let mut order: Vec<usize> = self.contiguous.into_iter().collect();
        order.extend((0..r).filter(|&d| Some(d) != self.contiguous));
        let (mut radix, mut span) = (vec![0i64; r], vec![0i64; r]);
        let mut next = 1i64;
        for &d in &order {
            radix[d] = next;
            // Strictly above the extent: no mode of the tile ends where the next dimension's
            // begins, so the algebra never merges two dimensions into one mode.
            span[d] = 2 * (tiler[d] as u64).next_power_of_two() as i64;
            next = next.checked_mul(span[d]).ok_or_else(|| {
                bad(
                    &self.layout,
                    format!("the tile {tiler:?} is too large to encode"),
                )
            })?;
        }
        let mut t = Coords {
            layout: Layout::new(IntTuple::ints(tiler), IntTuple::ints(&radix))?,
            radix,
            span,
            ..self.clone()
        };
        let mut origins = Vec::with_capacity(r);
        for (d, c) in coord.iter().enumerate() {
            let origin = match *c {
                Idx::All => {
                    let tiles = (self.remaining[d].cast::<u32>() + (tiler[d] as u32 - 1))
                        / (tiler[d] as u32);
                    t.dyn_modes.push(DynMode {
                        dim: d,
                        step: tiler[d],
                        extent: tiles,
                    });
                    origins.push(None);
                    continue;
                }
                Idx::At(i) => Var::konst((i * tiler[d]) as u32),
                Idx::Dyn(i) => scale(i, tiler[d] as u32),
            };
            t.remaining[d] = self.remaining[d] - origin.cast::<i32>();
            t.origin[d] = add(self.origin[d], origin);
            origins.push(Some(origin));
        }
        Ok((t, origins))
    }

    /// The coordinate vector an encoded offset stands for.
    fn decode(&self, o: i64) -> Vec<i64> {
        self.radix
            .iter()
            .zip(&self.span)
            .map(|(&r, &s)| (o / r) % s)
            .collect()
    }

    /// `l`'s lane `d`: same shape, each stride's coordinate along dimension `d`. Errors when a
    /// stride is negative: the view left the tile.
    fn lane(&self, l: &Layout, d: usize) -> Result<Layout, LayoutError> {
        let mut negative = None;
        let stride = l.stride().map_ints(&mut |s| {
            if s < 0 {
                negative = Some(s);
                return 0;
            }
            (s / self.radix[d]) % self.span[d]
        });
        if let Some(s) = negative {
            return Err(bad(
                l,
                format!("stride {s} is not a coordinate of the tile"),
            ));
        }
        Layout::new(l.shape().clone(), stride)
    }

    fn view(&self) -> View {
        View {
            base: self.base,
            ..View::from(self.layout.clone())
        }
    }

    fn with_view(&self, v: View, xs: &DynItems) -> Result<Coords, LayoutError> {
        let mut t = Coords {
            base: v.base,
            layout: v.layout.clone(),
            ..self.clone()
        };
        for (l, &(x, bound)) in v.indices.iter().zip(xs) {
            for d in 0..self.rank() {
                let lane = t.lane(l, d)?;
                t.thread[d] = add(t.thread[d], eval_dyn(&lane, x, bound)?);
            }
        }
        Ok(t)
    }

    fn partition(
        &self,
        tiled: &crate::tiled::TiledCopy,
        side: crate::tiled::Side,
        thread: Var<u32>,
    ) -> Result<Coords, LayoutError> {
        let v = tiled.partition(side, &self.view())?;
        self.with_view(v, &vec![(thread, tiled.size())])
    }

    fn partition_mma(
        &self,
        mma: &crate::tiled::TiledMma,
        op: crate::tiled::Operand,
        thread: Var<u32>,
    ) -> Result<Coords, LayoutError> {
        let v = mma.partition(op, &self.view())?;
        self.with_view(v, &vec![(thread, mma.size())])
    }

    fn slice(&self, coord: &[Idx]) -> Result<Coords, LayoutError> {
        let nstatic = self.layout.rank();
        let (static_part, dyn_part) = coord.split_at(coord.len().min(nstatic));
        if dyn_part.len() > self.dyn_modes.len() {
            return Err(bad(
                &self.layout,
                format!(
                    "{} coordinates for {nstatic} static and {} dynamic modes",
                    coord.len(),
                    self.dyn_modes.len()
                ),
            ));
        }
        let (crd, xs) = super::shared::host_coord(&self.layout, static_part)?;
        let v = self.view().slice(&crd)?;
        let mut t = self.with_view(v, &xs)?;
        let mut kept = Vec::new();
        for (i, m) in self.dyn_modes.iter().enumerate() {
            let x = match dyn_part.get(i).copied().unwrap_or(Idx::All) {
                Idx::All => {
                    kept.push(m.clone());
                    continue;
                }
                Idx::At(c) => Var::konst((c * m.step) as u32),
                Idx::Dyn(x) => scale(x, m.step as u32),
            };
            t.thread[m.dim] = add(t.thread[m.dim], x);
        }
        t.dyn_modes = kept;
        Ok(t)
    }

    /// Whether the coordinates `c` exist in every dimension but the contiguous one (`None`
    /// when unbounded or when there is no such dimension).
    fn row_in_bounds(&self, c: &[i64]) -> Option<Var<bool>> {
        if !self.bounded {
            return None;
        }
        (0..self.rank())
            .filter(|&d| Some(d) != self.contiguous)
            .map(|d| self.coordinate_below(d, c[d]))
            .reduce(|a, b| a & b)
    }

    /// Whether `thread_d + c < remaining_d`.
    fn coordinate_below(&self, d: usize, c: i64) -> Var<bool> {
        add(self.thread[d], Var::konst(c as u32))
            .cast::<i32>()
            .lt(self.remaining[d])
    }

    /// `row_ok` and, for the contiguous dimension, whether the last of `width` elements from
    /// `c` exists.
    fn in_bounds(&self, c: &[i64], width: i64, row_ok: Option<Var<bool>>) -> Option<Var<bool>> {
        match (self.bounded, self.contiguous) {
            (true, Some(k)) => {
                let col_ok = self.coordinate_below(k, c[k] + width - 1);
                Some(match row_ok {
                    Some(r) => r & col_ok,
                    None => col_ok,
                })
            }
            _ => row_ok,
        }
    }
}

macro_rules! coordinate_views {
    () => {
        /// `thr_mma.partition_{A,B,C}(tensor)` for operand `op`.
        fn partition_operand(
            &self,
            mma: &crate::tiled::TiledMma,
            op: crate::tiled::Operand,
            thread: Var<u32>,
        ) -> Result<Self, LayoutError> {
            Ok(self.with_coords(self.coords.partition_mma(mma, op, thread)?))
        }

        /// CuTe's `thr_copy.partition_S/D(tensor)` for the device thread index `thread`
        /// (`< tiled.size()`): `(CPY, CPY_M, CPY_N, ...)`, the dynamic modes last.
        pub fn partition(
            &self,
            tiled: &crate::tiled::TiledCopy,
            side: crate::tiled::Side,
            thread: Var<u32>,
        ) -> Result<Self, LayoutError> {
            Ok(self.with_coords(self.coords.partition(tiled, side, thread)?))
        }

        /// CuTe's `thr_mma.partition_A(tensor)` for the device thread index `thread`.
        pub fn partition_a(
            &self,
            mma: &crate::tiled::TiledMma,
            thread: Var<u32>,
        ) -> Result<Self, LayoutError> {
            self.partition_operand(mma, crate::tiled::Operand::A, thread)
        }

        /// CuTe's `thr_mma.partition_B(tensor)` for the device thread index `thread`.
        pub fn partition_b(
            &self,
            mma: &crate::tiled::TiledMma,
            thread: Var<u32>,
        ) -> Result<Self, LayoutError> {
            self.partition_operand(mma, crate::tiled::Operand::B, thread)
        }

        /// CuTe's `thr_mma.partition_C(tensor)` for the device thread index `thread`:
        /// `(MMA, MMA_M, MMA_N)`.
        pub fn partition_c(
            &self,
            mma: &crate::tiled::TiledMma,
            thread: Var<u32>,
        ) -> Result<Self, LayoutError> {
            self.partition_operand(mma, crate::tiled::Operand::C, thread)
        }

        /// CuTe's slicing `tensor(c0, c1, ...)` over the static modes, then the dynamic ones:
        /// [`Idx::At`] folds into the static offset (on a dynamic mode, into the device
        /// offset), [`Idx::Dyn`] adds a device offset, [`Idx::All`] keeps the mode.
        pub fn slice(&self, coord: &[Idx]) -> Result<Self, LayoutError> {
            Ok(self.with_coords(self.coords.slice(coord)?))
        }

        /// The per-slice static layout (view coordinate -> encoded coordinate vector).
        pub fn layout(&self) -> &Layout {
            &self.coords.layout
        }

        /// The extent of dynamic mode `i` (tiles), if there is one.
        pub fn dyn_extent(&self, i: usize) -> Option<Var<u32>> {
            self.coords.dyn_modes.get(i).map(|m| m.extent)
        }

        /// Dimensions of the tensor.
        pub fn rank(&self) -> usize {
            self.coords.rank()
        }

        /// How many elements of dimension `d` exist from the tile's origin (signed: 0 or less
        /// for a tile past the end).
        pub fn remaining(&self, d: usize) -> Var<i32> {
            self.coords.remaining[d]
        }

        /// The same tensor without bounds: every element is taken to exist (the caller knows
        /// the tile is whole; its accesses then carry no predicates).
        pub fn without_bounds(&self) -> Self {
            let mut c = self.coords.clone();
            c.bounded = false;
            self.with_coords(c)
        }
    };
}

/// A tensor in global memory (see the module docs). Made by [`GTensor::new`] (or
/// [`GTensor::row_major`]) and tiled by [`GTensor::local_tile`]; partitions and slices keep its
/// global layout and refine its view.
#[derive(Clone, Debug)]
pub struct GTensor<T> {
    ptr: GlobalPtr<T>,
    strides: Vec<Var<u32>>,
    coords: Coords,
}

/// Whether a static position is in bounds, and its address.
pub(crate) struct Access {
    pub(crate) addr: Address,
    pub(crate) pred: Option<Var<bool>>,
}

impl<T: DeviceType> GTensor<T> {
    /// The rank-r tensor at `ptr` with extents `shape` and element strides `stride` (host
    /// constants as `Var::konst`), CuTe's `make_tensor(make_gmem_ptr(ptr), make_layout(shape,
    /// stride))`. Accesses are predicated on the extents; tile it with [`GTensor::local_tile`]
    /// before partitioning it. Element offsets are 32-bit: a tensor holds fewer than 2^32
    /// elements.
    pub fn new(ptr: GlobalPtr<T>, shape: &[Var<u32>], stride: &[Var<u32>]) -> Self {
        let rank = shape.len().min(stride.len());
        let contiguous = (0..rank).find(|&d| stride[d].as_const() == Some(1));
        GTensor {
            ptr,
            strides: stride[..rank].to_vec(),
            coords: Coords::new(&shape[..rank], contiguous),
        }
    }

    /// A row-major `rows x cols` matrix: `(rows, cols):(cols, 1)`.
    pub fn row_major(ptr: GlobalPtr<T>, rows: Var<u32>, cols: Var<u32>) -> Self {
        Self::new(ptr, &[rows, cols], &[cols, Var::konst(1)])
    }

    fn with_coords(&self, coords: Coords) -> Self {
        GTensor {
            coords,
            ..self.clone()
        }
    }

    /// CuTe's `local_tile(tensor, tiler, coord)`: the tile of static extents `tiler` (one per
    /// dimension) at tile coordinate `coord`: `Idx::Dyn(t)` / `Idx::At(t)` select tile `t` along
    /// that dimension, `Idx::All` keeps every tile as a trailing dynamic mode (in dimension
    /// order). The result's static layout is the tile, `(tiler_0, tiler_1, ...)`.
    ///
    /// Errors: a rank that is not the tensor's, a tensor already tiled, an extent outside
    /// `1..2^32`.
    pub fn local_tile(&self, tiler: &[i64], coord: &[Idx]) -> Result<Self, LayoutError> {
        let (coords, origins) = self.coords.local_tile(tiler, coord)?;
        let mut offset: Option<Var<u32>> = None;
        for (d, o) in origins.iter().enumerate() {
            if let Some(o) = o {
                let step = times(*o, self.strides[d]);
                offset = Some(match offset {
                    None => step,
                    Some(x) => add(x, step),
                });
            }
        }
        let ptr = match offset {
            Some(o) if o.as_const() != Some(0) => self.ptr + o,
            _ => self.ptr,
        };
        Ok(GTensor {
            ptr,
            strides: self.strides.clone(),
            coords,
        })
    }

    coordinate_views!();

    /// The static offset of this slice (an encoded coordinate vector).
    pub(crate) fn base(&self) -> i64 {
        self.coords.base
    }

    /// Whether the first element's address and every stride in bytes but the contiguous one
    /// are multiples of `bytes` (then so is every element at an offset that is a multiple of
    /// `bytes` along the contiguous dimension).
    pub(crate) fn aligned_to(&self, bytes: u32) -> Var<bool> {
        let mut acc = self.thread_ptr().addr().cast::<u32>();
        for (d, s) in self.strides.iter().enumerate() {
            if Some(d) != self.coords.contiguous {
                // Not `|=`: that writes into `acc`'s register, the address's.
                #[allow(clippy::assign_op_pattern)]
                {
                    acc = acc | (*s * T::TY.bytes());
                }
            }
        }
        (acc & (bytes - 1)).eq_(0u32)
    }

    /// `origin + sum_d thread_d * stride_d`.
    fn thread_ptr(&self) -> GlobalPtr<T> {
        let mut off: Option<Var<u32>> = None;
        for (d, t) in self.coords.thread.iter().enumerate() {
            if t.as_const() == Some(0) {
                continue;
            }
            let term = times(*t, self.strides[d]);
            off = Some(match off {
                None => term,
                Some(o) => add(o, term),
            });
        }
        match off {
            None => self.ptr,
            Some(o) => self.ptr + o,
        }
    }

    /// Address and predicate of each static offset (`base + layout(i)` values) for an access of
    /// `width` consecutive elements along the contiguous dimension: in bounds when every
    /// coordinate of its last element exists. Offsets that differ only in the contiguous
    /// dimension share one address register (the rest is the immediate); the others step from
    /// the nearest one below in one dimension, so one stride register serves them. With
    /// `clamp`, an access out of bounds is pointed at the tile's origin instead (for copies
    /// whose zero source size reads nothing, so that no instruction ever carries an address
    /// outside the matrix).
    pub(crate) fn accesses(
        &self,
        offsets: &[i64],
        width: i64,
        clamp: bool,
    ) -> Result<Vec<Access>, LayoutError> {
        let c = &self.coords;
        let bytes = i64::from(T::TY.bytes());
        let r = c.rank();
        let thread_ptr = self.thread_ptr();
        let mut rows: BTreeMap<Vec<i64>, Row> = BTreeMap::new();
        let mut out = Vec::with_capacity(offsets.len());
        for &s in offsets {
            if s < 0 {
                return Err(bad(&c.layout, format!("static offset {s} is negative")));
            }
            let crd = c.decode(s);
            let col = match c.contiguous {
                Some(k) if crd[k] + width <= c.span[k] => crd[k],
                None if width == 1 => 0,
                _ => {
                    return Err(bad(
                        &c.layout,
                        format!(
                            "an access of {width} elements at coordinate {crd:?} is not \
                             contiguous in memory"
                        ),
                    ))
                }
            };
            // Rows: the coordinates off the contiguous dimension.
            let key: Vec<i64> = (0..r)
                .map(|d| if Some(d) == c.contiguous { 0 } else { crd[d] })
                .collect();
            let (ptr, row_ok) = match rows.get(&key) {
                Some(x) => *x,
                None => {
                    let p = self.row_pointer(&key, &rows, thread_ptr);
                    let ok = c.row_in_bounds(&key);
                    rows.insert(key.clone(), (p, ok));
                    (p, ok)
                }
            };
            let pred = c.in_bounds(&crd, width, row_ok);
            let col = if c.contiguous.is_some() { col } else { 0 };
            let addr = match pred {
                Some(p) if clamp => {
                    let at = ptr + ((col * bytes) as u64);
                    Address::reg(select(p, at, self.ptr.addr()).to_reg(), 0)
                }
                _ => Address::reg(ptr.to_reg(), col * bytes),
            };
            out.push(Access { addr, pred });
        }
        Ok(out)
    }

    /// The address of the row `key` (coordinates off the contiguous dimension): from the
    /// nearest row already made that differs in one dimension only, one multiply-add; else
    /// from the thread's pointer.
    fn row_pointer(
        &self,
        key: &[i64],
        rows: &BTreeMap<Vec<i64>, Row>,
        thread_ptr: GlobalPtr<T>,
    ) -> Var<u64> {
        let below = rows
            .range(..key.to_vec())
            .next_back()
            .and_then(|(q, &(p, _))| {
                let diff: Vec<usize> = (0..key.len()).filter(|&d| q[d] != key[d]).collect();
                match diff.as_slice() {
                    [d] if q[*d] < key[*d] => Some((*d, key[*d] - q[*d], p)),
                    _ => None,
                }
            });
        match below {
            Some((d, steps, p)) => {
                (GlobalPtr::<T>::from_addr(p) + self.strides[d] * (steps as u32)).addr()
            }
            None => {
                let mut p = thread_ptr;
                for (d, &k) in key.iter().enumerate() {
                    if k != 0 {
                        p = p + self.strides[d] * (k as u32);
                    }
                }
                p.addr()
            }
        }
    }
}

/// CuTe's identity tensor (`make_identity_tensor(shape)`): the coordinates of a `shape`-d
/// domain as a tensor, tiled and partitioned like the data it stands beside, so that a thread
/// knows the global coordinates of the elements its partition holds (for predicates, and for
/// the coordinates a TMA copy takes).
///
/// ```
/// use dsl_core::kernel::*;
/// use dsl_core::tensor::{CTensor, Idx};
/// build_kernel("k", |kb| {
///     let (m, n) = (kb.param::<u32>("m"), kb.param::<u32>("n"));
///     let c = CTensor::new(&[m, n]);
///     let tile = c.local_tile(&[128, 64], &[Idx::Dyn(block_idx_x()), Idx::At(0)]).unwrap();
///     let (coords, inside) = tile.element(0).unwrap();
///     assert_eq!(coords.len(), 2);
///     let _ = inside;
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct CTensor {
    coords: Coords,
}

impl CTensor {
    /// The coordinates of a domain of extents `shape` (host constants as `Var::konst`). Its
    /// first dimension counts as the contiguous one (radix 1), as in a column-major layout.
    pub fn new(shape: &[Var<u32>]) -> CTensor {
        CTensor {
            coords: Coords::new(shape, (!shape.is_empty()).then_some(0)),
        }
    }

    fn with_coords(&self, coords: Coords) -> Self {
        CTensor { coords }
    }

    /// CuTe's `local_tile` (see [`GTensor::local_tile`]).
    pub fn local_tile(&self, tiler: &[i64], coord: &[Idx]) -> Result<Self, LayoutError> {
        Ok(self.with_coords(self.coords.local_tile(tiler, coord)?.0))
    }

    coordinate_views!();

    /// The global coordinates of the element at flat index `i` of the view (one per dimension),
    /// and whether it lies inside the domain (`true` for an unbounded tensor).
    pub fn element(&self, i: i64) -> Result<(Vec<Var<u32>>, Var<bool>), LayoutError> {
        let c = &self.coords;
        let crd = c.decode(c.base + c.layout.eval(i)?);
        let coords = (0..c.rank())
            .map(|d| add(add(c.origin[d], c.thread[d]), Var::konst(crd[d] as u32)))
            .collect();
        let inside = c
            .in_bounds(&crd, 1, c.row_in_bounds(&crd))
            .unwrap_or_else(|| Var::konst(true));
        Ok((coords, inside))
    }

    /// The global coordinates of this slice's origin (the tile's origin plus the thread's and
    /// slice's offsets), one per dimension.
    pub fn origin(&self) -> Vec<Var<u32>> {
        let c = &self.coords;
        (0..c.rank())
            .map(|d| {
                add(
                    add(c.origin[d], c.thread[d]),
                    Var::konst(c.decode(c.base)[d] as u32),
                )
            })
            .collect()
    }
}
