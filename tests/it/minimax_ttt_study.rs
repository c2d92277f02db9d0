//! The Minimax Exploiter Tic-Tac-Toe study (`examples/minimax_exploiter_ttt.rs`) runs end to
//! end at a tiny size and writes what it says it writes.

#[cfg(feature = "plots")]
#[allow(dead_code)]
#[path = "../../examples/minimax_exploiter_ttt.rs"]
mod study;

#[cfg(feature = "plots")]
#[test]
fn the_tic_tac_toe_study_runs_at_a_tiny_size() {
    let dir = std::env::temp_dir().join(format!("metagame-ttt-study-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = study::Options {
        out: dir.clone(),
        episodes: 64,
        seeds: 2,
        points: 2,
        seats: vec![1],
        ties: study::Ties::Random,
        batch_size: 32,
    };
    let points = study::run(&options).unwrap();
    // 3 arms × 2 seeds × (points + 1).
    assert_eq!(points.len(), 3 * 2 * 3);
    for p in &points {
        // Minimax never loses: the exploiter never wins, and its outcomes are a distribution.
        assert!(p.win.abs() < 1e-12, "{p:?}");
        assert!((p.win + p.draw + p.loss - 1.0).abs() < 1e-9, "{p:?}");
        assert!((p.value - (p.win - p.loss)).abs() < 1e-12);
        assert_eq!(p.train_return.is_none(), p.episodes == 0);
    }
    for file in ["curves.csv", "curves.json", "table.md", "loss_seat1.svg"] {
        let len = std::fs::metadata(dir.join(file)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{file} was not written");
    }
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert!(table.contains("| 1 (O, second) | minimax-exploiter |"), "{table}");
    // A missing output folder is an error, not a panic.
    let missing = study::Options { out: dir.join("no/such/folder"), ..options };
    assert!(study::run(&missing).is_err());
    std::fs::remove_dir_all(&dir).ok();
}
