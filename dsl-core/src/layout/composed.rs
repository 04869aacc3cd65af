//! Composed layouts `swizzle o offset o layout`. (Interface fixed; bodies being written.)
use std::fmt;

use super::{Layout, Swizzle};

/// CuTe's `ComposedLayout<Swizzle, Offset, Layout>`: `i -> swizzle(offset + layout(i))`.
///
/// rute restricts the outer function to a [`Swizzle`]: that is the only composed layout kernels use.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ComposedLayout {
    /// The outer swizzle.
    pub swizzle: Swizzle,
    /// The offset added before swizzling.
    pub offset: i64,
    /// The inner layout.
    pub layout: Layout,
}

impl fmt::Display for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}
