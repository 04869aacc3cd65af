#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn labelled(out: GlobalPtr<u32>, n: Var<u32>) {
    'rows: for i in 0..n {
        out.store(i);
    }
    loop {
        out.store(1u32);
    }
}

fn main() {}
