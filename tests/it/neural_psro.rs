//! Neural PSRO as a user runs it (issue 39): `oracle = "ppo"` on a game whose tree is built
//! (exact NashConv of the networks tabulated) and on one too big for a tree (connect four),
//! members as safetensors files read back by the commands, a killed run resumed to the
//! uninterrupted one; and `exploitability --approximate`.

use std::ops::ControlFlow;
use std::path::Path;

use metagame::populations::RunLimits;
use metagame::{ExperimentConfig, RunOptions, RunReport, run_experiment};

use crate::cli::{json_of, metagame, one_line_error, temp_dir};

fn config(text: &str) -> ExperimentConfig {
    ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap()
}

fn run(config: &ExperimentConfig, dir: &Path, resume: bool, stop_after: Option<usize>) -> Option<RunReport> {
    let options = RunOptions::new(dir).resume(resume).stop_after(stop_after);
    run_experiment(config, &options, &mut |_| ControlFlow::Continue(())).unwrap()
}

/// Members written by a run, as files.
fn member_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> =
        std::fs::read_dir(dir.join("members")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn ppo_psro_on_kuhn_lowers_the_exact_nash_conv_and_its_members_read_back() {
    let c = config(
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\noracle = \"ppo\"\nseed = 2\nmax_iterations = 4\n\
         [learner]\nepisodes_per_response = 4000\n",
    );
    let dir = temp_dir("neural-psro-kuhn");
    let report = run(&c, &dir, false, None).unwrap();
    let first = report.iterations[0].nash_conv.unwrap();
    let last = report.iterations.last().unwrap().nash_conv.unwrap();
    assert!(last < 0.5 * first, "NashConv {first} -> {last}");
    assert!(report.iterations[1..].iter().all(|r| r.episodes == 8000 && r.response_gap.len() == 2));
    let files = member_files(&dir);
    assert_eq!(files.len(), 8, "a network per response: {files:?}");
    // Every member is a network the commands read: its exact NashConv through the CLI.
    for file in &files {
        assert_eq!(file.extension().unwrap(), "safetensors");
        let v = json_of(&metagame(&[
            "exploitability",
            "--game",
            "kuhn_poker",
            "--policy",
            file.to_str().unwrap(),
            "--json",
        ]));
        assert!(v["nash_conv"].as_f64().unwrap() > 0.0);
    }
}

/// Connect four: no tree, so the payoffs are rollouts and the NashConv an estimate (every 4
/// iterations and at the last); killed after iteration 4 and resumed, the run is the
/// uninterrupted one, estimates included; the members are rated by batch Elo.
#[test]
fn ppo_psro_on_connect_four_resumes_to_the_uninterrupted_run() {
    let c = config(
        "game = \"connect_four\"\nalgorithm = \"psro\"\noracle = \"ppo\"\nevaluator = \"cpu\"\n\
         episodes_per_entry = 100\nseed = 1\nmax_iterations = 10\napproximate_every = 4\n\
         approximate_budget = 300\napproximate_episodes = 300\n[learner]\nepisodes_per_response = 200\n",
    )
    .with_limits(RunLimits::iterations(10));
    let whole_dir = temp_dir("neural-psro-c4-whole");
    let whole = run(&c, &whole_dir, false, None).unwrap();
    assert_eq!(whole.iterations.len(), 11);
    for r in &whole.iterations {
        assert_eq!(r.nash_conv, None, "no tree, no exact NashConv");
        let due = [0, 4, 8, 10].contains(&r.iteration);
        assert_eq!(r.nash_conv_estimate.is_some(), due, "iteration {}", r.iteration);
        if let (Some(x), Some(se)) = (r.nash_conv_estimate, r.nash_conv_estimate_stderr) {
            // Two seats' gains over a zero-sum profile, each at most 2 (a win from a loss).
            assert!((-0.5..=4.0).contains(&x) && se > 0.0 && se < 0.2, "{x} ± {se}");
        }
    }
    let elo = whole.member_elo.clone().expect("member Elo of a two-player meta-game");
    assert_eq!(elo.iter().map(Vec::len).collect::<Vec<_>>(), vec![11, 11]);
    assert!(elo.iter().flatten().all(|r| r.is_finite() && *r >= 0.0));
    assert_eq!(elo.iter().flatten().copied().fold(f64::INFINITY, f64::min), 0.0);
    let dir = temp_dir("neural-psro-c4-resumed");
    assert!(run(&c, &dir, false, Some(4)).is_none(), "stopped after iteration 4");
    let resumed = run(&c, &dir, true, None).unwrap();
    assert_eq!(resumed.without_times(), whole.without_times());
    let names =
        |d: &Path| member_files(d).iter().map(|f| f.file_name().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&dir), names(&whole_dir), "the same networks, bit for bit (named by hash)");
    assert_eq!(names(&dir).len(), 21, "the first member (uniform) and 20 networks");
}

#[test]
fn approximate_exploitability_from_the_command_line() {
    let v = json_of(&metagame(&[
        "exploitability",
        "--game",
        "kuhn_poker",
        "--policy",
        "uniform",
        "--approximate",
        "--budget",
        "20000",
        "--episodes",
        "20000",
        "--json",
    ]));
    let exact = 11.0 / 12.0;
    let (estimate, stderr) = (v["nash_conv_estimate"].as_f64().unwrap(), v["stderr"].as_f64().unwrap());
    assert!(estimate <= exact + 3.0 * stderr && estimate > 0.8 * exact, "{v}");
    assert_eq!(v["episodes"], 20000);
    assert_eq!(v["training_episodes"], 20000);
    assert_eq!(v["lower_bound"], true);
    assert_eq!(v["selection_episodes"], 5000);
    assert_eq!(v["greedy"].as_array().map(Vec::len), Some(2), "{v}");
    // Connect four has no tree to walk: the estimate answers within its budget.
    let v = json_of(&metagame(&[
        "exploitability",
        "--game",
        "connect_four",
        "--policy",
        "uniform",
        "--approximate",
        "--budget",
        "500",
        "--episodes",
        "500",
        "--json",
    ]));
    assert!(v["nash_conv_estimate"].as_f64().unwrap() > 0.0, "{v}");
    let zero =
        ["exploitability", "--game", "kuhn_poker", "--policy", "uniform", "--approximate", "--budget", "0"];
    assert!(one_line_error(&metagame(&zero)).contains("training episodes"));
    let tabular = [
        "exploitability",
        "--game",
        "kuhn_poker",
        "--policy",
        "uniform",
        "--approximate",
        "--learner",
        "q-learning",
    ];
    assert!(one_line_error(&metagame(&tabular)).contains("tabular learner"));
    let net = format!("{}/examples/networks/leduc_a.safetensors", env!("CARGO_MANIFEST_DIR"));
    let misfit = ["exploitability", "--game", "connect_four", "--policy", &net, "--approximate"];
    assert!(one_line_error(&metagame(&misfit)).contains("does not fit"));
}

/// The estimates of the meta-mixtures of a PSRO run on `game` (exact responses, so its
/// mixtures change a lot), iterations 0 to `last`, each with `budget` training and
/// `episodes` evaluation episodes per seat of the default `ppo`: `(exact, estimate, stderr)`.
fn estimates_along_psro(game: &str, last: usize, budget: u64, episodes: u64) -> Vec<(f64, f64, f64)> {
    use metagame::games::{Arena, Cutoff, ExactEvaluator, GameTree, Policy, SeatMixture, registry};
    use metagame::learners::LearnerChoice;
    use metagame::populations::{ExactBestResponse, Psro, PsroConfig, approximate_nash_conv};
    let rules = registry::load(game).unwrap();
    let tree = GameTree::build(&rules).unwrap();
    let config = PsroConfig::builder().convergence_tolerance(0.0).build().unwrap();
    let mut psro = Psro::new(
        &tree,
        config,
        Box::new(metagame::solvers::nash::Nash::default()),
        Box::new(ExactBestResponse::default()),
        Box::new(ExactEvaluator),
    )
    .unwrap();
    let learner = LearnerChoice::defaults("ppo").unwrap();
    let budget = if budget == 0 { learner.config().episodes_per_response() } else { budget };
    (0..=last)
        .map(|iteration| {
            if iteration > 0 {
                psro.step().unwrap();
            }
            let exact = psro.last_report().nash_conv.unwrap();
            let mixture = psro.aggregated_policy().unwrap();
            let seats: Vec<SeatMixture<'_>> = (0..2)
                .map(|seat| SeatMixture { seat, members: vec![(&mixture as &dyn Policy, 1.0)] })
                .collect();
            let arena = Arena::both(&rules, &tree);
            let got = approximate_nash_conv(arena, &seats, &learner, budget, episodes, 1, &Cutoff::never())
                .unwrap();
            assert_eq!(got.greedy.len(), 2);
            assert_eq!(got.selection_episodes, episodes / 4);
            (exact, got.nash_conv_estimate, got.stderr)
        })
        .collect()
}

/// Along a PSRO run on Kuhn the estimate of each mixture's NashConv is never above the exact
/// value by more than 3 standard errors: a lower bound up to sampling error.
#[test]
fn approximate_nash_conv_along_psro_is_a_lower_bound() {
    for (iteration, (exact, estimate, stderr)) in
        estimates_along_psro("kuhn_poker", 4, 10_000, 10_000).into_iter().enumerate()
    {
        assert!(estimate <= exact + 3.0 * stderr, "iteration {iteration}: {estimate} ± {stderr} vs {exact}");
        assert!(
            estimate >= 0.5 * exact - 3.0 * stderr,
            "iteration {iteration}: {estimate} ± {stderr} vs {exact}"
        );
    }
}

/// On Leduc, at the default budget (the `ppo` learner's 20 000 training episodes and 20 000
/// evaluation episodes per seat), the estimate finds at least 0.8 of the exact NashConv of
/// each of the first mixtures of a PSRO run, and never more than it up to 3 standard errors.
#[test]
fn approximate_nash_conv_finds_most_of_leducs_at_the_default_budget() {
    let default_episodes = metagame::populations::EstimateSettings::DEFAULT_EPISODES;
    for (iteration, (exact, estimate, stderr)) in
        estimates_along_psro("leduc_poker", 3, 0, default_episodes).into_iter().enumerate()
    {
        assert!(estimate <= exact + 3.0 * stderr, "iteration {iteration}: {estimate} ± {stderr} vs {exact}");
        assert!(estimate >= 0.8 * exact, "iteration {iteration}: {estimate} ± {stderr} vs {exact}");
    }
}

/// A league whose agents are PPO networks (on a tree: tabulated for the league's exact
/// evaluations) runs, saves its learners tagged `ppo`, and resumes to the uninterrupted run.
#[test]
fn a_league_of_ppo_learners_resumes_to_the_uninterrupted_run() {
    let c = config(
        "game = \"kuhn_poker\"\nalgorithm = \"league\"\nmain_agents = 1\nmain_exploiters = 1\n\
         league_exploiters = 1\nepisodes_per_round = 1024\nsnapshot_min_episodes = 3072\n\
         snapshot_max_episodes = 6144\nmax_iterations = 5\nseed = 0\n[learner]\nkind = \"ppo\"\n",
    );
    let whole = run(&c, &temp_dir("ppo-league-whole"), false, None).unwrap();
    let dir = temp_dir("ppo-league-resumed");
    assert!(run(&c, &dir, false, Some(2)).is_none());
    let checkpoint = std::fs::read_to_string(dir.join(metagame::CHECKPOINT_FILE)).unwrap();
    assert!(checkpoint.contains("\"kind\":\"ppo\""), "learners saved with their kind");
    let resumed = run(&c, &dir, true, None).unwrap();
    assert_eq!(resumed.without_times(), whole.without_times());
}

/// Adaptive entry counts: with `entry_stderr_target`, sampled entries are sampled again
/// until their standard errors meet it or they reach the cap, so every entry of the table
/// meets one of the two; without it every entry has `episodes_per_entry` episodes.
#[test]
fn sampled_entries_are_sampled_until_their_standard_error_meets_the_target() {
    use metagame::RunCheckpoint;
    let base = "game = \"leduc_poker\"\nalgorithm = \"psro\"\nevaluator = \"cpu\"\nepisodes_per_entry = 500\n\
                seed = 4\nmax_iterations = 3\n";
    let entries = |text: &str, name: &str| -> Vec<serde_json::Value> {
        let dir = temp_dir(name);
        run(&config(text), &dir, false, None).unwrap();
        let saved = RunCheckpoint::read(&dir).unwrap();
        saved.state["table"]["entries"].as_array().unwrap().iter().filter(|e| !e.is_null()).cloned().collect()
    };
    let fixed = entries(base, "adaptive-fixed");
    assert!(fixed.iter().all(|e| e["count"] == 500), "{fixed:?}");
    let adaptive = entries(
        &format!("{base}entry_stderr_target = 0.1\nmax_episodes_per_entry = 8000\n"),
        "adaptive-target",
    );
    assert_eq!(adaptive.len(), fixed.len());
    let mut refined = 0;
    for e in &adaptive {
        let count = e["count"].as_u64().unwrap();
        let stderr = e["variance"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v.as_f64().unwrap() / count as f64).sqrt())
            .fold(0.0, f64::max);
        assert!(stderr <= 0.1 || count == 8000, "{e}");
        assert!((500..=8000).contains(&count) && count.is_multiple_of(500), "{e}");
        refined += usize::from(count > 500);
    }
    assert!(refined > 0, "some entry needed more than 500 episodes");
    let err = ExperimentConfig::from_toml_str(
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nentry_stderr_target = 0.1\n",
        Path::new("<test>"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("entry_stderr_target") && err.contains("not read by evaluator `exact`"), "{err}");
}

/// On Kuhn, where the tree is built, PSRO's estimates stand beside the exact NashConv and
/// stay below it up to 3 standard errors.
#[test]
fn psro_estimates_beside_the_exact_nash_conv_are_lower_bounds() {
    let c = config(
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmax_iterations = 3\nconvergence_tolerance = 0.0\n\
         approximate_every = 2\napproximate_budget = 4000\napproximate_episodes = 4000\n",
    );
    let dir = temp_dir("psro-estimates-kuhn");
    let report = run(&c, &dir, false, None).unwrap();
    let figure = std::fs::read_to_string(dir.join("exploitability.svg")).unwrap();
    assert!(figure.contains("exact NashConv") && figure.contains("estimate by trained best responses"));
    let estimated: Vec<usize> =
        report.iterations.iter().filter(|r| r.nash_conv_estimate.is_some()).map(|r| r.iteration).collect();
    assert_eq!(estimated, vec![0, 2, 3], "iteration 0, every 2nd, and the last");
    for r in &report.iterations {
        if let (Some(x), Some(se)) = (r.nash_conv_estimate, r.nash_conv_estimate_stderr) {
            let exact = r.nash_conv.unwrap();
            assert!(x <= exact + 3.0 * se, "iteration {}: {x} ± {se} above {exact}", r.iteration);
        }
    }
    // Uniform play (NashConv 11/12) is found clearly exploitable.
    assert!(report.iterations[0].nash_conv_estimate.unwrap() > 0.4);
}

#[test]
fn psro_estimate_settings_out_of_range_are_one_line() {
    let base = "game = \"kuhn_poker\"\nalgorithm = \"psro\"\n";
    for (extra, says) in [
        ("approximate_budget = 100\n", "approximate_budget is read only with approximate_every"),
        ("approximate_every = 0\n", "approximate_every must be at least 1"),
        ("approximate_every = 1\napproximate_learner = \"q-learning\"\n", "tabular learner"),
        ("approximate_every = 1\napproximate_learner = \"nope\"\n", "approximate_learner"),
        ("approximate_every = 1\napproximate_episodes = 0\n", "approximate_episodes must be in 1..="),
    ] {
        let e = ExperimentConfig::from_toml_str(&format!("{base}{extra}"), Path::new("<test>")).unwrap_err();
        assert!(e.to_string().contains(says), "{extra}: {e}");
    }
}
