//! Races in global memory, across the blocks of a grid: a shadow of every writable buffer's
//! bytes (the last write and the last read, each with its cluster, epoch and site), and the
//! happens-before that global memory carries between clusters, which only release and acquire
//! patterns on global locations create (the PTX ISA's *Release and Acquire Patterns*; blocks of
//! different clusters share no barrier, and a later wave's blocks are not ordered after an
//! earlier wave's by anything the memory model names).
//!
//! Within a cluster, the cluster's vector clocks order two accesses, as for shared memory.
//! Across clusters the clocks of one cluster mean nothing to another, so a cluster keeps
//! [`Imports`]: each acquire that read a location another cluster released records, against
//! the acquiring warp's clock, the [`GridView`] published there (for each cluster whose work the
//! release covers, that cluster's vector clock at the release). An access of cluster `b` is
//! after an access of cluster `a` at epoch `e` when one of `b`'s imports that happens before
//! the access (the acquiring warp's clock is covered by the accessor's) has `a`'s clock covering
//! `e`. A release publishes its own cluster's clock and every import it is after, so the order
//! is transitive across clusters.
//!
//! Read-only buffers are not shadowed (a write to one is already a finding). Each byte keeps one
//! last read: of two unordered reads only the later is checked against a later write.

use std::collections::{BTreeMap, HashMap};

use super::clock::Vc;
use super::shadow::lanes_unordered;
use crate::ir::Scope;

/// What is known of other clusters' work: per cluster (its index in the grid), the vector clock
/// of that cluster that happens before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GridView(BTreeMap<u64, Vc>);

impl GridView {
    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds cluster `cluster`'s clock `vc`.
    pub fn join_cluster(&mut self, cluster: u64, vc: &Vc) {
        match self.0.get_mut(&cluster) {
            Some(have) => have.join(vc),
            None => {
                self.0.insert(cluster, vc.clone());
            }
        }
    }

    /// Adds everything `other` knows.
    pub fn join(&mut self, other: &GridView) {
        for (c, vc) in &other.0 {
            self.join_cluster(*c, vc);
        }
    }

    /// Whether epoch `e` of cluster `cluster` happens before.
    pub fn covers(&self, cluster: u64, e: u32) -> bool {
        self.0.get(&cluster).is_some_and(|vc| vc.covers(e))
    }

    /// The view without cluster `cluster`.
    pub fn without(&self, cluster: u64) -> GridView {
        let mut v = self.clone();
        v.0.remove(&cluster);
        v
    }
}

/// One acquire of another cluster's release: the acquiring component, its clock then, and what
/// it learned.
#[derive(Debug, Clone)]
struct Import {
    comp: u32,
    clock: u32,
    view: GridView,
}

/// A cluster's acquires of other clusters' releases, in the order they happened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Imports(Vec<Import>);

impl Imports {
    /// Records that component `comp`, at clock `clock`, acquired `view` (nothing if it adds
    /// nothing to the component's last import).
    pub fn push(&mut self, comp: u32, clock: u32, view: GridView) {
        if view.is_empty() {
            return;
        }
        if let Some(last) = self.0.iter().rev().find(|i| i.comp == comp) {
            if last.view == view {
                return;
            }
        }
        self.0.push(Import { comp, clock, view });
    }

    /// Every import that happens before an accessor with clock `vc`.
    fn before<'a>(&'a self, vc: &'a Vc) -> impl Iterator<Item = &'a Import> + 'a {
        self.0.iter().filter(|i| vc.0[i.comp as usize] >= i.clock)
    }

    /// What an accessor with clock `vc` knows of other clusters.
    pub fn view(&self, vc: &Vc) -> GridView {
        let mut v = GridView::default();
        for i in self.before(vc) {
            v.join(&i.view);
        }
        v
    }

    /// Whether epoch `e` of cluster `cluster` happens before an accessor with clock `vc`.
    fn covers(&self, vc: &Vc, cluster: u64, e: u32) -> bool {
        self.before(vc).any(|i| i.view.covers(cluster, e))
    }
}

/// Who accesses global memory: the cluster and the block's rank in it, the accessing
/// component's epoch and vector clock, the cluster's imports, the site (`shadow::site`) and, for
/// an ordered or atomic access, its scope.
pub(crate) struct GlobalAccessor<'a> {
    pub cluster: u64,
    pub cta: u32,
    pub epoch: u32,
    pub vc: &'a Vc,
    pub imports: &'a Imports,
    pub site: u32,
    pub strong: Option<Scope>,
    /// Whether the accessor is a warp whose lanes are told apart (not an asynchronous agent):
    /// two of its lanes at one clock and two instructions are unordered, as in shared memory.
    pub lanes: bool,
}

impl GlobalAccessor<'_> {
    /// Whether the earlier access `a` happens before this one: by happens-before, and for two
    /// lanes of one warp by a warp-synchronous op between them (the warp's clock moved on).
    fn after(&self, a: &Access) -> bool {
        let same_warp = u64::from(a.cluster) == self.cluster && a.epoch == self.epoch;
        if same_warp && self.lanes && lanes_unordered(a.site, self.site) {
            return false;
        }
        if u64::from(a.cluster) == self.cluster {
            self.vc.covers(a.epoch)
        } else {
            self.imports.covers(self.vc, u64::from(a.cluster), a.epoch)
        }
    }

    fn access(&self) -> Access {
        Access {
            cluster: self.cluster as u32,
            cta: self.cta as u8,
            epoch: self.epoch,
            site: self.site,
            strong: self.strong,
        }
    }

    /// Whether this access and `a` are morally strong with each other: both ordered or atomic,
    /// each one's scope including the other's thread (the PTX ISA's *Morally strong
    /// operations*): the block for two of one block, the cluster for two blocks of one cluster,
    /// the device for two clusters.
    fn strong_with(&self, a: &Access) -> bool {
        let needed = if a.cluster != self.cluster as u32 {
            Scope::Gpu
        } else if a.cta != self.cta as u8 {
            Scope::Cluster
        } else {
            Scope::Cta
        };
        let reaches = |s: Option<Scope>| s.is_some_and(|s| s >= needed);
        reaches(self.strong) && reaches(a.strong)
    }
}

/// One recorded access (its cluster, the block's rank in it, its epoch, site and, if ordered,
/// scope); `epoch` 0 is none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Access {
    cluster: u32,
    cta: u8,
    epoch: u32,
    site: u32,
    strong: Option<Scope>,
}

/// A byte's last write and its two last reads that no later read of the two happens after
/// (`r` the latest): a write checks both, so that of two unordered readers (two blocks, say)
/// the one a write is not ordered after is caught whichever read last. A third concurrent
/// read drops the older of the two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cell {
    w: Access,
    r: Access,
    r2: Access,
}

impl Cell {
    /// The cell after `me`'s read (by `who`): `me` the latest read, the one before kept beside
    /// it where `me` does not happen after it.
    fn read(self, me: Access, who: &GlobalAccessor<'_>) -> Cell {
        let kept = |a: Access| {
            if a.epoch != 0 && !who.after(&a) {
                a
            } else {
                Access::default()
            }
        };
        let (r, r2) = (kept(self.r), kept(self.r2));
        Cell {
            r: me,
            r2: if r.epoch != 0 { r } else { r2 },
            ..self
        }
    }
}

/// An earlier access that a new one races with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GlobalConflict {
    /// The byte's offset in its buffer.
    pub offset: usize,
    /// The other access's cluster, epoch and site.
    pub cluster: u64,
    pub epoch: u32,
    pub site: u32,
    /// Whether the other access wrote.
    pub write: bool,
    /// The two are lanes of one warp with no warp-synchronous op between them.
    pub lanes: bool,
}

/// Global memory's shadow for one run, and the views released at global locations.
#[derive(Debug, Default)]
pub(crate) struct GlobalShadow {
    /// Per buffer, one cell per byte, made at the buffer's first access.
    cells: Vec<Option<Vec<Cell>>>,
    /// What releases published at each (buffer, byte offset).
    published: HashMap<(usize, usize), GridView>,
    on: bool,
}

impl GlobalShadow {
    /// A shadow that checks races when `on`.
    pub fn new(on: bool) -> GlobalShadow {
        GlobalShadow {
            on,
            ..GlobalShadow::default()
        }
    }

    fn cells(&mut self, buf: usize, size: usize) -> &mut Vec<Cell> {
        if self.cells.len() <= buf {
            self.cells.resize(buf + 1, None);
        }
        self.cells[buf].get_or_insert_with(|| vec![Cell::default(); size])
    }

    /// Records an access of `len` bytes at `off` of buffer `buf` (of `size` bytes, writable):
    /// a read, a write, or both (an atomic); returns the first earlier access it races with.
    pub fn access(
        &mut self,
        (buf, size): (usize, usize),
        (off, len): (usize, usize),
        (read, write): (bool, bool),
        who: &GlobalAccessor<'_>,
    ) -> Option<GlobalConflict> {
        if !self.on {
            return None;
        }
        let me = who.access();
        let cells = self.cells(buf, size);
        let mut found = None;
        let mut last: Option<(Cell, Cell)> = None;
        for (i, cell) in cells[off..off + len].iter_mut().enumerate() {
            // Bytes of one access mostly share their state: decide once per run of them.
            if let Some((was, now)) = last {
                if *cell == was {
                    *cell = now;
                    continue;
                }
            }
            let was = *cell;
            if found.is_none() {
                found = conflict(&was, (read, write), who).map(|(a, w)| GlobalConflict {
                    offset: off + i,
                    cluster: u64::from(a.cluster),
                    epoch: a.epoch,
                    site: a.site,
                    write: w,
                    lanes: u64::from(a.cluster) == who.cluster && a.epoch == who.epoch,
                });
            }
            *cell = if write {
                Cell {
                    w: me,
                    ..Cell::default()
                }
            } else {
                was.read(me, who)
            };
            last = Some((was, *cell));
        }
        found
    }

    /// Adds `view` to what was released at byte `off` of buffer `buf`.
    pub fn publish(&mut self, buf: usize, off: usize, view: GridView) {
        self.published.entry((buf, off)).or_default().join(&view);
    }

    /// What was released at byte `off` of buffer `buf`.
    pub fn published(&self, buf: usize, off: usize) -> Option<&GridView> {
        self.published.get(&(buf, off))
    }
}

/// The earlier access of `c` that an access (`read`, `write`) by `who` races with, and whether
/// it wrote: two conflicting accesses race unless both are morally strong or happens-before
/// orders them (they are morally strong with each other where both are ordered or atomic and
/// each one's scope reaches the other).
fn conflict(
    c: &Cell,
    (read, write): (bool, bool),
    who: &GlobalAccessor<'_>,
) -> Option<(Access, bool)> {
    let races = |a: &Access| a.epoch != 0 && !who.strong_with(a) && !who.after(a);
    if (read || write) && races(&c.w) {
        return Some((c.w, true));
    }
    if write {
        if let Some(r) = [c.r, c.r2].into_iter().find(races) {
            return Some((r, false));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::clock::epoch;
    use super::*;

    fn vc(clocks: &[u32]) -> Vc {
        Vc(clocks.to_vec())
    }

    fn who<'a>(
        cluster: u64,
        comp: u32,
        vc: &'a Vc,
        imports: &'a Imports,
        strong: Option<Scope>,
    ) -> GlobalAccessor<'a> {
        GlobalAccessor {
            cluster,
            cta: 0,
            epoch: epoch(comp, vc.0[comp as usize]),
            vc,
            imports,
            site: 0,
            strong,
            lanes: false,
        }
    }

    #[test]
    fn two_clusters_race_unless_an_import_orders_them() {
        let none = Imports::default();
        let mut s = GlobalShadow::new(true);
        let a = vc(&[3, 0]);
        // Cluster 0 writes 4 bytes at clock 3 of component 0.
        assert_eq!(
            s.access((0, 16), (4, 4), (false, true), &who(0, 0, &a, &none, None)),
            None
        );
        // Cluster 1 reads them, knowing nothing: a race at the first byte.
        let b = vc(&[0, 1]);
        let c = s.access((0, 16), (4, 4), (true, false), &who(1, 1, &b, &none, None));
        assert_eq!(
            c.map(|c| (c.offset, c.cluster, c.write)),
            Some((4, 0, true))
        );
        // Cluster 1 acquired cluster 0's clock 3 at its clock 1: ordered.
        let mut imports = Imports::default();
        let mut view = GridView::default();
        view.join_cluster(0, &a);
        imports.push(1, 1, view.clone());
        let mut s = GlobalShadow::new(true);
        s.access((0, 16), (4, 4), (false, true), &who(0, 0, &a, &none, None));
        assert_eq!(
            s.access(
                (0, 16),
                (4, 4),
                (true, false),
                &who(1, 1, &b, &imports, None)
            ),
            None
        );
        // A component of cluster 1 that the acquire does not happen before still races.
        let other = vc(&[0, 0, 1]);
        let c = s.access(
            (0, 16),
            (4, 4),
            (false, true),
            &who(1, 2, &other, &imports, None),
        );
        assert!(c.is_some());
        // Two strong accesses of two clusters do not race at the device's scope, do at a
        // block's.
        let (gpu, cta) = (Some(Scope::Gpu), Some(Scope::Cta));
        let after_gpu_atomic = |scope| {
            let mut s = GlobalShadow::new(true);
            s.access((0, 16), (0, 4), (true, true), &who(0, 0, &a, &none, gpu));
            s.access((0, 16), (0, 4), (true, true), &who(1, 1, &b, &none, scope))
        };
        assert_eq!(after_gpu_atomic(gpu), None);
        assert!(after_gpu_atomic(cta).is_some());
        // A write after an unordered read races with the read.
        let mut s = GlobalShadow::new(true);
        s.access((0, 16), (8, 2), (true, false), &who(0, 0, &a, &none, None));
        let c = s.access((0, 16), (8, 2), (false, true), &who(1, 1, &b, &none, None));
        assert_eq!(c.map(|c| c.write), Some(false));
        // Two unordered reads by two clusters, a write ordered after the later one only: a
        // race with the earlier, which the cell kept beside the later.
        let mut s = GlobalShadow::new(true);
        let first = vc(&[5, 0, 0]);
        assert_eq!(
            s.access(
                (0, 16),
                (0, 4),
                (true, false),
                &who(0, 0, &first, &none, None)
            ),
            None
        );
        let second = vc(&[0, 2, 0]);
        s.access(
            (0, 16),
            (0, 4),
            (true, false),
            &who(1, 1, &second, &none, None),
        );
        let mut saw_second = Imports::default();
        let mut view = GridView::default();
        view.join_cluster(1, &second);
        saw_second.push(2, 1, view);
        let writer = vc(&[0, 0, 1]);
        let c = s.access(
            (0, 16),
            (0, 4),
            (false, true),
            &who(2, 2, &writer, &saw_second, None),
        );
        assert_eq!(c.map(|c| (c.cluster, c.write)), Some((0, false)));
        // Ordered after both reads: no race; a read that happens after the one before it
        // replaces it rather than keeping both.
        let mut saw_both = Imports::default();
        let mut view = GridView::default();
        view.join_cluster(0, &first);
        view.join_cluster(1, &second);
        saw_both.push(2, 1, view);
        let mut s = GlobalShadow::new(true);
        s.access(
            (0, 16),
            (0, 4),
            (true, false),
            &who(0, 0, &first, &none, None),
        );
        s.access(
            (0, 16),
            (0, 4),
            (true, false),
            &who(1, 1, &second, &none, None),
        );
        assert_eq!(
            s.access(
                (0, 16),
                (0, 4),
                (false, true),
                &who(2, 2, &writer, &saw_both, None)
            ),
            None
        );
        let later = vc(&[6, 0, 0]);
        let mut s = GlobalShadow::new(true);
        s.access(
            (0, 16),
            (0, 1),
            (true, false),
            &who(0, 0, &first, &none, None),
        );
        s.access(
            (0, 16),
            (0, 1),
            (true, false),
            &who(0, 0, &later, &none, None),
        );
        let cell = s.cells[0].as_ref().unwrap()[0];
        assert_eq!((cell.r.epoch, cell.r2.epoch), (epoch(0, 6), 0));
        // Off, nothing is recorded.
        let mut s = GlobalShadow::new(false);
        s.access((0, 16), (4, 4), (false, true), &who(0, 0, &a, &none, None));
        assert_eq!(
            s.access((0, 16), (4, 4), (true, false), &who(1, 1, &b, &none, None)),
            None
        );
    }

    #[test]
    fn two_lanes_of_a_warp_race_until_its_clock_moves_on() {
        let none = Imports::default();
        let vc1 = vc(&[1]);
        fn lane<'a>(lane: u32, pc: u32, vc: &'a Vc, none: &'a Imports) -> GlobalAccessor<'a> {
            GlobalAccessor {
                site: super::super::shadow::site(pc, lane),
                lanes: true,
                ..who(0, 0, vc, none, None)
            }
        }
        let mut s = GlobalShadow::new(true);
        s.access((0, 8), (0, 4), (false, true), &lane(0, 10, &vc1, &none));
        // Lane 1 at the next instruction, same clock: a race between lanes.
        let c = s
            .access((0, 8), (0, 4), (true, false), &lane(1, 11, &vc1, &none))
            .unwrap();
        assert!(c.lanes && c.write);
        // The same lane, or another lane after the warp's clock moved on, is ordered.
        let mut s = GlobalShadow::new(true);
        s.access((0, 8), (0, 4), (false, true), &lane(0, 10, &vc1, &none));
        assert_eq!(
            s.access((0, 8), (0, 4), (true, false), &lane(0, 11, &vc1, &none)),
            None
        );
        let vc2 = vc(&[2]);
        assert_eq!(
            s.access((0, 8), (0, 4), (true, false), &lane(1, 12, &vc2, &none)),
            None
        );
    }

    #[test]
    fn views_join_and_imports_are_kept_once() {
        let mut v = GridView::default();
        v.join_cluster(2, &vc(&[1, 5]));
        v.join_cluster(2, &vc(&[4, 2]));
        // The join is elementwise: (4, 5).
        assert!(v.covers(2, epoch(0, 4)) && !v.covers(2, epoch(0, 5)));
        assert!(v.covers(2, epoch(1, 5)) && !v.covers(2, epoch(1, 6)) && !v.covers(3, epoch(0, 1)));
        assert!(v.without(2).is_empty());
        let mut i = Imports::default();
        i.push(0, 3, v.clone());
        i.push(0, 4, v.clone());
        i.push(0, 5, GridView::default());
        assert_eq!(i.0.len(), 1);
        assert_eq!(i.view(&vc(&[3, 0])), v);
        assert!(i.view(&vc(&[2, 0])).is_empty());
    }
}
