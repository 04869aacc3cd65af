use dsl_core::layout::Layout;
use dsl_macros::layout;

fn main() {
    // Only the macro's own errors, no type mismatch on top of them.
    let _: Layout = layout!((4,8):(1,2,3) junk);
    let _: Layout = layout!((0,8):(1,(2,3)));
}
