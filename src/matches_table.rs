//! The payoff table among a list of policies as `matches --json` gives it, and
//! `metagame.matches` from Python: one place for its fields.

use metagame_games::{Arena, MatchTotals, Matchup};
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
/// most significant), `seconds` and `episodes_per_second`.
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
        "seconds": played.seconds,
        "episodes_per_second": (!exact && played.seconds > 0.0).then(|| episodes_played as f64 / played.seconds),
    })
}
