//! Thread-block clusters (sm_90): a block's place in its cluster, the cluster-wide barrier, and
//! the masks TMA multicast takes.

use crate::kernel::{cluster_cta_rank, cluster_num_ctas, Var};

pub use crate::kernel::{cluster_arrive, cluster_sync, cluster_wait};

/// The cluster's shape in blocks, `(x, y)`: x runs along M tiles, y along N tiles, and block
/// rank `r` sits at `(r % x, r / x)` (`%cluster_ctarank` is x-fastest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClusterShape {
    /// Blocks along x.
    pub x: u32,
    /// Blocks along y.
    pub y: u32,
}

impl ClusterShape {
    /// One block.
    pub const ONE: ClusterShape = ClusterShape { x: 1, y: 1 };

    /// Blocks in the cluster.
    pub fn size(&self) -> u32 {
        self.x * self.y
    }

    /// This block's rank in the cluster, `0..size` (`%cluster_ctarank`; the constant 0 for one
    /// block, so that single-block programs emit nothing for it).
    pub fn rank(&self) -> Var<u32> {
        if self.size() == 1 {
            Var::konst(0)
        } else {
            cluster_cta_rank()
        }
    }

    /// This block's `(x, y)` in the cluster.
    pub fn coords(&self) -> (Var<u32>, Var<u32>) {
        let r = self.rank();
        if self.y == 1 {
            (r, Var::konst(0))
        } else if self.x == 1 {
            (Var::konst(0), r)
        } else {
            (r % self.x, r / self.x)
        }
    }

    /// The multicast mask of the blocks in this block's cluster row (same y: the blocks that
    /// share an N tile, hence B), bit `rank` for each.
    pub fn row_mask(&self, y: Var<u32>) -> Var<u32> {
        let row = (1u32 << self.x) - 1;
        Var::konst(row) << (y * self.x)
    }

    /// The multicast mask of the blocks in this block's cluster column (same x: the blocks that
    /// share an M tile, hence A).
    pub fn column_mask(&self, x: Var<u32>) -> Var<u32> {
        let mut col = 0u32;
        for j in 0..self.y {
            col |= 1 << (j * self.x);
        }
        Var::konst(col) << x
    }
}

/// Blocks in this block's cluster (`%cluster_nctarank`).
pub fn cluster_size() -> Var<u32> {
    cluster_num_ctas()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_name_the_blocks_of_a_row_and_a_column() {
        let c = ClusterShape { x: 2, y: 2 };
        // ranks: (0,0)=0 (1,0)=1 (0,1)=2 (1,1)=3
        assert_eq!(c.row_mask(Var::konst(1)).as_const(), Some(0b1100));
        assert_eq!(c.row_mask(Var::konst(0)).as_const(), Some(0b0011));
        assert_eq!(c.column_mask(Var::konst(1)).as_const(), Some(0b1010));
        assert_eq!(c.column_mask(Var::konst(0)).as_const(), Some(0b0101));
        let one = ClusterShape { x: 2, y: 1 };
        assert_eq!(one.row_mask(Var::konst(0)).as_const(), Some(0b11));
        assert_eq!(one.column_mask(Var::konst(1)).as_const(), Some(0b10));
    }
}
