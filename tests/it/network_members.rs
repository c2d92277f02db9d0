//! Issue 38 item 6: populations of any policies. PSRO with an oracle that answers networks:
//! members kept in the run folder as safetensors files named by their SHA-256, checked on
//! resume; exact NashConv where the tree is built (the networks tabulated), none where it is
//! not (connect four, payoffs by rollouts).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use metagame::networks::Mlp;
use metagame::populations::{IterationReport, Oracle, Response, ResponseRequest, TrainingStats};
use metagame::{Components, ExperimentConfig, RunOptions, RunReport, run_experiment_with};

use crate::cli::temp_dir;

/// An oracle that answers every request with a network of PyTorch's initialisation, seeded by
/// the request's seed: a stand-in for a trained one, deterministic across a resume.
struct NetworkOracle {
    hidden: usize,
}

impl Oracle for NetworkOracle {
    fn name(&self) -> &'static str {
        "random-network"
    }
    fn respond(&mut self, request: &ResponseRequest<'_>) -> metagame::populations::Result<Response> {
        let arena = request.arena;
        // INVARIANT: the test's games give tensors.
        let inputs = arena.tensor_shape().expect("a tensor").size();
        let network = Mlp::random(&[inputs, self.hidden, arena.num_actions()], request.seed)
            .map_err(|e| metagame::populations::Error::Config(e.to_string()))?;
        Response::of(Arc::new(network), TrainingStats::default())
    }
}

fn config(text: &str) -> ExperimentConfig {
    ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap()
}

fn run(config: &ExperimentConfig, options: RunOptions) -> metagame::Result<Option<RunReport>> {
    let components = Components::default().with_oracle(Box::new(NetworkOracle { hidden: 16 }));
    run_experiment_with(config, &options, components, &mut |_| ControlFlow::Continue(()))
}

fn without_times(reports: &[IterationReport]) -> Vec<IterationReport> {
    reports.iter().map(IterationReport::without_times).collect()
}

/// The member files of a run folder, sorted.
fn member_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir.join("members")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// The same config run whole, and killed after iteration 2 and resumed, give the same
/// reports; every network member is a file named by its hash that PyTorch's layout reads
/// back; a file altered or deleted stops the resume in one line.
fn resumes_to_the_uninterrupted_run(name: &str, text: &str, networks: usize) -> RunReport {
    let config = config(text);
    let whole_dir = temp_dir(&format!("{name}-whole"));
    let whole = run(&config, RunOptions::new(&whole_dir)).unwrap().unwrap();
    let killed_dir = temp_dir(&format!("{name}-killed"));
    assert!(run(&config, RunOptions::new(&killed_dir).stop_after(Some(2))).unwrap().is_none());
    let resumed = run(&config, RunOptions::new(&killed_dir).resume(true)).unwrap().unwrap();
    assert_eq!(without_times(&resumed.iterations), without_times(&whole.iterations), "{name}");

    let files = member_files(&killed_dir);
    assert_eq!(
        files,
        member_files(&whole_dir)
            .iter()
            .map(|f| killed_dir.join("members").join(f.file_name().unwrap()))
            .collect::<Vec<_>>()
    );
    let safetensors: Vec<&PathBuf> =
        files.iter().filter(|f| f.extension().is_some_and(|e| e == "safetensors")).collect();
    assert_eq!(safetensors.len(), networks, "{name}: {files:?}");
    for file in safetensors {
        let network = Mlp::read(file).unwrap();
        let bytes = std::fs::read(file).unwrap();
        // The name is the SHA-256 of the contents, which are the network written again.
        let stem = file.file_stem().unwrap().to_str().unwrap();
        assert_eq!(stem.len(), 64, "{file:?}");
        assert_eq!(network.to_bytes().unwrap(), bytes);
    }
    let checkpoint = std::fs::read_to_string(killed_dir.join("checkpoint.json")).unwrap();
    for file in &files {
        assert!(
            checkpoint.contains(file.file_name().unwrap().to_str().unwrap()),
            "{name}: the checkpoint names {file:?}"
        );
    }

    // A member altered: the resume refuses it, naming the file; deleted: likewise.
    let more = config.clone().with_limits(
        metagame::populations::RunLimits::builder()
            .max_iterations(config.limits().max_iterations() + 1)
            .build()
            .unwrap(),
    );
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&files[0], &bytes).unwrap();
    let err = run(&more, RunOptions::new(&killed_dir).resume(true)).unwrap_err().to_string();
    assert!(err.contains("does not hold the member the checkpoint names") && !err.contains('\n'), "{err}");
    std::fs::remove_file(&files[0]).unwrap();
    let err = run(&more, RunOptions::new(&killed_dir).resume(true)).unwrap_err().to_string();
    assert!(err.contains("named by the checkpoint") && !err.contains('\n'), "{err}");
    whole
}

#[test]
fn network_members_on_leduc_have_exact_nash_conv_and_resume_from_their_files() {
    let text = "game = \"leduc_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"nash\"\nmax_iterations = 4\n";
    let report = resumes_to_the_uninterrupted_run("psro-networks-leduc", text, 8);
    // Exact NashConv of the meta-mixture every iteration (the networks tabulated over the
    // tree), the initial uniform's 4.747 first.
    assert!((report.iterations[0].nash_conv.unwrap() - 4.747222222222222).abs() < 1e-12);
    assert!(report.iterations.iter().all(|r| r.nash_conv.is_some_and(|x| x.is_finite() && x >= 0.0)));
    assert_eq!(report.iterations.last().unwrap().population_sizes, vec![5, 5]);
}

#[test]
fn network_members_on_connect_four_play_by_rollouts_without_nash_conv() {
    let text = "game = \"connect_four\"\nalgorithm = \"psro\"\nmeta_solver = \"nash\"\nevaluator = \"cpu\"\n\
                episodes_per_entry = 200\nmax_iterations = 3\n";
    // Two networks per iteration; the uniform policy both seats start from is a file too.
    let report = resumes_to_the_uninterrupted_run("psro-networks-connect-four", text, 6);
    let files = member_files(&temp_dir("psro-networks-connect-four-whole"));
    assert_eq!(files.len(), 7, "{files:?}");
    assert_eq!(
        std::fs::read(files.iter().find(|f| f.extension().unwrap() == "policy").unwrap()).unwrap(),
        b"uniform"
    );
    assert!(report.iterations.iter().all(|r| r.nash_conv.is_none() && r.exploitability.is_none()));
    let last = report.iterations.last().unwrap();
    assert_eq!(last.population_sizes, vec![4, 4]);
    let meta = last.meta_game.as_ref().unwrap();
    assert!(meta.meta_strategies.iter().all(|s| (s.iter().sum::<f64>() - 1.0).abs() < 1e-9));
    // The reports say the NashConv is left out: `null`, not a number.
    let json = serde_json::to_value(last).unwrap();
    assert_eq!(json["nash_conv"], serde_json::Value::Null);
}

#[test]
fn exact_payoffs_on_a_game_without_a_tree_are_refused_in_one_line() {
    let text = "game = \"connect_four\"\nalgorithm = \"psro\"\nmax_iterations = 2\n";
    let err =
        run(&config(text), RunOptions::new(temp_dir("psro-connect-four-exact"))).unwrap_err().to_string();
    assert!(err.contains("exact evaluation needs the game tree of connect_four"), "{err}");
    let text = "game = \"connect_four\"\nalgorithm = \"xfp\"\nmax_iterations = 2\n";
    let err = run_experiment_with(
        &config(text),
        &RunOptions::new(temp_dir("xfp-connect-four")),
        Components::default(),
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("algorithm `xfp` needs the game tree of connect_four"), "{err}");
    assert!(err.contains("more than the limit of 10000000 nodes"), "{err}");
}
