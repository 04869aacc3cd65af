#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

// `&&` and `||` take a `bool` or a `Var<bool>` on each side, not a number.
#[kernel]
fn not_predicates(out: GlobalPtr<u32>, x: Var<u32>, n: Var<u32>) {
    if x && n < 4 {
        out.store_at(0u32, 1u32);
    }
    let either = n < 4 || 3u32;
}

fn main() {}
