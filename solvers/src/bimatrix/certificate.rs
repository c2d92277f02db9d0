//! When a two-player profile counts as an equilibrium: the tolerance the exact bimatrix
//! solvers certify their answers with.

use metagame_games::NormalFormGame;

/// A profile is certified when its NashConv is at most this times the payoff range.
pub const CERTIFICATE_TOLERANCE: f64 = 1e-9;

/// `CERTIFICATE_TOLERANCE ×` the largest payoff range of the game (0 for a constant game).
pub(crate) fn certificate_tolerance(game: &NormalFormGame) -> f64 {
    let range = (0..game.num_players())
        .map(|p| {
            let t = game.payoffs(p);
            let (lo, hi) =
                t.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            hi - lo
        })
        .fold(0.0, f64::max);
    CERTIFICATE_TOLERANCE * range
}
