//! CuTe's `local_tile` and `local_partition` as layout functions.

use super::util::{get_flat_coord, product_each, shape_tiler};
use super::view::{Idx, View};
use crate::layout::{composition, right_inverse, zipped_divide, Layout, LayoutError};

/// CuTe's `local_tile(tensor, tiler, coord)` (`inner_partition`): divide `tensor` into tiles of
/// `tiler` (extents per mode) and keep the tile at `coord`, a coordinate into the rest modes
/// (missing trailing items are `_`).
///
/// [`Idx::At`] folds the rest mode's offset into `base`; each [`Idx::Dyn`] adds a dynamic index
/// (`coordinate -> offset`, the rest mode's layout), in order, so a kernel can apply `blockIdx`
/// there; [`Idx::All`] keeps the mode. The layout is `(tile modes..., kept rest modes...)`.
///
/// ```
/// use dsl_core::tiled::{local_tile, Idx, View};
/// // gA = local_tile(A (M=256, K=64, K-major), (128, 32), (by, _)): (128, 32, k=2)
/// let a = View::from("(256,64):(64,1)".parse::<dsl_core::layout::Layout>().unwrap());
/// let g = local_tile(&a, &[128, 32], &[Idx::dynamic(), Idx::All]).unwrap();
/// assert_eq!(g.layout.to_string(), "(128,32,2):(64,1,32)");
/// assert_eq!(g.offset_of(&[1]).unwrap(), 128 * 64);
/// let g1 = local_tile(&a, &[128, 32], &[Idx::At(1)]).unwrap();
/// assert_eq!(g1.base, 128 * 64);
/// ```
pub fn local_tile(tensor: &View, tiler: &[i64], coord: &[Idx]) -> Result<View, LayoutError> {
    let d = zipped_divide(&tensor.layout, &shape_tiler(tiler)?)?;
    let (tile, rest) = (d.mode(0)?, d.mode(1)?);
    let rest_modes = rest.modes();
    if coord.len() > rest_modes.len() {
        return Err(LayoutError::precondition(
            "local_tile",
            format!("{}, {tiler:?}", tensor.layout),
            format!(
                "the coordinate has {} items but there are {} rest modes",
                coord.len(),
                rest_modes.len()
            ),
        ));
    }
    // Slice the rest modes, then put the tile modes in front of what is kept.
    let mut full = tile.modes();
    full.extend(rest_modes);
    let mut item = vec![Idx::All; tile.rank()];
    item.extend(coord.iter().copied());
    tensor.with_layout(Layout::from_modes(full)).slice(&item)
}

/// CuTe's `local_partition(tensor, thr_layout, thr_idx)` with the thread index left dynamic:
/// `outer_partition(tensor, product_each(shape(thr_layout)), thr_layout.get_flat_coord(idx))`. The
/// view gains the index `thread -> offset` and keeps the rest modes: `(M / thr_M, N / thr_N, ...)`.
///
/// `thr_layout` must be a bijection onto `[0, size)` (as CuTe's `get_flat_coord` assumes).
///
/// ```
/// use dsl_core::tiled::{local_partition, View};
/// let data = View::from("(16,64)".parse::<dsl_core::layout::Layout>().unwrap());
/// let p = local_partition(&data, &"(2,16):(16,1)".parse().unwrap()).unwrap();
/// assert_eq!(p.layout.to_string(), "(8,4):(2,256)");
/// // thread 17 is coordinate (1, 1): row 1, column 1.
/// assert_eq!(p.offset_of(&[17]).unwrap(), 1 + 16);
/// ```
pub fn local_partition(tensor: &View, thr_layout: &Layout) -> Result<View, LayoutError> {
    let tiler = product_each(thr_layout.shape());
    let d = zipped_divide(&tensor.layout, &shape_tiler(&tiler)?)?;
    let (tile, rest) = (d.mode(0)?, d.mode(1)?);
    // tid -> flat coordinate (right_inverse of a bijection) -> offset in the tile mode.
    let inv = right_inverse(thr_layout)?;
    if inv.size() != thr_layout.size() {
        return Err(LayoutError::precondition(
            "local_partition",
            thr_layout.to_string(),
            "the thread layout must map its coordinates onto 0..size one to one",
        ));
    }
    let thr = composition(&tile, &inv)?;
    for t in 0..thr_layout.size() {
        let c = get_flat_coord(thr_layout, t);
        let want = tile.crd2idx(&crate::layout::IntTuple::ints(&c))?;
        if thr.eval(t)? != want {
            return Err(LayoutError::precondition(
                "local_partition",
                thr_layout.to_string(),
                "the thread layout is not compact: get_flat_coord does not invert it",
            ));
        }
    }
    Ok(tensor.push_index(thr, Layout::from_modes(rest.modes())))
}

/// CuTe's `local_partition` for a host thread index: [`local_partition`] with the index bound.
pub fn local_partition_at(
    tensor: &View,
    thr_layout: &Layout,
    thr_idx: i64,
) -> Result<View, LayoutError> {
    local_partition(tensor, thr_layout)?.bind_last(thr_idx)
}
