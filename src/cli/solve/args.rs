//! The arguments of `metagame solve`, which the normal-form and the sequence-form paths
//! both read.

use std::path::PathBuf;

use crate::cli::args::TreeLimit;

#[derive(clap::Args)]
pub struct Args {
    /// A Gambit `.nfg` file (give this or `--game`).
    #[arg(value_name = "FILE.nfg", conflicts_with = "game", required_unless_present = "game")]
    pub(in crate::cli) file: Option<PathBuf>,
    /// A game string (give this or a file): a matrix game (`matrix_rps`), solved by
    /// `--solver`, or a two-player zero-sum extensive-form game (`leduc_poker`), solved
    /// exactly by the sequence-form LP.
    #[arg(long)]
    pub(in crate::cli) game: Option<String>,
    /// The meta-solver for a normal-form game, by its registry name (the same names as
    /// configs): uniform, nash, lp, lemke-howson, support-enumeration, vertex-enumeration,
    /// fictitious-play, rm, rm+, hedge, replicator, prd, alpha-rank, ce, cce, logit. An
    /// extensive-form game takes only `sequence-form-lp` (the default there).
    #[arg(long)]
    pub(in crate::cli) solver: Option<String>,
    /// Iterations of an iterative solver (pivot or basis cap for the exact ones).
    #[arg(long, value_name = "N")]
    pub(in crate::cli) iterations: Option<usize>,
    /// Return every equilibrium the solver finds (enumeration methods), not just one.
    #[arg(long)]
    pub(in crate::cli) all: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(in crate::cli) json: bool,
    /// Repeat the solve N times and report the mean time per solve (`seconds_per_solve`,
    /// game loading excluded).
    #[arg(long, value_name = "N", hide = true)]
    pub(in crate::cli) repeat: Option<u32>,
    /// Extensive-form games: write the equilibrium to this folder as OpenSpiel tabular
    /// policies (JSON): `policy.json` (both players' rows, as `exploitability --policy`
    /// reads a profile), `player_0.json` and `player_1.json` (each player's rows, the other's
    /// uniform).
    #[arg(long, value_name = "DIR")]
    pub(in crate::cli) out: Option<PathBuf>,
    #[command(flatten)]
    pub(in crate::cli) limit: TreeLimit,
}
