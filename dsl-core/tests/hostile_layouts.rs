//! Regression tests for hostile input to the layout algebra (issue 10): results that leave `i64`,
//! division by a zero extent, operations quadratic in the number of modes, pictures that loop or
//! overflow, and divides C++ computes that rute refused. Each test failed before its fix.

use std::time::{Duration, Instant};

use dsl_core::layout::*;

fn lay(s: &str) -> Layout {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A layout an operation returns must be one `Layout::new` accepts, so that `size`, `cosize` and
/// `eval` below its size never overflow.
fn assert_valid(op: &str, l: &Layout) {
    let again = Layout::new(l.shape().clone(), l.stride().clone());
    assert!(
        again.is_ok(),
        "{op} returned {l}, which Layout::new refuses"
    );
    assert!(l.size() >= 1 && l.cosize() >= 1, "{op}: {l}");
}

/// `Err` that says the result overflows, or a valid layout.
fn refused_or_valid(op: &str, r: Result<Layout, LayoutError>) -> Option<LayoutError> {
    match r {
        Ok(l) => {
            assert_valid(op, &l);
            None
        }
        Err(e) => Some(e),
    }
}

fn overflows(op: &str, r: Result<Layout, LayoutError>) {
    match refused_or_valid(op, r) {
        Some(e) => assert!(
            matches!(e, LayoutError::Overflow { .. }),
            "{op}: expected an overflow error, got {e}"
        ),
        None => panic!("{op} should refuse a result that overflows"),
    }
}

/// Defect 1: composition's result has a span past `i64` (its cosize was negative).
#[test]
fn composition_result_is_range_checked() {
    let r = composition(&lay("6:4"), &lay("576460752303423488:5"));
    overflows("composition", r.clone());
    let e = r.unwrap_err().to_string();
    assert!(
        e.starts_with("composition(6:4, 576460752303423488:5)"),
        "{e}"
    );
}

/// Defect 1: select repeats a mode until the size leaves `i64` (its size was 0).
#[test]
fn select_result_is_range_checked() {
    overflows("select", lay("4294967296:1").select(&[0, 0]));
    overflows("select", lay("(2,4294967296):(1,2)").select(&[1, 1, 0]));
    assert_eq!(
        lay("(2,3,4):(1,2,6)").select(&[2, 0]).unwrap().to_string(),
        "(4,2):(6,1)"
    );
}

/// Defect 1: downcast and recast multiply extents; the product of the new extents must fit.
#[test]
fn recast_results_are_range_checked() {
    let l = lay("(2147483648,2147483648):(1,2147483648)");
    overflows("downcast", downcast(&l, 4));
    overflows("recast_layout", recast_layout(&l, 32, 8));
    assert_eq!(
        downcast(&lay("(4,4):(1,4)"), 2).unwrap().to_string(),
        "(8,4):(1,8)"
    );
}

/// Defect 1: a divide's size is size(tile) times the number of tiles, which a tile with a stride-0
/// mode does not bound.
#[test]
fn divide_results_are_range_checked() {
    let a = lay("1099511627776:1");
    let t = Tiler::Layout(lay("(4294967296,2):(0,1)"));
    overflows("logical_divide", logical_divide(&a, &t));
    overflows("zipped_divide", zipped_divide(&a, &t));
    overflows("tiled_divide", tiled_divide(&a, &t));
    overflows("flat_divide", flat_divide(&a, &t));
}

/// Defect 1: a product's size is size(A) * size(B), which stride-0 tilers do not bound.
#[test]
fn product_results_are_range_checked() {
    let a = lay("4294967296:1");
    let b = lay("4294967296:0");
    let t = Tiler::Layout(b.clone());
    overflows("logical_product", logical_product(&a, &t));
    overflows("zipped_product", zipped_product(&a, &t));
    overflows("tiled_product", tiled_product(&a, &t));
    overflows("flat_product", flat_product(&a, &t));
    overflows("blocked_product", blocked_product(&a, &b));
    overflows("raked_product", raked_product(&a, &b));
}

/// Defect 1: left_inverse's last mode keeps the extent of the largest-stride mode.
#[test]
fn left_inverse_result_is_range_checked() {
    overflows(
        "left_inverse",
        left_inverse(&lay("(2,2):(1,4611686018427387904)")),
    );
}

/// Defect 1: make_ordered_layout gives equal orders equal strides, so each stride fits but not the
/// size; tile_to_shape lays its repetitions out with it.
#[test]
fn make_ordered_layout_result_is_range_checked() {
    let shape = IntTuple::ints(&[4294967296, 4294967296]);
    let same = IntTuple::ints(&[0, 0]);
    overflows("make_ordered_layout", make_ordered_layout(&shape, &same));
    overflows(
        "tile_to_shape",
        tile_to_shape(&lay("(1,1):(0,0)"), &shape, Some(&same)),
    );
}

/// Defect 1: zip and append put valid layouts side by side; the whole must fit.
#[test]
fn zip_and_append_results_are_range_checked() {
    let a = lay("4294967296:1");
    overflows("zip", zip(&a, &a));
    overflows("append", append(&a, &a));
    overflows("prepend", prepend(&a, &a));
}

/// Defect 2: crd2idx on a shape with a zero extent divided by it.
#[test]
fn crd2idx_with_a_zero_extent_is_an_error() {
    let shape = IntTuple::ints(&[0, 2]);
    let stride = IntTuple::ints(&[1, 1]);
    assert!(shape.crd2idx(&IntTuple::Int(3), &stride).is_err());
    let nested = IntTuple::Tuple(vec![IntTuple::ints(&[2, 0]), IntTuple::Int(3)]);
    let nstride = IntTuple::Tuple(vec![IntTuple::ints(&[1, 2]), IntTuple::Int(4)]);
    assert!(nested.crd2idx(&IntTuple::Int(5), &nstride).is_err());
}

/// Defect 1: `try_from_modes` (CuTe's `make_layout(l0, l1, ...)`) refuses modes whose sizes together
/// leave `i64` instead of making a layout whose size wraps.
#[test]
fn from_modes_is_range_checked() {
    let a = lay("4294967296:1");
    let e = Layout::try_from_modes(vec![a.clone(), a.clone()]).unwrap_err();
    assert!(matches!(e, LayoutError::Overflow { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("make_layout(4294967296:1, 4294967296:1)"),
        "{e}"
    );
    let ok = Layout::try_from_modes(vec![a, lay("2:0")]).unwrap();
    assert_eq!(ok.to_string(), "(4294967296,2):(1,0)");
    let text = dsl_core::layout::expr::evaluate("make_layout(4294967296:1, 4294967296:1)");
    assert!(text.is_err());
}

/// Defect 2: idx2crd on a shape with a zero extent divided by it; it is now an error.
#[test]
fn idx2crd_with_a_zero_extent_is_an_error() {
    let e = IntTuple::ints(&[0, 2]).idx2crd(3).unwrap_err();
    assert!(matches!(e, LayoutError::BadExtent { extent: 0, .. }), "{e}");
    let e = IntTuple::ints(&[4294967296, 4294967296])
        .idx2crd(3)
        .unwrap_err();
    assert!(matches!(e, LayoutError::Overflow { .. }), "{e}");
    assert_eq!(
        IntTuple::ints(&[4, 8]).idx2crd(13).unwrap(),
        IntTuple::ints(&[1, 3])
    );
}

/// Runs `f`, failing if it takes longer than `limit` (generous: CI shares 2 cores).
fn within<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < limit, "{what} took {took:?}, more than {limit:?}");
    out
}

fn ones(n: usize) -> String {
    vec!["1"; n].join(",")
}

/// Defect 3: select cloned every mode for each index chosen (200k modes: past 20 s).
#[test]
fn select_is_linear_in_the_modes() {
    let n = 200_000;
    let l = lay(&format!("({}):({})", ones(n), ones(n)));
    let idx: Vec<usize> = (0..n).rev().collect();
    let r = within("select of 200k modes", Duration::from_secs(5), || {
        l.select(&idx)
    });
    assert_eq!(r.unwrap().rank(), n);
}

/// Defect 3: make_ordered_layout compared every mode's order with every other's.
#[test]
fn make_ordered_layout_is_near_linear_in_the_modes() {
    let n = 200_000;
    let shape = IntTuple::ints(&vec![1; n]);
    let order = IntTuple::ints(&(0..n as i64).rev().collect::<Vec<_>>());
    let r = within(
        "make_ordered_layout of 200k modes",
        Duration::from_secs(5),
        || make_ordered_layout(&shape, &order),
    );
    assert_eq!(r.unwrap().rank(), n);
}

/// Defect 4: a broadcast thread-value layout looped over all 2^60 (thread, value) pairs.
#[test]
fn svg_tv_of_a_broadcast_is_quick() {
    let tv = lay("(1073741824,1073741824):(0,0)");
    let svg = within("svg_tv of a broadcast", Duration::from_secs(5), || {
        svg::svg_tv(&tv, 1, 1)
    })
    .unwrap();
    assert!(
        svg.contains(">T0</text>") && svg.contains(">V0</text>"),
        "{svg}"
    );
}

/// Defect 4: the chunk color of an offset near 2^62 overflowed `offset * elem_bytes`.
#[test]
fn svg_colors_of_huge_offsets_do_not_overflow() {
    let c = ComposedLayout::new(
        Swizzle::new(1, 0, 1).unwrap(),
        0,
        lay("2:4611686018427387904"),
    );
    let svg = svg::svg_composed(&c, 2).unwrap();
    assert_eq!(svg.matches("<rect x=").count(), 2);
}

/// Defect 4: a table or picture evaluated the whole layout for each cell, so a layout with many
/// extent-1 modes cost cells times modes.
#[test]
fn pictures_of_layouts_with_many_modes_are_quick() {
    let n = 100_000;
    let wide = lay(&format!("((256,{}),256):((256,{}),1)", ones(n), ones(n)));
    within("print_layout of 100k modes", Duration::from_secs(5), || {
        print::print_layout(&wide).unwrap()
    });
    within("svg_layout of 100k modes", Duration::from_secs(5), || {
        svg::svg_layout(&wide).unwrap()
    });
    let c = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, wide);
    within("svg_composed of 100k modes", Duration::from_secs(5), || {
        svg::svg_composed(&c, 2).unwrap()
    });
}

/// Defect 4: pairs that are not broadcasts are bounded per cell, so no picture loops long.
#[test]
fn svg_tv_refuses_too_many_pairs_per_cell() {
    let tv = lay("(1048576,1048576):(1,1)");
    let e = within(
        "svg_tv of overlapping pairs",
        Duration::from_secs(5),
        || svg::svg_tv(&tv, 256, 256),
    )
    .unwrap_err();
    assert!(e.to_string().contains("per cell"), "{e}");
    // A broadcast along stride-0 modes draws its first pair, as before.
    let b = lay("((4,8),(2,2)):((0,1),(16,8))");
    let svg = svg::svg_tv(&b, 16, 8).unwrap();
    assert!(svg.contains(">T0</text>"), "{svg}");
}

/// Defect 5: C++ divides a layout with a trailing size-1 mode as if the mode were not there (it
/// coalesces away and the last mode extends); rute refused these.
#[test]
fn divides_of_layouts_with_trailing_unit_modes_follow_cpp() {
    let a = lay("(5,1):(1,0)");
    let t = Tiler::Layout(lay("4:1"));
    assert_eq!(logical_divide(&a, &t).unwrap().to_string(), "(4,2):(1,4)");
    assert_eq!(zipped_divide(&a, &t).unwrap().to_string(), "(4,2):(1,4)");
    assert_eq!(tiled_divide(&a, &t).unwrap().to_string(), "(4,2):(1,4)");
}
