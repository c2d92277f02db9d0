//! # metagame-populations
//!
//! The training loops of metagame. Every loop is a [`TrainingLoop`] (a step that commits
//! only on success, a state for checkpoints, a report per iteration) that [`run_loop`] drives
//! within [`RunLimits`]. A [`Population`] keeps each player's policies with their provenance;
//! a [`PayoffTable`] is the empirical meta-game, filled by a
//! [`MatchEvaluator`](metagame_games::MatchEvaluator) only where entries are missing; an
//! [`Oracle`] answers a [`ResponseRequest`] (the opponents' members and weights, a seed, a
//! budget); [`Psro`] runs the loop with any [`MetaSolver`](metagame_solvers::MetaSolver);
//! [`Xfp`] and [`DoubleOracle`] are the fictitious-play relatives; [`checkpoint`] saves runs
//! atomically.
//!
//! # Example
//!
//! (From a crate that depends on the umbrella crate `metagame`, the same items are
//! `metagame::populations::…`, `metagame::games::…` and `metagame::solvers::…`.)
//!
//! ```
//! use metagame_games::{registry, ExactEvaluator, GameTree};
//! use metagame_populations::{run_loop, ExactBestResponse, Psro, PsroConfig, RunLimits};
//! use metagame_solvers::nash::Nash;
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let oracle = Box::new(ExactBestResponse::default());
//! let mut psro = Psro::new(&tree, PsroConfig::default(), Box::new(Nash::default()), oracle, Box::new(ExactEvaluator))?;
//! let run = run_loop(&mut psro, &RunLimits::iterations(8), &mut ())?;
//! assert!(run.reports.last().unwrap().nash_conv.is_some_and(|x| x < 1e-6));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod approximate;
pub mod checkpoint;
mod error;
pub mod loops;
mod member_policy;
mod oracle;
mod payoff_table;
mod population;
mod report;
mod settings;
mod trained_response;
mod training_loop;

pub use approximate::{ApproximateNashConv, EstimateSettings, approximate_nash_conv};
pub use error::{Error, Result};
pub use loops::double_oracle::{
    DoubleOracle, DoubleOracleConfig, DoubleOracleConfigBuilder, DoubleOracleResult, DoubleOracleState,
    double_oracle,
};
pub use loops::fxp::{Fxp, FxpConfig, FxpConfigBuilder, FxpMember, FxpReport, FxpRole, FxpState};
pub use loops::league::matchmaking::{self, Matchmaker, MatchmakingConfig};
pub use loops::league::rating::{self, OnlineRating, Rating};
pub use loops::league::win_rates::{WinRates, WinRatesConfig, WinRatesConfigBuilder};
pub use loops::league::{
    League, LeagueConfig, LeagueConfigBuilder, LeagueMatch, LeagueMember, LeagueReport, LeagueState,
    LeagueTrainer, LocalTrainer, MinimaxTraining, NetworkPair, Outcome, PayoffRecord, PfspHardness,
    ReadPolicy, ResetTo, Role, RoleMatchmaking, SeatLearners, SeatPolicies, SnapshotFolder, SnapshotPolicy,
    TrainingJob, TrainingJobData, read_payoff_log, restore_pair,
};
pub use loops::psro::{Psro, PsroConfig, PsroConfigBuilder, PsroState};
pub use loops::xfp::{Xfp, XfpState};
pub use member_policy::{MEMBERS_FOLDER, MemberPolicy, StoredPolicy};
pub use metagame_learners::MinimaxQConfig;
pub use oracle::{Budget, ExactBestResponse, Oracle, Response, ResponseRequest, TrainingStats, response_gap};
pub use payoff_table::{Entry, PayoffTable};
pub use population::{Member, PolicyId, Population, Provenance, Reuse, WeightedMember};
pub use report::{Details, IterationReport, MetaGameReport, Observer, PhaseTimes, StopReason};
pub use trained_response::TrainedResponse;
pub use training_loop::{
    Committed, Cutoff, Run, RunLimits, RunLimitsBuilder, TrainingLoop, run_loop, run_loop_with,
};
