//! Recast between element widths. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError};

/// CuTe's `recast_layout<Old, New>(layout)` with element widths in bits.
pub fn recast_layout(l: &Layout, old_bits: u32, new_bits: u32) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "recast_layout",
        format!("{l}, {old_bits}, {new_bits}"),
        "not written yet",
    ))
}

/// CuTe's `upcast<N>(layout)`.
pub fn upcast(l: &Layout, n: i64) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "upcast",
        format!("{l}, {n}"),
        "not written yet",
    ))
}

/// CuTe's `downcast<N>(layout)`.
pub fn downcast(l: &Layout, n: i64) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "downcast",
        format!("{l}, {n}"),
        "not written yet",
    ))
}
