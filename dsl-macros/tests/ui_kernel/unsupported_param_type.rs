#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn shared_param(tile: SharedPtr<f32>) {
    let _ = tile;
}

fn main() {}
