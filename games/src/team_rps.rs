//! Decentralised team rock-paper-scissors (`team_rps`), the team game of Fictitious
//! Cross-Play (Xu et al. 2023, arXiv:2310.03354, Sec. 5.1), built as the authors'
//! `matrix_games/team_rps/game.py` (zelaix/fxp, `TeamRPSGame.batch_get_value`) builds it.
//!
//! Two teams of `members` players each (players `0..members` are team 1, the rest team 2).
//! Every player picks action 0 or 1 alone, seeing nothing: the game is played turn by turn,
//! player 0 first, but no player observes another's choice. A team whose members all pick 0
//! plays Rock, all 1 Scissors, anything else Paper; Rock beats Scissors beats Paper beats
//! Rock. Each member of the winning team gets +1, each member of the losing team −1; a tie
//! is 0. So the teams are zero-sum and teammates share their returns.
//!
//! The point of the game: a team that cannot coordinate plays a product of its members'
//! choices, which cannot put 1/3 on each hand (Rock and Scissors at 1/3 each force Paper to
//! 1/3 only if p·q = (1 − p)·(1 − q) = 1/3, which has no real solution). The team game's
//! global equilibrium (each team 1/3 Rock, Paper, Scissors) needs a mixture of team policies;
//! each member best-responding alone can stall at a local one.
//!
//! Tensor: OpenSpiel has no such game, so the tensor is this crate's own, an
//! information-state tensor that says what the information-state string says: the observing
//! player one-hot (`2 · members` values, which also tells the team), then the player's own
//! choice one-hot (2 values, zeros before it chooses); `2 · members + 2` values, 6 for the
//! paper's game. At a decision it is only the player one-hot, as in the turn-based matrix
//! games' OpenSpiel tensor ([`crate::matrix`]).

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};

/// Team rock-paper-scissors with `members` independent players per team.
#[derive(Clone, Copy, Debug)]
pub struct TeamRps {
    members: usize,
}

impl TeamRps {
    /// The game with `members` players per team (the paper's is 2).
    pub fn new(members: usize) -> Self {
        Self { members }
    }
    /// Players per team.
    pub fn members(&self) -> usize {
        self.members
    }
}

impl Game for TeamRps {
    type State = TeamRpsState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[self.members])
    }
    fn num_players(&self) -> usize {
        2 * self.members
    }
    fn num_distinct_actions(&self) -> usize {
        2
    }
    fn new_initial_state(&self) -> TeamRpsState {
        TeamRpsState { members: self.members, history: Vec::with_capacity(2 * self.members) }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn count_histories(&self, _at_most: u64) -> Option<u64> {
        // 1 + 2 + 4 + … + 2^(2·members) nodes.
        Some((1u64 << (2 * self.members + 1)) - 1)
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        Some(TensorShape::new(TensorKind::InformationState, vec![2 * self.members + 2]))
    }
}

impl Registered for TeamRps {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "team_rps",
        about: "decentralised team rock-paper-scissors of the Fictitious Cross-Play paper (two teams)",
        params: &[ParamInfo {
            name: "members",
            about: "players per team",
            default: 2,
            kind: ParamKind::Integer(2..=4),
        }],
        examples: &["members=3"],
        conformance: Conformance::Full,
    }];

    fn from_params(_: &GameInfo, params: &Params) -> Result<Self> {
        Ok(TeamRps::new(params.value("members")))
    }
}

/// The choices made so far, in player order.
#[derive(Clone, Debug)]
pub struct TeamRpsState {
    members: usize,
    history: Vec<ActionId>,
}

/// A team's hand from its members' choices, as `game.py` reads them: all 0 is Rock (0), all 1
/// Scissors (2), anything else Paper (1).
fn hand(choices: &[ActionId]) -> usize {
    if choices.iter().all(|a| a.0 == 0) {
        0
    } else if choices.iter().all(|a| a.0 == 1) {
        2
    } else {
        1
    }
}

impl State for TeamRpsState {
    fn turn(&self) -> Turn {
        if self.history.len() == 2 * self.members {
            Turn::Terminal
        } else {
            Turn::Player(PlayerId(self.history.len()))
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        if self.is_terminal() { Vec::new() } else { vec![ActionId(0), ActionId(1)] }
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        Vec::new()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        assert!(!self.is_terminal(), "team_rps: no move after the game has ended");
        assert!(action.0 < 2, "team_rps: action {} is not 0 or 1", action.0);
        self.history.push(action);
    }

    fn returns(&self) -> Vec<f64> {
        let n = 2 * self.members;
        if !self.is_terminal() {
            return vec![0.0; n];
        }
        let (mine, theirs) = (hand(&self.history[..self.members]), hand(&self.history[self.members..]));
        // Rock (0) beats Scissors (2), Scissors beats Paper (1), Paper beats Rock.
        let u = match (theirs + 3 - mine) % 3 {
            0 => 0.0,
            2 => 1.0,
            _ => -1.0,
        };
        (0..n).map(|p| if p < self.members { u } else { -u }).collect()
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        // Nobody sees anyone's choice; a player's own choice, once made, is all it knows.
        match self.history.get(player.0) {
            Some(a) => format!("p{} chose {}", player.0, a.0),
            None => format!("p{}", player.0),
        }
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let n = 2 * self.members;
        out.fill(0.0);
        out[player.0] = 1.0;
        if let Some(a) = self.history.get(player.0) {
            out[n + a.0] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::check_game;

    fn returns(choices: &[usize]) -> Vec<f64> {
        let game = TeamRps::new(choices.len() / 2);
        let mut s = game.new_initial_state();
        for &a in choices {
            s.apply_action(ActionId(a));
        }
        s.returns()
    }

    /// The authors' `game.py` main block: team 1's Rock (0,0), Paper (0,1) and Scissors (1,1)
    /// against each of team 2's, team 1's value u = R·(S′ − P′) + P·(R′ − S′) + S·(P′ − R′).
    #[test]
    fn the_hands_pay_as_the_authors_game_does() {
        let hands = [[0, 0], [0, 1], [1, 1]];
        let expected = [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]];
        for (a, row) in hands.iter().zip(expected) {
            for (b, u) in hands.iter().zip(row) {
                let r = returns(&[a[0], a[1], b[0], b[1]]);
                assert_eq!(r, vec![u, u, -u, -u], "{a:?} against {b:?}");
            }
        }
        assert_eq!(returns(&[1, 0, 0, 0]), vec![1.0, 1.0, -1.0, -1.0], "(1,0) is Paper too");
        assert_eq!(returns(&[0, 1, 0, 0, 0, 0]), vec![1.0, 1.0, 1.0, -1.0, -1.0, -1.0]);
    }

    #[test]
    fn the_tensor_is_the_player_and_its_own_choice() {
        let game = TeamRps::new(2);
        assert_eq!(game.tensor_shape().unwrap().dims, vec![6]);
        let mut s = game.new_initial_state();
        s.apply_action(ActionId(1));
        let mut out = [f32::NAN; 6];
        s.write_tensor(PlayerId(0), &mut out);
        assert_eq!(out, [1., 0., 0., 0., 0., 1.]);
        s.write_tensor(PlayerId(2), &mut out);
        assert_eq!(out, [0., 0., 1., 0., 0., 0.]);
    }

    #[test]
    fn passes_the_conformance_check() {
        for members in 2..=3 {
            check_game(&TeamRps::new(members), 50, 0).unwrap();
        }
        assert_eq!(TeamRps::new(2).name(), "team_rps");
        assert_eq!(TeamRps::new(3).name(), "team_rps(members=3)");
    }
}
