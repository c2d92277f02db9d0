//! What every registered loop (`metagame::Algorithm::ALL`, the one list in `src/loops/`)
//! must have: an annotated example config that parses as that loop and names every field
//! the loop reads, a row in the book's config table (`docs/src/configs.md`), and a run that stops after a
//! checkpoint and resumes to the uninterrupted run's report. A loop added to the list is
//! checked here without a line of its own.

use std::ops::ControlFlow;
use std::path::Path;

use metagame::populations::RunLimits;
use metagame::{Algorithm, ExperimentConfig, RunOptions, RunReport, run_experiment};

use crate::cli::temp_dir;

fn example(algorithm: Algorithm) -> ExperimentConfig {
    let name = format!("examples/config/{}.toml", algorithm.as_str());
    ExperimentConfig::from_toml_str(algorithm.example(), Path::new(&name))
        .unwrap_or_else(|e| panic!("{}: {e}", algorithm.as_str()))
}

#[test]
fn every_loop_has_an_example_that_names_its_fields_and_a_row_in_the_config_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let configs = crate::book::page("docs/src/configs.md").text;
    assert!(Algorithm::ALL.len() >= 5);
    for &algorithm in Algorithm::ALL {
        let name = algorithm.as_str();
        assert_eq!(example(algorithm).algorithm().algorithm(), algorithm, "{name}");
        let file = std::fs::read_to_string(root.join(format!("examples/config/{name}.toml")))
            .unwrap_or_else(|e| panic!("{name}: examples/config/{name}.toml: {e}"));
        assert_eq!(file, algorithm.example(), "{name}: the unit carries examples/config/{name}.toml");
        for field in algorithm.fields() {
            let named = algorithm
                .example()
                .lines()
                .map(|l| l.trim_start_matches(['#', ' ', '[']))
                .any(|l| l.starts_with(&format!("{field} =")) || l.starts_with(&format!("{field}]")));
            assert!(named, "{name}: the example does not name field `{field}`");
        }
        assert!(
            configs.contains(&format!("| `{name}` |")),
            "{name}: no row in docs/src/configs.md's config table"
        );
        assert!(!algorithm.title().is_empty() && !algorithm.about().is_empty(), "{name}");
    }
}

/// Every loop reads its own fields and the run limits, and refuses every field another loop
/// reads (naming the field and who reads it) and any unknown one.
#[test]
fn every_loop_refuses_the_fields_it_does_not_read() {
    let all: std::collections::BTreeSet<&str> = Algorithm::ALL.iter().flat_map(|a| a.fields()).collect();
    for &algorithm in Algorithm::ALL {
        let name = algorithm.as_str();
        let own = algorithm.fields();
        let path = Path::new("foreign.toml");
        for field in all.iter().filter(|f| !own.contains(f)).chain(&["no_such_field"]) {
            // A field name before any table header, so it lands at the top level.
            let text = format!("{field} = 1\n{}", algorithm.example());
            let err = ExperimentConfig::from_toml_str(&text, path)
                .map(|_| ())
                .expect_err(&format!("{name}: `{field}` accepted"))
                .to_string();
            assert!(err.contains(&format!("`{field}`")), "{name}: {field}: {err}");
            assert!(err.contains("not read by algorithm") || err.contains("unknown field"), "{name}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        // Its own fields and the limits are read: the example names them all and parses.
        assert!(ExperimentConfig::from_toml_str(algorithm.example(), path).is_ok(), "{name}");
    }
}

fn run(config: &ExperimentConfig, dir: &Path, resume: bool, stop_after: Option<usize>) -> Option<RunReport> {
    let options = RunOptions::new(dir).resume(resume).stop_after(stop_after);
    run_experiment(config, &options, &mut |_| ControlFlow::Continue(())).unwrap()
}

#[test]
fn every_loop_resumes_to_the_uninterrupted_run() {
    for &algorithm in Algorithm::ALL {
        let name = algorithm.as_str();
        let config = example(algorithm).with_limits(RunLimits::iterations(3));
        let whole = run(&config, &temp_dir(&format!("loops-{name}-whole")), false, None).unwrap();
        let dir = temp_dir(&format!("loops-{name}-resumed"));
        assert!(run(&config, &dir, false, Some(1)).is_none(), "{name}: stopped after iteration 1");
        let resumed = run(&config, &dir, true, None).unwrap();
        assert_eq!(resumed.without_times(), whole.without_times(), "{name}");
        assert!(resumed.iterations.len() >= 2, "{name}: {} iterations", resumed.iterations.len());
    }
}

/// A checkpoint written before the driver kept the history (the reports inside the loop's
/// state) resumes, for every loop, to the uninterrupted run.
#[test]
fn every_loop_resumes_from_a_checkpoint_with_the_reports_in_its_state() {
    use metagame::RunCheckpoint;
    use metagame::populations::checkpoint;
    for &algorithm in Algorithm::ALL {
        let name = algorithm.as_str();
        let config = example(algorithm).with_limits(RunLimits::iterations(3));
        let whole = run(&config, &temp_dir(&format!("loops-{name}-whole-old")), false, None).unwrap();
        let dir = temp_dir(&format!("loops-{name}-old-checkpoint"));
        assert!(run(&config, &dir, false, Some(1)).is_none(), "{name}");
        let path = dir.join(metagame::CHECKPOINT_FILE);
        let saved = RunCheckpoint::read(&dir).unwrap();
        assert!(!saved.reports.is_empty(), "{name}: the history log holds the reports");
        std::fs::remove_file(dir.join(metagame::HISTORY_FILE)).unwrap();
        let mut state = saved.state.clone();
        state["reports"] = serde_json::to_value(&saved.reports).unwrap();
        let old = serde_json::json!({ "config": saved.config, "state": state });
        checkpoint::save(&path, &old).unwrap();
        let resumed = run(&config, &dir, true, None).unwrap();
        assert_eq!(resumed.without_times(), whole.without_times(), "{name}");
    }
}

/// Every loop's run folder, its example run to the end, holds exactly the files its unit
/// lists, and the book's table of run folders (`docs/src/run-folders.md`) says so.
#[test]
fn every_loop_writes_the_run_folder_its_row_in_the_book_lists() {
    let folders = crate::book::page("docs/src/run-folders.md").text;
    for &algorithm in Algorithm::ALL {
        let name = algorithm.as_str();
        let dir = temp_dir(&format!("loops-{name}-folder"));
        run(&example(algorithm), &dir, false, None).unwrap();
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        found.sort();
        let mut expected: Vec<String> = algorithm.files().iter().map(|f| f.to_string()).collect();
        expected.sort();
        assert_eq!(found, expected, "{name}: the run folder");
        let files: Vec<String> = algorithm.files().iter().map(|f| format!("`{f}`")).collect();
        let row = format!("| `{name}` | {} |", files.join(", "));
        assert!(folders.contains(&row), "{name}: docs/src/run-folders.md's run-folder table lacks\n{row}");
    }
}

#[test]
fn a_config_on_a_given_game_accepts_its_name_with_defaults_spelled_out() {
    let on = |game: &str, given: &str| {
        let text = format!("game = \"{game}\"\nalgorithm = \"cfr\"\n");
        ExperimentConfig::from_toml_str_on(&text, Path::new("<test>"), given).map(|c| c.game().to_string())
    };
    assert_eq!(on("kuhn_poker(players=2)", "kuhn_poker").unwrap(), "kuhn_poker(players=2)");
    assert!(
        on(
            "goofspiel(imp_info=True,num_cards=4,points_order=random)",
            "goofspiel(imp_info=True,num_cards=4)"
        )
        .is_ok()
    );
    let err = on("kuhn_poker(players=3)", "kuhn_poker").unwrap_err().to_string();
    assert!(
        err.contains("the config names `kuhn_poker(players=3)`, but the run is on the game `kuhn_poker`"),
        "{err}"
    );
    assert!(on("leduc_poker", "kuhn_poker").is_err());
}
