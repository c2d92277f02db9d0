//! How a learning agent's opponent is chosen in a match: AlphaStar's rule for its role
//! (PFSP, verification, self-play, exploitation, history) or the role's configured
//! matchmaker, drawn from the agent's matchmaking stream.

use super::config::Role;
use super::league_loop::League;
use super::matchmaking::{MatchRequest, Matchmaker, MatchmakingConfig, MatchmakingRng, Pfsp, PfspWeighting};
use super::report::{Branch, Draw};

/// Learning agent `agent`'s matchmaking stream in match `k` of `round` (Philox, keyed; see
/// [`MatchmakingRng`]). Its uniforms by purpose: the first the main agent's branch, the
/// second the main agent chosen, the third the matchmaker's draw, the fourth the reset.
pub(super) fn agent_rng(seed: u64, round: usize, k: u64, agent: usize) -> MatchmakingRng {
    MatchmakingRng::new(seed, ((round as u64) << 20) | k, agent as u32)
}
/// The fourth uniform of `agent`'s stream in match `k` of `round`: whether a league
/// exploiter resets.
pub(super) fn reset_draw(seed: u64, round: usize, k: u64, agent: usize) -> f64 {
    let mut rng = agent_rng(seed, round, k, agent);
    (0..3).for_each(|_| {
        rng.next_uniform();
    });
    rng.next_uniform()
}

impl League<'_> {
    /// Member ids of the historical players, optionally only of one role or one agent.
    pub(super) fn historical(&self, role: Option<Role>, agent: Option<usize>) -> Vec<usize> {
        (0..self.state.members.len())
            .filter(|&i| {
                let m = &self.state.members[i];
                m.snapped_at.is_some()
                    && role.is_none_or(|r| m.role == r)
                    && agent.is_none_or(|a| m.agent == a)
            })
            .collect()
    }
    pub(super) fn main_agent_members(&self) -> Vec<usize> {
        self.state.agents.iter().filter(|a| a.role == Role::MainAgent).map(|a| a.member).collect()
    }
    /// PFSP over `candidates` with `weighting`, drawn from `rng`, and the draw's hardness.
    pub(super) fn pfsp(
        &self,
        me: usize,
        candidates: &[usize],
        weighting: PfspWeighting,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        let request = MatchRequest::new(me, candidates, &self.state.win_rates);
        self.weighted_draw(&Pfsp::new(weighting), &request, rng)
    }
    /// One draw of `matchmaker` for `request` and its hardness: `me`'s win rate against the
    /// opponent chosen, its expected win rate under the draw's distribution, and its mean
    /// win rate against the candidates.
    pub(super) fn weighted_draw(
        &self,
        matchmaker: &dyn Matchmaker,
        request: &MatchRequest<'_>,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        // As `Matchmaker::choose` with one draw, keeping the probabilities.
        let probabilities = matchmaker.probabilities(request);
        let candidates = request.candidates();
        let chosen = candidates[rng.sample(&probabilities)];
        let rates = request.learner_win_rates();
        let expected = probabilities.iter().zip(&rates).map(|(p, x)| p * x).sum();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let me = request.learner();
        (chosen, Some((self.state.win_rates.win_rate(me, chosen), expected, mean)))
    }
    /// The opponent (a member id) of learning agent `agent` in match `k` of this round, by
    /// its role's rule, the branch of the rule that chose it, and the draw's hardness when a
    /// weighted rule drew it.
    pub(super) fn choose_opponent(&self, agent: usize, k: u64) -> (usize, Branch, Draw) {
        let (seed, round) = (self.config.seed, self.state.round);
        let me = self.state.agents[agent].member;
        let mut rng = agent_rng(seed, round, k, agent);
        let coin = rng.next_uniform();
        let main_draw = rng.next_uniform();
        let wr = |other| self.state.win_rates.win_rate(me, other);
        let mains = self.main_agent_members();
        let random_main = mains[((main_draw * mains.len() as f64) as usize).min(mains.len() - 1)];
        let role = self.state.agents[agent].role;
        if let Some(config) = self.config.matchmaking.of(role) {
            let (chosen, draw) = self.configured_choice(me, role, config, &mut rng);
            return (chosen, Branch::Configured, draw);
        }
        match role {
            Role::MainAgent => {
                let all = self.historical(None, None);
                if coin < 0.5 && !all.is_empty() {
                    let (chosen, draw) = self.pfsp(me, &all, PfspWeighting::Squared, &mut rng);
                    return (chosen, Branch::Pfsp, draw);
                }
                let main_agent = self.state.members[random_main].agent;
                let branch = if coin < 0.5 {
                    // No history yet: the PFSP branch has nobody to choose from.
                    Branch::SelfPlay
                } else if coin < 0.65 {
                    // Verification: historical main exploiters that beat us.
                    let exploiters = self.historical(Some(Role::MainExploiter), None);
                    if !exploiters.is_empty() && exploiters.iter().map(|&e| wr(e)).fold(1.0, f64::min) < 0.3 {
                        let (chosen, draw) = self.pfsp(me, &exploiters, PfspWeighting::Squared, &mut rng);
                        return (chosen, Branch::Verification, draw);
                    }
                    // Forgetting: the chosen main agent's snapshots up to the last one our win
                    // rate increased at (AlphaStar's remove_monotonic_suffix: none if it never does).
                    let mut snaps = self.historical(Some(Role::MainAgent), Some(main_agent));
                    let keep = (1..snaps.len())
                        .rev()
                        .find(|&i| wr(snaps[i - 1]) < wr(snaps[i]))
                        .map_or(0, |i| i + 1);
                    snaps.truncate(keep);
                    if !snaps.is_empty() && snaps.iter().map(|&s| wr(s)).fold(1.0, f64::min) < 0.7 {
                        let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Squared, &mut rng);
                        return (chosen, Branch::Verification, draw);
                    }
                    Branch::Verification
                } else {
                    Branch::SelfPlay
                };
                // Self-play against the chosen main agent, or its snapshots when it beats us.
                let snaps = self.historical(Some(Role::MainAgent), Some(main_agent));
                if wr(random_main) > 0.3 || snaps.is_empty() {
                    (random_main, branch, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng);
                    (chosen, branch, draw)
                }
            }
            Role::MainExploiter => {
                let snaps =
                    self.historical(Some(Role::MainAgent), Some(self.state.members[random_main].agent));
                if wr(random_main) > 0.1 || snaps.is_empty() {
                    (random_main, Branch::Exploit, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng);
                    (chosen, Branch::Exploit, draw)
                }
            }
            Role::LeagueExploiter => {
                let all = self.historical(None, None);
                if all.is_empty() {
                    (random_main, Branch::History, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &all, PfspWeighting::LinearCapped, &mut rng);
                    (chosen, Branch::History, draw)
                }
            }
        }
    }
    /// The opponent a configured matchmaker draws for `me` (a learning agent of `role`)
    /// among the role's candidates: every historical player and the main agents for main
    /// agents and league exploiters; the main agents and their snapshots for main
    /// exploiters. Elo matchmaking predicts with the league's online Elo.
    pub(super) fn configured_choice(
        &self,
        me: usize,
        role: Role,
        config: &MatchmakingConfig,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        let candidates = self.configured_candidates(role);
        let request = MatchRequest::new(me, &candidates, &self.state.win_rates).with_ratings(&self.state.elo);
        self.weighted_draw(config.matchmaker().as_ref(), &request, rng)
    }
    /// The candidates of a configured matchmaker for a learning agent of `role` (see
    /// [`League::configured_choice`]), in member order.
    pub(super) fn configured_candidates(&self, role: Role) -> Vec<usize> {
        let mains = self.main_agent_members();
        let mut candidates: Vec<usize> = match role {
            Role::MainExploiter => {
                let agents: Vec<usize> = mains.iter().map(|&m| self.state.members[m].agent).collect();
                (0..self.state.members.len())
                    .filter(|&i| {
                        let m = &self.state.members[i];
                        m.role == Role::MainAgent && agents.contains(&m.agent)
                    })
                    .collect()
            }
            _ => mains.iter().copied().chain(self.historical(None, None)).collect(),
        };
        candidates.sort_unstable();
        candidates.dedup();
        candidates
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::loops::league::rating::MatchResult;
    use crate::loops::league::{LeagueConfig, LeagueMember};
    use metagame_games::{GameTree, TabularPolicy, registry};

    /// With history in the league and no check triggering (every win rate at the 0.5
    /// prior), the main agent's branches come 50/15/35 over many rounds, and the 15%
    /// verification branch falls through to self-play against the main agent.
    #[test]
    fn main_agent_branches_are_50_15_35_when_no_check_triggers() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let mut league = League::new(&tree, LeagueConfig::default()).unwrap();
        // Historical players: the initial snapshot, plus a main-exploiter snapshot.
        league.state.members.push(LeagueMember {
            role: Role::MainExploiter,
            agent: 1,
            snapped_at: Some(0),
            policy: Some(TabularPolicy::uniform(&tree).into()),
            id: 4,
        });
        league.state.win_rates.add_member();
        let n = 20_000;
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for round in 0..n {
            league.state.round = round;
            let (opponent, branch, _) = league.choose_opponent(0, 0);
            let name = match branch {
                Branch::Pfsp => "pfsp",
                Branch::Verification => {
                    assert_eq!(opponent, 0, "no check triggers: verification plays the main agent");
                    "verification"
                }
                Branch::SelfPlay => {
                    assert_eq!(opponent, 0);
                    "self-play"
                }
                other => panic!("a main agent took branch {other:?}"),
            };
            *counts.entry(name).or_default() += 1;
        }
        for (name, share) in [("pfsp", 0.5), ("verification", 0.15), ("self-play", 0.35)] {
            let f = counts[name] as f64 / n as f64;
            // 4 standard deviations of a binomial share at n = 20 000 is below 0.015.
            assert!((f - share).abs() < 0.015, "{name}: {f} (expected {share})");
        }
    }

    #[test]
    fn squared_pfsp_never_picks_an_opponent_we_always_beat() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let mut league = League::new(&tree, LeagueConfig::default()).unwrap();
        // Member 3 is the initial snapshot; add two more and make us always beat member 3.
        for _ in 0..2 {
            league.state.members.push(LeagueMember {
                role: Role::MainAgent,
                agent: 0,
                snapped_at: Some(0),
                policy: Some(TabularPolicy::uniform(&tree).into()),
                id: league.state.next_id(),
            });
            league.state.win_rates.add_member();
        }
        for _ in 0..50 {
            league.state.win_rates.record(&MatchResult::win(0, 3));
        }
        for round in 0..5_000 {
            league.state.round = round;
            let (opponent, branch, _) = league.choose_opponent(0, 0);
            if branch == Branch::Pfsp {
                assert_ne!(opponent, 3);
            }
        }
    }
}
