//! Complement. (Interface fixed; bodies being written.)
use super::{Layout, LayoutError};

/// CuTe's `complement(A, cotarget)`.
pub fn complement(l: &Layout, cotarget: i64) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "complement",
        format!("{l}, {cotarget}"),
        "not written yet",
    ))
}
