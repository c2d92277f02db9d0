//! What a loop's unit is to the umbrella: its config section ([`LoopSection`]) and what
//! the section drives its loop with ([`Drive`], the run folder's driver). The units in this
//! folder implement the one and use the other; `mod.rs` lists them.

use std::fmt::Debug;
use std::path::Path;

use metagame_populations::{Cutoff, IterationReport, Oracle, TrainingLoop};
use serde::de::DeserializeOwned;
use toml::Table;

use crate::components::Components;
use crate::error::Result;
use crate::fields::FieldError;
use metagame_games::Arena;

/// What a unit drives its loop with (the run folder's driver): the saved state when the run
/// resumes, then the run itself. A trait, so that the units need not know the driver.
pub(crate) trait Drive {
    /// What a run ends with.
    type Output;

    /// The saved loop state and the run's reports when resuming (`None` when starting
    /// afresh); the loop's `resume` checks the state against the reports.
    ///
    /// # Errors
    ///
    /// A saved state that is not a state of this loop.
    fn saved_state<S: DeserializeOwned>(&mut self) -> Result<Option<(S, Vec<IterationReport>)>>;

    /// The bytes of a member's file (a path relative to the run folder, as the checkpoint names
    /// it), to load a member that is not a table when the run resumes.
    ///
    /// # Errors
    ///
    /// [`Error::Checkpoint`](crate::Error::Checkpoint) for a file that is missing or cannot
    /// be read.
    fn member_file(&self, file: &str) -> Result<Vec<u8>>;

    /// The run folder, where the loop's [`member_files`](metagame_populations::TrainingLoop::member_files)
    /// are written (a league reads its network snapshots back from it).
    fn run_folder(&self) -> &std::path::Path;

    /// When the construction of a fresh loop should give up, for loops whose iteration 0 is
    /// long work (PSRO's initial entry of many sampled episodes): the end of the time
    /// budget counted from now, else never.
    fn start_cutoff(&self) -> Cutoff;

    /// End the run before iteration 0 was committed, the construction having been cut by
    /// [`start_cutoff`](Drive::start_cutoff): the run folder holds the config and a report
    /// without iterations (no checkpoint, so that `--resume` starts it again).
    ///
    /// # Errors
    ///
    /// I/O errors.
    fn cut_before_start(self) -> Result<Self::Output>;

    /// Run `lp` to a stop and write the run folder; `figures(loop, reports, game, folder)`
    /// writes the loop's own figures after the common ones (also when the folder's report
    /// is refreshed during a long run).
    ///
    /// # Errors
    ///
    /// The loop's, the figures' and I/O errors.
    fn run_with_figures<L: TrainingLoop>(
        self,
        lp: L,
        figures: impl Fn(&L, &[IterationReport], &str, &Path) -> Result<()>,
    ) -> Result<Self::Output>;

    /// [`Drive::run_with_figures`] for a loop with no figures of its own.
    ///
    /// # Errors
    ///
    /// As [`Drive::run_with_figures`].
    fn run<L: TrainingLoop>(self, lp: L) -> Result<Self::Output>
    where
        Self: Sized,
    {
        self.run_with_figures(lp, |_, _, _, _| Ok(()))
    }
}

/// One loop's config section, and through it everything the umbrella knows about the loop.
/// A section value is always valid: it exists only by [`parse`](LoopSection::parse).
pub(crate) trait LoopSection: Clone + Debug + PartialEq + Sized {
    /// The name configs and the CLI use (`algorithm = "psro"`).
    const NAME: &'static str;
    /// The loop as papers write it ("PSRO", "Double Oracle").
    const TITLE: &'static str;
    /// One line on what it does, for `--help` and the docs.
    const ABOUT: &'static str;
    /// The annotated example config (`examples/config/<name>.toml`, `metagame config
    /// --example <name>`): every field the section reads, with its default and range.
    const EXAMPLE: &'static str;
    /// The files a run folder of this loop holds when its example runs to the end with the
    /// default features (the README's table of run folders lists them; a test checks both).
    const FILES: &'static [&'static str];

    /// The fields the section reads, besides `game`, `algorithm` and the run limits.
    fn fields() -> Vec<&'static str>;

    /// The section from a config's fields (only names among [`fields`](LoopSection::fields)
    /// reach it; the run limits are read by the config).
    ///
    /// # Errors
    ///
    /// A message naming the field: values out of range, unknown component names, fields one
    /// of the section's components does not read.
    fn parse(table: &Table) -> Result<Self, FieldError>;

    /// The section's fields, defaults written out, into `table` (the TOML round trip:
    /// [`parse`](LoopSection::parse) of the result gives the section back).
    fn write(&self, table: &mut Table);

    /// The title of the run's figures and pages, e.g. `PSRO (nash, exact-br)`.
    fn figure_title(&self) -> String {
        Self::TITLE.into()
    }

    /// The number of players the loop takes (`None`: any), checked against the game before
    /// its tree is built, so that a game the loop refuses costs no time.
    const PLAYERS: Option<usize> = None;

    /// True when the loop plays a team game's teams as teams (FXP); the others treat every
    /// player alone, so a team game is refused before they start.
    const PLAYS_TEAMS: bool = false;

    /// True when the loop asks an oracle for its responses, so that a given one
    /// ([`Components::oracle`]) is used; loops that train their own agents do not.
    const USES_ORACLE: bool = false;

    /// The oracle the section names, built, for the loops that ask one (so that it can also
    /// answer requests elsewhere: a Ray task of `metagame.distributed`).
    ///
    /// # Errors
    ///
    /// A learned oracle's settings that do not build.
    fn oracle(&self) -> Result<Option<Box<dyn Oracle>>> {
        Ok(None)
    }

    /// Build the loop (new, or from the driver's saved state) and drive it.
    ///
    /// # Errors
    ///
    /// Component, game, checkpoint and I/O errors.
    fn run<D: Drive>(&self, arena: Arena<'_>, driver: D, components: Components) -> Result<D::Output>;

    /// True when the loop needs the game's tree (the tabular loops); false for a loop that
    /// also runs on games too large to enumerate (PSRO, whose payoffs are then rollouts and
    /// whose NashConv is then left out).
    const NEEDS_TREE: bool = true;
}
