//! Load games by OpenSpiel-style game strings: `kuhn_poker`, `kuhn_poker(players=3)`,
//! `leduc_poker`, `matrix_rps`, …
//!
//! There is one list of games, the `registry!` invocation below, in the spirit of
//! OpenSpiel's `REGISTER_SPIEL_GAME` (`open_spiel/spiel.h`). Each game file describes itself
//! by implementing [`Registered`]: its name, parameters (default and range) and example
//! parameter sets in a [`GameInfo`], and how to build it from checked [`Params`]. The list
//! generates [`AnyGame`], [`AnyState`], their [`Game`]/[`State`] dispatch, [`game_names`],
//! [`games`] and [`load`]; `testing::check_registry` runs the conformance check over it, so a
//! new game cannot skip it.
//!
//! Adding a game: write `games/src/<game>.rs` with the game, its state and its
//! `impl Registered`, declare the module in `lib.rs`, and add one line to the list. Game files
//! take that vocabulary from `crate::game_info` (re-exported here), not from this module, so
//! that only the registry depends on the games.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, TensorShape, Turn};
use crate::game_info::check_params;
pub use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};
use crate::kuhn::KuhnPoker;
use crate::leduc::LeducPoker;
use crate::matrix::MatrixGame;
use crate::normal_form::NormalFormGame;

/// The one list of registered games: `Variant(GameType)`, one line per game type.
///
/// A type that registers several games (a family, like the matrix games) is still one line.
/// The variant names are those of [`AnyGame`] and [`AnyState`].
macro_rules! registry {
    ($($variant:ident($game:ty),)+ ; $($ext:ident($ext_game:ty),)*) => {
        /// Every game the registry can load, as one type (games are generic, not dyn).
        ///
        /// Non-exhaustive: the registry grows, so matches outside this crate need a `_` arm.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum AnyGame {
            $(
                #[doc = concat!("[`", stringify!($game), "`].")]
                $variant($game),
            )+
            $(
                #[doc = concat!("[`", stringify!($ext_game), "`] (not in the registry: built by an embedder).")]
                $ext($ext_game),
            )*
        }

        /// The state of an [`AnyGame`].
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum AnyState {
            $(
                #[doc = concat!("A state of [`", stringify!($game), "`].")]
                $variant(<$game as Game>::State),
            )+
            $(
                #[doc = concat!("A state of [`", stringify!($ext_game), "`].")]
                $ext(<$ext_game as Game>::State),
            )*
        }

        $(
            impl From<$game> for AnyGame {
                fn from(game: $game) -> Self {
                    AnyGame::$variant(game)
                }
            }
        )+
        $(
            impl From<$ext_game> for AnyGame {
                fn from(game: $ext_game) -> Self {
                    AnyGame::$ext(game)
                }
            }
        )*

        /// Each registered type's games with the function that builds one of them.
        const FAMILIES: &[(&[GameInfo], Builder)] = &[$((<$game as Registered>::GAMES, build::<$game>),)+];

        impl Game for AnyGame {
            type State = AnyState;
            fn name(&self) -> String {
                match self { $(AnyGame::$variant(g) => g.name(),)+ $(AnyGame::$ext(g) => g.name(),)* }
            }
            fn num_players(&self) -> usize {
                match self { $(AnyGame::$variant(g) => g.num_players(),)+ $(AnyGame::$ext(g) => g.num_players(),)* }
            }
            fn num_distinct_actions(&self) -> usize {
                match self { $(AnyGame::$variant(g) => g.num_distinct_actions(),)+ $(AnyGame::$ext(g) => g.num_distinct_actions(),)* }
            }
            fn new_initial_state(&self) -> AnyState {
                match self { $(AnyGame::$variant(g) => AnyState::$variant(g.new_initial_state()),)+ $(AnyGame::$ext(g) => AnyState::$ext(g.new_initial_state()),)* }
            }
            fn utility_sum(&self) -> Option<f64> {
                match self { $(AnyGame::$variant(g) => g.utility_sum(),)+ $(AnyGame::$ext(g) => g.utility_sum(),)* }
            }
            fn utility_range(&self) -> Option<(f64, f64)> {
                match self { $(AnyGame::$variant(g) => g.utility_range(),)+ $(AnyGame::$ext(g) => g.utility_range(),)* }
            }
            fn count_histories(&self, at_most: u64) -> Option<u64> {
                match self { $(AnyGame::$variant(g) => g.count_histories(at_most),)+ $(AnyGame::$ext(g) => g.count_histories(at_most),)* }
            }
            fn tensor_shape(&self) -> Option<TensorShape> {
                match self { $(AnyGame::$variant(g) => g.tensor_shape(),)+ $(AnyGame::$ext(g) => g.tensor_shape(),)* }
            }
        }

        impl State for AnyState {
            fn turn(&self) -> Turn {
                match self { $(AnyState::$variant(s) => s.turn(),)+ $(AnyState::$ext(s) => s.turn(),)* }
            }
            fn legal_actions(&self) -> Vec<ActionId> {
                match self { $(AnyState::$variant(s) => s.legal_actions(),)+ $(AnyState::$ext(s) => s.legal_actions(),)* }
            }
            fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
                match self { $(AnyState::$variant(s) => s.chance_outcomes(),)+ $(AnyState::$ext(s) => s.chance_outcomes(),)* }
            }
            fn apply_action(&mut self, action: ActionId) {
                match self { $(AnyState::$variant(s) => s.apply_action(action),)+ $(AnyState::$ext(s) => s.apply_action(action),)* }
            }
            fn returns(&self) -> Vec<f64> {
                match self { $(AnyState::$variant(s) => s.returns(),)+ $(AnyState::$ext(s) => s.returns(),)* }
            }
            fn information_state_string(&self, player: PlayerId) -> String {
                match self { $(AnyState::$variant(s) => s.information_state_string(player),)+ $(AnyState::$ext(s) => s.information_state_string(player),)* }
            }
            fn history(&self) -> &[ActionId] {
                match self { $(AnyState::$variant(s) => s.history(),)+ $(AnyState::$ext(s) => s.history(),)* }
            }
            fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
                match self { $(AnyState::$variant(s) => s.write_tensor(player, out),)+ $(AnyState::$ext(s) => s.write_tensor(player, out),)* }
            }
            fn write_legal_actions(&self, out: &mut Vec<ActionId>) {
                match self { $(AnyState::$variant(s) => s.write_legal_actions(out),)+ $(AnyState::$ext(s) => s.write_legal_actions(out),)* }
            }
            fn write_chance_outcomes(&self, out: &mut Vec<(ActionId, f64)>) {
                match self { $(AnyState::$variant(s) => s.write_chance_outcomes(out),)+ $(AnyState::$ext(s) => s.write_chance_outcomes(out),)* }
            }
            fn write_returns(&self, out: &mut Vec<f64>) {
                match self { $(AnyState::$variant(s) => s.write_returns(out),)+ $(AnyState::$ext(s) => s.write_returns(out),)* }
            }
            fn write_information_state_string(&self, player: PlayerId, out: &mut String) {
                match self { $(AnyState::$variant(s) => s.write_information_state_string(player, out),)+ $(AnyState::$ext(s) => s.write_information_state_string(player, out),)* }
            }
        }
    };
}

registry! {
    Kuhn(KuhnPoker),
    Leduc(LeducPoker),
    Matrix(MatrixGame),
    LiarsDice(crate::liars_dice::LiarsDice),
    Goofspiel(crate::goofspiel::Goofspiel),
    TicTacToe(crate::tic_tac_toe::TicTacToe),
    TeamRps(crate::team_rps::TeamRps),
    ConnectFour(crate::connect_four::ConnectFour),
    ;
    External(crate::external::ExternalGame),
}

type Builder = fn(&GameInfo, &Params) -> Result<AnyGame>;

fn build<G: Registered + Into<AnyGame>>(info: &GameInfo, params: &Params) -> Result<AnyGame> {
    G::from_params(info, params).map(Into::into)
}

/// Every registered game, in registration order.
///
/// # Examples
///
/// ```
/// use metagame_games::registry;
/// let kuhn = registry::games().find(|g| g.name == "kuhn_poker").unwrap();
/// assert_eq!(kuhn.params[0].name, "players");
/// assert_eq!(kuhn.params[0].default, 2);
/// ```
pub fn games() -> impl Iterator<Item = &'static GameInfo> {
    FAMILIES.iter().flat_map(|(family, _)| family.iter())
}

/// The names [`load`] knows.
pub fn game_names() -> Vec<&'static str> {
    games().map(|g| g.name).collect()
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
    let (name, given) = parse_spec(spec)?;
    for (family, build) in FAMILIES {
        if let Some(info) = family.iter().find(|g| g.name == name) {
            let params = check_params(spec, info, &given)?;
            return build(info, &params);
        }
    }
    Err(Error::UnknownGame { name, known: game_names().join(", ") })
}

impl AnyGame {
    /// A normal-form game played as a one-shot game.
    pub fn from_normal_form(name: impl Into<String>, game: NormalFormGame) -> Self {
        AnyGame::Matrix(MatrixGame::new(name, game))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{MATRIX_GAMES, named_matrix_game};

    #[test]
    fn names_are_unique_and_defaults_lie_in_their_ranges() {
        let names = game_names();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        for g in games() {
            for p in g.params {
                assert!(p.accepts(p.default), "{} {}", g.name, p.name);
            }
        }
    }

    #[test]
    fn every_spec_loads_and_its_name_loads_the_same_game() {
        for spec in games().flat_map(GameInfo::specs) {
            let game = load(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(game.name(), spec);
            assert_eq!(load(&game.name()).unwrap().name(), spec);
        }
        assert_eq!(load("kuhn_poker(players=2)").unwrap().name(), "kuhn_poker");
    }

    #[test]
    fn the_matrix_family_is_the_named_matrix_games() {
        let registered: Vec<&str> = MatrixGame::GAMES.iter().map(|g| g.name).collect();
        assert_eq!(registered, MATRIX_GAMES);
        for name in MATRIX_GAMES {
            assert!(named_matrix_game(name).unwrap().is_ok(), "{name}");
            assert!(matches!(load(name).unwrap(), AnyGame::Matrix(_)));
        }
    }

    #[test]
    fn bad_game_strings_keep_their_messages() {
        let err = |spec: &str| load(spec).unwrap_err().to_string();
        assert_eq!(
            err("kuhn_poker(cards=3)"),
            "bad game string `kuhn_poker(cards=3)`: unknown parameter `cards`; known parameters: players"
        );
        assert_eq!(
            err("kuhn_poker(players=x)"),
            "bad game string `kuhn_poker(players=x)`: players must be an integer, got `x`"
        );
        assert_eq!(
            err("leduc_poker(players=11)"),
            "bad game string `leduc_poker(players=11)`: players must be in 2..=10, got 11"
        );
        assert_eq!(
            err("matrix_rps(size=3)"),
            "bad game string `matrix_rps(size=3)`: `matrix_rps` takes no parameters, got `size`"
        );
        assert!(
            err("chess")
                .starts_with("unknown game `chess`; known games: kuhn_poker, leduc_poker, matrix_rps")
        );
        assert!(matches!(load("kuhn_poker(players=3"), Err(Error::BadGameSpec { .. })));
        assert!(matches!(load("kuhn_poker(players=3,players=4)"), Err(Error::BadGameSpec { .. })));
    }
}
