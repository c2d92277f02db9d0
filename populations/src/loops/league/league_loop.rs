//! The [`League`] loop itself: built new or from a checkpoint, its accessors and
//! components, and the [`TrainingLoop`] it is. Its rounds are in `round.rs`, its opponent
//! choice in `opponents.rs`, its evictions in `eviction.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use metagame_games::{ExactEvaluator, GameTree, MatchEvaluator, NormalFormGame, TabularPolicy};

use super::config::{LeagueConfig, Role};
use super::jobs::{LeagueTrainer, LocalTrainer, SeatLearners, combined, fresh_learners, restore_pair};
use super::payoff_log::{PAYOFF_LOG_FILE, PayoffLog, PayoffRecord};
use super::rating::{Elo, EloConfig, Rating};
use super::report::{LeagueReport, RoundEvents};
use super::state::{AgentState, LeagueMember, LeagueState, snapshot_sums_of_members};
use super::win_rates::{WinRates, WinRatesConfig};
use crate::error::{Error, Result};
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
    pub(super) tree: &'t GameTree,
    /// The tree matches are played, learned and scored on: `tree` with win/loss returns
    /// when `outcome = "win"`, else `None` (the game's own).
    pub(super) wins: Option<GameTree>,
    pub(super) config: LeagueConfig,
    pub(super) state: LeagueState,
    pub(super) learners: Vec<SeatLearners>,
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
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        config.validate()?;
        if tree.num_players() != 2 {
            return Err(Error::Config(format!(
                "a league needs a 2-player game, {} has {}",
                tree.name(),
                tree.num_players()
            )));
        }
        let wins = config.outcome.own_tree(tree);
        let play = wins.as_ref().unwrap_or(tree);
        let roles = std::iter::repeat_n(Role::MainAgent, config.main_agents)
            .chain(std::iter::repeat_n(Role::MainExploiter, config.main_exploiters))
            .chain(std::iter::repeat_n(Role::LeagueExploiter, config.league_exploiters));
        let mut members = Vec::new();
        let mut agents = Vec::new();
        let mut learners = Vec::new();
        for (i, role) in roles.enumerate() {
            members.push(LeagueMember { id: i, role, agent: i, snapped_at: None, policy: None });
            let pair = fresh_learners(play, &config, i, 0)?;
            agents.push(AgentState {
                role,
                member: i,
                learners: pair.iter().map(|l| l.save()).collect(),
                episodes_since_snapshot: 0,
                generation: 0,
            });
            learners.push(pair);
        }
        let uniform = TabularPolicy::uniform(tree);
        for (i, a) in agents.iter().enumerate() {
            if a.role == Role::MainAgent {
                members.push(LeagueMember {
                    id: members.len(),
                    role: Role::MainAgent,
                    agent: i,
                    snapped_at: Some(0),
                    policy: Some(Arc::new(uniform.clone())),
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
        state.snapshot_sums = snapshot_sums_of_members(tree, &state)?;
        let last = IterationReport::new(0, vec![state.members.len()], Some(0.0), None);
        let mut league = Self::with_parts(tree, wins, config, state, learners, last)?;
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
        mut state: LeagueState,
        reports: &[IterationReport],
        payoff_log: Option<&[u8]>,
    ) -> Result<Self> {
        config.validate()?;
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
            state.snapshot_sums = snapshot_sums_of_members(tree, &state)?;
        }
        let sums_fit = state.snapshot_sums.len() == state.agents.len()
            && state.agents.iter().zip(&state.snapshot_sums).all(|(a, sum)| match sum {
                Some(sum) => a.role == Role::MainAgent && sum.fits(tree),
                None => a.role != Role::MainAgent,
            });
        if !sums_fit {
            return Err(Error::Config(
                "the saved league's snapshot sums do not fit its agents and game".into(),
            ));
        }
        let log = restore_payoffs(&mut state, payoff_log)?;
        let wins = config.outcome.own_tree(tree);
        let play = wins.as_ref().unwrap_or(tree);
        let learners =
            state.agents.iter().map(|a| restore_pair(play, &a.learners)).collect::<Result<Vec<_>>>()?;
        let mut league = Self::with_parts(tree, wins, config, state, learners, last)?;
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
        tree: &'t GameTree,
        wins: Option<GameTree>,
        config: LeagueConfig,
        state: LeagueState,
        learners: Vec<SeatLearners>,
        last: IterationReport,
    ) -> Result<Self> {
        let (evaluator, trainer) = (Box::new(ExactEvaluator), Box::new(LocalTrainer));
        let cutoff = Cutoff::default();
        let payoff_log = PayoffLog::default();
        let scratch = EvaluationScratch::default();
        Ok(Self {
            tree,
            wins,
            config,
            state,
            learners,
            evaluator,
            trainer,
            payoff_log,
            cutoff,
            last,
            scratch,
        })
    }
    /// The tree matches are trained, played and scored on (see [`Outcome`](super::Outcome)).
    pub fn match_tree(&self) -> &GameTree {
        self.wins.as_ref().unwrap_or(self.tree)
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
    /// its seat-1 learner's at seat 1).
    pub fn agent_policy(&self, agent: usize) -> TabularPolicy {
        combined(self.tree, &self.learners[agent])
    }
    /// The same league with payoff entries evaluated by `evaluator` (default: exact).
    pub fn with_evaluator(mut self, evaluator: Box<dyn MatchEvaluator>) -> Self {
        self.evaluator = evaluator;
        self
    }
    /// The same league with its agents' training run by `trainer` (default [`LocalTrainer`]).
    pub fn with_trainer(mut self, trainer: Box<dyn LeagueTrainer>) -> Self {
        self.trainer = trainer;
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
