//! `Layout`: a shape and a congruent stride, the function from coordinates to offsets.

use std::fmt;

use super::arith::{Fail, Res};
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

/// Why a shape and a stride do not make a layout.
enum Invalid {
    NotCongruent,
    BadExtent(i64),
    Overflow,
}

/// The rules every layout keeps: shape and stride congruent, every extent at least 1, and the size
/// and the span `sum_i (s_i - 1) * |d_i|` (so every offset of an index below the size, and the
/// cosize) within `i64`. One pass for each rule, in that order, so the first rule broken is the one
/// reported.
fn validate(shape: &IntTuple, stride: &IntTuple) -> Result<(), Invalid> {
    if !shape.congruent(stride) {
        return Err(Invalid::NotCongruent);
    }
    fn extents(s: &IntTuple) -> Result<(), Invalid> {
        match s {
            IntTuple::Int(e) if *e < 1 => Err(Invalid::BadExtent(*e)),
            IntTuple::Int(_) => Ok(()),
            IntTuple::Tuple(ms) => ms.iter().try_for_each(extents),
        }
    }
    extents(shape)?;
    /// `size` and `1 + span` so far.
    fn range(s: &IntTuple, d: &IntTuple, acc: &mut (i64, i64)) -> Option<()> {
        match (s, d) {
            (IntTuple::Int(e), IntTuple::Int(d)) => {
                acc.0 = acc.0.checked_mul(*e)?;
                acc.1 = acc.1.checked_add((e - 1).checked_mul(d.checked_abs()?)?)?;
                Some(())
            }
            (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
                ss.iter().zip(ds).try_for_each(|(s, d)| range(s, d, acc))
            }
            _ => None,
        }
    }
    range(shape, stride, &mut (1, 1)).ok_or(Invalid::Overflow)
}

impl Layout {
    /// A layout from a shape and a stride; they must be congruent, every extent at least 1, and the
    /// size and every offset (the cosize) must fit in `i64`.
    ///
    /// Every layout rute makes is made here, so every `Layout` keeps these rules: `size`, `cosize`,
    /// `eval` of an index below the size and `idx2crd` never overflow. The algebra's operations
    /// return an error where their result would break them.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout, LayoutError> {
        match validate(&shape, &stride) {
            Ok(()) => Ok(Layout { shape, stride }),
            Err(Invalid::NotCongruent) => Err(LayoutError::NotCongruent {
                shape: shape.to_string(),
                stride: stride.to_string(),
            }),
            Err(Invalid::BadExtent(extent)) => Err(LayoutError::BadExtent {
                shape: shape.to_string(),
                extent,
            }),
            Err(Invalid::Overflow) => Err(LayoutError::Overflow {
                op: "make_layout",
                args: format!("{shape}:{stride}"),
            }),
        }
    }

    /// [`Layout::new`] for the algebra's results: a result that overflows is [`Fail::Overflow`], so
    /// that the operation's name and arguments go into the error ([`Fail::at`]).
    pub(crate) fn checked(shape: IntTuple, stride: IntTuple) -> Res<Layout> {
        match validate(&shape, &stride) {
            Ok(()) => Ok(Layout { shape, stride }),
            Err(Invalid::Overflow) => Err(Fail::Overflow),
            Err(_) => Layout::new(shape, stride)
                .map_err(|e| Fail::Rule(format!("the result breaks a layout's rules: {e}"))),
        }
    }

    /// CuTe's `Layout<_1,_0>`: one coordinate at offset 0.
    pub(crate) fn unit() -> Layout {
        Layout {
            shape: IntTuple::Int(1),
            stride: IntTuple::Int(0),
        }
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

    /// A layout whose modes are the given layouts (CuTe's `make_layout(l0, l1, ...)`), or a
    /// [`LayoutError::Overflow`] when their sizes or spans together leave `i64`.
    pub fn try_from_modes(modes: Vec<Layout>) -> Result<Layout, LayoutError> {
        let (shape, stride) = concat(modes);
        match validate(&shape, &stride) {
            Ok(()) => Ok(Layout { shape, stride }),
            // Modes that are layouts are congruent with extents >= 1: only the range can fail.
            Err(_) => Err(LayoutError::Overflow {
                op: "make_layout",
                args: mode_list(&shape, &stride),
            }),
        }
    }

    /// [`Layout::try_from_modes`] for the algebra's results (see [`Layout::checked`]).
    pub(crate) fn from_modes_checked(modes: Vec<Layout>) -> Res<Layout> {
        let (shape, stride) = concat(modes);
        Layout::checked(shape, stride)
    }

    /// [`Layout::try_from_modes`] for modes known to fit together, such as modes of one layout
    /// rearranged without repeats.
    ///
    /// # Panics
    ///
    /// When the modes' sizes or spans together leave `i64` (a bug in the caller: modes of unknown
    /// origin go through [`Layout::try_from_modes`]).
    pub fn from_modes(modes: Vec<Layout>) -> Layout {
        Layout::try_from_modes(modes).unwrap_or_else(|e| panic!("Layout::from_modes: {e}"))
    }

    /// Always `Ok`: every layout is range-checked when it is made (see [`Layout::new`]). Kept for
    /// callers that check a layout of unknown origin before evaluating it.
    pub fn check_range(&self) -> Result<(), LayoutError> {
        Ok(())
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
        fn span(s: &IntTuple, d: &IntTuple) -> i64 {
            match (s, d) {
                (IntTuple::Int(s), IntTuple::Int(d)) => (s - 1) * d.abs(),
                (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
                    ss.iter().zip(ds).map(|(s, d)| span(s, d)).sum()
                }
                _ => 0,
            }
        }
        // Within i64: Layout::new checked 1 + span.
        1 + span(&self.shape, &self.stride)
    }

    /// CuTe's `rank`: the number of top-level modes (1 for an int shape).
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// CuTe's `depth` of the shape.
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// The top-level (shape, stride) pairs; an int-shaped layout is its own single mode.
    fn mode_parts(&self) -> (&[IntTuple], &[IntTuple]) {
        match (&self.shape, &self.stride) {
            (IntTuple::Tuple(s), IntTuple::Tuple(d)) => (s, d),
            (s, d) => (std::slice::from_ref(s), std::slice::from_ref(d)),
        }
    }

    /// The top-level modes as layouts; a rank-1 layout with an int shape is its own single mode.
    pub fn modes(&self) -> Vec<Layout> {
        let (s, d) = self.mode_parts();
        // A mode of a layout keeps its rules: its size and span are at most the layout's.
        s.iter()
            .zip(d)
            .map(|(s, d)| Layout {
                shape: s.clone(),
                stride: d.clone(),
            })
            .collect()
    }

    /// [`Layout::modes`], moving them out of the layout instead of copying them.
    pub fn into_modes(self) -> Vec<Layout> {
        match (self.shape, self.stride) {
            (IntTuple::Tuple(s), IntTuple::Tuple(d)) => s
                .into_iter()
                .zip(d)
                .map(|(shape, stride)| Layout { shape, stride })
                .collect(),
            (shape, stride) => vec![Layout { shape, stride }],
        }
    }

    /// CuTe's `layout<i>` / `get<i>`: mode `i`.
    pub fn mode(&self, i: usize) -> Result<Layout, LayoutError> {
        let (s, d) = self.mode_parts();
        match (s.get(i), d.get(i)) {
            (Some(s), Some(d)) => Ok(Layout {
                shape: s.clone(),
                stride: d.clone(),
            }),
            _ => Err(LayoutError::ModeOutOfRange {
                layout: self.to_string(),
                rank: s.len(),
                index: i,
            }),
        }
    }

    /// CuTe's `select<i...>`: the layout of the chosen modes, in the order given. A mode chosen
    /// more than once counts again in the size, which must fit in `i64`.
    pub fn select(&self, indices: &[usize]) -> Result<Layout, LayoutError> {
        let (s, d) = self.mode_parts();
        let mut shape = Vec::with_capacity(indices.len());
        let mut stride = Vec::with_capacity(indices.len());
        for &i in indices {
            let (Some(si), Some(di)) = (s.get(i), d.get(i)) else {
                return Err(LayoutError::ModeOutOfRange {
                    layout: self.to_string(),
                    rank: s.len(),
                    index: i,
                });
            };
            shape.push(si.clone());
            stride.push(di.clone());
        }
        Layout::checked(IntTuple::Tuple(shape), IntTuple::Tuple(stride)).map_err(|f| {
            let idx: Vec<String> = indices.iter().map(usize::to_string).collect();
            f.at("select", format!("{self}, {}", idx.join(", ")))
        })
    }

    /// The offset of linear index `idx` (CuTe's `layout(idx)`); the index is split over the modes
    /// colexicographically.
    pub fn eval(&self, idx: i64) -> Result<i64, LayoutError> {
        self.shape.crd2idx_valid(&IntTuple::Int(idx), &self.stride)
    }

    /// The offset of a coordinate (CuTe's `layout(crd)` / `crd2idx`). The coordinate is an int or a
    /// tuple congruent to a prefix of the shape's hierarchy.
    pub fn crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        self.shape.crd2idx_valid(crd, &self.stride)
    }

    /// CuTe's `idx2crd`: the natural coordinate of linear index `idx` in this layout's shape.
    pub fn idx2crd(&self, idx: i64) -> IntTuple {
        self.shape.idx2crd_valid(idx)
    }

    /// All offsets `L(0), ..., L(size-1)` (for layouts small enough to list: it allocates `size`),
    /// or the overflow `eval` reports where an offset is past i64. The index runs over the
    /// flattened modes as a mixed-radix counter, one addition per step: a host proof over every
    /// value of every thread's fragment costs a list, not an `eval` each.
    pub fn values(&self) -> Result<Vec<i64>, LayoutError> {
        let (shape, stride) = (self.shape.flatten_ints(), self.stride.flatten_ints());
        let n = self.size().max(0) as usize;
        let mut out = Vec::with_capacity(n);
        let (mut crd, mut off) = (vec![0i64; shape.len()], 0i64);
        for _ in 0..n {
            out.push(off);
            for d in 0..shape.len() {
                crd[d] += 1;
                let next = off.checked_add(stride[d]);
                let wrapped = next.and_then(|o| o.checked_sub(stride[d].checked_mul(shape[d])?));
                match (crd[d] < shape[d], next, wrapped) {
                    (true, Some(o), _) => {
                        off = o;
                        break;
                    }
                    (false, _, Some(o)) => {
                        off = o;
                        crd[d] = 0;
                    }
                    // A step past i64: each offset as `eval` gives it, its overflow the
                    // error (a wrapped sum may come back in range: only `eval` tells).
                    _ => return (0..self.size()).map(|i| self.eval(i)).collect(),
                }
            }
        }
        Ok(out)
    }

    /// CuTe's `flatten`: the same function with a flat (depth <= 1) shape.
    pub fn flatten(&self) -> Layout {
        Layout {
            shape: self.shape.flatten(),
            stride: self.stride.flatten(),
        }
    }
}

/// The shape and stride of the layout whose modes are `modes`.
fn concat(modes: Vec<Layout>) -> (IntTuple, IntTuple) {
    let (shape, stride) = modes.into_iter().map(|l| (l.shape, l.stride)).unzip();
    (IntTuple::Tuple(shape), IntTuple::Tuple(stride))
}

/// `s0:d0, s1:d1, ...` of a tuple shape and stride, for an error naming the modes.
fn mode_list(shape: &IntTuple, stride: &IntTuple) -> String {
    let (IntTuple::Tuple(s), IntTuple::Tuple(d)) = (shape, stride) else {
        return format!("{shape}:{stride}");
    };
    let items: Vec<String> = s.iter().zip(d).map(|(s, d)| format!("{s}:{d}")).collect();
    items.join(", ")
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `values` lists what `eval` gives, index by index: nested modes, zero, negative and
    /// unit-extent strides, a scalar, and offsets past i64 (listed as `eval` lists them).
    #[test]
    fn values_list_what_eval_gives() {
        for text in [
            "(2,(3,4)):(1,(2,6))",
            "((2,2),(3,(1,5))):((0,4),(1,(7,-3)))",
            "7:3",
            "(4,(2,3)):(-5,(100,1))",
            "1:0",
            "(2,3):(4611686018427387904,1)",
        ] {
            let l: Layout = text.parse().unwrap();
            let want: Result<Vec<i64>, LayoutError> = (0..l.size()).map(|i| l.eval(i)).collect();
            assert_eq!(l.values(), want, "{text}");
        }
        // A layout whose offsets pass i64 is refused when it is made: `values` never meets one.
        assert!("(3,2):(4611686018427387904,1)".parse::<Layout>().is_err());
    }
}
