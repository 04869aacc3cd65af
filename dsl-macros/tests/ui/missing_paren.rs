use dsl_macros::layout;

fn main() {
    let _ = layout!((8,32:(32,1)));
}
