//! The vocabulary a game file uses to describe itself to the registry: [`Registered`],
//! [`GameInfo`], [`ParamInfo`], [`Params`] and [`Conformance`].
//!
//! It lives apart from [`crate::registry`] (which re-exports it, so `registry::GameInfo` and
//! the rest keep their paths) so that the game files depend on this vocabulary and the
//! registry depends on the game files, never the other way round.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use crate::error::{Error, Result};
use crate::game::Game;

/// A game type the registry can build from a game string; each game file implements it.
pub trait Registered: Game + Sized {
    /// The games this type provides: one for most types, several for a family such as the
    /// named matrix games. Names are unique across the registry.
    const GAMES: &'static [GameInfo];

    /// Build the game `info` (one of [`Registered::GAMES`]) with `params`, which the registry
    /// has already checked against `info.params` (unknown names, integers, ranges, choices) and
    /// completed with the defaults.
    ///
    /// # Errors
    ///
    /// Whatever the game finds wrong beyond the declared ranges.
    fn from_params(info: &GameInfo, params: &Params) -> Result<Self>;
}

/// A registered game: what `metagame games` lists and what [`load`](crate::registry::load)
/// checks a game string against.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GameInfo {
    /// The name in game strings (`kuhn_poker`), as in OpenSpiel.
    pub name: &'static str,
    /// One line saying what the game is.
    pub about: &'static str,
    /// The parameters the game takes, in the order its game string prints them.
    pub params: &'static [ParamInfo],
    /// Parameter sets besides the defaults that the conformance test also runs, each the text
    /// between the parentheses of a game string (`"players=3"`).
    pub examples: &'static [&'static str],
    /// How much of the conformance check the registry's test runs on this game.
    pub conformance: Conformance,
}

/// One parameter of a registered game. Its value is a `usize` whatever its [`ParamKind`]: the
/// integer, 0 or 1 for a boolean, the index of a choice.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ParamInfo {
    /// The key in game strings (`players`), as in OpenSpiel.
    pub name: &'static str,
    /// One line saying what it sets.
    pub about: &'static str,
    /// The value when the game string does not give one.
    pub default: usize,
    /// The values accepted and how game strings write them.
    pub kind: ParamKind,
}

/// The values a [`ParamInfo`] accepts, written in game strings as OpenSpiel writes them
/// (`open_spiel/game_parameters.cc`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ParamKind {
    /// An integer in this range.
    Integer(RangeInclusive<usize>),
    /// `True` (value 1) or `False` (0); `true` and `false` are read too, as OpenSpiel does.
    Bool,
    /// One of these names (`points_order=descending`); the value is its index.
    Choice(&'static [&'static str]),
}

impl ParamInfo {
    /// Whether `value` is one this parameter takes.
    pub fn accepts(&self, value: usize) -> bool {
        match &self.kind {
            ParamKind::Integer(range) => range.contains(&value),
            ParamKind::Bool => value <= 1,
            ParamKind::Choice(names) => value < names.len(),
        }
    }

    /// `value` as a game string writes it: `4`, `True`, `descending`.
    ///
    /// # Panics
    ///
    /// If this parameter does not take `value` ([`ParamInfo::accepts`]).
    #[track_caller]
    pub fn format(&self, value: usize) -> String {
        assert!(self.accepts(value), "{} does not take the value {value}", self.name);
        match &self.kind {
            ParamKind::Integer(_) => value.to_string(),
            ParamKind::Bool => if value == 1 { "True" } else { "False" }.to_string(),
            ParamKind::Choice(names) => names[value].to_string(),
        }
    }

    /// The values accepted, as `metagame games` lists them: `2..=10`, `True|False`,
    /// `random|descending|ascending`.
    pub fn accepted(&self) -> String {
        match &self.kind {
            ParamKind::Integer(range) => format!("{}..={}", range.start(), range.end()),
            ParamKind::Bool => "True|False".to_string(),
            ParamKind::Choice(names) => names.join("|"),
        }
    }

    /// Read a value from a game string; the error is the reason, without the game string.
    fn parse(&self, text: &str) -> std::result::Result<usize, String> {
        match &self.kind {
            ParamKind::Integer(range) => {
                let n: usize =
                    text.parse().map_err(|_| format!("{} must be an integer, got `{text}`", self.name))?;
                if !range.contains(&n) {
                    return Err(format!(
                        "{} must be in {}..={}, got {n}",
                        self.name,
                        range.start(),
                        range.end()
                    ));
                }
                Ok(n)
            }
            ParamKind::Bool => match text {
                "True" | "true" => Ok(1),
                "False" | "false" => Ok(0),
                _ => Err(format!("{} must be True or False, got `{text}`", self.name)),
            },
            ParamKind::Choice(names) => names
                .iter()
                .position(|n| *n == text)
                .ok_or_else(|| format!("{} must be one of {}, got `{text}`", self.name, names.join(", "))),
        }
    }
}

/// How much of `testing::check_game` the registry's conformance test runs on a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conformance {
    /// Random playouts and the whole tree, on the defaults and on every example.
    Full,
    /// The whole check on every example, random playouts only on the defaults, whose tree
    /// does not fit the test budget; the text says why.
    ExampleTrees(&'static str),
    /// Random playouts only, for a game whose tree does not fit the test budget; the text
    /// says why.
    PlayoutsOnly(&'static str),
}

impl Conformance {
    /// Whether the conformance test builds the whole tree of the defaults (`defaults`) or of
    /// an example (`!defaults`).
    pub fn builds_tree(self, defaults: bool) -> bool {
        match self {
            Conformance::Full => true,
            Conformance::ExampleTrees(_) => !defaults,
            Conformance::PlayoutsOnly(_) => false,
        }
    }
}

impl GameInfo {
    /// The game string for these parameter values (in [`GameInfo::params`] order): the bare
    /// name when every value is its default, else `name(key=value,...)` listing those that
    /// differ, so that [`load`](crate::registry::load) reads it back.
    pub fn game_string(&self, values: &[usize]) -> String {
        let set: Vec<String> = self
            .params
            .iter()
            .zip(values)
            .filter(|(p, v)| p.default != **v)
            .map(|(p, v)| format!("{}={}", p.name, p.format(*v)))
            .collect();
        if set.is_empty() { self.name.to_string() } else { format!("{}({})", self.name, set.join(",")) }
    }

    /// The game strings the conformance test runs: the defaults, then each example.
    pub fn specs(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::once(self.name.to_string())
            .chain(self.examples.iter().map(|e| format!("{}({e})", self.name)))
    }
}

/// A registered game's parameter values, checked against its [`GameInfo::params`] and with
/// the defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    values: Vec<(&'static str, usize)>,
}

impl Params {
    /// The value of parameter `name`: the integer, 0 or 1 for a [`ParamKind::Bool`], the index
    /// of the name for a [`ParamKind::Choice`].
    ///
    /// # Panics
    ///
    /// If the game did not declare `name` in its [`GameInfo::params`]: a bug in the game's
    /// registration, never in the input.
    #[track_caller]
    pub fn value(&self, name: &str) -> usize {
        match self.values.iter().find(|(k, _)| *k == name) {
            Some(&(_, v)) => v,
            None => panic!("parameter `{name}` is not declared by the game"),
        }
    }
}

/// Check the given parameters against `info.params` and fill in the defaults.
pub(crate) fn check_params(spec: &str, info: &GameInfo, given: &BTreeMap<String, String>) -> Result<Params> {
    let bad = |reason: String| Error::BadGameSpec { spec: spec.into(), reason };
    if let Some(k) = given.keys().find(|k| !info.params.iter().any(|p| p.name == k.as_str())) {
        if info.params.is_empty() {
            return Err(bad(format!("`{}` takes no parameters, got `{k}`", info.name)));
        }
        let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
        return Err(bad(format!("unknown parameter `{k}`; known parameters: {}", known.join(", "))));
    }
    let mut values = Vec::with_capacity(info.params.len());
    for p in info.params {
        let value = match given.get(p.name) {
            None => p.default,
            Some(v) => p.parse(v).map_err(bad)?,
        };
        values.push((p.name, value));
    }
    Ok(Params { values })
}
