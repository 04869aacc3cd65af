//! Timing work on the GPU with CUDA events: each repeat is bracketed by two events on the
//! `Jit`'s stream, so the times are device time, free of host launch jitter.
//!
//! Each repeat is queued behind a spin kernel ([`SPIN_PTX`]): without it the start event runs as
//! soon as it is queued and the clock includes the host's time to queue the work (a few
//! microseconds per launch, a third of a 10 us decode GEMM); behind the spin, the work is all
//! queued before the start event runs, so the time is the device's alone, back to back. The
//! spin lasts twice as long as the piece's queueing took the time before (at least [`SPIN_NS`]),
//! so a piece whose host side is slow is still timed by the device alone.

use cudarc::driver::sys;

use super::args::KernelArg;
use super::device::Jit;
use super::error::{driver, JitError};
use super::launch::Launch;

/// The spin kernel: one thread that waits `ns` nanoseconds of `%globaltimer`.
pub const SPIN_PTX: &str = "\
.version 7.0
.target sm_80
.address_size 64
.visible .entry rute_timing_spin(.param .u64 ns)
{
    .reg .u64 %t<3>;
    .reg .u64 %n;
    .reg .pred %p;
    ld.param.u64 %n, [ns];
    mov.u64 %t0, %globaltimer;
SPIN:
    mov.u64 %t1, %globaltimer;
    sub.u64 %t2, %t1, %t0;
    setp.lt.u64 %p, %t2, %n;
    @%p bra SPIN;
    ret;
}
";

/// The shortest spin: longer than queueing a repeat's work takes, for the work whose host side
/// is quick; slower work gets twice its last queueing time.
pub const SPIN_NS: u64 = 50_000;

/// The longest spin (work whose queueing takes longer is timed with the host's time in it).
pub const MAX_SPIN_NS: u64 = 20_000_000;

/// Times of `repeats` runs of one piece of GPU work, in milliseconds, sorted ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// One time per repeat, smallest first.
    pub samples_ms: Vec<f32>,
}

impl Timing {
    /// The middle sample (the mean of the two middle ones for an even count); 0 when empty.
    pub fn median_ms(&self) -> f32 {
        let n = self.samples_ms.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => self.samples_ms[n / 2],
            _ => (self.samples_ms[n / 2 - 1] + self.samples_ms[n / 2]) / 2.0,
        }
    }

    /// The smallest sample; 0 when empty.
    pub fn min_ms(&self) -> f32 {
        self.samples_ms.first().copied().unwrap_or(0.0)
    }

    /// The largest sample; 0 when empty.
    pub fn max_ms(&self) -> f32 {
        self.samples_ms.last().copied().unwrap_or(0.0)
    }
}

impl Jit {
    /// Runs `work` once to warm up, then `repeats` times (at least once), each between two CUDA
    /// events recorded on the stream; returns every repeat's device time. `work` should only
    /// queue work on [`Jit::stream`] (launches, copies), not synchronise.
    pub fn time<F>(&self, repeats: usize, mut work: F) -> Result<Timing, JitError>
    where
        F: FnMut() -> Result<(), JitError>,
    {
        let mut timings = self.time_interleaved(repeats, 1, |_| work())?;
        Ok(timings.remove(0))
    }

    /// Times `pieces` pieces of work in turns: `work(i)` queues piece `i`; after one warm-up
    /// round, each of `repeats` rounds runs every piece once between its own two events, in the
    /// order 0, 1, ..., `pieces - 1`. Returns one [`Timing`] per piece; each repeat is queued
    /// behind the spin kernel (see the module's docs). Rounds interleave the pieces so that
    /// clock and temperature drift over the run weigh on all of them alike (timing one piece's
    /// repeats after the other's would hand the later one a hotter, slower GPU).
    pub fn time_interleaved<F>(
        &self,
        repeats: usize,
        pieces: usize,
        work: F,
    ) -> Result<Vec<Timing>, JitError>
    where
        F: FnMut(usize) -> Result<(), JitError>,
    {
        self.time_rounds(repeats, pieces, |_| (0..pieces).collect(), work)
    }

    /// [`Jit::time_interleaved`] with each round's pieces in an order of its own, drawn from
    /// `seed` ([`shuffled_order`]). A piece's time can depend on the piece before it: a
    /// memory-bound GEMM pays the write-backs of the lines of D the one before left dirty in
    /// L2, as many as that one's eviction hints kept there. In a fixed order each piece always
    /// follows the same one, which favours some pieces over others (on the H200 at 81920 x 256
    /// x 256 one configuration ran 1.038 of cuBLAS first in the round and 1.002 last, beside
    /// four others); shuffled, every piece follows each of the others about as often.
    pub fn time_shuffled<F>(
        &self,
        repeats: usize,
        pieces: usize,
        seed: u64,
        work: F,
    ) -> Result<Vec<Timing>, JitError>
    where
        F: FnMut(usize) -> Result<(), JitError>,
    {
        self.time_rounds(
            repeats,
            pieces,
            |round| shuffled_order(seed, round, pieces),
            work,
        )
    }

    /// The timing loop of [`Jit::time_interleaved`] and [`Jit::time_shuffled`]: round `r`
    /// runs the pieces in the order `order(r)` (a permutation of `0..pieces`).
    fn time_rounds<O, F>(
        &self,
        repeats: usize,
        pieces: usize,
        order: O,
        mut work: F,
    ) -> Result<Vec<Timing>, JitError>
    where
        O: Fn(usize) -> Vec<usize>,
        F: FnMut(usize) -> Result<(), JitError>,
    {
        let ctx = self.context();
        let stream = self.stream();
        let event = || {
            ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| driver("cuEventCreate", e))
        };
        let (start, end) = (event()?, event()?);
        let spin = self.load(SPIN_PTX)?.function("rute_timing_spin")?;
        // How long the host took to queue each piece last time: the next spin covers twice that
        // (a first call that compiles only makes the first spin long).
        let mut host_ns = vec![0u64; pieces];
        for (i, ns) in host_ns.iter_mut().enumerate() {
            let t = std::time::Instant::now();
            work(i)?;
            *ns = t.elapsed().as_nanos() as u64;
        }
        self.synchronize()?;
        let mut samples_ms = vec![Vec::with_capacity(repeats.max(1)); pieces];
        for round in 0..repeats.max(1) {
            for i in order(round) {
                let wait = (2 * host_ns[i]).clamp(SPIN_NS, MAX_SPIN_NS);
                // SAFETY: SPIN_PTX reads its one `.u64` scalar and touches no memory.
                unsafe {
                    spin.launch(&Launch::new((1, 1, 1), (1, 1, 1)), &[KernelArg::U64(wait)])
                }?;
                start
                    .record(stream)
                    .map_err(|e| driver("cuEventRecord", e))?;
                let t = std::time::Instant::now();
                work(i)?;
                host_ns[i] = t.elapsed().as_nanos() as u64;
                end.record(stream).map_err(|e| driver("cuEventRecord", e))?;
                let ms = start
                    .elapsed_ms(&end)
                    .map_err(|e| driver("cuEventElapsedTime", e))?;
                samples_ms[i].push(ms);
            }
        }
        Ok(samples_ms
            .into_iter()
            .map(|mut samples| {
                samples.sort_by(f32::total_cmp);
                Timing {
                    samples_ms: samples,
                }
            })
            .collect())
    }

    /// Median device time of `repeats` runs of `work` in milliseconds (see [`Jit::time`]).
    pub fn time_ms<F>(&self, repeats: usize, work: F) -> Result<f32, JitError>
    where
        F: FnMut() -> Result<(), JitError>,
    {
        Ok(self.time(repeats, work)?.median_ms())
    }
}

/// A permutation of `0..pieces` for round `round` of [`Jit::time_shuffled`]: Fisher-Yates over a
/// SplitMix64 stream seeded by `seed` and `round`, so that the same arguments give the same order.
pub fn shuffled_order(seed: u64, round: usize, pieces: usize) -> Vec<usize> {
    let mut state = seed ^ (round as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..pieces).collect();
    for i in (1..pieces).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffled_rounds_are_permutations_that_vary_each_pieces_predecessor() {
        for pieces in 0..9 {
            for round in 0..40 {
                let mut order = shuffled_order(7, round, pieces);
                assert_eq!(order, shuffled_order(7, round, pieces));
                order.sort_unstable();
                assert_eq!(order, (0..pieces).collect::<Vec<_>>());
            }
        }
        // Over 20 rounds of 6 pieces, each piece follows at least three different pieces
        // within a round, and leads a round at least once (a rotation would fix both).
        let rounds: Vec<Vec<usize>> = (0..20).map(|r| shuffled_order(1, r, 6)).collect();
        for piece in 0..6 {
            let mut before: Vec<usize> = rounds
                .iter()
                .filter_map(|o| {
                    let at = o.iter().position(|&p| p == piece)?;
                    at.checked_sub(1).map(|b| o[b])
                })
                .collect();
            before.sort_unstable();
            before.dedup();
            assert!(before.len() >= 3, "piece {piece} follows only {before:?}");
            assert!(
                rounds.iter().any(|o| o[0] == piece),
                "piece {piece} never leads"
            );
        }
        assert_ne!(shuffled_order(1, 0, 6), shuffled_order(2, 0, 6));
    }
}
