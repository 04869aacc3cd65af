//! Warpgroup register reallocation `setmaxnreg.{inc,dec}.sync.aligned.u32 N`: sm_90a, and sm_100a
//! from PTX 8.6 (it is an architecture-specific op available on both).

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};

/// Raise (`inc`) or lower (`dec`) the per-thread register limit of the executing warpgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Setmaxnreg {
    /// `true` for `.inc` (wait for registers), `false` for `.dec` (release them).
    pub inc: bool,
    /// New limit: a multiple of 8 in 24..=256.
    pub count: u32,
}

impl OpInfo for Setmaxnreg {
    fn mnemonic(&self) -> &'static str {
        "setmaxnreg"
    }
    fn requires(&self) -> Requirement {
        Requirement::any_of(&[Target::Sm90a, Target::Sm100a])
    }
    fn ptx_version(&self) -> PtxVersion {
        PtxVersion::new(8, 0)
    }
    fn check(&self) -> Result<(), IrError> {
        if !(24..=256).step_by(8).any(|c| c == self.count) {
            return Err(IrError::bad(
                "setmaxnreg",
                format!("{} registers: a multiple of 8 in 24..=256", self.count),
            ));
        }
        Ok(())
    }
}
