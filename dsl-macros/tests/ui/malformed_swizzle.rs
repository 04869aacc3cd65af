use dsl_macros::layout;

fn main() {
    let _ = layout!(Sw<3,3> o (8,32):(32,1));
    let _ = layout!(Sw<3,3,3> (8,32):(32,1));
    let _ = layout!(Sw<3,3,3> o 0 o);
    let _ = layout!((8,32):(32,1) o Sw<3,3,3>);
}
