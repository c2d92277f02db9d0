//! Load games by OpenSpiel-style game strings: `kuhn_poker`, `kuhn_poker(players=3)`,
//! `leduc_poker`, `matrix_rps`, …

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, Turn};
use crate::kuhn::{KuhnPoker, KuhnState};
use crate::leduc::{LeducPoker, LeducState};
use crate::matrix::{MATRIX_GAMES, MatrixGame, MatrixState, named_matrix_game};
use crate::normal_form::NormalFormGame;

/// Every game the registry can load, as one type (games are generic, not dyn).
#[derive(Clone, Debug)]
pub enum AnyGame {
    /// [`KuhnPoker`].
    Kuhn(KuhnPoker),
    /// [`LeducPoker`].
    Leduc(LeducPoker),
    /// A [`MatrixGame`].
    Matrix(MatrixGame),
}

/// The state of an [`AnyGame`].
#[derive(Clone, Debug)]
pub enum AnyState {
    /// A Kuhn poker state.
    Kuhn(KuhnState),
    /// A Leduc poker state.
    Leduc(LeducState),
    /// A matrix-game state.
    Matrix(MatrixState),
}

/// The names [`load`] knows.
pub fn game_names() -> Vec<&'static str> {
    let mut names = vec!["kuhn_poker", "leduc_poker"];
    names.extend_from_slice(MATRIX_GAMES);
    names
}

/// Split `name(key=value,...)` into the name and its parameters.
fn parse_spec(spec: &str) -> Result<(String, BTreeMap<String, String>)> {
    let bad = |reason: &str| Error::BadGameSpec { spec: spec.into(), reason: reason.into() };
    let spec_trim = spec.trim();
    let Some(open) = spec_trim.find('(') else {
        if spec_trim.contains(')') || spec_trim.is_empty() {
            return Err(bad("expected `name` or `name(key=value,...)`"));
        }
        return Ok((spec_trim.to_string(), BTreeMap::new()));
    };
    if !spec_trim.ends_with(')') {
        return Err(bad("missing `)`"));
    }
    let name = spec_trim[..open].trim().to_string();
    let inner = &spec_trim[open + 1..spec_trim.len() - 1];
    let mut params = BTreeMap::new();
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| bad("parameters are `key=value`"))?;
        if params.insert(k.trim().to_string(), v.trim().to_string()).is_some() {
            return Err(bad(&format!("parameter `{}` given twice", k.trim())));
        }
    }
    Ok((name, params))
}

fn players_param(
    spec: &str,
    params: &BTreeMap<String, String>,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize> {
    let bad = |reason: String| Error::BadGameSpec { spec: spec.into(), reason };
    if let Some(k) = params.keys().find(|k| k.as_str() != "players") {
        return Err(bad(format!("unknown parameter `{k}`; known parameters: players")));
    }
    let Some(v) = params.get("players") else { return Ok(2) };
    let n: usize = v.parse().map_err(|_| bad(format!("players must be an integer, got `{v}`")))?;
    if !range.contains(&n) {
        return Err(bad(format!("players must be in {}..={}, got {n}", range.start(), range.end())));
    }
    Ok(n)
}

/// Load a game from an OpenSpiel-style game string.
///
/// # Errors
///
/// [`Error::UnknownGame`] (listing the known names) or [`Error::BadGameSpec`] for an unknown
/// or out-of-range parameter.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, Game};
/// let game = registry::load("kuhn_poker(players=3)")?;
/// assert_eq!(game.num_players(), 3);
/// assert!(registry::load("chess").is_err());
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub fn load(spec: &str) -> Result<AnyGame> {
    let (name, params) = parse_spec(spec)?;
    match name.as_str() {
        "kuhn_poker" => Ok(AnyGame::Kuhn(KuhnPoker::new(players_param(spec, &params, KuhnPoker::PLAYERS)?))),
        "leduc_poker" => {
            Ok(AnyGame::Leduc(LeducPoker::new(players_param(spec, &params, LeducPoker::PLAYERS)?)))
        }
        other => match named_matrix_game(other) {
            Some(game) => {
                if let Some(k) = params.keys().next() {
                    return Err(Error::BadGameSpec {
                        spec: spec.into(),
                        reason: format!("`{other}` takes no parameters, got `{k}`"),
                    });
                }
                Ok(AnyGame::Matrix(MatrixGame::new(other, game?)))
            }
            None => Err(Error::UnknownGame { name: other.into(), known: game_names().join(", ") }),
        },
    }
}

impl AnyGame {
    /// A normal-form game played as a one-shot game.
    pub fn from_normal_form(name: impl Into<String>, game: NormalFormGame) -> Self {
        AnyGame::Matrix(MatrixGame::new(name, game))
    }
}

macro_rules! dispatch_game {
    ($self:ident, $g:ident => $e:expr) => {
        match $self {
            AnyGame::Kuhn($g) => $e,
            AnyGame::Leduc($g) => $e,
            AnyGame::Matrix($g) => $e,
        }
    };
}

macro_rules! dispatch_state {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyState::Kuhn($s) => $e,
            AnyState::Leduc($s) => $e,
            AnyState::Matrix($s) => $e,
        }
    };
}

impl Game for AnyGame {
    type State = AnyState;
    fn name(&self) -> String {
        dispatch_game!(self, g => g.name())
    }
    fn num_players(&self) -> usize {
        dispatch_game!(self, g => g.num_players())
    }
    fn num_distinct_actions(&self) -> usize {
        dispatch_game!(self, g => g.num_distinct_actions())
    }
    fn new_initial_state(&self) -> AnyState {
        match self {
            AnyGame::Kuhn(g) => AnyState::Kuhn(g.new_initial_state()),
            AnyGame::Leduc(g) => AnyState::Leduc(g.new_initial_state()),
            AnyGame::Matrix(g) => AnyState::Matrix(g.new_initial_state()),
        }
    }
    fn utility_sum(&self) -> Option<f64> {
        dispatch_game!(self, g => g.utility_sum())
    }
    fn count_histories(&self, at_most: u64) -> Option<u64> {
        dispatch_game!(self, g => g.count_histories(at_most))
    }
}

impl State for AnyState {
    fn turn(&self) -> Turn {
        dispatch_state!(self, s => s.turn())
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        dispatch_state!(self, s => s.legal_actions())
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        dispatch_state!(self, s => s.chance_outcomes())
    }
    fn apply_action(&mut self, action: ActionId) {
        dispatch_state!(self, s => s.apply_action(action))
    }
    fn returns(&self) -> Vec<f64> {
        dispatch_state!(self, s => s.returns())
    }
    fn information_state_string(&self, player: PlayerId) -> String {
        dispatch_state!(self, s => s.information_state_string(player))
    }
    fn history(&self) -> &[ActionId] {
        dispatch_state!(self, s => s.history())
    }
}
