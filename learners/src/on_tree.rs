//! `OnTree`: a network learner on a game tree, so that leagues and `metagame respond`, which
//! train [`Learner`]s on trees, train networks too.

use std::sync::Arc;

use metagame_games::{Arena, Cutoff, GameTree, InfosetId, PlayerId, Policy, SeatMixture, TabularPolicy};

use crate::episodes::OpponentSampler;
use crate::error::Result;
use crate::learner::{Learner, ShapedLearner, TrainingStats};
use crate::learner_config::SeatLearner;
use crate::network_learner::NetworkLearner;
use crate::saved_learner::SavedLearner;
use crate::shaping::MinimaxShaping;
use crate::values::ValueTable;

/// A network learner on a game tree, as leagues and tabular PSRO train one: episodes on the
/// tree's nodes against the opponents' tables, the network tabulated over the tree as its
/// policy (the seat's rows; the others uniform) and its values read at the seat's
/// information sets, both kept up to date after each training call.
#[derive(Debug)]
pub struct OnTree {
    learner: Box<dyn NetworkLearner>,
    view: Arc<(TabularPolicy, ValueTable)>,
}

impl Clone for OnTree {
    fn clone(&self) -> Self {
        Self { learner: self.learner.clone_box(), view: Arc::clone(&self.view) }
    }
}

impl OnTree {
    /// `learner` on `tree`.
    ///
    /// # Errors
    ///
    /// A network that does not fit the tree's tensors and actions.
    pub fn new(tree: &GameTree, learner: Box<dyn NetworkLearner>) -> Result<Self> {
        let view = Arc::new(view(tree, &*learner)?);
        Ok(Self { learner, view })
    }

    /// The learner on any game.
    pub fn network(&self) -> &dyn NetworkLearner {
        &*self.learner
    }

    /// Everything it learned, as saved.
    pub fn save(&self) -> SavedLearner {
        self.learner.save()
    }
}

/// The learner's policy network tabulated over `tree` (its seat's rows; the others uniform)
/// and its values at the seat's information sets.
fn view(tree: &GameTree, learner: &dyn NetworkLearner) -> Result<(TabularPolicy, ValueTable)> {
    let tabulated = TabularPolicy::tabulate(tree, &learner.network()?)?;
    let mut policy = TabularPolicy::uniform(tree);
    for i in tree.infosets_of(PlayerId(learner.seat())) {
        policy.row_mut(InfosetId(i)).copy_from_slice(tabulated.row(InfosetId(i)));
    }
    Ok((policy, learner.values_on(tree)?))
}

impl Learner for OnTree {
    fn name(&self) -> &'static str {
        self.learner.name()
    }
    fn seat(&self) -> usize {
        self.learner.seat()
    }
    fn train_until(
        &mut self,
        tree: &GameTree,
        opponents: &OpponentSampler<'_>,
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()> {
        let mixtures = opponents.mixtures(tree, self.learner.seat())?;
        let seats: Vec<SeatMixture<'_>> = mixtures
            .iter()
            .map(|(seat, members)| SeatMixture {
                seat: *seat,
                members: members.iter().map(|&(p, w)| (p as &dyn Policy, w)).collect(),
            })
            .collect();
        let trained = self.learner.train_in(Arena::tree(tree), &seats, episodes, cutoff);
        // Whatever was trained (a cut training keeps its updates), the view follows it.
        self.view = Arc::new(view(tree, &*self.learner)?);
        trained
    }
    fn policy(&self) -> TabularPolicy {
        self.view.0.clone()
    }
    fn values(&self) -> ValueTable {
        self.view.1.clone()
    }
    fn stats(&self) -> &TrainingStats {
        self.learner.stats()
    }
}

impl ShapedLearner for OnTree {
    /// A network learner's rewards are the game's: its settings have no shaping, so nothing
    /// sets one.
    fn set_reward_shaping(&mut self, _: Option<MinimaxShaping>) {}
}

impl SeatLearner for OnTree {
    fn clone_box(&self) -> Box<dyn SeatLearner> {
        Box::new(self.clone())
    }
    fn save(&self) -> SavedLearner {
        self.learner.save()
    }
}
