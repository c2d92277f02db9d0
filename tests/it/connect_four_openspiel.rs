//! `connect_four` against OpenSpiel 2.0.2, state by state over random games OpenSpiel played
//! (`tests/fixtures/openspiel/connect_four_playouts.json`, written by
//! `benches/peers/make_connect_four_fixture.py`; its docstring describes the fields).

use metagame::games::{ActionId, ConnectFour, Game, PlayerId, State, TensorKind, Turn, registry};
use serde_json::Value;

const FIXTURE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openspiel/connect_four_playouts.json");

fn numbers(value: &Value) -> Vec<usize> {
    value.as_array().unwrap().iter().map(|a| a.as_u64().unwrap() as usize).collect()
}

/// The tensor a `planes` string stands for: cell `r * 7 + c` is 1 on the plane its digit
/// names and 0 on the other two.
fn tensor_of(planes: &str) -> Vec<f32> {
    assert_eq!(planes.len(), 42, "{planes}");
    let mut t = vec![0.0; 126];
    for (cell, digit) in planes.bytes().enumerate() {
        t[usize::from(digit - b'0') * 42 + cell] = 1.0;
    }
    t
}

#[test]
fn connect_four_replays_openspiels_random_games_state_by_state() {
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(fixture["game"], "connect_four");
    let game = registry::load("connect_four").unwrap();
    assert_eq!(game.name(), "connect_four");
    assert_eq!((game.num_players(), game.num_distinct_actions()), (2, 7));
    let shape = game.tensor_shape().unwrap();
    assert_eq!((shape.kind, shape.dims.as_slice()), (TensorKind::Observation, &[3, 6, 7][..]));

    let games = fixture["games"].as_array().unwrap();
    // 100 random games, then two draws and a game won with the 42nd stone.
    assert_eq!(games.len(), 103);
    let mut outcomes = [0; 3];
    let mut states_checked = 0;
    let mut tensor = vec![f32::NAN; 126];
    for g in games {
        let index = &g["index"];
        let actions = numbers(&g["actions"]);
        let steps = g["steps"].as_array().unwrap();
        assert_eq!(steps.len(), actions.len() + 1, "game {index}");
        // The registry's state (what rollouts use) and the concrete one, for its `Display`.
        let mut any = game.new_initial_state();
        let mut state = ConnectFour.new_initial_state();
        for (k, step) in steps.iter().enumerate() {
            let at = format!("game {index} after {:?}", &actions[..k]);
            let history: Vec<usize> = any.history().iter().map(|a| a.0).collect();
            assert_eq!(history, actions[..k], "{at}");
            let player = step["player"].as_i64().unwrap();
            let me = match any.turn() {
                Turn::Player(PlayerId(p)) => {
                    assert_eq!(p as i64, player, "{at}");
                    p
                }
                // pyspiel's kTerminalPlayerId; the fixture's tensors at the end are player 0's.
                Turn::Terminal => {
                    assert_eq!(player, -4, "{at}");
                    0
                }
                Turn::Chance => panic!("{at}: a chance node"),
            };
            let legal: Vec<usize> = any.legal_actions().iter().map(|a| a.0).collect();
            assert_eq!(legal, numbers(&step["legal"]), "{at}");
            for p in [PlayerId(0), PlayerId(1)] {
                assert_eq!(any.information_state_string(p), step["info"].as_str().unwrap(), "{at}");
            }
            assert_eq!(state.to_string(), step["board"].as_str().unwrap(), "{at}");
            any.write_tensor(PlayerId(me), &mut tensor);
            assert_eq!(tensor, tensor_of(step["planes"].as_str().unwrap()), "{at}");
            if let Some(other) = step.get("other") {
                any.write_tensor(PlayerId(1 - me), &mut tensor);
                assert_eq!(tensor, tensor_of(other.as_str().unwrap()), "{at}");
            }
            if let Some(&a) = actions.get(k) {
                any.apply_action(ActionId(a));
                state.apply_action(ActionId(a));
            }
            states_checked += 1;
        }
        assert!(any.is_terminal(), "game {index}");
        let returns: Vec<f64> =
            g["returns"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
        assert_eq!(any.returns(), returns, "game {index}");
        assert_eq!(state.returns(), returns, "game {index}");
        outcomes[(1.0 - returns[0]) as usize] += 1;
    }
    // x wins, draws, o wins: every kind of ending is in the file.
    assert_eq!(outcomes, [57, 2, 44]);
    assert_eq!(states_checked, 2346);
}
