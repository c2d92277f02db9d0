//! The Minimax Exploiter's reward shaping for network learners, as the paper has it: the
//! main agent's own critic — its value network ([`FrozenCritic`], PPO's value head frozen
//! when the exploiter starts) — read at the main agent's next decision after each of the
//! exploiter's actions, on any game, no tree needed ([`NetworkShaping`]).

use metagame_games::Arena;
use metagame_networks::Mlp;
use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::params::Params;
use crate::shaping::{MinimaxConfig, Shift};

/// A main agent's critic at one seat, frozen: a network from that seat's tensor to the
/// state's value (one output).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SavedCritic", into = "SavedCritic")]
pub struct FrozenCritic {
    seat: usize,
    network: Mlp,
}

/// A [`FrozenCritic`] as saved: its seat and its parameters in PyTorch's layout.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedCritic {
    seat: usize,
    network: Params,
}

impl TryFrom<SavedCritic> for FrozenCritic {
    type Error = String;
    fn try_from(s: SavedCritic) -> std::result::Result<Self, String> {
        FrozenCritic::new(s.seat, s.network.to_mlp().map_err(|e| e.to_string())?).map_err(|e| e.to_string())
    }
}

impl From<FrozenCritic> for SavedCritic {
    fn from(c: FrozenCritic) -> Self {
        SavedCritic { seat: c.seat, network: Params::of(&c.network) }
    }
}

impl FrozenCritic {
    /// The value network `network` of the main agent at `seat`.
    ///
    /// # Errors
    ///
    /// [`Error::Network`] for a network of more than one output.
    pub fn new(seat: usize, network: Mlp) -> Result<Self> {
        if network.output_size() != 1 {
            return Err(Error::Network(metagame_networks::Error::Shape(format!(
                "a critic has one output (the state's value), this network has {}",
                network.output_size()
            ))));
        }
        Ok(Self { seat, network })
    }
    /// The seat whose values it gives.
    pub fn seat(&self) -> usize {
        self.seat
    }
    /// The network.
    pub fn network(&self) -> &Mlp {
        &self.network
    }
    /// The values of `rows` tensors laid out row after row.
    ///
    /// # Errors
    ///
    /// [`Error::Network`] for tensors of another width; [`Error::Diverged`] for a value that
    /// is not finite.
    pub fn values(&self, tensors: &[f32], rows: usize) -> Result<Vec<f32>> {
        let d = self.network.input_size();
        let input = ArrayView2::from_shape((rows, d), tensors)
            .map_err(|e| Error::Network(metagame_networks::Error::Shape(e.to_string())))?;
        let mut out = Array2::<f32>::zeros((rows, 1));
        self.network.logits_into(input, out.view_mut())?;
        let values = out.into_raw_vec_and_offset().0;
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(Error::Diverged(format!("the main agent's critic gives {v}")));
        }
        Ok(values)
    }
}

/// The Minimax Exploiter's reward for a network learner: after the exploiter's action at
/// step `t`,
///
/// `R_mm = R − α·γ·(1 − d)·(V_main(s′) + c)`
///
/// with `s′` the main agent's next decision before the exploiter's next one, `V_main` its
/// frozen critic ([`FrozenCritic`]: PPO's value network, a state value where the tabular
/// shaping reads `max_a Q_main`), `d = 1` when the episode ended first (no term), and `c =
/// |R_min|`, the main agent's smallest utility: the paper's shift for sparse win/loss
/// rewards. The paper's other shift, the main agent's minimum value, needs every state's
/// value, which only a built tree gives ([`MinimaxShaping`](crate::MinimaxShaping)); here it
/// is refused.
///
/// Reference: Bairamian et al., "Minimax Exploiter", AAMAS 2024, arXiv:2311.17190.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkShaping {
    alpha: f64,
    discount: f64,
    shift: f64,
    critic: FrozenCritic,
}

impl NetworkShaping {
    /// Shaping for the learner at `seat` of the arena's game from the main agent's critic
    /// (its seat is the main seat).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for α or γ out of range, the `value-min` shift, or a game that
    /// states no utility range; [`Error::Values`] for a critic of the learner's own seat;
    /// [`Error::Network`] for a critic that does not read the game's tensors.
    pub fn new(arena: Arena<'_>, seat: usize, critic: FrozenCritic, config: &MinimaxConfig) -> Result<Self> {
        config.validate()?;
        let main = critic.seat;
        let n = arena.num_players();
        if main == seat || main >= n || seat >= n {
            return Err(Error::Values(format!(
                "the main agent's critic is of seat {main}, and the exploiter plays seat {seat} of {n}"
            )));
        }
        if config.main_seat.is_some_and(|m| m != main) {
            return Err(Error::Values(format!(
                "main_seat {:?} for a critic of seat {main}",
                config.main_seat
            )));
        }
        let d = arena.tensor_shape().map_or(0, |s| s.size());
        if critic.network.input_size() != d {
            return Err(Error::Network(metagame_networks::Error::Shape(format!(
                "a critic of {} inputs for {}'s tensors of {d}",
                critic.network.input_size(),
                arena.name()
            ))));
        }
        if config.shift == Shift::ValueMin {
            return Err(Error::Config(
                "shift: value-min needs the main agent's value of every state, which a critic of a network learner gives only on a built tree; use reward-min (or auto)".into(),
            ));
        }
        let low = match (arena.game_tree(), arena.game_rules()) {
            (Some(tree), _) => tree.utility_range(metagame_games::PlayerId(main)).0,
            (None, Some(rules)) => {
                metagame_games::Game::utility_range(rules).map(|r| r.0).ok_or_else(|| {
                    Error::Config(format!("{} states no utility range to shift the shaping by", arena.name()))
                })?
            }
            (None, None) => return Err(Error::Config(format!("{} has no rules and no tree", arena.name()))),
        };
        Ok(Self { alpha: config.alpha, discount: config.discount, shift: low.abs(), critic })
    }
    /// The main agent's seat.
    pub fn main_seat(&self) -> usize {
        self.critic.seat
    }
    /// The shift `c = |R_min|`.
    pub fn shift(&self) -> f64 {
        self.shift
    }
    /// The critic.
    pub fn critic(&self) -> &FrozenCritic {
        &self.critic
    }
    /// The terms `α·γ·(V_main(s′) + c)` to subtract from the rewards of steps whose `s′`
    /// tensors are `tensors` (`rows` of them).
    ///
    /// # Errors
    ///
    /// As [`FrozenCritic::values`].
    pub(crate) fn penalties(&self, tensors: &[f32], rows: usize) -> Result<Vec<f64>> {
        let values = self.critic.values(tensors, rows)?;
        Ok(values.iter().map(|&v| self.alpha * self.discount * (f64::from(v) + self.shift)).collect())
    }
}

#[cfg(test)]
mod tests {
    use metagame_games::{Cutoff, Policy, SeatMixture, Uniform, registry};
    use metagame_networks::Linear;
    use ndarray::{Array1, Array2};

    use super::*;
    use crate::network_learner::NetworkLearner;
    use crate::ppo::{Ppo, PpoConfig};

    /// A critic that values every state at `v`.
    fn constant(seat: usize, d: usize, v: f32) -> FrozenCritic {
        let network = Mlp::new(vec![Linear::new(Array2::zeros((1, d)), Array1::from(vec![v]))]).unwrap();
        FrozenCritic::new(seat, network).unwrap()
    }

    /// Seat 0 of tic-tac-toe trained by PPO against uniform play with shaping `v` (α = γ = 1):
    /// its stats.
    fn trained(v: Option<f32>) -> crate::learner::TrainingStats {
        let game = registry::load("tic_tac_toe").unwrap();
        let arena = metagame_games::Arena::rules(&game);
        let d = arena.tensor_shape().unwrap().size();
        let config = PpoConfig { hidden: vec![8], num_envs: 4, num_steps: 8, ..PpoConfig::default() };
        let mut ppo = Ppo::new(config, 0, d, 9, 3, None).unwrap();
        let minimax = MinimaxConfig::new(1.0).with_discount(1.0);
        let shaping = v.map(|v| NetworkShaping::new(arena, 0, constant(1, d, v), &minimax).unwrap());
        ppo.set_reward_shaping(shaping).unwrap();
        let opponents = [SeatMixture { seat: 1, members: vec![(&Uniform as &dyn Policy, 1.0)] }];
        ppo.train_in(arena, &opponents, 200, &Cutoff::never()).unwrap();
        ppo.stats().clone()
    }

    #[test]
    fn the_critic_shapes_every_step_the_main_agent_answers() {
        let plain = trained(None);
        assert_eq!(plain.shaped_return_sum, plain.return_sum);
        // V + c = 0 (tic-tac-toe's R_min is −1): no term at all, the very same training.
        assert_eq!(trained(Some(-1.0)), plain);
        // V + c = 1.5: every step costs 1.5 but an episode's last one (d = 1: the episode
        // ended before the exploiter's next decision, whoever ended it).
        let shaped = trained(Some(0.5));
        let answered = (shaped.return_sum - shaped.shaped_return_sum) / 1.5;
        assert_eq!(answered, (shaped.steps - shaped.episodes) as f64, "{shaped:?}");
        assert!(shaped.steps > 2 * shaped.episodes, "{shaped:?}");
    }

    #[test]
    fn a_critic_saves_as_its_parameters_and_bad_shaping_is_refused() {
        let game = registry::load("tic_tac_toe").unwrap();
        let arena = metagame_games::Arena::rules(&game);
        let critic = constant(1, 27, 0.25);
        let text = serde_json::to_string(&critic).unwrap();
        let back: FrozenCritic = serde_json::from_str(&text).unwrap();
        assert_eq!(back, critic);
        assert_eq!(back.values(&[0.0; 54], 2).unwrap(), vec![0.25, 0.25]);
        let config = MinimaxConfig::new(0.1);
        let own = NetworkShaping::new(arena, 1, critic.clone(), &config).unwrap_err();
        assert!(own.to_string().contains("exploiter plays seat 1"), "{own}");
        let value_min = MinimaxConfig::new(0.1).with_shift(Shift::ValueMin);
        let err = NetworkShaping::new(arena, 0, critic.clone(), &value_min).unwrap_err();
        assert!(err.to_string().contains("value-min"), "{err}");
        assert!(
            NetworkShaping::new(arena, 0, constant(1, 5, 0.0), &config).is_err(),
            "tensors of another width"
        );
        let shaping = NetworkShaping::new(arena, 0, critic, &config).unwrap();
        assert_eq!((shaping.main_seat(), shaping.shift()), (1, 1.0));
        let two = Mlp::new(vec![Linear::new(Array2::zeros((2, 27)), Array1::zeros(2))]).unwrap();
        assert!(FrozenCritic::new(1, two).is_err(), "a critic has one output");
    }
}
