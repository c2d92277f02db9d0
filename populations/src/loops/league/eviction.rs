//! The league's size cap (`max_members`): which frozen snapshot leaves when a new snapshot
//! makes the league one larger than the cap, and its removal from every table that indexes
//! members by position.
//!
//! The rule: evict the candidate that the learning agents' draws from history give the least
//! probability, ties to the oldest (the earliest snapshot round, then the earliest to join).
//! Each learning agent's draw from history is its role's PFSP (AlphaStar's prioritised
//! fictitious self-play, with the league's current win rates): squared over every historical
//! player for a main agent, variance over each main agent's snapshots (the main agents
//! equally likely) for a main exploiter, linear-capped over every historical player for a
//! league exploiter; or, for a role with a configured matchmaker, that matchmaker over its
//! candidates. A member's mass is the sum over the agents. Evicting a member changes each
//! agent's draw by exactly the mass it had there (in total variation: its share is spread
//! over the rest), so the least total mass is the eviction that changes matchmaking least.
//!
//! Candidates are the frozen snapshots except
//!
//! - the snapshot just taken: evicting it at once would throw the snapshot (and, for an
//!   exploiter that resets there, its training) away;
//! - a main agent's only snapshot: AlphaStar's self-play branch and the main exploiters
//!   fall back to PFSP over a main agent's snapshots, which presumes it has one.
//!
//! Learning agents are members but never candidates.
//!
//! Why not "the least often chosen so far": a count of past draws estimates the same mass,
//! late and with a bias against the young. With many snapshots each is drawn rarely, so a new
//! one has no draw for many rounds, and would go before any old snapshot drawn once, however
//! long ago; the league would keep its early history and drop its new snapshots. The mass
//! needs no time to build up: a snapshot nobody has played sits at the win rates' prior
//! (½), which PFSP weights as an even match, and the snapshots the agents beat clearly are
//! the ones it gives no weight. What any cap gives up is the rest of AlphaStar's reason to
//! keep every player: an evicted snapshot can no longer show that an agent forgot how to
//! beat it.
//!
//! The main agents' average policies are not touched: they are running sums over every
//! snapshot a main agent has taken, evicted ones included. Eviction takes an opponent out of
//! the league; it does not undo a step of the agent's history, and the average's
//! convergence (fictitious self-play's) is over all of it.

use std::sync::Arc;

use super::matchmaking::{MatchRequest, PfspWeighting};
use super::{League, LeagueState, Role};

impl League<'_> {
    /// Per member, the probability the learning agents' draws from history give it, summed
    /// over the agents (see the module docs).
    ///
    /// # Complexity
    ///
    /// O(agents · members).
    fn history_mass(&self) -> Vec<f64> {
        let mut mass = vec![0.0; self.state.members.len()];
        let mains = self.main_agent_members();
        for agent in &self.state.agents {
            let me = agent.member;
            let rates = |candidates: &[usize]| -> Vec<f64> {
                candidates.iter().map(|&c| self.state.win_rates.win_rate(me, c)).collect()
            };
            let mut spread = |candidates: &[usize], probabilities: Vec<f64>, share: f64| {
                for (&c, p) in candidates.iter().zip(probabilities) {
                    mass[c] += share * p;
                }
            };
            if let Some(config) = self.config.matchmaking.of(agent.role) {
                let candidates = self.configured_candidates(agent.role);
                let request =
                    MatchRequest::new(me, &candidates, &self.state.win_rates).with_ratings(&self.state.elo);
                spread(&candidates, config.matchmaker().probabilities(&request), 1.0);
                continue;
            }
            match agent.role {
                Role::MainExploiter => {
                    for &main in &mains {
                        let snaps =
                            self.historical(Some(Role::MainAgent), Some(self.state.members[main].agent));
                        let p = PfspWeighting::Variance.probabilities(&rates(&snaps));
                        spread(&snaps, p, 1.0 / mains.len() as f64);
                    }
                }
                role => {
                    let weighting = if role == Role::MainAgent {
                        PfspWeighting::Squared
                    } else {
                        PfspWeighting::LinearCapped
                    };
                    let all = self.historical(None, None);
                    spread(&all, weighting.probabilities(&rates(&all)), 1.0);
                }
            }
        }
        mass
    }

    /// The position of the snapshot to evict by the module's rule when the snapshot at
    /// `newest` has just joined; `None` when there is no candidate.
    ///
    /// # Complexity
    ///
    /// O(agents · members).
    pub(super) fn eviction_choice(&self, newest: usize) -> Option<usize> {
        let members = &self.state.members;
        let snapshots_of =
            |agent: usize| members.iter().filter(|m| m.snapped_at.is_some() && m.agent == agent).count();
        let mass = self.history_mass();
        (0..members.len())
            .filter(|&p| {
                let m = &members[p];
                p != newest
                    && m.snapped_at.is_some()
                    && (m.role != Role::MainAgent || snapshots_of(m.agent) > 1)
            })
            .min_by(|&i, &j| {
                let order = mass[i].total_cmp(&mass[j]);
                order.then(members[i].snapped_at.cmp(&members[j].snapped_at)).then(i.cmp(&j))
            })
    }
}

impl LeagueState {
    /// Evict the snapshot at `position`: its member, its win rates (both orderings), its Elo
    /// rating and its payoff entries go, and the members after it move down one position
    /// (learning agents come first, so none moves). Returns its id.
    ///
    /// # Complexity
    ///
    /// O(members + win-rate cells), and O(members²) when the payoff table covers it.
    pub(super) fn evict(&mut self, position: usize) -> usize {
        let member = self.members.remove(position);
        self.win_rates.remove_member(position);
        self.elo.remove_member(position);
        if position < self.payoffs.len() {
            Arc::make_mut(&mut self.payoffs).remove(position);
            // A snapshot's entries in the payoff log stay, keyed by its id, which is gone.
            self.keep_agent_payoffs();
        }
        self.evicted += 1;
        member.id
    }
}

#[cfg(test)]
mod tests {
    use metagame_games::{GameTree, TabularPolicy, registry};

    use super::*;
    use crate::loops::league::rating::{MatchResult, OnlineRating, Rating};
    use crate::loops::league::{LeagueConfig, LeagueMember};

    fn kuhn() -> GameTree {
        GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap()
    }

    /// A league of `config` with snapshots `(role, agent, round)` added after its members.
    fn league<'t>(
        tree: &'t GameTree,
        config: LeagueConfig,
        snapshots: &[(Role, usize, usize)],
    ) -> League<'t> {
        let mut league = League::new(tree, config).unwrap();
        for &(role, agent, round) in snapshots {
            let id = league.state.next_id();
            league.state.members.push(LeagueMember {
                id,
                role,
                agent,
                snapped_at: Some(round),
                policy: Some(TabularPolicy::uniform(tree).into()),
            });
            league.state.win_rates.add_member();
            league.state.elo.add_member();
        }
        league
    }

    fn beat(league: &mut League<'_>, winner: usize, loser: usize) {
        for _ in 0..20 {
            league.state.win_rates.record(&MatchResult::win(winner, loser));
        }
    }

    /// The default league: main agent 0, main exploiter 1, league exploiter 2, the main
    /// agent's initial snapshot 3, then the snapshots added.
    #[test]
    fn the_snapshot_with_the_least_pfsp_mass_goes_ties_to_the_oldest() {
        use Role::{LeagueExploiter, MainAgent, MainExploiter};
        let tree = kuhn();
        let snaps =
            [(MainExploiter, 1, 2), (LeagueExploiter, 2, 3), (MainAgent, 0, 4), (MainExploiter, 1, 5)];
        let mut l = league(&tree, LeagueConfig::default(), &snaps);
        // Nobody has played: the main agent's and the league exploiter's draws are uniform
        // over members 3 to 7 (0.2 each), the main exploiter's over the main agent's
        // snapshots 3 and 6 (0.5 each): 4 and 5 tie with the least, and 4 is older.
        let mass = l.history_mass();
        for (m, expected) in [(3, 0.9), (4, 0.4), (5, 0.4), (6, 0.9), (7, 0.4)] {
            assert!((mass[m] - expected).abs() < 1e-12, "{mass:?}");
        }
        assert_eq!(l.eviction_choice(7), Some(4));
        // The main agent and the league exploiter always beat member 5: their PFSP gives it
        // nothing.
        beat(&mut l, 0, 5);
        beat(&mut l, 2, 5);
        assert_eq!(l.history_mass()[5], 0.0);
        assert_eq!(l.eviction_choice(7), Some(5));
    }

    /// The main exploiter's draw from the main agent's snapshots counts: beaten by the
    /// others, they keep its mass until it beats them too.
    #[test]
    fn the_main_exploiters_draw_counts() {
        use Role::{LeagueExploiter, MainAgent, MainExploiter};
        let tree = kuhn();
        let snaps = [(MainAgent, 0, 1), (LeagueExploiter, 2, 2), (MainExploiter, 1, 3)];
        let mut l = league(&tree, LeagueConfig::default(), &snaps);
        for loser in [3, 4, 5] {
            beat(&mut l, 0, loser);
            beat(&mut l, 2, loser);
        }
        // Members 3 and 4 keep the main exploiter's 0.5 each; 5 has nothing.
        assert_eq!(&l.history_mass()[3..], &[0.5, 0.5, 0.0, 2.0]);
        assert_eq!(l.eviction_choice(6), Some(5));
        // The main exploiter beats 3: the variance weighting moves its mass to 4, and 3
        // ties with 5 at none; 3 is older.
        beat(&mut l, 1, 3);
        assert_eq!(&l.history_mass()[3..], &[0.0, 1.0, 0.0, 2.0]);
        assert_eq!(l.eviction_choice(6), Some(3));
    }

    /// Evicting a main agent's snapshot takes it out of the tables but not out of the main
    /// agent's average policy.
    #[test]
    fn an_evicted_main_agent_snapshot_stays_in_the_average() {
        use crate::loops::league::LeagueReport;
        use crate::loops::league::report::RoundEvents;
        use crate::report::PhaseTimes;
        let tree = kuhn();
        let mut l = league(&tree, LeagueConfig::default(), &[(Role::MainAgent, 0, 1)]);
        let first = TabularPolicy::first_action(&tree);
        l.state.members[4].policy = Some(first.clone().into());
        if let Some(sum) = &mut l.state.snapshot_sums[0] {
            Arc::make_mut(sum).add(&tree, &first, 1.0).unwrap();
        }
        let average = |l: &League<'_>| {
            let report = l.report(1, 0, PhaseTimes::default(), RoundEvents::default()).unwrap();
            report.details.get::<LeagueReport>().unwrap().main_average_nash_conv
        };
        let before = average(&l);
        assert_eq!(l.state.evict(4), 4);
        assert_eq!((l.state.members.len(), l.state.win_rates.num_members(), l.state.evicted), (4, 4, 1));
        assert_eq!(average(&l), before);
        // What the average would be without it differs: the eviction did not undo it.
        l.state.snapshot_sums =
            crate::loops::league::state::snapshot_sums_of_members(&tree, &l.state).unwrap();
        assert_ne!(average(&l), before);
    }

    /// Without main exploiters (main agent 0, league exploiter 1, the initial snapshot 2).
    #[test]
    fn the_newest_and_a_main_agents_only_snapshot_stay() {
        use Role::{LeagueExploiter, MainAgent};
        let tree = kuhn();
        let config = || LeagueConfig::builder().main_exploiters(0).build().unwrap();
        let mut l = league(&tree, config(), &[(LeagueExploiter, 1, 1), (LeagueExploiter, 1, 2)]);
        // Everyone beats the main agent's only snapshot, and it stays.
        beat(&mut l, 0, 2);
        beat(&mut l, 1, 2);
        assert_eq!(l.history_mass()[2], 0.0);
        assert_eq!(l.eviction_choice(4), Some(3));
        // The newest (4) is no candidate, however little mass it has.
        beat(&mut l, 0, 4);
        beat(&mut l, 1, 4);
        assert!(l.history_mass()[4] < l.history_mass()[3]);
        assert_eq!(l.eviction_choice(4), Some(3));
        // With a second snapshot of its own, the main agent's first may go.
        let mut more = league(&tree, config(), &[(MainAgent, 0, 1), (LeagueExploiter, 1, 2)]);
        beat(&mut more, 0, 2);
        beat(&mut more, 1, 2);
        assert_eq!(more.eviction_choice(4), Some(2));
        // Only the newest and a protected snapshot: no candidate.
        assert_eq!(league(&tree, config(), &[(LeagueExploiter, 1, 1)]).eviction_choice(3), None);
    }
}
