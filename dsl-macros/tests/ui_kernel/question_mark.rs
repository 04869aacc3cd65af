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

// `?` inside device statements is fine (it leaves the function), but not inside an `if` whose
// value is used: its closure returns the value.
#[kernel]
fn inside_value_if(#[host] texts: Vec<String>, out: GlobalPtr<u32>, n: Var<u32>) -> Result<(), E> {
    let v = if n.lt(4u32) {
        Var::konst(texts[0].parse::<u32>().map_err(|_| E)?)
    } else {
        Var::konst(0u32)
    };
    out.store(v);
    Ok(())
}

fn main() {}
