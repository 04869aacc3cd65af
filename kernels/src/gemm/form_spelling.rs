//! A form's spelling read back: the part of a GEMM kernel's name that says its operand layouts,
//! its epilogue and D's type (`fkk_bcol_gelu_tanh_bf16`, what [`FormParts::tag`] writes), parsed
//! into [`FormParts`], and an epilogue's own tag ([`Epilogue::tag`]) into an [`Epilogue`]. So a
//! kernel named in a profile (`hopper_ws_bf16_128x192x64s4_n_fkk_bcol_gelu_tanh_bf16`) can be
//! generated again from its name: `rute ptx hopper_ws_bf16 --config 128x192x64s4_n --form
//! fkk_bcol_gelu_tanh_bf16`.
//!
//! An epilogue's tag is `plain`, or its parts joined by `_`: `src` (C is read), `brow` or `bcol`
//! (a bias per row or per column), the activation (`id`, `relu`, `gelu_tanh`, `gelu_erf`,
//! `silu`) or `glu_` and the gate's activation (a gated pair), then `res` (a residual). A
//! user's device function (`fn_NAME`) has no spelling: it is Rust code, not a name.
//!
//! ```
//! use kernels::gemm::epilogue::{Activation, Epilogue};
//! use kernels::gemm::layout::{FormParts, Major, OutType};
//! let e: Epilogue = "bcol_gelu_tanh".parse().unwrap();
//! assert_eq!(e, Epilogue::bias_act(Activation::GeluTanh));
//! let form: FormParts = "fkk_glu_silu_bf16".parse().unwrap();
//! assert_eq!((form.a, form.epilogue, form.out), (Major::K, Epilogue::SWIGLU, OutType::Bf16));
//! assert_eq!(form.tag(), "_fkk_glu_silu_bf16");
//! let bad = "bcol_gelu".parse::<Epilogue>().unwrap_err();
//! assert!(bad.to_string().contains("`gelu`"), "{bad}");
//! ```

use std::str::FromStr;

use thiserror::Error;

use super::epilogue::{Activation, Bias, Elementwise, Epilogue, Gated, Map, Residual, Source};
use super::layout::{FormParts, Major, OutType};

/// Why a spelling is not a form's or an epilogue's.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormSpellingError {
    /// The form does not start with `f` and the two operands' majors.
    #[error(
        "`{0}` is not a form: it starts with `f` and A's and B's majors, each `k` or `mn` \
         (`fkk_plain_bf16`)"
    )]
    Majors(String),
    /// The form does not end with D's type.
    #[error("`{0}` is not a form: it ends with D's type, `_f16`, `_bf16` or `_f32`")]
    OutType(String),
    /// The epilogue's tag is empty.
    #[error("the epilogue is empty: `plain`, or its parts joined by `_` (`bcol_gelu_tanh`)")]
    Empty,
    /// A part the tag does not have where it stands.
    #[error(
        "`{part}` is not a part of an epilogue where it stands in `{tag}`: after `src` and a \
         bias (`brow`, `bcol`) comes one activation ({activations}) or `glu_` and one, then \
         `res` or nothing"
    )]
    Part {
        /// The whole tag.
        tag: String,
        /// What stood where a part was expected.
        part: String,
        /// The activations' names.
        activations: String,
    },
    /// No activation where one stands (`id` for none).
    #[error(
        "`{0}` names no activation: after `src` and a bias (`brow`, `bcol`) comes one, `id` for \
         none (`bcol_id`)"
    )]
    NoActivation(String),
    /// A gated pair after `src`: a gated epilogue reads no C.
    #[error("`{0}`: a gated epilogue (`glu_`) reads no C, so it takes no `src`")]
    GatedWithC(String),
    /// A user's device function: it has no spelling.
    #[error("`{0}`: a user's device function (`fn_NAME`) is Rust code and cannot be named here")]
    DeviceFn(String),
}

impl FromStr for Epilogue {
    type Err = FormSpellingError;

    /// The epilogue whose [`Epilogue::tag`] is `tag`.
    fn from_str(tag: &str) -> Result<Epilogue, FormSpellingError> {
        if tag.is_empty() {
            return Err(FormSpellingError::Empty);
        }
        if tag == "plain" {
            return Ok(Epilogue::Plain);
        }
        let mut rest = tag;
        let source = match take(&mut rest, "src") {
            true => Source::C,
            false => Source::None,
        };
        let bias = if take(&mut rest, "brow") {
            Some(Bias::PerRow)
        } else if take(&mut rest, "bcol") {
            Some(Bias::PerColumn)
        } else {
            None
        };
        if rest.starts_with("fn_") {
            return Err(FormSpellingError::DeviceFn(tag.to_string()));
        }
        let gated = take(&mut rest, "glu");
        let part_error = |part: &str| FormSpellingError::Part {
            tag: tag.to_string(),
            part: part.to_string(),
            activations: Activation::ALL
                .iter()
                .map(|a| format!("`{}`", a.name()))
                .collect::<Vec<_>>()
                .join(", "),
        };
        // The longest name first: `gelu_tanh` before a `gelu` that is no activation.
        let mut by_length = Activation::ALL;
        by_length.sort_by_key(|a| std::cmp::Reverse(a.name().len()));
        if rest.is_empty() {
            return Err(FormSpellingError::NoActivation(tag.to_string()));
        }
        let act = by_length
            .into_iter()
            .find(|a| take(&mut rest, a.name()))
            .ok_or_else(|| part_error(rest.split('_').next().unwrap_or(rest)))?;
        let residual = match take(&mut rest, "res") {
            true => Residual::Add,
            false => Residual::None,
        };
        if !rest.is_empty() {
            return Err(part_error(rest));
        }
        if gated {
            if source == Source::C {
                return Err(FormSpellingError::GatedWithC(tag.to_string()));
            }
            return Ok(Epilogue::Gated(Gated {
                bias,
                act,
                residual,
            }));
        }
        Ok(Epilogue::Elementwise(Elementwise {
            source,
            bias,
            map: Map::Activation(act),
            residual,
        }))
    }
}

/// Takes `part` off the front of `rest` where it is a whole `_`-separated piece (with the `_`
/// after it); whether it did.
fn take(rest: &mut &str, part: &str) -> bool {
    let Some(after) = rest.strip_prefix(part) else {
        return false;
    };
    if after.is_empty() {
        *rest = after;
        return true;
    }
    match after.strip_prefix('_') {
        Some(next) => {
            *rest = next;
            true
        }
        None => false,
    }
}

impl FromStr for FormParts {
    type Err = FormSpellingError;

    /// The form whose [`FormParts::tag`] is `spelling` (its leading `_` optional).
    fn from_str(spelling: &str) -> Result<FormParts, FormSpellingError> {
        let form = spelling.strip_prefix('_').unwrap_or(spelling);
        let (majors, rest) = form
            .split_once('_')
            .ok_or_else(|| FormSpellingError::Majors(spelling.to_string()))?;
        let (a, b) = majors_of(majors).ok_or_else(|| FormSpellingError::Majors(spelling.into()))?;
        let (epilogue, out) = rest
            .rsplit_once('_')
            .ok_or_else(|| FormSpellingError::OutType(spelling.to_string()))?;
        let out = [OutType::F16, OutType::Bf16, OutType::F32]
            .into_iter()
            .find(|t| t.name() == out)
            .ok_or_else(|| FormSpellingError::OutType(spelling.to_string()))?;
        Ok(FormParts {
            a,
            b,
            epilogue: epilogue.parse()?,
            out,
        })
    }
}

/// A's and B's majors from `f` and two of `k` and `mn` (`fkk`, `fmnk`).
fn majors_of(spelled: &str) -> Option<(Major, Major)> {
    let rest = spelled.strip_prefix('f')?;
    let one = |s: &str| -> Option<(Major, usize)> {
        if s.starts_with("mn") {
            Some((Major::MN, 2))
        } else if s.starts_with('k') {
            Some((Major::K, 1))
        } else {
            None
        }
    };
    let (a, used) = one(rest)?;
    let (b, used_b) = one(&rest[used..])?;
    (used + used_b == rest.len()).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every epilogue with a spelling reads back from its tag, and every form from its tag, in
    /// every operand layout and D's every type.
    #[test]
    fn tags_read_back() {
        for e in Epilogue::one_of_each() {
            assert_eq!(e.tag().parse::<Epilogue>(), Ok(e), "{}", e.tag());
            for (a, b) in [
                (Major::K, Major::K),
                (Major::K, Major::MN),
                (Major::MN, Major::K),
                (Major::MN, Major::MN),
            ] {
                for out in [OutType::F16, OutType::Bf16, OutType::F32] {
                    let form = FormParts {
                        a,
                        b,
                        epilogue: e,
                        out,
                    };
                    assert_eq!(form.tag().parse::<FormParts>(), Ok(form), "{}", form.tag());
                }
            }
        }
    }

    /// A wrong spelling is a sentence naming what is wrong, never an epilogue.
    #[test]
    fn wrong_spellings_say_what_is_wrong() {
        let part = |tag: &str, what: &str| match tag.parse::<Epilogue>() {
            Err(FormSpellingError::Part { part, .. }) => assert_eq!(part, what, "{tag}"),
            other => panic!("{tag}: {other:?}"),
        };
        part("gelu", "gelu");
        part("bcol_gelu", "gelu");
        assert_eq!(
            "bcol".parse::<Epilogue>(),
            Err(FormSpellingError::NoActivation("bcol".into()))
        );
        assert!(matches!(
            "src_brow_glu".parse::<Epilogue>(),
            Err(FormSpellingError::NoActivation(_))
        ));
        part("silu_silu", "silu");
        part("relu_res_res", "res");
        part("bcol_brow_relu", "brow");
        part("res_relu", "res");
        part("relux", "relux");
        assert_eq!("".parse::<Epilogue>(), Err(FormSpellingError::Empty));
        assert!(matches!(
            "src_glu_silu".parse::<Epilogue>(),
            Err(FormSpellingError::GatedWithC(_))
        ));
        assert!(matches!(
            "bcol_fn_mine".parse::<Epilogue>(),
            Err(FormSpellingError::DeviceFn(_))
        ));
        for bad in ["kk_plain_bf16", "fkx_plain_bf16", "fkkk_plain_bf16", "fkk"] {
            assert!(
                matches!(bad.parse::<FormParts>(), Err(FormSpellingError::Majors(_))),
                "{bad}"
            );
        }
        for bad in ["fkk_plain", "fkk_plain_f64", "fkk_relu_BF16"] {
            assert!(
                matches!(bad.parse::<FormParts>(), Err(FormSpellingError::OutType(_))),
                "{bad}"
            );
        }
        let message = "fkk_bcol_gelu_bf16"
            .parse::<FormParts>()
            .unwrap_err()
            .to_string();
        assert!(message.contains("`gelu_tanh`"), "{message}");
    }
}
