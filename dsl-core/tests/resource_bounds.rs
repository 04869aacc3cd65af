//! Resource bounds of the layout library: on long inputs (hundreds of thousands of modes, an
//! expression of megabytes) and on the largest layouts the fuzz harness makes, every operation
//! finishes quickly and in memory bounded by its input and output, or refuses with a sentence.
//!
//! Memory is measured in a child process: this test binary run again on one ignored test, under
//! `ulimit -v`, which reads its own peak resident size (`VmHWM` in `/proc/self/status`) at the end.

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dsl_core::layout::expr::evaluate;
use dsl_core::layout::*;

/// Set in the child process, so that the ignored tests know their parent runs them.
const CHILD: &str = "RUTE_RESOURCE_CHILD";

/// Runs the ignored test `name` of this binary in a child process whose address space is capped at
/// `cap_mb`, and fails if the child fails.
fn in_child(name: &str, cap_mb: u64) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let script = format!(
        "ulimit -v {} && exec \"$0\" --exact {name} --ignored --test-threads=1 --nocapture",
        cap_mb * 1024
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(exe)
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} in a child process: {}\n{text}",
        out.status
    );
    for line in text.lines().filter(|l| l.contains("peak resident size")) {
        println!("{line}");
    }
}

/// This process's peak resident size in MiB, or `None` where `/proc` does not say.
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// In a child process: fails if this process's peak resident size passed `max_mb`.
fn assert_peak_below(what: &str, max_mb: u64) {
    if let Some(mb) = peak_rss_mb() {
        assert!(
            mb <= max_mb,
            "{what}: peak resident size {mb} MiB, more than {max_mb}"
        );
        let slowest = SLOWEST.lock().unwrap_or_else(|p| p.into_inner()).clone();
        println!(
            "{what}: peak resident size {mb} MiB (at most {max_mb}); slowest operation {} in {:?}",
            slowest.1, slowest.0
        );
    }
}

fn ones(n: usize) -> String {
    vec!["1"; n].join(",")
}

/// `zipped_divide` of a 5 MB expression line (1.25M modes, a tiler of 1.25M modes) took 950 MB: it
/// made the whole logical_divide, then copied it to regroup its modes. It regroups mode by mode now.
#[test]
fn zipped_divide_of_a_long_line_needs_memory_like_its_result() {
    in_child("child_zipped_divide_of_a_long_line", 2048);
}

#[test]
#[ignore = "run by zipped_divide_of_a_long_line_needs_memory_like_its_result in a child process"]
fn child_zipped_divide_of_a_long_line() {
    let n = 1_250_000;
    let line = format!("zipped_divide(({}), ({}))", ones(n), ones(n));
    assert!(line.len() > 5_000_000);
    let v = evaluate(&line).unwrap();
    assert_eq!(v.to_string().len(), 4 * 2 * n + 11);
    assert_peak_below("zipped_divide of a 5 MB line", 600);
}

/// How long one operation may take: well under 5 s in an optimized build (CI's), ten times that
/// in an unoptimized one.
fn limit() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(1)
    }
}

/// The slowest operation timed so far in this process.
static SLOWEST: Mutex<(Duration, String)> = Mutex::new((Duration::ZERO, String::new()));

/// Runs `f`, failing if it takes longer than [`limit`].
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(
        took < limit(),
        "{what} took {took:?}, more than {:?}",
        limit()
    );
    let mut slowest = SLOWEST.lock().unwrap_or_else(|p| p.into_inner());
    if took > slowest.0 {
        *slowest = (took, what.to_string());
    }
    out
}

/// A layout result: one `Layout::new` accepts, or an error that reads as a sentence.
fn valid(what: &str, r: Result<Layout, LayoutError>) {
    match r {
        Ok(l) => {
            let again = Layout::new(l.shape().clone(), l.stride().clone());
            assert!(
                again.is_ok(),
                "{what} returned a layout Layout::new refuses"
            );
            assert_eq!(Some(l.size()), l.shape().checked_product(), "{what}");
            let _ = (l.cosize(), l.eval(l.size() - 1), l.idx2crd(l.size() / 2));
        }
        Err(e) => assert!(!e.to_string().trim().is_empty(), "{what}: an empty error"),
    }
}

/// Every operation of the algebra on `a`, `b` (also as a tiler), the tiler `t`, a shape and an
/// order, each timed.
fn every_operation(a: &Layout, b: &Layout, t: &Tiler, shape: &IntTuple, order: &IntTuple) {
    let one = |what: &str, f: &dyn Fn() -> Result<Layout, LayoutError>| valid(what, timed(what, f));
    for (name, l) in [("a", a), ("b", b)] {
        let op = |o: &str| format!("{o}({name})");
        one(&op("coalesce"), &|| Ok(coalesce(l)));
        one(&op("filter"), &|| Ok(filter(l)));
        one(&op("filter_zeros"), &|| Ok(filter_zeros(l)));
        one(&op("right_inverse"), &|| right_inverse(l));
        one(&op("left_inverse"), &|| left_inverse(l));
        one(&op("upcast"), &|| upcast(l, 2));
        one(&op("downcast"), &|| downcast(l, 2));
        one(&op("recast_layout"), &|| recast_layout(l, 16, 8));
        one(&op("complement"), &|| complement(l, l.cosize()));
        one(&op("complement_shape"), &|| complement_shape(l, shape));
        one(&op("coalesce_with"), &|| coalesce_with(l, shape));
        one(&op("append_to_rank"), &|| append_to_rank(l, l.rank() + 3));
        let all: Vec<usize> = (0..l.rank()).rev().collect();
        one(&op("select"), &|| l.select(&all));
        one(&op("mode"), &|| l.mode(l.rank() - 1));
        one(&op("from_modes"), &|| Ok(Layout::from_modes(l.modes())));
        one(&op("into_modes"), &|| {
            Layout::try_from_modes(l.clone().into_modes())
        });
        one(&op("tile_to_shape"), &|| tile_to_shape(l, shape, None));
        one(&op("tile_to_shape"), &|| {
            tile_to_shape(l, shape, Some(order))
        });
        one(&op("flatten"), &|| Ok(l.flatten()));
        let what = op("pictures");
        timed(&what, || {
            let _ = print::print_layout(l);
            let _ = svg::svg_layout(l);
            let _ = svg::svg_tv(l, 256, 256);
        });
        let c = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 7, l.clone());
        timed(&op("composed"), || {
            let _ = c.logical_divide(t);
            let _ = c.zipped_product(t);
            let _ = c.select(&all);
            let _ = svg::svg_composed(&c, 2);
        });
    }
    one("composition", &|| composition(a, b));
    one("composition_tiler", &|| composition_tiler(a, t));
    one("append", &|| append(a, b));
    one("prepend", &|| prepend(a, b));
    one("zip", &|| zip(a, b));
    one("try_from_modes", &|| {
        Layout::try_from_modes(vec![a.clone(), b.clone()])
    });
    one("blocked_product", &|| blocked_product(a, b));
    one("raked_product", &|| raked_product(a, b));
    for tl in [t, &Tiler::Layout(b.clone())] {
        one("logical_divide", &|| logical_divide(a, tl));
        one("zipped_divide", &|| zipped_divide(a, tl));
        one("tiled_divide", &|| tiled_divide(a, tl));
        one("flat_divide", &|| flat_divide(a, tl));
        one("logical_product", &|| logical_product(a, tl));
        one("zipped_product", &|| zipped_product(a, tl));
        one("tiled_product", &|| tiled_product(a, tl));
        one("flat_product", &|| flat_product(a, tl));
    }
    one("make_ordered_layout", &|| make_ordered_layout(shape, order));
    one("make_ordered_layout", &|| {
        make_ordered_layout(a.shape(), order)
    });
    timed("shape_div", || {
        shape_div(shape, order).map(|_| ()).unwrap_or(())
    });
    for call in [
        format!("zipped_divide({a}, {b})"),
        format!("blocked_product({a}, {b})"),
        format!("select({a}, {})", ["0"; 8].join(",")),
        format!("left_inverse({b})"),
    ] {
        let r = timed("the calculator", || {
            evaluate(&call).map(|v| v.to_string().len())
        });
        if let Err(e) = r {
            assert!(!e.to_string().is_empty());
        }
    }
}

/// A tree of depth 3 with `k` modes a level: the shape with `k^3` leaves, extent 2 on the first
/// `twos` leaves and 1 on the rest, and a congruent stride from `stride(leaf)`.
fn cube(k: usize, twos: usize, stride: impl Fn(usize) -> i64) -> Layout {
    let (mut shape, mut strides) = (Vec::new(), Vec::new());
    let mut leaf = 0;
    for _ in 0..k {
        let (mut s1, mut d1) = (Vec::new(), Vec::new());
        for _ in 0..k {
            let (mut s2, mut d2) = (Vec::new(), Vec::new());
            for _ in 0..k {
                s2.push(IntTuple::Int(if leaf < twos { 2 } else { 1 }));
                d2.push(IntTuple::Int(stride(leaf)));
                leaf += 1;
            }
            s1.push(IntTuple::Tuple(s2));
            d1.push(IntTuple::Tuple(d2));
        }
        shape.push(IntTuple::Tuple(s1));
        strides.push(IntTuple::Tuple(d1));
    }
    Layout::new(IntTuple::Tuple(shape), IntTuple::Tuple(strides)).unwrap()
}

/// The fuzz harness's layouts have depth 3 and at most 4 modes a level, with sizes and spans up to
/// the edge of `i64`; these have 5 a level (125 leaves), at that edge.
fn largest_fuzz_inputs() -> Vec<(Layout, Layout, Tiler)> {
    let compact = cube(5, 62, |i| if i < 62 { 1 << (61 - i) } else { 0 });
    let signed = cube(5, 62, |i| {
        let d = i64::MAX / 63;
        if i >= 62 {
            i64::MAX
        } else if i % 2 == 0 {
            d
        } else {
            -d
        }
    });
    let huge: Layout = "9223372036854775807:1".parse().unwrap();
    let broadcast: Layout = "(9223372036854775807,1):(0,9223372036854775807)"
        .parse()
        .unwrap();
    let square: Layout = "(2147483648,2147483648):(1,-2147483648)".parse().unwrap();
    let nested = Tiler::Tuple(
        compact
            .modes()
            .into_iter()
            .take(4)
            .map(|m| Tiler::Tuple(m.modes().into_iter().map(Tiler::Layout).collect()))
            .collect(),
    );
    let flat = Tiler::Tuple(vec![
        Tiler::Layout(huge.clone()),
        Tiler::Layout(square.clone()),
    ]);
    vec![
        (compact.clone(), signed.clone(), nested.clone()),
        (signed.clone(), compact.clone(), nested),
        (huge.clone(), square.clone(), flat.clone()),
        (square, huge.clone(), flat.clone()),
        (broadcast.clone(), compact.clone(), flat),
        (compact, broadcast, Tiler::Layout(huge)),
    ]
}

/// Every operation on the largest layouts the fuzz harness makes finishes within [`limit`], and
/// the whole run within 256 MiB.
#[test]
fn largest_fuzz_inputs_are_quick_and_small() {
    in_child("child_largest_fuzz_inputs", 4096);
}

#[test]
#[ignore = "run by largest_fuzz_inputs_are_quick_and_small in a child process"]
fn child_largest_fuzz_inputs() {
    for (a, b, t) in largest_fuzz_inputs() {
        let shape = IntTuple::ints(&[4, 1 << 40, 3]);
        let order = IntTuple::ints(&[2, 0, 1]);
        every_operation(&a, &b, &t, &shape, &order);
        every_operation(&a, &b, &t, a.shape(), &a.shape().map_ints(&mut |e| e % 7));
    }
    assert_peak_below("the largest fuzz inputs", 256);
}

/// Layouts and tilers of 200,000 modes (extent 1, as a layout's size allows at most 63 larger
/// ones) through every operation: each finishes within [`limit`], the whole run within 512 MiB.
/// (CuTe's algorithms are quadratic in the modes they sort; a layout has at most 63 modes that
/// are not extent-1, and the algebra sorts only those.)
#[test]
fn many_modes_are_quick_and_small() {
    in_child("child_many_modes", 4096);
}

#[test]
#[ignore = "run by many_modes_are_quick_and_small in a child process"]
fn child_many_modes() {
    // An unoptimized build (a developer's `cargo test`) checks a quarter as many.
    let n = if cfg!(debug_assertions) {
        50_000
    } else {
        200_000
    };
    let strides: Vec<String> = (0..n).map(|i| (i % 5).to_string()).collect();
    let a: Layout = format!("({}):({})", ones(n), strides.join(","))
        .parse()
        .unwrap();
    let b: Layout = format!("(4,{}):(1,{})", ones(n - 1), ones(n - 1))
        .parse()
        .unwrap();
    let t = Tiler::Tuple(b.modes().into_iter().map(Tiler::Layout).collect());
    let order = IntTuple::ints(&(0..n as i64).rev().collect::<Vec<_>>());
    every_operation(&a, &b, &t, a.shape(), &order);
    every_operation(&b, &a, &t, b.shape(), &order);
    assert_peak_below("200,000 modes", 512);
}

/// Nested `select(make_layout(..), 0, 0, ...)` repeats a mode tenfold a level: 290 characters of
/// expression made 44 million integers (712 MB) before the calculator bounded its values.
#[test]
fn repeated_selects_are_refused_quickly() {
    in_child("child_repeated_selects", 4096);
}

#[test]
#[ignore = "run by repeated_selects_are_refused_quickly in a child process"]
fn child_repeated_selects() {
    let mut e = "1:0".to_string();
    for _ in 0..8 {
        e = format!("select(make_layout({e}),{})", ["0"; 10].join(","));
    }
    let err = timed("nested selects", || evaluate(&e)).unwrap_err();
    assert!(err.to_string().contains("the calculator keeps"), "{err}");
    assert_peak_below("nested selects", 256);
}
