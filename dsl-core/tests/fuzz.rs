//! The layout library's fuzz harness: hostile input to the text parser, to every layout operation
//! and to the `rute layout` calculator (`expr::evaluate`), every result fed on to `size`, `cosize`,
//! `eval`, `idx2crd`, `crd2idx` and `Display`. Nothing may panic, and every layout that comes back
//! must be one `Layout::new` accepts, with `size` and `cosize` equal to their exact values.
//!
//! CI runs it in the dev profile (`cargo test -p dsl-core --test fuzz`), where overflow checks and
//! debug assertions are on, so an arithmetic overflow anywhere on the way is a failure too; the
//! release run of the workspace runs it again without them. The budget is fixed: [`CASES`] cases
//! per property from a fixed seed, so a run is reproducible. `RUTE_FUZZ_CASES=n` changes the
//! number of cases and `RUTE_FUZZ_SEED=n` (or `random`) the seed, to fuzz longer by hand.

use dsl_core::layout::expr::{evaluate, Value, FUNCTIONS};
use dsl_core::layout::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// Cases per property in CI.
const CASES: u32 = 4000;

fn config() -> Config {
    let cases = std::env::var("RUTE_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(CASES);
    let rng_seed = match std::env::var("RUTE_FUZZ_SEED").as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(n) => n.parse().map_or(RngSeed::Fixed(20261201), RngSeed::Fixed),
        Err(_) => RngSeed::Fixed(20261201),
    };
    Config {
        cases,
        rng_seed,
        max_shrink_iters: 2000,
        ..Config::default()
    }
}

// ------------------------------------------------------------------------------------------------
// Inputs

/// Extents: mostly small, sometimes 1, a power of two up to 2^62, near `i64::MAX`, or below 1.
fn extent() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![
        8 => 1i64..=8,
        3 => Just(1i64),
        2 => (1u32..63).prop_map(|k| 1i64 << k),
        1 => (1u32..62).prop_map(|k| (1i64 << k) + 1),
        1 => Just(i64::MAX),
        1 => 1i64..=i64::MAX,
        1 => -2i64..=0,
    ]
}

/// Strides: mostly small and signed, sometimes a power of two either way, or an extreme.
fn stride() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![
        8 => -4i64..=16,
        2 => (0u32..63).prop_map(|k| 1i64 << k),
        1 => (0u32..63).prop_map(|k| -(1i64 << k)),
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
        1 => any::<i64>(),
    ]
}

/// Any integer, weighted towards the small and the extreme.
fn int() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![
        6 => -4i64..=64,
        2 => (0u32..63).prop_map(|k| 1i64 << k),
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
        1 => any::<i64>(),
    ]
}

/// A tree of (extent, stride) leaves: depth up to 3, up to 5 modes a level.
#[derive(Clone, Debug)]
enum Tree {
    Leaf(i64, i64),
    Node(Vec<Tree>),
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = (extent(), stride()).prop_map(|(s, d)| Tree::Leaf(s, d));
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop::collection::vec(inner, 0..5).prop_map(Tree::Node)
    })
}

fn split(t: &Tree) -> (IntTuple, IntTuple) {
    match t {
        Tree::Leaf(s, d) => (IntTuple::Int(*s), IntTuple::Int(*d)),
        Tree::Node(ms) => {
            let (s, d) = ms.iter().map(split).unzip();
            (IntTuple::Tuple(s), IntTuple::Tuple(d))
        }
    }
}

/// A shape and a congruent stride, which `Layout::new` may refuse.
fn parts() -> impl Strategy<Value = (IntTuple, IntTuple)> {
    tree().prop_map(|t| split(&t))
}

/// A layout from `parts`, brought within the rules where it breaks them: extents below 1 become 1,
/// then the largest extent or stride is halved until the size and span fit. So many layouts lie
/// just inside `i64`, where results overflow.
fn repaired(shape: IntTuple, stride: IntTuple) -> Layout {
    let mut s = shape
        .flatten_ints()
        .into_iter()
        .map(|e| e.max(1))
        .collect::<Vec<_>>();
    let mut d = stride.flatten_ints();
    loop {
        let (mut si, mut di) = (s.iter(), d.iter());
        let l = Layout::new(
            shape.map_ints(&mut |_| *si.next().unwrap()),
            stride.map_ints(&mut |_| *di.next().unwrap()),
        );
        if let Ok(l) = l {
            return l;
        }
        let big_s = (0..s.len()).max_by_key(|&i| s[i]);
        let big_d = (0..d.len()).max_by_key(|&i| d[i].unsigned_abs());
        match (big_s, big_d) {
            (Some(i), Some(j)) if s[i].unsigned_abs() >= d[j].unsigned_abs() => {
                s[i] = (s[i] / 2).max(1)
            }
            (_, Some(j)) => d[j] /= 2,
            _ => return Layout::new(IntTuple::Int(1), IntTuple::Int(0)).unwrap(),
        }
    }
}

/// A layout `Layout::new` accepts, often near the edge of `i64`.
fn layout() -> impl Strategy<Value = Layout> {
    parts().prop_map(|(s, d)| repaired(s, d))
}

/// An int tuple (a shape, profile, order or coordinate), depth up to 2.
fn int_tuple() -> impl Strategy<Value = IntTuple> {
    let leaf = prop_oneof![3 => extent(), 1 => int()].prop_map(IntTuple::Int);
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(IntTuple::Tuple)
    })
}

/// A tiler: a layout, or a tuple of layouts, integers `n` (`n:1`) and nested tuples.
fn tiler() -> impl Strategy<Value = Tiler> {
    let leaf = prop_oneof![
        3 => layout().prop_map(Tiler::Layout),
        1 => extent().prop_filter_map("a layout n:1", |n| Layout::vector(n, 1).ok().map(Tiler::Layout)),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(Tiler::Tuple)
    })
}

fn swizzle() -> impl Strategy<Value = (i64, i64, i64)> {
    (-1i64..5, -1i64..8, -6i64..7)
}

// ------------------------------------------------------------------------------------------------
// What every result must satisfy

/// The exact `1 + sum (s-1)*|d|`, in i128.
fn exact_cosize(l: &Layout) -> i128 {
    let s = l.shape().flatten_ints();
    let d = l.stride().flatten_ints();
    1 + s
        .iter()
        .zip(&d)
        .map(|(&s, &d)| i128::from(s - 1) * i128::from(d).abs())
        .sum::<i128>()
}

/// Every layout an operation returns: `Layout::new` takes it back, `size` and `cosize` are exact,
/// it prints and reads back as itself, and `eval`, `idx2crd` and `crd2idx` agree on indices below
/// its size (and return, whatever they return, past it).
fn check_layout(op: &str, l: &Layout) -> Result<(), TestCaseError> {
    let again = Layout::new(l.shape().clone(), l.stride().clone());
    prop_assert!(
        again.is_ok(),
        "{op} returned {l}, which Layout::new refuses"
    );
    prop_assert_eq!(
        Some(l.size()),
        l.shape().checked_product(),
        "{} size of {}",
        op,
        l
    );
    prop_assert!(l.size() >= 1, "{op}: {l}");
    let cosize = exact_cosize(l);
    prop_assert!(cosize <= i128::from(i64::MAX), "{op}: {l}");
    prop_assert_eq!(i128::from(l.cosize()), cosize, "{} cosize of {}", op, l);
    let text = l.to_string();
    let back: Result<Layout, _> = text.parse();
    prop_assert_eq!(back.as_ref(), Ok(l), "{} printed {}", op, text);
    let n = l.size();
    for i in [0, 1, n / 3, n / 2, n - 1] {
        if !(0..n).contains(&i) {
            continue;
        }
        let v = l.eval(i);
        prop_assert!(v.is_ok(), "{op}: {l} at {i}: {v:?}");
        let v = v.unwrap_or(0);
        prop_assert!(i128::from(v).abs() < cosize, "{op}: {l} at {i} is {v}");
        let c = l.idx2crd(i);
        prop_assert_eq!(l.crd2idx(&c), Ok(v), "{} crd {} of {}", op, c, l);
        prop_assert_eq!(l.shape().idx2crd(i), Ok(c));
    }
    for i in [n, i64::MAX, -1, i64::MIN] {
        let _ = l.eval(i);
        let c = l.idx2crd(i);
        let _ = l.crd2idx(&c);
    }
    prop_assert_eq!(l.rank(), l.modes().len());
    let _ = l.depth();
    for m in l.modes() {
        prop_assert!(Layout::new(m.shape().clone(), m.stride().clone()).is_ok());
    }
    let f = l.flatten();
    prop_assert_eq!(f.size(), n);
    prop_assert_eq!(f.eval(n - 1), l.eval(n - 1));
    if n <= 4096 {
        prop_assert_eq!(l.values().map(|v| v.len() as i64), Ok(n));
    }
    Ok(())
}

fn check_error(op: &str, e: &LayoutError) -> Result<(), TestCaseError> {
    let text = e.to_string();
    prop_assert!(!text.trim().is_empty(), "{op}: an empty error");
    Ok(())
}

/// A layout result or a typed error.
fn check(op: &str, r: &Result<Layout, LayoutError>) -> Result<(), TestCaseError> {
    match r {
        Ok(l) => check_layout(op, l),
        Err(e) => check_error(op, e),
    }
}

fn check_composed(op: &str, r: &Result<ComposedLayout, LayoutError>) -> Result<(), TestCaseError> {
    match r {
        Ok(c) => {
            check_layout(op, &c.layout)?;
            prop_assert_eq!(c.size(), c.layout.size());
            let _ = c.eval(0);
            let _ = c.eval(c.size() - 1);
            let _ = c.crd2idx(&c.layout.idx2crd(c.size() / 2));
            let _ = c.to_string();
            Ok(())
        }
        Err(e) => check_error(op, e),
    }
}

/// The pictures and tables of a layout: an error or a picture, never a panic.
fn draw(l: &Layout, rows: i64, cols: i64) -> Result<(), TestCaseError> {
    for r in [
        print::print_layout(l),
        svg::svg_layout(l),
        svg::svg_tv(l, rows, cols),
    ] {
        if let Err(e) = r {
            check_error("picture", &e)?;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// The properties

proptest! {
    #![proptest_config(config())]

    /// The text parser on layouts as CuTe prints them, mutated: any text reads as a layout that
    /// keeps the rules, or as an error.
    #[test]
    fn parser_never_panics(
        (s, d) in parts(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), "[0-9(),:_ -]{0,3}"), 0..4),
        any_text in "\\PC{0,24}",
    ) {
        let mut text = format!("{s}:{d}");
        for (at, insert) in &cuts {
            let i = at.index(text.len() + 1);
            text.replace_range(i..(i + 1).min(text.len()), insert);
        }
        for t in [text.as_str(), any_text.as_str(), &s.to_string()] {
            match t.parse::<Layout>() {
                Ok(l) => check_layout("parse", &l)?,
                Err(e) => check_error("parse", &e)?,
            }
            if let Ok(t) = t.parse::<IntTuple>() {
                let _ = t.to_string();
                let _ = (t.product(), t.sum(), t.checked_product(), t.depth());
                let _ = t.idx2crd(7);
            }
        }
    }

    /// Every constructor and every operation of the algebra on hostile layouts.
    #[test]
    fn operations_never_panic(
        (sa, da) in parts(),
        a in layout(),
        b in layout(),
        t in tiler(),
        shape in int_tuple(),
        order in int_tuple(),
        (n, k) in (int(), int()),
        idx in prop::collection::vec(0usize..6, 0..5),
        bits in (0u32..300, 0u32..300),
    ) {
        check("new", &Layout::new(sa.clone(), da.clone()))?;
        check("col_major", &Layout::col_major(sa.clone()))?;
        check("row_major", &Layout::row_major(sa.clone()))?;
        check("vector", &Layout::vector(n, k))?;
        for l in [&a, &b] {
            check_layout("input", l)?;
            check("coalesce", &Ok(coalesce(l)))?;
            check("filter", &Ok(filter(l)))?;
            check("filter_zeros", &Ok(filter_zeros(l)))?;
            check("right_inverse", &right_inverse(l))?;
            check("left_inverse", &left_inverse(l))?;
            check("upcast", &upcast(l, n))?;
            check("downcast", &downcast(l, n))?;
            check("recast_layout", &recast_layout(l, bits.0, bits.1))?;
            check("complement", &complement(l, n))?;
            check("complement", &complement(l, l.cosize()))?;
            check("complement_shape", &complement_shape(l, &shape))?;
            check("coalesce_with", &coalesce_with(l, &shape))?;
            check("append_to_rank", &append_to_rank(l, idx.len()))?;
            check("select", &l.select(&idx))?;
            for &i in &idx {
                check("mode", &l.mode(i))?;
            }
            check("from_modes", &Ok(Layout::from_modes(l.modes())))?;
            check("into_modes", &Layout::try_from_modes(l.clone().into_modes()))?;
            check("tile_to_shape", &tile_to_shape(l, &shape, None))?;
            check("tile_to_shape", &tile_to_shape(l, &shape, Some(&order)))?;
            let _ = l.crd2idx(&order);
            let _ = l.shape().crd2idx(&order, &shape);
            let _ = l.shape().idx2crd(n);
            draw(l, n.rem_euclid(40), k.rem_euclid(40))?;
        }
        check("composition", &composition(&a, &b))?;
        check("composition_tiler", &composition_tiler(&a, &t))?;
        check("append", &append(&a, &b))?;
        check("prepend", &prepend(&a, &b))?;
        check("zip", &zip(&a, &b))?;
        check("try_from_modes", &Layout::try_from_modes(vec![a.clone(), b.clone()]))?;
        check("blocked_product", &blocked_product(&a, &b))?;
        check("raked_product", &raked_product(&a, &b))?;
        for tl in [&t, &Tiler::Layout(b.clone())] {
            check("logical_divide", &logical_divide(&a, tl))?;
            check("zipped_divide", &zipped_divide(&a, tl))?;
            check("tiled_divide", &tiled_divide(&a, tl))?;
            check("flat_divide", &flat_divide(&a, tl))?;
            check("logical_product", &logical_product(&a, tl))?;
            check("zipped_product", &zipped_product(&a, tl))?;
            check("tiled_product", &tiled_product(&a, tl))?;
            check("flat_product", &flat_product(&a, tl))?;
        }
        check("make_ordered_layout", &make_ordered_layout(&shape, &order))?;
        check("make_ordered_layout", &make_ordered_layout(a.shape(), &order))?;
        if let Err(e) = shape_div(&shape, &order) {
            check_error("shape_div", &e)?;
        }
        if let Ok(ts) = Tiler::from_shape(&shape.flatten_ints()) {
            check("logical_divide", &logical_divide(&a, &ts))?;
        }
    }

    /// Composed layouts: every operation lifted to `swizzle o offset o layout`.
    #[test]
    fn composed_operations_never_panic(
        (bb, m, s) in swizzle(),
        offset in int(),
        a in layout(),
        b in layout(),
        t in tiler(),
        shape in int_tuple(),
        idx in prop::collection::vec(0usize..6, 0..4),
        elem in -1i64..18,
    ) {
        let Ok(sw) = Swizzle::new(bb, m, s) else { return Ok(()) };
        let _ = (sw.apply(offset), sw.yyy_mask(), sw.zzz_mask());
        let c = ComposedLayout::new(sw, offset, a);
        check_composed("new", &Ok(c.clone()))?;
        check_composed("compose", &c.compose(&b))?;
        check_composed("compose_tiler", &c.compose_tiler(&t))?;
        check_composed("coalesce", &Ok(c.coalesce()))?;
        check_composed("coalesce_with", &c.coalesce_with(&shape))?;
        check_composed("filter", &Ok(c.filter()))?;
        check_composed("flatten", &Ok(c.flatten()))?;
        check_composed("select", &c.select(&idx))?;
        check_composed("logical_divide", &c.logical_divide(&t))?;
        check_composed("zipped_divide", &c.zipped_divide(&t))?;
        check_composed("tiled_divide", &c.tiled_divide(&t))?;
        check_composed("flat_divide", &c.flat_divide(&t))?;
        check_composed("logical_product", &c.logical_product(&t))?;
        check_composed("zipped_product", &c.zipped_product(&t))?;
        check_composed("tiled_product", &c.tiled_product(&t))?;
        check_composed("flat_product", &c.flat_product(&t))?;
        check_composed("blocked_product", &c.blocked_product(&b))?;
        check_composed("raked_product", &c.raked_product(&b))?;
        check_composed("tile_to_shape", &c.tile_to_shape(&shape, None))?;
        for r in [print::print_composed(&c), svg::svg_composed(&c, elem)] {
            if let Err(e) = r {
                check_error("picture", &e)?;
            }
        }
        if c.size() <= 4096 {
            let _ = c.values();
        }
    }

    /// The calculator on random calls of its functions with hostile arguments, nested: every
    /// value prints and reads back as itself, and its offsets, table and pictures are an error or
    /// a result.
    #[test]
    fn calculator_never_panics(src in expr_text()) {
        calculate(&src)?;
    }

    /// The calculator on token soups: CuTe notation, function names and extreme integers in any
    /// order.
    #[test]
    fn calculator_on_token_soups_never_panics(tokens in prop::collection::vec(token(), 0..30)) {
        calculate(&tokens.concat())?;
    }
}

fn calculate(src: &str) -> Result<(), TestCaseError> {
    let v = match evaluate(src) {
        Ok(v) => v,
        Err(e) => return check_error(src, &e),
    };
    let printed = v.to_string();
    match &v {
        Value::Layout(l) => {
            check_layout(src, l)?;
            draw(l, 8, 8)?;
        }
        Value::Composed(c) => {
            check_composed(src, &Ok(c.clone()))?;
            if let Err(e) = svg::svg_composed(c, 2) {
                check_error(src, &e)?;
            }
        }
        _ => {}
    }
    let small = match &v {
        Value::Layout(l) => l.size() <= 1 << 16,
        Value::Composed(c) => c.size() <= 1 << 16,
        _ => true,
    };
    if small {
        if let Err(e) = v.values() {
            check_error(src, &e)?;
        }
    }
    if let Err(e) = v.table() {
        check_error(src, &e)?;
    }
    // What prints reads back as the same value (a tuple prints as a shape, which reads back as a
    // layout, so it is left out).
    if !matches!(v, Value::Tuple(_)) {
        prop_assert_eq!(
            evaluate(&printed).ok(),
            Some(v),
            "{} printed {}",
            src,
            printed
        );
    }
    Ok(())
}

/// A layout in CuTe notation, hostile values included, sometimes not congruent.
fn layout_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => parts().prop_map(|(s, d)| format!("{s}:{d}")),
        1 => (parts(), parts()).prop_map(|((s, _), (_, d))| format!("{s}:{d}")),
        1 => parts().prop_map(|(s, _)| s.to_string()),
        1 => parts().prop_map(|(s, _)| format!("{s}:_")),
    ]
}

/// A leaf of an expression: a layout, integer, shape, tiler, swizzle or composed layout.
fn leaf_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => layout_text(),
        2 => int().prop_map(|n| n.to_string()),
        1 => int_tuple().prop_map(|t| t.to_string()),
        1 => prop::collection::vec(layout_text(), 1..4).prop_map(|t| format!("({})", t.join(","))),
        1 => swizzle().prop_map(|(b, m, s)| format!("Sw<{b},{m},{s}>")),
        2 => (swizzle(), int(), layout_text())
            .prop_map(|((b, m, s), o, l)| format!("Sw<{b},{m},{s}> o {o} o {l}")),
    ]
}

/// A call of one of the calculator's functions (or an evaluation `L(i)`) on leaves or calls.
fn expr_text() -> impl Strategy<Value = String> {
    leaf_text().prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            4 => (prop::sample::select(FUNCTIONS), prop::collection::vec(inner.clone(), 1..4))
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            1 => (inner, prop::collection::vec(int(), 1..3)).prop_map(|(l, i)| {
                let i: Vec<String> = i.iter().map(i64::to_string).collect();
                format!("({l})({})", i.join(","))
            }),
        ]
    })
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(&["(", ")", ",", ":", "_", " o ", "Sw<", ">", "-"][..])
            .prop_map(str::to_string),
        3 => int().prop_map(|n| n.to_string()),
        2 => prop::sample::select(FUNCTIONS).prop_map(str::to_string),
        1 => layout_text(),
    ]
}
