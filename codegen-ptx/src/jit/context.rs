//! What a `Jit` shares with the modules, functions and tensor maps made through it: its context,
//! stream, device limits and driver version.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use super::error::{driver, JitError};
use super::launch::DeviceLimits;

/// What modules and functions share with the `Jit` that loaded them.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) limits: DeviceLimits,
    pub(crate) driver_version: i32,
}

impl Shared {
    pub(crate) fn bind(&self) -> Result<(), JitError> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))
    }
}
