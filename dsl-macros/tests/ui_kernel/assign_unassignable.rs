#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

struct Tile {
    rows: u32,
}

#[kernel]
fn walk(a: GlobalPtr<f32>, n: Var<u32>) {
    // A pointer can be assigned (its address register is written) ...
    let mut p = a;
    for i in 0..n {
        p = p.offset(i);
    }
    // ... a host type only when it says it is a host value.
    let mut t = Tile { rows: 2 };
    t = Tile { rows: t.rows + 1 };
}

fn main() {}
