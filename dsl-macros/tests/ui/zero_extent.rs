use dsl_macros::layout;

fn main() {
    let _ = layout!((4,0):(1,4));
    let _ = layout!((-4,2));
}
