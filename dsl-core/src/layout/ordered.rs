//! make_ordered_layout and tile_to_shape. (Interface fixed; bodies being written.)
use super::{IntTuple, Layout, LayoutError};

/// CuTe's `make_ordered_layout(shape, order)`.
pub fn make_ordered_layout(shape: &IntTuple, order: &IntTuple) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "make_ordered_layout",
        format!("{shape}, {order}"),
        "not written yet",
    ))
}

/// CuTe's `tile_to_shape(block, trg_shape, ord_shape)`.
pub fn tile_to_shape(
    block: &Layout,
    shape: &IntTuple,
    order: Option<&IntTuple>,
) -> Result<Layout, LayoutError> {
    Err(LayoutError::precondition(
        "tile_to_shape",
        format!("{block}, {shape}, {order:?}"),
        "not written yet",
    ))
}
