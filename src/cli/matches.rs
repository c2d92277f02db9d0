//! `metagame matches --game SPEC --policies P1 P2 … [--episodes N] [--seed S]
//! [--evaluator exact|cpu|gpu|rollout] [--max-nodes N] [--json]`: the full payoff table among
//! policies of any kind, on any game (by rollouts where its tree passes the node limit).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::Context;
use metagame::EvaluatorName;
use metagame::games::{Game, Matchup, Policy};
use serde_json::json;

use super::args::TreeLimit;
use super::output::outln;

#[derive(clap::Args)]
pub struct Args {
    /// OpenSpiel-style game string, e.g. `leduc_poker`.
    #[arg(long)]
    game: String,
    /// Policies: `uniform`, `first-action`, `minimax`, OpenSpiel tabular policy JSON files. Each
    /// plays every seat; the table has one entry per joint choice (policies^players).
    #[arg(long, num_args = 1.., required = true, value_name = "POLICY")]
    policies: Vec<String>,
    /// Episodes per entry (sampled evaluators).
    #[arg(long, default_value_t = 100_000)]
    episodes: u64,
    /// Seed of the counter-based RNG: episode e of entry m draws from the stream (seed, m, e).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// `exact` (needs the tree), `cpu` (sampled: tables on the tree where the tree is built and
    /// tabulating pays, batched rollouts otherwise), `rollout` (batched rollouts always) or
    /// `gpu` (build with `--features cuda`; the same outcomes as `cpu` on a tree, and rollouts
    /// with the networks on the GPU without one).
    #[arg(long, default_value = "cpu")]
    evaluator: EvaluatorName,
    #[command(flatten)]
    limit: TreeLimit,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A policy that counts the decision points it is asked (tables answered from their rows on
/// a tree are not asked, and not counted), wherever it answers: placed on a device (`gpu`),
/// the placed policy counts into the same counter.
struct Counted {
    inner: Arc<dyn Policy>,
    decisions: Arc<AtomicU64>,
}

impl Policy for Counted {
    fn probabilities(
        &self,
        decisions: &metagame::games::Decisions<'_>,
        out: ndarray::ArrayViewMut2<'_, f32>,
    ) -> metagame::games::Result<()> {
        self.decisions.fetch_add(decisions.len() as u64, Ordering::Relaxed);
        self.inner.probabilities(decisions, out)
    }
    fn as_tabular(&self) -> Option<&metagame::games::TabularPolicy> {
        self.inner.as_tabular()
    }
    fn kind(&self) -> &str {
        self.inner.kind()
    }
    fn on_device(&self, device: &dyn metagame::games::Device) -> Option<Arc<dyn Policy>> {
        let placed = self.inner.on_device(device)?;
        Some(Arc::new(Counted { inner: placed, decisions: self.decisions.clone() }))
    }
}

/// Every joint entry, seat 0 most significant.
fn all_entries(num_policies: usize, num_players: usize) -> anyhow::Result<Vec<Matchup>> {
    Matchup::every(num_policies, num_players, 1 << 20)
        .with_context(|| format!("{num_policies} policies and {num_players} players make too many entries"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let kind = args.evaluator;
    if kind.samples() && args.episodes == 0 {
        anyhow::bail!("--episodes must be positive for the sampled evaluators");
    }
    let loaded = args.limit.load(&args.game)?;
    if kind == EvaluatorName::Exact {
        loaded.tree("exact evaluation")?;
    }
    let (game, arena) = (loaded.game(), loaded.arena());
    let policies = args
        .policies
        .iter()
        .map(|name| super::args::read_policy(arena, name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let evaluator = kind.build()?;
    let counted: Vec<Counted> = policies
        .into_iter()
        .map(|p| Counted { inner: Arc::from(p), decisions: Arc::new(AtomicU64::new(0)) })
        .collect();
    let refs: Vec<&dyn Policy> = counted.iter().map(|p| p as &dyn Policy).collect();
    let entries = all_entries(counted.len(), game.num_players())?;

    let start = Instant::now();
    let totals = evaluator
        .evaluate(arena, &refs, &entries, args.episodes, args.seed)
        .map_err(|e| super::args::name_policy(e, &args.policies))?;
    let seconds = start.elapsed().as_secs_f64();
    let exact = !kind.samples();
    let episodes_played: u64 = if exact { 0 } else { totals.iter().map(|t| t.episodes).sum() };
    let episodes_per_second = (!exact && seconds > 0.0).then(|| episodes_played as f64 / seconds);
    // Decision points the policies that are not tables were asked, in one batch or another.
    let decisions: u64 = counted.iter().map(|c| c.decisions.load(Ordering::Relaxed)).sum();

    let played = metagame::MatchesPlayed {
        evaluator: evaluator.name(),
        exact,
        policies: &args.policies,
        seed: args.seed,
        episodes: args.episodes,
        seconds,
    };
    if args.json {
        let mut table = metagame::matches_json(arena, &played, &entries, &totals);
        table["policy_decisions"] = json!(decisions);
        table["policy_decisions_per_second"] = json!((seconds > 0.0).then(|| decisions as f64 / seconds));
        super::output::print_json(&table);
    } else {
        let played_on =
            if arena.game_tree().is_some() { "its tree built" } else { "no tree: played on its states" };
        outln!(
            "game        {} ({} players; {}, {played_on})",
            game.name(),
            game.num_players(),
            loaded.size()
        );
        if exact {
            outln!("evaluator   exact (expected returns)");
        } else {
            outln!(
                "evaluator   {}, {} episodes per entry, seed {}",
                evaluator.name(),
                args.episodes,
                args.seed
            );
        }
        for (i, name) in args.policies.iter().enumerate() {
            outln!("policy {i:<4} {name}");
        }
        outln!("{:<14} {:<40} {:<40} episodes", "entry", "mean", "stderr");
        let fmt = |v: Vec<f64>| v.iter().map(|x| format!("{x:+.6}")).collect::<Vec<_>>().join(" ");
        for (m, t) in entries.iter().zip(&totals) {
            let seats = format!("{:?}", m.seats);
            let episodes = if exact { 0 } else { t.episodes };
            outln!("{seats:<14} {:<40} {:<40} {episodes}", fmt(t.mean()), fmt(t.stderr()));
        }
        if let Some(ratings) = metagame::batch_elo(arena, &played, &entries, &totals) {
            let mut order: Vec<usize> = (0..ratings.len()).collect();
            order.sort_by(|&a, &b| ratings[b].total_cmp(&ratings[a]).then(a.cmp(&b)));
            outln!("batch Elo (Bradley-Terry on both seatings' scores; the lowest at 0)");
            for i in order {
                outln!("  {:>8.1}  policy {i:<4} {}", ratings[i], args.policies[i]);
            }
        }
        if let Some(rate) = episodes_per_second {
            outln!("episodes per second  {rate:.3e} ({episodes_played} in {seconds:.3} s)");
        }
        if decisions > 0 {
            outln!(
                "policy decisions     {decisions} asked of the policies that are not tables ({:.3e} per second)",
                decisions as f64 / seconds.max(f64::MIN_POSITIVE)
            );
        }
    }
    Ok(())
}
