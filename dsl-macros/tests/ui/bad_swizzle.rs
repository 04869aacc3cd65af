use dsl_macros::layout;

fn main() {
    let _ = layout!(Sw<3,3,2> o (8,32):(32,1));
}
