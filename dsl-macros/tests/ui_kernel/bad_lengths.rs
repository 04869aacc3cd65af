#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

// A `#[len(..)]` gives a buffer parameter's length in elements, computed from the launch's
// integer scalars and constants.
#[kernel]
fn lengths(
    #[host] #[len(4)] tile: u32,
    #[len(n)] n_too: Var<u32>,
    #[len(x)] a: ConstPtr<f32>,
    #[len(n.max(1))] b: ConstPtr<f32>,
    #[len(n)] #[len(n)] c: GlobalPtr<f32>,
    #[len(n as u64)] d: GlobalPtr<f32>,
    x: GlobalPtr<f32>,
    n: Var<u32>,
) {
}

fn main() {}
