#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn guarded(a: GlobalPtr<u32>, n: Var<u32>) {
    let i = thread_idx_x();
    if i.lt(n) && a.load_at(i).gt(0u32) {
        a.store_at(i, 0u32);
    }
}

fn main() {}
