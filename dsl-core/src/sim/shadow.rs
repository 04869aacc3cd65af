//! A block's shared memory with its shadow: per byte, the epoch and site of the last write and
//! of the last read (or a vector clock of concurrent reads), as FastTrack keeps them. A write
//! epoch of 0 means the byte was never written (the uninitialized-read check).
//!
//! The async-proxy rule is checked here too: an access made in the async proxy to bytes whose
//! last write was generic needs, besides happens-before, a `fence.proxy.async` by the writer
//! after its write and before the access ([`ProxyFences`]).

use super::clock::{clock_of, comp_of, Vc};

/// The flag of a read state that indexes a read vector clock.
const SHARED_READS: u32 = 1 << 31;

/// An op's position in the program and the lane that ran it, packed: the site of an access.
pub(crate) fn site(pc: u32, lane: u32) -> u32 {
    (pc << 5) | lane
}

/// The program position and lane of a site.
pub(crate) fn unsite(s: u32) -> (u32, u32) {
    (s >> 5, s & 31)
}

/// Whether two sites of one warp at one clock are unordered: two lanes at two instructions.
/// Lanes of a warp are not in lockstep (the PTX ISA's independent thread scheduling), so only
/// `bar.warp.sync` or a barrier orders them (each moves the warp's clock on); two lanes at one
/// instruction are not told apart (they store or load as one access).
pub(crate) fn lanes_unordered(a: u32, b: u32) -> bool {
    let ((pc, lane), (other_pc, other_lane)) = (unsite(a), unsite(b));
    lane != other_lane && pc != other_pc
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cell {
    /// Epoch of the last write; 0 when never written.
    w: u32,
    /// Epoch of the last read, 0, or `SHARED_READS | index` of a read vector clock.
    r: u32,
    wsite: u32,
    rsite: u32,
}

/// The clocks at which each component executed `fence.proxy.async` (ascending). A component's
/// clock advances at each such fence, so a write at clock `c` precedes a fence at clock `f`
/// exactly when `c <= f`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProxyFences(Vec<Vec<u32>>);

impl ProxyFences {
    pub fn new(components: usize) -> Self {
        ProxyFences(vec![Vec::new(); components])
    }

    pub fn record(&mut self, comp: u32, clock: u32) {
        self.0[comp as usize].push(clock);
    }

    /// Whether component `comp` fenced after its write at clock `c`, and the fence happens
    /// before a thread with clock `vc`.
    pub fn fenced(&self, comp: u32, c: u32, vc: &Vc) -> bool {
        let fs = &self.0[comp as usize];
        let i = fs.partition_point(|&f| f < c);
        fs.get(i).is_some_and(|&f| f <= vc.0[comp as usize])
    }
}

/// Who accesses: the epoch and vector clock of the accessing component, and the site.
pub(crate) struct Accessor<'a> {
    pub epoch: u32,
    pub vc: &'a Vc,
    pub site: u32,
    /// Whether the component is a warp whose lanes are told apart: two of its lanes at one
    /// clock (no warp-synchronous op between them) and two instructions are unordered.
    pub lanes: bool,
    /// For an access in the async proxy: the fences that make generic writes visible to it,
    /// and which components are generic.
    pub proxy: Option<(&'a ProxyFences, &'a dyn Fn(u32) -> bool)>,
}

impl<'a> Accessor<'a> {
    /// A warp's generic-proxy access: component `comp` with clock `vc`, at position `pc` in
    /// `lane`.
    pub fn warp(vc: &'a Vc, comp: u32, pc: u32, lane: u32) -> Accessor<'a> {
        Accessor {
            epoch: vc.epoch(comp),
            vc,
            site: site(pc, lane),
            lanes: true,
            proxy: None,
        }
    }
}

/// Whether an earlier access at `epoch` and `site` and one by `who` are two lanes of one warp
/// at one clock that nothing orders ([`lanes_unordered`]).
fn lanes_apart(epoch: u32, site: u32, who: &Accessor<'_>) -> bool {
    who.lanes && epoch == who.epoch && lanes_unordered(site, who.site)
}

/// A conflict of byte `i` with a read by component `comp` at `site`.
fn conflict_with_read(i: u32, comp: u32, site: u32) -> Conflict {
    Conflict {
        offset: i,
        comp,
        site,
        write: false,
        proxy_only: false,
        lanes: false,
    }
}

/// A conflict with an earlier access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// The byte's offset in shared memory.
    pub offset: u32,
    /// The other access's component and site.
    pub comp: u32,
    pub site: u32,
    /// Whether the other access wrote.
    pub write: bool,
    /// Happens-before orders the two, but the async proxy lacks the fence that makes the
    /// generic write visible to it.
    pub proxy_only: bool,
    /// The two are lanes of one warp with no warp-synchronous op between them.
    pub lanes: bool,
}

/// What an access found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The first conflicting earlier access.
    pub conflict: Option<Conflict>,
    /// The first byte read that was never written.
    pub uninit: Option<u32>,
}

/// A block's shared memory and its shadow.
///
/// An access whose bytes all have the same shadow state (the common case: a word or a row
/// written by one lane and read together) is checked once for all of them; concurrent reads of
/// such bytes share one reference-counted read vector clock (copied on write when their states
/// part).
#[derive(Debug, Clone)]
pub(crate) struct SharedMem {
    pub data: Vec<u8>,
    cells: Vec<Cell>,
    read_vcs: Vec<Vc>,
    /// How many cells point at each read vector clock.
    refs: Vec<u32>,
    free: Vec<u32>,
    components: usize,
    races: bool,
    uninit: bool,
    /// Bumped by every write, for warps that poll shared memory.
    pub generation: u64,
}

/// What one shadow update does to a run of identical cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Update {
    Read,
    Write,
    /// A morally strong write (atomic or ordered store): recorded, not checked; `true` when it
    /// also reads (an atomic).
    Strong(bool),
}

impl SharedMem {
    /// `bytes` of shared memory for a cluster of `components` clocks; the shadow is kept only
    /// for the checks that need it.
    pub fn new(bytes: usize, components: usize, races: bool, uninit: bool) -> SharedMem {
        let shadow = races || uninit;
        SharedMem {
            data: vec![0; bytes],
            cells: if shadow {
                vec![Cell::default(); bytes]
            } else {
                Vec::new()
            },
            read_vcs: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
            components,
            races,
            uninit,
            generation: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Records a read of `len` bytes at `off` (in bounds).
    pub fn read(&mut self, off: u32, len: u32, who: &Accessor<'_>) -> Outcome {
        self.access(off, len, who, Update::Read)
    }

    /// Records a write of `len` bytes at `off` (in bounds).
    pub fn write(&mut self, off: u32, len: u32, who: &Accessor<'_>) -> Outcome {
        self.generation += 1;
        self.access(off, len, who, Update::Write)
    }

    /// A morally strong read (ordered or atomic): it does not race with other strong accesses,
    /// so only the uninitialized check runs.
    pub fn strong_read(&mut self, off: u32, len: u32) -> Outcome {
        let mut out = Outcome::default();
        if self.uninit && !self.cells.is_empty() {
            out.uninit = (off..off + len).find(|&i| self.cells[i as usize].w == 0);
        }
        out
    }

    /// Records an atomic read-modify-write (`reads`) or a strong store of `len` bytes at `off`:
    /// morally strong accesses do not race with each other, so only the uninitialized check of
    /// an atomic runs; the write is recorded, so that a weak access unordered with it is a race.
    pub fn strong_write(&mut self, off: u32, len: u32, who: &Accessor<'_>, reads: bool) -> Outcome {
        self.generation += 1;
        self.access(off, len, who, Update::Strong(reads))
    }

    fn access(&mut self, off: u32, len: u32, who: &Accessor<'_>, u: Update) -> Outcome {
        let mut out = Outcome::default();
        if self.cells.is_empty() {
            return out;
        }
        let range = off as usize..(off + len) as usize;
        let first = self.cells[range.start];
        if self.cells[range.clone()].iter().all(|c| *c == first) {
            let new = self.update(off, first, len, who, u, &mut out);
            self.cells[range].fill(new);
        } else {
            for i in range {
                let c = self.cells[i];
                self.cells[i] = self.update(i as u32, c, 1, who, u, &mut out);
            }
        }
        out
    }

    /// The new state of `n` identical cells in state `c` (the first at offset `i`).
    fn update(
        &mut self,
        i: u32,
        c: Cell,
        n: u32,
        who: &Accessor<'_>,
        u: Update,
        out: &mut Outcome,
    ) -> Cell {
        let reads = matches!(u, Update::Read | Update::Strong(true));
        if reads && self.uninit && c.w == 0 && out.uninit.is_none() {
            out.uninit = Some(i);
        }
        match u {
            Update::Read => {
                if self.races && out.conflict.is_none() && lanes_apart(c.w, c.wsite, who) {
                    out.conflict = Some(Conflict {
                        lanes: true,
                        ..self.conflict_with_write(i, c, false)
                    });
                }
                if !self.races || c.r == who.epoch {
                    return c;
                }
                if out.conflict.is_none() {
                    out.conflict = self.check_write(i, c, who);
                }
                let me = comp_of(who.epoch) as usize;
                let r = if c.r & SHARED_READS != 0 {
                    let k = self.own(c.r & !SHARED_READS, n);
                    self.read_vcs[k as usize].0[me] = clock_of(who.epoch);
                    k | SHARED_READS
                } else if c.r == 0 || who.vc.covers(c.r) {
                    who.epoch
                } else {
                    let k = self.alloc(n);
                    let vc = &mut self.read_vcs[k as usize].0;
                    vc[comp_of(c.r) as usize] = clock_of(c.r);
                    vc[me] = clock_of(who.epoch);
                    k | SHARED_READS
                };
                Cell {
                    r,
                    rsite: who.site,
                    ..c
                }
            }
            Update::Write | Update::Strong(_) => {
                if u == Update::Write && self.races && out.conflict.is_none() {
                    if lanes_apart(c.w, c.wsite, who) {
                        out.conflict = Some(Conflict {
                            lanes: true,
                            ..self.conflict_with_write(i, c, false)
                        });
                    } else if c.r & SHARED_READS == 0 && lanes_apart(c.r, c.rsite, who) {
                        out.conflict = Some(Conflict {
                            lanes: true,
                            ..conflict_with_read(i, comp_of(c.r), c.rsite)
                        });
                    } else if c.w != who.epoch {
                        out.conflict = self
                            .check_write(i, c, who)
                            .or_else(|| self.check_reads(i, c, who));
                    }
                }
                self.release(c.r, n);
                Cell {
                    w: who.epoch,
                    r: 0,
                    wsite: who.site,
                    rsite: 0,
                }
            }
        }
    }

    /// A fresh read vector clock pointed at by `n` cells.
    fn alloc(&mut self, n: u32) -> u32 {
        match self.free.pop() {
            Some(k) => {
                self.read_vcs[k as usize].0.fill(0);
                self.refs[k as usize] = n;
                k
            }
            None => {
                self.read_vcs.push(Vc::new(self.components));
                self.refs.push(n);
                (self.read_vcs.len() - 1) as u32
            }
        }
    }

    /// Read vector clock `k` for `n` of the cells pointing at it alone: a copy when others
    /// point at it too.
    fn own(&mut self, k: u32, n: u32) -> u32 {
        if self.refs[k as usize] <= n {
            return k;
        }
        self.refs[k as usize] -= n;
        let copy = self.read_vcs[k as usize].clone();
        let c = self.alloc(n);
        self.read_vcs[c as usize] = copy;
        c
    }

    /// Drops `n` cells' references to read state `r`.
    fn release(&mut self, r: u32, n: u32) {
        if r & SHARED_READS == 0 {
            return;
        }
        let k = (r & !SHARED_READS) as usize;
        self.refs[k] -= n;
        if self.refs[k] == 0 {
            self.free.push(k as u32);
        }
    }

    /// A conflict with the last write of byte `i` (state `c`).
    fn conflict_with_write(&self, i: u32, c: Cell, proxy_only: bool) -> Conflict {
        Conflict {
            offset: i,
            comp: comp_of(c.w),
            site: c.wsite,
            write: true,
            proxy_only,
            lanes: false,
        }
    }

    /// The last write of a byte against an access.
    fn check_write(&self, i: u32, c: Cell, who: &Accessor<'_>) -> Option<Conflict> {
        if c.w == 0 {
            return None;
        }
        let conflict = |proxy_only| self.conflict_with_write(i, c, proxy_only);
        if !who.vc.covers(c.w) {
            return Some(conflict(false));
        }
        match who.proxy {
            Some((fences, generic)) if generic(comp_of(c.w)) => {
                (!fences.fenced(comp_of(c.w), clock_of(c.w), who.vc)).then(|| conflict(true))
            }
            _ => None,
        }
    }

    /// The reads of a byte since its last write against a write.
    fn check_reads(&self, i: u32, c: Cell, who: &Accessor<'_>) -> Option<Conflict> {
        let racing = if c.r & SHARED_READS != 0 {
            let v = &self.read_vcs[(c.r & !SHARED_READS) as usize].0;
            v.iter()
                .zip(&who.vc.0)
                .position(|(r, mine)| r > mine)
                .map(|k| k as u32)
        } else if c.r != 0 && !who.vc.covers(c.r) {
            Some(comp_of(c.r))
        } else {
            None
        };
        racing.map(|comp| conflict_with_read(i, comp, c.rsite))
    }
}

#[cfg(test)]
mod tests {
    use super::super::clock::epoch;
    use super::*;

    fn who(e: u32, vc: &Vc) -> Accessor<'_> {
        Accessor {
            epoch: e,
            vc,
            site: site(3, 1),
            lanes: false,
            proxy: None,
        }
    }

    #[test]
    fn unordered_accesses_conflict_and_ordered_ones_do_not() {
        let mut m = SharedMem::new(16, 3, true, true);
        let mut a = Vc::new(3);
        a.0[0] = 1;
        let mut b = Vc::new(3);
        b.0[1] = 1;
        // An uninitialized read.
        assert_eq!(m.read(0, 4, &who(a.epoch(0), &a)).uninit, Some(0));
        assert!(m.write(0, 4, &who(a.epoch(0), &a)).conflict.is_none());
        // b reads what a wrote with nothing between them: a race with a's write.
        let c = m.read(2, 2, &who(b.epoch(1), &b)).conflict.unwrap();
        assert_eq!((c.offset, c.comp, c.write), (2, 0, true));
        // After b joins a's clock (a barrier), the read is ordered.
        b.join(&a);
        assert!(m.read(0, 4, &who(b.epoch(1), &b)).conflict.is_none());
        // Concurrent readers a and c, then a write by b ordered after a only: races c's read.
        let mut c3 = Vc::new(3);
        c3.0[2] = 1;
        c3.join(&a);
        m.read(8, 1, &who(a.epoch(0), &a));
        m.read(8, 1, &who(c3.epoch(2), &c3));
        let w = m.write(8, 1, &who(b.epoch(1), &b)).conflict.unwrap();
        assert_eq!((w.comp, w.write), (2, false));
    }

    #[test]
    fn concurrent_reads_of_a_row_share_one_clock_until_they_part() {
        let mut m = SharedMem::new(16, 3, true, false);
        let mut w = Vc::new(3);
        w.0[0] = 1;
        m.write(0, 16, &who(w.epoch(0), &w));
        // Readers 1 and 2, both after the write, read the whole row concurrently.
        let mut r1 = w.clone();
        r1.0[1] = 1;
        let mut r2 = w.clone();
        r2.0[2] = 1;
        assert!(m.read(0, 16, &who(r1.epoch(1), &r1)).conflict.is_none());
        assert!(m.read(0, 16, &who(r2.epoch(2), &r2)).conflict.is_none());
        assert_eq!((m.read_vcs.len(), m.refs[0]), (1, 16));
        // Reader 1 reads again at a later clock, a part of the row only: its cells part.
        r1.0[1] = 2;
        m.read(4, 4, &who(r1.epoch(1), &r1));
        assert_eq!(m.refs.iter().sum::<u32>(), 16);
        // A write ordered after reader 1 only races reader 2, on every part of the row.
        let mut late = r1.clone();
        late.0[0] = 2;
        let c = m.write(0, 16, &who(late.epoch(0), &late)).conflict.unwrap();
        assert_eq!((c.comp, c.write), (2, false));
        assert_eq!(m.free.len(), m.read_vcs.len());
    }

    #[test]
    fn async_proxy_accesses_need_the_writers_fence() {
        let mut m = SharedMem::new(8, 2, true, false);
        let mut t = Vc::new(2);
        t.0[0] = 1;
        m.write(0, 4, &who(t.epoch(0), &t));
        let mut fences = ProxyFences::new(2);
        let generic = |c: u32| c == 0;
        // The agent is ordered after the write (its clock covers it) but there is no fence.
        let mut agent = t.clone();
        agent.0[1] = 1;
        let acc = Accessor {
            epoch: epoch(1, 1),
            vc: &agent,
            site: 0,
            lanes: false,
            proxy: Some((&fences, &generic)),
        };
        assert!(m.read(0, 4, &acc).conflict.unwrap().proxy_only);
        // The writer fences at clock 1 (then ticks to 2); a later access of the agent (a new
        // epoch) whose clock covers the fence is fine.
        fences.record(0, 1);
        agent.0[1] = 2;
        let acc = Accessor {
            epoch: epoch(1, 2),
            vc: &agent,
            site: 0,
            lanes: false,
            proxy: Some((&fences, &generic)),
        };
        assert!(m.read(0, 4, &acc).conflict.is_none());
        assert!(fences.fenced(0, 1, &agent) && !fences.fenced(0, 2, &agent));
    }
}
