//! # metagame-games
//!
//! The vocabulary of metagame: games, their flat trees, tabular policies, and the exact
//! quantities every algorithm is measured by.
//!
//! - [`Game`] / [`State`]: n-player turn-based games with chance and imperfect information,
//!   following OpenSpiel's contracts; information-state strings are OpenSpiel's, so policies
//!   can be exchanged with it. Games: [`KuhnPoker`], [`LeducPoker`], [`ConnectFour`], and any
//!   [`NormalFormGame`] as a one-shot [`MatrixGame`]; [`registry::games`] lists every
//!   registered game with its parameters, and [`registry::load`] takes OpenSpiel-style
//!   strings (`kuhn_poker(players=3)`).
//! - [`NormalFormGame`]: n-player payoff tensors (the meta-games), with Gambit `.nfg`
//!   reading and writing in [`nfg`].
//! - [`GameTree`]: the whole game enumerated once into flat arrays; [`TabularPolicy`] is a
//!   dense `[infosets × actions]` table over it.
//! - [`expected_returns`], [`best_response`], [`nash_conv`], [`exploitability`] and
//!   [`aggregate`] (a mixture of policies as one behaviour policy) walk the tree.
//! - [`sequence_form`]: sequences, realisation plans and reach probabilities on the tree,
//!   for the CFR family and learners.
//! - [`testing::check_game`]: the conformance check every game passes;
//!   [`testing::check_registry`] runs it over the registry.
//!
//! # Example
//!
//! ```
//! use metagame_games::{nash_conv, registry, GameTree, TabularPolicy};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! let value = nash_conv(&tree, &[&uniform, &uniform])?;
//! assert!((value - 11.0 / 12.0).abs() < 1e-12);
//! # Ok::<(), metagame_games::Error>(())
//! ```

mod aggregate;
mod arena;
mod best_response_histories;
mod board;
mod connect_four;
mod connect_four_search;
mod cutoff;
mod error;
mod evaluator;
mod exact;
mod external;
pub mod flat;
mod game;
mod game_info;
pub mod goofspiel;
mod key_table;
mod kuhn;
mod leduc;
pub mod liars_dice;
mod matrix;
mod minimax;
pub mod nfg;
mod normal_form;
pub mod philox;
mod policy;
mod pure_strategies;
pub mod registry;
mod rollout;
mod sampled;
pub mod sequence_form;
mod sequence_values;
mod tabular_policy;
mod tabulate;
mod team_rps;
mod teams;
pub mod testing;
mod tic_tac_toe;
mod tie;
mod tree;
mod tree_builder;
mod tree_size;
mod vec_env;

pub use aggregate::{MixtureSum, aggregate, aggregate_into};
pub use arena::Arena;
pub use connect_four::{ConnectFour, ConnectFourState};
pub use connect_four_search::ConnectFourSearch;
pub use cutoff::Cutoff;
pub use error::{Error, Result};
pub use evaluator::{
    ExactEvaluator, MAX_EPISODES, MatchEvaluator, MatchTotals, Matchup, check_matchups, table_of, tables,
};
pub use exact::{
    NashConvReport, TIE_TOLERANCE, TieBreak, best_response, best_response_to_mixture, best_response_with,
    expected_returns, exploitability, nash_conv, nash_conv_report,
};
pub use external::{ExternalGame, ExternalGameState, ExternalRules, ExternalState, Failure};
pub use game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
pub use kuhn::{KuhnPoker, KuhnState};
pub use leduc::{LeducPoker, LeducState};
pub use matrix::{MATRIX_GAMES, MatrixGame, MatrixState, named_matrix_game};
pub use minimax::minimax_policy;
pub use normal_form::{DeviationPayoffs, NormalFormGame, extremes, transposed_product};
pub use policy::{
    Decisions, Device, FirstAction, PROBABILITY_SUM_TOLERANCE, Policy, PolicyFile, Uniform,
    check_probabilities,
};
pub use pure_strategies::{MAX_PURE_PROFILES, num_pure_strategies, pure_strategy};
pub use registry::{AnyGame, AnyState};
pub use rollout::{MixedMatchup, RolloutEvaluator, SEAT_DRAWS};
pub use sampled::SampledEvaluator;
pub use sequence_form::{RealizationPlan, SequenceId, reach_probabilities};
pub use sequence_values::SequenceValueCache;
pub use tabular_policy::{ROW_SUM_TOLERANCE, TabularPolicy};
pub use team_rps::{TeamRps, TeamRpsState};
pub use teams::{MAX_TEAM_STRATEGIES, Teams, team_nash_conv};
pub use tic_tac_toe::{TicTacToe, TicTacToeState};
pub use tree::{GameTree, InfosetId, MAX_NODES, NodeKind};
pub use tree_builder::TreeBuilder;
pub use tree_size::{TreeSize, quick_tree_size, tree_size};
pub use vec_env::{LaneStep, SeatMixture, SharedSeat, VecEnv};
