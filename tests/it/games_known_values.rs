//! Known values of Kuhn and Leduc poker (Kuhn 1950; Southey et al. 2005) and tree counts
//! from OpenSpiel 2.0.2 (counted by walking its trees: benches/peers/make_fixtures.py).

use metagame::games::{
    GameTree, NodeKind, PlayerId, TabularPolicy, aggregate, best_response, expected_returns, exploitability,
    nash_conv, nash_conv_report, registry, testing,
};

fn tree(spec: &str) -> GameTree {
    GameTree::build(&registry::load(spec).unwrap()).unwrap()
}

fn nash_conv_of(tree: &GameTree, policy: &TabularPolicy) -> f64 {
    let profile = vec![policy; tree.num_players()];
    nash_conv(tree, &profile).unwrap()
}

#[test]
fn tree_counts_equal_openspiel() {
    // (spec, histories, terminals, decision, chance, infosets per player) from OpenSpiel 2.0.2.
    let cases = [
        ("kuhn_poker", 58, 30, 24, 4, 6),
        ("kuhn_poker(players=3)", 617, 312, 288, 17, 16),
        ("leduc_poker", 9457, 5520, 3780, 157, 468),
        ("liars_dice", 294883, 147420, 147456, 7, 12288),
        ("liars_dice(numdice=2,dice_sides=2)", 8191, 4080, 4096, 15, 384),
    ];
    for (spec, nodes, terminals, decision, chance, per_player) in cases {
        let t = tree(spec);
        assert_eq!(t.num_nodes(), nodes, "{spec}");
        assert_eq!(t.num_terminals(), terminals, "{spec}");
        assert_eq!(t.count(NodeKind::Decision), decision, "{spec}");
        assert_eq!(t.count(NodeKind::Chance), chance, "{spec}");
        for p in 0..t.num_players() {
            assert_eq!(t.infosets_of(PlayerId(p)).len(), per_player, "{spec} player {p}");
        }
    }
}

#[test]
fn kuhn_uniform_and_first_action_nash_conv() {
    let t = tree("kuhn_poker");
    assert!((nash_conv_of(&t, &TabularPolicy::uniform(&t)) - 11.0 / 12.0).abs() < 1e-12);
    assert!((nash_conv_of(&t, &TabularPolicy::first_action(&t)) - 2.0).abs() < 1e-12);
}

#[test]
fn leduc_uniform_and_first_action_nash_conv() {
    let t = tree("leduc_poker");
    assert!((nash_conv_of(&t, &TabularPolicy::uniform(&t)) - 1709.0 / 360.0).abs() < 1e-12);
    assert!((nash_conv_of(&t, &TabularPolicy::first_action(&t)) - 2.0).abs() < 1e-12);
}

#[test]
fn three_player_kuhn_uniform_nash_conv() {
    let t = tree("kuhn_poker(players=3)");
    assert!((nash_conv_of(&t, &TabularPolicy::uniform(&t)) - 33.0 / 16.0).abs() < 1e-12);
    let err = exploitability(&t, &[&TabularPolicy::uniform(&t); 3]).unwrap_err();
    assert!(err.to_string().contains("2-player"), "{err}");
}

/// The Kuhn equilibrium family (Kuhn 1950) with parameter alpha in [0, 1/3].
fn kuhn_equilibrium(t: &GameTree, alpha: f64) -> TabularPolicy {
    TabularPolicy::from_fn(t, |i| {
        let key = t.infoset_key(i);
        let card = key.as_bytes()[0] - b'0';
        let bet = match (key.len(), &key[1..], card) {
            // Player 0 first decision: J bets alpha, Q checks, K bets 3 alpha.
            (1, _, 0) => alpha,
            (1, _, 1) => 0.0,
            (1, _, _) => 3.0 * alpha,
            // Player 0 facing a bet after checking: J folds, Q calls 1/3 + alpha, K calls.
            (_, "pb", 0) => 0.0,
            (_, "pb", 1) => 1.0 / 3.0 + alpha,
            (_, "pb", _) => 1.0,
            // Player 1 after a check: J bets 1/3, Q checks, K bets.
            (_, "p", 0) => 1.0 / 3.0,
            (_, "p", 1) => 0.0,
            (_, "p", _) => 1.0,
            // Player 1 facing a bet: J folds, Q calls 1/3, K calls.
            (_, _, 0) => 0.0,
            (_, _, 1) => 1.0 / 3.0,
            _ => 1.0,
        };
        vec![1.0 - bet, bet]
    })
    .unwrap()
}

#[test]
fn kuhn_equilibrium_family_has_zero_nash_conv_and_value_minus_one_eighteenth() {
    let t = tree("kuhn_poker");
    for alpha in [0.0, 0.1, 1.0 / 6.0, 1.0 / 3.0] {
        let eq = kuhn_equilibrium(&t, alpha);
        let report = nash_conv_report(&t, &[&eq, &eq]).unwrap();
        assert!(report.nash_conv < 1e-12, "alpha {alpha}: {}", report.nash_conv);
        assert!((report.expected_returns[0] + 1.0 / 18.0).abs() < 1e-12);
        assert!((report.expected_returns[1] - 1.0 / 18.0).abs() < 1e-12);
    }
}

#[test]
fn best_response_to_uniform_is_pure_and_achieves_its_value() {
    let t = tree("leduc_poker");
    let u = TabularPolicy::uniform(&t);
    for player in 0..2 {
        let (br, value) = best_response(&t, PlayerId(player), &[&u, &u]).unwrap();
        br.validate(&t).unwrap();
        let mut profile = vec![&u, &u];
        profile[player] = &br;
        let achieved = expected_returns(&t, &profile).unwrap()[player];
        assert!((achieved - value).abs() < 1e-12);
        for i in t.infosets_of(PlayerId(player)) {
            let row = br.row(metagame::games::InfosetId(i));
            assert!(row.contains(&1.0));
        }
    }
}

#[test]
fn aggregate_mixture_is_realisation_equivalent() {
    // Expected returns against any opponent are linear in the mixture weights.
    let t = tree("kuhn_poker");
    let u = TabularPolicy::uniform(&t);
    let f = TabularPolicy::first_action(&t);
    let eq = kuhn_equilibrium(&t, 0.2);
    let mixed = aggregate(&t, &[&f, &eq], &[0.25, 0.75]).unwrap();
    mixed.validate(&t).unwrap();
    for opponent in [&u, &f, &eq] {
        let mixed_value = expected_returns(&t, &[&mixed, opponent]).unwrap()[0];
        let f_value = expected_returns(&t, &[&f, opponent]).unwrap()[0];
        let eq_value = expected_returns(&t, &[&eq, opponent]).unwrap()[0];
        assert!((mixed_value - (0.25 * f_value + 0.75 * eq_value)).abs() < 1e-12);
        let mixed_value = expected_returns(&t, &[opponent, &mixed]).unwrap()[1];
        let f_value = expected_returns(&t, &[opponent, &f]).unwrap()[1];
        let eq_value = expected_returns(&t, &[opponent, &eq]).unwrap()[1];
        assert!((mixed_value - (0.25 * f_value + 0.75 * eq_value)).abs() < 1e-12);
    }
}

#[test]
fn every_game_passes_the_conformance_check() {
    // The registry's list (defaults and each game's examples), so a new game cannot skip it.
    let checked = testing::check_registry(200, 7).unwrap_or_else(|e| panic!("{e}"));
    for (spec, report) in &checked {
        assert!(report.states_checked > 200, "{spec}");
    }
    // The games this test listed by hand before it ran over the registry.
    for spec in [
        "kuhn_poker",
        "kuhn_poker(players=3)",
        "kuhn_poker(players=4)",
        "leduc_poker",
        "leduc_poker(players=3)",
        "matrix_rps",
        "matrix_mp",
        "matrix_brps",
        "matrix_pd",
        "matrix_bos",
        "matrix_shapleys_game",
    ] {
        assert!(checked.iter().any(|(s, r)| s == spec && r.tree_nodes.is_some()), "{spec} not checked");
    }
    for game in registry::games() {
        assert!(checked.iter().any(|(s, _)| s == game.name), "{} not checked", game.name);
    }
}

#[test]
fn matrix_game_tree_gives_the_normal_form_nash_conv() {
    let game = registry::load("matrix_brps").unwrap();
    let t = GameTree::build(&game).unwrap();
    // Biased RPS equilibrium (1/16, 10/16, 5/16).
    let eq = TabularPolicy::from_fn(&t, |_| vec![1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0]).unwrap();
    assert!(nash_conv(&t, &[&eq, &eq]).unwrap() < 1e-12);
    let u = TabularPolicy::uniform(&t);
    let metagame::games::AnyGame::Matrix(m) = &game else { panic!("matrix game") };
    let s = vec![vec![1.0 / 3.0; 3]; 2];
    let direct = m.normal_form().nash_conv(&s);
    assert!((nash_conv(&t, &[&u, &u]).unwrap() - direct).abs() < 1e-12);
}

#[test]
fn unknown_games_and_parameters_are_errors_that_list_what_exists() {
    let err = registry::load("chess").unwrap_err().to_string();
    assert!(err.contains("kuhn_poker") && err.contains("leduc_poker"), "{err}");
    let err = registry::load("kuhn_poker(players=11)").unwrap_err().to_string();
    assert!(err.contains("2..=10"), "{err}");
    let err = registry::load("kuhn_poker(cards=3)").unwrap_err().to_string();
    assert!(err.contains("players"), "{err}");
    assert!(registry::load("kuhn_poker(players=3").is_err());
}

/// OpenSpiel 2.0.2's tic_tac_toe, walked through pyspiel: 549 946 histories (255 168
/// terminal, 294 778 decisions: 180 361 of player 0, 114 417 of player 1), NashConv of the
/// uniform policy 1.9196593915343914 (`pyspiel.nash_conv`). Full-depth minimax against
/// itself is an equilibrium (NashConv 0) and a draw.
#[test]
fn tic_tac_toe_equals_openspiel_and_minimax_is_an_equilibrium() {
    let t = tree("tic_tac_toe");
    assert_eq!((t.num_nodes(), t.num_terminals(), t.count(NodeKind::Decision)), (549_946, 255_168, 294_778));
    assert_eq!((t.infosets_of(PlayerId(0)).len(), t.infosets_of(PlayerId(1)).len()), (180_361, 114_417));
    let first = t.infoset_by_key("4, 0").expect("the history is the information state");
    assert_eq!(t.legal_actions(first).len(), 7);
    assert!((nash_conv_of(&t, &TabularPolicy::uniform(&t)) - 1.9196593915343914).abs() < 1e-12);
    let minimax = metagame::games::minimax_policy(&t).unwrap();
    assert!(nash_conv_of(&t, &minimax).abs() < 1e-12);
    assert_eq!(expected_returns(&t, &[&minimax, &minimax]).unwrap(), vec![0.0, 0.0]);
    // Against the uniform player, minimax as x never loses and wins most games.
    let uniform = TabularPolicy::uniform(&t);
    let as_x = expected_returns(&t, &[&minimax, &uniform]).unwrap()[0];
    assert!(as_x > 0.9, "{as_x}");
}
