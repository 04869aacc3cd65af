//! [`Tune`]: a multistage configuration apart from its element and accumulator types, written
//! as `rute gemm --kernel multistage --config` takes it: one `Display` / `FromStr` pair.
//!
//! The spelling is `{M}x{N}x{K}s{STAGES}` (the block tile, `x{K}` left out for 32, and the
//! pipeline depth), then any of
//! `_w{WM}x{WN}` (warps along M and N; by default one per 64x64 of the tile), `_r{R}` (blocks
//! rasterized in groups of `2^R` M tiles) and `_se` or `_stsm` (the shared-memory epilogue,
//! written with `st.shared` or with sm_90's `stmatrix`), in that order.
//! `ref` is the configuration of CuTe's tutorial (`09_multistage_gemm.cu`) and `tuned` [`Tune::TUNED`]; a leading `t` is accepted
//! (`t128x128x64s3_r2_se`, the names of earlier sweeps).
//!
//! ```
//! use kernels::multistage::Tune;
//! let t: Tune = "128x256x32s4_r2_se".parse().unwrap();
//! assert_eq!((t.tile, t.stages, t.warps, t.raster_log2), ((128, 256, 32), 4, (2, 4), 2));
//! assert_eq!(t.to_string(), "128x256x32s4_r2_se");
//! assert_eq!("ref".parse::<Tune>().unwrap().to_string(), "128x128x32s3");
//! let e = "128x100x32s3".parse::<Tune>().unwrap_err();
//! assert!(e.to_string().contains("tile_n is a multiple of 32"), "{e}");
//! ```

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::{Epilogue, MultistageConfig, MultistageError, MultistageParts, Setup};
use crate::gemm::{Accum, GemmDtype};

/// The type-independent levers of a [`MultistageConfig`]: tile, stages, warps, rasterization,
/// epilogue. All take 16-byte copies (K a multiple of 8). A `stmatrix` epilogue runs as the
/// `st.shared` one on sm_80 ([`MultistageConfig::for_target`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tune {
    /// The block tile `(M, N, K)`.
    pub tile: (u32, u32, u32),
    /// Depth of the shared-memory ring buffer.
    pub stages: u32,
    /// Warps along M and N.
    pub warps: (u32, u32),
    /// Blocks rasterized in groups of `2^raster_log2` M tiles (0: row after row).
    pub raster_log2: u32,
    /// How the accumulators reach D.
    pub epilogue: Epilogue,
}

impl Tune {
    /// The configuration of CuTe's multistage tutorial: 128x128x32, 3 stages, 2x2 warps,
    /// register epilogue.
    pub const REF: Tune = Tune {
        tile: (128, 128, 32),
        stages: 3,
        warps: (2, 2),
        raster_log2: 0,
        epilogue: Epilogue::Registers,
    };

    /// The configuration `rute gemm --config tuned` runs, and the default for K above
    /// [`Tune::SMALL_K`]: [`MultistageConfig::tuned`], the best at 4096^3 and 8192^3 across the
    /// H200 sweeps (`results/h200_gemm_sweep*.md`).
    pub const TUNED: Tune = Tune {
        tile: (128, 256, 32),
        stages: 4,
        warps: (2, 4),
        raster_log2: 2,
        epilogue: Epilogue::Stmatrix,
    };

    /// The configuration for problems with K up to [`Tune::SMALL_K`]: 128x128x64 tiles, 3
    /// stages, two blocks per SM, so that one block's prologue and epilogue, a large part of a
    /// short K loop, overlap the other's main loop (H200, `results/h200_gemm_ab.md`: 0.79x
    /// against [`Tune::TUNED`]'s 0.77x at 81920x256x256, 0.77x against 0.68x at 16384x4096x512,
    /// 0.73x against 0.69x at 8192x8192x1024; even at 2048^3).
    pub const SHORT_K: Tune = Tune {
        tile: (128, 128, 64),
        stages: 3,
        warps: (2, 2),
        raster_log2: 2,
        epilogue: Epilogue::Stmatrix,
    };

    /// The largest K [`Tune::for_shape`] gives [`Tune::SHORT_K`].
    pub const SMALL_K: usize = 2048;

    /// The default configuration of an `m x n x k` problem whose K is a multiple of 8:
    /// [`Tune::SHORT_K`] up to [`Tune::SMALL_K`], [`Tune::TUNED`] above.
    pub fn for_shape(_m: usize, _n: usize, k: usize) -> Tune {
        if k <= Self::SMALL_K {
            Tune::SHORT_K
        } else {
            Tune::TUNED
        }
    }

    /// The configurations the tuning sweep times (`scripts/gpu_run.sh`), as `--config` spells
    /// them.
    pub const SWEEP: [&'static str; 10] = [
        "ref",
        "128x128x32s4_r2_se",
        "128x128x64s3_r2_se",
        "128x128x64s3_r2_stsm",
        "128x256x32s4_r2_se",
        "128x256x32s4_r2_stsm",
        "128x256x32s5_r2_stsm",
        "128x256x32s6_r2_stsm",
        "256x128x64s3_r2_stsm",
        "256x128x32s5_r2_stsm",
    ];

    fn parse_spec(s: &str) -> Option<Tune> {
        let mut parts = s.split('_');
        let (tile, stages) = parts.next()?.split_once('s')?;
        let dims: Vec<u32> = tile
            .split('x')
            .map(|d| d.parse().ok())
            .collect::<Option<_>>()?;
        let (m, n, k) = match dims[..] {
            [m, n] => (m, n, 32),
            [m, n, k] => (m, n, k),
            _ => return None,
        };
        let mut t = Tune {
            tile: (m, n, k),
            stages: stages.parse().ok()?,
            warps: ((m / 64).max(1), (n / 64).max(1)),
            raster_log2: 0,
            epilogue: Epilogue::Registers,
        };
        // Each optional part at most once, in the documented order.
        let mut next = 0;
        for p in parts {
            let (rank, ok) = if let Some(w) = p.strip_prefix('w') {
                let (a, b) = w.split_once('x')?;
                t.warps = (a.parse().ok()?, b.parse().ok()?);
                (1, true)
            } else if let Some(r) = p.strip_prefix('r') {
                t.raster_log2 = r.parse().ok()?;
                (2, true)
            } else {
                t.epilogue = match p {
                    "se" => Epilogue::Smem,
                    "stsm" => Epilogue::Stmatrix,
                    _ => return None,
                };
                (3, true)
            };
            if !ok || rank <= next {
                return None;
            }
            next = rank;
        }
        Some(t)
    }

    /// Its configuration for these types, or why the program does not support it.
    pub fn config(self, dtype: GemmDtype, acc: Accum) -> Result<MultistageConfig, MultistageError> {
        let (tile_m, tile_n, tile_k) = self.tile;
        MultistageConfig::new(MultistageParts {
            tile_m,
            tile_n,
            tile_k,
            stages: self.stages,
            warps: self.warps,
            raster_log2: self.raster_log2,
            epilogue: self.epilogue,
            ..MultistageConfig::reference(dtype, acc).parts()
        })
    }
}

/// Why a `--config` spelling is no multistage configuration: each message names the spelling.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TuneError {
    /// Not spelled as a configuration.
    #[error("`{spec}` is not a configuration: write {{M}}x{{N}}x{{K}}s{{STAGES}}, then any of _w{{WM}}x{{WN}}, _r{{R}}, _se or _stsm (e.g. 128x256x32s4_r2_se), or ref, tuned")]
    Spelling {
        /// The spelling given.
        spec: String,
    },
    /// Spelled right, but outside what the program supports.
    #[error("`{spec}`: {reason}")]
    Unsupported {
        /// The spelling given.
        spec: String,
        /// Why, as a clause (e.g. "tile_k is 32 or 64").
        reason: String,
    },
}

impl FromStr for Tune {
    type Err = TuneError;

    /// The configuration `spec` spells (see the module docs), checked against what the program
    /// supports.
    fn from_str(spec: &str) -> Result<Tune, TuneError> {
        let t = match spec {
            "ref" => Tune::REF,
            "tuned" => Tune::TUNED,
            _ => Self::parse_spec(spec.strip_prefix('t').unwrap_or(spec)).ok_or_else(|| {
                TuneError::Spelling {
                    spec: spec.to_string(),
                }
            })?,
        };
        let checked = t
            .config(GemmDtype::F16, Accum::F32)
            .and_then(|c| Setup::new(&c));
        checked.map_err(|e| TuneError::Unsupported {
            spec: spec.to_string(),
            // The program's reason without the configuration dump it carries.
            reason: match e {
                MultistageError::Config { reason, .. } => reason,
                other => other.to_string(),
            },
        })?;
        Ok(t)
    }
}

impl fmt::Display for Tune {
    /// The canonical spelling (`_w` only where the warps are not one per 64x64), which
    /// [`Tune::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, n, k) = self.tile;
        write!(f, "{m}x{n}x{k}s{}", self.stages)?;
        if self.warps != ((m / 64).max(1), (n / 64).max(1)) {
            write!(f, "_w{}x{}", self.warps.0, self.warps.1)?;
        }
        if self.raster_log2 != 0 {
            write!(f, "_r{}", self.raster_log2)?;
        }
        match self.epilogue {
            Epilogue::Registers => Ok(()),
            Epilogue::Smem => f.write_str("_se"),
            Epilogue::Stmatrix => f.write_str("_stsm"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_configurations_round_trip() {
        for name in Tune::SWEEP {
            let t: Tune = name.parse().unwrap();
            assert_eq!(t.to_string().parse(), Ok(t), "{name}");
        }
        assert_eq!("tuned".parse(), Ok(Tune::TUNED));
        assert_eq!(
            "t128x128x64s3_r2_se".parse::<Tune>(),
            "128x128x64s3_r2_se".parse::<Tune>()
        );
        assert_eq!(
            "t256x128s4_r2_se".parse::<Tune>(),
            "256x128x32s4_r2_se".parse::<Tune>()
        );
        let t: Tune = "128x128x64s3_stsm".parse().unwrap();
        assert_eq!(t.epilogue, Epilogue::Stmatrix);
        let t: Tune = "64x64x32s2_w1x2".parse().unwrap();
        assert_eq!(
            (t.warps, t.to_string()),
            ((1, 2), "64x64x32s2_w1x2".to_string())
        );
        assert_eq!(
            Tune::TUNED.config(GemmDtype::F16, Accum::F32).unwrap(),
            MultistageConfig::tuned(GemmDtype::F16, Accum::F32)
        );
    }

    #[test]
    fn the_default_follows_k() {
        assert_eq!(Tune::for_shape(81920, 256, 256), Tune::SHORT_K);
        assert_eq!(Tune::for_shape(2048, 2048, 2048), Tune::SHORT_K);
        assert_eq!(Tune::for_shape(4096, 4096, 4096), Tune::TUNED);
        assert_eq!(Tune::SHORT_K.to_string(), "128x128x64s3_r2_stsm");
        assert_eq!(Tune::TUNED.to_string(), "128x256x32s4_r2_stsm");
    }

    /// `scripts/gpu_run.sh` sweeps these configurations by default.
    #[test]
    fn the_device_script_sweeps_the_list() {
        let script = include_str!("../../../scripts/gpu_run.sh");
        let default = script
            .split("${SWEEP:-")
            .nth(1)
            .and_then(|s| s.split('}').next())
            .expect("the script's default sweep");
        assert_eq!(default.split(' ').collect::<Vec<_>>(), Tune::SWEEP);
    }

    #[test]
    fn bad_specs_say_why() {
        for bad in [
            "",
            "fastest",
            "128s3",
            "128x128x32",
            "128x128x32s3_se_r2",
            "128x128x32s3_x",
        ] {
            let e = bad.parse::<Tune>().unwrap_err();
            assert_eq!(e, TuneError::Spelling { spec: bad.into() });
            assert!(
                e.to_string().contains("is not a configuration"),
                "{bad}: {e}"
            );
        }
        let e = "128x128x48s3".parse::<Tune>().unwrap_err();
        assert_eq!(e.to_string(), "`128x128x48s3`: tile_k is 32 or 64");
        let e = "256x256x64s4_r2_se".parse::<Tune>().unwrap_err();
        assert!(e.to_string().contains("do not fit in shared memory"), "{e}");
    }
}
