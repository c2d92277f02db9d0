//! `NetworkLearner`: a learner that trains a network on any game, through its tensors and a
//! vectorised environment ([`VecEnv`](metagame_games::VecEnv)), the game's tree not needed;
//! its answer is the network as a frozen member ([`Mlp`]).

use std::sync::Arc;

use metagame_games::{Arena, Cutoff, GameTree, InfosetId, PlayerId, Policy, SeatMixture, TabularPolicy};
use metagame_networks::Mlp;

use crate::episodes::OpponentSampler;
use crate::error::Result;
use crate::learner::{Learner, ShapedLearner, TrainingStats};
use crate::learner_config::{SavedLearner, SeatLearner};
use crate::shaping::MinimaxShaping;
use crate::values::ValueTable;

/// Trains one seat's network from batched episodes against opponents of any kind.
pub trait NetworkLearner: Send + Sync + std::fmt::Debug {
    /// The learner's registered name (`ppo`).
    fn name(&self) -> &'static str;

    /// The seat it learns to play.
    fn seat(&self) -> usize;

    /// Train on `episodes` more episodes of the arena's game against `opponents` (one
    /// mixture per other seat, a policy drawn per seat and episode), checking `cutoff`
    /// between updates. Episode numbers continue from earlier calls.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroBudget`](crate::Error::ZeroBudget); a game without tensors or whose
    /// tensors or actions do not fit the network ([`Error::Network`](crate::Error::Network));
    /// opponents that do not fit the game or fail; [`Error::Diverged`](crate::Error::Diverged)
    /// when a loss or weight is no longer finite (the learner keeps its last finite
    /// weights); [`Error::CutOff`](crate::Error::CutOff).
    fn train_in(
        &mut self,
        arena: Arena<'_>,
        opponents: &[SeatMixture<'_>],
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()>;

    /// The policy network as a frozen member.
    ///
    /// # Errors
    ///
    /// [`Error::Network`](crate::Error::Network) if the weights cannot make one.
    fn network(&self) -> Result<Mlp>;

    /// Training statistics so far.
    fn stats(&self) -> &TrainingStats;

    /// Its value estimates at the seat's information sets of `tree` (a critic of state
    /// values gives each legal action its state's value).
    ///
    /// # Errors
    ///
    /// A tree whose tensors do not fit the networks.
    fn values_on(&self, tree: &GameTree) -> Result<ValueTable>;

    /// Everything training has changed, tagged with the learner's registered name.
    fn save(&self) -> SavedLearner;

    /// A copy.
    fn clone_box(&self) -> Box<dyn NetworkLearner>;
}

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
        let mlp = learner.network()?;
        let tabulated = TabularPolicy::tabulate(tree, &mlp)?;
        let mut policy = TabularPolicy::uniform(tree);
        for i in tree.infosets_of(PlayerId(learner.seat())) {
            policy.row_mut(InfosetId(i)).copy_from_slice(tabulated.row(InfosetId(i)));
        }
        let values = learner.values_on(tree)?;
        Ok(Self { learner, view: Arc::new((policy, values)) })
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
        *self = Self::new(tree, self.learner.clone_box())?;
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

/// The index of the action drawn by `u` from `probs` over the legal actions.
pub(crate) fn sample(probs: &[f32], legal: &[bool], u: f64) -> usize {
    let mut acc = 0.0f64;
    let mut last = 0;
    for (k, (&p, &l)) in probs.iter().zip(legal).enumerate() {
        if !l {
            continue;
        }
        last = k;
        acc += f64::from(p);
        if u < acc {
            return k;
        }
    }
    last
}
