//! Masked loads and stores: an access guarded by a device predicate, as Triton's
//! `tl.load(ptr, mask, other=...)` and `tl.store(ptr, v, mask)`. Where the predicate is false
//! no memory is touched (the address may be out of bounds there) and a load yields the fill
//! value.
//!
//! ```
//! use dsl_core::kernel::*;
//!
//! // out[i] = max over a row of x, whatever the row's length n (lanes past n read -inf).
//! let k = build_kernel("row_max", |k| {
//!     let x = k.param_ptr::<f32>("x");
//!     let out = k.param_ptr::<f32>("out");
//!     let n = k.param::<u32>("n");
//!     let lane = thread_idx_x();
//!     let v = x.load_at_or(lane, lane.lt(n), f32::NEG_INFINITY);
//!     let m = warp_max(v);
//!     out.store_at_if(block_idx_x(), lane.eq_(0u32), m);
//! })
//! .unwrap();
//! ```

use super::control::Cond;
use super::memory::{GlobalPtr, Offset, SharedPtr};
use super::value::{DeviceType, IntoVar, Var};

macro_rules! masked {
    ($p:ident) => {
        impl<T: DeviceType> $p<T> {
            /// `*self` where `mask` holds, else `other` (Triton's `other=`): the load is inside
            /// a device `if`, so a false lane reads no memory.
            pub fn load_or(self, mask: Var<bool>, other: impl IntoVar<T>) -> Var<T> {
                let out = other.into_var().fresh();
                let mut slot = out;
                mask.if_(|_| slot.set(self.load()));
                out
            }

            /// `self[i]` where `mask` holds, else `other`; `self + i` is not formed where it
            /// does not (the address computation is inside the `if` too).
            pub fn load_at_or(
                self,
                i: impl Offset,
                mask: Var<bool>,
                other: impl IntoVar<T>,
            ) -> Var<T> {
                let out = other.into_var().fresh();
                let mut slot = out;
                let mut i = Some(i);
                mask.if_(|_| {
                    if let Some(i) = i.take() {
                        slot.set(self.load_at(i));
                    }
                });
                out
            }

            /// `*self = v` where `mask` holds; nothing elsewhere.
            pub fn store_if(self, mask: Var<bool>, v: impl IntoVar<T>) {
                let v = v.into_var();
                mask.if_(|_| self.store(v));
            }

            /// `self[i] = v` where `mask` holds; nothing elsewhere.
            pub fn store_at_if(self, i: impl Offset, mask: Var<bool>, v: impl IntoVar<T>) {
                let v = v.into_var();
                let mut i = Some(i);
                mask.if_(|_| {
                    if let Some(i) = i.take() {
                        self.store_at(i, v);
                    }
                });
            }
        }
    };
}
masked!(GlobalPtr);
masked!(SharedPtr);
