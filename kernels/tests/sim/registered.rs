//! Every registered kernel's default case (`rute sim NAME`'s), and the examples at other
//! configurations and sizes.

use std::time::Instant;

use kernels::registry::KERNELS;

#[test]
fn every_registered_kernel_matches_its_reference_with_no_finding() {
    for k in KERNELS.iter() {
        let t = Instant::now();
        let case = (k.case)().unwrap_or_else(|e| panic!("{}: {e}", k.name));
        super::passes_and_repeats(case.as_ref());
        eprintln!("{}: {} in {:.1?}", k.name, case.describe(), t.elapsed());
    }
}

/// The examples at the other configurations their GPU tests run (vectors of 1 and 2, blocks
/// of 32x4, three-warp blocks) and at edge sizes (fewer elements than a vector or a warp, one
/// column, more blocks than chunks).
#[test]
fn the_examples_at_other_configurations_and_sizes() {
    use kernels::cases::examples::{
        AsyncCopy, ReduceSum, RowOp, RowWise, Transpose, VectorAdd, Width,
    };
    use kernels::cases::Case;
    let cases: Vec<Box<dyn Case>> = vec![
        Box::new(VectorAdd {
            width: Width::One,
            n: 1003,
        }),
        Box::new(VectorAdd {
            width: Width::Two,
            n: 3,
        }),
        Box::new(Transpose {
            rows: 33,
            cols: 1,
            block_rows: 4,
        }),
        Box::new(Transpose {
            rows: 70,
            cols: 45,
            block_rows: 4,
        }),
        Box::new(ReduceSum {
            n: 1000,
            threads: 96,
            blocks: 7,
        }),
        Box::new(ReduceSum {
            n: 1,
            threads: 256,
            blocks: 1,
        }),
        Box::new(AsyncCopy {
            n: 3,
            threads: 96,
            blocks: 3,
        }),
        Box::new(AsyncCopy {
            n: 513,
            threads: 96,
            blocks: 1,
        }),
        Box::new(RowWise {
            op: RowOp::Softmax,
            rows: 7,
            cols: 1,
            threads: 96,
        }),
        Box::new(RowWise {
            op: RowOp::Layernorm,
            rows: 5,
            cols: 70,
            threads: 32,
        }),
    ];
    for case in &cases {
        super::passes(case.as_ref());
    }
}
