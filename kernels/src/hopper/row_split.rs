//! The last wave's rows shared out (`_b`): for a B of one tile (`_r`), whose tiles form one
//! column, the tiles that do not fill the last wave are cut into one piece of rows per block
//! instead. 81920 x 256 x 256 in 64-row tiles is 1280 tiles on 132 blocks: 92 blocks take a
//! tenth tile while 40 idle; cut, the 5888 rows after the first nine waves are 123 pieces of 48
//! rows, and no block computes more than 624 rows where 640 was the longest (2.5% less, in a
//! kernel whose time is its bytes).
//!
//! A piece is loaded and computed as a whole tile (TMA reads the rows past it, which the next
//! piece's block reads about the same time, through L2) and stored clipped to its rows, so D is
//! written once: from the registers (`_u`), rows a multiple of 8; or through the staging tile,
//! whose TMA boxes are 16 rows each (`TmaCopy::store_within`), rows a multiple of 16.
//!
//! ```
//! use kernels::hopper::row_split::RowSplit;
//! let s = RowSplit::of(81920, 64, 132, 8).unwrap();
//! assert_eq!((s.full, s.rows, s.pieces), (1188, 48, 123));
//! assert_eq!(s.longest_block(64, 132), 9 * 64 + 48);
//! // Pieces of 16-row blocks: 5888 rows over 132 blocks is 44.6 each, 48 either way.
//! assert_eq!(RowSplit::of(81920, 64, 132, 16), Some(s));
//! // A problem of whole waves has nothing to cut.
//! assert_eq!(RowSplit::of(8448, 64, 132, 8), None);
//! ```

use dsl_core::kernel::*;

/// How the tiles' rows are cut: `full` whole tiles first, then `pieces` pieces of `rows` rows
/// (the last maybe shorter), at most one per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSplit {
    /// Whole tiles, the first waves: a multiple of the blocks.
    pub full: u32,
    /// Rows of a piece: the rows left over the blocks, rounded up to the granule.
    pub rows: u32,
    /// Pieces, no more than the blocks.
    pub pieces: u32,
}

impl RowSplit {
    /// The cut of `m` rows in tiles of `tile_m` walked by `blocks` blocks, pieces a multiple of
    /// `granule` rows (a divisor of `tile_m`), or `None` where the tiles fill whole waves (or
    /// there are no blocks).
    pub fn of(m: u32, tile_m: u32, blocks: u32, granule: u32) -> Option<RowSplit> {
        if blocks == 0 || granule == 0 {
            return None;
        }
        let full = m.div_ceil(tile_m) / blocks * blocks;
        let left = m.checked_sub(full * tile_m).filter(|&r| r > 0)?;
        // A piece of whole granules, no more than a tile: left < blocks * tile_m.
        let rows = left.div_ceil(blocks).next_multiple_of(granule);
        Some(RowSplit {
            full,
            rows,
            pieces: left.div_ceil(rows),
        })
    }

    /// Units of the walk: the whole tiles and the pieces.
    pub fn units(&self) -> u32 {
        self.full + self.pieces
    }

    /// Rows the busiest of `blocks` blocks computes (whole tiles of `tile_m` and a piece).
    pub fn longest_block(&self, tile_m: u32, blocks: u32) -> u32 {
        self.full / blocks * tile_m + self.rows
    }
}

/// [`RowSplit::of`] on the device, for `m` rows in tiles of `tile_m` over the grid's `blocks`,
/// pieces of whole `granule`s (a power of two): `(full, rows)` where the tiles' count along M
/// becomes `full + pieces` (returned third); with nothing to cut, `full` is every tile and
/// `rows` a tile's.
pub fn row_split_on_device(
    m: Var<u32>,
    tile_m: u32,
    blocks: Var<u32>,
    granule: u32,
) -> (Var<u32>, Var<u32>, Var<u32>) {
    debug_assert!(granule.is_power_of_two(), "a granule of {granule} rows");
    let tiles = (m + (tile_m - 1)) / tile_m;
    let full = tiles / blocks * blocks;
    let covered = full * tile_m;
    let cut = m.gt(covered);
    // The rows left, as if one were left when none is (the select below drops it).
    let left = select(cut, m - covered, Var::konst(1u32));
    let rows = (((left + (blocks - 1u32)) / blocks) + (granule - 1)) & !(granule - 1);
    let pieces = (left + (rows - 1u32)) / rows;
    (
        select(cut, full, tiles),
        select(cut, rows, Var::konst(tile_m)),
        select(cut, full + pieces, tiles),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row is in exactly one unit, no piece is longer than a tile, and no block does more
    /// than a piece past its whole tiles.
    #[test]
    fn the_cut_covers_every_row_once_and_evens_the_last_wave() {
        for (blocks, granule) in [1u32, 7, 66, 132]
            .into_iter()
            .flat_map(|b| [(b, 8), (b, 16)])
        {
            for m in [
                1u32, 8, 63, 64, 65, 1000, 4224, 8448, 8449, 40960, 81920, 163840, 100_000,
            ] {
                let Some(s) = RowSplit::of(m, 64, blocks, granule) else {
                    assert_eq!(m.div_ceil(64) % blocks, 0, "{m} on {blocks}");
                    continue;
                };
                assert!(
                    s.rows <= 64 && s.rows % granule == 0 && s.pieces <= blocks,
                    "{s:?}"
                );
                assert_eq!(s.full % blocks, 0);
                let covered = s.full * 64 + s.pieces * s.rows;
                assert!(
                    covered >= m && covered - m < s.rows,
                    "{m} on {blocks}: {s:?}"
                );
                let whole_waves = m.div_ceil(64).div_ceil(blocks) * 64;
                assert!(s.longest_block(64, blocks) <= whole_waves, "{m}: {s:?}");
            }
        }
        let s = RowSplit::of(163840, 64, 132, 8).unwrap();
        assert_eq!(s.longest_block(64, 132), 19 * 64 + 32);
        let s = RowSplit::of(163840, 64, 132, 16).unwrap();
        assert_eq!((s.rows, s.pieces), (32, 104));
    }
}
