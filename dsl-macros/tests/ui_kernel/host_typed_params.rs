#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn scalars<T: DeviceType>(
    n: u32,
    data: &[f32],
    pair: (Var<u32>, Var<u32>),
    anything: T,
    (a, b): (Var<u32>, Var<u32>),
    k: &mut KernelBuilder,
) {
}

fn main() {}
