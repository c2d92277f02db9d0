//! # metagame
//!
//! Game-theoretic population training for multi-agent RL research: games and exact
//! exploitability ([`games`]), and the `metagame` command-line tool.
//!
//! # Example
//!
//! ```
//! use metagame::games::{nash_conv, registry, GameTree, TabularPolicy};
//!
//! let tree = GameTree::build(&registry::load("leduc_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! let value = nash_conv(&tree, &[&uniform, &uniform])?;
//! assert!((value - 1709.0 / 360.0).abs() < 1e-12);
//! # Ok::<(), metagame::games::Error>(())
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `cli` | yes | the `metagame` binary (clap) |

pub use metagame_games as games;
