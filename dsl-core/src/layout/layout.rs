//! `Layout`: a shape and a congruent stride, the function from coordinates to offsets.

use std::fmt;

use super::error::LayoutError;
use super::int_tuple::IntTuple;

/// A CuTe layout: a hierarchical shape and a congruent stride.
///
/// It maps a coordinate (a linear index, or a coordinate congruent to any prefix of the shape's
/// hierarchy) to an offset: `L(c) = sum_i c_i * d_i` over the natural coordinate. Prints and parses in
/// CuTe's notation:
///
/// ```
/// use dsl_core::layout::Layout;
/// let l: Layout = "((2,4),8):((1,2),8)".parse().unwrap();
/// assert_eq!(l.to_string(), "((2,4),8):((1,2),8)");
/// assert_eq!(l.size(), 64);
/// assert_eq!(l.eval(3).unwrap(), 3);
/// // A bare shape gets CuTe's default (column-major) strides.
/// assert_eq!("(4,3)".parse::<Layout>().unwrap().to_string(), "(4,3):(1,4)");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

fn check_extents(shape: &IntTuple) -> Result<(), LayoutError> {
    for e in shape.flatten_ints() {
        if e < 1 {
            return Err(LayoutError::BadExtent {
                shape: shape.to_string(),
                extent: e,
            });
        }
    }
    Ok(())
}

/// Every offset a layout can produce for an index below its size must fit in `i64`, so that
/// `size`, `cosize` and `eval` never overflow afterwards.
fn check_range(shape: &IntTuple, stride: &IntTuple) -> Result<(), LayoutError> {
    let overflow = || LayoutError::Overflow {
        op: "make_layout",
        args: format!("{shape}:{stride}"),
    };
    shape.checked_product().ok_or_else(overflow)?;
    let mut span = 1i64;
    for (s, d) in shape.flatten_ints().into_iter().zip(stride.flatten_ints()) {
        let term = (s - 1)
            .checked_mul(d.checked_abs().ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
        span = span.checked_add(term).ok_or_else(overflow)?;
    }
    Ok(())
}

impl Layout {
    /// A layout from a shape and a stride; they must be congruent and every extent at least 1.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout, LayoutError> {
        if !shape.congruent(&stride) {
            return Err(LayoutError::NotCongruent {
                shape: shape.to_string(),
                stride: stride.to_string(),
            });
        }
        check_extents(&shape)?;
        check_range(&shape, &stride)?;
        Ok(Layout { shape, stride })
    }

    /// The compact column-major layout of `shape` (CuTe's default, `make_layout(shape)`).
    pub fn col_major(shape: IntTuple) -> Result<Layout, LayoutError> {
        let stride = shape.compact_col_major();
        Layout::new(shape, stride)
    }

    /// The compact row-major layout of `shape` (CuTe's `LayoutRight`).
    pub fn row_major(shape: IntTuple) -> Result<Layout, LayoutError> {
        let stride = shape.compact_row_major();
        Layout::new(shape, stride)
    }

    /// A rank-1 layout `n:d`.
    pub fn vector(n: i64, d: i64) -> Result<Layout, LayoutError> {
        Layout::new(IntTuple::Int(n), IntTuple::Int(d))
    }

    /// Build without checks, for results the algebra has already proven congruent.
    pub(crate) fn from_parts(shape: IntTuple, stride: IntTuple) -> Layout {
        debug_assert!(shape.congruent(&stride), "{shape} vs {stride}");
        Layout { shape, stride }
    }

    /// A layout whose modes are the given layouts (CuTe's `make_layout(l0, l1, ...)`).
    pub fn from_modes(modes: Vec<Layout>) -> Layout {
        let (shape, stride) = modes.into_iter().map(|l| (l.shape, l.stride)).unzip();
        Layout {
            shape: IntTuple::Tuple(shape),
            stride: IntTuple::Tuple(stride),
        }
    }

    /// Ok when `size` and every offset of an index below it fit in `i64` (always so for a layout
    /// made by [`Layout::new`]; the algebra's results are checked with it where they leave to users
    /// who may evaluate them).
    pub fn check_range(&self) -> Result<(), LayoutError> {
        check_range(&self.shape, &self.stride)
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// CuTe's `size`: the number of coordinates, the product of the shape.
    pub fn size(&self) -> i64 {
        self.shape.product()
    }

    /// CuTe's `cosize`: the size of the codomain, `1 + sum_i (s_i - 1) * |d_i|` (`L(size-1) + 1`
    /// when no stride is negative).
    pub fn cosize(&self) -> i64 {
        let strides = self.stride.flatten_ints();
        1 + self
            .shape
            .flatten_ints()
            .iter()
            .zip(&strides)
            .map(|(s, d)| (s - 1) * d.abs())
            .sum::<i64>()
    }

    /// CuTe's `rank`: the number of top-level modes (1 for an int shape).
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// CuTe's `depth` of the shape.
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// The top-level modes as layouts; a rank-1 layout with an int shape is its own single mode.
    pub fn modes(&self) -> Vec<Layout> {
        match (&self.shape, &self.stride) {
            (IntTuple::Tuple(s), IntTuple::Tuple(d)) => s
                .iter()
                .zip(d)
                .map(|(s, d)| Layout::from_parts(s.clone(), d.clone()))
                .collect(),
            _ => vec![self.clone()],
        }
    }

    /// CuTe's `layout<i>` / `get<i>`: mode `i`.
    pub fn mode(&self, i: usize) -> Result<Layout, LayoutError> {
        let modes = self.modes();
        modes
            .get(i)
            .cloned()
            .ok_or_else(|| LayoutError::ModeOutOfRange {
                layout: self.to_string(),
                rank: modes.len(),
                index: i,
            })
    }

    /// CuTe's `select<i...>`: the layout of the chosen modes, in the order given.
    pub fn select(&self, indices: &[usize]) -> Result<Layout, LayoutError> {
        Ok(Layout::from_modes(
            indices
                .iter()
                .map(|&i| self.mode(i))
                .collect::<Result<_, _>>()?,
        ))
    }

    /// The offset of linear index `idx` (CuTe's `layout(idx)`); the index is split over the modes
    /// colexicographically.
    pub fn eval(&self, idx: i64) -> Result<i64, LayoutError> {
        self.shape.crd2idx(&IntTuple::Int(idx), &self.stride)
    }

    /// The offset of a coordinate (CuTe's `layout(crd)` / `crd2idx`). The coordinate is an int or a
    /// tuple congruent to a prefix of the shape's hierarchy.
    pub fn crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        self.shape.crd2idx(crd, &self.stride)
    }

    /// CuTe's `idx2crd`: the natural coordinate of linear index `idx` in this layout's shape.
    pub fn idx2crd(&self, idx: i64) -> IntTuple {
        self.shape.idx2crd(idx)
    }

    /// All offsets `L(0), ..., L(size-1)`.
    pub fn values(&self) -> Vec<i64> {
        (0..self.size())
            .map(|i| self.eval(i).unwrap_or(0))
            .collect()
    }

    /// CuTe's `flatten`: the same function with a flat (depth <= 1) shape.
    pub fn flatten(&self) -> Layout {
        Layout::from_parts(self.shape.flatten(), self.stride.flatten())
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}
