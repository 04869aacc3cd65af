//! CuTe's layout algebra: shapes, strides, layouts and the operations on them.
//!
//! CuTe's C++ (`include/cute/layout.hpp` and friends) is the specification: every operation keeps
//! CuTe's name and meaning. Where rute differs, the item's docs say so.
//!
//! ```
//! use dsl_core::layout::Layout;
//! let l: Layout = "(4,8):(8,1)".parse().unwrap();
//! assert_eq!(l.size(), 32);
//! assert_eq!(l.cosize(), 32);
//! ```

mod arith;
mod coalesce;
mod complement;
mod composed;
mod composition;
mod construct;
mod divide;
mod error;
pub mod expr;
mod int_tuple;
mod inverse;
#[allow(clippy::module_inception)]
mod layout;
mod ordered;
mod parse;
pub mod print;
mod product;
mod recast;
pub mod svg;
mod swizzle;
mod tiler;

pub use coalesce::{coalesce, coalesce_with, filter, filter_zeros};
pub use complement::{complement, complement_shape};
pub use composed::ComposedLayout;
pub use composition::{composition, composition_tiler};
pub use construct::{append, append_to_rank, prepend, shape_div, zip};
pub use divide::{flat_divide, logical_divide, tiled_divide, zipped_divide};
pub use error::LayoutError;
pub use int_tuple::IntTuple;
pub use inverse::{left_inverse, right_inverse};
pub use layout::Layout;
pub use ordered::{make_ordered_layout, tile_to_shape};
pub use parse::Cursor;
pub use product::{
    blocked_product, flat_product, logical_product, raked_product, tiled_product, zipped_product,
};
pub use recast::{downcast, recast_layout, upcast};
pub use swizzle::Swizzle;
pub use tiler::Tiler;
