//! # dsl-macros
//!
//! rute's procedural macros. Each one reads a notation at compile time, reports mistakes as compile
//! errors pointing at the offending token, and expands to plain calls into `dsl-core`, so everything a
//! macro writes a user could write by hand. Today the crate holds [`layout!`]; `#[kernel]`,
//! `tiled_copy!` and `tiled_mma!` will join it, each in its own module.
//!
//! The expansions name `::dsl_core` by its absolute path: a crate using these macros must depend on
//! `dsl-core` itself.
//!
//! ```
//! use dsl_core::layout::{ComposedLayout, Layout};
//! use dsl_macros::layout;
//!
//! // An 8x32 row-major tile, checked when this example compiles.
//! let tile: Layout = layout!((8,32):(32,1));
//! assert_eq!(tile, "(8,32):(32,1)".parse().unwrap());
//! assert_eq!(tile.eval(1).unwrap(), 32);
//!
//! // Rust constants stand for integers; their values are checked where the layout is built.
//! const BM: i64 = 128;
//! const BK: i64 = 32;
//! let smem = layout!((BM,BK):(BK,1));
//! assert_eq!(smem.to_string(), "(128,32):(32,1)");
//!
//! // A swizzled layout: i -> Sw<3,3,3>(0 + tile(i)).
//! let atom: ComposedLayout = layout!(Sw<3,3,3> o 0 o (8,64):(64,1));
//! assert_eq!(atom.swizzle.apply(atom.layout.eval(1).unwrap()), 72);
//! ```
//!
//! A layout that is not congruent does not compile:
//!
//! ```compile_fail
//! let bad = dsl_macros::layout!((4,8):(1));
//! ```

mod layout_macro;

use proc_macro::TokenStream;

/// A CuTe layout written in CuTe's notation, checked at compile time.
///
/// Expands to a [`dsl_core::layout::Layout`], or to a [`dsl_core::layout::ComposedLayout`] when a
/// swizzle comes first. The notation is the one `"...".parse::<Layout>()` reads:
///
/// | form | meaning |
/// |------|---------|
/// | `layout!(8:1)` | a rank-1 layout |
/// | `layout!((8,32):(32,1))` | shape `(8,32)`, stride `(32,1)` |
/// | `layout!(((2,4),8):((1,2),8))` | nested modes; the stride has the shape's nesting |
/// | `layout!((4,2):(-1,4))` | negative strides |
/// | `layout!((4,8))`, `layout!((4,8):_)` | CuTe's default stride: compact column-major, `(1,4)` |
/// | `layout!(Sw<3,3,3> o (8,32):(32,1))` | `i -> Sw<3,3,3>(L(i))`; `Swizzle<3,3,3>` also reads |
/// | `layout!(Sw<3,3,3> o 16 o (8,32):(32,1))` | `i -> Sw<3,3,3>(16 + L(i))`; the offset defaults to 0 |
/// | `layout!((BM,BK):(BK,1))`, `layout!(({2*BM},8))` | Rust constants or `{expr}` for any integer |
///
/// # Compile-time checks
///
/// The stride must be congruent to the shape (the same nesting, one stride per mode), every literal
/// extent must be at least 1, and a literal swizzle must satisfy CuTe's rule `|S| >= B`. Each error
/// points at the offending token and says what to write instead.
///
/// # Constants: checked at run time
///
/// A constant's name or a braced `{expr}` may stand for any integer (of any primitive integer type).
/// The structure is still checked at compile time, but the values are only known where the macro
/// expands, so the layout is built there through `Layout::new` (and `Swizzle::new`): an extent below
/// 1, a bad swizzle, or a value that does not fit in `i64` **panics** with a message naming the
/// layout as written, e.g. `layout!((BM,BK):(BK,1)): shape (0,32) has extent 0: ...`. A layout made
/// only of literals cannot fail at run time. To negate a constant write `{-BK}`.
///
/// # Dependencies
///
/// The expansion names `::dsl_core::layout::...`: the calling crate must depend on `dsl-core`.
///
/// ```
/// use dsl_macros::layout;
/// const N: usize = 4;
/// let l = layout!(((2,N),8):((1,2),{2 * N as i64}));
/// assert_eq!(l.to_string(), "((2,4),8):((1,2),8)");
/// ```
#[proc_macro]
pub fn layout(input: TokenStream) -> TokenStream {
    layout_macro::layout(input.into()).into()
}
