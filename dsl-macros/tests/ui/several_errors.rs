use dsl_macros::layout;

fn main() {
    let _ = layout!(((0,4),8):((1,2,3),8));
}
