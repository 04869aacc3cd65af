//! A block's tensor memory (PTX ISA 9.7.16.1): 128 lanes of 512 columns of 32-bit cells, its
//! column allocations, and a shadow per cell (FastTrack's epochs, as shared memory keeps them)
//! for the checks: reads of cells nothing wrote, and conflicting accesses that the tcgen05
//! ordering rules do not order (see `op/tcgen05.rs`).

use super::clock::{comp_of, Vc};

/// Lanes (rows) of a block's tensor memory.
pub(crate) const LANES: u32 = 128;
/// Columns of a block's tensor memory.
pub(crate) const COLUMNS: u32 = 512;
/// The allocation unit, in columns.
pub(crate) const UNIT: u32 = 32;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cell {
    /// Epoch of the last write (0: never written) and of the last two unordered reads.
    w: u32,
    r: [u32; 2],
    wsite: u32,
    rsite: u32,
}

impl Cell {
    /// The earlier access that an access by `who` (a write where `write`) conflicts with, if
    /// any: the last write, unordered before it; else, for a write, a read it does not follow.
    /// (Its epoch, its site, whether it wrote.)
    fn unordered_before(&self, who: &TmemAccessor<'_>, write: bool) -> Option<(u32, u32, bool)> {
        if !ordered(self.w, who) {
            return Some((self.w, self.wsite, true));
        }
        if !write {
            return None;
        }
        let r = self.r.iter().find(|&&r| !ordered(r, who))?;
        Some((*r, self.rsite, false))
    }
}

/// Who accesses tensor memory: the component and clock of the access, the clock that orders
/// it after others' accesses, and the site.
pub(crate) struct TmemAccessor<'a> {
    pub epoch: u32,
    pub vc: &'a Vc,
    pub site: u32,
}

/// A conflict with an earlier access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TmemConflict {
    pub lane: u32,
    pub column: u32,
    pub comp: u32,
    pub site: u32,
    pub earlier: Earlier,
}

/// What the earlier party of a conflict did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Earlier {
    Read,
    Write,
    /// The columns' `tcgen05.alloc`.
    Alloc,
}

/// One allocation of a block's tensor memory: its columns, and the allocating warp's
/// tensor-memory epoch and site, which every access to the columns is ordered after
/// (9.7.16.6: the allocating warp's `tcgen05.fence::before_thread_sync`, a synchronization,
/// and the accessing warp's `tcgen05.fence::after_thread_sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Allocation {
    pub col: u32,
    pub n: u32,
    pub epoch: u32,
    pub site: u32,
}

/// What an access found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TmemOutcome {
    pub conflict: Option<TmemConflict>,
    /// The first cell read that nothing wrote (lane, column).
    pub uninit: Option<(u32, u32)>,
}

/// A block's tensor memory.
#[derive(Debug, Clone)]
pub(crate) struct Tmem {
    pub cells: Vec<u32>,
    shadow: Vec<Cell>,
    /// The allocations (their columns: [`Tmem::allocated`]).
    pub allocations: Vec<Allocation>,
    /// The block gave up its right to allocate.
    pub relinquished: bool,
    checks: bool,
}

/// Whether an earlier access by epoch `e` is ordered before one by `who`: the same component
/// (program order, or one agent's operations in order), or `e` within `who`'s clock.
fn ordered(e: u32, who: &TmemAccessor<'_>) -> bool {
    e == 0 || comp_of(e) == comp_of(who.epoch) || who.vc.covers(e)
}

impl Tmem {
    pub fn new(checks: bool) -> Tmem {
        let n = (LANES * COLUMNS) as usize;
        Tmem {
            cells: vec![0; n],
            shadow: if checks {
                vec![Cell::default(); n]
            } else {
                Vec::new()
            },
            allocations: Vec::new(),
            relinquished: false,
            checks,
        }
    }

    /// The allocation units of columns `col .. col + n` (within the memory).
    pub fn units(col: u32, n: u32) -> u16 {
        let (first, last) = (col / UNIT, (col + n).div_ceil(UNIT));
        (first..last.min(COLUMNS / UNIT)).fold(0, |m, u| m | (1 << u))
    }

    /// The allocated columns, a bit per 32-column unit.
    pub fn allocated(&self) -> u16 {
        self.allocations
            .iter()
            .fold(0, |m, a| m | Tmem::units(a.col, a.n))
    }

    /// Whether columns `col .. col + n` are all allocated.
    pub fn is_allocated(&self, col: u32, n: u32) -> bool {
        col + n <= COLUMNS && Tmem::units(col, n) & !self.allocated() == 0
    }

    /// The first free run of `n` columns (a multiple of the unit), if any.
    pub fn free_run(&self, n: u32) -> Option<u32> {
        let units = n / UNIT;
        (0..=(COLUMNS / UNIT).saturating_sub(units))
            .map(|u| u * UNIT)
            .find(|&c| Tmem::units(c, n) & self.allocated() == 0)
    }

    /// Accesses `n` columns from `col` in `lane`: reads `out` (when `write` is false) or writes
    /// `vals`, checking each cell against the shadow. A read returns the cells.
    pub fn access(
        &mut self,
        lane: u32,
        col: u32,
        vals: &mut [u32],
        write: bool,
        who: &TmemAccessor<'_>,
    ) -> TmemOutcome {
        let at = (lane * COLUMNS + col) as usize;
        let n = vals.len();
        if write {
            self.cells[at..at + n].copy_from_slice(vals);
        } else {
            vals.copy_from_slice(&self.cells[at..at + n]);
        }
        let mut out = TmemOutcome::default();
        if !self.checks {
            return out;
        }
        let alloc = self
            .allocations
            .iter()
            .find(|a| (a.col..a.col + a.n).contains(&col));
        if let Some(a) = alloc.filter(|a| !ordered(a.epoch, who)) {
            out.conflict = Some(TmemConflict {
                lane,
                column: col,
                comp: comp_of(a.epoch),
                site: a.site,
                earlier: Earlier::Alloc,
            });
        }
        for (i, c) in self.shadow[at..at + n].iter_mut().enumerate() {
            let column = col + i as u32;
            if !write && c.w == 0 && out.uninit.is_none() {
                out.uninit = Some((lane, column));
            }
            if out.conflict.is_none() {
                out.conflict =
                    c.unordered_before(who, write)
                        .map(|(epoch, site, write)| TmemConflict {
                            lane,
                            column,
                            comp: comp_of(epoch),
                            site,
                            earlier: if write { Earlier::Write } else { Earlier::Read },
                        });
            }
            if write {
                *c = Cell {
                    w: who.epoch,
                    r: [0, 0],
                    wsite: who.site,
                    rsite: 0,
                };
            } else {
                // Keep this read and the other one it does not follow.
                let keep = if ordered(c.r[0], who) { c.r[1] } else { c.r[0] };
                c.r = [who.epoch, if ordered(keep, who) { 0 } else { keep }];
                c.rsite = who.site;
            }
        }
        out
    }

    /// The first access to columns `col .. col + n` (all lanes) that `vc` does not cover:
    /// (its component, whether it wrote).
    pub fn unordered_access(&self, col: u32, n: u32, vc: &Vc) -> Option<(u32, bool)> {
        if !self.checks {
            return None;
        }
        for lane in 0..LANES {
            let at = (lane * COLUMNS + col) as usize;
            for c in &self.shadow[at..at + n as usize] {
                if c.w != 0 && !vc.covers(c.w) {
                    return Some((comp_of(c.w), true));
                }
                if let Some(&r) = c.r.iter().find(|&&r| r != 0 && !vc.covers(r)) {
                    return Some((comp_of(r), false));
                }
            }
        }
        None
    }

    /// Frees columns `col .. col + n`: they read as unwritten again.
    pub fn free(&mut self, col: u32, n: u32) {
        self.allocations.retain(|a| a.col != col);
        if self.checks {
            for lane in 0..LANES {
                let at = (lane * COLUMNS + col) as usize;
                self.shadow[at..at + n as usize].fill(Cell::default());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::clock::epoch;
    use super::*;

    #[test]
    fn allocations_take_free_runs_and_accesses_are_ordered_by_clocks() {
        let mut t = Tmem::new(true);
        assert_eq!(t.free_run(128), Some(0));
        t.allocations.push(Allocation {
            col: 0,
            n: 128,
            epoch: 0,
            site: 0,
        });
        assert_eq!(t.free_run(256), Some(128));
        assert!(t.is_allocated(32, 64) && !t.is_allocated(96, 64));
        let mut a = Vc::new(3);
        a.0[0] = 1;
        let mut b = Vc::new(3);
        b.0[1] = 1;
        let wa = TmemAccessor {
            epoch: epoch(0, 1),
            vc: &a,
            site: 7,
        };
        let mut v = [5u32, 6];
        assert!(t.access(3, 10, &mut v, true, &wa).conflict.is_none());
        let rb = TmemAccessor {
            epoch: epoch(1, 1),
            vc: &b,
            site: 9,
        };
        let mut r = [0u32; 3];
        let o = t.access(3, 10, &mut r, false, &rb);
        assert_eq!(r[..2], [5, 6]);
        assert_eq!(o.uninit, Some((3, 12)));
        let c = o.conflict.unwrap();
        assert_eq!((c.comp, c.site, c.earlier), (0, 7, Earlier::Write));
        // Once b's clock covers a's write, the read is ordered.
        b.0[0] = 1;
        let rb = TmemAccessor {
            epoch: epoch(1, 1),
            vc: &b,
            site: 9,
        };
        assert!(t.access(3, 10, &mut r[..2], false, &rb).conflict.is_none());
        // A later write by a that did not see b's read races it.
        let o = t.access(3, 10, &mut v, true, &wa);
        assert_eq!(
            o.conflict.map(|c| (c.comp, c.earlier)),
            Some((1, Earlier::Read))
        );
        assert_eq!(t.unordered_access(0, 32, &a), Some((1, false)));
        t.free(0, 128);
        assert_eq!(t.unordered_access(0, 32, &a), None);
    }

    #[test]
    fn an_access_not_ordered_after_the_allocation_conflicts_with_it() {
        let mut t = Tmem::new(true);
        // Allocated by component 2's tensor-memory agent at its clock 1, at site 5.
        t.allocations.push(Allocation {
            col: 64,
            n: 32,
            epoch: epoch(2, 1),
            site: 5,
        });
        let mut before = Vc::new(3);
        before.0[1] = 4;
        let who = TmemAccessor {
            epoch: epoch(1, 4),
            vc: &before,
            site: 9,
        };
        let mut v = [1u32; 4];
        let c = t.access(0, 70, &mut v, true, &who).conflict.unwrap();
        assert_eq!(
            (c.comp, c.site, c.earlier, c.column),
            (2, 5, Earlier::Alloc, 70)
        );
        // Once the accessor's clock holds the allocation (the allocating warp's
        // before_thread_sync, a barrier, this warp's after_thread_sync), it is ordered.
        let mut after = before.clone();
        after.0[2] = 1;
        let who = TmemAccessor {
            epoch: epoch(1, 4),
            vc: &after,
            site: 9,
        };
        assert!(t.access(0, 70, &mut v, true, &who).conflict.is_none());
        // The allocating agent's own accesses are in its program order.
        let own = TmemAccessor {
            epoch: epoch(2, 1),
            vc: &before,
            site: 11,
        };
        let mut r = [0u32; 4];
        assert_eq!(t.access(1, 64, &mut r, false, &own).conflict, None);
    }
}
