//! The spelling of a [`BlackwellConfig`], as `rute gemm --kernel blackwell_ws --config` and `rute
//! ptx blackwell_ws_f16 --config` take it: a tutorial step, then the parts that differ from it.
//!
//! A spelling is `_`-separated words, in any order, each at most once:
//!
//! - `step7`, `step8` or `step9`: the tutorial's step at the depth it gives it
//!   ([`Step::tutorial_config`]; step 7 when none is named);
//! - `d{D}`: `D` stages in the ring (2 to [`MAX_DEPTH`](super::MAX_DEPTH));
//! - `n{N}`: `N` rows of B per block per stage (a multiple of 16; the MMA's N is `N` times the
//!   blocks);
//! - `b{B}`: `B` blocks per MMA, 1 or 2 (2: the two-block cluster, `cta_group::2`);
//! - `c{C}`: `C` MMA consumers, 1 or 2 (2: two sharing each stage's B);
//! - `e{E}`: the epilogue `E` accumulator columns at a time (16, 32, 64 or 128).
//!
//! So `step7_d4` is step 7 with a ring of 4, and `d4_b2_c2_e64` (step 7 changed in four parts)
//! is step 9. `Display` writes the step nearest the value (fewest parts other than the depth
//! changed, then the depth; the earlier step on a tie) and the parts that differ from it, in
//! the order above, so that every value has one spelling and reads back to itself: step 8 at
//! depth 2 is `step8_d2`, step 9 in one block `step9_b1`.
//!
//! The words `bugphases` and `bugtx` plant the bugs of the tutorial's first two exercises, and
//! `bugtail` a producer without its tail ([`PlantedBug`]), for the simulator's demonstrations;
//! no program should run with them.
//!
//! ```
//! use kernels::blackwell::{BlackwellConfig, Step};
//! for step in Step::ALL {
//!     assert_eq!(step.tutorial_config().to_string(), step.name());
//! }
//! let cfg: BlackwellConfig = "d4_b2_c2_e64".parse().unwrap();
//! assert_eq!(cfg.to_string(), "step9");
//! let e = "step8_d3_d4".parse::<BlackwellConfig>().unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "`step8_d3_d4` is not a blackwell_ws configuration: `d` is given twice; each part is \
//!      given at most once"
//! );
//! ```

use std::fmt;
use std::str::FromStr;

use dsl_core::ir::op::CtaGroup;
use thiserror::Error;

use super::config::{BlackwellConfig, ConfigError, Consumers, PlantedBug, Step};

/// A spelling that is not a configuration of the program, naming it and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{spelling}` is not a blackwell_ws configuration: {reason}")]
pub struct SpellingError {
    /// What was given.
    pub spelling: String,
    /// Why it is not a configuration.
    pub reason: ConfigError,
}

/// One part of a configuration that a spelling may change: a field of [`BlackwellConfig`], its
/// letter and its number. One table for `Display` and `FromStr`, in the order `Display` writes
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Depth,
    TileN,
    Blocks,
    Consumers,
    Epilogue,
}

impl Part {
    const ALL: [Part; 5] = [
        Part::Depth,
        Part::TileN,
        Part::Blocks,
        Part::Consumers,
        Part::Epilogue,
    ];

    fn letter(self) -> char {
        match self {
            Part::Depth => 'd',
            Part::TileN => 'n',
            Part::Blocks => 'b',
            Part::Consumers => 'c',
            Part::Epilogue => 'e',
        }
    }

    /// What the number counts, for the message about a missing one.
    fn counts(self) -> &'static str {
        match self {
            Part::Depth => "stages",
            Part::TileN => "rows of B per block",
            Part::Blocks => "blocks per MMA, 1 or 2",
            Part::Consumers => "MMA consumers, 1 or 2",
            Part::Epilogue => "accumulator columns per epilogue chunk",
        }
    }

    fn of(letter: char) -> Option<Part> {
        Part::ALL.into_iter().find(|p| p.letter() == letter)
    }

    fn get(self, cfg: &BlackwellConfig) -> u32 {
        match self {
            Part::Depth => cfg.depth,
            Part::TileN => cfg.tile_n,
            Part::Blocks => cfg.cta_group.count(),
            Part::Consumers => cfg.consumers.count(),
            Part::Epilogue => cfg.epilogue_columns,
        }
    }

    /// `cfg` with this part set to `value`; the ranges of the numbers are
    /// [`BlackwellConfig::check`]'s, except where the value names a variant.
    fn set(self, cfg: &mut BlackwellConfig, value: u32) -> Result<(), ConfigError> {
        let one_or_two = |what: &str| {
            ConfigError::Range(format!("`{}{value}`: {what} are 1 or 2", self.letter()))
        };
        match self {
            Part::Depth => cfg.depth = value,
            Part::TileN => cfg.tile_n = value,
            Part::Epilogue => cfg.epilogue_columns = value,
            Part::Blocks => {
                cfg.cta_group = match value {
                    1 => CtaGroup::One,
                    2 => CtaGroup::Two,
                    _ => return Err(one_or_two("blocks per MMA")),
                }
            }
            Part::Consumers => {
                cfg.consumers = match value {
                    1 => Consumers::One,
                    2 => Consumers::TwoSharingB,
                    _ => return Err(one_or_two("MMA consumers")),
                }
            }
        }
        Ok(())
    }
}

/// The word of a planted bug.
fn bug_word(bug: PlantedBug) -> &'static str {
    match bug {
        PlantedBug::BothPhasesZero => "bugphases",
        PlantedBug::ExpectTxWithoutCtaGroup => "bugtx",
        PlantedBug::NoProducerTail => "bugtail",
    }
}

/// The parts in which `cfg` differs from `step`'s configuration.
fn differences(cfg: &BlackwellConfig, step: Step) -> Vec<Part> {
    let base = step.tutorial_config();
    Part::ALL
        .into_iter()
        .filter(|p| p.get(cfg) != p.get(&base))
        .collect()
}

impl fmt::Display for BlackwellConfig {
    /// The step nearest the value and the parts that differ from it (see [the
    /// module](super::spelling)); [`BlackwellConfig::from_str`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nearest = |step: &Step| {
            let parts = differences(self, *step);
            let depth = parts.contains(&Part::Depth);
            (parts.len() - usize::from(depth), depth)
        };
        // min_by_key keeps the first of equal keys: the earlier step.
        let step = Step::ALL
            .iter()
            .min_by_key(|s| nearest(s))
            .expect("three steps");
        f.write_str(step.name())?;
        for part in differences(self, *step) {
            write!(f, "_{}{}", part.letter(), part.get(self))?;
        }
        if let Some(bug) = self.planted {
            write!(f, "_{}", bug_word(bug))?;
        }
        Ok(())
    }
}

impl FromStr for BlackwellConfig {
    type Err = SpellingError;

    /// The spelling of [the module's docs](super::spelling); the configuration it names is
    /// checked ([`BlackwellConfig::check`]). The error names the spelling and says why.
    fn from_str(spelling: &str) -> Result<BlackwellConfig, SpellingError> {
        read(spelling).map_err(|reason| SpellingError {
            spelling: spelling.to_string(),
            reason,
        })
    }
}

/// The words every spelling may use, for the message about an unknown one.
const KNOWN: &str = "step7, step8, step9, dD, nN, bB, cC, eE";

/// Sets `slot` to `value` unless a word already did: `name`'s second time is refused.
fn once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), ConfigError> {
    if slot.is_some() {
        return Err(ConfigError::Spelling(format!(
            "`{name}` is given twice; each part is given at most once"
        )));
    }
    *slot = Some(value);
    Ok(())
}

fn read(spelling: &str) -> Result<BlackwellConfig, ConfigError> {
    if spelling.is_empty() {
        return Err(ConfigError::Spelling(format!(
            "it is empty; it takes {KNOWN}, each at most once, e.g. step8"
        )));
    }
    let mut step = None;
    let mut bug = None;
    let mut given: [Option<u32>; Part::ALL.len()] = [None; Part::ALL.len()];
    for word in spelling.split('_') {
        if let Some(s) = Step::named(word) {
            once(&mut step, s, "stepN")?;
            continue;
        }
        if let Some(b) = [
            PlantedBug::BothPhasesZero,
            PlantedBug::ExpectTxWithoutCtaGroup,
            PlantedBug::NoProducerTail,
        ]
        .into_iter()
        .find(|b| bug_word(*b) == word)
        {
            once(&mut bug, b, "bug")?;
            continue;
        }
        let mut chars = word.chars();
        let Some(part) = chars.next().and_then(Part::of) else {
            return Err(ConfigError::Spelling(format!(
                "unknown part `{word}` (it takes {KNOWN})"
            )));
        };
        let number = chars.as_str();
        let value = number.parse::<u32>().map_err(|_| {
            ConfigError::Spelling(format!(
                "`{word}`: `{}` takes a number of {}",
                part.letter(),
                part.counts()
            ))
        })?;
        let slot = &mut given[part as usize];
        once(slot, value, &part.letter().to_string())?;
    }
    let mut cfg = step.unwrap_or(Step::Seven).tutorial_config();
    for (part, value) in Part::ALL.into_iter().zip(given) {
        if let Some(v) = value {
            part.set(&mut cfg, v)?;
        }
    }
    cfg.planted = bug;
    cfg.check()?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tutorial's steps by name, and the same values by their parts.
    #[test]
    fn steps_and_parts_name_the_same_values() {
        for (spelling, want) in [
            ("step7", BlackwellConfig::step7(2)),
            ("step8", BlackwellConfig::step8(4)),
            ("step9", BlackwellConfig::step9(4)),
            ("step7_d4", BlackwellConfig::step7(4)),
            ("d4", BlackwellConfig::step7(4)),
            ("b2_d4", BlackwellConfig::step8(4)),
            ("d4_b2_c2_e64", BlackwellConfig::step9(4)),
            ("e64_c2_step8", BlackwellConfig::step9(4)),
            ("step9_d2", BlackwellConfig::step9(2)),
        ] {
            let got: BlackwellConfig = spelling.parse().unwrap();
            assert_eq!(got, want, "{spelling}");
        }
    }

    /// Every value the parts make is written once, as the step nearest it, and reads back.
    #[test]
    fn every_configuration_reads_back_from_its_spelling() {
        let mut seen = std::collections::HashSet::new();
        for depth in 2..=6 {
            for tile_n in (16..=256).step_by(16) {
                for cta_group in [CtaGroup::One, CtaGroup::Two] {
                    for consumers in [Consumers::One, Consumers::TwoSharingB] {
                        for epilogue_columns in [16, 32, 64, 128] {
                            for planted in [None, Some(PlantedBug::BothPhasesZero)] {
                                let cfg = BlackwellConfig {
                                    depth,
                                    tile_n,
                                    cta_group,
                                    consumers,
                                    epilogue_columns,
                                    planted,
                                };
                                if cfg.check().is_err() {
                                    continue;
                                }
                                let spelled = cfg.to_string();
                                assert_eq!(spelled.parse(), Ok(cfg), "{spelled}");
                                assert!(seen.insert(spelled.clone()), "{spelled} twice");
                            }
                        }
                    }
                }
            }
        }
        assert!(seen.len() > 200, "{}", seen.len());
    }

    #[test]
    fn the_nearest_step_is_written() {
        for (cfg, spelled) in [
            (BlackwellConfig::step8(2), "step8_d2"),
            (BlackwellConfig::step7(6), "step7_d6"),
            (
                BlackwellConfig {
                    cta_group: CtaGroup::One,
                    ..BlackwellConfig::step9(4)
                },
                "step9_b1",
            ),
            (
                BlackwellConfig {
                    tile_n: 64,
                    ..BlackwellConfig::step8(3)
                },
                "step8_d3_n64",
            ),
            (
                BlackwellConfig::step8(4).with_planted(PlantedBug::ExpectTxWithoutCtaGroup),
                "step8_bugtx",
            ),
        ] {
            assert_eq!(cfg.to_string(), spelled);
        }
    }

    /// Each refusal is a sentence naming the spelling and the part.
    #[test]
    fn refusals_name_the_part() {
        for (spelling, says) in [
            ("", "it is empty"),
            ("step10", "unknown part `step10`"),
            ("step7_step8", "`stepN` is given twice"),
            ("step7_x4", "unknown part `x4`"),
            ("d", "`d`: `d` takes a number of stages"),
            ("d4_e64_d5", "`d` is given twice"),
            ("b3", "`b3`: blocks per MMA are 1 or 2"),
            ("c0", "`c0`: MMA consumers are 1 or 2"),
            ("d1", "a ring of 1 stage(s)"),
            ("d99999999999", "`d` takes a number of stages"),
            ("step8_n256", "B tiles of 256 rows"),
            ("e96", "an epilogue of 96 columns"),
            ("d4_b2_c2", "do not fit the block's 232448"),
            ("bugtx_bugphases", "`bug` is given twice"),
            ("step8__d4", "unknown part ``"),
        ] {
            let e = spelling.parse::<BlackwellConfig>().unwrap_err().to_string();
            let head = format!("`{spelling}` is not a blackwell_ws configuration: ");
            assert!(e.starts_with(&head) && e.contains(says), "{spelling}: {e}");
        }
    }
}
