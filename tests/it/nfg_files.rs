//! Gambit .nfg reading and writing.

use metagame::games::{NormalFormGame, nfg};
use ndarray::array;

#[test]
fn payoff_list_body_with_rationals() {
    let text = r#"NFG 1 R "Battle" { "Row" "Col" } { 2 2 }
"a comment"
3 2 0 0 0 0 2 3
"#;
    let g = nfg::from_nfg_str(text).unwrap();
    assert_eq!(g.shape(), &[2, 2]);
    // Player 1's strategy changes fastest: (0,0), (1,0), (0,1), (1,1).
    assert_eq!(g.payoff(0, &[0, 0]), 3.0);
    assert_eq!(g.payoff(1, &[1, 1]), 3.0);
    assert_eq!(g.payoff(0, &[1, 0]), 0.0);
    let third = nfg::from_nfg_str("NFG 1 R \"\" { \"A\" \"B\" } { 1 2 }\n1/3 -1/3 2.5 -2.5").unwrap();
    assert!((third.payoff(0, &[0, 0]) - 1.0 / 3.0).abs() < 1e-16);
    assert_eq!(third.payoff(1, &[0, 1]), -2.5);
}

#[test]
fn outcome_list_body_with_named_strategies() {
    let text = r#"NFG 1 R "PD" { "Player 1" "Player 2" }
{ { "C" "D" } { "C" "D" } }
""
{
{ "CC" 5, 5 }
{ "DC" 10, 0 }
{ "CD" 0, 10 }
{ "DD" 1, 1 }
}
1 2 3 4
"#;
    let g = nfg::from_nfg_str(text).unwrap();
    assert_eq!(g.strategy_names()[0], vec!["C", "D"]);
    assert_eq!(g.payoff(0, &[1, 0]), 10.0);
    assert_eq!(g.payoff(1, &[0, 1]), 10.0);
    assert_eq!(g.payoff(0, &[1, 1]), 1.0);
}

#[test]
fn write_then_read_is_the_same_game() {
    let g = NormalFormGame::new(vec![
        array![[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.5]]].into_dyn(),
        array![[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]].into_dyn(),
        array![[[-1.0, -2.0], [-3.0, -4.0]], [[-5.0, -6.0], [-7.0, -8.0]]].into_dyn(),
    ])
    .unwrap()
    .with_title("three players");
    let again = nfg::from_nfg_str(&nfg::to_nfg_string(&g)).unwrap();
    assert_eq!(g, again);
}

#[test]
fn malformed_files_are_errors_with_a_line() {
    for bad in [
        "",
        "NFG 2 R \"\" { \"a\" \"b\" } { 1 1 } 0 0",
        "NFG 1 R \"\" { \"a\" \"b\" } { 2 2 } 1 2 3",
        "NFG 1 R \"\" { \"a\" \"b\" } { 1 1 } x y",
        "NFG 1 R \"\" { \"a\" \"b\" } { 1 1 } 1/0 1",
        "NFG 1 R \"\" { \"a\" } { 1 } 1",
        "NFG 1 R \"\" { \"a\" \"b\" } { 1 1 } { { \"\" 1 2 } } 2",
        "NFG 1 R \"unterminated { \"a\" \"b\" } { 1 1 } 1 1",
    ] {
        let err = nfg::from_nfg_str(bad).unwrap_err().to_string();
        assert!(err.contains("nfg") || err.contains("players"), "{bad:?}: {err}");
    }
}

#[test]
fn non_finite_and_mismatched_payoffs_are_rejected() {
    assert!(NormalFormGame::zero_sum(array![[1.0, f64::NAN]]).is_err());
    assert!(NormalFormGame::bimatrix(array![[1.0, 2.0]], array![[1.0], [2.0]]).is_err());
    assert!(NormalFormGame::new(vec![array![1.0].into_dyn()]).is_err());
}
