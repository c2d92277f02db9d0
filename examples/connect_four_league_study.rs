//! A league of networks on connect four, read as a researcher reads one: the main agent's
//! Elo and its win rate against fixed opponents over the rounds, and which opponents PFSP
//! chose among the candidates.
//!
//! ```text
//! cargo run --release --example connect_four_league_study -- --out DIR
//!     [--rounds 120] [--every 10] [--episodes 300] [--seed 0]
//! ```
//!
//! The league is `examples/connect_four_league.toml`'s (one main agent, one Minimax main
//! exploiter, one league exploiter matched by Elo; PPO one network per seat), run by the
//! library's [`League`] for `--rounds` rounds. Every `--every` rounds the main agent's
//! current networks play `--episodes` episodes at each seat against three fixed opponents:
//! uniform play, a one-ply lookahead (`alpha-beta(depth=1)`: takes a win when there is one)
//! and depth-4 alpha–beta (`alpha-beta(depth=4)`: also blocks and sets up wins); the win
//! rate counts a draw as ½ and averages the two seats.
//!
//! Writes `DIR/win_rates.csv`, `DIR/win_rates.svg` (win rate against each fixed opponent),
//! `DIR/elo.csv`, `DIR/elo.svg` (the main agent's online Elo), `DIR/pfsp.csv` (for each
//! historical player: how often the main agent's PFSP branch chose it, its final win rate
//! against the main agent) and `DIR/table.md`.

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

use metagame::games::{
    Arena, ConnectFourSearch, Cutoff, MatchEvaluator, Matchup, Policy, RolloutEvaluator, Uniform, registry,
};
use metagame::plots::{Curve, compare_linear_svg};
use metagame::populations::loops::league::Branch;
use metagame::populations::{League, LeagueConfig, LeagueConfigBuilder, LeagueReport};

/// Any error, for the study's one line.
pub type BoxResult<T> = Result<T, Box<dyn Error>>;

/// The study's settings.
pub struct Options {
    /// Output folder (created if missing).
    pub out: PathBuf,
    /// League rounds.
    pub rounds: usize,
    /// Rounds between evaluations against the fixed opponents.
    pub every: usize,
    /// Episodes per seat behind each win rate.
    pub episodes: u64,
    /// The league's seed.
    pub seed: u64,
}

/// The example config's league settings, with `seed`.
fn league_config(seed: u64) -> BoxResult<LeagueConfig> {
    let text = include_str!("connect_four_league.toml");
    let config =
        metagame::ExperimentConfig::from_toml_str(text, std::path::Path::new("connect_four_league.toml"))?;
    let metagame::AlgorithmConfig::League(section) = config.algorithm() else {
        return Err("connect_four_league.toml is a league".into());
    };
    Ok(LeagueConfigBuilder::from(section.league.clone()).seed(seed).build()?)
}

/// `policy`'s win rate against `opponent` (a draw ½, both seats averaged).
fn win_rate(
    arena: Arena<'_>,
    policy: &dyn Policy,
    opponent: &dyn Policy,
    episodes: u64,
    seed: u64,
) -> BoxResult<f64> {
    let matchups = [Matchup { seats: vec![0, 1] }, Matchup { seats: vec![1, 0] }];
    let totals = RolloutEvaluator::new().evaluate_until(
        arena,
        &[policy, opponent],
        &matchups,
        episodes,
        seed,
        &Cutoff::never(),
    )?;
    Ok(0.25 * (totals[0].mean()[0] + 1.0) + 0.25 * (totals[1].mean()[1] + 1.0))
}

/// Run the study into `o.out`.
///
/// # Errors
///
/// Library errors; files that cannot be written.
pub fn run(o: &Options) -> BoxResult<()> {
    std::fs::create_dir_all(&o.out)?;
    let game = registry::load("connect_four")?;
    let arena = Arena::rules(&game);
    let fixed: Vec<(&str, Box<dyn Policy>)> = vec![
        ("uniform", Box::new(Uniform)),
        ("one-ply lookahead", Box::new(ConnectFourSearch::new(1)?)),
        ("alpha-beta, depth 4", Box::new(ConnectFourSearch::new(4)?)),
    ];
    let mut league = League::new_on(arena, league_config(o.seed)?)?;
    let mut rates: Vec<Vec<(f64, f64)>> = vec![Vec::new(); fixed.len()];
    let mut elo = Vec::new();
    let mut csv = String::from("round,opponent,win_rate\n");
    let mut reports = Vec::new();
    let started = std::time::Instant::now();
    for round in 0..=o.rounds {
        if round > 0 {
            reports.push(league.step()?.clone());
        }
        let report: LeagueReport = league.last_report().details.get().ok_or("a league report")?;
        elo.push((round as f64, report.agent_elo[0]));
        if round % o.every == 0 {
            let main = league.agent_playing(0)?;
            for (k, (name, opponent)) in fixed.iter().enumerate() {
                let r = win_rate(arena, &*main, &**opponent, o.episodes, round as u64)?;
                rates[k].push((round as f64, r));
                let _ = writeln!(csv, "{round},{name},{r:.4}");
            }
            eprintln!(
                "round {round}: {} members, Elo {:.0}, win rates {:?} ({:.0} s)",
                report.members,
                report.agent_elo[0],
                rates
                    .iter()
                    .map(|r| r.last().map_or(0.0, |p| (p.1 * 100.0).round() / 100.0))
                    .collect::<Vec<_>>(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    std::fs::write(o.out.join("win_rates.csv"), csv)?;
    let curves: Vec<Curve> = fixed
        .iter()
        .zip(&rates)
        .map(|((name, _), points)| Curve { label: (*name).to_string(), runs: vec![points.clone()] })
        .collect();
    compare_linear_svg(
        &curves,
        "Connect four league: the main agent against fixed opponents",
        ("round", "win rate (draw 1/2, both seats)"),
        (0.0, 1.0),
        &o.out.join("win_rates.svg"),
    )?;
    let elo_csv: String = std::iter::once("round,elo\n".to_string())
        .chain(elo.iter().map(|(r, e)| format!("{r},{e:.2}\n")))
        .collect();
    std::fs::write(o.out.join("elo.csv"), elo_csv)?;
    let (low, high) =
        elo.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
    compare_linear_svg(
        &[Curve { label: "main agent (online Elo)".into(), runs: vec![elo.clone()] }],
        "Connect four league: the main agent's Elo",
        ("round", "Elo"),
        ((low - 10.0).floor(), (high + 10.0).ceil()),
        &o.out.join("elo.svg"),
    )?;
    // PFSP's choices for the main agent among every historical player, and each one's
    // final win rate against it (how hard it is, which PFSP weighs).
    let mut chosen: std::collections::BTreeMap<usize, u64> = std::collections::BTreeMap::new();
    for r in &reports {
        let l: LeagueReport = r.details.get().ok_or("a league report")?;
        for m in l.matches.iter().filter(|m| m.agent == 0 && m.branch == Branch::Pfsp) {
            *chosen.entry(m.opponent).or_default() += m.count;
        }
    }
    let state = league.state();
    let mut pfsp = String::from("member,role,snapped_at,chosen_by_pfsp,win_rate_against_main\n");
    for (i, m) in state.members().iter().enumerate().filter(|(_, m)| m.snapped_at.is_some()) {
        let rate = state.win_rates().win_rate(i, 0);
        let times = chosen.get(&m.id).copied().unwrap_or(0);
        let _ =
            writeln!(pfsp, "{},{},{},{times},{rate:.4}", m.id, m.role.as_str(), m.snapped_at.unwrap_or(0));
    }
    std::fs::write(o.out.join("pfsp.csv"), pfsp)?;
    let mut table = String::from("| round | Elo |");
    for (name, _) in &fixed {
        let _ = write!(table, " vs {name} |");
    }
    table.push_str("\n|---|---|");
    table.push_str(&"---|".repeat(fixed.len()));
    table.push('\n');
    for (k, &(round, _)) in rates[0].iter().enumerate() {
        let _ = write!(table, "| {round} | {:.0} |", elo[round as usize].1);
        for r in &rates {
            let _ = write!(table, " {:.2} |", r[k].1);
        }
        table.push('\n');
    }
    std::fs::write(o.out.join("table.md"), &table)?;
    eprint!("{table}");
    Ok(())
}

/// The settings from the command line.
///
/// # Errors
///
/// An unknown flag, a missing or unreadable value, no `--out`.
pub fn parse(args: &[String]) -> BoxResult<Options> {
    let mut o = Options { out: PathBuf::new(), rounds: 120, every: 10, episodes: 300, seed: 0 };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} takes a value"))?;
        match flag.as_str() {
            "--out" => o.out = PathBuf::from(value),
            "--rounds" => o.rounds = value.parse()?,
            "--every" => o.every = value.parse()?,
            "--episodes" => o.episodes = value.parse()?,
            "--seed" => o.seed = value.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if o.out.as_os_str().is_empty() {
        return Err("--out DIR is required".into());
    }
    if o.every == 0 {
        return Err("--every: at least 1".into());
    }
    Ok(o)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = parse(&args).and_then(|o| run(&o)) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
