#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
async fn not_async(out: GlobalPtr<u32>) {
    out.store(1u32);
}

#[kernel]
const fn not_const() {}

#[kernel]
extern "C" fn not_extern() {}

#[kernel]
fn bad_return(out: GlobalPtr<u32>) -> u32 {
    out.store(1u32);
    1
}

#[kernel(name = "other")]
fn with_args(#[host(x)] flag: bool) {
    let _ = flag;
}

fn main() {}
