//! One launch of a plan's kernel ([`LaunchPlan`]): the grid, the block, the cluster, the shared
//! memory and the kernel's parameters in order, each a [`GemmArg`] the runtime makes from the
//! call's operands.

use std::sync::Arc;

use dsl_core::atom::tma::TmaDescriptor;

/// One launch of a plan's kernel: the grid, block, cluster, dynamic shared memory and the
/// kernel's parameters in order.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    /// Blocks, (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block, (x, y, z).
    pub block: (u32, u32, u32),
    /// Blocks per cluster, (x, y, z) (`None`: no cluster launch).
    pub cluster: Option<(u32, u32, u32)>,
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_smem_bytes: u32,
    /// The kernel's parameters, in order.
    pub args: Vec<GemmArg>,
    /// f32 elements of scratch memory the launches use ([`GemmArg::Workspace`]); 0 for none.
    pub workspace: u64,
    /// A launch of the plan's [`reduction`](super::ProgramPlan::reduction) kernel queued right after
    /// this one (same stream, so it sees everything this one wrote): a split-K reduction.
    pub then: Option<Box<LaunchPlan>>,
    /// Launch it as a programmatic dependent launch (`Launch::programmatic` in codegen-ptx's
    /// JIT): its blocks may start while the stream's previous kernel finishes. Only for a
    /// kernel that runs `griddepcontrol.wait` before its first access to global memory.
    pub programmatic: bool,
}

impl LaunchPlan {
    /// A launch of `grid` blocks of `block` threads with `args`: no cluster, no dynamic shared
    /// memory, no workspace, nothing after it.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32), args: Vec<GemmArg>) -> LaunchPlan {
        LaunchPlan {
            grid,
            block,
            cluster: None,
            dynamic_smem_bytes: 0,
            args,
            workspace: 0,
            then: None,
            programmatic: false,
        }
    }

    /// Why the runtime cannot make these arguments, as a clause: D named more than once as a
    /// pointer, or as a tensor map, in one launch, since the runtime borrows D mutably once (D
    /// as a pointer beside a map over it is the map's buffer: one borrow); a workspace named
    /// without elements. `Ok` for every other list.
    pub fn check(&self) -> Result<(), String> {
        if self.workspace == 0 && self.uses_workspace() {
            return Err("its arguments name the workspace, and it asks for none".into());
        }
        if let Some(then) = &self.then {
            if then.then.is_some() {
                return Err("a launch after the main one has another after it".into());
            }
            if then.workspace > self.workspace {
                return Err("the launch after the main one asks for more workspace".into());
            }
            then.check_args()?;
        }
        self.check_args()
    }

    fn uses_workspace(&self) -> bool {
        let here = self.args.contains(&GemmArg::Workspace);
        here || self
            .then
            .as_ref()
            .is_some_and(|t| t.args.contains(&GemmArg::Workspace))
    }

    fn check_args(&self) -> Result<(), String> {
        let pointers = self.args.iter().filter(|a| **a == GemmArg::D).count();
        let maps = self
            .args
            .iter()
            .filter(|a| {
                matches!(
                    a,
                    GemmArg::TensorMap {
                        operand: GemmOperand::D,
                        ..
                    }
                )
            })
            .count();
        if pointers > 1 || maps > 1 {
            return Err(format!(
                "its arguments name D {pointers} times as a pointer and {maps} as a tensor map, and the runtime borrows D once: at most one of each (a pointer beside a map is the map's buffer)"
            ));
        }
        Ok(())
    }
}

/// One of a GEMM's matrices that a tensor map may describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmOperand {
    /// `m x k`, read.
    A,
    /// `n x k`, read.
    B,
    /// `m x n`, written.
    D,
    /// A form's residual, `m x n` of D's type, read (`D = alpha A B + R`).
    Residual,
}

/// One kernel parameter, in order, as the runtime makes it from the call's operands.
#[derive(Debug, Clone, PartialEq)]
pub enum GemmArg {
    /// D's global address (written).
    D,
    /// A's global address.
    A,
    /// B's global address.
    B,
    /// C's global address (read; the epilogue's source).
    C,
    /// The bias's global address (read).
    Bias,
    /// The residual's global address (read).
    Residual,
    /// M, a `u32`.
    M,
    /// N, a `u32`.
    N,
    /// K, a `u32`.
    K,
    /// A TMA descriptor over operand A, B or D (D written through it: the runtime encodes it
    /// with `Jit::tensor_map_mut`), its fields from the program's TMA atom
    /// ([`TmaCopy::descriptor`](dsl_core::atom::tma::TmaCopy::descriptor) of the operand's
    /// dimensions and strides; the runtime turns it into the driver's `TensorMapSpec` with
    /// `codegen_ptx::jit::tensor_map_spec`).
    TensorMap {
        /// The matrix the map addresses.
        operand: GemmOperand,
        /// The map's fields.
        descriptor: TmaDescriptor,
    },
    /// A small read-only table the kernel reads (a persistent scheduler's tile order, `u32`s):
    /// the runtime uploads it once per content (a cache) and passes its buffer's address.
    Table(Arc<Vec<u32>>),
    /// A scalar computed by the program (a tile count, say), a `u32`.
    U32(u32),
    /// A 64-bit scalar (a batch stride).
    U64(u64),
    /// An f32 scalar (alpha, beta).
    F32(f32),
    /// The runtime's f32 scratch buffer of at least [`LaunchPlan::workspace`] elements, zeroed
    /// when allocated (stream-K's flags and partial sums, which a launch leaves as it found the
    /// flags; or partial sums a launch after the main one reads).
    Workspace,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d_is_named_once_at_most() {
        use dsl_core::atom::tma::TmaSwizzleMode;
        use dsl_core::atom::ValType;
        let map = |operand| GemmArg::TensorMap {
            operand,
            descriptor: TmaDescriptor {
                elem: ValType::F16,
                global_dims: vec![64, 64],
                global_strides_bytes: vec![128],
                box_dims: vec![64, 64],
                element_strides: vec![1, 1],
                swizzle: TmaSwizzleMode::None,
                l2_promotion: Default::default(),
            },
        };
        let plan = |args| LaunchPlan::new((1, 1, 1), (32, 1, 1), args);
        use GemmArg::*;
        for ok in [
            vec![D, A, B, M, N, K],
            vec![
                map(GemmOperand::D),
                A,
                map(GemmOperand::A),
                map(GemmOperand::B),
            ],
            vec![Table(Arc::new(vec![0, 1])), U32(3), A],
            // A pointer beside the map: the map's buffer, one borrow.
            vec![map(GemmOperand::D), D, A, B],
        ] {
            assert_eq!(plan(ok).check(), Ok(()));
        }
        for (twice, counts) in [
            (
                vec![map(GemmOperand::D), A, B, D, D],
                "2 times as a pointer and 1",
            ),
            (
                vec![map(GemmOperand::D), map(GemmOperand::D)],
                "0 times as a pointer and 2",
            ),
        ] {
            let e = plan(twice).check().unwrap_err();
            let want = format!("its arguments name D {counts} as a tensor map");
            assert!(e.starts_with(&want), "{e}");
        }
    }

    #[test]
    fn a_workspace_is_asked_for_by_whoever_names_it() {
        use GemmArg::*;
        let reduce = LaunchPlan::new((4, 1, 1), (256, 1, 1), vec![Workspace, D, U32(8)]);
        let mut split = LaunchPlan::new((132, 1, 1), (384, 1, 1), vec![A, B, Workspace]);
        split.then = Some(Box::new(reduce.clone()));
        let e = split.check().unwrap_err();
        assert_eq!(e, "its arguments name the workspace, and it asks for none");
        split.workspace = 1 << 20;
        assert_eq!(split.check(), Ok(()));
        // The reduction names D once itself, apart from the main launch.
        split.args.push(D);
        assert_eq!(split.check(), Ok(()));
        let mut twice = reduce.clone();
        twice.args.push(D);
        split.then = Some(Box::new(twice));
        assert!(split
            .check()
            .unwrap_err()
            .starts_with("its arguments name D 2 times as a pointer"));
        let mut chained = reduce.clone();
        chained.then = Some(Box::new(reduce));
        split.then = Some(Box::new(chained));
        assert_eq!(
            split.check().unwrap_err(),
            "a launch after the main one has another after it"
        );
    }
}
