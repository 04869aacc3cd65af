#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
struct Config {
    tile: u32,
}

fn main() {}
