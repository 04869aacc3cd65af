//! `#[kernel]` and `#[device]` stamp each instruction with the Rust location of the statement
//! that emitted it; locations take no part in IR equality.

use std::cell::RefCell;

use dsl_core::ir::op::{Arith, BinOp, Memory};
use dsl_core::ir::{for_each_instr, Instr, Kernel, Op, Type};
use dsl_core::kernel::*;
use dsl_macros::{device, kernel};

// Each `push(line!() + 1)` records the line of the statement after it.

#[device]
fn twice(x: Var<u32>, lines: &RefCell<Vec<u32>>) -> Var<u32> {
    lines.borrow_mut().push(line!() + 1);
    let y = x * 3u32;
    y + y
}

#[kernel]
fn located(#[host] lines: &RefCell<Vec<u32>>, _k: &KernelBuilder, out: GlobalPtr<u32>) {
    lines.borrow_mut().push(line!() + 1);
    let t = thread_idx_x() + 1u32;
    lines.borrow_mut().push(line!() + 1);
    out.store_at(t, twice(t, lines) - 1u32);
    if t.lt(5u32) {
        lines.borrow_mut().push(line!() + 1);
        out.store_at(t, t);
    }
}

fn instrs(k: &Kernel) -> Vec<Instr> {
    let mut all = Vec::new();
    for_each_instr(&k.body, &mut |i| all.push(i.clone()));
    all
}

fn line_of(k: &Kernel, want: impl Fn(&Op) -> bool) -> Vec<u32> {
    instrs(k)
        .into_iter()
        .filter(|i| want(&i.op))
        .map(|i| i.loc.expect("every instruction is located").line)
        .collect()
}

#[test]
fn instructions_carry_their_statements_line() {
    let lines = RefCell::new(Vec::new());
    let k = located(&lines).unwrap();
    // Pushed in the order the statements ran: `let t`, the store's line, `twice`'s body, the
    // store inside the `if`.
    let [at_t, at_store, in_twice, in_if] = lines.borrow()[..] else {
        panic!("{:?}", lines.borrow())
    };
    for i in instrs(&k) {
        let l = i.loc.unwrap_or_else(|| panic!("{:?} is not located", i.op));
        assert!(l.file.ends_with("locations.rs"), "{l}");
        // The parameter's load is located at the parameter, on the signature's line.
        let signature = at_t - 2;
        let if_line = at_store + 1;
        let all = [
            signature,
            at_t,
            at_store,
            if_line,
            in_twice,
            in_twice + 1,
            in_if,
        ];
        assert!(all.contains(&l.line), "{l}");
    }
    // The u32 arithmetic (addresses are u64).
    let bin = |op: BinOp| move |o: &Op| matches!(o, Op::Arith(Arith::Bin { op: x, ty: Type::U32, .. }) if *x == op);
    assert_eq!(line_of(&k, bin(BinOp::Add)), [at_t, in_twice + 1]);
    assert_eq!(line_of(&k, bin(BinOp::Mul)), [in_twice]);
    // The caller's line is back after the call: the subtraction and the store are the caller's.
    assert_eq!(line_of(&k, bin(BinOp::Sub)), [at_store]);
    let params = line_of(&k, |o| matches!(o, Op::Memory(Memory::Ld { .. })));
    assert_eq!(params, [at_t - 2]);
    let stores = line_of(&k, |o| matches!(o, Op::Memory(Memory::St { .. })));
    assert_eq!(stores, [at_store, in_if]);
    // The column is where the statement starts (`let t` in the body's indentation).
    let add = instrs(&k)
        .into_iter()
        .find(|i| matches!(i.op, Op::Arith(Arith::Bin { op: BinOp::Add, .. })))
        .unwrap();
    assert_eq!(add.loc.unwrap().column, 5, "{}", add.loc.unwrap());
}

#[test]
fn locations_take_no_part_in_equality() {
    let lines = RefCell::new(Vec::new());
    let k = located(&lines).unwrap();
    let mut moved = k.clone();
    let unlocated: Vec<_> = {
        fn strip(stmts: &mut [dsl_core::ir::Stmt]) {
            for s in stmts {
                match s {
                    dsl_core::ir::Stmt::Op(i) => i.loc = None,
                    dsl_core::ir::Stmt::If { then, else_, .. } => {
                        strip(then);
                        strip(else_);
                    }
                    _ => {}
                }
            }
        }
        strip(&mut moved.body);
        instrs(&moved)
    };
    assert!(unlocated.iter().all(|i| i.loc.is_none()));
    assert_eq!(k, moved);
}
