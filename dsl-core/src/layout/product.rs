//! The product family. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError, Tiler};

fn unwritten(op: &'static str, a: &Layout, b: &dyn std::fmt::Display) -> LayoutError {
    LayoutError::precondition(op, format!("{a}, {b}"), "not written yet")
}
/// CuTe's `logical_product(A, tiler)`.
pub fn logical_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("logical_product", a, b))
}
/// CuTe's `zipped_product(A, tiler)`.
pub fn zipped_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("zipped_product", a, b))
}
/// CuTe's `tiled_product(A, tiler)`.
pub fn tiled_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("tiled_product", a, b))
}
/// CuTe's `flat_product(A, tiler)`.
pub fn flat_product(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    Err(unwritten("flat_product", a, b))
}
/// CuTe's `blocked_product(A, B)`.
pub fn blocked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    Err(unwritten("blocked_product", a, b))
}
/// CuTe's `raked_product(A, B)`.
pub fn raked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    Err(unwritten("raked_product", a, b))
}
