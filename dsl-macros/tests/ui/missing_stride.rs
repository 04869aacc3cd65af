use dsl_macros::layout;

fn main() {
    let _ = layout!((4,8):);
    let _ = layout!((4,8) (1,4));
    let _ = layout!();
}
