#![allow(unused_imports)]
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[derive(Debug)]
struct E;
impl From<BuildError> for E {
    fn from(_: BuildError) -> Self {
        E
    }
}
fn check(x: u32) -> Result<bool, E> {
    Ok(x > 0)
}

// The right side of `&&` and `||` is a closure (a branch on the device): `return`, `break` and
// `?` cannot leave it.
#[kernel]
fn jumps(out: GlobalPtr<u32>, n: Var<u32>, #[host] limit: u32) -> Result<(), E> {
    for i in 0..limit {
        let go = n > i || { break };
    }
    let early = n > 0 && { return Ok(()) };
    let checked = n > 0 && check(limit)?;
    Ok(())
}

fn main() {}
