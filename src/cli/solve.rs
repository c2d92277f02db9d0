//! `metagame solve (FILE.nfg | --game SPEC) --solver NAME [--iterations N] [--all] [--json]`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use metagame::games::{AnyGame, NormalFormGame, nfg, registry};

use metagame::solvers::{MetaSolver, Solution};
use serde_json::{Value, json};

#[derive(clap::Args)]
pub struct Args {
    /// A Gambit `.nfg` file (give this or `--game`).
    #[arg(value_name = "FILE.nfg", conflicts_with = "game", required_unless_present = "game")]
    file: Option<PathBuf>,
    /// A matrix game string, e.g. `matrix_rps` (give this or a file).
    #[arg(long)]
    game: Option<String>,
    /// The meta-solver, by its registry name (the same names as configs): uniform, nash, lp,
    /// lemke-howson, support-enumeration, vertex-enumeration, fictitious-play, rm, rm+, hedge,
    /// replicator, prd, alpha-rank, ce, cce, logit.
    #[arg(long)]
    solver: String,
    /// Iterations of an iterative solver (pivot or basis cap for the exact ones).
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// Return every equilibrium the solver finds (enumeration methods), not just one.
    #[arg(long)]
    all: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Repeat the solve N times and report the mean time per solve (`seconds_per_solve`,
    /// game loading excluded).
    #[arg(long, value_name = "N", hide = true)]
    repeat: Option<u32>,
}

fn load_game(args: &Args) -> anyhow::Result<(String, NormalFormGame)> {
    if let Some(path) = &args.file {
        let game = nfg::read_nfg(path).with_context(|| format!("reading {}", path.display()))?;
        return Ok((path.display().to_string(), game));
    }
    let Some(spec) = &args.game else { bail!("give a .nfg file or --game") };
    match registry::load(spec)? {
        AnyGame::Matrix(m) => Ok((spec.clone(), m.normal_form().clone())),
        _ => {
            bail!("`{spec}` is not a matrix game; solve takes a .nfg file or a matrix game string (matrix_*)")
        }
    }
}

fn run_solver(solver: &dyn MetaSolver, game: &NormalFormGame, all: bool) -> anyhow::Result<Vec<Solution>> {
    let solutions = if all { solver.solve_all(game)? } else { vec![solver.solve(game)?] };
    Ok(solutions)
}

/// A row-major tensor as nested JSON lists shaped like it.
fn nested(shape: &[usize], flat: &[f64]) -> Value {
    match shape.split_first() {
        None => json!(flat.first().copied().unwrap_or(0.0)),
        Some((&len, rest)) => {
            let stride: usize = rest.iter().product();
            Value::Array((0..len).map(|k| nested(rest, &flat[k * stride..(k + 1) * stride])).collect())
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (source, game) = load_game(&args)?;
    let solver = metagame::registry::meta_solver(&args.solver, args.iterations)?;
    let solutions = run_solver(solver.as_ref(), &game, args.all)
        .with_context(|| format!("solving {source} with {}", args.solver))?;
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
    let Some(first) = solutions.first() else { bail!("{} returned no solution for {source}", args.solver) };
    let nash_conv = solutions.iter().map(|s| s.certificate.nash_conv).fold(0.0, f64::max);
    let status = serde_json::to_value(first.status)?;
    // The LP's value of the game: the row player's payoff under the returned profile.
    let value = (args.solver == "lp").then(|| game.expected_payoffs(&first.strategies)[0]);
    if args.json {
        let mut out = json!({
            "solver": args.solver,
            "game": source,
            "status": status,
            "equilibria": solutions.iter().map(|s| &s.strategies).collect::<Vec<_>>(),
            "nash_conv": nash_conv,
            "iterations": first.iterations,
        });
        if let Some(v) = value {
            out["value"] = json!(v);
            out["primal_dual_gap"] = json!(first.certificate.primal_dual_gap);
        }
        if let Some(joint) = &first.joint {
            let flat: Vec<f64> = joint.iter().copied().collect();
            out["joint"] = nested(joint.shape(), &flat);
            out["max_violation"] = json!(first.certificate.max_violation);
        }
        if !first.stationary.is_empty() {
            out["stationary"] = json!(first.stationary);
        }
        if let Some(s) = seconds_per_solve {
            out["seconds_per_solve"] = json!(s);
            out["repeat"] = json!(args.repeat);
        }
        super::print_json(&out);
        return Ok(());
    }
    let shape: Vec<String> = game.shape().iter().map(ToString::to_string).collect();
    println!("game         {source} ({})", shape.join("x"));
    println!("solver       {}", args.solver);
    println!("status       {}", status.as_str().unwrap_or("?"));
    println!("equilibria   {}", solutions.len());
    for (k, s) in solutions.iter().enumerate() {
        println!("  #{k}  nash_conv {:.3e}", s.certificate.nash_conv);
        for (p, strategy) in s.strategies.iter().enumerate() {
            let probs: Vec<String> = strategy.iter().map(|v| format!("{v:.6}")).collect();
            println!("      player {p}: [{}]", probs.join(", "));
        }
    }
    println!("nash_conv    {nash_conv:.3e} (largest over the equilibria)");
    if let Some(v) = value {
        println!("value        {v}");
    }
    if let Some(mv) = first.certificate.max_violation {
        println!("max_violation {mv:.3e}");
    }
    if let Some(s) = seconds_per_solve {
        println!("seconds per solve {s:.3e}");
    }
    Ok(())
}
