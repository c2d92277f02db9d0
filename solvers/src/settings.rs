//! The settings the iterative solvers share (fictitious play, regret matching, Hedge,
//! replicator dynamics and PRD), and their setters, written once.
//!
//! Each solver holds an [`IterativeSettings`] and invokes [`iterative_settings!`] once, which
//! gives it `with_iterations`, `with_target_nash_conv` and `iterations` as inherent methods
//! (so `FictitiousPlay::with_iterations` is a plain `fn(FictitiousPlay, usize) ->
//! FictitiousPlay`, as the umbrella's registry uses it). Options a single solver has (γ, the
//! learning rate, dt) stay on that solver.

use crate::Result;
use crate::dynamics::invalid;

/// The iteration cap and the optional early stop of an iterative solver.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct IterativeSettings {
    /// Iterations to run at most (at least 1). Default 100 000 (OpenSpiel's regret matching
    /// and projected replicator dynamics); fictitious play sets 10 000.
    pub(crate) iterations: usize,
    /// When to stop before the cap. Default: never.
    pub(crate) stopping: Stopping,
}

impl Default for IterativeSettings {
    fn default() -> Self {
        Self { iterations: 100_000, stopping: Stopping::default() }
    }
}

impl IterativeSettings {
    /// Checks the iteration count (at least 1).
    pub(crate) fn check_iterations(&self, solver: &'static str) -> Result<()> {
        if self.iterations == 0 {
            return Err(invalid(solver, "iterations must be at least 1"));
        }
        Ok(())
    }
}

/// The optional early stop shared by the iterative solvers: every `check_every` iterations
/// the NashConv of the current answer is computed and the run stops once it is at most
/// `target_nash_conv`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stopping {
    /// Stop once the NashConv of the answer is at most this (finite, ≥ 0). Default: none.
    pub(crate) target_nash_conv: Option<f64>,
    /// Iterations between two checks (at least 1). Default 1000.
    pub(crate) check_every: usize,
}

impl Default for Stopping {
    fn default() -> Self {
        Self {
            // No early stop: run every iteration.
            target_nash_conv: None,
            check_every: 1000,
        }
    }
}

impl Stopping {
    /// True when iteration `t` (1-based) is a checkpoint.
    #[inline]
    pub(crate) fn is_checkpoint(&self, t: usize) -> bool {
        self.target_nash_conv.is_some() && t.is_multiple_of(self.check_every)
    }

    /// Checks `check_every` (at least 1) and the target (finite, at least 0).
    pub(crate) fn validate(&self, solver: &'static str) -> Result<()> {
        if self.check_every == 0 {
            return Err(invalid(solver, "check_every must be at least 1"));
        }
        if let Some(t) = self.target_nash_conv
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(invalid(solver, format!("target_nash_conv must be finite and >= 0, got {t}")));
        }
        Ok(())
    }

    /// True when `nash_conv` meets the target.
    pub(crate) fn reached(&self, nash_conv: f64) -> bool {
        self.target_nash_conv.is_some_and(|t| nash_conv <= t)
    }
}

/// `with_iterations`, `with_target_nash_conv` and `iterations` for a solver that holds an
/// [`IterativeSettings`] at `self.<path>`; `$default` is the default iteration count as the
/// docs print it.
macro_rules! iterative_settings {
    ($solver:ty, $($path:ident).+, default_iterations = $default:literal) => {
        impl $solver {
            #[doc = concat!("The same solver with `iterations` (at least 1; default ", $default, ").")]
            pub fn with_iterations(mut self, iterations: usize) -> Self {
                self.$($path).+.iterations = iterations;
                self
            }

            /// Stop early once the NashConv of the answer is at most `target` (checked every
            /// `check_every` iterations); the status is then
            /// [`Status::Solved`](crate::Status::Solved).
            pub fn with_target_nash_conv(mut self, target: f64, check_every: usize) -> Self {
                self.$($path).+.stopping =
                    $crate::settings::Stopping { target_nash_conv: Some(target), check_every };
                self
            }

            /// The iteration cap.
            pub fn iterations(&self) -> usize {
                self.$($path).+.iterations
            }
        }
    };
}
pub(crate) use iterative_settings;
