//! The divide family: split a layout into tiles and the layout of the tiles.

use super::coalesce::coalesce;
use super::complement::complement_shape;
use super::composition::composition;
use super::construct::{tile_unzip_of, too_many_modes, unpack_both, unpack_second};
use super::{Layout, LayoutError, Tiler};

/// CuTe's `logical_divide(A, tiler)`.
///
/// For a [`Tiler::Layout`] `B`: `composition(A, make_layout(B, complement(B, shape(coalesce(A)))))`,
/// a rank-2 layout whose mode 0 is `A o B` (the tile) and mode 1 iterates over the tiles.
/// For a [`Tiler::Tuple`], mode `i` of A is divided by item `i`; modes of A past the tiler's rank
/// are kept unchanged. Errors are those of `complement` and `composition`.
///
/// ```
/// use dsl_core::layout::{logical_divide, Layout, Tiler};
/// let a: Layout = "(4,2,3):(2,1,8)".parse().unwrap();
/// let b = Tiler::Layout("4:2".parse().unwrap());
/// assert_eq!(logical_divide(&a, &b).unwrap().to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    match b {
        Tiler::Layout(t) => {
            let rest = complement_shape(t, coalesce(a).shape())?;
            let tiles = Layout::from_modes_checked(vec![t.clone(), rest])
                .map_err(|f| f.at("logical_divide", format!("{a}, {b}")))?;
            composition(a, &tiles)
        }
        Tiler::Tuple(items) => {
            let modes = a.modes();
            if items.len() > modes.len() {
                return Err(too_many_modes("logical_divide", a, b, items.len()));
            }
            let mut out = Vec::with_capacity(modes.len());
            for (i, m) in modes.into_iter().enumerate() {
                out.push(match items.get(i) {
                    Some(t) => logical_divide(&m, t)?,
                    None => m,
                });
            }
            Layout::from_modes_checked(out).map_err(|f| f.at("logical_divide", format!("{a}, {b}")))
        }
    }
}

/// CuTe's `zipped_divide(A, tiler)`: `tile_unzip(logical_divide(A, tiler), tiler)`, the rank-2
/// layout `((tiles...), (rests..., other modes...))`. For a single-layout tiler it equals
/// `logical_divide`.
///
/// ```
/// use dsl_core::layout::{zipped_divide, Layout, Tiler};
/// let a: Layout = "(8,6):(1,8)".parse().unwrap();
/// let t = Tiler::from_shape(&[2, 3]).unwrap();
/// assert_eq!(zipped_divide(&a, &t).unwrap().to_string(), "((2,3),(4,2)):((1,8),(2,24))");
/// ```
pub fn zipped_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    tile_unzip_of("logical_divide", logical_divide, a, b)
}

/// CuTe's `tiled_divide(A, tiler)`: `zipped_divide` with its second mode unpacked,
/// `((tiles...), rest0, rest1, ...)`.
pub fn tiled_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    let z = zipped_divide(a, b)?;
    unpack_second(z).map_err(|f| f.at("tiled_divide", format!("{a}, {b}")))
}

/// CuTe's `flat_divide(A, tiler)`: `zipped_divide` with both modes unpacked,
/// `(tile0, tile1, ..., rest0, rest1, ...)`.
pub fn flat_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    let z = zipped_divide(a, b)?;
    unpack_both(z).map_err(|f| f.at("flat_divide", format!("{a}, {b}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    fn doc_2d() -> (Layout, Tiler) {
        let a = lay("(9,(4,8)):(59,(13,1))");
        let t = Tiler::Tuple(vec![
            Tiler::Layout(lay("3:3")),
            Tiler::Layout(lay("(2,4):(1,8)")),
        ]);
        (a, t)
    }

    #[test]
    fn cute_doc_1d() {
        let r = logical_divide(&lay("(4,2,3):(2,1,8)"), &Tiler::Layout(lay("4:2"))).unwrap();
        assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    }

    #[test]
    fn cute_doc_2d() {
        let (a, t) = doc_2d();
        let ld = logical_divide(&a, &t).unwrap();
        // Doc: ((TileM,RestM),(TileN,RestN)) with shape ((3,3),(8,4)); tiles are the composition.
        assert_eq!(
            ld.to_string(),
            "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
        );
        let zd = zipped_divide(&a, &t).unwrap();
        assert_eq!(
            zd.to_string(),
            "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
        );
        assert_eq!(zd.mode(0).unwrap().to_string(), "(3,(2,4)):(177,(13,2))");
        let td = tiled_divide(&a, &t).unwrap();
        assert_eq!(
            td.to_string(),
            "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
        );
        let fd = flat_divide(&a, &t).unwrap();
        assert_eq!(fd.to_string(), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
    }

    /// A layout ending in an extent-1 mode divided by a tile whose stride neither divides nor is
    /// divided by the extent before it: the tile's rest fills the extent-1 mode, as in CuTe's C++
    /// (checked there: `tests/conformance/gen_vectors.py`'s `UNIT_TAIL_CASES`).
    #[test]
    fn a_tile_may_run_past_the_mode_before_an_extent_1_mode() {
        let a = lay("(7,1):(4,3)");
        let t = Tiler::Layout(lay("8:2"));
        for (r, want) in [
            (tiled_divide(&a, &t), "((4,2),2):((8,3),4)"),
            (logical_divide(&a, &t), "((4,2),2):((8,3),4)"),
            (zipped_divide(&a, &t), "((4,2),2):((8,3),4)"),
            (flat_divide(&a, &t), "(4,2,2):(8,3,4)"),
        ] {
            assert_eq!(r.unwrap().to_string(), want);
        }
        // The same through a tiler tuple, on the mode of A that ends in the extent-1 mode.
        let a = lay("((7,1),3):((4,3),100)");
        let t = Tiler::Tuple(vec![Tiler::Layout(lay("8:2"))]);
        assert_eq!(
            tiled_divide(&a, &t).unwrap().to_string(),
            "(((4,2)),2,3):(((8,3)),4,100)"
        );
    }

    #[test]
    fn extra_modes_are_kept_and_errors_typed() {
        let a = lay("(8,6,2):(1,8,48)");
        let t = Tiler::from_shape(&[4]).unwrap();
        assert_eq!(
            logical_divide(&a, &t).unwrap().to_string(),
            "((4,2),6,2):((1,4),8,48)"
        );
        assert_eq!(
            zipped_divide(&a, &t).unwrap().to_string(),
            "((4),(2,6,2)):((1),(4,8,48))"
        );
        let four = Tiler::from_shape(&[1, 1, 1, 1]).unwrap();
        assert!(logical_divide(&a, &four).is_err());
    }
}
