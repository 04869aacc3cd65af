//! Coalesce and filter. (Interface fixed; bodies being written.)
use super::{IntTuple, Layout, LayoutError};

/// CuTe's `coalesce(layout)`: the same function of the index with as few modes as possible.
pub fn coalesce(l: &Layout) -> Layout {
    l.clone()
}

/// CuTe's `coalesce(layout, trg_profile)`: coalesce each mode of the profile separately.
pub fn coalesce_with(l: &Layout, profile: &IntTuple) -> Result<Layout, LayoutError> {
    let _ = profile;
    Ok(l.clone())
}

/// CuTe's `filter_zeros`: replace stride-0 modes with extent 1.
pub fn filter_zeros(l: &Layout) -> Layout {
    l.clone()
}

/// CuTe's `filter`: `coalesce(filter_zeros(l))`.
pub fn filter(l: &Layout) -> Layout {
    l.clone()
}
