//! League training after AlphaStar (Vinyals et al. 2019, Nature 575, and its pseudocode `multiagent.py`): main agents, main exploiters and
//! league exploiters learn from sampled episodes (any registered learner, tabular Q-learning by default, one learner per seat),
//! each round against opponents chosen by their role's rule with prioritised fictitious
//! self-play (PFSP); snapshots of them join the league as frozen historical players.
//!
//! One [`League::step`] is one round of `episodes_per_round` training episodes per learning
//! agent, played as matches of `episodes_per_match` episodes (half at each seat). In every
//! match each learning agent draws a fresh opponent from its role's distribution over the
//! league as it stands (randomness from Philox keyed by (seed, round, match, agent)) and
//! trains against it, the agents in parallel (rayon) and independently of the thread count;
//! then, in agent order, each match's result updates the win rates (AlphaStar's 0.99 decay,
//! per match as in the pseudocode) and the online Elo ratings, and agents that are ready
//! take a snapshot (main exploiters reset at every snapshot, league exploiters with
//! probability `league_exploiter_reset`; a reset agent's win rates start again from the
//! prior). A match's result is exact: the agent's expected outcome against its opponent
//! after the match's training, averaged over the two seats, read off the tree — with
//! `outcome = "payoff"` the expected utility mapped to [0, 1] over the game's utility range,
//! with `outcome = "win"` the win probability (ties ½), the learners then rewarded with the
//! win/loss outcome instead of the game's returns. The same result feeds every rule: the
//! learners' reward, win rates, PFSP, online and batch Elo and the snapshot rule. (AlphaStar's
//! StarCraft II returns are a win, a loss or a draw, where the two coincide.)
//!
//! What a round costs beyond its episodes: per match and learning agent, O(members) for
//! the opponent draw (the candidates' win rates) and the snapshot rule (the reference set's),
//! and O(policy size) for the match's exact result; the win-rate table holds only the pairs
//! that have played (O(agents · members)); the main agents' average policies are running
//! sums (O(policy size) per round, not per snapshot). What grows as members²: the evaluation
//! table every `eval_every` rounds (payoff entries among all members, batch Elo fitted on
//! them) and with it the checkpoint; `eval_every = 0` goes without it.
//!
//! AlphaStar keeps every historical player, and so does this league by default, growing
//! without bound (a 5 000-round Kuhn league had 2 497 members). `max_members` caps it: when a
//! snapshot makes the league one larger than the cap, one frozen snapshot is evicted — the
//! one the learning agents' PFSP draws from history give the least probability (the
//! eviction that changes matchmaking least), ties to the oldest, never the snapshot just
//! taken nor a main agent's only snapshot (the rule, and why not "the least chosen so far":
//! `eviction.rs`). Its win rates, Elo rating and payoff entries go with it; the
//! main agents' average policies keep every snapshot ever taken. Members keep their ids
//! ([`LeagueMember::id`], the order they joined, never reused), which reports name them by;
//! tables index the members as they stand ([`LeagueState::members`] order).
//!
//! On a game whose tree is not built ([`League::new_on`] with an arena of rules only) every
//! agent is a network learner per seat (`ppo`, `dqn`), a match's result is the mean return
//! of its training episodes, snapshots are their networks kept as files
//! ([`SnapshotPolicy`], [`SnapshotFolder`]), evaluation points are rollouts, and a Minimax
//! main exploiter reads the main agent's own critic, frozen when its generation starts
//! (`network_agents.rs`; docs/src/neural-league.md).
//!
//! Main exploiters are Minimax Exploiters when `exploiter_alpha > 0`: their reward is shaped
//! by the action values of the main agent they target — its own learned Q-values by default,
//! or the exact values of its policy — discounted by `exploiter_discount` and shifted by the
//! paper's rule (Bairamian et al. 2024, arXiv:2311.17190, Eq. 3–4).
//!
//! Config (the `league` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! main_agents = 1
//! main_exploiters = 1
//! league_exploiters = 1
//! episodes_per_round = 20000        # per learning agent, half at each seat
//! episodes_per_match = 2048         # 2 × learner.batch_size, at most episodes_per_round
//! outcome = "payoff"                # or "win"
//! snapshot_min_episodes = 200000    # AlphaStar's 2e9 steps, scaled to the game
//! snapshot_max_episodes = 400000    # AlphaStar's 4e9
//! snapshot_win_rate = 0.7
//! league_exploiter_reset = 0.25
//! exploiter_reset_to = "blank"      # or "main-agent"
//! exploiter_alpha = 0.0             # > 0: Minimax main exploiters
//! exploiter_discount = 0.995        # their shaping discount
//! exploiter_critic = "learned"      # or "exact"
//! exploiter_shift = "auto"          # or "reward-min", "value-min"
//! seed = 0
//! eval_every = 10                   # rounds between evaluation points (0: none)
//! episodes_per_entry = 1000         # sampled evaluators only
//! # max_members = 200               # a cap on members (default: none)
//! [learner]                         # kind = "q-learning" (default) or "actor-critic", and its settings
//! ```

mod config;
mod eviction;
mod jobs;
mod league_loop;
pub mod matchmaking;
mod member_payoffs;
mod network_agents;
mod opponents;
mod payoff_log;
pub mod rating;
mod report;
mod round;
mod snapshot_folder;
mod snapshot_policy;
mod state;
pub mod win_rates;

pub use config::{
    LeagueConfig, LeagueConfigBuilder, MAX_MATCHES_PER_ROUND, Outcome, ResetTo, Role, RoleMatchmaking,
};
pub use jobs::{
    LeagueTrainer, LocalTrainer, MinimaxTraining, SeatLearners, TrainingJob, TrainingJobData, learner_seed,
    restore_pair,
};
pub use league_loop::League;
pub use network_agents::NetworkPair;
pub use payoff_log::{PayoffRecord, read_payoff_log};
pub use report::{Branch, LeagueMatch, LeagueReport, PfspHardness};
pub use snapshot_folder::{LOADED_SNAPSHOTS, ReadPolicy, SnapshotFolder};
pub use snapshot_policy::{SeatPolicies, SnapshotPolicy};
pub use state::{LeagueMember, LeagueState};
