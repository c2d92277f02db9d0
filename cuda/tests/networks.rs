//! Networks placed on the host's twin of the GPU backend: the GPU's calls (cuBLAS's SGEMM
//! layout, the bias-and-ReLU, the policy's softmax) made on the CPU, held to the networks
//! themselves in logits and in matches. No GPU needed.

#![allow(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use metagame_cuda::{HostNetworks, roll_out_on};
use metagame_games::{
    Arena, Decisions, Device, MatchEvaluator, Matchup, PlayerId, Policy, RolloutEvaluator, Uniform,
    check_probabilities, registry,
};
use metagame_networks::{Mlp, Output};
use ndarray::Array2;

/// A network for connect four (126 inputs, 7 actions).
fn connect_four_network(seed: u64) -> Mlp {
    Mlp::random(&[126, 64, 64, 7], seed).unwrap()
}

#[test]
fn a_placed_network_answers_as_the_network_does() {
    let host = HostNetworks::host();
    for output in [Output::Softmax, Output::Greedy] {
        let mlp = connect_four_network(3).with_output(output);
        let placed = mlp.on_device(&host).expect("an mlp is placed");
        assert_eq!(placed.kind(), "mlp");
        let tensors = Array2::from_shape_fn((37, 126), |(r, c)| ((r * 31 + c * 7) % 3) as f32);
        let legal = Array2::from_shape_fn((37, 7), |(r, a)| (r + a) % 4 != 0 || a == 6);
        let batch =
            Decisions { player: PlayerId(0), tensors: tensors.view(), legal: legal.view(), infosets: None };
        let (mut want, mut got) = (Array2::zeros((37, 7)), Array2::zeros((37, 7)));
        mlp.probabilities(&batch, want.view_mut()).unwrap();
        placed.probabilities(&batch, got.view_mut()).unwrap();
        check_probabilities(legal.view(), got.view()).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "{output:?}: {g} vs {w}");
        }
        // A batch of the wrong width is the network's shape error, not a panic.
        let narrow = Array2::zeros((2, 125));
        let legal2 = Array2::from_elem((2, 7), true);
        let bad =
            Decisions { player: PlayerId(0), tensors: narrow.view(), legal: legal2.view(), infosets: None };
        let err = placed.probabilities(&bad, Array2::zeros((2, 7)).view_mut()).unwrap_err();
        assert!(matches!(err, metagame_games::Error::Shape(_)), "{err}");
    }
    // Policies that are not networks stay where they are.
    assert!(Uniform.on_device(&host).is_none());
}

/// A device that counts what it places.
struct Counting(HostNetworks, AtomicUsize);

impl Device for Counting {
    fn place(&self, policy: &dyn std::any::Any) -> Option<Arc<dyn Policy>> {
        let placed = self.0.place(policy)?;
        self.1.fetch_add(1, Ordering::Relaxed);
        Some(placed)
    }
}

/// Connect four between two networks and uniform play, every matchup: the matches with the
/// networks placed draw the same episodes as the CPU's, so their totals agree (here exactly:
/// no draw falls within float rounding of a probability's edge).
#[test]
fn matches_with_placed_networks_are_the_cpus_matches() {
    let game = registry::load("connect_four").unwrap();
    let (a, b) = (connect_four_network(1), connect_four_network(2));
    let policies: [&dyn Policy; 3] = [&a, &b, &Uniform];
    let matchups: Vec<Matchup> =
        (0..3).flat_map(|i| (0..3).map(move |j| Matchup { seats: vec![i, j] })).collect();
    let arena = Arena::rules(&game);
    let cpu = RolloutEvaluator::new().evaluate(arena, &policies, &matchups, 600, 11).unwrap();
    let device = Counting(HostNetworks::host(), AtomicUsize::new(0));
    let placed = roll_out_on(&device, arena, &policies, &matchups, 600, 11).unwrap();
    assert_eq!(device.1.load(Ordering::Relaxed), 2, "both networks placed, uniform not");
    for (m, (c, p)) in cpu.iter().zip(&placed).enumerate() {
        assert_eq!(c.episodes, p.episodes);
        for (x, y) in c.mean().iter().zip(p.mean()) {
            assert!((x - y).abs() <= 1e-9, "matchup {m}: {x} vs {y}");
        }
    }
    // And with the networks answering: not all matchups are uniform's.
    assert_ne!(cpu[0].mean(), cpu[8].mean());
}
