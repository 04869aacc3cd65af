//! The scheduler: which warp runs next and for how long, when an asynchronous operation
//! completes inside its window, which lane `elect.sync` elects. Deterministic for a seed.

use super::launch::Schedule;

/// SplitMix64: small, fast, and the same sequence on every host.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Instructions a warp runs before round-robin moves on (unless it blocks first).
const ROUND_ROBIN_QUANTUM: u32 = 256;
/// The longest random quantum.
const RANDOM_QUANTUM: u64 = 64;
/// The run length PCT spreads its priority change points over.
const PCT_SPAN: u64 = 1 << 16;

/// A candidate to run: its key in the machine's order and its priority (PCT).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub order: u64,
    pub priority: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Scheduler {
    policy: Schedule,
    rng: Rng,
    seed: u64,
    /// Round-robin: the order key of the last pick.
    last: u64,
    /// PCT: steps at which the running warp's priority drops, descending (next last).
    changes: Vec<u64>,
    /// PCT: the next low priority handed out at a change point.
    low: u64,
}

impl Scheduler {
    pub fn new(policy: Schedule, seed: u64) -> Scheduler {
        let mut rng = Rng::new(seed);
        let mut changes = Vec::new();
        if let Schedule::Pct { depth } = policy {
            for _ in 1..depth.max(1) {
                changes.push(rng.below(PCT_SPAN));
            }
            changes.sort_unstable_by(|a, b| b.cmp(a));
        }
        Scheduler {
            policy,
            rng,
            seed,
            last: u64::MAX,
            changes,
            low: u64::from(u32::MAX),
        }
    }

    /// A priority for a warp that starts now: PCT's initial priorities are random and above
    /// every priority a change point hands out.
    pub fn new_priority(&mut self) -> u64 {
        (1 << 40) + self.rng.below(1 << 40)
    }

    /// The candidate to run, by index.
    pub fn pick(&mut self, ready: &[Candidate]) -> usize {
        let i = match self.policy {
            Schedule::RoundRobin => ready
                .iter()
                .position(|c| self.last == u64::MAX || c.order > self.last)
                .unwrap_or(0),
            Schedule::Random => self.rng.below(ready.len() as u64) as usize,
            Schedule::Pct { .. } => {
                let mut best = 0;
                for (i, c) in ready.iter().enumerate() {
                    if c.priority > ready[best].priority {
                        best = i;
                    }
                }
                best
            }
        };
        self.last = ready[i].order;
        i
    }

    /// A random index in `0..n` (`n > 0`), for choices the schedule leaves open.
    pub fn pick_index(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    /// Instructions the picked warp may run, `steps` having run so far.
    pub fn quantum(&mut self, steps: u64) -> u64 {
        match self.policy {
            Schedule::RoundRobin => u64::from(ROUND_ROBIN_QUANTUM),
            Schedule::Random => 1 + self.rng.below(RANDOM_QUANTUM),
            Schedule::Pct { .. } => match self.changes.last() {
                Some(&at) if at > steps => at - steps,
                Some(_) => 1,
                None => u64::MAX,
            },
        }
    }

    /// PCT: the low priority the running warp takes when a change point has passed.
    pub fn change_point(&mut self, steps: u64) -> Option<u64> {
        match self.changes.last() {
            Some(&at) if at <= steps => {
                self.changes.pop();
                self.low -= 1;
                Some(self.low)
            }
            _ => None,
        }
    }

    /// Whether asynchronous operations complete as late as allowed.
    pub fn late(&self) -> bool {
        self.policy == Schedule::RoundRobin
    }

    /// Whether an operation in flight completes at this scheduling point (random schedules).
    pub fn complete_now(&mut self) -> bool {
        !self.late() && self.rng.below(4) == 0
    }

    /// The lane `elect.sync` elects among `candidates` (not empty): the lowest under
    /// round-robin, otherwise a lane fixed by the seed and the mask (the PTX ISA requires the
    /// same leader for the same mask).
    pub fn elect(&self, candidates: u32) -> u32 {
        if self.late() {
            return candidates.trailing_zeros();
        }
        let mut h = Rng::new(self.seed ^ u64::from(candidates));
        let k = h.below(u64::from(candidates.count_ones())) as u32;
        let mut m = candidates;
        for _ in 0..k {
            m &= m - 1;
        }
        m.trailing_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(n: u64) -> Vec<Candidate> {
        (0..n)
            .map(|i| Candidate {
                order: i,
                priority: 10 - i,
            })
            .collect()
    }

    #[test]
    fn round_robin_takes_turns() {
        let mut s = Scheduler::new(Schedule::RoundRobin, 0);
        let c = cands(3);
        let picks: Vec<usize> = (0..4).map(|_| s.pick(&c)).collect();
        assert_eq!(picks, [0, 1, 2, 0]);
        assert_eq!(s.elect(0b1100), 2);
    }

    #[test]
    fn seeds_decide_and_repeat() {
        let run = |seed| {
            let mut s = Scheduler::new(Schedule::Random, seed);
            (0..16).map(|_| s.pick(&cands(5))).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
        let s = Scheduler::new(Schedule::Random, 3);
        assert_eq!(s.elect(0xf0f0), s.elect(0xf0f0));
        assert!(0xf0f0u32 & (1 << s.elect(0xf0f0)) != 0);
    }

    #[test]
    fn pct_runs_the_highest_priority_until_a_change_point() {
        let mut s = Scheduler::new(Schedule::Pct { depth: 3 }, 7);
        assert_eq!(s.pick(&cands(4)), 0);
        let first = s.quantum(0);
        assert!(first >= 1);
        assert!(s.change_point(first).is_some());
        assert!(s.new_priority() > s.low);
    }
}
