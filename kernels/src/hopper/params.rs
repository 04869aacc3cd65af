//! The kernel's parameters, as one struct ([`HopperParams`]) that the kernel declares (each
//! field a PTX parameter, in the struct's order) and the launch fills with its arguments (each
//! field a [`GemmArg`], in the same order), so that the two agree by construction rather than by
//! two lists kept in step.
//!
//! ```
//! use kernels::gemm::GemmArg;
//! use kernels::hopper::params::HopperParams;
//! assert_eq!(HopperParams::NAMES.len(), 11);
//! assert_eq!(HopperParams::NAMES[4], "m");
//! ```

use std::marker::PhantomData;

use dsl_core::kernel::macro_support::KernelParam;
use dsl_core::kernel::{GlobalPtr, KernelBuilder, TensorMap, Var};

use crate::gemm::{GemmArg, GemmElem};

/// What a parameter is on one side of the launch: a kernel's value, or the launch's argument.
pub trait ParamSide {
    /// A tensor map.
    type Map;
    /// D's address.
    type Out;
    /// A 32-bit scalar.
    type U32;
    /// A table of `u32`s.
    type Table;
    /// The f32 workspace.
    type Workspace;
}

/// The kernel's side, for elements `T`.
pub struct OnDevice<T>(PhantomData<T>);

impl<T: GemmElem> ParamSide for OnDevice<T> {
    type Map = TensorMap;
    type Out = GlobalPtr<T>;
    type U32 = Var<u32>;
    type Table = GlobalPtr<u32>;
    type Workspace = GlobalPtr<f32>;
}

/// The launch's side: each parameter as the runtime makes it from the call's operands.
pub struct OnHost;

impl ParamSide for OnHost {
    type Map = GemmArg;
    type Out = GemmArg;
    type U32 = GemmArg;
    type Table = GemmArg;
    type Workspace = GemmArg;
}

/// Writes [`HopperParams`] from one list of its fields: the struct, the kernel's declaration
/// of each field in order, the launch's arguments in the same order, and the names.
macro_rules! hopper_params {
    ($( $(#[doc = $doc:literal])* $field:ident: $kind:ident, )*) => {
        /// The warp-specialized GEMM's parameters, in order (see the module's docs).
        pub struct HopperParams<S: ParamSide> {
            $( $(#[doc = $doc])* pub $field: S::$kind, )*
        }

        impl<T: GemmElem> KernelParam for HopperParams<OnDevice<T>> {
            /// Declares each field as the kernel's parameter of its own name, in order (the
            /// struct's own name is not one).
            fn declare(kb: &KernelBuilder, _name: &str) -> Self {
                HopperParams {
                    $( $field: KernelParam::declare(kb, stringify!($field)), )*
                }
            }
        }

        impl HopperParams<OnHost> {
            /// The parameters' names, in order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// The launch's arguments, in the kernel's order.
            pub fn into_args(self) -> Vec<GemmArg> {
                vec![$(self.$field),*]
            }
        }
    };
}

hopper_params! {
    /// The kernel's A (`m x k`; swapped, the problem's B), from the plan's TMA copy.
    a_map: Map,
    /// The kernel's B (`n x k`).
    b_map: Map,
    /// D in the kernel's coordinates (`m x n`; swapped, D's transposed).
    d_map: Map,
    /// D's address (the map's buffer), which only a schedule that stores D from the registers
    /// writes through.
    d: Out,
    /// The kernel's M.
    m: U32,
    /// The kernel's N.
    n: U32,
    /// K.
    k: U32,
    /// The Hilbert tile order (read only with `Raster::Hilbert`; any buffer otherwise).
    order: Table,
    /// The stream-K split's shared tiles (`dsl_core::pipeline::StreamKSplit`).
    sk_tiles: U32,
    /// The clusters sharing them (no more than the grid's, nor than the split's k-tiles).
    sk_blocks: U32,
    /// The workspace: stream-K's flags and partial sums ([`super::fixup`]), or the tile
    /// queue's words; zeroed before the first launch.
    workspace: Workspace,
}
