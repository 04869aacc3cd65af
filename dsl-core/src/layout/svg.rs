//! Layouts as pictures, in SVG: a layout's offsets on its 2-D grid, a swizzled shared-memory
//! layout colored by the 16-byte chunk each element lands in (bank conflicts show as repeated
//! colors down a column of 8 rows), and a thread-value layout drawn over its tile (which thread
//! holds which element, CuTe's `print_svg` of a `TiledCopy` or `TiledMMA`).
//!
//! For a tiled MMA or copy, draw `svg_tv(&mma.get_layout_c_tv()?, m, n)` with `(m, n, _)` its
//! `tile_size_mnk()` (CuTe's `print_svg(tiled_mma)` shows A, B and C this way), or
//! `copy.get_layout_tv(side)` over its tiler.
//!
//! Every picture is a grid of cells, rows the indices of mode 0 and columns those of mode 1 (as
//! [`print_layout`](super::print::print_layout) tables them), with the indices along the top and
//! left edges. The grid is at most [`MAX_CELLS`](super::print::MAX_CELLS) cells, and each picture
//! takes time and memory bounded by its size: a cell costs one addition however many modes the
//! layout has, and a thread-value picture looks at most [`MAX_PAIRS_PER_CELL`] pairs per cell
//! besides broadcasts. What cannot be drawn so is refused with a [`LayoutError`].
//!
//! ```
//! use dsl_core::layout::{svg, Layout};
//! let l: Layout = "(4,8):(8,1)".parse().unwrap();
//! let picture = svg::svg_layout(&l).unwrap();
//! assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
//! // One cell per element, each labeled with its offset: row 1, column 2 holds 10.
//! assert_eq!(picture.matches("<rect").count(), 32 + 1);
//! assert!(picture.contains(r#"<text x="120" y="86">10</text>"#));
//! ```

use std::fmt::Write;

use super::print::Grid;
use super::{ComposedLayout, IntTuple, Layout, LayoutError};

/// Cell width and height in pixels, and the margin for the indices.
const CELL_W: i64 = 36;
const CELL_H: i64 = 24;
const MARGIN: i64 = 30;

/// Eight fills that neighbors can tell apart (CuTe's `print_svg` uses the same idea).
const PALETTE: [&str; 8] = [
    "rgb(175,175,255)",
    "rgb(175,255,175)",
    "rgb(255,255,175)",
    "rgb(255,175,175)",
    "rgb(210,210,255)",
    "rgb(210,255,210)",
    "rgb(255,255,210)",
    "rgb(255,210,210)",
];

/// One cell: up to two lines of label and a palette index (`None`: white, nothing there).
struct Cell {
    lines: Vec<String>,
    color: Option<i64>,
}

/// The offsets of a rank-1 or rank-2 layout on its grid, each cell colored by `offset mod 8`.
pub fn svg_layout(layout: &Layout) -> Result<String, LayoutError> {
    let printed = layout.to_string();
    let g = Grid::of(layout, &printed)?;
    picture(&printed, g.rows, g.cols, |m, n| {
        let v = g.offset(m, n)?;
        Ok(Cell {
            lines: vec![v.to_string()],
            color: Some(v),
        })
    })
}

/// The swizzled offsets of a composed layout on its inner layout's grid, each cell colored by
/// the 16-byte chunk of a 128-byte row its element falls in (`offset * elem_bytes / 16 mod 8`):
/// for an `ldmatrix`/`stmatrix`-friendly layout, 8 rows of one column show 8 colors.
pub fn svg_composed(c: &ComposedLayout, elem_bytes: i64) -> Result<String, LayoutError> {
    if !(1..=16).contains(&elem_bytes) {
        return Err(LayoutError::precondition(
            "svg_composed",
            c.to_string(),
            format!("an element of {elem_bytes} bytes: pictures take 1 to 16"),
        ));
    }
    let printed = c.to_string();
    let g = Grid::of(&c.layout, &printed)?;
    picture(&printed, g.rows, g.cols, |m, n| {
        let v = g.composed_offset(c, m, n)?;
        // The byte address of an offset near i64::MAX does not fit in i64; in i128 it does.
        let chunk = (i128::from(v) * i128::from(elem_bytes) / 16).rem_euclid(8);
        Ok(Cell {
            lines: vec![v.to_string()],
            color: Some(chunk as i64),
        })
    })
}

/// The most (thread, value) pairs [`svg_tv`] looks at per cell of its tile, broadcast modes (stride
/// 0) aside: a picture's time is bounded by its size.
pub const MAX_PAIRS_PER_CELL: i64 = 16;

/// The coordinates of one mode of a thread-value layout that can own a cell: as `(linear index,
/// offset)` pairs, with the coordinate of every stride-0 (broadcast) leaf held at 0. Along such a
/// leaf every coordinate reaches the same cell, and the first in `(thread, value)` order, the one
/// drawn, has coordinate 0 there.
fn owners(mode: &Layout) -> Vec<(i64, i64)> {
    let leaves: Vec<(i64, i64)> = mode
        .shape()
        .flatten_ints()
        .into_iter()
        .zip(mode.stride().flatten_ints())
        .collect();
    // (extent walked, stride, weight of the leaf in the linear index)
    let mut walk = Vec::with_capacity(leaves.len());
    let mut weight = 1i64;
    for &(s, d) in &leaves {
        if d != 0 && s > 1 {
            walk.push((s, d, weight));
        }
        // Below the mode's size, which fits in i64.
        weight = weight.saturating_mul(s);
    }
    let mut out = vec![(0i64, 0i64)];
    for &(s, d, w) in &walk {
        let before = out.len();
        for c in 1..s {
            for k in 0..before {
                let (i, o) = out[k];
                // Partial sums of the mode's index and offset: within its size and span.
                out.push((i + c * w, o + c * d));
            }
        }
    }
    out.sort_unstable();
    out
}

/// How many coordinates [`owners`] yields for `mode`, without making them (`None` past `i64`).
fn owner_count(mode: &Layout) -> Option<i64> {
    mode.shape()
        .flatten_ints()
        .into_iter()
        .zip(mode.stride().flatten_ints())
        .filter(|&(_, d)| d != 0)
        .try_fold(1i64, |acc, (s, _)| acc.checked_mul(s))
}

/// A thread-value layout `(thread, value) -> index` drawn over the column-major `rows x cols`
/// tile it indexes: each cell names the thread and value that hold it (`T5` over `V2`), colored
/// by thread. A cell no pair reaches stays white; where several reach one cell (a broadcast),
/// the first in `(thread, value)` order is shown. Errors: a layout that is not rank 2, an index
/// outside the tile, more than [`MAX_PAIRS_PER_CELL`] pairs per cell once broadcast (stride-0)
/// modes are set aside.
///
/// ```
/// use dsl_core::layout::{svg, Layout};
/// // The C fragment of mma.m16n8k16 (CuTe's SM80_16x8_Row): thread t holds rows t/4 and t/4 + 8,
/// // columns 2 (t % 4) and 2 (t % 4) + 1.
/// let tv: Layout = "((4,8),(2,2)):((32,1),(16,8))".parse().unwrap();
/// let picture = svg::svg_tv(&tv, 16, 8).unwrap();
/// assert!(picture.contains(">T1</text>"));
/// ```
pub fn svg_tv(tv: &Layout, rows: i64, cols: i64) -> Result<String, LayoutError> {
    let fail = |rule: String| LayoutError::precondition("svg_tv", tv.to_string(), rule);
    if tv.rank() != 2 {
        return Err(fail(
            "a thread-value layout has rank 2: (thread, value)".into(),
        ));
    }
    let tile = Layout::col_major(IntTuple::ints(&[rows, cols]))?;
    let g = Grid::of(&tile, &format!("{tv} over a {rows}x{cols} tile"))?;
    let (rows, cols) = (g.rows, g.cols);
    let cells = rows * cols;
    let (thr, val) = (tv.mode(0)?, tv.mode(1)?);
    let pairs = owner_count(&thr).and_then(|t| t.checked_mul(owner_count(&val)?));
    if pairs.is_none_or(|p| p > MAX_PAIRS_PER_CELL * cells) {
        return Err(fail(format!(
            "it has {} (thread, value) pairs besides its broadcast (stride-0) modes, more than \
             {MAX_PAIRS_PER_CELL} per cell of a {rows}x{cols} tile, which is as many as a picture \
             looks at",
            pairs.map_or("more than 2^63".to_string(), |p| p.to_string())
        )));
    }
    let (threads, values) = (owners(&thr), owners(&val));
    let mut owner = vec![None; cells as usize];
    for &(v, v_off) in &values {
        for &(t, t_off) in &threads {
            // Both are partial sums of one offset of `tv`: their sum is within its span.
            let idx = t_off + v_off;
            if !(0..cells).contains(&idx) {
                return Err(fail(format!(
                    "thread {t} value {v} maps to {idx}, outside the {rows}x{cols} tile"
                )));
            }
            let slot = &mut owner[idx as usize];
            if slot.is_none_or(|(t0, v0)| (t, v) < (t0, v0)) {
                *slot = Some((t, v));
            }
        }
    }
    picture(&format!("{tv} over {rows}x{cols}"), rows, cols, |m, n| {
        Ok(match owner[(m + rows * n) as usize] {
            Some((t, v)) => Cell {
                lines: vec![format!("T{t}"), format!("V{v}")],
                color: Some(t),
            },
            None => Cell {
                lines: Vec::new(),
                color: None,
            },
        })
    })
}

/// The SVG document: a title line, indices along the edges, one rectangle and label per cell.
fn picture(
    title: &str,
    rows: i64,
    cols: i64,
    cell: impl Fn(i64, i64) -> Result<Cell, LayoutError>,
) -> Result<String, LayoutError> {
    let (w, h) = (MARGIN + cols * CELL_W + 2, MARGIN + 16 + rows * CELL_H + 2);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="monospace" font-size="10" text-anchor="middle">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="2" y="12" text-anchor="start">{}</text>"#,
        escape(title)
    );
    let top = 16 + MARGIN;
    for n in 0..cols {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{n}</text>"#,
            MARGIN + n * CELL_W + CELL_W / 2,
            top - 6
        );
    }
    for m in 0..rows {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{m}</text>"#,
            MARGIN / 2,
            top + m * CELL_H + CELL_H / 2 + 4
        );
    }
    for m in 0..rows {
        for n in 0..cols {
            let c = cell(m, n)?;
            let (x, y) = (MARGIN + n * CELL_W, top + m * CELL_H);
            let fill = c
                .color
                .map_or("white", |k| PALETTE[k.rem_euclid(8) as usize]);
            let _ = writeln!(
                s,
                r#"<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" stroke="black"/>"#
            );
            let cx = x + CELL_W / 2;
            match c.lines.as_slice() {
                [one] => {
                    let _ = writeln!(s, r#"<text x="{cx}" y="{}">{one}</text>"#, y + 16);
                }
                [a, b] => {
                    let _ = writeln!(s, r#"<text x="{cx}" y="{}">{a}</text>"#, y + 10);
                    let _ = writeln!(s, r#"<text x="{cx}" y="{}">{b}</text>"#, y + 21);
                }
                _ => {}
            }
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Swizzle;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    /// The labels of the cells, row by row (the texts after the title and the edge indices).
    fn labels(svg: &str, rows: usize, cols: usize) -> Vec<String> {
        let texts: Vec<String> = svg
            .lines()
            .filter(|l| l.starts_with("<text"))
            .map(|l| {
                let start = l.find('>').unwrap() + 1;
                l[start..l.rfind("</text>").unwrap()].to_string()
            })
            .collect();
        texts[1 + rows + cols..].to_vec()
    }

    #[test]
    fn layout_cells_are_its_offsets() {
        let l = lay("(2,3):(3,1)");
        let svg = svg_layout(&l).unwrap();
        assert_eq!(labels(&svg, 2, 3), ["0", "1", "2", "3", "4", "5"]);
        assert_eq!(svg.matches("<rect").count(), 1 + 6);
        // A rank-1 layout is one column.
        let svg = svg_layout(&lay("4:2")).unwrap();
        assert_eq!(labels(&svg, 4, 1), ["0", "2", "4", "6"]);
    }

    #[test]
    fn swizzled_rows_of_8_take_8_chunks() {
        // The seed's shared-memory atom: Sw<3,3,3> o (8,64):(64,1) of 16-bit elements. Every
        // column of 8 rows must hit 8 different 16-byte chunks, i.e. 8 colors.
        let c = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, lay("(8,64):(64,1)"));
        let svg = svg_composed(&c, 2).unwrap();
        let fills: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<rect x="))
            .map(|l| {
                l.split("fill=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(fills.len(), 8 * 64);
        for n in (0..64).step_by(8) {
            let mut column: Vec<&str> = (0..8).map(|m| fills[m * 64 + n]).collect();
            column.sort();
            column.dedup();
            assert_eq!(column.len(), 8, "column {n}");
        }
        // Without the swizzle, column 0 is one chunk: one color.
        let plain = ComposedLayout::new(Swizzle::identity(), 0, lay("(8,64):(64,1)"));
        let svg = svg_composed(&plain, 2).unwrap();
        let first = svg
            .lines()
            .filter(|l| l.starts_with("<rect x="))
            .step_by(64);
        assert_eq!(
            first
                .map(|l| l.split("fill=\"").nth(1).unwrap().to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            1
        );
    }

    /// The C fragment of `mma.m16n8k16` as the PTX ISA draws it: row g = t/4 holds c0, c1 at
    /// columns 2(t%4), 2(t%4)+1; row g+8 holds c2, c3.
    #[test]
    fn tv_cells_name_the_owner() {
        let tv = lay("((4,8),(2,2)):((32,1),(16,8))");
        let svg = svg_tv(&tv, 16, 8).unwrap();
        let cells = labels(&svg, 16, 8);
        // Two labels per cell, row-major.
        let at = |m: usize, n: usize| {
            (
                cells[2 * (m * 8 + n)].clone(),
                cells[2 * (m * 8 + n) + 1].clone(),
            )
        };
        for t in 0..32usize {
            let (g, q) = (t / 4, t % 4);
            for (v, (m, n)) in [
                (0, (g, 2 * q)),
                (1, (g, 2 * q + 1)),
                (2, (g + 8, 2 * q)),
                (3, (g + 8, 2 * q + 1)),
            ] {
                assert_eq!(
                    at(m, n),
                    (format!("T{t}"), format!("V{v}")),
                    "thread {t} value {v}"
                );
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let e = svg_layout(&lay("(2,2,2)")).unwrap_err().to_string();
        assert!(e.contains("rank 1 or 2"), "{e}");
        let e = svg_layout(&lay("(1024,1024)")).unwrap_err().to_string();
        assert!(e.contains("more than 65536 cells"), "{e}");
        let e = svg_tv(&lay("(4,2):(1,4)"), 2, 2).unwrap_err().to_string();
        assert!(e.contains("outside the 2x2 tile"), "{e}");
        let e = svg_tv(&lay("8:1"), 2, 4).unwrap_err().to_string();
        assert!(e.contains("rank 2"), "{e}");
        let c = ComposedLayout::new(Swizzle::identity(), 0, lay("4:1"));
        assert!(svg_composed(&c, 0).is_err());
    }
}
