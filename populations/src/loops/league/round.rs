//! One round of the league ([`League::step`]): its matches (opponent, training jobs,
//! exact results, win rates and ratings, snapshots and resets), the evaluation points, and
//! the round's report.

use std::sync::Arc;
use std::time::Instant;

use metagame_games::philox::derive_seed;
use metagame_games::{Arena, GameTree, Matchup, MixtureSum, Policy, TabularPolicy};
use metagame_learners::{Critic, MinimaxConfig, NetworkShaping, ValueTable};

use super::config::{ResetTo, Role};
use super::jobs::{MinimaxTraining, TrainingJob, combined, fresh_learners};
use super::league_loop::League;
use super::network_agents::{self, NetworkJob, copy_pair};
use super::opponents::reset_draw;
use super::payoff_log::PayoffRecord;
use super::rating::{BatchElo, BatchEloConfig, MatchResult, OnlineRating};
use super::report::{Branch, Draw, LeagueMatch, LeagueReport, RoundEvents};
use super::snapshot_policy::SnapshotPolicy;
use super::state::LeagueMember;
use crate::error::{Error, Result};
use crate::report::{Details, IterationReport, PhaseTimes};

/// The purpose of the seeds of an evaluation point's payoff entries ([`derive_seed`] with
/// the round).
pub(super) const ENTRIES: u32 = u32::from_be_bytes(*b"entr");
/// `u` mapped from `range` to [0, 1].
pub(super) fn to_score(u: f64, range: (f64, f64)) -> f64 {
    ((u - range.0) / (range.1 - range.0).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0)
}
/// `a`'s result against `b` on `tree` (the match tree): its expected utility at each seat
/// mapped from `range` (the tree's [`GameTree::utility_bounds`]) to [0, 1], averaged over the seats.
pub(super) fn score(tree: &GameTree, range: (f64, f64), a: &TabularPolicy, b: &TabularPolicy) -> Result<f64> {
    let first = metagame_games::expected_returns(tree, &[a, b])?[0];
    let second = metagame_games::expected_returns(tree, &[b, a])?[1];
    Ok(0.5 * (to_score(first, range) + to_score(second, range)))
}

impl League<'_> {
    /// One round (see the module docs): `matches_per_round` matches per learning agent.
    /// Nothing is committed unless the whole round succeeds.
    ///
    /// # Errors
    ///
    /// Learner or game errors, wrapped in [`Error::AtIteration`].
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let round = self.state.round + 1;
        self.release_written_snapshots();
        // What the round changes, to put back if it fails: the win rates keep a journal, and
        // the rest is small (O(agents + members); policies, payoffs and sums are shared).
        let backup = (
            self.state.round,
            self.state.agents.clone(),
            self.state.elo.clone(),
            self.state.matches_by_role.clone(),
            self.state.members.clone(),
            self.learners.clone(),
            self.state.snapshot_sums.clone(),
            self.state.payoffs.clone(),
            self.state.evicted,
            self.state.payoffs_logged,
        );
        let evaluates = self.config.eval_every > 0 && round.is_multiple_of(self.config.eval_every);
        self.state.win_rates.open_journal();
        match self.play_round(round, evaluates) {
            Ok(report) => {
                self.state.win_rates.close_journal();
                // An evaluation point's old table, held by nothing now, is the next one's memory.
                if let Ok(old) = Arc::try_unwrap(backup.7) {
                    self.scratch.table = old.into_cells();
                }
                self.last = report.after(Some(&self.last));
                Ok(&mut self.last)
            }
            Err(e) => {
                self.state.win_rates.roll_back();
                let (r, agents, elo, by_role, members, learners, sums, payoffs, evicted, logged) = backup;
                self.state.round = r;
                self.state.agents = agents;
                self.state.elo = elo;
                self.state.matches_by_role = by_role;
                self.state.members = members;
                self.learners = learners;
                self.state.snapshot_sums = sums;
                self.state.payoffs = payoffs;
                self.state.evicted = evicted;
                // The agents' entries are the table's, taken again from the table put back.
                self.state.keep_agent_payoffs();
                self.state.payoffs_logged = logged;
                self.payoff_log.truncate(logged);
                match e {
                    Error::CutOff => Err(e),
                    e => Err(Error::AtIteration { iteration: round, source: Box::new(e) }),
                }
            }
        }
    }
    /// The round's matches, then its evaluation point when `evaluates`, then its report;
    /// changes the state as it goes (the caller rolls back on error).
    pub(super) fn play_round(&mut self, round: usize, evaluates: bool) -> Result<IterationReport> {
        let t = Instant::now();
        self.state.round = round;
        let mut events = RoundEvents::default();
        let per_match = self.config.episodes_per_match();
        let mut left = self.config.episodes_per_round;
        let mut k = 0;
        while left > 0 {
            // A round is many matches: the time budget is honoured between them.
            if k > 0 && self.cutoff.passed() {
                return Err(Error::CutOff);
            }
            let episodes = per_match.min(left);
            left -= episodes;
            self.play_match(round, k, episodes, &mut events)?;
            k += 1;
        }
        for (agent, pair) in self.state.agents.iter_mut().zip(&self.learners) {
            agent.learners = pair.iter().map(|l| l.save()).collect();
        }
        for (agent, pair) in self.state.agents.iter_mut().zip(&self.networks) {
            agent.learners = pair.iter().map(|l| l.save()).collect();
        }
        let mut times = PhaseTimes { oracle_s: t.elapsed().as_secs_f64(), ..PhaseTimes::default() };
        if !self.networks.is_empty() {
            times.learners = Some(events.learner_seconds);
        }
        if evaluates {
            let t = Instant::now();
            let (entries, batch_elo) = self.evaluate(round)?;
            events.evaluated_entries = entries;
            events.batch_elo = batch_elo;
            times.evaluation_s = t.elapsed().as_secs_f64();
        }
        let episodes = self.config.episodes_per_round * self.config.num_agents() as u64;
        self.report(round, episodes, times, events)
    }
    /// A Minimax main exploiter's shaping against member `opponent`: the critic for each
    /// exploiter seat is the opponent's values at the other seat — a live main agent's
    /// learned Q-values (`exploiter_critic = "learned"`), else the exact values of the policy
    /// it plays.
    pub(super) fn minimax_training(
        &self,
        play: &GameTree,
        current: &[TabularPolicy],
        opponent: usize,
    ) -> Result<MinimaxTraining> {
        let member = &self.state.members[opponent];
        let policy = self.member_policy(current, opponent);
        let critic = |seat: usize| -> Result<ValueTable> {
            let main = 1 - seat;
            match (self.config.exploiter_critic, &member.policy) {
                (Critic::Learned, None) => Ok(ValueTable::learned(&*self.learners[member.agent][main])),
                _ => ValueTable::exact(play, main, &[policy, policy]).map_err(Error::Learner),
            }
        };
        let config = MinimaxConfig::new(self.config.exploiter_alpha)
            .with_discount(self.config.exploiter_discount)
            .with_shift(self.config.exploiter_shift);
        Ok(MinimaxTraining { config, critics: [critic(0)?, critic(1)?] })
    }
    pub(super) fn member_policy<'a>(
        &'a self,
        current: &'a [TabularPolicy],
        member: usize,
    ) -> &'a TabularPolicy {
        let m = &self.state.members[member];
        match m.policy.as_ref().and_then(SnapshotPolicy::as_table) {
            Some(p) => p,
            None => &current[m.agent],
        }
    }
    /// Match `k` of `round`: every learning agent draws an opponent from the league as it
    /// stands, trains `episodes` episodes against it (half at each seat; the agents in
    /// parallel), and then, in agent order, its result enters the win rates and the online
    /// Elo, and it takes a snapshot (and maybe resets) when its rule says so.
    pub(super) fn play_match(
        &mut self,
        round: usize,
        k: u64,
        episodes: u64,
        events: &mut RoundEvents,
    ) -> Result<()> {
        let Some(play) = self.match_tree() else {
            return self.play_network_match(round, k, episodes, events);
        };
        let n = self.learners.len();
        let current: Vec<TabularPolicy> = self.learners.iter().map(|pair| combined(play, pair)).collect();
        let choices: Vec<(usize, Branch, Draw)> = (0..n).map(|a| self.choose_opponent(a, k)).collect();
        let half = episodes / 2;
        let jobs: Vec<TrainingJob> = (0..n)
            .map(|a| {
                let opponent = choices[a].0;
                let minimax = (self.state.agents[a].role == Role::MainExploiter
                    && self.config.exploiter_alpha > 0.0)
                    .then(|| self.minimax_training(play, &current, opponent))
                    .transpose()?;
                Ok(TrainingJob {
                    learners: self.learners[a].clone(),
                    opponent: self.member_policy(&current, opponent).clone(),
                    minimax,
                    episodes: [half, episodes - half],
                    outcome: self.config.outcome,
                })
            })
            .collect::<Result<_>>()?;
        let trained = self.trainer.train_until(play, jobs, &self.cutoff)?;
        if trained.len() != n {
            return Err(Error::Config(format!(
                "the trainer returned {} learning agents for {n}",
                trained.len()
            )));
        }
        let new_policies: Vec<TabularPolicy> = trained.iter().map(|pair| combined(play, pair)).collect();
        let range = play.utility_bounds();
        let scores = new_policies
            .iter()
            .zip(&choices)
            .map(|(policy, &(opponent, ..))| {
                score(play, range, policy, self.member_policy(&current, opponent))
            })
            .collect::<Result<Vec<f64>>>()?;
        self.learners = trained;
        let mut new_policies: Vec<Option<TabularPolicy>> = new_policies.into_iter().map(Some).collect();
        self.commit_match(round, k, episodes, &choices, &scores, events, |_, a| {
            // INVARIANT: an agent takes at most one snapshot per match.
            Ok(SnapshotPolicy::from(new_policies[a].take().expect("one snapshot per agent and match")))
        })
    }
    /// Match `k` of `round` in a league of network learners: as [`League::play_match`],
    /// each agent's two seat networks trained by batched episodes against its opponent's
    /// policy, its result the mean of those episodes' returns.
    pub(super) fn play_network_match(
        &mut self,
        round: usize,
        k: u64,
        episodes: u64,
        events: &mut RoundEvents,
    ) -> Result<()> {
        if self.own_trainer {
            return Err(Error::Config(
                "a league of networks trains its agents on this machine; the trainer given (Ray's) trains tabular learners".into(),
            ));
        }
        let n = self.networks.len();
        let choices: Vec<(usize, Branch, Draw)> = (0..n).map(|a| self.choose_opponent(a, k)).collect();
        let half = episodes / 2;
        let jobs = choices
            .iter()
            .enumerate()
            .map(|(a, &(opponent, ..))| {
                let agent = &self.state.agents[a];
                Ok(NetworkJob {
                    member: self.state.members[agent.member].id,
                    role: agent.role,
                    shaping: self.network_shaping(a, opponent)?,
                    pair: copy_pair(&self.networks[a]),
                    opponent: self.playing(opponent)?,
                    episodes: [half, episodes - half],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let range = self.utility_range()?;
        let mut trained = Vec::with_capacity(n);
        let mut scores = Vec::with_capacity(n);
        for (pair, means, phases) in network_agents::train_jobs(self.arena, jobs, &self.cutoff)? {
            trained.push(pair);
            // The mean return at each seat mapped to [0, 1], the seats averaged.
            scores.push(0.5 * (to_score(means[0], range) + to_score(means[1], range)));
            events.learner_seconds = events.learner_seconds.plus(&phases);
        }
        self.networks = trained;
        self.commit_match(round, k, episodes, &choices, &scores, events, |league, a| {
            network_agents::snapshot(&league.networks[a])
        })
    }
    /// A Minimax main exploiter's shaping against member `opponent`, per exploiter seat:
    /// the critic of the opponent's main agent at the other seat, frozen when the
    /// exploiter's generation started; none for other agents or with `exploiter_alpha = 0`.
    fn network_shaping(&self, agent: usize, opponent: usize) -> Result<[Option<NetworkShaping>; 2]> {
        let me = &self.state.agents[agent];
        if me.role != Role::MainExploiter || self.config.exploiter_alpha <= 0.0 {
            return Ok([None, None]);
        }
        let main = self.state.members[opponent].agent;
        let Some(Some(critics)) = me.critics.get(main) else {
            return Err(Error::SavedState(format!(
                "main exploiter {} has no critic of agent {main}, the main agent it plays",
                self.state.members[me.member].id
            )));
        };
        let config = MinimaxConfig::new(self.config.exploiter_alpha)
            .with_discount(self.config.exploiter_discount)
            .with_shift(self.config.exploiter_shift);
        let shaping = |seat: usize| {
            NetworkShaping::new(self.arena, seat, critics[1 - seat].clone(), &config).map_err(Error::Learner)
        };
        Ok([Some(shaping(0)?), Some(shaping(1)?)])
    }
    /// The utility range a match's returns are mapped from to [0, 1]: the tree's bounds, or
    /// the game's stated range.
    pub(super) fn utility_range(&self) -> Result<(f64, f64)> {
        match (self.match_tree(), self.arena.game_rules()) {
            (Some(tree), _) => Ok(tree.utility_bounds()),
            (None, Some(rules)) => metagame_games::Game::utility_range(rules).ok_or_else(|| {
                Error::Config(format!("{} states no utility range to score matches by", self.arena.name()))
            }),
            (None, None) => Err(Error::Config(format!("{} has no rules and no tree", self.arena.name()))),
        }
    }
    /// Member `member`'s policy as it plays now: a snapshot's, or a learning agent's current
    /// networks.
    pub(super) fn playing(&self, member: usize) -> Result<Arc<dyn Policy>> {
        let m = &self.state.members[member];
        match (&m.policy, &self.snapshot_folder) {
            (Some(p), Some(folder)) => folder.playing(m.id, p),
            (Some(p), None) => p.playing(),
            (None, _) => network_agents::playing(&self.networks[m.agent]),
        }
    }
    /// A match's results, in agent order: each enters the win rates and the online Elo, and
    /// each agent takes a snapshot (`snapshot_of(league, agent)`, its policy now) and maybe
    /// resets when its rule says so.
    #[allow(clippy::too_many_arguments)]
    fn commit_match(
        &mut self,
        round: usize,
        k: u64,
        episodes: u64,
        choices: &[(usize, Branch, Draw)],
        scores: &[f64],
        events: &mut RoundEvents,
        mut snapshot_of: impl FnMut(&Self, usize) -> Result<SnapshotPolicy>,
    ) -> Result<()> {
        for (a, (&(opponent, branch, draw), &s)) in choices.iter().zip(scores).enumerate() {
            let me = self.state.agents[a].member;
            // INVARIANT: a score in [0, 1] (to_score clamps).
            let result = MatchResult::new(me, opponent, s).expect("a score in [0, 1]");
            self.state.win_rates.record(&result);
            self.state.elo.update(&result);
            let ids = (self.state.members[me].id, self.state.members[opponent].id);
            events.add_match(LeagueMatch {
                agent: a,
                member: ids.0,
                opponent: ids.1,
                branch,
                score: s,
                count: 1,
            });
            events.add_draw(draw);
            *self.state.matches_by_role.entry(self.state.agents[a].role).or_default() += 1;
        }
        for a in 0..choices.len() {
            let agent = &mut self.state.agents[a];
            agent.episodes_since_snapshot += episodes;
            let (me, role, since) = (agent.member, agent.role, agent.episodes_since_snapshot);
            let members = &self.state.members;
            let min_rate = match role {
                Role::MainExploiter => self
                    .state
                    .agents
                    .iter()
                    .filter(|x| x.role == Role::MainAgent)
                    .map(|x| self.state.win_rates.win_rate(me, x.member))
                    .fold(1.0, f64::min),
                _ => {
                    let row = self.state.win_rates.row(me);
                    (0..members.len())
                        .filter(|&i| members[i].snapped_at.is_some())
                        .map(|i| row[i])
                        .fold(1.0, f64::min)
                }
            };
            let by_win_rate = min_rate > self.config.snapshot_win_rate;
            if since < self.config.snapshot_min_episodes
                || !(by_win_rate || since >= self.config.snapshot_max_episodes)
            {
                continue;
            }
            events.snapshots.push(a);
            if by_win_rate {
                events.win_rate_snapshots.push(a);
            }
            let policy = snapshot_of(self, a)?;
            if let (Some(sum), Some(table), Some(tree)) =
                (&mut self.state.snapshot_sums[a], policy.as_table(), self.tree)
            {
                Arc::make_mut(sum).add(tree, table, 1.0)?;
            }
            let id = self.state.next_id();
            self.state.members.push(LeagueMember {
                id,
                role,
                agent: a,
                snapped_at: Some(round),
                policy: Some(policy),
            });
            self.state.win_rates.add_member();
            self.state.elo.add_member();
            if let Some(cap) = self.config.max_members
                && self.state.members.len() > cap
            {
                let newest = self.state.members.len() - 1;
                // validate() keeps a candidate: a cap of at least the agents, a snapshot per
                // main agent and one more.
                let victim = self
                    .eviction_choice(newest)
                    .ok_or_else(|| Error::Config(format!("max_members = {cap}: no snapshot to evict")))?;
                let id = self.state.evict(victim);
                if let Some(folder) = &self.snapshot_folder {
                    folder.forget(id);
                }
                events.evicted.push(id);
            }
            let agent = &mut self.state.agents[a];
            agent.episodes_since_snapshot = 0;
            let reset = match role {
                Role::MainAgent => false,
                Role::MainExploiter => true,
                Role::LeagueExploiter => {
                    reset_draw(self.config.seed, round, k, a) < self.config.league_exploiter_reset
                }
            };
            if reset {
                events.resets.push(a);
                agent.generation += 1;
                let generation = agent.generation;
                // A reset agent is a new player: its win rates start again from the prior
                // (AlphaStar's pseudocode keeps the old player's payoff row; here the old
                // rates describe a policy that is gone). Its Elo carries on.
                self.state.win_rates.clear_member(me);
                // `exploiter_reset_to = "main-agent"`: the strongest main agent as it is now.
                let source = match self.config.exploiter_reset_to {
                    ResetTo::Blank => None,
                    ResetTo::MainAgent => self.strongest_main_agent(),
                };
                match self.wins.as_ref().or(self.tree) {
                    Some(play) => {
                        let start = source.map(|m| combined(play, &self.learners[m]));
                        self.learners[a] = fresh_learners(play, &self.config, a, generation, start.as_ref())?;
                    }
                    None => {
                        let start = match source {
                            Some(m) => Some(network_agents::networks_of(&self.networks[m])?),
                            None => None,
                        };
                        self.networks[a] = network_agents::fresh_networks(
                            self.arena,
                            &self.config,
                            a,
                            generation,
                            start.as_ref(),
                        )?;
                        // A new Minimax generation reads the main agents' critics as they are now.
                        if role == Role::MainExploiter && self.config.exploiter_alpha > 0.0 {
                            let critics = network_agents::main_critics(&self.state.agents, &self.networks)?;
                            self.state.agents[a].critics = critics;
                        }
                    }
                }
            }
        }
        Ok(())
    }
    /// The learning agent that is the main agent of highest Elo (the first on ties), if any.
    fn strongest_main_agent(&self) -> Option<usize> {
        let ratings = self.state.elo.ratings();
        let mut best: Option<(usize, f64)> = None;
        for (i, agent) in self.state.agents.iter().enumerate() {
            let rating = ratings.get(agent.member).copied().unwrap_or(f64::NEG_INFINITY);
            if agent.role == Role::MainAgent && best.is_none_or(|(_, r)| rating > r) {
                best = Some((i, rating));
            }
        }
        best.map(|(i, _)| i)
    }

    /// An evaluation point on `state`: fill the payoff table among all members through the
    /// evaluator (entries never evaluated, and every entry of a learning agent, whose policy
    /// has changed; `current` holds the learning agents' policies), then fit batch Elo on it.
    /// Returns the ordered entries evaluated and the batch-Elo ratings.
    pub(super) fn evaluate(&mut self, round: usize) -> Result<(usize, Vec<f64>)> {
        let play = self.wins.as_ref().or(self.tree);
        let arena = play.map_or(self.arena, Arena::tree);
        let range = self.utility_range()?;
        // The learning agents' policies now: tables of the tree, or their networks.
        let tables: Vec<TabularPolicy> = match play {
            Some(play) => self.learners.iter().map(|pair| combined(play, pair)).collect(),
            None => Vec::new(),
        };
        let networks = self.networks.iter().map(network_agents::playing).collect::<Result<Vec<_>>>()?;
        // Snapshots as they play (network snapshots read back from their folder, for this
        // evaluation point only).
        let snapshots = (0..self.state.members.len())
            .map(|i| self.state.members[i].policy.is_some().then(|| self.playing(i)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let state = &mut self.state;
        let n = state.members.len();
        // Grown to the members (new ones without entries) in one copy: the round's backup
        // shares the old table.
        let mut table = state.payoffs.resized_into(n, std::mem::take(&mut self.scratch.table));
        for m in (0..n).filter(|&m| state.members[m].snapped_at.is_none()) {
            table.clear_member(m);
        }
        let pairs = table.missing_pairs();
        if !pairs.is_empty() {
            let policies: Vec<&dyn Policy> = state
                .members
                .iter()
                .zip(&snapshots)
                .map(|(m, snapshot)| match (snapshot, tables.get(m.agent)) {
                    (Some(p), _) => &**p,
                    (None, Some(t)) => t as &dyn Policy,
                    (None, None) => &*networks[m.agent],
                })
                .collect();
            let matchups: Vec<Matchup> = pairs
                .iter()
                .flat_map(|&(i, j)| [Matchup { seats: vec![i, j] }, Matchup { seats: vec![j, i] }])
                .collect();
            let seed = derive_seed(self.config.seed, ENTRIES, &[round as u64]);
            let totals = self.evaluator.evaluate_until(
                arena,
                &policies,
                &matchups,
                self.config.episodes_per_entry,
                seed,
                &self.cutoff,
            )?;
            for (k, &(i, j)) in pairs.iter().enumerate() {
                let (a, b) = (totals[2 * k].mean(), totals[2 * k + 1].mean());
                let (a_vs_b, b_vs_a) = (0.5 * (a[0] + b[1]), 0.5 * (a[1] + b[0]));
                // The table keeps a missing entry as NaN: an evaluator's NaN is an error here.
                let ids = vec![state.members[i].id, state.members[j].id];
                if let Some((player, &value)) =
                    [a_vs_b, b_vs_a].iter().enumerate().find(|(_, x)| !x.is_finite())
                {
                    return Err(metagame_games::Error::NonFinitePayoff { player, profile: ids, value }.into());
                }
                table.set_pair(i, j, Some(a_vs_b), Some(b_vs_a));
                // Two snapshots' entries are final: logged once, in the order evaluated.
                let (x, y) = (&state.members[i], &state.members[j]);
                if x.snapped_at.is_some() && y.snapped_at.is_some() {
                    self.payoff_log.push(PayoffRecord { a: x.id, b: y.id, a_vs_b, b_vs_a })?;
                }
            }
            state.payoffs_logged = self.payoff_log.len();
        }
        // Payoffs as results in [0, 1], as matches score them, one "game" per pair.
        let scratch = &mut self.scratch;
        table.map_into(&mut scratch.scores, |x| to_score(x.unwrap_or(0.0), range));
        let batch =
            BatchElo::fit_scores(&BatchEloConfig::default(), n, &mut scratch.scores, &mut scratch.games)?;
        state.payoffs = Arc::new(table);
        state.keep_agent_payoffs();
        Ok((2 * pairs.len(), batch.ratings().to_vec()))
    }
    pub(super) fn report(
        &self,
        round: usize,
        episodes: u64,
        mut times: PhaseTimes,
        events: RoundEvents,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let mut main_nash_conv = Vec::new();
        let mut main_average_nash_conv = Vec::new();
        let mut exploitability = None;
        let mains = self.state.agents.iter().enumerate().filter(|(_, a)| a.role == Role::MainAgent);
        for a in mains.map(|(i, _)| i) {
            // Exact NashConv where the tree is built; a league of networks has none.
            let Some(tree) = self.tree else { break };
            let policy = combined(tree, &self.learners[a]);
            let r = metagame_games::nash_conv_report(tree, &[&policy, &policy])?;
            main_nash_conv.push(r.nash_conv);
            // Its snapshots' running sum plus its current policy, uniformly: O(policy size)
            // however many snapshots it has.
            let mut sum = match &self.state.snapshot_sums[a] {
                Some(sum) => MixtureSum::clone(sum),
                None => MixtureSum::new(tree),
            };
            sum.add(tree, &policy, 1.0)?;
            let average = sum.policy(tree)?;
            let r = metagame_games::nash_conv_report(tree, &[&average, &average])?;
            if exploitability.is_none() {
                exploitability = r.exploitability;
            }
            main_average_nash_conv.push(r.nash_conv);
        }
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let evaluated = !events.batch_elo.is_empty();
        let listed = round == 0 || evaluated;
        let mut report = IterationReport::new(
            round,
            vec![self.state.members.len()],
            main_average_nash_conv.first().copied(),
            exploitability,
        );
        report.episodes = episodes;
        report.times = times;
        report.details = Details::of(&LeagueReport {
            main_nash_conv,
            main_average_nash_conv,
            elo: if listed { self.state.elo.ratings().to_vec() } else { Vec::new() },
            agent_elo: self.state.agents.iter().map(|a| self.state.elo.ratings()[a.member]).collect(),
            matches_by_role: self.state.matches_by_role.clone(),
            members: self.state.members.len(),
            member_ids: if listed && self.state.evicted > 0 {
                self.state.members.iter().map(|m| m.id).collect()
            } else {
                Vec::new()
            },
            evicted: events.evicted,
            evictions: self.state.evicted,
            matches: events.matches,
            pfsp: events.hardness,
            snapshots: events.snapshots,
            win_rate_snapshots: events.win_rate_snapshots,
            resets: events.resets,
            batch_elo: events.batch_elo,
            evaluated_entries: events.evaluated_entries,
        });
        Ok(report)
    }
}
