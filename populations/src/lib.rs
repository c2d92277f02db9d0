//! # metagame-populations
//!
//! The training loops of metagame. A [`Population`] keeps each player's policies with
//! their provenance; a [`PayoffTable`] is the empirical meta-game, filled by a
//! [`MatchEvaluator`](metagame_games::MatchEvaluator) only where entries are missing; an
//! [`Oracle`] adds responses; [`Psro`] runs the loop with any
//! [`MetaSolver`](metagame_solvers::MetaSolver); [`Xfp`] and [`double_oracle`] are the
//! fictitious-play relatives; [`checkpoint`] saves runs atomically.
//!
//! # Example
//!
//! ```
//! use metagame_games::{registry, ExactEvaluator, GameTree};
//! use metagame_populations::{meta::Nash, ExactBestResponse, Psro, PsroConfig};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let config = PsroConfig::builder().max_iterations(8).build()?;
//! let mut psro = Psro::new(&tree, config, Box::new(Nash), Box::new(ExactBestResponse::default()), Box::new(ExactEvaluator))?;
//! psro.run(&mut ())?;
//! assert!(psro.reports().last().unwrap().nash_conv < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod checkpoint;
mod double_oracle;
mod error;
pub mod meta;
mod nash;
mod oracle;
mod payoff_table;
mod population;
mod psro;
mod report;
mod xfp;

pub use double_oracle::{DoubleOracleResult, double_oracle};
pub use error::{Error, Result};
pub use oracle::{ExactBestResponse, Oracle};
pub use payoff_table::{Entry, PayoffTable};
pub use population::{Member, PolicyId, Population, Provenance};
pub use psro::{Psro, PsroConfig, PsroConfigBuilder, PsroState};
pub use report::{IterationReport, Observer, PhaseTimes, StopReason};
pub use xfp::{Xfp, XfpState};
