#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn no_result(#[host] text: &str, out: GlobalPtr<u32>) {
    let n: u32 = text.parse().ok()?;
    out.store(n);
}

#[derive(Debug)]
struct E;
impl From<BuildError> for E {
    fn from(_: BuildError) -> E {
        E
    }
}

#[kernel]
fn inside_loop(#[host] texts: Vec<String>, out: GlobalPtr<u32>, n: Var<u32>) -> Result<(), E> {
    for i in 0..n {
        let v: u32 = texts[0].parse().map_err(|_| E)?;
        out.store_at(i, v);
    }
    Ok(())
}

fn main() {}
