//! Comparisons and `&&`/`||` in `#[kernel]` bodies, on the IR they produce: device comparisons are
//! `setp` with an unsuffixed literal in the device value's type, and a device `&&` generates its
//! right side inside a branch on its left side.

use dsl_core::ir::op::{CmpOp, Compare, Memory};
use dsl_core::ir::{for_each_instr, Kernel, Op, Operand, Stmt, Type};
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// Every instruction of `stmts`, depth first.
fn ops(stmts: &[Stmt]) -> Vec<Op> {
    let mut all = Vec::new();
    for_each_instr(stmts, &mut |i| all.push(i.op.clone()));
    all
}

#[kernel]
fn comparisons(out: GlobalPtr<u32>, x: Var<u32>, y: Var<f32>) {
    let a = x < 4;
    let b = 4 < x;
    let c = y != 0.5;
    let d = x == x;
    out.store_at(0, select(a & b & c & d, 1, 0));
}

#[test]
fn device_comparisons_are_setp_with_the_literal_in_its_type() {
    let k = comparisons().unwrap();
    let setps: Vec<_> = ops(&k.body)
        .into_iter()
        .filter_map(|op| match op {
            Op::Compare(Compare::Setp { cmp, ty, a, b, .. }) => Some((cmp, ty, a, b)),
            _ => None,
        })
        .collect();
    let x = setps[0].2;
    assert_eq!(
        setps,
        [
            (CmpOp::Lt, Type::U32, x, Operand::Imm(4)),
            // `4 < x` is `x > 4`.
            (CmpOp::Gt, Type::U32, x, Operand::Imm(4)),
            (CmpOp::Neu, Type::F32, setps[2].2, Operand::ImmF(0.5)),
            (CmpOp::Eq, Type::U32, x, x),
        ]
    );
}

#[kernel]
fn guarded_load(a: GlobalPtr<u32>, n: Var<u32>, #[host] host_guard: bool) {
    let i = thread_idx_x();
    if i < n && a.load_at(i) > 0 {
        a.store_at(i, 0);
    }
    // A host `bool` on the left decides now: no branch for the right side.
    let host = host_guard && i < n;
    a.store_at(0, select(host, 1, 2));
}

#[test]
fn a_device_short_circuit_loads_only_where_its_left_side_holds() {
    let k = guarded_load(false).unwrap();
    let ifs = k
        .body
        .iter()
        .filter(|s| matches!(s, Stmt::If { .. }))
        .count();
    assert_eq!(ifs, 2, "one for `&&`, one for the `if`");
    let Stmt::If { then, .. } = &k
        .body
        .iter()
        .find(|s| matches!(s, Stmt::If { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    assert!(
        ops(then)
            .iter()
            .any(|op| matches!(op, Op::Memory(Memory::Ld { .. }))),
        "the load is inside the branch on `i < n`: {then:?}"
    );
    // With a host `false` the device comparison is not even generated.
    let setps = |k: &Kernel| {
        ops(&k.body)
            .iter()
            .filter(|op| matches!(op, Op::Compare(Compare::Setp { .. })))
            .count()
    };
    assert_eq!(setps(&guarded_load(true).unwrap()), setps(&k) + 1);
}
