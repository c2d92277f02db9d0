//! The [`League`] loop itself: built new or from a checkpoint, its accessors and
//! components, and the [`TrainingLoop`] it is. Its rounds are in `round.rs`, its opponent
//! choice in `opponents.rs`, its evictions in `eviction.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use metagame_games::{
    Arena, ExactEvaluator, GameTree, MatchEvaluator, NormalFormGame, Policy, TabularPolicy,
};

use super::config::{LeagueConfig, Role};
use super::jobs::{LeagueTrainer, LocalTrainer, SeatLearners, combined, fresh_learners, restore_pair};
use super::network_agents::{self, NetworkPair};
use super::payoff_log::{PAYOFF_LOG_FILE, PayoffLog, PayoffRecord};
use super::rating::{Elo, EloConfig, Rating};
use super::report::{LeagueReport, RoundEvents};
use super::snapshot_folder::SnapshotFolder;
use super::snapshot_policy::SnapshotPolicy;
use super::state::{AgentState, LeagueMember, LeagueState, snapshot_sums_of_members};
use super::win_rates::{WinRates, WinRatesConfig};
use crate::error::{Error, Result};
use crate::member_policy::StoredPolicy;
use crate::report::{IterationReport, PhaseTimes, StopReason};
use crate::training_loop::{Cutoff, TrainingLoop};

/// An AlphaStar league on a 2-player game's tree.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, GameTree};
/// use metagame_populations::{run_loop, League, LeagueConfig, LeagueReport, RunLimits};
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let config = LeagueConfig::builder().episodes_per_round(2000).episodes_per_match(500).seed(1).build()?;
/// let mut league = League::new(&tree, config)?;
/// let run = run_loop(&mut league, &RunLimits::iterations(5), &mut ())?;
/// let last: LeagueReport = run.reports.last().unwrap().details.get().unwrap();
/// // Four matches per learning agent and round.
/// assert_eq!(last.matches.iter().map(|m| m.count).sum::<u64>(), 3 * 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct League<'t> {
    /// The game as matches are played on it.
    pub(super) arena: Arena<'t>,
    /// Its tree, where built: the learners are tables of it (networks through
    /// [`OnTree`](metagame_learners::OnTree)) and results, NashConv and averages exact.
    /// Without one the learners are networks ([`League::networks`]).
    pub(super) tree: Option<&'t GameTree>,
    /// The tree matches are played, learned and scored on: `tree` with win/loss returns
    /// when `outcome = "win"`, else `None` (the game's own).
    pub(super) wins: Option<GameTree>,
    pub(super) config: LeagueConfig,
    pub(super) state: LeagueState,
    /// The learning agents' learners on the tree (empty without one).
    pub(super) learners: Vec<SeatLearners>,
    /// The learning agents' network learners where the tree is not built (else empty).
    pub(super) networks: Vec<NetworkPair>,
    /// True once [`League::with_trainer`] gave a trainer, which trains tables only.
    pub(super) own_trainer: bool,
    /// Where the snapshots that are networks are kept, once given: they are then read back
    /// on demand instead of all held in memory.
    pub(super) snapshot_folder: Option<SnapshotFolder>,
    pub(super) evaluator: Box<dyn MatchEvaluator>,
    pub(super) trainer: Box<dyn LeagueTrainer>,
    /// The payoff table's entries among snapshots, as the run folder keeps them.
    pub(super) payoff_log: PayoffLog,
    /// When a round in progress gives up (checked between matches).
    pub(super) cutoff: Cutoff,
    /// The last committed round's report.
    pub(super) last: IterationReport,
    /// Evaluation points' members² buffers, kept between them: a long league's table is
    /// tens of megabytes, and fresh memory of that size costs more to map than to fill.
    pub(super) scratch: EvaluationScratch,
}

/// Buffers an evaluation point fills and a later one reuses ([`League::scratch`]).
#[derive(Debug, Default)]
pub(super) struct EvaluationScratch {
    /// The payoff table's cells, for the next table (the one before the last evaluation
    /// point, once no round's backup holds it).
    pub(super) table: Vec<f64>,
    /// The scores batch Elo is fitted on.
    pub(super) scores: Vec<f64>,
    /// Batch Elo's games between pairs.
    pub(super) games: Vec<f64>,
}

impl<'t> League<'t> {
    /// The run folder's file of the payoff table among snapshots (`payoffs.bin`; its format
    /// in [`read_payoff_log`](crate::read_payoff_log)'s module).
    pub const PAYOFF_LOG_FILE: &'static str = PAYOFF_LOG_FILE;

    /// A new league: the learning agents with fresh learners, and a snapshot of each main
    /// agent's initial (uniform) policy as the first historical players.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for settings out of range or a game that is not 2-player.
    pub fn new(tree: &'t GameTree, config: LeagueConfig) -> Result<Self> {
        Self::new_on(Arena::tree(tree), config)
    }
    /// A new league on the arena's game: on its tree where one is built (as
    /// [`League::new`]), else of network learners (the config's `[learner]`, `ppo` or
    /// `dqn`) whose snapshots are their networks, matches scored by their episodes'
    /// returns, evaluation points by the evaluator's rollouts, and no exact NashConv.
    ///
    /// # Errors
    ///
    /// As [`League::new`]; [`Error::Config`] without a tree for a tabular learner, `outcome
    /// = "win"`, Minimax Exploiters with `exploiter_critic = "exact"`, `exploiter_shift =
    /// "value-min"` or a learner without a critic, or a game that states no utility range.
    pub fn new_on(arena: impl Into<Arena<'t>>, config: LeagueConfig) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        let arena = arena.into();
        config.validate()?;
        check_arena(arena, &config)?;
        let tree = arena.game_tree();
        let wins = tree.and_then(|t| config.outcome.own_tree(t));
        let roles = std::iter::repeat_n(Role::MainAgent, config.main_agents)
            .chain(std::iter::repeat_n(Role::MainExploiter, config.main_exploiters))
            .chain(std::iter::repeat_n(Role::LeagueExploiter, config.league_exploiters));
        let mut members = Vec::new();
        let mut agents = Vec::new();
        let mut learners = Vec::new();
        let mut networks = Vec::new();
        for (i, role) in roles.enumerate() {
            members.push(LeagueMember { id: i, role, agent: i, snapped_at: None, policy: None });
            let saved = match wins.as_ref().or(tree) {
                Some(play) => {
                    let pair = fresh_learners(play, &config, i, 0, None)?;
                    let saved = pair.iter().map(|l| l.save()).collect();
                    learners.push(pair);
                    saved
                }
                None => {
                    let pair = network_agents::fresh_networks(arena, &config, i, 0, None)?;
                    let saved = pair.iter().map(|l| l.save()).collect();
                    networks.push(pair);
                    saved
                }
            };
            agents.push(AgentState {
                role,
                member: i,
                learners: saved,
                episodes_since_snapshot: 0,
                generation: 0,
                critics: Vec::new(),
            });
        }
        // Minimax main exploiters of networks read the main agents' critics as they are
        // when their generation starts.
        if tree.is_none() && config.exploiter_alpha > 0.0 {
            let critics = network_agents::main_critics(&agents, &networks)?;
            for a in agents.iter_mut().filter(|a| a.role == Role::MainExploiter) {
                a.critics = critics.clone();
            }
        }
        // Each main agent's initial policy is the first historical player: uniform on the
        // tree, its fresh networks without one.
        let uniform = tree.map(TabularPolicy::uniform);
        for (i, a) in agents.iter().enumerate() {
            if a.role == Role::MainAgent {
                let policy = match &uniform {
                    Some(table) => SnapshotPolicy::from(table.clone()),
                    None => network_agents::snapshot(&networks[i])?,
                };
                members.push(LeagueMember {
                    id: members.len(),
                    role: Role::MainAgent,
                    agent: i,
                    snapped_at: Some(0),
                    policy: Some(policy),
                });
            }
        }
        let win_rates = WinRates::new(WinRatesConfig::default(), members.len());
        let mut state = LeagueState {
            round: 0,
            elo: Elo::new(EloConfig::default(), members.len()),
            members,
            agents,
            win_rates,
            matches_by_role: BTreeMap::new(),
            payoffs: Arc::default(),
            payoffs_logged: 0,
            agent_payoffs: Vec::new(),
            evicted: 0,
            snapshot_sums: Vec::new(),
        };
        state.snapshot_sums = match tree {
            Some(tree) => snapshot_sums_of_members(tree, &state)?,
            None => vec![None; state.agents.len()],
        };
        let nash_conv = tree.map(|_| 0.0);
        let last = IterationReport::new(0, vec![state.members.len()], nash_conv, None);
        let mut league = Self::with_parts(arena, wins, config, state, (learners, networks), last)?;
        let mut report = league.report(0, 0, PhaseTimes::default(), RoundEvents::default())?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        league.last = report;
        Ok(league)
    }
    /// Continue from a saved state, the run's reports so far and the bytes of its payoff log
    /// ([`League::payoff_log`], the run folder's `payoffs.bin`; `None` where there is none:
    /// a state from before the log, or one that logged nothing).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the state does not fit the tree or the config;
    /// [`Error::SavedState`] for reports that are not the rounds 0 to the state's, or a
    /// payoff log that is missing or holds fewer records than the state names.
    pub fn resume(
        tree: &'t GameTree,
        config: LeagueConfig,
        state: LeagueState,
        reports: &[IterationReport],
        payoff_log: Option<&[u8]>,
    ) -> Result<Self> {
        Self::resume_on(Arena::tree(tree), config, state, reports, payoff_log)
    }
    /// [`League::resume`] on the arena's game (see [`League::new_on`]). The snapshots that
    /// are networks must have been loaded from their files
    /// ([`SnapshotPolicy::stored_mut`]).
    ///
    /// # Errors
    ///
    /// As [`League::resume`]; [`Error::SavedState`] for a snapshot not loaded, or one of
    /// another kind than the arena's learners (a table without the tree, a network with it).
    pub fn resume_on(
        arena: impl Into<Arena<'t>>,
        config: LeagueConfig,
        mut state: LeagueState,
        reports: &[IterationReport],
        payoff_log: Option<&[u8]>,
    ) -> Result<Self> {
        let arena = arena.into();
        config.validate()?;
        check_arena(arena, &config)?;
        let tree = arena.game_tree();
        for m in &state.members {
            let fits = match (&m.policy, tree) {
                (None, _) => true,
                (Some(p), Some(_)) => p.as_table().is_some(),
                (Some(p), None) => p.as_table().is_none() && p.stored().all(StoredPolicy::is_loaded),
            };
            if !fits {
                return Err(Error::SavedState(format!(
                    "member {}'s policy is not one this league on {} plays (a table needs the tree, a network's file must be loaded)",
                    m.id,
                    arena.name()
                )));
            }
        }
        crate::checkpoint::check_reports(reports, 0, state.round)?;
        // INVARIANT: check_reports saw round + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        let n = state.members.len();
        if state.agents.len() != config.num_agents()
            || n < state.agents.len()
            || state.elo.num_members() != n
            || state.win_rates.num_members() != n
            || state.agents.iter().enumerate().any(|(a, x)| x.member != a || state.members[a].agent != a)
        {
            return Err(Error::Config("the saved league has other agents than the config".into()));
        }
        if let Some(cap) = config.max_members
            && n > cap
        {
            return Err(Error::Config(format!(
                "the saved league has {n} members, more than max_members = {cap}"
            )));
        }
        if state.evicted == 0 {
            // Without evictions ids are positions (checkpoints from before ids have none).
            state.members.iter_mut().enumerate().for_each(|(i, m)| m.id = i);
        } else if state.members.windows(2).any(|w| w[0].id >= w[1].id)
            || state.members.last().is_some_and(|m| m.id >= state.next_id())
        {
            return Err(Error::Config(
                "the saved league's member ids are not in the order they joined".into(),
            ));
        }
        if state.snapshot_sums.is_empty() {
            if state.evicted > 0 {
                return Err(Error::Config(
                    "the saved league has evicted members but no snapshot sums".into(),
                ));
            }
            state.snapshot_sums = match tree {
                Some(tree) => snapshot_sums_of_members(tree, &state)?,
                None => vec![None; state.agents.len()],
            };
        }
        // Main agents keep sums of their snapshots where the tree is built, no one without.
        let sums_fit = state.snapshot_sums.len() == state.agents.len()
            && state.agents.iter().zip(&state.snapshot_sums).all(|(a, sum)| match (sum, tree) {
                (Some(sum), Some(tree)) => a.role == Role::MainAgent && sum.fits(tree),
                (None, Some(_)) => a.role != Role::MainAgent,
                (sum, None) => sum.is_none(),
            });
        if !sums_fit {
            return Err(Error::Config(
                "the saved league's snapshot sums do not fit its agents and game".into(),
            ));
        }
        let log = restore_payoffs(&mut state, payoff_log)?;
        let wins = tree.and_then(|t| config.outcome.own_tree(t));
        let learners = match wins.as_ref().or(tree) {
            Some(play) => {
                let pairs = state.agents.iter().map(|a| restore_pair(play, &a.learners));
                (pairs.collect::<Result<Vec<_>>>()?, Vec::new())
            }
            None => {
                let pairs = state.agents.iter().map(|a| network_agents::restore_networks(&a.learners));
                (Vec::new(), pairs.collect::<Result<Vec<_>>>()?)
            }
        };
        let mut league = Self::with_parts(arena, wins, config, state, learners, last)?;
        league.payoff_log = log;
        Ok(league)
    }
    /// The bytes of the payoff log among snapshots (the run folder's `payoffs.bin`), which
    /// [`League::resume`] takes back.
    pub fn payoff_log(&self) -> &[u8] {
        self.payoff_log.bytes()
    }
    /// A league of these parts with the default evaluator and trainer.
    pub(super) fn with_parts(
        arena: Arena<'t>,
        wins: Option<GameTree>,
        config: LeagueConfig,
        state: LeagueState,
        (learners, networks): (Vec<SeatLearners>, Vec<NetworkPair>),
        last: IterationReport,
    ) -> Result<Self> {
        // Exact entries on the tree; without one, batched rollouts of any policy.
        let evaluator: Box<dyn MatchEvaluator> = match arena.game_tree() {
            Some(_) => Box::new(ExactEvaluator),
            None => Box::new(metagame_games::RolloutEvaluator::new()),
        };
        let trainer = Box::new(LocalTrainer);
        let cutoff = Cutoff::default();
        let payoff_log = PayoffLog::default();
        let scratch = EvaluationScratch::default();
        Ok(Self {
            arena,
            tree: arena.game_tree(),
            wins,
            config,
            state,
            learners,
            networks,
            own_trainer: false,
            snapshot_folder: None,
            evaluator,
            trainer,
            payoff_log,
            cutoff,
            last,
            scratch,
        })
    }
    /// The tree matches are trained, played and scored on (see [`Outcome`](super::Outcome));
    /// `None` for a league of networks, on a game whose tree is not built.
    pub fn match_tree(&self) -> Option<&GameTree> {
        self.wins.as_ref().or(self.tree)
    }
    /// The win-rate table among all members, in [`LeagueState::members`] order: entry
    /// `[i][j]` is how often member `i` beats member `j` (ties ½), `None` for pairs that
    /// never played.
    pub fn win_rate_table(&self) -> Vec<Vec<Option<f64>>> {
        let w = &self.state.win_rates;
        let n = self.state.members.len();
        (0..n).map(|i| (0..n).map(|j| (w.games(i, j) > 0.0).then(|| w.win_rate(i, j))).collect()).collect()
    }
    /// The state (what a checkpoint saves).
    pub fn state(&self) -> &LeagueState {
        &self.state
    }
    /// The last committed round's report (round 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }
    /// The current policy of learning agent `agent` (its seat-0 learner's rows at seat 0,
    /// its seat-1 learner's at seat 1), as a table of the tree; `None` without one.
    pub fn agent_policy(&self, agent: usize) -> Option<TabularPolicy> {
        self.tree.map(|tree| combined(tree, &self.learners[agent]))
    }
    /// Learning agent `agent`'s network learners (seat 0's, seat 1's), in a league of
    /// networks; `None` in a league on the tree.
    pub fn agent_networks(&self, agent: usize) -> Option<&NetworkPair> {
        self.networks.get(agent)
    }
    /// The current policy of learning agent `agent` as it plays: its table, or its two
    /// seat networks.
    ///
    /// # Errors
    ///
    /// Network weights that no longer make a network.
    pub fn agent_playing(&self, agent: usize) -> Result<Arc<dyn Policy>> {
        match self.tree {
            Some(tree) => Ok(Arc::new(combined(tree, &self.learners[agent]))),
            None => network_agents::playing(&self.networks[agent]),
        }
    }
    /// The same league with payoff entries evaluated by `evaluator` (default: exact on the
    /// tree, batched rollouts without one).
    pub fn with_evaluator(mut self, evaluator: Box<dyn MatchEvaluator>) -> Self {
        self.evaluator = evaluator;
        self
    }
    /// The same league reading its network snapshots back from `folder` (the run folder
    /// its driver writes [`member_files`](TrainingLoop::member_files) into): from each
    /// round on, a snapshot whose files are written is let go of and read back when a match
    /// or an evaluation point needs it, at most [`LOADED_SNAPSHOTS`](super::LOADED_SNAPSHOTS)
    /// held loaded. Without one every snapshot stays in memory. A league of tables keeps
    /// its snapshots in its checkpoint, and this changes nothing for it.
    pub fn with_snapshot_folder(mut self, folder: SnapshotFolder) -> Self {
        self.snapshot_folder = Some(folder);
        self
    }
    /// Let go of the snapshots whose files the folder has now (see
    /// [`League::with_snapshot_folder`]).
    pub(super) fn release_written_snapshots(&mut self) {
        if let Some(folder) = &self.snapshot_folder {
            for policy in self.state.members.iter_mut().filter_map(|m| m.policy.as_mut()) {
                folder.release(policy);
            }
        }
    }
    /// The same league with its agents' training run by `trainer` (default [`LocalTrainer`]).
    pub fn with_trainer(mut self, trainer: Box<dyn LeagueTrainer>) -> Self {
        self.trainer = trainer;
        self.own_trainer = true;
        self
    }
}

impl TrainingLoop for League<'_> {
    type State = LeagueState;

    fn name(&self) -> &'static str {
        "league"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        League::step(self)
    }
    fn state(&self) -> &LeagueState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
    fn stop_reason(&self) -> Option<StopReason> {
        None
    }
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        self.cutoff = cutoff;
    }
    /// The snapshots' network files made this run.
    fn member_files(&self) -> Vec<(&str, &[u8])> {
        let snapshots = self.state.members.iter().filter_map(|m| m.policy.as_ref());
        snapshots.flat_map(SnapshotPolicy::pending_files).collect()
    }
    fn appended_files(&self) -> Vec<(&str, &[u8])> {
        vec![(PAYOFF_LOG_FILE, self.payoff_log.bytes())]
    }
    fn meta_game_file(&self) -> Option<&str> {
        Some(PAYOFF_LOG_FILE)
    }
    /// Members as nodes by id (learning agents as boxes, snapshots as ellipses with their
    /// round, evicted snapshots dotted), snapshot edges (dashed) from each agent to its
    /// snapshots, and for each agent the opponents it trained against with the number of
    /// matches; resets in the agents' labels.
    /// The payoff table among all members from the last evaluation point (member `i`'s mean
    /// payoff against member `j`, both seats averaged), when it covers every member; `None`
    /// without evaluation points or when members joined after the last one.
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        let n = self.state.members.len();
        let table = &self.state.payoffs;
        let complete = table.len() == n;
        let entry = |i: usize, j: usize| if i == j { Some(0.0) } else { table.get(i, j) };
        if !complete || (0..n).any(|i| (0..n).any(|j| entry(i, j).is_none())) {
            return Ok(None);
        }
        // INVARIANT: every entry checked above.
        let at = |i: usize, j: usize| entry(i, j).expect("an evaluated entry");
        let a = ndarray::Array2::from_shape_fn((n, n), |(i, j)| at(i, j));
        let b = ndarray::Array2::from_shape_fn((n, n), |(i, j)| at(j, i));
        Ok(Some(NormalFormGame::bimatrix(a, b)?))
    }
    fn lineage_dot(&self, reports: &[IterationReport]) -> Option<String> {
        use std::fmt::Write;
        let mut dot = String::from("digraph league {\n  rankdir=LR;\n");
        for m in &self.state.members {
            let id = m.id;
            let label = match m.snapped_at {
                None => {
                    let resets = self.state.agents[m.agent].generation;
                    format!("{} {} (agent {}; {resets} resets)", m.role.as_str(), id, m.agent)
                }
                Some(r) => format!("{} {} (snapshot of agent {} at round {r})", m.role.as_str(), id, m.agent),
            };
            let shape = if m.snapped_at.is_none() { "box" } else { "ellipse" };
            let _ = writeln!(dot, "  m{id} [label=\"{label}\", shape={shape}];");
            if m.snapped_at.is_some() {
                let _ = writeln!(dot, "  m{} -> m{id} [style=dashed];", self.state.agents[m.agent].member);
            }
        }
        let mut trained: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut evicted = std::collections::BTreeSet::new();
        for l in reports.iter().filter_map(|r| r.details.get::<LeagueReport>()) {
            for m in &l.matches {
                *trained.entry((m.member, m.opponent)).or_default() += m.count;
            }
            evicted.extend(l.evicted);
        }
        // Opponents evicted since: the reports name them, the state has them no more.
        let opponents: std::collections::BTreeSet<usize> = trained.keys().map(|&(_, b)| b).collect();
        for id in evicted.intersection(&opponents) {
            let _ = writeln!(dot, "  m{id} [label=\"member {id} (evicted)\", shape=ellipse, style=dotted];");
        }
        for ((a, b), n) in trained {
            let _ = writeln!(dot, "  m{a} -> m{b} [label=\"{n}\", color=gray40];");
        }
        dot.push_str("}\n");
        Some(dot)
    }
}

/// The payoff table of a resumed `state` and its log: from the log's bytes (the records the
/// state covers) and the learning agents' rows and columns, or, for a state from before the
/// log (its table inline), the log made from that table.
fn restore_payoffs(state: &mut LeagueState, bytes: Option<&[u8]>) -> Result<PayoffLog> {
    let n = state.members.len();
    let agents = state.agents.len();
    if !state.payoffs.is_empty() {
        // Inline (a checkpoint from before the log, or a state copied in memory): its pairs
        // of snapshots become the log.
        let table = &state.payoffs;
        let mut log = PayoffLog::default();
        for i in agents..n.min(table.len()) {
            for j in (i + 1)..n.min(table.len()) {
                if let (Some(a_vs_b), Some(b_vs_a)) = (table.get(i, j), table.get(j, i)) {
                    let (a, b) = (state.members[i].id, state.members[j].id);
                    log.push(PayoffRecord { a, b, a_vs_b, b_vs_a })?;
                }
            }
        }
        state.payoffs_logged = log.len();
        state.keep_agent_payoffs();
        return Ok(log);
    }
    let log = match bytes {
        Some(bytes) => PayoffLog::read(bytes, state.payoffs_logged)?,
        None if state.payoffs_logged == 0 => PayoffLog::default(),
        None => {
            return Err(Error::SavedState(format!(
                "the saved league names {} payoff records, and its {PAYOFF_LOG_FILE} is missing",
                state.payoffs_logged
            )));
        }
    };
    if state.payoffs_logged == 0 && state.agent_payoffs.is_empty() {
        return Ok(log);
    }
    // The table as the last evaluation point left it: its rows and columns (members who
    // joined since have none yet), the agents' from the state.
    let size = state.agent_payoffs.first().map_or(n, |[row, _]| row.len());
    let fits = |v: &Vec<Option<f64>>| v.len() == size;
    if state.agent_payoffs.len() != agents
        || size > n
        || !state.agent_payoffs.iter().all(|[r, c]| fits(r) && fits(c))
    {
        return Err(Error::Config("the saved league's agent payoffs do not fit its members".into()));
    }
    let ids: Vec<usize> = state.members[..size].iter().map(|m| m.id).collect();
    let mut table = log.table(&ids);
    for (a, [row, column]) in state.agent_payoffs.iter().enumerate() {
        for j in (0..size).filter(|&j| j != a) {
            table.set_pair(a, j, row[j], column[j]);
        }
    }
    state.payoffs = Arc::new(table);
    Ok(log)
}

/// Check that a league with `config` can be played on the arena: a 2-player game, and
/// without its tree, what a league of networks does.
fn check_arena(arena: Arena<'_>, config: &LeagueConfig) -> Result<()> {
    if arena.num_players() != 2 {
        return Err(Error::Config(format!(
            "a league needs a 2-player game, {} has {}",
            arena.name(),
            arena.num_players()
        )));
    }
    if arena.game_tree().is_some() {
        return Ok(());
    }
    let without = |what: &str| {
        Err(Error::Config(format!(
            "{what}: the tree of {} is not built, and a league of networks scores its matches by their episodes' returns",
            arena.name()
        )))
    };
    if config.outcome == super::config::Outcome::Win {
        return without(
            "outcome = \"win\" (a game whose returns are a win, a loss or a draw scores the same with \"payoff\")",
        );
    }
    if config.exploiter_alpha > 0.0 && config.exploiter_critic != metagame_learners::Critic::Learned {
        return without(
            "exploiter_critic = \"exact\" (exact values need the tree; \"learned\" reads the main agent's own critic)",
        );
    }
    if config.exploiter_alpha > 0.0 && config.exploiter_shift == metagame_learners::Shift::ValueMin {
        return without(
            "exploiter_shift = \"value-min\" (the main agent's smallest value over every state needs the tree; \"auto\" and \"reward-min\" shift by |R_min|)",
        );
    }
    if arena.game_rules().and_then(metagame_games::Game::utility_range).is_none() {
        return without("a game that states no utility range");
    }
    if !config.learner.config().trains_networks() {
        return Err(Error::Config(format!(
            "learner.kind: `{}` learns a table over the game's tree, and the tree of {} is not built; a league on it needs a network learner (ppo, dqn)",
            config.learner.name(),
            arena.name()
        )));
    }
    Ok(())
}
