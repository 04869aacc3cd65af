//! One spelling for host and device comparisons and boolean operators.
use dsl_core::kernel::*;
use dsl_macros::{device, kernel};

#[device]
fn in_bounds(i: Var<u32>, n: Var<u32>) -> Var<bool> {
    i < n && !(i == 7)
}

#[kernel]
fn operators(out: GlobalPtr<u32>, x: Var<u32>, n: Var<u32>, s: Var<i32>, #[host] cols: usize, #[host] name: String) {
    let i = thread_idx_x();
    // Device comparisons: `Var<bool>`.
    let inside: Var<bool> = i < n;
    let both: Var<bool> = i >= 1 && i <= n || x != 0;
    let neg: Var<bool> = s < -1 || 0 > s;
    // Host comparisons keep Rust's meaning: `bool`s, decided now.
    let wide: bool = cols > 64 && name == "wide";
    let empty: bool = name.is_empty() || cols == 0;
    // A host `bool` beside a device predicate: decided now, the other side emitted or not.
    if wide && i < n {
        out.store_at(i, 1);
    }
    if inside && in_bounds(i, n) && out.load_at(i) > 0 {
        out.store_at(i, 2);
    }
    if !(both || neg) || empty {
        out.store_at(0, 3);
    }
    // A host loop: its condition is a `bool`.
    let mut k = 0;
    while k < 4 && cols > k {
        out.store_at(k as u32, x + k as u32);
        k += 1;
    }
}

fn main() {
    let k = operators(64, "wide".to_string()).unwrap();
    assert_eq!(k.params.len(), 4);
}
