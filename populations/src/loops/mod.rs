//! The training loops, one file (or folder) each; every one is a
//! [`TrainingLoop`](crate::TrainingLoop) over the machinery in the crate root (population,
//! payoff table, oracle, checkpoint, report). Adding a loop: one file here and its line below.

pub mod cfr;
pub mod double_oracle;
pub mod fxp;
pub mod league;
pub mod mccfr;
mod member_values;
pub mod psro;
pub mod xfp;
