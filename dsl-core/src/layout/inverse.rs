//! Right and left inverses. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError};

/// CuTe's `right_inverse(A)`.
pub fn right_inverse(l: &Layout) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "right_inverse",
        l.to_string(),
        "not written yet",
    ))
}

/// CuTe's `left_inverse(A)`.
pub fn left_inverse(l: &Layout) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "left_inverse",
        l.to_string(),
        "not written yet",
    ))
}
