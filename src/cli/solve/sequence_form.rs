//! `metagame solve --game SPEC [--out DIR] [--json]` for an extensive-form game: the exact
//! equilibrium of a two-player zero-sum game by the sequence-form LP, with its value and
//! its certificate recomputed from the tree.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};
use metagame::solvers::sequence_form_lp::{SequenceFormLp, SequenceFormSolution};
use serde_json::json;

use super::args::Args;
use crate::cli::output::outln;

/// The one solver an extensive-form game takes (its name in `--solver` and the output).
const SOLVER: &str = "sequence-form-lp";

pub fn run(spec: &str, args: &Args) -> anyhow::Result<()> {
    if let Some(name) = args.solver.as_deref().filter(|&n| n != SOLVER) {
        bail!(
            "{spec} is an extensive-form game, solved by `--solver {SOLVER}` only; `{name}` is for normal-form games"
        );
    }
    if args.all || args.iterations.is_some() {
        bail!("--all and --iterations are for normal-form solvers; {SOLVER} finds one exact equilibrium");
    }
    if let Some(out) = args.out.as_ref().filter(|out| !out.is_dir()) {
        bail!("--out {}: not a folder (create it first)", out.display());
    }
    let start = Instant::now();
    let loaded = args.limit.load(spec)?;
    let tree = loaded.tree("the sequence-form LP")?;
    let tree_build_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let solved = SequenceFormLp::default().solve(tree).with_context(|| format!("solving {spec}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let seconds_per_solve = match args.repeat {
        Some(n) if n > 0 => {
            let start = Instant::now();
            for _ in 0..n {
                std::hint::black_box(SequenceFormLp::default().solve(std::hint::black_box(tree))?);
            }
            Some(start.elapsed().as_secs_f64() / f64::from(n))
        }
        _ => None,
    };
    if let Some(out) = &args.out {
        write_policies(out, tree, &solved)?;
    }
    let status = serde_json::to_value(solved.status)?;
    if args.json {
        let mut out = json!({
            "solver": SOLVER,
            "game": tree.name(),
            "status": status,
            "value": solved.value,
            "nash_conv": solved.nash_conv,
            "exploitability": solved.nash_conv / 2.0,
            "iterations": solved.iterations,
            "seconds": seconds,
            "tree_build_seconds": tree_build_seconds,
        });
        if let Some(dir) = &args.out {
            out["out"] = json!(dir);
        }
        if let Some(s) = seconds_per_solve {
            out["seconds_per_solve"] = json!(s);
            out["repeat"] = json!(args.repeat);
        }
        crate::cli::output::print_json(&out);
        return Ok(());
    }
    outln!("game         {}", tree.name());
    outln!("solver       {SOLVER}");
    outln!("status       {}", status.as_str().unwrap_or("?"));
    outln!("value        {} (player 0's expected return)", solved.value);
    outln!("nash_conv    {} (from the tree)", crate::cli::output::gap(solved.nash_conv));
    outln!("seconds      {seconds:.3} (tree built in {tree_build_seconds:.3})");
    if let Some(dir) = &args.out {
        outln!("policies     {}/{{policy,player_0,player_1}}.json", dir.display());
    }
    if let Some(s) = seconds_per_solve {
        outln!("seconds per solve {s:.3e}");
    }
    Ok(())
}

/// `policy.json` (both players' rows) and one file per player (its rows, the other's
/// uniform), as OpenSpiel tabular policies.
fn write_policies(
    dir: &Path,
    tree: &metagame::games::GameTree,
    solved: &SequenceFormSolution,
) -> anyhow::Result<()> {
    let write = |name: String, text: String| {
        metagame::populations::checkpoint::write_atomic(&dir.join(&name), text.as_bytes())
            .with_context(|| format!("writing {}", dir.join(&name).display()))
    };
    write("policy.json".into(), solved.profile(tree).to_openspiel_json(tree))?;
    for p in 0..tree.num_players() {
        write(format!("player_{p}.json"), solved.policies[p].to_openspiel_json(tree))?;
    }
    Ok(())
}
