//! Property tests of CuTe's layout-algebra identities on random small layouts (depth <= 2,
//! size <= 512), checked by brute force against the layouts as functions.

use std::collections::BTreeSet;

use dsl_core::layout::*;
use proptest::prelude::*;

/// A small deterministic generator for the parts proptest draws as one seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// How the strides of a random layout are made.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Column-major compact.
    Compact,
    /// Compact, modes in a random order.
    Permuted,
    /// Like `Permuted` with gaps: each stride a multiple of the previous stride times extent.
    Gappy,
    /// `Permuted` with some strides set to 0.
    Zeros,
    /// Small random strides, 0 and negative included.
    Random,
}

fn shape_from(seed: u64, max_size: i64) -> IntTuple {
    let mut g = Lcg(seed);
    let leaf = |g: &mut Lcg| IntTuple::Int(g.pick(&[1, 2, 2, 3, 4, 4, 6, 8]));
    let shape = match g.next() % 4 {
        0 => leaf(&mut g),
        _ => {
            let rank = 1 + g.next() % 3;
            IntTuple::Tuple(
                (0..rank)
                    .map(|_| {
                        if g.next().is_multiple_of(3) {
                            let n = 1 + g.next() % 3;
                            IntTuple::Tuple((0..n).map(|_| leaf(&mut g)).collect())
                        } else {
                            leaf(&mut g)
                        }
                    })
                    .collect(),
            )
        }
    };
    // Shrink extents from the back until the size fits.
    let mut flat = shape.flatten_ints();
    let mut i = flat.len();
    while flat.iter().product::<i64>() > max_size && i > 0 {
        i -= 1;
        flat[i] = 1;
    }
    let mut it = flat.into_iter();
    shape.map_ints(&mut |_| it.next().unwrap())
}

fn layout_from(seed: u64, kind: Kind, max_size: i64) -> Layout {
    let shape = shape_from(seed, max_size);
    let mut g = Lcg(seed ^ 0x9e37_79b9_7f4a_7c15);
    let flat = shape.flatten_ints();
    let mut order: Vec<usize> = (0..flat.len()).collect();
    if !matches!(kind, Kind::Compact) {
        for i in (1..order.len()).rev() {
            order.swap(i, (g.next() % (i as u64 + 1)) as usize);
        }
    }
    let mut strides = vec![0i64; flat.len()];
    let mut cur = 1i64;
    for &i in &order {
        if matches!(kind, Kind::Gappy) && g.next().is_multiple_of(3) {
            cur *= g.pick(&[2, 3]);
        }
        strides[i] = cur;
        cur *= flat[i];
    }
    match kind {
        Kind::Zeros => strides.iter_mut().for_each(|d| {
            if g.next().is_multiple_of(3) {
                *d = 0
            }
        }),
        Kind::Random => strides
            .iter_mut()
            .for_each(|d| *d = g.pick(&[0, 1, 1, 2, 3, 4, 8, 16, -1, -2])),
        _ => {}
    }
    let mut it = strides.into_iter();
    let stride = shape.map_ints(&mut |_| it.next().unwrap());
    Layout::new(shape, stride).unwrap()
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Compact),
        Just(Kind::Permuted),
        Just(Kind::Gappy),
        Just(Kind::Zeros),
        Just(Kind::Random)
    ]
}

/// Layouts of every kind, negative strides included.
fn any_layout() -> impl Strategy<Value = Layout> {
    (any::<u64>(), kind()).prop_map(|(s, k)| layout_from(s, k, 512))
}

/// Layouts with non-negative strides (stride 0 included).
fn nonneg_layout(max_size: i64) -> impl Strategy<Value = Layout> {
    (any::<u64>(), kind()).prop_map(move |(s, k)| {
        let l = layout_from(s, k, max_size);
        let stride = l.stride().map_ints(&mut |d| d.abs());
        Layout::new(l.shape().clone(), stride).unwrap()
    })
}

/// Injective layouts: compact, permuted or gappy.
fn injective_layout(max_size: i64) -> impl Strategy<Value = Layout> {
    (
        any::<u64>(),
        prop_oneof![Just(Kind::Compact), Just(Kind::Permuted), Just(Kind::Gappy)],
    )
        .prop_map(move |(s, k)| layout_from(s, k, max_size))
}

fn values(l: &Layout) -> Vec<i64> {
    (0..l.size()).map(|i| l.eval(i).unwrap()).collect()
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

fn is_injective(l: &Layout) -> bool {
    let v = values(l);
    v.iter().collect::<BTreeSet<_>>().len() == v.len()
}

/// `R(i) == A(B(i))` for `i < size(B)`, A's last mode extending past its size (CuTe's reading).
/// When A ends in an extent-1 mode, B's modes may together run past the mode before it, which then
/// extends (C++'s reading), so only the `i` with `B(i)` inside A are checked.
fn check_composition(a: &Layout, b: &Layout, r: &Layout) -> Result<(), TestCaseError> {
    prop_assert_eq!(r.size(), b.size());
    if let IntTuple::Tuple(bm) = b.shape() {
        prop_assert_eq!(r.rank(), bm.len(), "R = {} not congruent to B", r);
    }
    let unit_last = a.shape().flatten_ints().last() == Some(&1);
    for i in 0..b.size() {
        let bi = b.eval(i).unwrap();
        if unit_last && !(0..a.size()).contains(&bi) {
            continue;
        }
        let want = a.eval(bi).unwrap();
        prop_assert_eq!(r.eval(i).unwrap(), want, "i = {}: R = {}", i, r);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn coalesce_preserves_function_and_size(l in any_layout()) {
        let c = coalesce(&l);
        prop_assert_eq!(c.size(), l.size());
        prop_assert!(c.depth() <= 1);
        prop_assert_eq!(values(&c), values(&l));
        // By-mode coalesce keeps every top-level mode's function.
        let r = coalesce_with(&l, &IntTuple::Tuple(vec![IntTuple::Int(0); l.rank()])).unwrap();
        prop_assert_eq!(r.rank(), l.rank());
        for (m, n) in r.modes().iter().zip(l.modes()) {
            prop_assert_eq!(values(m), values(&n));
        }
    }

    #[test]
    fn filter_keeps_the_image(l in any_layout()) {
        let f = filter(&l);
        let img: BTreeSet<i64> = values(&l).into_iter().collect();
        let fimg: BTreeSet<i64> = values(&f).into_iter().collect();
        prop_assert_eq!(fimg, img);
    }

    #[test]
    fn composition_is_function_composition(a in nonneg_layout(512), b in nonneg_layout(64)) {
        if let Ok(r) = composition(&a, &b) {
            check_composition(&a, &b, &r)?;
        }
    }

    /// Negative strides included: whatever rute returns is still `A o B` under its own evaluation.
    #[test]
    fn composition_with_signed_strides(a in any_layout(), b in any_layout()) {
        if let Ok(r) = composition(&a, &b) {
            check_composition(&a, &b, &r)?;
        }
    }

    /// A tuple tiler composes mode by mode and, as in C++, keeps only the modes it reaches.
    #[test]
    fn composition_tiler_goes_mode_by_mode(a in nonneg_layout(512), b in nonneg_layout(16)) {
        let used = a.rank().min(b.rank());
        let tiles: Vec<Layout> = b.modes().into_iter().take(used).collect();
        let tiler = Tiler::Tuple(tiles.iter().cloned().map(Tiler::Layout).collect());
        if let Ok(r) = composition_tiler(&a, &tiler) {
            prop_assert_eq!(r.rank(), used);
            for (i, t) in tiles.iter().enumerate() {
                let mode = a.mode(i).unwrap();
                prop_assert_eq!(r.mode(i).unwrap(), composition(&mode, t).unwrap());
            }
        }
    }

    #[test]
    fn composition_with_compact_rhs(a in injective_layout(512), s in any::<u64>()) {
        // B drawn from A's own domain: a permuted compact layout of a divisor-sized shape.
        let b = layout_from(s, Kind::Permuted, a.size());
        if let Ok(r) = composition(&a, &b) {
            check_composition(&a, &b, &r)?;
        }
    }

    #[test]
    fn complement_is_disjoint_and_increasing(a in nonneg_layout(512), k in 1i64..4) {
        let m = a.cosize().max(1) * k;
        if let Ok(c) = complement(&a, m) {
            let img: BTreeSet<i64> = values(&a).into_iter().collect();
            let cv = values(&c);
            for i in 1..cv.len() {
                prop_assert!(cv[i - 1] < cv[i], "complement {} not increasing", c);
                prop_assert!(!img.contains(&cv[i]), "complement {} meets A", c);
            }
            prop_assert_eq!(&c, &complement(&filter(&a), m).unwrap());
        }
    }

    /// Precondition: A injective with each (sorted) stride a multiple of the previous stride times
    /// its extent (compact, permuted or gappy layouts), and M a multiple of A's span
    /// `max(s*d)`. Then `make_layout(A, complement(A, M))` is a bijection onto `[0, M)`.
    #[test]
    fn complement_completes_a_bijection(a in injective_layout(256), k in 1i64..4) {
        let span = a.shape().flatten_ints().iter().zip(a.stride().flatten_ints())
            .map(|(s, d)| s * d).max().unwrap();
        let m = span * k;
        let c = complement(&a, m).unwrap();
        let full = Layout::from_modes(vec![a.clone(), c.clone()]);
        prop_assert_eq!(full.size(), m, "(A, C) = {}", full);
        prop_assert_eq!(sorted(values(&full)), (0..m).collect::<Vec<_>>());
    }

    #[test]
    fn right_inverse_is_a_right_inverse(l in any_layout()) {
        let r = right_inverse(&l).unwrap();
        for i in 0..r.size() {
            prop_assert_eq!(l.eval(r.eval(i).unwrap()).unwrap(), i, "R = {}", r);
        }
    }

    #[test]
    fn left_inverse_is_a_left_inverse(l in nonneg_layout(512)) {
        if let Ok(r) = left_inverse(&l) {
            if is_injective(&l) {
                for i in 0..l.size() {
                    prop_assert_eq!(r.eval(l.eval(i).unwrap()).unwrap(), i, "R = {}", r);
                }
            }
        }
    }

    #[test]
    fn left_inverse_exists_for_chained_injective(l in injective_layout(512)) {
        let r = left_inverse(&l).unwrap();
        for i in 0..l.size() {
            prop_assert_eq!(r.eval(l.eval(i).unwrap()).unwrap(), i, "R = {}", r);
        }
    }

    #[test]
    fn logical_divide_mode0_is_the_tile(a in nonneg_layout(512), t in nonneg_layout(16)) {
        if let Ok(r) = logical_divide(&a, &Tiler::Layout(t.clone())) {
            prop_assert_eq!(r.rank(), 2);
            prop_assert_eq!(r.mode(0).unwrap(), composition(&a, &t).unwrap());
        }
    }

    /// A tile `n:1` with `n | size(A)` splits A into whole tiles, so the divide only permutes A's
    /// offsets. It exists whenever CuTe's divisibility conditions hold, always so for a compact A.
    #[test]
    fn dividing_by_a_divisor_permutes(a in injective_layout(512), pick in any::<usize>()) {
        let n = a.size();
        let divs: Vec<i64> = (1..=n).filter(|d| n % d == 0).collect();
        let t = Layout::vector(divs[pick % divs.len()], 1).unwrap();
        let compact = a == Layout::col_major(a.shape().clone()).unwrap();
        let r = match logical_divide(&a, &Tiler::Layout(t.clone())) {
            Ok(r) => r,
            Err(e) => {
                prop_assert!(!compact, "{}", e);
                return Ok(());
            }
        };
        prop_assert_eq!(r.size(), n);
        prop_assert_eq!(sorted(values(&r)), sorted(values(&a)));
        let z = zipped_divide(&a, &Tiler::Layout(t)).unwrap();
        prop_assert_eq!(values(&z), values(&r));
    }

    #[test]
    fn tuple_tilers_go_mode_by_mode(a in injective_layout(512), pick in any::<u64>()) {
        let modes = a.modes();
        let mut g = Lcg(pick);
        let used = 1 + (g.next() as usize) % modes.len();
        let items: Vec<Tiler> = modes[..used].iter().map(|m| {
            let n = m.size();
            let divs: Vec<i64> = (1..=n).filter(|d| n % d == 0).collect();
            Tiler::Layout(Layout::vector(g.pick(&divs), 1).unwrap())
        }).collect();
        let tiler = Tiler::Tuple(items.clone());
        let compact = a == Layout::col_major(a.shape().clone()).unwrap();
        let ld = match logical_divide(&a, &tiler) {
            Ok(r) => r,
            Err(e) => {
                prop_assert!(!compact, "{}", e);
                return Ok(());
            }
        };
        for (i, m) in modes.iter().enumerate() {
            let want = match items.get(i) {
                Some(t) => logical_divide(m, t).unwrap(),
                None => m.clone(),
            };
            prop_assert_eq!(ld.mode(i).unwrap(), want);
        }
        let zd = zipped_divide(&a, &tiler).unwrap();
        let td = tiled_divide(&a, &tiler).unwrap();
        let fd = flat_divide(&a, &tiler).unwrap();
        prop_assert_eq!(zd.rank(), 2);
        prop_assert_eq!(td.rank(), 1 + zd.mode(1).unwrap().rank());
        prop_assert_eq!(fd.rank(), zd.mode(0).unwrap().rank() + zd.mode(1).unwrap().rank());
        // Rearranging modes never changes which offsets are reached.
        let lv = sorted(values(&ld));
        prop_assert_eq!(sorted(values(&zd)), lv.clone());
        prop_assert_eq!(sorted(values(&td)), lv.clone());
        prop_assert_eq!(sorted(values(&fd)), lv);
    }

    #[test]
    fn logical_product_mode0_is_the_block(a in nonneg_layout(64), b in nonneg_layout(16)) {
        if let Ok(r) = logical_product(&a, &Tiler::Layout(b.clone())) {
            prop_assert_eq!(r.mode(0).unwrap(), a.clone());
            prop_assert_eq!(r.size(), a.size() * b.size());
        }
    }

    /// For compact blocks and tilers (permuted, no gaps), every product is a bijection onto
    /// `[0, size(A) * size(B))`, and the rank-sensitive ones have rank `max(rank A, rank B)`.
    #[test]
    fn compact_products_tile_exactly(sa in any::<u64>(), sb in any::<u64>()) {
        let a = layout_from(sa, Kind::Permuted, 64);
        let b = layout_from(sb, Kind::Permuted, 16);
        let n = a.size() * b.size();
        let all: Vec<i64> = (0..n).collect();
        let lp = logical_product(&a, &Tiler::Layout(b.clone())).unwrap();
        prop_assert_eq!(sorted(values(&lp)), all.clone());
        for p in [blocked_product(&a, &b).unwrap(), raked_product(&a, &b).unwrap()] {
            prop_assert_eq!(p.rank(), a.rank().max(b.rank()));
            prop_assert_eq!(sorted(values(&p)), all.clone(), "{}", p);
        }
    }

    #[test]
    fn downcast_then_upcast_round_trips(l in any_layout(), n in 1i64..5) {
        if let Ok(d) = downcast(&l, n) {
            prop_assert_eq!(upcast(&d, n).unwrap(), l);
        }
    }

    #[test]
    fn ordered_layouts_are_compact(s in any::<u64>()) {
        let shape = shape_from(s, 512);
        let mut g = Lcg(s);
        let n = shape.flatten_ints().len();
        let mut order: Vec<i64> = (0..n as i64).collect();
        for i in (1..n).rev() {
            order.swap(i, (g.next() % (i as u64 + 1)) as usize);
        }
        let mut it = order.into_iter();
        let ord = shape.map_ints(&mut |_| it.next().unwrap());
        let l = make_ordered_layout(&shape, &ord).unwrap();
        prop_assert_eq!(sorted(values(&l)), (0..l.size()).collect::<Vec<_>>());
    }

    #[test]
    fn tile_to_shape_fills_the_target(sa in any::<u64>(), reps in prop::collection::vec(1i64..4, 1..4)) {
        let block = layout_from(sa, Kind::Permuted, 32);
        let r = reps.len().max(block.rank());
        let mut reps = reps;
        reps.resize(r, 1);
        let block_sizes: Vec<i64> = (0..r).map(|i| block.mode(i).map_or(1, |m| m.size())).collect();
        let target: Vec<i64> = block_sizes.iter().zip(&reps).map(|(b, k)| b * k).collect();
        let t = tile_to_shape(&block, &IntTuple::ints(&target), None).unwrap();
        for (i, want) in target.iter().enumerate() {
            prop_assert_eq!(t.mode(i).unwrap().size(), *want);
        }
        prop_assert_eq!(sorted(values(&t)), (0..t.size()).collect::<Vec<_>>());
    }
}

/// A result of an operation: a layout `Layout::new` takes back, whose `size`, `cosize` and offsets
/// do not overflow, or a typed error.
fn valid(r: &Result<Layout, LayoutError>) -> Result<(), TestCaseError> {
    if let Ok(l) = r {
        prop_assert!(
            Layout::new(l.shape().clone(), l.stride().clone()).is_ok(),
            "{}",
            l
        );
        prop_assert_eq!(Some(l.size()), l.shape().checked_product(), "{}", l);
        let _ = (l.cosize(), l.idx2crd(l.size() - 1));
        prop_assert!(l.eval(l.size() - 1).is_ok(), "{}", l);
    }
    Ok(())
}

/// Hostile layouts: huge extents and strides, negative strides. Making one returns a typed error when
/// its size or span overflows (`None` here); every operation on the rest must return a layout that
/// keeps the rules or a typed error, never panic (the fuzz harness, tests/fuzz.rs, goes further).
fn hostile_layout() -> impl Strategy<Value = Option<Layout>> {
    let ext = prop_oneof![
        1i64..5,
        Just(1i64 << 31),
        Just(1i64 << 40),
        Just(i64::MAX),
        1i64..i64::MAX
    ];
    let strd = prop_oneof![
        -3i64..5,
        Just(i64::MIN),
        Just(i64::MAX),
        Just(1i64 << 62),
        any::<i64>()
    ];
    prop::collection::vec((ext, strd), 1..5).prop_map(|m| {
        let s = IntTuple::Tuple(m.iter().map(|p| IntTuple::Int(p.0)).collect());
        let d = IntTuple::Tuple(m.iter().map(|p| IntTuple::Int(p.1)).collect());
        Layout::new(s, d).ok()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn hostile_inputs_never_panic(a in hostile_layout(), b in hostile_layout(), n in any::<i64>(),
                                  bits in (0u32..300, 0u32..300)) {
        let (Some(a), Some(b)) = (a, b) else { return Ok(()) };
        let tb = Tiler::Layout(b.clone());
        let tt = Tiler::Tuple(b.modes().into_iter().map(Tiler::Layout).collect());
        valid(&Ok(coalesce(&a)))?;
        valid(&Ok(filter(&a)))?;
        valid(&coalesce_with(&a, b.shape()))?;
        valid(&composition(&a, &b))?;
        valid(&composition_tiler(&a, &tt))?;
        valid(&complement(&a, n))?;
        valid(&complement_shape(&a, b.shape()))?;
        valid(&right_inverse(&a))?;
        valid(&left_inverse(&a))?;
        for t in [&tb, &tt] {
            valid(&logical_divide(&a, t))?;
            valid(&zipped_divide(&a, t))?;
            valid(&tiled_divide(&a, t))?;
            valid(&flat_divide(&a, t))?;
            valid(&logical_product(&a, t))?;
            valid(&zipped_product(&a, t))?;
            valid(&tiled_product(&a, t))?;
            valid(&flat_product(&a, t))?;
        }
        valid(&blocked_product(&a, &b))?;
        valid(&raked_product(&a, &b))?;
        valid(&make_ordered_layout(a.shape(), b.stride()))?;
        valid(&tile_to_shape(&a, b.shape(), Some(b.stride())))?;
        valid(&tile_to_shape(&a, b.shape(), None))?;
        valid(&upcast(&a, n))?;
        valid(&downcast(&a, n))?;
        valid(&recast_layout(&a, bits.0, bits.1))?;
        let _ = shape_div(a.shape(), b.shape());
    }
}

/// The random properties above only check results that exist; this makes sure most of the
/// well-formed inputs do produce one (a regression to "always Err" would otherwise pass).
#[test]
fn well_formed_inputs_mostly_succeed() {
    let (mut ok, mut total) = (0, 0);
    for s in 0..2000u64 {
        let a = layout_from(s, Kind::Permuted, 512);
        let b = layout_from(s.wrapping_mul(31) + 7, Kind::Permuted, a.size());
        total += 1;
        ok += usize::from(composition(&a, &b).is_ok());
    }
    assert!(
        ok * 10 > total * 6,
        "only {ok} of {total} compositions succeeded"
    );
    let divides = (0..500u64)
        .filter(|&s| {
            let a = layout_from(s, Kind::Gappy, 512);
            logical_divide(&a, &Tiler::Layout(Layout::vector(2, 1).unwrap())).is_ok()
        })
        .count();
    assert!(divides > 300, "only {divides} of 500 divides succeeded");
}
