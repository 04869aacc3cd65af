#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn early_exit(out: GlobalPtr<u32>, n: Var<u32>) {
    let i = thread_idx_x();
    if i.ge(n) {
        return;
    }
    for j in 0..n {
        if j.eq_(3u32) {
            out.store(j);
        }
        return;
    }
    out.store(i);
}

fn main() {}
