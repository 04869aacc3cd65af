use dsl_macros::layout;

fn main() {
    let _ = layout!(((2,4),8):((1,2,4),8));
    let _ = layout!(((2,4),8):(1,8));
    let _ = layout!(8:(1,2));
}
