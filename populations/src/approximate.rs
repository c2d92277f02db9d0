//! Approximate exploitability (Timbers et al., "Approximate Exploitability: Learning a Best
//! Response", IJCAI 2022): for a profile on a game whose tree is too big to walk, train a
//! fresh best response per seat against the frozen profile within a budget, then play
//! evaluation episodes. A trained response is at most a best response, so the estimate is
//! a lower bound on the NashConv up to its sampling error.

use std::sync::Arc;
use std::time::Instant;

use metagame_games::{Arena, Cutoff, MixedMatchup, Policy, RolloutEvaluator, SeatMixture};
use metagame_learners::LearnerChoice;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::trained_response::learner_error;

/// The seed purposes of the responses' training and of the evaluation episodes.
const TRAINING: u32 = u32::from_be_bytes(*b"axtr");
const EVALUATION: u32 = u32::from_be_bytes(*b"axev");
/// The seed purpose of the episodes that choose how each response is played.
const SELECTION: u32 = u32::from_be_bytes(*b"axse");

/// What an approximate NashConv measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ApproximateNashConv {
    /// Σ over seats of (the trained response's mean return − the profile's own value): a
    /// lower bound on the NashConv up to sampling error.
    pub nash_conv_estimate: f64,
    /// Its standard error.
    pub stderr: f64,
    /// Evaluation episodes per seat (each seat's response against the profile; the
    /// profile's own value from as many again unless the game is constant-sum).
    pub episodes: u64,
    /// Selection episodes per seat and way of playing, before the evaluation (a quarter of
    /// `episodes`; none for a learner whose network is played greedily anyway).
    pub selection_episodes: u64,
    /// Per seat: whether its response is played greedily (the most probable legal action)
    /// rather than by sampling its policy, whichever did better in the selection episodes.
    pub greedy: Vec<bool>,
    /// Training episodes per seat's response.
    pub training_episodes: u64,
    /// The learner that trained the responses.
    pub learner: String,
    /// Per seat: the trained response's mean return against the others' mixtures.
    pub response_values: Vec<f64>,
    /// Per seat: the profile's own mean return (exactly the game's constant sum split when it
    /// has one; else sampled).
    pub profile_values: Vec<f64>,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// The approximate NashConv of the profile `seats` (one mixture per seat, every seat) on
/// `arena`'s game: per seat a fresh response trained by `learner` (a network learner, on the
/// game's tensors) for `training_episodes` episodes against the others, then `episodes`
/// evaluation episodes of it against them. Keyed by `seed`; `cutoff` is checked between the
/// learners' updates and the evaluations' chunks.
///
/// # Errors
///
/// [`Error::Config`] for a budget of 0 or above the episode cap, for a tabular learner, or
/// for a profile that does not give every seat a mixture; learner errors (a game without
/// tensors, a diverging learner) and policy failures.
pub fn approximate_nash_conv(
    arena: Arena<'_>,
    seats: &[SeatMixture<'_>],
    learner: &LearnerChoice,
    training_episodes: u64,
    episodes: u64,
    seed: u64,
    cutoff: &Cutoff,
) -> Result<ApproximateNashConv> {
    let started = Instant::now();
    let np = arena.num_players();
    for (what, n) in [("training episodes", training_episodes), ("evaluation episodes", episodes)] {
        if n == 0 || n > metagame_games::MAX_EPISODES {
            return Err(Error::Config(format!(
                "{what}: must be in 1..={}, got {n}",
                metagame_games::MAX_EPISODES
            )));
        }
    }
    if seats.len() != np || seats.iter().enumerate().any(|(i, s)| s.seat != i) {
        return Err(Error::Config(format!(
            "a profile of {np} seats gives each seat one mixture, in seat order"
        )));
    }
    // Every policy once: the profile's, then the responses'.
    let mut policies: Vec<&dyn Policy> = Vec::new();
    let mut profile: Vec<Vec<(usize, f64)>> = Vec::with_capacity(np);
    for s in seats {
        profile.push(s.members.iter().map(|&(p, w)| (push(&mut policies, p), w)).collect());
    }
    // Per seat: the trained network played greedily, and as trained where that differs.
    let mut candidates: Vec<Vec<Arc<dyn Policy>>> = Vec::with_capacity(np);
    for seat in 0..np {
        let others: Vec<SeatMixture<'_>> = seats.iter().filter(|s| s.seat != seat).cloned().collect();
        let key = metagame_games::philox::derive_seed(seed, TRAINING, &[seat as u64]);
        let mut trainer = match learner.config().build_network(arena, seat, key, None) {
            Some(built) => built.map_err(learner_error)?,
            None => {
                return Err(Error::Config(format!(
                    "approximate exploitability trains a network; `{}` is a tabular learner (use ppo)",
                    learner.name()
                )));
            }
        };
        trainer.train_in(arena, &others, training_episodes, cutoff).map_err(learner_error)?;
        // A policy network still spreading probability over its actions gives up value
        // against a frozen profile (on Leduc's PSRO mixtures, at step size 1e-3, greedy play
        // found 2–8 points more of the exact NashConv), but greedy play can also lock onto
        // the wrong one of two near-equal actions, so both are tried; any policy's value is
        // at most the best response's, so either keeps the estimate a lower bound.
        let network = trainer.network().map_err(learner_error)?;
        let mut ways: Vec<Arc<dyn Policy>> =
            vec![Arc::new(network.clone().with_output(metagame_networks::Output::Greedy))];
        if network.output() != metagame_networks::Output::Greedy {
            ways.push(Arc::new(network));
        }
        candidates.push(ways);
    }
    // Choose each seat's way of playing on selection episodes of their own, so that the
    // choice does not bias the evaluation episodes upwards.
    let selection_episodes = if candidates.iter().any(|c| c.len() > 1) { (episodes / 4).max(1) } else { 0 };
    let mut greedy = vec![true; np];
    if selection_episodes > 0 {
        let mut tried: Vec<&dyn Policy> = policies.clone();
        let mut matchups = Vec::new();
        let mut which = Vec::new();
        for (seat, ways) in candidates.iter().enumerate() {
            for (k, way) in ways.iter().enumerate().skip(1).chain(ways.iter().enumerate().take(1)) {
                let mut m = MixedMatchup { seats: profile.clone() };
                m.seats[seat] = vec![(tried.len(), 1.0)];
                tried.push(way.as_ref());
                matchups.push(m);
                which.push((seat, k));
            }
        }
        let key = metagame_games::philox::derive_seed(seed, SELECTION, &[]);
        let totals = RolloutEvaluator::new().evaluate_mixed(
            arena,
            &tried,
            &matchups,
            selection_episodes,
            key,
            cutoff,
        )?;
        let mut best = vec![f64::NEG_INFINITY; np];
        for (&(seat, k), total) in which.iter().zip(&totals) {
            // Greedy comes last per seat and wins ties.
            if total.mean()[seat] >= best[seat] {
                best[seat] = total.mean()[seat];
                greedy[seat] = k == 0;
            }
        }
    }
    let responses: Vec<Arc<dyn Policy>> = candidates
        .into_iter()
        .zip(&greedy)
        .map(|(mut ways, &g)| if g { ways.swap_remove(0) } else { ways.swap_remove(1) })
        .collect();
    let first_response = policies.len();
    policies.extend(responses.iter().map(|r| r.as_ref() as &dyn Policy));
    // Seat i: its response against the others' mixtures; and the profile against itself.
    let mut matchups: Vec<MixedMatchup> = (0..np)
        .map(|i| {
            let mut m = MixedMatchup { seats: profile.clone() };
            m.seats[i] = vec![(first_response + i, 1.0)];
            m
        })
        .collect();
    let constant_sum = arena
        .game_rules()
        .and_then(metagame_games::Game::utility_sum)
        .or_else(|| arena.game_tree().and_then(metagame_games::GameTree::utility_sum));
    if constant_sum.is_none() {
        matchups.push(MixedMatchup { seats: profile.clone() });
    }
    let key = metagame_games::philox::derive_seed(seed, EVALUATION, &[]);
    let totals =
        RolloutEvaluator::new().evaluate_mixed(arena, &policies, &matchups, episodes, key, cutoff)?;
    let response_values: Vec<f64> = (0..np).map(|i| totals[i].mean()[i]).collect();
    let mut variance: f64 = (0..np).map(|i| totals[i].stderr()[i].powi(2)).sum();
    let profile_values = match constant_sum {
        Some(sum) => vec![sum / np as f64; np],
        None => {
            let own = &totals[np];
            // The profile's total return: its variance from the per-seat sums' covariance is
            // not kept, so bound it by the sum of standard errors (conservative).
            let se: f64 = own.stderr().iter().sum();
            variance += se * se;
            own.mean()
        }
    };
    let nash_conv_estimate = response_values.iter().sum::<f64>() - profile_values.iter().sum::<f64>();
    Ok(ApproximateNashConv {
        nash_conv_estimate,
        stderr: variance.sqrt(),
        episodes,
        selection_episodes,
        greedy,
        training_episodes,
        learner: learner.name().to_string(),
        response_values,
        profile_values,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// When and how a loop estimates its profile's NashConv by trained best responses: the
/// `approximate_*` fields of PSRO. Always valid (built by [`EstimateSettings::new`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EstimateSettings {
    every: u64,
    budget: u64,
    episodes: u64,
    learner: &'static str,
}

impl EstimateSettings {
    /// Default evaluation episodes per seat (the CLI's `--episodes`).
    pub const DEFAULT_EPISODES: u64 = 20_000;
    /// Default learner.
    pub const DEFAULT_LEARNER: &'static str = "ppo";

    /// Estimates after iteration 0, every `every`-th iteration and the run's last one; each
    /// response trained by `learner` (a network learner, its default settings) for `budget`
    /// episodes (default: the learner's `episodes_per_response`), then `episodes` evaluation
    /// episodes per seat (default [`Self::DEFAULT_EPISODES`]).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for `every` 0, an unknown or tabular learner, or a budget or episode
    /// count of 0 or above the episode cap.
    pub fn new(
        every: u64,
        budget: Option<u64>,
        episodes: Option<u64>,
        learner: Option<&str>,
    ) -> Result<Self> {
        if every == 0 {
            return Err(Error::Config("approximate_every must be at least 1".into()));
        }
        let name = learner.unwrap_or(Self::DEFAULT_LEARNER);
        let choice =
            LearnerChoice::defaults(name).map_err(|e| Error::Config(format!("approximate_learner: {e}")))?;
        if !choice.config().trains_networks() {
            return Err(Error::Config(format!(
                "approximate_learner: `{name}` is a tabular learner; the estimate trains a network (use ppo or dqn)"
            )));
        }
        let budget = budget.unwrap_or_else(|| choice.config().episodes_per_response());
        let episodes = episodes.unwrap_or(Self::DEFAULT_EPISODES);
        for (field, n) in [("approximate_budget", budget), ("approximate_episodes", episodes)] {
            if n == 0 || n > metagame_games::MAX_EPISODES {
                return Err(Error::Config(format!(
                    "{field} must be in 1..={}, got {n}",
                    metagame_games::MAX_EPISODES
                )));
            }
        }
        Ok(Self { every, budget, episodes, learner: choice.name() })
    }

    /// Every how many iterations.
    pub fn every(&self) -> u64 {
        self.every
    }
    /// Training episodes per seat's response.
    pub fn budget(&self) -> u64 {
        self.budget
    }
    /// Evaluation episodes per seat.
    pub fn episodes(&self) -> u64 {
        self.episodes
    }
    /// The learner's name.
    pub fn learner(&self) -> &'static str {
        self.learner
    }

    /// Whether iteration `iteration` is estimated, the run's last being `last` (if known).
    pub fn due(&self, iteration: usize, last: Option<usize>) -> bool {
        (iteration as u64).is_multiple_of(self.every) || last == Some(iteration)
    }

    /// The estimate of the profile `seats`, keyed by `seed` (see [`approximate_nash_conv`]).
    ///
    /// # Errors
    ///
    /// As [`approximate_nash_conv`].
    pub fn estimate(
        &self,
        arena: Arena<'_>,
        seats: &[SeatMixture<'_>],
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<ApproximateNashConv> {
        let learner = LearnerChoice::defaults(self.learner).map_err(learner_error)?;
        approximate_nash_conv(arena, seats, &learner, self.budget, self.episodes, seed, cutoff)
    }
}

/// The index of `p` in `policies`, added if new (by address).
fn push<'a>(policies: &mut Vec<&'a dyn Policy>, p: &'a dyn Policy) -> usize {
    let addr = |q: &dyn Policy| std::ptr::from_ref(q).cast::<u8>();
    match policies.iter().position(|&q| std::ptr::eq(addr(q), addr(p))) {
        Some(i) => i,
        None => {
            policies.push(p);
            policies.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagame_games::{GameTree, TabularPolicy, Uniform, nash_conv_report, registry};

    fn uniform_profile(np: usize) -> Vec<SeatMixture<'static>> {
        (0..np).map(|seat| SeatMixture { seat, members: vec![(&Uniform as &dyn Policy, 1.0)] }).collect()
    }

    /// On Kuhn and Leduc the estimate of uniform play's NashConv is below the exact value
    /// (within 3 standard errors) and, at these budgets, most of it.
    #[test]
    fn the_estimate_is_a_lower_bound_near_the_exact_value() {
        for (game, budget, share) in [("kuhn_poker", 20_000, 0.9), ("leduc_poker", 40_000, 0.8)] {
            let rules = registry::load(game).unwrap();
            let tree = GameTree::build(&rules).unwrap();
            let uniform = TabularPolicy::uniform(&tree);
            let exact = nash_conv_report(&tree, &[&uniform, &uniform]).unwrap().nash_conv;
            let learner = LearnerChoice::defaults("ppo").unwrap();
            let got = approximate_nash_conv(
                Arena::rules(&rules),
                &uniform_profile(2),
                &learner,
                budget,
                20_000,
                5,
                &Cutoff::never(),
            )
            .unwrap();
            assert!(got.nash_conv_estimate <= exact + 3.0 * got.stderr, "{game}: {got:?} vs {exact}");
            assert!(got.nash_conv_estimate >= share * exact, "{game}: {got:?} vs {exact}");
            assert_eq!(got.profile_values, vec![0.0, 0.0]);
        }
    }

    #[test]
    fn bad_budgets_tabular_learners_and_profiles_are_config_errors() {
        let rules = registry::load("kuhn_poker").unwrap();
        let ppo = LearnerChoice::defaults("ppo").unwrap();
        let run = |learner: &LearnerChoice, training: u64, episodes: u64, seats: &[SeatMixture<'_>]| {
            approximate_nash_conv(
                Arena::rules(&rules),
                seats,
                learner,
                training,
                episodes,
                0,
                &Cutoff::never(),
            )
        };
        let profile = uniform_profile(2);
        assert!(matches!(run(&ppo, 0, 10, &profile), Err(Error::Config(_))));
        assert!(matches!(run(&ppo, 10, u64::MAX, &profile), Err(Error::Config(_))));
        assert!(matches!(run(&ppo, 10, 10, &profile[..1]), Err(Error::Config(_))));
        let q = LearnerChoice::defaults("q-learning").unwrap();
        let e = run(&q, 10, 10, &profile).unwrap_err().to_string();
        assert!(e.contains("tabular learner"), "{e}");
    }
}
