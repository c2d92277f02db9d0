//! The payoff table among a list of policies as `matches --json` gives it, and
//! `metagame.matches` from Python: one place for its fields.

use metagame_games::{Arena, Game, MatchTotals, Matchup};
use metagame_populations::rating::{BatchElo, BatchEloConfig};
use ndarray::Array2;
use serde_json::{Value, json};

/// How a table of matches was played.
#[derive(Clone, Debug)]
pub struct MatchesPlayed<'a> {
    /// The evaluator's name.
    pub evaluator: &'a str,
    /// True for exact expectations (no episodes).
    pub exact: bool,
    /// The policies' names, in the order the entries index them.
    pub policies: &'a [String],
    /// The seed of the sampled evaluators.
    pub seed: u64,
    /// Episodes per entry asked of the sampled evaluators.
    pub episodes: u64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// The table as JSON: `game`, `tree`, `evaluator`, `exact`, `policies`, `seed`,
/// `episodes_per_entry`, `entries` (each `policies`, `mean`, `stderr`, `episodes`; seat 0
/// most significant), `batch_elo` (see [`batch_elo`]; null where it does not apply),
/// `seconds` and `episodes_per_second`.
pub fn matches_json(
    arena: Arena<'_>,
    played: &MatchesPlayed<'_>,
    entries: &[Matchup],
    totals: &[MatchTotals],
) -> Value {
    let exact = played.exact;
    let rows: Vec<Value> = entries
        .iter()
        .zip(totals)
        .map(|(m, t)| {
            json!({
                "policies": m.seats,
                "mean": t.mean(),
                "stderr": t.stderr(),
                "episodes": if exact { 0 } else { t.episodes },
            })
        })
        .collect();
    let episodes_played: u64 = if exact { 0 } else { totals.iter().map(|t| t.episodes).sum() };
    json!({
        "game": arena.name(),
        "tree": arena.game_tree().is_some(),
        "evaluator": played.evaluator,
        "exact": exact,
        "policies": played.policies,
        "seed": played.seed,
        "episodes_per_entry": if exact { 0 } else { played.episodes },
        "entries": rows,
        "batch_elo": batch_elo(arena, played, entries, totals),
        "seconds": played.seconds,
        "episodes_per_second": (!exact && played.seconds > 0.0).then(|| episodes_played as f64 / played.seconds),
    })
}

/// The policies' batch Elo ratings from a two-player table: each entry's expected returns
/// mapped from the game's utility range to scores in [0, 1] (a win 1, a draw ½, a loss 0
/// where the game's results are those), counted as that many wins of the entry's
/// episodes (exact entries as the table's episodes per entry), both seatings of a pair
/// added, then the Bradley–Terry fit of [`BatchElo`] with OpenSpiel's defaults (the lowest
/// policy at 0). `None` for games of other player counts and games whose utility range is
/// not known (no tree, and the game states none).
pub fn batch_elo(
    arena: Arena<'_>,
    played: &MatchesPlayed<'_>,
    entries: &[Matchup],
    totals: &[MatchTotals],
) -> Option<Vec<f64>> {
    if arena.num_players() != 2 {
        return None;
    }
    let (low, high) = match arena.game_tree() {
        Some(tree) => tree.utility_bounds(),
        None => arena.game_rules()?.utility_range()?,
    };
    if high.partial_cmp(&low) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let n = played.policies.len();
    let mut wins = Array2::<f64>::zeros((n, n));
    for (m, t) in entries.iter().zip(totals) {
        let (a, b) = (m.seats[0], m.seats[1]);
        let count = if played.exact { played.episodes } else { t.episodes } as f64;
        let mean = t.mean();
        let score = |u: f64| ((u - low) / (high - low)).clamp(0.0, 1.0);
        if a != b {
            wins[[a, b]] += count * score(mean[0]);
            wins[[b, a]] += count * score(mean[1]);
        }
    }
    BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).ok().map(|elo| elo.ratings().to_vec())
}
