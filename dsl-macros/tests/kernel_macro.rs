//! `#[kernel]` builds real kernels: each test checks the IR the macro's rewriting produces, either
//! against the same kernel written by hand with plain Rust control flow (for host values, where the
//! macro must change nothing), or against the structure a device construct must have.

use dsl_core::ir::op::{Arith, BinOp, Data, Memory};
use dsl_core::ir::{for_each_instr, Kernel, Op, Operand, Reg, Stmt};
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// Every instruction of `stmts`, depth first.
fn ops(stmts: &[Stmt]) -> Vec<Op> {
    let mut all = Vec::new();
    for_each_instr(stmts, &mut |i| all.push(i.op.clone()));
    all
}

/// The first source of every store in `stmts`, in program order.
fn stored(stmts: &[Stmt]) -> Vec<Operand> {
    ops(stmts)
        .into_iter()
        .filter_map(|op| match op {
            Op::Memory(Memory::St { srcs, .. }) => Some(srcs[0]),
            _ => None,
        })
        .collect()
}

/// Statements of `stmts` at the top level that are not plain instructions.
fn structure(stmts: &[Stmt]) -> Vec<&'static str> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Op(_) | Stmt::Comment(_) => None,
            Stmt::For { .. } => Some("for"),
            Stmt::If { .. } => Some("if"),
            Stmt::While { .. } => Some("while"),
        })
        .collect()
}

fn movs_into(stmts: &[Stmt], dst: Reg) -> usize {
    ops(stmts)
        .iter()
        .filter(|op| matches!(op, Op::Data(Data::Mov { dst: d, .. }) if *d == dst))
        .count()
}

// ---------------------------------------------------------------- if

#[kernel]
fn host_if(#[host] flag: bool, out: GlobalPtr<u32>) {
    if flag {
        out.store(1u32);
    } else {
        out.store(2u32);
    }
}

#[test]
fn a_host_if_picks_its_branch_and_emits_no_if() {
    for (flag, value) in [(true, 1u32), (false, 2u32)] {
        let by_hand = build_kernel("host_if", |k| {
            k.param_ptr::<u32>("out").store(value);
        })
        .unwrap();
        let k = host_if(flag).unwrap();
        assert_eq!(structure(&k.body), Vec::<&str>::new());
        assert_eq!(k, by_hand);
    }
}

#[kernel]
fn device_if(out: GlobalPtr<u32>, x: Var<u32>) {
    if x.lt(10u32) {
        out.store(1u32);
    } else {
        out.store(2u32);
    }
    if x.eq_(3u32) {
        out.store(3u32);
    }
}

#[test]
fn a_device_if_emits_an_if_with_both_arms() {
    let k = device_if().unwrap();
    assert_eq!(structure(&k.body), ["if", "if"]);
    let ifs: Vec<_> = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::If { then, else_, .. } => Some((stored(then), stored(else_))),
            _ => None,
        })
        .collect();
    assert_eq!(
        ifs,
        [
            (vec![Operand::Imm(1)], vec![Operand::Imm(2)]),
            (vec![Operand::Imm(3)], vec![]),
        ]
    );
}

#[kernel]
fn else_if_chain(out: GlobalPtr<u32>, x: Var<u32>, #[host] small: u32) {
    if x.lt(small) {
        out.store(1u32);
    } else if small > 4 {
        out.store(2u32);
    } else if x.lt(100u32) {
        out.store(3u32);
    } else {
        out.store(4u32);
    }
}

#[test]
fn else_if_mixes_host_and_device_conditions() {
    // small > 4: the host condition picks its branch inside the device else block.
    let k = else_if_chain(8).unwrap();
    let Some(Stmt::If { then, else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. }))
    else {
        panic!("no device if in {:?}", k.body);
    };
    assert_eq!(stored(then), [Operand::Imm(1)]);
    assert_eq!(stored(else_), [Operand::Imm(2)]);
    assert_eq!(structure(else_), Vec::<&str>::new());
    // small <= 4: the inner device if appears in the else block.
    let k = else_if_chain(2).unwrap();
    let Some(Stmt::If { else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. })) else {
        panic!("no device if in {:?}", k.body);
    };
    assert_eq!(structure(else_), ["if"]);
    assert_eq!(stored(else_), [Operand::Imm(3), Operand::Imm(4)]);
}

#[kernel]
fn if_as_value(out: GlobalPtr<u32>, x: Var<u32>, y: Var<u32>, #[host] host_pick: bool) {
    let m = if x.lt(y) { x } else { y };
    out.store(m);
    let h = if host_pick { x } else { y };
    out.store(h);
}

#[test]
fn an_if_value_on_a_device_predicate_merges_both_arms_into_one_register() {
    let k = if_as_value(true).unwrap();
    let Some(Stmt::If { then, else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. }))
    else {
        panic!("no device if in {:?}", k.body);
    };
    let st = stored(&k.body);
    let merged = st[0].reg().expect("the merged value is a register");
    assert_eq!(movs_into(then, merged), 1);
    assert_eq!(movs_into(else_, merged), 1);
    // A host condition picks the value: the second store reads x's parameter register directly.
    let x_reg = ops(then)
        .iter()
        .find_map(|op| match op {
            Op::Data(Data::Mov { dst, src, .. }) if *dst == merged => src.reg(),
            _ => None,
        })
        .unwrap();
    assert_eq!(st[1], Operand::Reg(x_reg));
    let k = if_as_value(false).unwrap();
    assert_ne!(stored(&k.body)[1], Operand::Reg(x_reg));
}

#[kernel]
fn both_arms_assign(out: GlobalPtr<u32>, x: Var<u32>) {
    let mut v = x;
    if x.lt(5u32) {
        v = v + 1u32;
    } else {
        v = v * 2u32;
    }
    out.store(v);
}

#[test]
fn both_arms_of_a_device_if_may_assign_the_same_variable() {
    let k = both_arms_assign().unwrap();
    let v = stored(&k.body)[0].reg().unwrap();
    let Some(Stmt::If { then, else_, .. }) = k.body.iter().find(|s| matches!(s, Stmt::If { .. }))
    else {
        panic!("no device if in {:?}", k.body);
    };
    assert_eq!((movs_into(then, v), movs_into(else_, v)), (1, 1));
}

// ---------------------------------------------------------------- for

#[kernel]
#[allow(clippy::needless_range_loop)]
fn host_range(out: GlobalPtr<u32>, #[host] n: u32) {
    for i in 0..n {
        out.store_at(i, i * 10);
    }
    for i in (1..=n + 4).step_by(3) {
        out.store_at(i, 7u32);
    }
    // Literal bounds: a Rust loop, so `i` is inferred as `usize` from the indexing.
    let table = [11u32, 12];
    for i in 0..2 {
        out.store(table[i]);
    }
}

#[test]
fn a_host_range_unrolls_like_rust() {
    let by_hand = build_kernel("host_range", |k| {
        let out = k.param_ptr::<u32>("out");
        for i in 0..3u32 {
            out.store_at(i, i * 10);
        }
        for i in [1u32, 4, 7] {
            out.store_at(i, 7u32);
        }
        out.store(11u32);
        out.store(12u32);
    })
    .unwrap();
    let k = host_range(3).unwrap();
    assert_eq!(structure(&k.body), Vec::<&str>::new());
    assert_eq!(k, by_hand);
}

#[kernel]
fn device_range(out: GlobalPtr<u32>, n: Var<u32>) {
    for i in 0..n {
        out.store_at(i, i);
    }
    for i in (2u32..=n).step_by(4u32) {
        out.store_at(i, 1u32);
    }
}

#[test]
fn a_range_with_a_device_bound_emits_for() {
    let k = device_range().unwrap();
    assert_eq!(structure(&k.body), ["for", "for"]);
    let fors: Vec<_> = k
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
            } => Some((*var, *start, *end, *step, body)),
            _ => None,
        })
        .collect();
    let (var, start, end, step, body) = fors[0];
    assert_eq!((start, step), (Operand::Imm(0), Operand::Imm(1)));
    assert!(end.reg().is_some(), "the bound is the parameter's register");
    assert_eq!(
        stored(body),
        [Operand::Reg(var)],
        "the body reads the loop register"
    );
    // 2..=n counts to n + 1: an add of 1 to n's register before the loop.
    let (_, start, end2, step, _) = fors[1];
    assert_eq!((start, step), (Operand::Imm(2), Operand::Imm(4)));
    let n = end.reg().unwrap();
    let adds_one = ops(&k.body).iter().any(|op| {
        matches!(op, Op::Arith(Arith::Bin { op: BinOp::Add, dst, a, b, .. })
            if Operand::Reg(*dst) == end2 && *a == Operand::Reg(n) && *b == Operand::Imm(1))
    });
    assert!(adds_one, "{:?}", k.body);
}

#[kernel]
fn host_iterators(out: GlobalPtr<u32>, #[host] values: Vec<u32>) {
    // Not a range: a plain host loop, where `break` is allowed.
    for (i, v) in values.iter().enumerate() {
        if *v == 0 {
            continue_marker();
        }
        out.store_at(i as u32, *v);
        if i == 1 {
            out.store(99u32);
        }
    }
    for (i, v) in values.iter().enumerate() {
        out.store(*v);
        // `match` stays Rust, so `break` may leave the host loop from inside it.
        match i {
            1 => break,
            _ => out.store(0u32),
        }
    }
}

/// Stands for any host call in a branch.
fn continue_marker() {}

#[test]
fn other_iterators_stay_host_loops() {
    let by_hand = build_kernel("host_iterators", |k| {
        let out = k.param_ptr::<u32>("out");
        out.store_at(0u32, 3u32);
        out.store_at(1u32, 8u32);
        out.store(99u32);
        out.store_at(2u32, 0u32);
        out.store(3u32);
        out.store(0u32);
        out.store(8u32);
    })
    .unwrap();
    assert_eq!(host_iterators(vec![3, 8, 0]).unwrap(), by_hand);
}

// ---------------------------------------------------------------- assignment, let, while

#[kernel]
fn sum_to(out: GlobalPtr<u32>, start: Var<u32>, n: Var<u32>, #[host] compound: bool) {
    let mut acc = start;
    for i in 0..n {
        if compound {
            acc += i;
        } else {
            acc = acc + i;
        }
    }
    out.store(acc);
}

#[test]
fn assignment_in_a_device_loop_writes_the_same_register() {
    for compound in [false, true] {
        assignment_writes_the_same_register(compound);
    }
}

fn assignment_writes_the_same_register(compound: bool) {
    let k = sum_to(compound).unwrap();
    let acc = stored(&k.body)[0].reg().expect("acc is a register");
    let Some(Stmt::For { var, body, .. }) = k.body.iter().find(|s| matches!(s, Stmt::For { .. }))
    else {
        panic!("no loop in {:?}", k.body);
    };
    // The body reads acc, adds the index and moves the sum back into acc's register.
    let body_ops = ops(body);
    let sum = body_ops
        .iter()
        .find_map(|op| match op {
            Op::Arith(Arith::Bin {
                op: BinOp::Add,
                dst,
                a,
                b,
                ..
            }) if *a == Operand::Reg(acc) && *b == Operand::Reg(*var) => Some(*dst),
            _ => None,
        })
        .expect("acc + i");
    assert!(body_ops.iter().any(|op| matches!(op,
        Op::Data(Data::Mov { dst, src, .. }) if *dst == acc && *src == Operand::Reg(sum))));
    // `let mut acc = start;` copied the parameter into acc's own register.
    let start_reg = ops(&k.body)
        .iter()
        .find_map(|op| match op {
            Op::Data(Data::Mov { dst, src, .. }) if *dst == acc => src.reg(),
            _ => None,
        })
        .expect("acc is initialised by a move");
    assert_ne!(start_reg, acc);
}

#[kernel]
fn let_copies(out: GlobalPtr<u32>, x: Var<u32>) {
    let mut a = x;
    let b = a;
    a = a + 1u32;
    out.store(a);
    out.store(b);
}

#[test]
fn let_of_a_device_value_makes_an_independent_copy() {
    let k = let_copies().unwrap();
    let st = stored(&k.body);
    let (a, b) = (st[0].reg().unwrap(), st[1].reg().unwrap());
    assert_ne!(a, b, "b must not see the later assignment to a");
    assert_eq!(movs_into(&k.body, b), 1);
    // a's register was written twice: its initial copy and the assignment.
    assert_eq!(movs_into(&k.body, a), 2);
}

#[derive(Debug, PartialEq)]
struct NotMarked(u32);

#[kernel]
fn host_lets_move(out: GlobalPtr<u32>, #[host] values: Vec<u32>) {
    let owned = values;
    let reference = &owned;
    let again = reference;
    let custom = NotMarked(again.len() as u32);
    let moved = custom;
    let mut count = moved.0;
    count = count + 1;
    // `let mut` of values whose type is inferred later, of types not marked HostValue.
    let mut later = Vec::new();
    later.push(NotMarked(count));
    let mut n = 0;
    n += later.len();
    out.store(count + n as u32 - 1);
}

#[test]
fn let_and_assignment_of_host_values_keep_rust_meaning() {
    let by_hand = build_kernel("host_lets_move", |k| {
        k.param_ptr::<u32>("out").store(4u32);
    })
    .unwrap();
    assert_eq!(host_lets_move(vec![1, 2, 3]).unwrap(), by_hand);
}

#[kernel]
fn while_loops(out: GlobalPtr<u32>, n: Var<u32>, #[host] host_n: u32) {
    // `let mut` puts even a constant into a register of its own, so the loop may assign it.
    let mut i = Var::konst(0u32);
    while i.lt(n) {
        i = i + 2u32;
    }
    out.store(i);
    let mut j = 0u32;
    while j < host_n {
        out.store_at(j, j);
        j = j + 1;
    }
}

#[test]
fn while_is_a_device_loop_on_a_predicate_and_a_host_loop_on_a_bool() {
    let k = while_loops(2).unwrap();
    assert_eq!(structure(&k.body), ["while"]);
    let Some(Stmt::While {
        cond_block, body, ..
    }) = k.body.iter().find(|s| matches!(s, Stmt::While { .. }))
    else {
        panic!("no while in {:?}", k.body);
    };
    let i = stored(&k.body)[0].reg().unwrap();
    assert!(
        !ops(cond_block).is_empty(),
        "the condition is evaluated in its block"
    );
    assert_eq!(movs_into(body, i), 1, "the body writes i's register");
    // The host loop unrolled into two stores after the device loop.
    assert_eq!(&stored(&k.body)[1..], [Operand::Imm(0), Operand::Imm(1)]);
}

// ---------------------------------------------------------------- signatures

#[derive(Debug, PartialEq)]
struct ShapeError(String);

impl From<BuildError> for ShapeError {
    fn from(e: BuildError) -> Self {
        ShapeError(e.to_string())
    }
}

#[kernel]
fn fallible(#[host] layout: &str, out: GlobalPtr<u32>) -> Result<(), ShapeError> {
    let l: dsl_core::layout::Layout = layout.parse().map_err(|e| ShapeError(format!("{e}")))?;
    let size = u32::try_from(l.size()).map_err(|e| ShapeError(format!("{e}")))?;
    for i in 0..size {
        out.store_at(i, 0u32);
    }
    Ok(())
}

#[test]
fn a_result_returning_kernel_propagates_host_errors_with_question_mark() {
    let k = fallible("(2,2):(1,2)").unwrap();
    assert_eq!(stored(&k.body).len(), 4);
    assert!(fallible("(2,2):(1").is_err());
}

struct Config {
    value: u32,
}

impl Config {
    #[kernel]
    fn fill<const N: u32>(&self, k: &KernelBuilder, out: GlobalPtr<u32>) {
        k.max_threads(N, 1, 1);
        for i in 0..N {
            out.store_at(i, self.value);
        }
    }
}

#[test]
fn methods_and_const_generics_are_host_configuration() {
    let k = Config { value: 5 }.fill::<2>().unwrap();
    assert_eq!(k.name, "fill");
    assert_eq!(k.hints.maxntid, Some([2, 1, 1]));
    assert_eq!(stored(&k.body), [Operand::Imm(5), Operand::Imm(5)]);
}

#[kernel]
fn params_in_order(a: GlobalPtr<f32>, #[host] _unused: u8, n: Var<u32>, m: TensorMap, s: Var<i64>) {
    let _ = (a, n, &m, s);
}

#[test]
fn kernel_parameters_are_declared_in_order_with_their_names() {
    let k: Kernel = params_in_order(0).unwrap();
    let names: Vec<_> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "n", "m", "s"]);
}

#[kernel]
fn pointer_walk(a: GlobalPtr<u32>, n: Var<u32>) {
    let mut p = a;
    for i in 0..n {
        p.store(i);
        p = p + 1u32;
    }
    a.store(7u32);
}

#[test]
fn a_pointer_advanced_in_a_device_loop_keeps_its_register_and_leaves_its_source_alone() {
    let k = pointer_walk().unwrap();
    let Some(Stmt::For { body, .. }) = k.body.iter().find(|s| matches!(s, Stmt::For { .. })) else {
        panic!("no loop in {:?}", k.body);
    };
    let address = |op: &Op| match op {
        Op::Memory(Memory::St { addr, .. }) => match addr.base {
            dsl_core::ir::AddrBase::Reg(r) => Some(r),
            _ => None,
        },
        _ => None,
    };
    let p = ops(body)
        .iter()
        .find_map(address)
        .expect("a store through p");
    assert_eq!(
        movs_into(body, p),
        1,
        "p + 1 is written back into p's register"
    );
    let after: Vec<_> = k
        .body
        .iter()
        .skip_while(|s| !matches!(s, Stmt::For { .. }))
        .collect();
    let a = match after.get(1) {
        Some(Stmt::Op(i)) => address(&i.op),
        _ => None,
    };
    assert!(
        a.is_some() && a != Some(p),
        "a keeps its own register: {:?}",
        k.body
    );
}

#[kernel]
fn short_circuit(out: GlobalPtr<u32>, #[host] v: Vec<u32>, x: Var<u32>) {
    for i in 0..4 {
        // `v[i]` would panic for i >= v.len(): the right side must not run.
        if i < v.len() && v[i] > 1 || i == 3 && !x.lt(9u32).is_const() {
            out.store_at(i as u32, x);
        }
    }
}

#[test]
fn host_conditions_keep_short_circuit_evaluation() {
    let by_hand = build_kernel("short_circuit", |k| {
        let out = k.param_ptr::<u32>("out");
        let x = k.param::<u32>("x");
        // i = 1: the left `&&` holds, so `||` skips the right side and its comparison.
        out.store_at(1u32, x);
        // i = 3: only here is the comparison on the device generated.
        let _ = x.lt(9u32);
        out.store_at(3u32, x);
    })
    .unwrap();
    assert_eq!(short_circuit(vec![0, 5]).unwrap(), by_hand);
}

// ---------------------------------------------------------------- whole kernels

/// Sums 32 floats per warp: a host-unrolled shuffle tree, then lane 0 writes.
#[kernel]
fn warp_sum(#[host] width: u32, x: GlobalPtr<f32>, out: GlobalPtr<f32>, n: Var<u32>) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = Var::konst(0.0f32);
    if i.lt(n) {
        v = x.load_at(i);
    }
    let mut offset = width / 2;
    while offset > 0 {
        v = v + shfl_down(v, offset);
        offset = offset / 2;
    }
    if lane_id().eq_(0u32) {
        out.store_at(i / 32u32, v);
    }
}

/// Transposes a tile through shared memory.
#[kernel]
fn transpose(#[host] tile: u32, k: &KernelBuilder, a: GlobalPtr<f32>, b: GlobalPtr<f32>) {
    let smem = k.shared_array::<f32>("tile", u64::from(tile * tile), 16);
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    smem.store_at(ty * tile + tx, a.load_at(ty * tile + tx));
    sync_threads();
    b.store_at(ty * tile + tx, smem.load_at(tx * tile + ty));
}

#[test]
fn whole_kernels_mix_host_and_device_control_flow() {
    let k = warp_sum(32).unwrap();
    let shuffles = ops(&k.body)
        .iter()
        .filter(|op| matches!(op, Op::Warp(dsl_core::ir::op::Warp::Shfl { .. })))
        .count();
    assert_eq!(shuffles, 5, "log2(32) shuffles, unrolled on the host");
    assert_eq!(structure(&k.body), ["if", "if"]);

    let k = transpose(8).unwrap();
    assert_eq!(k.shared.len(), 1);
    assert_eq!(k.shared[0].bytes, 8 * 8 * 4);
    let barriers = ops(&k.body)
        .iter()
        .filter(|op| matches!(op, Op::Barrier(_)))
        .count();
    assert_eq!(barriers, 1);
}

/// The error of the `?` tests: a layout that does not parse, or the builder's.
#[derive(Debug)]
enum TestError {
    Layout(dsl_core::layout::LayoutError),
    Build(#[allow(dead_code)] BuildError),
}
impl From<dsl_core::layout::LayoutError> for TestError {
    fn from(e: dsl_core::layout::LayoutError) -> Self {
        TestError::Layout(e)
    }
}
impl From<BuildError> for TestError {
    fn from(e: BuildError) -> Self {
        TestError::Build(e)
    }
}

/// A role as a `#[device]` function: its device `while` and `if` are rewritten as in a kernel,
/// and its `?` inside them leaves the function with the error.
#[dsl_macros::device]
fn countdown(
    out: GlobalPtr<u32>,
    n: Var<u32>,
    layout: &str,
) -> Result<Var<u32>, dsl_core::layout::LayoutError> {
    let mut left = n.fresh();
    while left.gt(0u32) {
        if left.lt(3u32) {
            let l: dsl_core::layout::Layout = layout.parse()?;
            out.store_at(left, l.size() as u32);
        }
        left = left - 1u32;
    }
    Ok(left)
}

#[kernel]
fn calls_a_role(#[host] layout: &str, out: GlobalPtr<u32>, n: Var<u32>) -> Result<(), TestError> {
    for i in 0u32..n {
        let rest = countdown(out, i, layout)?;
        out.store(rest);
    }
    Ok(())
}

#[test]
fn device_functions_rewrite_control_flow_and_pass_errors_on() {
    let k = calls_a_role("(4,8):(8,1)").unwrap();
    assert_eq!(structure(&k.body), ["for"]);
    let Stmt::For { body, .. } = k
        .body
        .iter()
        .find(|s| matches!(s, Stmt::For { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    assert_eq!(structure(body), ["while"]);
    // Every store of the layout's size stores 32.
    assert!(stored(&k.body).contains(&Operand::Imm(32)));
    // A layout that does not parse, deep inside a device `if` in a device `while` in a device
    // `for`, is the kernel's error.
    match calls_a_role("(4,8):(8)") {
        Err(TestError::Layout(e)) => assert!(e.to_string().contains("(4,8):(8)"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// `?` in a device `if` and `else` of a kernel body itself.
#[kernel]
fn question_in_arms(
    #[host] layout: &str,
    out: GlobalPtr<u32>,
    n: Var<u32>,
) -> Result<(), TestError> {
    if n.lt(4u32) {
        let l: dsl_core::layout::Layout = layout.parse()?;
        out.store(l.cosize() as u32);
    } else {
        let l: dsl_core::layout::Layout = "8:2".parse()?;
        out.store(l.cosize() as u32);
    }
    Ok(())
}

#[test]
fn question_marks_in_device_arms() {
    let k = question_in_arms("(2,2):(1,2)").unwrap();
    assert_eq!(structure(&k.body), ["if"]);
    assert_eq!(stored(&k.body), [Operand::Imm(4), Operand::Imm(15)]);
    assert!(matches!(
        question_in_arms("oops"),
        Err(TestError::Layout(_))
    ));
}
