use dsl_macros::layout;

fn main() {
    let _ = layout!((0x10,4u32):(1,-S));
    let _ = layout!((4,_):(1,4));
    let _ = layout!((1_024,2.5):(-0b1,1));
    let _ = layout!(99999999999999999999:1);
    let _ = layout!((4,{}):(1,4));
    let _ = layout!((4,"8"):(1,4));
}
