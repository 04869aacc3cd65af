//! `layout!` expands to the layout `dsl_core`'s text parser reads from the same notation, and composed
//! layouts evaluate as CuTe's `swizzle(offset + L(i))` (vectors from pycute).

use dsl_core::layout::{ComposedLayout, IntTuple, Layout, Swizzle};
use dsl_macros::layout;

fn parsed(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn literal_forms_match_the_text_parser() {
    let cases: Vec<(Layout, &str)> = vec![
        (layout!((8,32):(32,1)), "(8,32):(32,1)"),
        (layout!(((2,4),8):((1,2),8)), "((2,4),8):((1,2),8)"),
        (layout!(8:1), "8:1"),
        (layout!(8:0), "8:0"),
        (layout!((4, 8)), "(4,8)"),
        (layout!((4,8):_), "(4,8):_"),
        (layout!((4,2):(-1,4)), "(4,2):(-1,4)"),
        (layout!((3,4):(0,-1)), "(3,4):(0,-1)"),
        (layout!((8):(1)), "(8):(1)"),
        (layout!(():()), "():()"),
        (layout!(16), "16"),
        (layout!(((2, 2), (4, (2, 3)))), "((2,2),(4,(2,3)))"),
        (
            layout!(((2,2),(4,(2,3))):((1,16),(2,(64,128)))),
            "((2,2),(4,(2,3))):((1,16),(2,(64,128)))",
        ),
        (layout!(( 4 , 2 ) : ( 2 , 1 )), "(4,2):(2,1)"),
        // CuTe's printed form: static integers spelled `_8`.
        (layout!((_8,_4):(_4,_1)), "(8,4):(4,1)"),
        (layout!(((_2,_4),_8):_), "((2,4),8):_"),
        (
            layout!((2):(-4611686018427387904)),
            "(2):(-4611686018427387904)",
        ),
    ];
    for (from_macro, text) in cases {
        assert_eq!(from_macro, parsed(text), "layout!({text})");
    }
}

#[test]
fn default_stride_is_cute_column_major() {
    // CuTe: make_layout(make_shape(4,8)) has stride (_1,_4); ((2,4),8) has ((_1,_2),_8).
    assert_eq!(layout!((4, 8)).stride(), &IntTuple::ints(&[1, 4]));
    assert_eq!(layout!(((2,4),8):_).to_string(), "((2,4),8):((1,2),8)");
    assert_eq!(layout!(8).to_string(), "8:1");
}

const BM: i64 = 128;
const BK: usize = 32;
const TWO: i32 = 2;

#[test]
fn constants_stand_for_integers() {
    assert_eq!(layout!((BM, BK):(BK, 1)), parsed("(128,32):(32,1)"));
    assert_eq!(layout!((BM, BK)), parsed("(128,32):(1,128)"));
    assert_eq!(layout!((BM,BK):_), parsed("(128,32):(1,128)"));
    assert_eq!(
        layout!(((TWO,{BK / 8}),BM):((1,TWO),{-(BK as i64)})),
        parsed("((2,4),128):((1,2),-32)")
    );
    let n = 6u8;
    assert_eq!(layout!(n:{n - 1}), parsed("6:5"));
}

#[test]
#[should_panic(expected = "layout!((ZERO,8):(8,1)): shape (0,8) has extent 0")]
fn a_constant_zero_extent_panics_naming_the_layout() {
    const ZERO: i64 = 0;
    let _ = layout!((ZERO,8):(8,1));
}

#[test]
#[should_panic(expected = "does not fit in i64")]
fn a_constant_too_large_for_i64_panics() {
    const HUGE: u64 = u64::MAX;
    let _ = layout!(HUGE:1);
}

#[test]
#[should_panic(expected = "|S| must be at least B")]
fn a_constant_bad_swizzle_panics() {
    const S: i64 = 2;
    let _ = layout!(Sw<3,3,S> o 8:1);
}

/// `i -> swizzle(offset + layout(i))` for every index.
fn eval(c: &ComposedLayout) -> Vec<i64> {
    (0..c.layout.size())
        .map(|i| c.swizzle.apply(c.offset + c.layout.eval(i).unwrap()))
        .collect()
}

#[test]
fn composed_forms_build_their_parts() {
    let sw = Swizzle::new(3, 3, 3).unwrap();
    let tile = parsed("(8,32):(32,1)");
    for c in [
        layout!(Swizzle<3,3,3> o (8,32):(32,1)),
        layout!(Sw<3,3,3> o (8,32):(32,1)),
        layout!(Sw<3,3,3> o 0 o (8,32):(32,1)),
    ] {
        assert_eq!(c.swizzle, sw);
        assert_eq!(c.offset, 0);
        assert_eq!(c.layout, tile);
        assert_eq!(c.to_string(), "Sw<3,3,3> o 0 o (8,32):(32,1)");
    }
    let c = layout!(Sw<2,1,-3> o -5 o (4,8));
    assert_eq!(
        (c.swizzle, c.offset, c.layout),
        (Swizzle::new(2, 1, -3).unwrap(), -5, parsed("(4,8):(1,4)"))
    );
    const B: u32 = 3;
    const OFF: i64 = 16;
    let c = layout!(Sw<B,3,{B as i64}> o OFF o (BM,BK):(BK,1));
    assert_eq!(
        (c.swizzle, c.offset, c.layout),
        (sw, 16, parsed("(128,32):(32,1)"))
    );
}

#[test]
fn composed_layouts_evaluate_like_pycute() {
    // pycute: ComposedLayout(Swizzle(3,0,3), 0, Layout((8,8),(8,1))), all 64 indices.
    let expected = [
        0, 9, 18, 27, 36, 45, 54, 63, 1, 8, 19, 26, 37, 44, 55, 62, 2, 11, 16, 25, 38, 47, 52, 61,
        3, 10, 17, 24, 39, 46, 53, 60, 4, 13, 22, 31, 32, 41, 50, 59, 5, 12, 23, 30, 33, 40, 51,
        58, 6, 15, 20, 29, 34, 43, 48, 57, 7, 14, 21, 28, 35, 42, 49, 56,
    ];
    assert_eq!(eval(&layout!(Sw<3,0,3> o (8,8):(8,1))), expected);

    // pycute: ComposedLayout(Swizzle(2,1,-3), 5, Layout((4,8),(8,1))).
    let expected = [
        37, 45, 53, 61, 54, 62, 38, 46, 55, 63, 39, 47, 8, 16, 24, 32, 9, 17, 25, 33, 26, 2, 10,
        50, 27, 3, 11, 51, 44, 52, 60, 4,
    ];
    assert_eq!(eval(&layout!(Sw<2,1,-3> o 5 o (4,8):(8,1))), expected);

    // pycute: ComposedLayout(Swizzle(3,3,3), 16, Layout((8,32),(32,1))) at a few indices.
    let c = layout!(Swizzle<3,3,3> o 16 o (8,32):(32,1));
    let all = eval(&c);
    let at = [0, 1, 2, 3, 7, 8, 9, 31, 33, 100, 200, 255];
    let expected = [16, 48, 88, 120, 232, 17, 49, 235, 52, 140, 41, 303];
    for (i, want) in at.into_iter().zip(expected) {
        assert_eq!(all[i], want, "index {i}");
    }
}

/// A `macro_rules!` fragment arrives wrapped in an invisible group; it still reads as a literal.
macro_rules! square {
    ($n:expr) => {
        layout!(($n, $n))
    };
}

#[test]
fn fragments_of_other_macros_are_accepted() {
    assert_eq!(square!(4), parsed("(4,4):(1,4)"));
    assert_eq!(square!(BK), parsed("(32,32):(1,32)"));
}
