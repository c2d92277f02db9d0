//! Leagues of networks as a user runs them (issue 41, item 1): on connect four, whose tree
//! is not built, every learning agent trains a network per seat by PPO, its snapshots join
//! the league as safetensors files named by their hash, read back by the commands that take
//! a policy; a killed run resumes to the uninterrupted one; bad input is one line.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use metagame::games::{Arena, registry};
use metagame::populations::{League, LeagueConfig, LeagueReport, LeagueState, TrainingLoop};
use metagame::{ExperimentConfig, RunOptions, RunReport, run_experiment};

use crate::cli::{json_of, metagame, one_line_error, temp_dir};

/// A small league of PPO networks on connect four: snapshots every few rounds, an
/// evaluation point every 3, the main exploiter a Minimax Exploiter reading the main agent's
/// critic, the league exploiter matched by Elo.
const TINY: &str = "game = \"connect_four\"\nalgorithm = \"league\"\nepisodes_per_round = 64\nexploiter_alpha = 0.1\n\
    episodes_per_match = 32\nsnapshot_min_episodes = 64\nsnapshot_max_episodes = 128\neval_every = 3\n\
    evaluator = \"rollout\"\nepisodes_per_entry = 20\nmax_iterations = 8\nseed = 3\n\
    [learner]\nkind = \"ppo\"\nhidden = [16]\nnum_envs = 8\nnum_steps = 8\nanneal_lr = false\n\
    [matchmaking]\nleague_exploiter = { kind = \"elo\", target_min = 0.3, target_max = 0.7 }\n";

fn config(text: &str) -> ExperimentConfig {
    ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap()
}

fn run(config: &ExperimentConfig, dir: &Path, resume: bool, stop_after: Option<usize>) -> Option<RunReport> {
    let options = RunOptions::new(dir).resume(resume).stop_after(stop_after);
    run_experiment(config, &options, &mut |_| ControlFlow::Continue(())).unwrap()
}

/// TINY's league settings, for the library's `League`.
fn league_config() -> LeagueConfig {
    let metagame::AlgorithmConfig::League(section) = config(TINY).algorithm().clone() else {
        panic!("a league")
    };
    section.league
}

fn member_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> =
        std::fs::read_dir(dir.join("members")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

fn names(dir: &Path) -> Vec<std::ffi::OsString> {
    member_files(dir).iter().map(|f| f.file_name().unwrap().to_owned()).collect()
}

#[test]
fn a_league_of_networks_on_connect_four_resumes_to_the_uninterrupted_run() {
    let c = config(TINY);
    let whole_dir = temp_dir("neural-league-whole");
    let whole = run(&c, &whole_dir, false, None).unwrap();
    assert_eq!(whole.iterations.len(), 9);
    let leagues: Vec<LeagueReport> = whole.iterations.iter().map(|r| r.details.get().unwrap()).collect();
    for (r, l) in whole.iterations.iter().zip(&leagues) {
        assert_eq!(r.nash_conv, None, "no tree, no exact NashConv");
        assert!(l.main_nash_conv.is_empty() && l.main_average_nash_conv.is_empty());
        // Three agents, two matches each per round; every result a score in [0, 1].
        if r.iteration > 0 {
            assert_eq!(l.matches.iter().map(|m| m.count).sum::<u64>(), 6, "round {}", r.iteration);
            assert!(l.matches.iter().all(|m| (0.0..=1.0).contains(&m.score)));
        }
        assert_eq!(!l.batch_elo.is_empty(), r.iteration % 3 == 0 && r.iteration > 0, "round {}", r.iteration);
    }
    let snapshots: usize = leagues.iter().map(|l| l.snapshots.len()).sum();
    assert!(snapshots >= 6, "{snapshots} snapshots in 8 rounds");
    // The first historical player (the main agent's initial networks) and every snapshot: two
    // networks each, named by their hash.
    let files = member_files(&whole_dir);
    assert_eq!(files.len(), 2 * (snapshots + 1), "{files:?}");
    assert!(files.iter().all(|f| f.extension().unwrap() == "safetensors"));
    assert_eq!(leagues.last().unwrap().members, 4 + snapshots, "3 agents, the first snapshot and the rest");

    // Stopped after round 4 and resumed: the same reports, the same networks bit for bit.
    let dir = temp_dir("neural-league-resumed");
    assert!(run(&c, &dir, false, Some(4)).is_none(), "stopped after round 4");
    let resumed = run(&c, &dir, true, None).unwrap();
    assert_eq!(resumed.without_times(), whole.without_times());
    assert_eq!(names(&dir), names(&whole_dir));
    assert_eq!(
        std::fs::read(dir.join("payoffs.bin")).unwrap(),
        std::fs::read(whole_dir.join("payoffs.bin")).unwrap()
    );

    // Its snapshots are networks the commands read: an estimate of their NashConv, and matches.
    let (a, b) = (files[0].to_str().unwrap(), files[1].to_str().unwrap());
    let v = json_of(&metagame(&[
        "exploitability",
        "--game",
        "connect_four",
        "--policy",
        a,
        "--approximate",
        "--budget",
        "200",
        "--episodes",
        "200",
        "--json",
    ]));
    assert!(v["nash_conv_estimate"].as_f64().unwrap().is_finite(), "{v}");
    let v = json_of(&metagame(&[
        "matches",
        "--game",
        "connect_four",
        "--policies",
        a,
        b,
        "--episodes",
        "50",
        "--json",
    ]));
    assert_eq!(v["entries"].as_array().map(Vec::len), Some(4), "{v}");
    assert_eq!(v["exact"], false);
}

#[test]
fn a_snapshot_file_altered_or_deleted_before_a_resume_is_one_line() {
    let dir = temp_dir("neural-league-altered");
    let c = config(TINY);
    assert!(run(&c, &dir, false, Some(4)).is_none());
    let checkpoint = std::fs::read(dir.join("checkpoint.json")).unwrap();
    let file = member_files(&dir).pop().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let dir_arg = dir.to_str().unwrap();
    // Altered: its bytes no longer hash to its name.
    let mut altered = bytes.clone();
    *altered.last_mut().unwrap() ^= 1;
    std::fs::write(&file, &altered).unwrap();
    let err = one_line_error(&metagame(&["run", "--resume", dir_arg]));
    assert!(err.contains("does not hold the member"), "{err}");
    // Deleted.
    std::fs::remove_file(&file).unwrap();
    let err = one_line_error(&metagame(&["run", "--resume", dir_arg]));
    assert!(err.contains(file.file_name().unwrap().to_str().unwrap()), "{err}");
    // Nothing written was lost: put back, the run resumes.
    assert_eq!(std::fs::read(dir.join("checkpoint.json")).unwrap(), checkpoint);
    std::fs::write(&file, &bytes).unwrap();
    assert!(run(&c, &dir, true, None).is_some());
}

#[test]
fn what_a_league_without_a_tree_cannot_do_is_one_line() {
    let dir = temp_dir("neural-league-refused");
    let write = |extra: &str, learner: &str| {
        let ppo = "kind = \"ppo\"\nhidden = [16]\nnum_envs = 8\nnum_steps = 8\nanneal_lr = false\n";
        let text = TINY.replace(ppo, learner).replace("seed = 3\n", &format!("seed = 3\n{extra}"));
        let path = dir.join("league.toml");
        std::fs::write(&path, text).unwrap();
        path
    };
    let refused = |extra: &str, learner: &str| {
        let path = write(extra, learner);
        let out = dir.join("out");
        one_line_error(&metagame(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]))
    };
    let err = refused("", "kind = \"q-learning\"\n");
    assert!(err.contains("`q-learning` learns a table over the game's tree"), "{err}");
    let err = refused("outcome = \"win\"\n", "kind = \"ppo\"\n");
    assert!(err.contains("outcome = \"win\""), "{err}");
    let err = refused("exploiter_critic = \"exact\"\n", "kind = \"ppo\"\n");
    assert!(err.contains("exploiter_critic = \"exact\""), "{err}");
    let err = refused("exploiter_shift = \"value-min\"\n", "kind = \"ppo\"\n");
    assert!(err.contains("value-min"), "{err}");
    let err = refused("", "kind = \"dqn\"\n");
    assert!(err.contains("learner dqn has no critic"), "{err}");
}

/// A learner whose weights overflow stops the round with one line naming the member and
/// seat, and the league is as before the round.
#[test]
fn a_diverging_network_learner_names_its_member() {
    let rules = registry::load("connect_four").unwrap();
    let config = league_config();
    let league = League::new_on(Arena::rules(&rules), config.clone()).unwrap();
    let files: Vec<(String, Vec<u8>)> =
        league.member_files().into_iter().map(|(f, b)| (f.to_string(), b.to_vec())).collect();
    let mut state = serde_json::to_value(league.state()).unwrap();
    // The main exploiter's seat-0 actor: finite weights whose logits overflow f32.
    let actor = &mut state["agents"][1]["learners"][0]["state"]["actor"]["tensors"];
    for tensor in actor.as_array_mut().unwrap() {
        for w in tensor.as_array_mut().unwrap() {
            *w = serde_json::json!(1e30);
        }
    }
    let mut state: LeagueState = serde_json::from_value(state).unwrap();
    for stored in state.stored_mut() {
        let bytes = &files.iter().find(|(f, _)| f == stored.file()).unwrap().1;
        stored
            .load(bytes, |kind, b| metagame::registry::policy_from_file(kind, b).map_err(|e| e.to_string()))
            .unwrap();
    }
    let reports = vec![league.last_report().clone()];
    let mut league = League::resume_on(Arena::rules(&rules), config, state, &reports, None).unwrap();
    let err = league.step().unwrap_err().to_string();
    assert!(err.contains("training league member 1 (main-exploiter) at seat 0"), "{err}");
    assert!(!err.contains('\n'), "{err}");
    assert_eq!(league.state().round(), 0, "the round is undone");
}

/// With a snapshot folder, snapshots whose files are written are let go of and read back
/// when played, at most `LOADED_SNAPSHOTS` held: the same rounds as a league holding every
/// snapshot in memory.
#[test]
fn snapshots_read_back_from_their_folder_play_as_the_ones_held() {
    use metagame::populations::{SnapshotFolder, SnapshotPolicy};
    let rules = registry::load("connect_four").unwrap();
    let config = league_config();
    let evaluator = || metagame::registry::EvaluatorName::Rollout.build().unwrap();
    let mut held = League::new_on(Arena::rules(&rules), config.clone()).unwrap().with_evaluator(evaluator());
    let dir = temp_dir("neural-league-folder");
    let read: metagame::populations::ReadPolicy =
        |kind, bytes| metagame::registry::policy_from_file(kind, bytes).map_err(|e| e.to_string());
    let mut kept = League::new_on(Arena::rules(&rules), config)
        .unwrap()
        .with_evaluator(evaluator())
        .with_snapshot_folder(SnapshotFolder::new(&dir, read));
    for _ in 0..7 {
        // What the run's driver does after each round: the new members' files.
        for (file, bytes) in kept.member_files() {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let a = held.step().unwrap().without_times();
        let b = kept.step().unwrap().without_times();
        assert_eq!(a, b);
    }
    let snapshots: Vec<&SnapshotPolicy> =
        kept.state().members().iter().filter_map(|m| m.policy.as_ref()).collect();
    assert!(snapshots.len() >= 6);
    // Every snapshot written before the last round is let go of; the held league holds all.
    let released = snapshots.iter().filter(|p| p.stored().all(|s| !s.is_loaded())).count();
    assert!(released >= snapshots.len() - 3, "{released} of {}", snapshots.len());
    let held_all = held.state().members().iter().filter_map(|m| m.policy.as_ref());
    assert!(held_all.flat_map(SnapshotPolicy::stored).all(|s| s.is_loaded()));
}

/// The main exploiter trains on rewards shaped by the main agent's critic, frozen when its
/// generation starts and kept in the checkpoint; the other agents on the game's rewards.
#[test]
fn the_minimax_main_exploiter_reads_the_main_agents_frozen_critic() {
    let rules = registry::load("connect_four").unwrap();
    let mut league = League::new_on(Arena::rules(&rules), league_config()).unwrap();
    let before = serde_json::to_value(league.state()).unwrap();
    league.step().unwrap();
    let after = serde_json::to_value(league.state()).unwrap();
    for (a, agent) in after["agents"].as_array().unwrap().iter().enumerate() {
        for learner in agent["learners"].as_array().unwrap() {
            let stats = &learner["state"]["stats"];
            let plain = stats["return_sum"].as_f64().unwrap();
            let shaped = stats["shaped_return_sum"].as_f64().unwrap();
            assert_eq!(a == 1, shaped < plain, "agent {a}: {stats}");
        }
        assert_eq!(a == 1, agent.get("critics").is_some(), "agent {a}");
    }
    let critics = &after["agents"][1]["critics"];
    assert_eq!(critics.as_array().map(Vec::len), Some(3), "one entry per agent");
    assert_eq!(critics[0].as_array().map(Vec::len), Some(2), "the main agent's two seats");
    assert!(critics[1].is_null() && critics[2].is_null());
    // Frozen: the main agent trained this round, its critic in the exploiter's hands did not.
    assert_eq!(critics, &before["agents"][1]["critics"]);
    assert_ne!(
        after["agents"][0]["learners"][0]["state"]["critic"],
        before["agents"][0]["learners"][0]["state"]["critic"]
    );
}

#[allow(dead_code)]
#[path = "../../examples/minimax_exploiter_c4.rs"]
mod minimax_study;

#[allow(dead_code)]
#[path = "../../examples/connect_four_league_study.rs"]
mod league_study;

/// The network Minimax Exploiter study at a tiny budget: every arm spends the budget
/// exactly, generation after generation, and a generation ends complete exactly when its
/// win rate reaches the threshold.
#[test]
fn the_network_minimax_study_runs_at_a_tiny_budget_and_follows_its_rule() {
    let dir = temp_dir("neural-me-study");
    let o = minimax_study::parse(
        &[
            "--out",
            dir.to_str().unwrap(),
            "--seeds",
            "1",
            "--budget",
            "1536",
            "--main-rounds",
            "1",
            "--threshold",
            "0.6",
            "--eval-episodes",
            "60",
        ]
        .map(String::from),
    )
    .unwrap();
    minimax_study::run(&o).unwrap();
    let csv = std::fs::read_to_string(dir.join("generations.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    for arm in ["plain", "minimax", "minimax-learner-γ0"] {
        let gens: Vec<&Vec<&str>> = rows.iter().filter(|r| r[1] == arm).collect();
        assert!(!gens.is_empty(), "{arm}");
        let spent: u64 = gens.iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
        assert_eq!(spent, 1536, "{arm}");
        for r in &gens {
            let rate: f64 = r[5].parse().unwrap();
            assert_eq!(r[4] == "true", rate >= 0.6, "{r:?}");
        }
    }
    assert!(std::fs::read_to_string(dir.join("table.md")).unwrap().contains("| minimax |"));
}

/// The connect-four league study at a tiny size: the main agent's win rates against the
/// three fixed opponents at each evaluated round, its Elo at every round, and the figures.
#[test]
fn the_connect_four_league_study_runs_at_a_tiny_size() {
    let dir = temp_dir("neural-league-study");
    let o = league_study::parse(
        &["--out", dir.to_str().unwrap(), "--rounds", "2", "--every", "1", "--episodes", "20"]
            .map(String::from),
    )
    .unwrap();
    league_study::run(&o).unwrap();
    let rates = std::fs::read_to_string(dir.join("win_rates.csv")).unwrap();
    assert_eq!(rates.lines().count(), 1 + 3 * 3, "{rates}");
    assert!(
        rates
            .lines()
            .skip(1)
            .all(|l| (0.0..=1.0).contains(&l.rsplit(',').next().unwrap().parse::<f64>().unwrap()))
    );
    assert_eq!(std::fs::read_to_string(dir.join("elo.csv")).unwrap().lines().count(), 1 + 3);
    for f in ["win_rates.svg", "elo.svg", "pfsp.csv", "table.md"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
}

/// A league of networks built by the library alone evaluates by rollouts: its evaluation
/// points need no evaluator given.
#[test]
fn a_league_of_networks_evaluates_by_rollouts_by_default() {
    let rules = registry::load("connect_four").unwrap();
    let mut league = League::new_on(Arena::rules(&rules), league_config()).unwrap();
    for _ in 0..3 {
        league.step().unwrap();
    }
    let report: LeagueReport = league.last_report().details.get().unwrap();
    assert_eq!(report.batch_elo.len(), report.members, "every member rated at round 3");
    assert!(report.evaluated_entries > 0);
}

/// `exploiter_reset_to = "main-agent"`: a main exploiter's reset starts its networks from
/// the main agent's as they are at the reset (PPO's policy network, seat by seat); a blank
/// reset draws new ones.
#[test]
fn an_exploiter_reset_to_the_main_agent_starts_from_its_networks() {
    use metagame::populations::{LeagueConfigBuilder, ResetTo};
    let rules = registry::load("connect_four").unwrap();
    let after_first_reset = |reset_to| {
        let config = LeagueConfigBuilder::from(league_config()).exploiter_reset_to(reset_to).build().unwrap();
        let mut league = League::new_on(Arena::rules(&rules), config).unwrap();
        for round in 1..=8 {
            let report: LeagueReport = league.step().unwrap().details.get().unwrap();
            if report.resets.contains(&1) {
                let networks = |a: usize| {
                    let pair = league.agent_networks(a).unwrap();
                    [pair[0].network().unwrap(), pair[1].network().unwrap()]
                };
                return (round, networks(1), networks(0));
            }
        }
        panic!("no reset of the main exploiter in 8 rounds");
    };
    let (round, exploiter, main) = after_first_reset(ResetTo::MainAgent);
    assert_eq!(exploiter, main, "round {round}: the main agent's networks");
    let (blank_round, blank, blank_main) = after_first_reset(ResetTo::Blank);
    assert_eq!(blank_round, round, "the same league until the reset");
    assert_eq!(blank_main, main);
    assert_ne!(blank, main, "a blank reset draws new networks");
}
