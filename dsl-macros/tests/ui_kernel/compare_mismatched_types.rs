#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

// Device values compare only within one type: a `Var<u32>` against a `Var<i32>`, a `Var<f32>`
// against a `Var<u32>`, or a `Var<u32>` against a float literal is an error that says how to
// convert.
#[kernel]
fn mismatched(out: GlobalPtr<u32>, x: Var<u32>, s: Var<i32>, y: Var<f32>) {
    if x < s {
        out.store_at(0u32, 1u32);
    }
    let same = y == x;
    let half = x >= 1.5;
}

fn main() {}
