//! Schedules for exploration rates and step sizes.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A rate that changes as training goes on: an exploration ε or a step size.
///
/// `t` is the number of episodes the learner had trained on when the current batch began
/// (a batch plays with one fixed policy); `n` is a visit count (for a step size the visits
/// of the state-action pair including the current one, for ε the visits of the information
/// state before the batch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Schedule {
    /// Always `value`.
    Constant {
        /// The rate.
        value: f64,
    },
    /// From `start` at `t = 0` linearly to `end` at `t = episodes`, then `end`.
    Linear {
        /// The rate at the start.
        start: f64,
        /// The rate from `episodes` on.
        end: f64,
        /// Episodes to go from `start` to `end` (> 0).
        episodes: u64,
    },
    /// `start · scale / (scale + t)` (a harmonic decay over episodes).
    InverseTime {
        /// The rate at the start.
        start: f64,
        /// Episodes until the rate halves (> 0).
        scale: f64,
    },
    /// `max(floor, n^(-power))`: a per-visit rate (with power 1 and floor 0, a step size
    /// that makes each estimate the mean of its targets).
    PerVisit {
        /// The exponent, in (0, 1].
        power: f64,
        /// The lowest rate, in [0, 1].
        floor: f64,
    },
}

impl Schedule {
    /// A constant rate.
    pub fn constant(value: f64) -> Self {
        Self::Constant { value }
    }

    /// The rate after `t` episodes at visit count `n` (see the type docs).
    #[inline]
    pub fn value(&self, t: u64, n: u64) -> f64 {
        match *self {
            Self::Constant { value } => value,
            Self::Linear { start, end, episodes } => {
                if t >= episodes {
                    end
                } else {
                    start + (end - start) * (t as f64 / episodes as f64)
                }
            }
            Self::InverseTime { start, scale } => start * scale / (scale + t as f64),
            Self::PerVisit { power, floor } => {
                if n == 0 {
                    1.0
                } else if power == 1.0 {
                    (1.0 / n as f64).max(floor)
                } else if power == 0.5 {
                    (1.0 / (n as f64).sqrt()).max(floor)
                } else {
                    (n as f64).powf(-power).max(floor)
                }
            }
        }
    }

    /// Check that every rate the schedule can give lies in `[0, 1]` (`positive`: in `(0, 1]`).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming `field`.
    pub fn validate(&self, field: &str, positive: bool) -> Result<()> {
        let ok = |x: f64| x.is_finite() && x <= 1.0 && if positive { x > 0.0 } else { x >= 0.0 };
        let bad = |why: String| Err(Error::Config(format!("{field}: {why}")));
        let range = if positive { "(0, 1]" } else { "[0, 1]" };
        match *self {
            Self::Constant { value } if !ok(value) => bad(format!("{value} is not in {range}")),
            Self::Linear { start, end, .. } if !ok(start) || !ok(end) => {
                bad(format!("start {start} and end {end} must be in {range}"))
            }
            Self::Linear { episodes: 0, .. } => bad("a linear schedule needs episodes > 0".into()),
            Self::InverseTime { start, .. } if !ok(start) => bad(format!("start {start} is not in {range}")),
            Self::InverseTime { scale, .. } if !(scale.is_finite() && scale > 0.0) => {
                bad(format!("scale {scale} must be a positive number"))
            }
            Self::PerVisit { power, floor }
                if !(power > 0.0 && power <= 1.0 && (0.0..=1.0).contains(&floor)) =>
            {
                bad(format!("power {power} must be in (0, 1] and floor {floor} in [0, 1]"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_give_documented_values() {
        assert_eq!(Schedule::constant(0.3).value(99, 7), 0.3);
        let lin = Schedule::Linear { start: 0.2, end: 0.0, episodes: 100 };
        assert_eq!(lin.value(0, 0), 0.2);
        assert!((lin.value(50, 0) - 0.1).abs() < 1e-15);
        assert_eq!(lin.value(1000, 0), 0.0);
        let inv = Schedule::InverseTime { start: 0.4, scale: 10.0 };
        assert!((inv.value(10, 0) - 0.2).abs() < 1e-15);
        let pv = Schedule::PerVisit { power: 1.0, floor: 0.01 };
        assert_eq!(pv.value(0, 4), 0.25);
        assert_eq!(pv.value(0, 1000), 0.01);
    }

    #[test]
    fn out_of_range_rates_are_errors() {
        assert!(Schedule::constant(1.5).validate("epsilon", false).is_err());
        assert!(Schedule::constant(0.0).validate("step_size", true).is_err());
        assert!(Schedule::constant(0.0).validate("epsilon", false).is_ok());
        assert!(Schedule::constant(f64::NAN).validate("epsilon", false).is_err());
        assert!(Schedule::Linear { start: 0.1, end: 0.0, episodes: 0 }.validate("e", false).is_err());
        assert!(Schedule::PerVisit { power: 0.0, floor: 0.0 }.validate("s", true).is_err());
    }
}
