//! Each file in `tests/ui` is a `layout!` mistake; its `.stderr` holds the error rustc must print
//! (regenerate with `TRYBUILD=overwrite`, then read the diff).

#[test]
fn layout_macro_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
