//! [`PipelineState`]: which stage of a ring buffer a role uses next, and which phase of that
//! stage's barrier it waits for.

use crate::kernel::{select, Var};

/// A position in a `stages`-deep ring of buffers guarded by mbarriers: the stage index and the
/// parity of the barrier phase to wait for there (CUTLASS's `PipelineState`: an index and a
/// phase over `depth` stages).
///
/// The two ends of a pipeline start at opposite phases, and the constructors are named for the
/// role so that the two cannot be mixed up by accident:
/// - [`PipelineState::producer`] starts at phase 1: its first `wait` on the *empty* barriers finds
///   them in phase 0 and passes at once (every buffer starts empty);
/// - [`PipelineState::consumer`] starts at phase 0: its first `wait` on the *full* barriers blocks
///   until the producer's data completes phase 0.
///
/// Both advance through the stages in the same order; the phase flips each time the stage wraps
/// to 0. The state lives in registers, so `advance` inside a device loop carries it across
/// iterations.
///
/// ```
/// use dsl_core::kernel::build_kernel;
/// use dsl_core::pipeline::PipelineState;
/// build_kernel("k", |_| {
///     let mut ps = PipelineState::producer(4);
///     assert_eq!(ps.stages(), 4);
///     ps.advance();
/// })
/// .unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PipelineState {
    stage: Var<u32>,
    phase: Var<u32>,
    stages: u32,
}

impl PipelineState {
    fn starting_at(stages: u32, phase: u32) -> Self {
        PipelineState {
            stage: Var::konst(0u32).fresh(),
            phase: Var::konst(phase).fresh(),
            stages: stages.max(1),
        }
    }

    /// The producer's state over `stages` buffers: stage 0, phase 1.
    pub fn producer(stages: u32) -> Self {
        Self::starting_at(stages, 1)
    }

    /// The consumer's state over `stages` buffers: stage 0, phase 0.
    pub fn consumer(stages: u32) -> Self {
        Self::starting_at(stages, 0)
    }

    /// The stage index, `0..stages`.
    pub fn stage(&self) -> Var<u32> {
        self.stage
    }

    /// The parity (0 or 1) of the phase a wait at [`PipelineState::stage`] waits for.
    pub fn phase(&self) -> Var<u32> {
        self.phase
    }

    /// The ring's depth.
    pub fn stages(&self) -> u32 {
        self.stages
    }

    /// The next stage; the phase flips when the stage wraps to 0. Writes the state's registers
    /// (no branch: a compare and two selects).
    pub fn advance(&mut self) {
        if self.stages == 1 {
            self.phase.set(self.phase ^ 1u32);
            return;
        }
        let next = self.stage + 1u32;
        let wrap = next.eq_(self.stages);
        self.stage.set(select(wrap, 0u32, next));
        self.phase.set(self.phase ^ select(wrap, 1u32, 0u32));
    }

    /// [`PipelineState::advance`] `n` times (a host count), folded into one step.
    pub fn advance_by(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        let total = self.stage + n;
        let laps = total / self.stages;
        self.stage.set(total % self.stages);
        self.phase.set(self.phase ^ (laps & 1u32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::build_kernel;

    /// The host model of `advance`, checked against the device one by the simulator-free
    /// expedient of folding: with constant registers the ops fold on the host.
    #[test]
    fn producer_and_consumer_start_at_opposite_phases() {
        build_kernel("k", |_| {
            let p = PipelineState::producer(3);
            let c = PipelineState::consumer(3);
            assert_eq!(p.stages(), 3);
            assert!(p.phase().reg().is_some() && c.phase().reg().is_some());
            assert_ne!(p.stage().reg(), c.stage().reg());
        })
        .unwrap();
    }

    #[test]
    fn advance_emits_no_branch() {
        let k = build_kernel("k", |_| {
            let mut p = PipelineState::consumer(4);
            p.advance();
            p.advance_by(3);
        })
        .unwrap();
        assert!(k
            .body
            .iter()
            .all(|s| !matches!(s, crate::ir::Stmt::If { .. })));
    }
}
