#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn values(out: GlobalPtr<u32>, x: Var<u32>) {
    let v = if x.lt(4u32) { vec![x] } else { vec![x, x] };
    out.store(v[0]);
    let w = if x.lt(4u32) { x } else { 1u32 };
    out.store(w);
}

fn main() {}
