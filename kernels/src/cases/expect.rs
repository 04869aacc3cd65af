//! What a run's outputs must hold ([`Expect`]): the CPU reference and how close to it, and how
//! close two runs of the same inputs on different machines must be to each other
//! ([`Agreement`]); what did not hold ([`Mismatch`]).

use std::fmt;

use super::run::Data;

/// How an output is compared with its reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// Bit for bit (a copy, or arithmetic whose every step is exact or fixed in order).
    Bits(Data),
    /// Each element within `tol * scale[i]` of `want[i]` (`scale`: the sum of the magnitudes of
    /// the terms that make the element, or the element itself for a relative bound).
    Close {
        /// The exact values.
        want: Vec<f64>,
        /// Each element's scale.
        scale: Vec<f64>,
        /// The bound, relative to the scale.
        tol: f64,
    },
    /// The relative Frobenius error `||got - want|| / ||want||` at most `tol` (a GEMM's metric).
    Frobenius {
        /// The exact values.
        want: Vec<f64>,
        /// The bound.
        tol: f64,
    },
}

/// How two runs of the same inputs (the simulator's and the GPU's) must agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Bit for bit: every operation's result is defined by the ISA to the bit and the order of
    /// the operations is the kernel's (no atomics racing, no hardware-defined accumulation).
    Bits,
    /// Each within its [`Check`] of the reference, and within twice its tolerance of each other
    /// (a tensor-core accumulation whose internal rounding the ISA leaves to the hardware).
    Tolerance,
}

/// What one output buffer must hold after a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// The buffer, an index into [`super::Run::buffers`].
    pub buffer: usize,
    /// Its comparison with the reference.
    pub check: Check,
    /// How two runs on different machines agree.
    pub agreement: Agreement,
}

/// An output that did not hold what it must.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The buffer's name.
    pub buffer: String,
    /// What is wrong, as a sentence.
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrong answer in `{}`: {}", self.buffer, self.detail)
    }
}

impl Expect {
    /// Bit-for-bit equality with `want`, on every machine.
    pub fn bits(buffer: usize, want: Data) -> Expect {
        Expect {
            buffer,
            check: Check::Bits(want),
            agreement: Agreement::Bits,
        }
    }

    /// Each element within `tol * scale[i]` of `want[i]`; `agreement` between machines.
    pub fn close(
        buffer: usize,
        want: Vec<f64>,
        scale: Vec<f64>,
        tol: f64,
        agreement: Agreement,
    ) -> Expect {
        Expect {
            buffer,
            check: Check::Close { want, scale, tol },
            agreement,
        }
    }

    /// `got` (buffer `name`) against the reference.
    pub fn verify(&self, name: &str, got: &Data) -> Result<(), Mismatch> {
        let fail = |detail: String| {
            Err(Mismatch {
                buffer: name.into(),
                detail,
            })
        };
        match &self.check {
            Check::Bits(want) => {
                if want.len() != got.len() {
                    return fail(format!("{} elements, {} expected", got.len(), want.len()));
                }
                let differ = |i: &usize| got.bits(*i) != want.bits(*i);
                let bad = (0..got.len()).filter(differ).count();
                match (0..got.len()).find(differ) {
                    None => Ok(()),
                    Some(i) => fail(format!(
                        "{bad} of {} elements differ; the first at {i}: {} ({:#x}), expected {} ({:#x})",
                        got.len(),
                        got.value(i),
                        got.bits(i),
                        want.value(i),
                        want.bits(i)
                    )),
                }
            }
            Check::Close { want, scale, tol } => {
                close_within(got, want, scale, *tol).map_or(Ok(()), fail)
            }
            Check::Frobenius { want, tol } => {
                let e = frobenius(got, want, want);
                // NaN (an element never written) fails too.
                if e <= *tol {
                    Ok(())
                } else {
                    fail(format!("relative Frobenius error {e:.3e}, above {tol:.0e}"))
                }
            }
        }
    }

    /// Two runs' outputs of buffer `name` (`a` the simulator's, `b` the GPU's) against each
    /// other, as [`Expect::agreement`] says.
    pub fn agree(&self, name: &str, a: &Data, b: &Data) -> Result<(), Mismatch> {
        let fail = |detail: String| {
            Err(Mismatch {
                buffer: name.into(),
                detail,
            })
        };
        if a.len() != b.len() {
            return fail(format!("{} and {} elements", a.len(), b.len()));
        }
        match (self.agreement, &self.check) {
            (Agreement::Bits, _) | (_, Check::Bits(_)) => Expect::bits(self.buffer, b.clone())
                .verify(name, a)
                .map_err(|m| Mismatch {
                    detail: format!("the two runs differ: {}", m.detail),
                    ..m
                }),
            (Agreement::Tolerance, Check::Close { scale, tol, .. }) => {
                let other: Vec<f64> = (0..b.len()).map(|i| b.value(i)).collect();
                close_within(a, &other, scale, 2.0 * tol)
                    .map_or(Ok(()), |d| fail(format!("the two runs differ: {d}")))
            }
            (Agreement::Tolerance, Check::Frobenius { want, tol }) => {
                let other: Vec<f64> = (0..b.len()).map(|i| b.value(i)).collect();
                let e = frobenius(a, &other, want);
                if e <= 2.0 * tol {
                    Ok(())
                } else {
                    fail(format!(
                        "the two runs are {e:.3e} apart (relative to the reference's norm), above twice the tolerance {tol:.0e}"
                    ))
                }
            }
        }
    }
}

/// `None` when every element of `got` is within `tol * scale[i]` of `want[i]`, else the sentence.
fn close_within(got: &Data, want: &[f64], scale: &[f64], tol: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, {} expected", got.len(), want.len()));
    }
    let mut bad = 0usize;
    let mut worst: Option<(usize, f64)> = None;
    for i in 0..got.len() {
        let err = (got.value(i) - want[i]).abs();
        let allowed = tol * scale[i].abs();
        // A NaN error (an element never written) fails.
        if err.is_nan() || err > allowed {
            bad += 1;
            let excess = if err.is_nan() {
                f64::INFINITY
            } else {
                err - allowed
            };
            if worst.is_none_or(|(_, w)| excess > w) {
                worst = Some((i, excess));
            }
        }
    }
    worst.map(|(i, _)| {
        format!(
            "{bad} of {} elements are farther from the reference than {tol:.0e} of their scale; the worst at {i}: {}, expected {} (scale {:.3e})",
            got.len(),
            got.value(i),
            want[i],
            scale[i]
        )
    })
}

/// `||got - want|| / ||norm||` (0 where both are zero), NaN when `got` has a non-finite element.
fn frobenius(got: &Data, want: &[f64], norm: &[f64]) -> f64 {
    if got.len() != want.len() {
        return f64::NAN;
    }
    let mut diff = 0.0f64;
    for (i, w) in want.iter().enumerate() {
        let g = got.value(i);
        if !g.is_finite() {
            return f64::NAN;
        }
        diff += (g - w) * (g - w);
    }
    let norm: f64 = norm.iter().map(|w| w * w).sum();
    match (diff == 0.0, norm == 0.0) {
        (true, _) => 0.0,
        (false, true) => f64::INFINITY,
        (false, false) => (diff / norm).sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_pass_and_fail_with_sentences() {
        let got = Data::F32(vec![1.0, 2.0, f32::NAN]);
        let e = Expect::bits(0, Data::F32(vec![1.0, 2.0, 3.0]));
        let m = e.verify("d", &got).unwrap_err();
        assert!(
            m.detail
                .starts_with("1 of 3 elements differ; the first at 2"),
            "{m}"
        );
        let close = Expect::close(
            0,
            vec![1.0, 2.0, 3.0],
            vec![1.0; 3],
            1e-3,
            Agreement::Tolerance,
        );
        let m = close.verify("d", &got).unwrap_err();
        assert!(m.detail.contains("the worst at 2"), "{m}");
        assert!(close
            .verify("d", &Data::F32(vec![1.0, 2.0005, 3.0]))
            .is_ok());
        let frob = Expect {
            buffer: 0,
            check: Check::Frobenius {
                want: vec![3.0, 4.0],
                tol: 1e-2,
            },
            agreement: Agreement::Tolerance,
        };
        assert!(frob.verify("d", &Data::F32(vec![3.0, 4.01])).is_ok());
        assert!(frob.verify("d", &Data::F32(vec![3.0, 4.5])).is_err());
        assert!(frob.verify("d", &Data::F32(vec![3.0, f32::NAN])).is_err());
        // Agreement: bits where asked, twice the tolerance otherwise.
        let a = Data::F32(vec![3.0, 4.0]);
        assert!(frob.agree("d", &a, &Data::F32(vec![3.0, 4.05])).is_ok());
        assert!(frob.agree("d", &a, &Data::F32(vec![3.0, 4.2])).is_err());
        let m = e.agree("d", &a, &Data::F32(vec![3.0, 4.5])).unwrap_err();
        assert!(m.detail.starts_with("the two runs differ: 1 of 2"), "{m}");
    }
}
