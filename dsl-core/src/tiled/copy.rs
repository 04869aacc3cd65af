//! `TiledCopy` and `ThrCopy`: CuTe's `make_tiled_copy`, `make_tiled_copy_A/B/C`, `tidfrg_S/D`,
//! `get_layoutS/D_TV`, `partition_S/D` and `retile` (`include/cute/atom/copy_atom.hpp`), as layout
//! functions.

use super::mma::{Operand, TiledMma};
use super::util::{compose_tile, product_each, shape_tiler, with_shape, Tile};
use super::view::View;
use crate::atom::CopyAtom;
use crate::layout::{
    coalesce_with, composition, logical_product, raked_product, right_inverse, upcast,
    zipped_divide, IntTuple, Layout, LayoutError, Tiler,
};

/// CuTe's `TiledCopy<Copy_Atom, LayoutCopy_TV, ShapeTiler_MN>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TiledCopy {
    /// The atom.
    pub atom: CopyAtom,
    /// `TiledLayout_TV`: `(thread, value) -> index` in the column-major tile of `tiler_mn`.
    pub layout_tv: Layout,
    /// `Tiler_MN`: the tile one application of the tiled copy covers (extents per mode).
    pub tiler_mn: Vec<i64>,
}

/// CuTe's `make_tiled_copy_impl(atom, layout_tv, tiler)`; checks CuTe's static assertions (the TV
/// layout has a multiple of the atom's threads and values).
pub fn make_tiled_copy_impl(
    atom: CopyAtom,
    layout_tv: Layout,
    tiler_mn: Vec<i64>,
) -> Result<TiledCopy, LayoutError> {
    let (thr, val) = (layout_tv.mode(0)?.size(), layout_tv.mode(1)?.size());
    let (athr, aval) = (atom.num_threads(), atom.num_val_ref());
    if thr % athr != 0 || val % aval != 0 {
        return Err(LayoutError::precondition(
            "make_tiled_copy",
            format!("{}, {layout_tv}", atom.name()),
            format!(
                "the TV layout has {thr} threads and {val} values per thread; the atom needs a \
                 multiple of {athr} threads and of {aval} values"
            ),
        ));
    }
    Ok(TiledCopy {
        atom,
        layout_tv,
        tiler_mn,
    })
}

/// CuTe's `make_tiled_copy(atom, thr_layout, val_layout)`: `thr_layout: (m,n) -> thread`,
/// `val_layout: (m,n) -> value`; the tile is their `raked_product` and the TV layout its right
/// inverse reshaped to `(size(thr), size(val))`.
///
/// ```
/// use dsl_core::atom::{CopyAtom, CpAsyncCacheGlobal, LdsmN, ValType};
/// use dsl_core::tiled::make_tiled_copy;
/// let atom = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
/// let g2s = make_tiled_copy(atom, &"(32,4):(4,1)".parse().unwrap(), &"(1,8)".parse().unwrap())
///     .unwrap();
/// assert_eq!(g2s.tiler_mn, vec![32, 32]);
/// assert_eq!(g2s.size(), 128);
/// ```
pub fn make_tiled_copy(
    atom: CopyAtom,
    thr_layout: &Layout,
    val_layout: &Layout,
) -> Result<TiledCopy, LayoutError> {
    let layout_mn = raked_product(thr_layout, val_layout)?;
    let inverse = right_inverse(&layout_mn)?;
    if inverse.size() != layout_mn.size() {
        return Err(LayoutError::precondition(
            "make_tiled_copy",
            format!("{thr_layout}, {val_layout}"),
            format!(
                "the thread and value layouts must give each element of their tile one (thread, \
                 value), but raked_product is {layout_mn}, which is not one to one onto 0..{}",
                layout_mn.size()
            ),
        ));
    }
    let layout_tv = with_shape(
        &inverse,
        &IntTuple::ints(&[thr_layout.size(), val_layout.size()]),
    )?;
    let tiler = product_each(layout_mn.shape());
    make_tiled_copy_impl(atom, layout_tv, tiler)
}

fn make_tiled_copy_for(
    atom: CopyAtom,
    mma: &TiledMma,
    op: Operand,
) -> Result<TiledCopy, LayoutError> {
    let (m, n, k) = mma.tile_size_mnk();
    let tiler = match op {
        Operand::A => vec![m, k],
        Operand::B => vec![n, k],
        Operand::C => vec![m, n],
    };
    make_tiled_copy_impl(atom, mma.get_layout_tv(op)?, tiler)
}

/// CuTe's `make_tiled_copy_A(atom, mma)`: the copy whose threads and values are the MMA's A
/// fragments, over the `(tile_M, tile_K)` tile.
pub fn make_tiled_copy_a(atom: CopyAtom, mma: &TiledMma) -> Result<TiledCopy, LayoutError> {
    make_tiled_copy_for(atom, mma, Operand::A)
}

/// CuTe's `make_tiled_copy_B(atom, mma)`, over `(tile_N, tile_K)`.
pub fn make_tiled_copy_b(atom: CopyAtom, mma: &TiledMma) -> Result<TiledCopy, LayoutError> {
    make_tiled_copy_for(atom, mma, Operand::B)
}

/// CuTe's `make_tiled_copy_C(atom, mma)`, over `(tile_M, tile_N)`.
pub fn make_tiled_copy_c(atom: CopyAtom, mma: &TiledMma) -> Result<TiledCopy, LayoutError> {
    make_tiled_copy_for(atom, mma, Operand::C)
}

/// Source or destination side of a copy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// The source (`_S`).
    Src,
    /// The destination (`_D`).
    Dst,
}

impl TiledCopy {
    /// CuTe's `size(tiled_copy)`: `TiledNumThr`.
    pub fn size(&self) -> i64 {
        self.layout_tv.mode(0).map(|m| m.size()).unwrap_or(0)
    }

    /// `TiledNumVal`: values per thread in one application of the tile.
    pub fn num_val(&self) -> i64 {
        self.layout_tv.mode(1).map(|m| m.size()).unwrap_or(0)
    }

    fn tiler(&self) -> Result<Tiler, LayoutError> {
        shape_tiler(&self.tiler_mn)
    }

    /// `right_inverse(AtomLayoutRef).compose(AtomLayoutSrc/Dst)`: reference (thr, val) -> the
    /// side's (thr, val).
    fn ref2trg(&self, side: Side) -> Result<Layout, LayoutError> {
        let trg = match side {
            Side::Src => &self.atom.val_layout_src,
            Side::Dst => &self.atom.val_layout_dst,
        };
        composition(&right_inverse(&self.atom.val_layout_ref)?, trg)
    }

    /// CuTe's `tile2thrfrg(tensor, ref2trg)`: `tensor` is `((TileM,TileN,...),(RestM,RestN,...))`;
    /// the result is `(Thr, Val, (RestM,RestN,...))`.
    fn tile2thrfrg(&self, tensor: &Layout, ref2trg: &Layout) -> Result<Layout, LayoutError> {
        let atom_tv = zipped_divide(
            &self.layout_tv,
            &shape_tiler(&[self.atom.num_threads(), self.atom.num_val_ref()])?,
        )?;
        let trg_tv = compose_tile(
            &atom_tv,
            &Tile::Tup(vec![Tile::L(ref2trg.clone()), Tile::Keep]),
        )?;
        // zip: ((AtomT,AtomV),(RestT,RestV)) -> ((AtomT,RestT),(AtomV,RestV))
        let (a, r) = (trg_tv.mode(0)?, trg_tv.mode(1)?);
        let zipped = Layout::from_modes(vec![
            Layout::from_modes(vec![a.mode(0)?, r.mode(0)?]),
            Layout::from_modes(vec![a.mode(1)?, r.mode(1)?]),
        ]);
        let profile = IntTuple::Tuple(vec![IntTuple::Int(1), IntTuple::ints(&[1, 1])]);
        let thrval2mn = coalesce_with(&zipped, &profile)?;
        let tv = compose_tile(tensor, &Tile::Tup(vec![Tile::L(thrval2mn), Tile::Keep]))?;
        let (tv0, rest) = (tv.mode(0)?, tv.mode(1)?);
        Ok(Layout::from_modes(vec![tv0.mode(0)?, tv0.mode(1)?, rest]))
    }

    /// CuTe's `tidfrg_S` / `tidfrg_D`: `(Thr, Val, (RestM, RestN, ...))` of a tensor layout.
    pub fn tidfrg(&self, side: Side, tensor: &Layout) -> Result<Layout, LayoutError> {
        if tensor.rank() < self.tiler_mn.len() {
            return Err(LayoutError::precondition(
                "tidfrg",
                tensor.to_string(),
                format!(
                    "the tensor has rank {} but the tiled copy's tile has rank {}",
                    tensor.rank(),
                    self.tiler_mn.len()
                ),
            ));
        }
        let divided = zipped_divide(tensor, &self.tiler()?)?;
        self.tile2thrfrg(&divided, &self.ref2trg(side)?)
    }

    /// CuTe's `get_layoutS_TV` / `get_layoutD_TV`: `(thread, value) -> index` in the column-major
    /// tile of `tiler_mn`, in the side's own value order.
    pub fn get_layout_tv(&self, side: Side) -> Result<Layout, LayoutError> {
        let ref_s = Layout::col_major(IntTuple::Tuple(vec![
            IntTuple::ints(&self.tiler_mn),
            IntTuple::Int(1),
        ]))?;
        let t = self.tile2thrfrg(&ref_s, &self.ref2trg(side)?)?;
        Ok(Layout::from_modes(vec![t.mode(0)?, t.mode(1)?]))
    }

    /// CuTe's `partition_S` / `partition_D` with the thread index left dynamic: the view gains the
    /// index `thread -> offset`, and its layout becomes `(CPY, CPY_M, CPY_N, ...)` (values of one
    /// copy, then one mode per mode of the tensor).
    pub fn partition(&self, side: Side, tensor: &View) -> Result<View, LayoutError> {
        let t = self.tidfrg(side, &tensor.layout)?;
        let mut modes = vec![t.mode(1)?];
        modes.extend(t.mode(2)?.modes());
        Ok(tensor.push_index(t.mode(0)?, Layout::from_modes(modes)))
    }

    /// CuTe's `retile(tensor)`: a thread's fragment (e.g. an MMA fragment) re-viewed with the copy's
    /// value grouping: `(CPY, CPY_M, CPY_N, ...)` over the same registers.
    pub fn retile(&self, tensor: &Layout) -> Result<Layout, LayoutError> {
        let r = tensor.rank();
        let v = tensor.mode(0)?.size();
        let tiler_shape = IntTuple::ints(&self.tiler_mn);
        let n = self
            .size()
            .checked_mul(v)
            .ok_or_else(|| LayoutError::Overflow {
                op: "retile",
                args: tensor.to_string(),
            })?;
        let frg_layout_mn = upcast(
            &with_shape(&right_inverse(&self.layout_tv)?, &tiler_shape)?,
            n,
        )?;
        let frg_layout_v = zipped_divide(
            &logical_product(
                &Layout::vector(v, 1)?,
                &Tiler::Layout(right_inverse(&frg_layout_mn)?),
            )?,
            &Tiler::Layout(Layout::vector(self.atom.num_val_ref(), 1)?),
        )?;
        let mut t_shape = vec![v];
        t_shape.extend(product_each(frg_layout_mn.shape()));
        let t_tensor = zipped_divide(tensor, &shape_tiler(&t_shape)?)?;
        let v_tensor = compose_tile(
            &t_tensor,
            &Tile::Tup(vec![Tile::L(frg_layout_v), Tile::Keep]),
        )?;
        // v_tensor(_, append<R>(0, _)): drop the first rest mode at coordinate 0.
        let rest = v_tensor.mode(1)?.modes();
        if rest.len() != r {
            return Err(LayoutError::precondition(
                "retile",
                tensor.to_string(),
                format!("expected {r} rest modes after dividing by ({t_shape:?})"),
            ));
        }
        let mut modes = vec![v_tensor.mode(0)?];
        modes.extend(rest.into_iter().skip(1));
        Ok(Layout::from_modes(modes))
    }

    /// CuTe's `get_slice(thr_idx)` / `get_thread_slice`.
    pub fn get_slice(&self, thr_idx: i64) -> Result<ThrCopy, LayoutError> {
        if thr_idx < 0 || thr_idx >= self.size() {
            return Err(LayoutError::precondition(
                "get_slice",
                format!("{thr_idx}"),
                format!("the tiled copy has {} threads", self.size()),
            ));
        }
        Ok(ThrCopy {
            copy: self.clone(),
            thr_idx,
        })
    }
}

/// CuTe's `ThrCopy`: a tiled copy seen by one (host-known) thread.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThrCopy {
    /// The tiled copy.
    pub copy: TiledCopy,
    /// The thread index.
    pub thr_idx: i64,
}

impl ThrCopy {
    /// CuTe's `partition_S`: `(CPY, CPY_M, CPY_N, ...)` of the source for this thread.
    pub fn partition_s(&self, tensor: &View) -> Result<View, LayoutError> {
        self.copy
            .partition(Side::Src, tensor)?
            .bind_last(self.thr_idx)
    }

    /// CuTe's `partition_D`: `(CPY, CPY_M, CPY_N, ...)` of the destination for this thread.
    pub fn partition_d(&self, tensor: &View) -> Result<View, LayoutError> {
        self.copy
            .partition(Side::Dst, tensor)?
            .bind_last(self.thr_idx)
    }

    /// CuTe's `retile_S`: the layout of a register fragment regrouped for the copy's source.
    pub fn retile_s(&self, fragment: &Layout) -> Result<Layout, LayoutError> {
        self.copy.retile(fragment)
    }

    /// CuTe's `retile_D`: the layout of a register fragment regrouped for the copy's destination.
    pub fn retile_d(&self, fragment: &Layout) -> Result<Layout, LayoutError> {
        self.copy.retile(fragment)
    }
}
