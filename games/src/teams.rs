//! Two-team constant-sum games: who plays with whom, a team's best response to a mixture of
//! the other team's policies, and NashConv with each team deviating as a whole.
//!
//! A team policy here is one [`TabularPolicy`] whose rows for the team's players are used
//! together: a mixture of team policies picks one of them for the whole team (the team
//! correlates through the pick), which is how a population of team policies plays (Xu et
//! al. 2023, "Fictitious Cross-Play", arXiv:2310.03354, Sec. 3). A team's best response is
//! then a joint one: the best pure strategy of the whole team, not each member answering
//! alone, so a profile where no single member gains can still be exploited by a team.

use crate::aggregate::aggregate;
use crate::error::{Error, Result};
use crate::exact::{best_response_to_mixture, expected_returns, nash_conv_report};
use crate::game::PlayerId;
use crate::pure_strategies::{num_pure_strategies, pure_strategy};
use crate::tabular_policy::TabularPolicy;
use crate::tree::GameTree;

/// Largest number of joint pure strategies of a team's members but one that
/// [`team_nash_conv`] enumerates (the last member's answer is computed, not enumerated).
pub const MAX_TEAM_STRATEGIES: usize = 1 << 16;

/// The two teams of a constant-sum game, read off its returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Teams {
    sides: [Vec<PlayerId>; 2],
}

impl Teams {
    /// The teams of `tree`: players whose returns are equal at every terminal are teammates.
    /// `Some` when that makes exactly two teams whose returns (one member's each) sum to the
    /// same constant at every terminal. A 2-player constant-sum game is two teams of one;
    /// `team_rps` is players 0 and 1 against 2 and 3.
    pub fn of(tree: &GameTree) -> Option<Teams> {
        let n = tree.num_players();
        let terminals = tree.num_terminals();
        let column = |p: usize| (0..terminals).map(move |t| tree.utilities[t * n + p]);
        let mut groups: Vec<Vec<PlayerId>> = Vec::new();
        for p in 0..n {
            match groups.iter_mut().find(|g| column(g[0].0).eq(column(p))) {
                Some(g) => g.push(PlayerId(p)),
                None => groups.push(vec![PlayerId(p)]),
            }
        }
        let [a, b]: [Vec<PlayerId>; 2] = groups.try_into().ok()?;
        let sums: Vec<f64> = column(a[0].0).zip(column(b[0].0)).map(|(x, y)| x + y).collect();
        let constant = sums.first().copied().unwrap_or(0.0);
        let tolerance = 1e-9 * (1.0 + constant.abs());
        sums.iter().all(|s| (s - constant).abs() <= tolerance).then_some(Teams { sides: [a, b] })
    }

    /// The players of side `s` (0 or 1), ascending.
    ///
    /// # Panics
    ///
    /// If `s` is not 0 or 1 (a caller bug).
    #[track_caller]
    pub fn side(&self, s: usize) -> &[PlayerId] {
        &self.sides[s]
    }

    /// The side (0 or 1) of `player`.
    ///
    /// # Panics
    ///
    /// If `player` is not a player of the game (a caller bug).
    #[track_caller]
    pub fn side_of(&self, player: PlayerId) -> usize {
        match self.sides.iter().position(|s| s.contains(&player)) {
            Some(s) => s,
            None => panic!("player {} is in no team", player.0),
        }
    }

    /// True when a team has more than one player (a team game, not a 2-player game).
    pub fn is_team_game(&self) -> bool {
        self.sides.iter().any(|s| s.len() > 1)
    }

    /// The profile where side 0's players play `side0`'s rows and side 1's `side1`'s.
    pub fn profile<'a>(&self, side0: &'a TabularPolicy, side1: &'a TabularPolicy) -> Vec<&'a TabularPolicy> {
        let n = self.sides[0].len() + self.sides[1].len();
        (0..n).map(|p| if self.side_of(PlayerId(p)) == 0 { side0 } else { side1 }).collect()
    }

    /// The profile where side `s` plays `mine` and the other side `theirs`.
    pub fn seated<'a>(
        &self,
        s: usize,
        mine: &'a TabularPolicy,
        theirs: &'a TabularPolicy,
    ) -> Vec<&'a TabularPolicy> {
        if s == 0 { self.profile(mine, theirs) } else { self.profile(theirs, mine) }
    }

    /// The best value side `s` can get, deviating as a whole team, against the other side
    /// playing `opponents[k]` with probability `weights[k]`: the best joint pure strategy of
    /// the team (every pure strategy of the members but the last, enumerated; the last
    /// member's exact best response to each).
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the enumeration passes [`MAX_TEAM_STRATEGIES`]; the errors
    /// of [`best_response_to_mixture`].
    ///
    /// # Complexity
    ///
    /// O(strategies · opponents · nodes), strategies the product of the pure-strategy
    /// counts of the team's members but the last.
    pub fn best_response_value(
        &self,
        tree: &GameTree,
        s: usize,
        opponents: &[&TabularPolicy],
        weights: &[f64],
    ) -> Result<f64> {
        let team = &self.sides[s];
        let (last, others) = team.split_last().ok_or_else(|| Error::Shape("an empty team".into()))?;
        let counts: Vec<usize> = others.iter().map(|&p| num_pure_strategies(tree, p)).collect();
        let joint = counts
            .iter()
            .try_fold(1usize, |acc, &k| acc.checked_mul(k).filter(|&x| x <= MAX_TEAM_STRATEGIES));
        let Some(joint) = joint else {
            return Err(Error::Unsupported(format!(
                "a team of {} has more than {MAX_TEAM_STRATEGIES} joint pure strategies to try",
                tree.name()
            )));
        };
        let mut best = f64::NEG_INFINITY;
        // Every strategy overwrites the same members' rows; the rest stay uniform.
        let mut mine = TabularPolicy::uniform(tree);
        for mut index in 0..joint {
            for (&p, &k) in others.iter().zip(&counts) {
                mine.copy_player_rows(tree, p, &pure_strategy(tree, p, index % k));
                index /= k;
            }
            let profiles: Vec<Vec<&TabularPolicy>> =
                opponents.iter().map(|o| self.seated(s, &mine, o)).collect();
            best = best.max(best_response_to_mixture(tree, *last, &profiles, weights)?.1);
        }
        Ok(best)
    }
}

/// NashConv of a population mixture of team policies, each team deviating as a whole: both
/// sides play `policies[k]` with probability `weights[k]` (side `s` its side-`s` rows), and
/// NashConv is the sum over the two sides of the best team response's gain. With two teams
/// of one this is [`nash_conv`](crate::nash_conv) of the mixture aggregated into one
/// behaviour policy, and computed so.
///
/// # Errors
///
/// [`Error::Shape`] when lengths differ or a policy is of another tree; the errors of
/// [`Teams::best_response_value`] and [`aggregate`].
///
/// # Complexity
///
/// Teams of one: O(policies · sequences + nodes). Otherwise O(policies² · nodes) plus two
/// [`Teams::best_response_value`].
pub fn team_nash_conv(
    tree: &GameTree,
    teams: &Teams,
    policies: &[&TabularPolicy],
    weights: &[f64],
) -> Result<f64> {
    if policies.is_empty() || policies.len() != weights.len() {
        return Err(Error::Shape(format!("{} policies with {} weights", policies.len(), weights.len())));
    }
    if !teams.is_team_game() {
        let mixed = aggregate(tree, policies, weights)?;
        return Ok(nash_conv_report(tree, &teams.profile(&mixed, &mixed))?.nash_conv);
    }
    let mut nash_conv = 0.0;
    for s in 0..2 {
        let me = teams.side(s)[0].0;
        let mut value = 0.0;
        for (mine, &wi) in policies.iter().zip(weights) {
            for (theirs, &wj) in policies.iter().zip(weights) {
                if wi * wj != 0.0 {
                    value += wi * wj * expected_returns(tree, &teams.seated(s, mine, theirs))?[me];
                }
            }
        }
        nash_conv += teams.best_response_value(tree, s, policies, weights)? - value;
    }
    Ok(nash_conv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn tree(name: &str) -> GameTree {
        GameTree::build(&registry::load(name).unwrap()).unwrap()
    }

    #[test]
    fn teams_are_read_off_the_returns() {
        let t = Teams::of(&tree("team_rps")).unwrap();
        assert_eq!(t.side(0), &[PlayerId(0), PlayerId(1)]);
        assert_eq!(t.side(1), &[PlayerId(2), PlayerId(3)]);
        assert!(t.is_team_game());
        let kuhn = Teams::of(&tree("kuhn_poker")).unwrap();
        assert!(!kuhn.is_team_game());
        for not_two_teams in ["kuhn_poker(players=3)", "matrix_pd"] {
            assert_eq!(Teams::of(&tree(not_two_teams)), None, "{not_two_teams}");
        }
    }

    /// Each member uniform: the team plays Rock 1/4, Paper 1/2, Scissors 1/4. The team gains
    /// 1/4 by playing Scissors together (NashConv 1/2 over the two teams); a member alone
    /// gains 1/8 by picking 1 (Paper or Scissors, 0 and 1/4, against Rock or Paper, −1/4 and
    /// 0), 1/2 over the four members.
    #[test]
    fn uniform_members_are_exploited_by_a_team_and_by_each_member() {
        let tree = tree("team_rps");
        let teams = Teams::of(&tree).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let team = team_nash_conv(&tree, &teams, &[&uniform], &[1.0]).unwrap();
        assert!((team - 0.5).abs() < 1e-12, "{team}");
        let members = nash_conv_report(&tree, &[&uniform; 4]).unwrap().nash_conv;
        assert!((members - 0.5).abs() < 1e-12, "{members}");
    }

    /// The three pure hands mixed 1/3 each: the global equilibrium, NashConv 0.
    #[test]
    fn the_three_hands_mixed_are_the_team_equilibrium() {
        let tree = tree("team_rps");
        let teams = Teams::of(&tree).unwrap();
        let hand = |a: usize, b: usize| {
            let mut p = TabularPolicy::uniform(&tree);
            for (player, action) in [(0, a), (1, b), (2, a), (3, b)] {
                p.copy_player_rows(&tree, PlayerId(player), &pure_strategy(&tree, PlayerId(player), action));
            }
            p
        };
        let (rock, paper, scissors) = (hand(0, 0), hand(0, 1), hand(1, 1));
        let third = 1.0 / 3.0;
        let v = team_nash_conv(&tree, &teams, &[&rock, &paper, &scissors], &[third; 3]).unwrap();
        assert!(v.abs() < 1e-12, "{v}");
        let v = team_nash_conv(&tree, &teams, &[&rock], &[1.0]).unwrap();
        assert!((v - 2.0).abs() < 1e-12, "a pure hand loses 1 to its answer, per team: {v}");
    }
}
