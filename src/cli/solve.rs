//! `metagame solve (FILE.nfg | --game SPEC) --solver NAME [--iterations N] [--all] [--json]`;
//! `metagame solve --game SPEC [--out DIR] [--json]` for a two-player zero-sum extensive-form
//! game, by the sequence-form LP (the `sequence_form` module).

use std::time::Instant;

use anyhow::{Context, bail};
use metagame::games::{AnyGame, NormalFormGame, nfg, registry};

use metagame::solvers::nash::Nash;
use metagame::solvers::{MetaSolver, Solution};
use serde_json::{Value, json};

use super::output::outln;

mod args;
mod sequence_form;

pub use args::Args;

/// What `--game` or the file names.
enum Loaded {
    NormalForm(String, NormalFormGame),
    Extensive(String),
}

fn load_game(args: &Args) -> anyhow::Result<Loaded> {
    if let Some(path) = &args.file {
        let game = nfg::read_nfg(path).with_context(|| format!("reading {}", path.display()))?;
        return Ok(Loaded::NormalForm(path.display().to_string(), game));
    }
    let Some(spec) = &args.game else { bail!("give a .nfg file or --game") };
    match registry::load(spec)? {
        AnyGame::Matrix(m) => Ok(Loaded::NormalForm(spec.clone(), m.normal_form().clone())),
        _ => Ok(Loaded::Extensive(spec.clone())),
    }
}

fn run_solver(solver: &dyn MetaSolver, game: &NormalFormGame, all: bool) -> anyhow::Result<Vec<Solution>> {
    let solutions = if all { solver.solve_all(game)? } else { vec![solver.solve(game)?] };
    Ok(solutions)
}

/// A row-major tensor as nested JSON lists shaped like it (a number for an empty shape),
/// built axis by axis from the innermost out.
fn nested(shape: &[usize], flat: &[f64]) -> Value {
    let mut level: Vec<Value> = flat.iter().map(|&x| json!(x)).collect();
    for (axis, &len) in shape.iter().enumerate().rev() {
        let groups: usize = shape[..axis].iter().product();
        let mut items = level.into_iter();
        level = (0..groups).map(|_| Value::Array(items.by_ref().take(len).collect())).collect();
    }
    level.into_iter().next().unwrap_or_else(|| json!(0.0))
}

/// Probabilities as `[0.500000, 0.500000]`.
fn probabilities(values: &[f64]) -> String {
    let probs: Vec<String> = values.iter().map(|v| format!("{v:.6}")).collect();
    format!("[{}]", probs.join(", "))
}

/// A distribution over pure profiles (row-major over `shape`), one line per profile of all
/// but the last player: `(i, j, :) [...]`.
fn print_profiles(shape: &[usize], flat: &[f64]) {
    let last = shape.last().copied().unwrap_or(1).max(1);
    let outer = &shape[..shape.len().saturating_sub(1)];
    for (row, chunk) in flat.chunks(last).enumerate() {
        let mut index = Vec::with_capacity(shape.len());
        let mut rest = row;
        for &k in outer.iter().rev() {
            index.push((rest % k.max(1)).to_string());
            rest /= k.max(1);
        }
        index.reverse();
        index.push(":".into());
        outln!("      ({}) {}", index.join(", "), probabilities(chunk));
    }
}

fn print_marginals(strategies: &[Vec<f64>]) {
    for (p, strategy) in strategies.iter().enumerate() {
        outln!("      player {p}: {}", probabilities(strategy));
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (source, game) = match load_game(&args)? {
        Loaded::NormalForm(source, game) => (source, game),
        Loaded::Extensive(spec) => return sequence_form::run(&spec, &args),
    };
    if args.out.is_some() {
        bail!("--out writes the policies of an extensive-form game; {source} is a normal-form game");
    }
    let Some(solver_name) = args.solver.as_deref() else {
        bail!("give --solver for the normal-form game {source} (e.g. --solver lp)")
    };
    let solver = metagame::registry::meta_solver(solver_name, args.iterations)?;
    let solutions = run_solver(solver.as_ref(), &game, args.all)
        .with_context(|| format!("solving {source} with {solver_name}"))?;
    let seconds_per_solve = match args.repeat {
        Some(n) if n > 0 => {
            let start = Instant::now();
            for _ in 0..n {
                std::hint::black_box(run_solver(solver.as_ref(), std::hint::black_box(&game), args.all)?);
            }
            Some(start.elapsed().as_secs_f64() / f64::from(n))
        }
        _ => None,
    };
    let Some(first) = solutions.first() else { bail!("{solver_name} returned no solution for {source}") };
    let nash_conv = solutions.iter().map(|s| s.certificate.nash_conv).fold(0.0, f64::max);
    let status = serde_json::to_value(first.status)?;
    // What the answer is: Nash equilibria (mixed profiles), or a CE/CCE's joint distribution
    // or alpha-Rank's stationary distributions, each with the marginals as `strategies`.
    let (joint, stationary) = (first.joint(), first.stationary());
    let is_profile = joint.is_none() && stationary.is_none();
    // An equilibrium is an answer whose certificate (NashConv, computed from the game) is
    // within the `nash` chain's tolerance, whatever made the solver stop; anything else is
    // reported, not counted.
    let tolerance = Nash::CERTIFICATE_TOLERANCE * game.payoff_scale().max(f64::MIN_POSITIVE);
    let certified =
        |s: &&Solution| s.certificate.nash_conv.is_finite() && s.certificate.nash_conv <= tolerance;
    let (equilibria, uncertified): (Vec<&Solution>, Vec<&Solution>) = solutions.iter().partition(certified);
    if args.json {
        let mut out = json!({
            "solver": solver_name,
            "game": source,
            "status": status,
            "nash_conv": nash_conv,
            "iterations": first.iterations,
        });
        if is_profile {
            out["equilibria"] = json!(equilibria.iter().map(|s| &s.strategies).collect::<Vec<_>>());
            if !uncertified.is_empty() {
                out["uncertified"] = json!(uncertified.iter().map(|s| &s.strategies).collect::<Vec<_>>());
            }
        } else {
            out["marginals"] = json!(first.strategies);
        }
        if let Some(v) = first.value() {
            out["value"] = json!(v);
            out["primal_dual_gap"] = json!(first.certificate.primal_dual_gap);
        }
        if let Some(joint) = joint {
            let flat: Vec<f64> = joint.iter().copied().collect();
            out["joint"] = nested(joint.shape(), &flat);
            out["max_violation"] = json!(first.certificate.max_violation);
        }
        if let Some(stationary) = stationary {
            out["stationary"] = json!(stationary);
        }
        if let Some(s) = seconds_per_solve {
            out["seconds_per_solve"] = json!(s);
            out["repeat"] = json!(args.repeat);
        }
        super::output::print_json(&out);
        return Ok(());
    }
    let shape: Vec<String> = game.shape().iter().map(ToString::to_string).collect();
    let shape = shape.join("x");
    outln!("game         {source} ({shape})");
    outln!("solver       {solver_name}");
    outln!("status       {}", status.as_str().unwrap_or("?"));
    if let Some(joint) = joint {
        let flat: Vec<f64> = joint.iter().copied().collect();
        outln!("joint        distribution over the {shape} pure profiles");
        print_profiles(joint.shape(), &flat);
        outln!("marginals    of the joint distribution");
        print_marginals(&first.strategies);
        outln!("nash_conv    {} (of the marginals)", super::output::gap(nash_conv));
    } else if let Some(stationary) = stationary {
        let over_profiles = stationary.first().is_some_and(|pi| pi.len() == game.num_profiles());
        let over = if over_profiles {
            format!("the {shape} pure profiles")
        } else {
            "strategies (one population)".into()
        };
        let count = match stationary.len() {
            1 => "1 distribution".to_string(),
            n => format!("{n} distributions (one per closed class)"),
        };
        outln!("stationary   {count} over {over}");
        for (k, pi) in stationary.iter().enumerate() {
            outln!("  #{k}");
            if over_profiles {
                print_profiles(game.shape(), pi);
            } else {
                outln!("      {}", probabilities(pi));
            }
        }
        outln!("marginals    of the mean stationary distribution");
        print_marginals(&first.strategies);
        outln!("nash_conv    {} (of the marginals)", super::output::gap(nash_conv));
    } else {
        if equilibria.is_empty() {
            outln!(
                "equilibria   none found (status {}, NashConv {})",
                status.as_str().unwrap_or("?"),
                super::output::gap(nash_conv)
            );
        } else {
            outln!("equilibria   {}", equilibria.len());
        }
        for (k, s) in equilibria.iter().enumerate() {
            outln!("  #{k}  nash_conv {}", super::output::gap(s.certificate.nash_conv));
            print_marginals(&s.strategies);
        }
        if !uncertified.is_empty() {
            outln!("not equilibria (NashConv above {tolerance:.1e})");
            for (k, s) in uncertified.iter().enumerate() {
                let status = serde_json::to_value(s.status)?;
                let status = status.as_str().unwrap_or("?");
                outln!("  #{k}  status {status}, nash_conv {}", super::output::gap(s.certificate.nash_conv));
                print_marginals(&s.strategies);
            }
        }
        outln!("nash_conv    {} (largest over the answers)", super::output::gap(nash_conv));
    }
    if let Some(v) = first.value() {
        outln!("value        {v}");
    }
    if let Some(mv) = first.certificate.max_violation {
        outln!("max_violation {mv:.3e}");
    }
    if let Some(s) = seconds_per_solve {
        outln!("seconds per solve {s:.3e}");
    }
    Ok(())
}
