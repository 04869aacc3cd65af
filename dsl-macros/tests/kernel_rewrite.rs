//! Each file in `tests/ui_kernel_pass` is a `#[kernel]` body that must compile and run as written:
//! the operator rewriting (comparisons, `&&`, `||` on host and device values alike) and literals
//! that take the type of the device value they meet.

#[test]
fn kernel_macro_rewrites() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui_kernel_pass/*.rs");
}
