//! Composition. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError, Tiler};

/// CuTe's `composition(A, B)`: `R(i) == A(B(i))` for every `i < size(B)`, `R` congruent to B.
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "composition",
        format!("{a}, {b}"),
        "not written yet",
    ))
}

/// CuTe's `composition(A, tiler)`: compose mode `i` of A with item `i` of the tiler.
pub fn composition_tiler(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "composition",
        format!("{a}, {b}"),
        "not written yet",
    ))
}
