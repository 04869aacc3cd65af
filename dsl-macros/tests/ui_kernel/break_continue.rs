#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn jumps(out: GlobalPtr<u32>, n: Var<u32>, #[host] values: Vec<u32>) {
    for i in 0..n {
        if i.eq_(2u32) {
            continue;
        }
        break;
    }
    let mut i = Var::konst(0u32).fresh();
    while i.lt(n) {
        i = i + 1u32;
        continue;
    }
    for v in values.iter() {
        // A host loop, but the `if` around the break is rewritten into a closure.
        if *v == 3 {
            break;
        }
        out.store(*v);
    }
}

fn main() {}
