//! Unsuffixed literals take the type of the device value they meet.
use dsl_core::kernel::*;
use dsl_macros::kernel;

#[kernel]
fn literals(out: GlobalPtr<u32>, f: GlobalPtr<f32>, x: Var<u32>, y: Var<f32>, n: Var<u32>) {
    let a = x + 1;
    let b = 1 + x;
    let c = (x << 2) | 3;
    let d = x.min(7).max(1) * 2 - 1;
    let e = select(x < 4, x, 0);
    let g = y * 0.5 + 1.0;
    let h = 2.0 * y;
    let mut acc = Var::konst(0);
    for i in 0..n {
        acc += i;
    }
    for i in (1..n).step_by(2) {
        acc += i % 3;
    }
    out.store_at(0, a + b + c + d + e + acc);
    out.store_at(x + 1, 5);
    f.store_at(1, g + h);
    if y > 0.0 && x != 0 {
        f.store_at(2, 1.0);
    }
}

fn main() {
    let k = literals().unwrap();
    assert_eq!(k.params.len(), 5);
}
