use dsl_macros::layout;

fn main() {
    let _ = layout!(Swz<3,3,3> o (8,32):(32,1));
}
