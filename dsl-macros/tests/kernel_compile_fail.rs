//! Each file in `tests/ui_kernel` is a `#[kernel]` mistake; its `.stderr` holds the error rustc
//! must print (regenerate with `TRYBUILD=overwrite`, then read the diff).

#[test]
fn kernel_macro_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_kernel/*.rs");
}
