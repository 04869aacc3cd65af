//! Small pieces of CuTe that the tiled modules share: tiles with `_`, `with_shape`, flat thread
//! coordinates, `make_fragment_like`.

use crate::layout::{
    composition, make_ordered_layout, tiled_product, zipped_divide, IntTuple, Layout, LayoutError,
    Tiler,
};

/// A CuTe tile that may contain `_` (keep this mode as it is).
#[derive(Clone, Debug)]
pub(crate) enum Tile {
    /// `_`.
    Keep,
    /// A layout composed with (or dividing) the mode.
    L(Layout),
    /// One item per leading mode.
    Tup(Vec<Tile>),
}

/// CuTe's `layout.compose(t0, t1, ...)` with `_` items: mode `i` composed with item `i`; `_` and
/// modes past the tile are kept.
pub(crate) fn compose_tile(l: &Layout, t: &Tile) -> Result<Layout, LayoutError> {
    match t {
        Tile::Keep => Ok(l.clone()),
        Tile::L(b) => composition(l, b),
        Tile::Tup(items) => {
            let modes = l.modes();
            if items.len() > modes.len() {
                return Err(LayoutError::precondition(
                    "compose",
                    l.to_string(),
                    format!("a tile of rank {} needs that many modes", items.len()),
                ));
            }
            let out = modes
                .iter()
                .enumerate()
                .map(|(i, m)| match items.get(i) {
                    Some(t) => compose_tile(m, t),
                    None => Ok(m.clone()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Layout::from_modes(out))
        }
    }
}

/// The tiler `(n0:1, n1:1, ...)` (a CuTe shape used as a tiler).
pub(crate) fn shape_tiler(extents: &[i64]) -> Result<Tiler, LayoutError> {
    Tiler::from_shape(extents)
}

/// CuTe's `zipped_divide(l, (_, (t0, t1, ...)))` for a rank-2 `l = (A, B)` whose mode 0 is `(A0, A1)`:
/// `((A0, tiles of B), (A1, rests of B))`.
pub(crate) fn zipped_divide_keep0(l: &Layout, tiles: &[Layout]) -> Result<Layout, LayoutError> {
    let (a, b) = (l.mode(0)?, l.mode(1)?);
    let d = zipped_divide(
        &b,
        &Tiler::Tuple(tiles.iter().cloned().map(Tiler::Layout).collect()),
    )?;
    Ok(Layout::from_modes(vec![
        Layout::from_modes(vec![a.mode(0)?, d.mode(0)?]),
        Layout::from_modes(vec![a.mode(1)?, d.mode(1)?]),
    ]))
}

/// CuTe's `layout.with_shape(shape)`: `composition(layout, make_layout(shape))`.
pub(crate) fn with_shape(l: &Layout, shape: &IntTuple) -> Result<Layout, LayoutError> {
    composition(l, &Layout::col_major(shape.clone())?)
}

/// CuTe's `product_each(shape)`: the size of each top-level mode.
pub(crate) fn product_each(shape: &IntTuple) -> Vec<i64> {
    shape.modes().iter().map(IntTuple::product).collect()
}

/// CuTe's `layout.get_flat_coord(idx)`: per top-level mode, the 1-D coordinate of `idx` read through
/// the strides (`(idx / d) % s` for each sub-mode, extent-1 modes giving 0), valid for compact
/// layouts.
pub fn get_flat_coord(l: &Layout, idx: i64) -> Vec<i64> {
    l.modes()
        .iter()
        .map(|m| {
            let (shape, stride) = (m.shape().flatten_ints(), m.stride().flatten_ints());
            let mut crd = 0;
            let mut scale = 1;
            for (s, d) in shape.iter().zip(&stride) {
                let c = if *s == 1 || *d == 0 {
                    0
                } else {
                    (idx / d).rem_euclid(*s)
                };
                crd += c * scale;
                scale = scale.saturating_mul(*s);
            }
            crd
        })
        .collect()
}

/// CuTe's `make_fragment_like(layout)` for the layout: a compact layout of the same shape whose
/// mode 0 is column-major (stride-0 sub-modes of mode 0 kept as broadcasts) and whose other modes
/// are ordered by the input's strides (`make_ordered_layout`), mode 0 innermost.
pub fn make_fragment_like(l: &Layout) -> Result<Layout, LayoutError> {
    if l.rank() < 2 {
        return Layout::col_major(l.shape().clone());
    }
    let m0 = l.mode(0)?;
    // compact_major<LayoutLeft>(filter_zeros(stride, shape)): stride-0 positions count as extent 1.
    let mut acc = 1i64;
    let s0 = m0.shape().flatten_ints();
    let d0 = m0.stride().flatten_ints();
    let mut strides = Vec::with_capacity(s0.len());
    for (s, d) in s0.iter().zip(&d0) {
        strides.push(acc);
        if *d != 0 {
            acc = acc.checked_mul(*s).ok_or_else(|| LayoutError::Overflow {
                op: "make_fragment_like",
                args: l.to_string(),
            })?;
        }
    }
    let mut it = strides.into_iter();
    let mode0 = Layout::new(
        m0.shape().clone(),
        m0.shape().map_ints(&mut |_| it.next().unwrap_or(0)),
    )?;
    let rest = l.modes()[1..].to_vec();
    let rest_shape = IntTuple::Tuple(rest.iter().map(|m| m.shape().clone()).collect());
    let rest_order = IntTuple::Tuple(rest.iter().map(|m| m.stride().clone()).collect());
    let ordered = make_ordered_layout(&rest_shape, &rest_order)?;
    let p = tiled_product(&mode0, &Tiler::Layout(ordered))?;
    // tiled_product gives (mode0, rest...) with rest scaled by cosize(mode0).
    Ok(p)
}

/// `make_layout(shape, 0)`: a broadcast over `shape`.
pub(crate) fn zeros(shape: &IntTuple) -> Layout {
    let stride = shape.map_ints(&mut |_| 0);
    Layout::new(shape.clone(), stride).unwrap_or_else(|_| Layout::from_modes(vec![]))
}
