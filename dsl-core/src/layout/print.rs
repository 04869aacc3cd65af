//! 2-D tables of layouts, like CuTe's `print_layout`: people read layouts as pictures.
//!
//! The table has the layout on its first line, then the column indices, then one row per index of
//! mode 0, each cell the offset of `(row, column)`. Cells are as wide as the widest of CuTe's width
//! (`num_digits(cosize)`), the offsets and the column indices, so the table stays aligned where CuTe's
//! would not (negative strides, swizzled offsets past the cosize).

use std::fmt::Write;

use super::{coalesce, ComposedLayout, Layout, LayoutError};

/// The most cells a table may have; a bigger one is an error, not megabytes of text.
pub const MAX_CELLS: i64 = 1 << 16;

/// CuTe's `print_layout(layout)` as a string: rows are the indices of mode 0, columns those of mode 1
/// (a rank-1 layout is an `n x 1` table; a hierarchical mode counts by its size).
///
/// ```
/// use dsl_core::layout::{print::print_layout, Layout};
/// let l: Layout = "(2,2):(2,1)".parse().unwrap();
/// let t = print_layout(&l).unwrap();
/// let lines: Vec<&str> = t.lines().collect();
/// assert_eq!(lines[0], "(2,2):(2,1)");
/// assert_eq!(lines[1], "      0   1 ");
/// assert_eq!(lines[2], "    +---+---+");
/// assert_eq!(lines[3], " 0  | 0 | 1 |");
/// assert_eq!(lines[5], " 1  | 2 | 3 |");
/// assert_eq!(lines[6], "    +---+---+");
/// ```
pub fn print_layout(layout: &Layout) -> Result<String, LayoutError> {
    let printed = layout.to_string();
    let g = Grid::of(layout, &printed)?;
    table(&printed, g.rows, g.cols, layout.cosize(), |m, n| {
        g.offset(m, n)
    })
}

/// [`print_layout`] of a composed layout: the grid is the inner layout's, each cell the swizzled
/// offset `swizzle(offset + layout(row, column))`.
pub fn print_composed(c: &ComposedLayout) -> Result<String, LayoutError> {
    let printed = c.to_string();
    let g = Grid::of(&c.layout, &printed)?;
    table(&printed, g.rows, g.cols, c.cosize(), |m, n| {
        g.composed_offset(c, m, n)
    })
}

/// A rank-1 or rank-2 layout laid out on its table: rows the indices of mode 0, columns those of
/// mode 1, and the offsets of each row and column, so that a cell costs one addition however many
/// modes the layout has.
pub(super) struct Grid {
    /// Rows and columns, at most [`MAX_CELLS`] cells.
    pub rows: i64,
    pub cols: i64,
    row_offsets: Vec<i64>,
    col_offsets: Vec<i64>,
}

impl Grid {
    /// The grid of `layout` (`printed` names it in errors): rank 1 or 2, at most [`MAX_CELLS`] cells.
    pub fn of(layout: &Layout, printed: &str) -> Result<Grid, LayoutError> {
        let fail = |rule: &str| LayoutError::precondition("print_layout", printed, rule);
        let (row_mode, col_mode) = match layout.rank() {
            0 | 1 => (layout.clone(), Layout::unit()),
            2 => (layout.mode(0)?, layout.mode(1)?),
            _ => return Err(fail("a table shows a layout of rank 1 or 2")),
        };
        let (rows, cols) = (row_mode.size(), col_mode.size());
        match rows.checked_mul(cols) {
            Some(cells) if cells <= MAX_CELLS => {}
            _ => {
                return Err(fail(&format!(
                    "the table would have more than {MAX_CELLS} cells"
                )))
            }
        }
        // The coalesced mode is the same function of the index, with at most 63 modes.
        let offsets = |mode: &Layout, n: i64| {
            let c = coalesce(mode);
            (0..n).map(|i| c.eval(i)).collect::<Result<Vec<_>, _>>()
        };
        Ok(Grid {
            rows,
            cols,
            row_offsets: offsets(&row_mode, rows)?,
            col_offsets: offsets(&col_mode, cols)?,
        })
    }

    /// The layout's offset at row `m`, column `n` (`layout(m, n)`, or `layout(m)` for rank 1).
    pub fn offset(&self, m: i64, n: i64) -> Result<i64, LayoutError> {
        let (r, c) = (self.row_offsets[m as usize], self.col_offsets[n as usize]);
        // Both are partial sums of one layout's offset, so their sum is within its span.
        r.checked_add(c).ok_or_else(|| LayoutError::Overflow {
            op: "print_layout",
            args: format!("row {m}, column {n}"),
        })
    }

    /// The offset of composed layout `c` (whose inner layout this grid is) at row `m`, column `n`.
    pub fn composed_offset(&self, c: &ComposedLayout, m: i64, n: i64) -> Result<i64, LayoutError> {
        let inner = self.offset(m, n)?;
        let shifted = c
            .offset
            .checked_add(inner)
            .ok_or_else(|| LayoutError::Overflow {
                op: "eval",
                args: format!("{c}, ({m},{n})"),
            })?;
        Ok(c.swizzle.apply(shifted))
    }
}

/// CuTe's `num_digits`: decimal digits of a non-negative int, 1 for anything below 10.
fn num_digits(x: i64) -> usize {
    let mut digits = 1;
    let mut bound = 10i64;
    while x >= bound {
        digits += 1;
        match bound.checked_mul(10) {
            Some(b) => bound = b,
            None => break,
        }
    }
    digits
}

fn table(
    header: &str,
    rows: i64,
    cols: i64,
    cosize: i64,
    cell: impl Fn(i64, i64) -> Result<i64, LayoutError>,
) -> Result<String, LayoutError> {
    let values = (0..rows)
        .map(|m| (0..cols).map(|n| cell(m, n)).collect())
        .collect::<Result<Vec<Vec<i64>>, _>>()?;
    let widest_value = values
        .iter()
        .flatten()
        .map(|v| v.to_string().len())
        .max()
        .unwrap_or(1);
    let width = num_digits(cosize)
        .max(widest_value)
        .max((cols - 1).to_string().len());
    let rule = format!(
        "    {}+\n",
        format!("+{}", "-".repeat(width + 2)).repeat(cols as usize)
    );

    // `write!` into a String cannot fail.
    let mut out = String::new();
    let _ = writeln!(out, "{header}");
    out.push_str("    ");
    for n in 0..cols {
        let _ = write!(out, "  {n:>width$} ");
    }
    out.push('\n');
    for (m, row) in values.iter().enumerate() {
        out.push_str(&rule);
        let _ = write!(out, "{m:>2}  ");
        for v in row {
            let _ = write!(out, "| {v:>width$} ");
        }
        out.push_str("|\n");
    }
    out.push_str(&rule);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Swizzle;

    /// CuTe's `print_layout` for `(4,8):(8,1)`, written out by hand from its source: the width is
    /// `num_digits(cosize = 32) = 2`, so columns are `"  %2d "`, separators `"+----"` and cells
    /// `"| %2d "`, rows labelled `"%2d  "`.
    #[test]
    fn row_major_4x8_matches_cute() {
        let l: Layout = "(4,8):(8,1)".parse().unwrap();
        let sep = "    +----+----+----+----+----+----+----+----+\n";
        let mut want = String::from("(4,8):(8,1)\n");
        want.push_str("       0    1    2    3    4    5    6    7 \n");
        for m in 0..4 {
            want.push_str(sep);
            want.push_str(&format!(" {m}  "));
            for n in 0..8 {
                want.push_str(&format!("| {:>2} ", m * 8 + n));
            }
            want.push_str("|\n");
        }
        want.push_str(sep);
        assert_eq!(print_layout(&l).unwrap(), want);
    }

    #[test]
    fn rank_one_is_a_column_and_hierarchical_modes_count_by_size() {
        let l: Layout = "3:2".parse().unwrap();
        let t = print_layout(&l).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "3:2");
        assert_eq!(lines[1], "      0 ");
        assert_eq!(lines[2], "    +---+");
        assert_eq!(lines[3], " 0  | 0 |");
        assert_eq!(lines[5], " 1  | 2 |");
        assert_eq!(lines[7], " 2  | 4 |");
        assert_eq!(lines.len(), 9);

        let l: Layout = "((2,2),3):((1,6),2)".parse().unwrap();
        let t = print_layout(&l).unwrap();
        // Row m, column n holds L((m, n)) with m split over (2,2).
        for m in 0..4i64 {
            let row = t.lines().nth(3 + 2 * m as usize).unwrap();
            let cells: Vec<i64> = row
                .split('|')
                .skip(1)
                .filter_map(|c| c.trim().parse().ok())
                .collect();
            let want: Vec<i64> = (0..3).map(|n| (m % 2) + 6 * (m / 2) + 2 * n).collect();
            assert_eq!(cells, want, "row {m}\n{t}");
        }
    }

    #[test]
    fn composed_cells_are_swizzled() {
        let c = ComposedLayout::new(
            Swizzle::new(1, 0, 1).unwrap(),
            0,
            "(2,2):(1,2)".parse().unwrap(),
        );
        let t = print_composed(&c).unwrap();
        assert!(t.starts_with("Sw<1,0,1> o 0 o (2,2):(1,2)\n"), "{t}");
        // offsets 0,1,2,3 -> 0,1,3,2: bit 1 flips bit 0.
        assert!(t.contains(" 0  | 0 | 3 |"), "{t}");
        assert!(t.contains(" 1  | 1 | 2 |"), "{t}");
    }

    #[test]
    fn negative_offsets_stay_aligned() {
        let l: Layout = "(2,2):(-10,1)".parse().unwrap();
        let t = print_layout(&l).unwrap();
        let widths: Vec<usize> = t.lines().skip(2).map(str::len).collect();
        assert!(widths.iter().all(|&w| w == widths[0]), "{t}");
        assert!(t.contains("| -10 |"), "{t}");
    }

    #[test]
    fn rank_three_and_huge_tables_are_errors() {
        let l: Layout = "(2,2,2):(1,2,4)".parse().unwrap();
        let e = print_layout(&l).unwrap_err();
        assert!(
            matches!(
                e,
                LayoutError::Precondition {
                    op: "print_layout",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("(2,2,2):(1,2,4)"));
        let big: Layout = "(1024,1024):(1,1024)".parse().unwrap();
        assert!(print_layout(&big).is_err());
    }

    #[test]
    fn cute_num_digits() {
        assert_eq!(num_digits(0), 1);
        assert_eq!(num_digits(9), 1);
        assert_eq!(num_digits(10), 2);
        assert_eq!(num_digits(32), 2);
        assert_eq!(num_digits(1000), 4);
        assert_eq!(num_digits(-5), 1);
        assert_eq!(num_digits(i64::MAX), 19);
    }
}
