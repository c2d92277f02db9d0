//! A normal-form game played as a one-shot, turn-based game of imperfect information,
//! as OpenSpiel's `load_game_as_turn_based` does: player 0 chooses, then player 1 without
//! seeing it, and so on; the payoffs are read off the tensor.
//!
//! Tensor: the `information_state_tensor` of OpenSpiel's turn-based form
//! (`TurnBasedSimultaneousState::InformationStateTensor` in
//! `open_spiel/game_transforms/turn_based_simultaneous_game.cc` over `NFGState`'s in
//! `open_spiel/normal_form_game.h`), `2n + 1` values for `n` players (5 for two): the player
//! to move one-hot (zeros once all have chosen), the observing player one-hot, then 1 at the
//! end of the game, else 0. Nobody sees a choice, so a player's tensor says only who it is.

use std::sync::Arc;

use ndarray::array;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, Params, Registered};
use crate::normal_form::NormalFormGame;

/// A [`NormalFormGame`] as a [`Game`].
#[derive(Clone, Debug)]
pub struct MatrixGame {
    name: String,
    game: Arc<NormalFormGame>,
}

impl MatrixGame {
    /// Play `game` as a one-shot game; `name` is what [`Game::name`] reports.
    pub fn new(name: impl Into<String>, game: NormalFormGame) -> Self {
        Self { name: name.into(), game: Arc::new(game) }
    }
    /// The underlying normal-form game.
    pub fn normal_form(&self) -> &NormalFormGame {
        &self.game
    }
}

impl Game for MatrixGame {
    type State = MatrixState;

    fn name(&self) -> String {
        self.name.clone()
    }
    fn num_players(&self) -> usize {
        self.game.num_players()
    }
    fn num_distinct_actions(&self) -> usize {
        self.game.shape().iter().copied().max().unwrap_or(0)
    }
    fn new_initial_state(&self) -> MatrixState {
        MatrixState { game: Arc::clone(&self.game), history: Vec::new() }
    }
    fn utility_sum(&self) -> Option<f64> {
        self.game.constant_sum(1e-12)
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        Some(TensorShape::new(TensorKind::InformationState, vec![2 * self.game.num_players() + 1]))
    }
}

/// A named matrix game of the registry: no parameters, no examples.
const fn matrix_game(name: &'static str, about: &'static str) -> GameInfo {
    GameInfo { name, about, params: &[], examples: &[], conformance: Conformance::Full }
}

/// The family of named matrix games, one registry entry each ([`MATRIX_GAMES`]).
impl Registered for MatrixGame {
    const GAMES: &'static [GameInfo] = &[
        matrix_game("matrix_rps", "rock-paper-scissors"),
        matrix_game("matrix_mp", "matching pennies"),
        matrix_game("matrix_brps", "biased rock-paper-scissors (OpenSpiel's payoffs)"),
        matrix_game("matrix_pd", "prisoner's dilemma"),
        matrix_game("matrix_bos", "battle of the sexes"),
        matrix_game("matrix_shapleys_game", "Shapley's game: fictitious play cycles on it"),
        matrix_game("matrix_team_rps", "team rock-paper-scissors of the Fictitious Cross-Play paper"),
    ];

    fn from_params(info: &GameInfo, _: &Params) -> Result<Self> {
        match named_matrix_game(info.name) {
            Some(game) => Ok(MatrixGame::new(info.name, game?)),
            None => Err(Error::UnknownGame { name: info.name.into(), known: MATRIX_GAMES.join(", ") }),
        }
    }
}

/// A state of [`MatrixGame`]: the strategies chosen so far.
#[derive(Clone, Debug)]
pub struct MatrixState {
    game: Arc<NormalFormGame>,
    history: Vec<ActionId>,
}

impl State for MatrixState {
    fn turn(&self) -> Turn {
        if self.history.len() == self.game.num_players() {
            Turn::Terminal
        } else {
            Turn::Player(PlayerId(self.history.len()))
        }
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        match self.turn() {
            Turn::Player(p) => (0..self.game.num_strategies(p.0)).map(ActionId).collect(),
            _ => Vec::new(),
        }
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        Vec::new()
    }
    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        let Turn::Player(p) = self.turn() else { panic!("no action applies at a terminal state") };
        assert!(action.0 < self.game.num_strategies(p.0), "strategy {} does not exist", action.0);
        self.history.push(action);
    }
    fn returns(&self) -> Vec<f64> {
        if self.turn() != Turn::Terminal {
            return vec![0.0; self.game.num_players()];
        }
        let profile: Vec<usize> = self.history.iter().map(|a| a.0).collect();
        (0..self.game.num_players()).map(|p| self.game.payoff(p, &profile)).collect()
    }
    fn information_state_string(&self, player: PlayerId) -> String {
        // OpenSpiel's TurnBasedSimultaneousState prefix over NFGState's string.
        let current = match self.turn() {
            Turn::Player(p) => p.0 as i64,
            _ => -4,
        };
        let tail = if self.turn() == Turn::Terminal {
            let h: Vec<String> = self.history.iter().map(|a| a.0.to_string()).collect();
            format!("Terminal. History string: {}", h.join(", "))
        } else {
            "Non-terminal".to_string()
        };
        format!("Current player: {current}\nObserving player: {}. {tail}", player.0)
    }
    fn history(&self) -> &[ActionId] {
        &self.history
    }
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let n = self.game.num_players();
        out.fill(0.0);
        match self.turn() {
            Turn::Player(p) => out[p.0] = 1.0,
            _ => out[2 * n] = 1.0,
        }
        out[n + player.0] = 1.0;
    }
}

/// The named matrix games of OpenSpiel's `matrix_games.cc`, with the same payoffs and
/// strategy names, and `matrix_team_rps`, a team game of the Fictitious Cross-Play paper.
///
/// `matrix_team_rps` is team rock-paper-scissors (Xu et al. 2023, "Fictitious Cross-Play",
/// arXiv:2310.03354; the authors' `matrix_games/team_rps/game.py` in zelaix/fxp): each team
/// has two members who pick 0 or 1 at the same time without seeing each other; the team plays
/// Rock when both pick 0, Scissors when both pick 1 and Paper when they disagree, and wins 1
/// (loses 1) by rock-paper-scissors. Here each team is one player whose strategies are the
/// team's joint actions `(a₁, a₂)`, in the order (0,0), (0,1), (1,0), (1,1). Its equilibrium
/// plays Rock, Paper and Scissors 1/3 each: the members must correlate (no product of two
/// independent coin flips gives that), so decentralised self-play stays exploitable, and
/// self-play by exact team best responses cycles Scissors → Rock → Paper → Scissors from the
/// uniform start; a population's mixture reaches it.
pub fn named_matrix_game(name: &str) -> Option<Result<NormalFormGame>> {
    let (labels, a, b): (&[&str], _, _) = match name {
        "matrix_rps" => {
            (&["Rock", "Paper", "Scissors"], array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]], None)
        }
        "matrix_mp" => (&["Heads", "Tails"], array![[1., -1.], [-1., 1.]], None),
        "matrix_brps" => {
            (&["Rock", "Paper", "Scissors"], array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]], None)
        }
        "matrix_pd" => {
            (&["Cooperate", "Defect"], array![[5., 0.], [10., 1.]], Some(array![[5., 10.], [0., 1.]]))
        }
        "matrix_bos" => {
            (&["Bach", "Stravinsky"], array![[3., 0.], [0., 2.]], Some(array![[2., 0.], [0., 3.]]))
        }
        "matrix_shapleys_game" => (
            &["Rock", "Paper", "Scissors"],
            array![[0., 0., 1.], [1., 0., 0.], [0., 1., 0.]],
            Some(array![[0., 1., 0.], [0., 0., 1.], [1., 0., 0.]]),
        ),
        "matrix_team_rps" => (
            &["Rock (0,0)", "Paper (0,1)", "Paper (1,0)", "Scissors (1,1)"],
            array![[0., -1., -1., 1.], [1., 0., 0., -1.], [1., 0., 0., -1.], [-1., 1., 1., 0.]],
            None,
        ),
        _ => return None,
    };
    let names: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
    let game = match b {
        None => NormalFormGame::zero_sum(a),
        Some(b) => NormalFormGame::bimatrix(a, b),
    };
    let players = if name == "matrix_team_rps" { ["Team 1", "Team 2"] } else { ["Player 1", "Player 2"] };
    Some(game.and_then(|g| {
        g.with_title(name)
            .with_names(players.iter().map(|p| p.to_string()).collect(), vec![names.clone(), names])
    }))
}

/// Names accepted by [`named_matrix_game`].
pub const MATRIX_GAMES: &[&str] = &[
    "matrix_rps",
    "matrix_mp",
    "matrix_brps",
    "matrix_pd",
    "matrix_bos",
    "matrix_shapleys_game",
    "matrix_team_rps",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::check_game;

    /// Team rock-paper-scissors as the FXP authors define it (zelaix/fxp,
    /// `matrix_games/team_rps/game.py`): both 0 is Rock, both 1 Scissors, otherwise Paper.
    #[test]
    fn team_rps_pays_rock_paper_scissors_on_the_teams_joint_actions() {
        let game = named_matrix_game("matrix_team_rps").unwrap().unwrap();
        assert_eq!(game.shape(), &[4, 4]);
        let hand = |joint: usize| match (joint / 2, joint % 2) {
            (0, 0) => 0, // rock
            (1, 1) => 2, // scissors
            _ => 1,      // paper
        };
        for a in 0..4 {
            for b in 0..4 {
                // Paper beats Rock, Scissors beats Paper, Rock beats Scissors.
                let expected = match (hand(a) + 3 - hand(b)) % 3 {
                    0 => 0.0,
                    1 => 1.0,
                    _ => -1.0,
                };
                assert_eq!(game.payoff(0, &[a, b]), expected, "{a} vs {b}");
                assert_eq!(game.payoff(1, &[a, b]), -expected, "{a} vs {b}");
            }
        }
        assert!(game.is_symmetric(0.0));
        // The uniform team strategy plays Paper half the time; Scissors wins 1/4 against it.
        let uniform = vec![vec![0.25; 4]; 2];
        assert_eq!(game.deviation_payoffs(&uniform)[0], vec![-0.25, 0.0, 0.0, 0.25]);
        // Rock, Paper, Scissors 1/3 each (Paper split over its two joint actions) is the
        // equilibrium.
        let nash = vec![vec![1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 3.0]; 2];
        assert!(game.nash_conv(&nash) < 1e-15);
        check_game(&MatrixGame::new("matrix_team_rps", game), 50, 0).unwrap();
    }

    /// pyspiel 2.0.2's `load_game_as_turn_based("matrix_rps")` tensors, before any choice,
    /// after player 0's and at the end.
    #[test]
    fn tensors_equal_openspiel_turn_based() {
        let game = MatrixGame::new("matrix_rps", named_matrix_game("matrix_rps").unwrap().unwrap());
        assert_eq!(game.tensor_shape().unwrap().dims, vec![5]);
        let mut s = game.new_initial_state();
        let mut out = [f32::NAN; 5];
        let mut tensor = |s: &MatrixState, p: usize| {
            s.write_tensor(PlayerId(p), &mut out);
            out
        };
        assert_eq!(tensor(&s, 0), [1., 0., 1., 0., 0.]);
        assert_eq!(tensor(&s, 1), [1., 0., 0., 1., 0.]);
        s.apply_action(ActionId(1));
        assert_eq!(tensor(&s, 0), [0., 1., 1., 0., 0.]);
        assert_eq!(tensor(&s, 1), [0., 1., 0., 1., 0.]);
        s.apply_action(ActionId(2));
        assert_eq!(tensor(&s, 0), [0., 0., 1., 0., 1.]);
        assert_eq!(tensor(&s, 1), [0., 0., 0., 1., 1.]);
    }
}
