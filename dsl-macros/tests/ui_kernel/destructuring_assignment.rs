#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn swap(out: GlobalPtr<u32>, x: Var<u32>, y: Var<u32>) {
    let mut a = x;
    let mut b = y;
    (a, b) = (b, a);
    out.store(a);
    out.store(b);
}

fn main() {}
