//! One unit per training loop: everything the umbrella knows about a loop (its config
//! section and fields, the section's TOML round trip, its annotated example, its names, how
//! it is built new and from a checkpoint, its own figures) lives in its file here, and
//! [`loops!`] below names every loop once. From that one list come the [`Algorithm`] names,
//! the tagged [`AlgorithmConfig`] enum and every dispatch on it; the driver, the config
//! reader, the CLI and the tests never match on which loop they run.
//!
//! Adding a loop: its `TrainingLoop` in `populations/src/loops/`, a file here with a section
//! type implementing [`LoopSection`], its annotated example in `examples/config/`, and one
//! line in the list (which declares the file's module too).

mod section;

pub(crate) use section::{Drive, LoopSection};

use metagame_games::Arena;
use metagame_populations::Oracle;
use toml::Table;

use crate::components::Components;
use crate::error::Result;
use crate::fields::FieldError;

/// The list of loops: `Variant(module::SectionType)`, one line each. It declares each unit's
/// module and generates [`Algorithm`] and [`AlgorithmConfig`] with their dispatch.
macro_rules! loops {
    ($($variant:ident($module:ident::$section:ident)),* $(,)?) => {
        $(
            mod $module;
            pub use $module::$section;
        )*

        /// Which training loop to run: one per registered loop.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Algorithm {
            $(
                #[doc = concat!("`", stringify!($variant), "`: see [`", stringify!($section), "`].")]
                $variant,
            )*
        }

        impl Algorithm {
            /// Every registered loop, in the list's order.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant),*];

            /// The name configs use.
            pub fn as_str(self) -> &'static str {
                match self { $(Algorithm::$variant => <$section as LoopSection>::NAME,)* }
            }
            /// The loop as papers write it.
            pub fn title(self) -> &'static str {
                match self { $(Algorithm::$variant => <$section as LoopSection>::TITLE,)* }
            }
            /// One line on what it does.
            pub fn about(self) -> &'static str {
                match self { $(Algorithm::$variant => <$section as LoopSection>::ABOUT,)* }
            }
            /// Its annotated example config.
            pub fn example(self) -> &'static str {
                match self { $(Algorithm::$variant => <$section as LoopSection>::EXAMPLE,)* }
            }
            /// The files its run folder holds (with the default features).
            pub fn files(self) -> &'static [&'static str] {
                match self { $(Algorithm::$variant => <$section as LoopSection>::FILES,)* }
            }
            /// The number of players it takes (`None`: any).
            pub fn players(self) -> Option<usize> {
                match self { $(Algorithm::$variant => <$section as LoopSection>::PLAYERS,)* }
            }
            /// True when it plays a team game's teams as teams.
            pub fn plays_teams(self) -> bool {
                match self { $(Algorithm::$variant => <$section as LoopSection>::PLAYS_TEAMS,)* }
            }
            /// True when it needs the game's tree (false: it also runs on games too large to
            /// enumerate).
            pub fn needs_tree(self) -> bool {
                match self { $(Algorithm::$variant => <$section as LoopSection>::NEEDS_TREE,)* }
            }
            /// True when it asks an oracle for its responses (so a given oracle is used).
            pub fn uses_oracle(self) -> bool {
                match self { $(Algorithm::$variant => <$section as LoopSection>::USES_ORACLE,)* }
            }
            /// The fields its section reads (besides `game`, `algorithm` and the run limits).
            pub fn fields(self) -> Vec<&'static str> {
                match self { $(Algorithm::$variant => <$section as LoopSection>::fields(),)* }
            }
            /// The loop called `name`.
            pub fn from_name(name: &str) -> Option<Algorithm> {
                Self::ALL.iter().copied().find(|a| a.as_str() == name)
            }
        }

        /// The chosen loop with its section (a tagged enum: `algorithm` names the variant, and
        /// only the variant's fields may appear beside it).
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum AlgorithmConfig {
            $(
                #[doc = concat!("[`", stringify!($section), "`].")]
                $variant($section),
            )*
        }

        impl AlgorithmConfig {
            /// Which loop.
            pub fn algorithm(&self) -> Algorithm {
                match self { $(AlgorithmConfig::$variant(_) => Algorithm::$variant,)* }
            }
            /// The title of the run's figures and pages.
            pub fn figure_title(&self) -> String {
                match self { $(AlgorithmConfig::$variant(s) => s.figure_title(),)* }
            }
            pub(crate) fn parse(algorithm: Algorithm, table: &Table) -> Result<Self, FieldError> {
                match algorithm {
                    $(Algorithm::$variant => <$section as LoopSection>::parse(table).map(AlgorithmConfig::$variant),)*
                }
            }
            /// The oracle the section names, built (`None` for loops that ask no oracle).
            ///
            /// # Errors
            ///
            /// A learned oracle's settings that do not build.
            pub fn oracle(&self) -> Result<Option<Box<dyn Oracle>>> {
                match self { $(AlgorithmConfig::$variant(s) => s.oracle(),)* }
            }
            pub(crate) fn write(&self, table: &mut Table) {
                match self { $(AlgorithmConfig::$variant(s) => s.write(table),)* }
            }
            pub(crate) fn run<D: Drive>(
                &self,
                arena: Arena<'_>,
                driver: D,
                components: Components,
            ) -> Result<D::Output> {
                match self { $(AlgorithmConfig::$variant(s) => s.run(arena, driver, components),)* }
            }
        }
    };
}

loops! {
    Psro(psro::PsroSection),
    Xfp(xfp::XfpSection),
    DoubleOracle(double_oracle::DoubleOracleSection),
    League(league::LeagueSection),
    Fxp(fxp::FxpSection),
    Cfr(cfr::CfrSection),
    Mccfr(mccfr::MccfrSection),
}
