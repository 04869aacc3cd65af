//! The product family: reproduce a block layout according to a tiler.

use super::arith::{cosize, mul, size};
use super::complement::complement;
use super::composition::composition;
use super::construct::{
    append_to_rank, tile_unzip_of, too_many_modes, unpack_both, unpack_second, zip,
};
use super::{Layout, LayoutError, Tiler};

/// CuTe's `logical_product(A, tiler)`.
///
/// For a [`Tiler::Layout`] `B`: `make_layout(A, composition(complement(A, size(A)*cosize(B)), B))`,
/// a rank-2 layout whose mode 0 is A and whose mode 1 (congruent to B) places the copies of A.
/// For a [`Tiler::Tuple`], mode `i` of A is multiplied by item `i`; modes past the tiler's rank are
/// kept unchanged.
///
/// ```
/// use dsl_core::layout::{logical_product, Layout, Tiler};
/// let a: Layout = "(2,2):(4,1)".parse().unwrap();
/// let b = Tiler::Layout("6:1".parse().unwrap());
/// assert_eq!(logical_product(&a, &b).unwrap().to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    match b {
        Tiler::Layout(t) => {
            let m = size(a)
                .and_then(|sa| mul(sa, cosize(t)?))
                .map_err(|f| f.at("logical_product", format!("{a}, {b}")))?;
            let rest = composition(&complement(a, m)?, t)?;
            Layout::from_modes_checked(vec![a.clone(), rest])
                .map_err(|f| f.at("logical_product", format!("{a}, {b}")))
        }
        Tiler::Tuple(items) => {
            let modes = a.modes();
            if items.len() > modes.len() {
                return Err(too_many_modes("logical_product", a, b, items.len()));
            }
            let mut out = Vec::with_capacity(modes.len());
            for (i, m) in modes.into_iter().enumerate() {
                out.push(match items.get(i) {
                    Some(t) => logical_product(&m, t)?,
                    None => m,
                });
            }
            Layout::from_modes_checked(out)
                .map_err(|f| f.at("logical_product", format!("{a}, {b}")))
        }
    }
}

/// CuTe's `zipped_product(A, tiler)`: `tile_unzip(logical_product(A, tiler), tiler)`,
/// `((blocks...), (products..., other modes...))`.
pub fn zipped_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    tile_unzip_of("logical_product", logical_product, a, b)
}

/// CuTe's `tiled_product(A, tiler)`: `zipped_product` with its second mode unpacked.
pub fn tiled_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    let z = zipped_product(a, b)?;
    unpack_second(z).map_err(|f| f.at("tiled_product", format!("{a}, {b}")))
}

/// CuTe's `flat_product(A, tiler)`: `zipped_product` with both modes unpacked.
pub fn flat_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    let z = zipped_product(a, b)?;
    unpack_both(z).map_err(|f| f.at("flat_product", format!("{a}, {b}")))
}

/// `logical_product(append<R>(A), append<R>(B))` with `R = max(rank(A), rank(B))`, as a pair of modes.
fn rank_matched_product(a: &Layout, b: &Layout) -> Result<(Layout, Layout), LayoutError> {
    let r = a.rank().max(b.rank());
    let (pa, pb) = (append_to_rank(a, r)?, append_to_rank(b, r)?);
    let p = logical_product(&pa, &Tiler::Layout(pb))?;
    Ok((p.mode(0)?, p.mode(1)?))
}

/// CuTe's `blocked_product(A, B)`: every element of B becomes a copy of the block A.
///
/// Both are padded with `1:0` modes to the same rank `R = max(rank(A), rank(B))`, multiplied with
/// `logical_product` (giving `(A, B')` with `B' = complement(A, size(A)*cosize(B)) o B`), and
/// mode `i` of the result is `(A_i, B'_i)`. Post-conditions: rank `R`, size `size(A)*size(B)`,
/// mode `i` of size `size(A_i)*size(B_i)`; for compact A and B it is a bijection onto
/// `[0, size(A)*size(B))`.
///
/// ```
/// use dsl_core::layout::{blocked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let b: Layout = "(3,4):(1,3)".parse().unwrap();
/// assert_eq!(blocked_product(&a, &b).unwrap().to_string(), "((2,3),(5,4)):((5,10),(1,30))");
/// ```
pub fn blocked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let (m0, m1) = rank_matched_product(a, b)?;
    zip(&m0, &m1)
}

/// CuTe's `raked_product(A, B)`: like [`blocked_product`] but mode `i` is `(B'_i, A_i)`, so the
/// copies of A are interleaved ("raked", a cyclic distribution).
///
/// ```
/// use dsl_core::layout::{raked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let b: Layout = "(3,4):(1,3)".parse().unwrap();
/// assert_eq!(raked_product(&a, &b).unwrap().to_string(), "((3,2),(4,5)):((10,5),(30,1))");
/// ```
pub fn raked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let (m0, m1) = rank_matched_product(a, b)?;
    zip(&m1, &m0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::IntTuple;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn cute_doc_1d() {
        let r = logical_product(&lay("(2,2):(4,1)"), &Tiler::Layout(lay("6:1"))).unwrap();
        assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
        let r = logical_product(&lay("(2,2):(4,1)"), &Tiler::Layout(lay("(4,2):(2,1)"))).unwrap();
        assert_eq!(r.to_string(), "((2,2),(4,2)):((4,1),(8,2))");
    }

    #[test]
    fn cute_doc_blocked_and_raked_2d() {
        // A 2x5 row-major block over a 3x4 column-major arrangement (the doc's figures).
        let (a, b) = (lay("(2,5):(5,1)"), lay("(3,4):(1,3)"));
        let blocked = blocked_product(&a, &b).unwrap();
        assert_eq!(blocked.to_string(), "((2,3),(5,4)):((5,10),(1,30))");
        let raked = raked_product(&a, &b).unwrap();
        assert_eq!(raked.to_string(), "((3,2),(4,5)):((10,5),(30,1))");
        // Element (r, c) of the 6x20 blocked result lies in block (r/2, c/5) at (r%2, c%5).
        for r in 0..6 {
            for c in 0..20 {
                let crd = IntTuple::ints(&[r, c]);
                let got = blocked.crd2idx(&crd);
                let block = (r / 2) + 3 * (c / 5);
                let want = block * 10 + (r % 2) * 5 + (c % 5);
                assert_eq!(got.unwrap(), want, "{crd}");
            }
        }
    }

    #[test]
    fn rank_padding_and_tuple_tilers() {
        // Rank 1 block, rank 2 tiler: the block is padded with 1:0.
        // Expected values in this test were computed with pycute's logical_product / zipped_product.
        let r = blocked_product(&lay("4:1"), &lay("(2,3):(1,2)")).unwrap();
        assert_eq!(r.to_string(), "((4,2),(1,3)):((1,4),(0,8))");
        let a = lay("(2,5):(5,1)");
        let t = Tiler::from_shape(&[3, 4]).unwrap();
        let z = zipped_product(&a, &t).unwrap();
        assert_eq!(z.to_string(), "((2,5),(3,4)):((5,1),(1,5))");
        assert_eq!(
            tiled_product(&a, &t).unwrap().to_string(),
            "((2,5),3,4):((5,1),1,5)"
        );
        assert_eq!(
            flat_product(&a, &t).unwrap().to_string(),
            "(2,5,3,4):(5,1,1,5)"
        );
    }
}
