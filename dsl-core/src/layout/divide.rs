//! The divide family. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError, Tiler};

fn unwritten(op: &'static str, a: &Layout, b: &Tiler) -> LayoutError {
    LayoutError::precondition(op, format!("{a}, {b}"), "not written yet")
}
/// CuTe's `logical_divide(A, tiler)`.
pub fn logical_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("logical_divide", a, b))
}
/// CuTe's `zipped_divide(A, tiler)`.
pub fn zipped_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("zipped_divide", a, b))
}
/// CuTe's `tiled_divide(A, tiler)`.
pub fn tiled_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("tiled_divide", a, b))
}
/// CuTe's `flat_divide(A, tiler)`.
pub fn flat_divide(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("flat_divide", a, b))
}
