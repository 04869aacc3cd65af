//! Composed layouts `swizzle o offset o layout`: CuTe's `ComposedLayout<Swizzle, Offset, Layout>`.
//!
//! The inner layout defines the domain, so every operation that reshapes the domain (divides,
//! products, coalesce, composition on the right, mode selection) applies to the inner layout only and
//! keeps the swizzle and the offset, as `include/cute/layout_composed.hpp` does.

use std::fmt;

use super::{
    blocked_product, coalesce, coalesce_with, composition, composition_tiler, filter, flat_divide,
    flat_product, logical_divide, logical_product, raked_product, tile_to_shape, tiled_divide,
    tiled_product, zipped_divide, zipped_product, IntTuple, Layout, LayoutError, Swizzle, Tiler,
};

/// CuTe's `ComposedLayout<Swizzle, Offset, Layout>`: `i -> swizzle(offset + layout(i))`.
///
/// rute restricts the outer function to a [`Swizzle`]: that is the only composed layout kernels use.
///
/// ```
/// use dsl_core::layout::{ComposedLayout, Swizzle};
/// let c = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, "(8,64):(64,1)".parse().unwrap());
/// assert_eq!(c.to_string(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
/// assert_eq!(c.eval(1).unwrap(), 64 ^ 8); // row 1 has its 16-byte chunks permuted
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ComposedLayout {
    /// The outer swizzle.
    pub swizzle: Swizzle,
    /// The offset added before swizzling.
    pub offset: i64,
    /// The inner layout.
    pub layout: Layout,
}

impl ComposedLayout {
    /// CuTe's `make_composed_layout(swizzle, offset, layout)`.
    pub fn new(swizzle: Swizzle, offset: i64, layout: Layout) -> ComposedLayout {
        ComposedLayout {
            swizzle,
            offset,
            layout,
        }
    }

    /// The same swizzle and offset around another inner layout (how CuTe lifts every
    /// domain-reshaping operation to composed layouts).
    pub fn with_layout(&self, layout: Layout) -> ComposedLayout {
        ComposedLayout::new(self.swizzle, self.offset, layout)
    }

    fn outer(&self, inner: i64) -> Result<i64, LayoutError> {
        let shifted = self
            .offset
            .checked_add(inner)
            .ok_or_else(|| LayoutError::Overflow {
                op: "eval",
                args: self.to_string(),
            })?;
        Ok(self.swizzle.apply(shifted))
    }

    /// The offset of linear index `i`: `swizzle(offset + layout(i))`.
    pub fn eval(&self, i: i64) -> Result<i64, LayoutError> {
        self.outer(self.layout.eval(i)?)
    }

    /// The offset of a coordinate: `swizzle(offset + layout(crd))`.
    pub fn crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        self.outer(self.layout.crd2idx(crd)?)
    }

    /// CuTe's `size`: the size of the inner layout (it defines the domain).
    pub fn size(&self) -> i64 {
        self.layout.size()
    }

    /// CuTe's `cosize` of a swizzled composed layout: the cosize of the inner layout (CuTe's
    /// `swizzle_layout.hpp` does the same; the swizzle permutes offsets inside that span when the
    /// span is a multiple of the swizzle's period).
    pub fn cosize(&self) -> i64 {
        self.layout.cosize()
    }

    /// CuTe's `rank`: the rank of the inner layout.
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    /// CuTe's `depth`: the depth of the inner layout.
    pub fn depth(&self) -> usize {
        self.layout.depth()
    }

    /// All offsets `self(0), ..., self(size-1)`: the inner layout's listed as [`Layout::values`]
    /// lists them, each shifted and swizzled.
    pub fn values(&self) -> Result<Vec<i64>, LayoutError> {
        self.layout
            .values()?
            .into_iter()
            .map(|o| self.outer(o))
            .collect()
    }

    /// CuTe's `get<i>` / `layout<i>`: mode `i` of the inner layout, under the same swizzle and offset.
    pub fn mode(&self, i: usize) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(self.layout.mode(i)?))
    }

    /// CuTe's `select<i...>` on the inner layout.
    pub fn select(&self, indices: &[usize]) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(self.layout.select(indices)?))
    }

    /// CuTe's `flatten` of the inner layout.
    pub fn flatten(&self) -> ComposedLayout {
        self.with_layout(self.layout.flatten())
    }

    /// `(S o O o L) o B = S o O o (L o B)`: `R(i) == self(B(i))` for every `i < size(B)`.
    pub fn compose(&self, b: &Layout) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(composition(&self.layout, b)?))
    }

    /// Composition with a tiler, mode by mode on the inner layout: `S o O o (L o tiler)`.
    pub fn compose_tiler(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(composition_tiler(&self.layout, b)?))
    }

    /// CuTe's `coalesce` of the inner layout: the same function with as few modes as possible.
    pub fn coalesce(&self) -> ComposedLayout {
        self.with_layout(coalesce(&self.layout))
    }

    /// CuTe's `coalesce(layout, profile)` of the inner layout.
    pub fn coalesce_with(&self, profile: &IntTuple) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(coalesce_with(&self.layout, profile)?))
    }

    /// CuTe's `filter` of the inner layout.
    pub fn filter(&self) -> ComposedLayout {
        self.with_layout(filter(&self.layout))
    }

    /// CuTe's `logical_divide`: `S o O o logical_divide(L, tiler)`.
    pub fn logical_divide(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(logical_divide(&self.layout, b)?))
    }

    /// CuTe's `zipped_divide`: `S o O o zipped_divide(L, tiler)`.
    pub fn zipped_divide(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(zipped_divide(&self.layout, b)?))
    }

    /// CuTe's `tiled_divide`: `S o O o tiled_divide(L, tiler)`.
    pub fn tiled_divide(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(tiled_divide(&self.layout, b)?))
    }

    /// CuTe's `flat_divide`: `S o O o flat_divide(L, tiler)`.
    pub fn flat_divide(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(flat_divide(&self.layout, b)?))
    }

    /// CuTe's `logical_product(ComposedLayout, B)`: `S o O o logical_product(L, B)`.
    pub fn logical_product(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(logical_product(&self.layout, b)?))
    }

    /// CuTe's `zipped_product`: `S o O o zipped_product(L, B)`.
    pub fn zipped_product(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(zipped_product(&self.layout, b)?))
    }

    /// CuTe's `tiled_product`: `S o O o tiled_product(L, B)`.
    pub fn tiled_product(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(tiled_product(&self.layout, b)?))
    }

    /// CuTe's `flat_product`: `S o O o flat_product(L, B)`.
    pub fn flat_product(&self, b: &Tiler) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(flat_product(&self.layout, b)?))
    }

    /// CuTe's `blocked_product`: `S o O o blocked_product(L, B)`.
    pub fn blocked_product(&self, b: &Layout) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(blocked_product(&self.layout, b)?))
    }

    /// CuTe's `raked_product`: `S o O o raked_product(L, B)`.
    pub fn raked_product(&self, b: &Layout) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(raked_product(&self.layout, b)?))
    }

    /// CuTe's `tile_to_shape`: `S o O o tile_to_shape(L, shape, order)`.
    pub fn tile_to_shape(
        &self,
        shape: &IntTuple,
        order: Option<&IntTuple>,
    ) -> Result<ComposedLayout, LayoutError> {
        Ok(self.with_layout(tile_to_shape(&self.layout, shape, order)?))
    }
}

impl fmt::Display for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(b: i64, m: i64, s: i64) -> Swizzle {
        Swizzle::new(b, m, s).unwrap()
    }

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn prints_like_cute() {
        let c = ComposedLayout::new(sw(3, 3, 3), 0, lay("(8,32):(32,1)"));
        assert_eq!(c.to_string(), "Sw<3,3,3> o 0 o (8,32):(32,1)");
        let c = ComposedLayout::new(sw(2, 1, -3), 38, lay("(3,8):(8,1)"));
        assert_eq!(c.to_string(), "Sw<2,1,-3> o 38 o (3,8):(8,1)");
    }

    /// Brute force: the swizzle's definition applied bit by bit to `offset + L(i)`.
    fn swizzle_by_bits(s: Swizzle, x: i64) -> i64 {
        let (b, m, sh) = (s.bits() as i64, s.base() as i64, s.shift() as i64);
        let mut out = x;
        for k in 0..b {
            let (src, dst) = if sh >= 0 {
                (m + sh + k, m + k)
            } else {
                (m + k, m - sh + k)
            };
            out ^= ((x >> src) & 1) << dst;
        }
        out
    }

    #[test]
    fn eval_is_swizzle_of_offset_plus_layout() {
        let cases = [
            (sw(3, 3, 3), 0, "(8,64):(64,1)"),
            (sw(2, 1, -3), 38, "(3,8):(8,1)"),
            (sw(2, 4, 3), 5, "((2,4),(8,2)):((1,128),(16,2))"),
            (sw(1, 0, -2), 7, "(4,4):(-1,4)"),
            (sw(0, 4, 3), 3, "(4,8):(8,1)"),
        ];
        for (s, o, l) in cases {
            let layout = lay(l);
            let c = ComposedLayout::new(s, o, layout.clone());
            assert_eq!(c.size(), layout.size());
            assert_eq!(c.cosize(), layout.cosize());
            assert_eq!(c.rank(), layout.rank());
            assert_eq!(c.depth(), layout.depth());
            let vals = c.values().unwrap();
            for i in 0..layout.size() {
                let want = swizzle_by_bits(s, o + layout.eval(i).unwrap());
                assert_eq!(c.eval(i).unwrap(), want, "{c} at {i}");
                assert_eq!(vals[i as usize], want);
            }
        }
    }

    #[test]
    fn coordinates_and_modes() {
        let c = ComposedLayout::new(sw(3, 3, 3), 0, lay("(8,64):(64,1)"));
        let crd = IntTuple::ints(&[1, 2]);
        assert_eq!(c.crd2idx(&crd).unwrap(), swizzle_by_bits(sw(3, 3, 3), 66));
        let m1 = c.mode(1).unwrap();
        assert_eq!(m1.to_string(), "Sw<3,3,3> o 0 o 64:1");
        assert!(c.mode(2).is_err());
        let sel = c.select(&[1, 0]).unwrap();
        assert_eq!(sel.layout.to_string(), "(64,8):(1,64)");
        let nested = ComposedLayout::new(sw(1, 0, 1), 2, lay("((2,2),3):((1,2),4)"));
        assert_eq!(
            nested.flatten().to_string(),
            "Sw<1,0,1> o 2 o (2,2,3):(1,2,4)"
        );
    }

    #[test]
    fn overflow_is_an_error() {
        let c = ComposedLayout::new(sw(1, 0, 1), i64::MAX, lay("2:1"));
        assert!(c.eval(1).is_err());
    }

    // These need the algebra (composition, divide, product); their expected values are CuTe's.
    #[test]
    fn composition_on_the_right_applies_to_the_inner_layout() {
        let c = ComposedLayout::new(sw(3, 3, 3), 0, lay("(8,64):(64,1)"));
        let r = c.compose(&lay("(4,8):(1,4)")).unwrap();
        // (8,64):(64,1) o (4,8):(1,4) = (4,(2,4)):(64,(256,1)) by CuTe's composition rules.
        assert_eq!(r.to_string(), "Sw<3,3,3> o 0 o (4,(2,4)):(64,(256,1))");
        for i in 0..32 {
            let b = lay("(4,8):(1,4)").eval(i).unwrap();
            assert_eq!(r.eval(i).unwrap(), c.eval(b).unwrap());
        }
    }

    #[test]
    fn divide_keeps_swizzle_and_offset() {
        let c = ComposedLayout::new(sw(2, 0, 2), 4, lay("16:1"));
        let tiler = Tiler::Layout(lay("4:1"));
        let d = c.logical_divide(&tiler).unwrap();
        assert_eq!(d.to_string(), "Sw<2,0,2> o 4 o (4,4):(1,4)");
        let z = c.zipped_divide(&tiler).unwrap();
        assert_eq!(z.values().unwrap(), c.values().unwrap());
    }
}
