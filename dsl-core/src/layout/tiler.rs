//! `Tiler`: what divides and products take as their second argument: a layout, or a tuple of tilers
//! applied mode by mode.

use std::fmt;

use super::layout::Layout;

/// A CuTe tiler: a single [`Layout`] (applied to the whole layout), or a tuple whose `i`-th item is
/// applied to mode `i` (an integer `n` in a tuple means the layout `n:1`, as a CuTe `Shape` tiler does).
///
/// Printed as CuTe prints it: `(2:1,4:1)`. Note that the one-mode tiler `(7:1)` differs from the
/// layout `7:1`: the tiler is applied to mode 0 only.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Tiler {
    /// A layout applied to the whole (flattened-to-1-D) layout.
    Layout(Layout),
    /// One tiler per leading mode; modes past its length are left alone.
    Tuple(Vec<Tiler>),
}

impl From<Layout> for Tiler {
    fn from(l: Layout) -> Self {
        Tiler::Layout(l)
    }
}

impl Tiler {
    /// The tiler `(n0:1, n1:1, ...)`, CuTe's shape used as a tiler.
    pub fn from_shape(extents: &[i64]) -> Result<Tiler, super::LayoutError> {
        Ok(Tiler::Tuple(
            extents
                .iter()
                .map(|&n| Layout::vector(n, 1).map(Tiler::Layout))
                .collect::<Result<_, _>>()?,
        ))
    }
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Tuple(t) => {
                f.write_str("(")?;
                for (i, m) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str(")")
            }
        }
    }
}
