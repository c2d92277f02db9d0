//! The league-level Minimax Exploiter study (`examples/minimax_exploiter_league.rs`) at a tiny
//! budget: generations end exactly when the measured win rate reaches the threshold, the
//! generations spend exactly the budget, a seed gives the same numbers twice, and plain
//! Q-learning and the Minimax Exploiter learn differently.

#[allow(dead_code)]
#[path = "../../examples/minimax_exploiter_league.rs"]
mod study;

fn options(dir: &std::path::Path) -> study::Options {
    // Leduc keeps it fast; on its win/loss tree a best response wins only ~0.55 of the time
    // against a weak main agent, so the threshold is low enough to be crossed many times.
    study::Options {
        out: dir.to_path_buf(),
        game: "leduc_poker".into(),
        budget: 20_000,
        seeds: 2,
        threshold: 0.52,
        main_rounds: 2,
        main_episodes: 2048,
        match_episodes: 512,
        batch_size: 256,
        critic: metagame::learners::Critic::Learned,
    }
}

#[test]
fn the_league_study_runs_at_a_tiny_budget_and_its_generations_follow_the_rule() {
    let dir = std::env::temp_dir().join(format!("metagame-me-league-study-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = options(&dir);
    let s = study::run(&o).unwrap();
    assert_eq!(s.mains.len(), 2);
    for arm in study::ARMS {
        for main in &s.mains {
            let gens: Vec<&study::Generation> =
                s.generations.iter().filter(|g| g.arm == arm.name && g.seed == main.seed).collect();
            assert!(!gens.is_empty());
            // The generations spend the budget exactly, one after the other.
            let mut start = 0;
            for (k, g) in gens.iter().enumerate() {
                assert_eq!((g.index, g.start), (k as u64, start), "{g:?}");
                start += g.episodes;
                // A curve point per match; the episodes are the last point's.
                assert_eq!(g.curve.last().unwrap().0, g.episodes);
                assert!(g.curve.windows(2).all(|w| w[1].0 - w[0].0 <= o.match_episodes));
                // Below the threshold at every match but the last; the last reaches it iff
                // the generation ended by the rule, which every generation but the last did.
                let (last, before) = g.curve.split_last().unwrap();
                assert!(before.iter().all(|p| p.1 < o.threshold), "{g:?}");
                assert_eq!(g.reached, last.1 >= o.threshold, "{g:?}");
                assert!(g.reached || k == gens.len() - 1, "{g:?}");
                // No policy beats the main agent by more than its best response does.
                assert!(g.curve.iter().all(|p| p.1 <= main.best_response_win_rate + 1e-9));
            }
            assert_eq!(start, o.budget);
            assert!(gens.iter().filter(|g| g.reached).count() >= 2, "{gens:?}");
        }
    }
    // The same seeds give the same numbers; the two arms do not learn alike.
    let again = study::run(&o).unwrap();
    assert_eq!(again.generations, s.generations);
    let of =
        |name: &str| -> Vec<&study::Generation> { s.generations.iter().filter(|g| g.arm == name).collect() };
    let (plain, me) = (of("plain"), of("minimax-exploiter"));
    let curves =
        |gs: &[&study::Generation]| -> Vec<Vec<(u64, f64)>> { gs.iter().map(|g| g.curve.clone()).collect() };
    assert_ne!(curves(&plain), curves(&me));
    for file in ["generations.csv", "curves.csv", "table.md", "generations.svg"] {
        let len = std::fs::metadata(dir.join(file)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{file} was not written");
    }
    let csv = std::fs::read_to_string(dir.join("generations.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + s.generations.len());
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert!(table.contains("| minimax-exploiter |"), "{table}");
    // Bad options are errors, not panics.
    for bad in [
        study::Options { out: dir.join("no/such/folder"), ..o.clone() },
        study::Options { threshold: 1.5, ..o.clone() },
        study::Options { budget: 0, ..o.clone() },
        study::Options { game: "no_such_game".into(), ..o.clone() },
    ] {
        assert!(study::run(&bad).is_err(), "{bad:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
