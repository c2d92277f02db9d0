//! `Mlp`: a multilayer perceptron of `Linear` layers with ReLUs between them, in the layout
//! PyTorch gives `nn.Sequential(Linear, ReLU, Linear, ReLU, …, Linear)`.

use metagame_games::Game;

use crate::error::{Error, Result};
use crate::kernel::PackedLinear;
pub use crate::linear::Linear;

/// The state-dict key of the `k`-th Linear layer's weight: PyTorch numbers the modules of
/// an `nn.Sequential` 0, 1, 2, …, and the ReLUs take the odd numbers.
pub(crate) fn weight_key(k: usize) -> String {
    format!("{}.weight", 2 * k)
}

/// The state-dict key of the `k`-th Linear layer's bias.
pub(crate) fn bias_key(k: usize) -> String {
    format!("{}.bias", 2 * k)
}

/// A multilayer perceptron: Linear layers with a ReLU after each but the last, mapping a
/// game's tensor (flattened) to one logit per distinct action.
///
/// It is PyTorch's
/// `nn.Sequential(nn.Linear(d, h₁), nn.ReLU(), …, nn.Linear(hₙ, A))`: read one saved by
/// `safetensors.torch.save_file(model.state_dict(), path)` with [`Mlp::read`], write one that
/// `model.load_state_dict(safetensors.torch.load_file(path))` loads with [`Mlp::write`].
/// Immutable once built, so one network answers many threads at once
/// ([`Policy`](metagame_games::Policy) is implemented through `&self`). It holds its
/// weights twice: as PyTorch lays them out ([`Mlp::layers`]) and packed for the inference
/// kernel.
///
/// # Examples
///
/// ```
/// use metagame_networks::{Linear, Mlp};
/// use ndarray::{array, Array2};
///
/// // 2 inputs → 2 hidden units → 3 logits.
/// let mlp = Mlp::new(vec![
///     Linear::new(array![[1.0, 0.0], [0.0, -1.0]], array![0.0, 0.0]),
///     Linear::new(array![[1.0, 1.0], [0.0, 0.0], [-1.0, 0.0]], array![0.0, 0.5, 0.0]),
/// ])?;
/// assert_eq!(mlp.sizes(), vec![2, 2, 3]);
/// let logits = mlp.logits(array![[2.0_f32, 3.0]].view())?;
/// // The ReLU zeroes the second hidden unit (−3).
/// assert_eq!(logits, array![[2.0, 0.5, -2.0]]);
/// # Ok::<(), metagame_networks::Error>(())
/// ```
#[derive(Clone)]
pub struct Mlp {
    layers: Vec<Linear>,
    /// How the outputs become a policy.
    output: Output,
    /// The layers' weights in the inference kernel's panels (derived from `layers`).
    packed: Vec<PackedLinear>,
}

/// How a network's outputs become a policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Output {
    /// Logits: the softmax over the legal actions (a policy network).
    #[default]
    Softmax,
    /// Action values: all probability on the legal action of the largest value, the lowest
    /// such action on ties (a Q-network played greedily, as OpenSpiel's DQN policy in
    /// evaluation). Saved as the metadata `"metagame.output": "greedy"`, which PyTorch's
    /// loader ignores.
    Greedy,
}

impl PartialEq for Mlp {
    /// Networks are equal when their layers are (the packed copies follow from them).
    fn eq(&self, other: &Self) -> bool {
        self.layers == other.layers && self.output == other.output
    }
}

impl std::fmt::Debug for Mlp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mlp")
            .field("sizes", &self.sizes())
            .field("output", &self.output)
            .field("layers", &self.layers)
            .finish()
    }
}

impl Mlp {
    /// A network of `layers`, in order, with a ReLU after each but the last.
    ///
    /// The arrays are stored in standard (row-major) layout whatever layout they come in.
    ///
    /// # Errors
    ///
    /// [`Error::NoLayers`] for an empty list; [`Error::NotMatrix`] for a weight with no rows
    /// or no columns; [`Error::BiasShape`] for a bias whose length is not the weight's
    /// rows; [`Error::ShapesDontChain`] when a layer's outputs are not the next layer's
    /// inputs; [`Error::NonFinite`] for a NaN or infinite weight or bias. Layers are named
    /// by their PyTorch keys (`0.weight`, `2.bias`, …).
    pub fn new(layers: Vec<Linear>) -> Result<Self> {
        if layers.is_empty() {
            return Err(Error::NoLayers);
        }
        for (k, layer) in layers.iter().enumerate() {
            let (outputs, inputs) = layer.weight.dim();
            if outputs == 0 || inputs == 0 {
                return Err(Error::NotMatrix { key: weight_key(k), shape: vec![outputs, inputs] });
            }
            if layer.bias.len() != outputs {
                return Err(Error::BiasShape { key: bias_key(k), shape: vec![layer.bias.len()], outputs });
            }
            check_finite(&weight_key(k), layer.weight.iter())?;
            check_finite(&bias_key(k), layer.bias.iter())?;
        }
        for (k, pair) in layers.windows(2).enumerate() {
            if pair[0].num_outputs() != pair[1].num_inputs() {
                return Err(Error::ShapesDontChain {
                    from: weight_key(k),
                    outputs: pair[0].num_outputs(),
                    to: weight_key(k + 1),
                    inputs: pair[1].num_inputs(),
                });
            }
        }
        let layers: Vec<Linear> = layers
            .into_iter()
            .map(|l| Linear {
                weight: l.weight.as_standard_layout().into_owned(),
                bias: l.bias.as_standard_layout().into_owned(),
            })
            .collect();
        let packed = layers.iter().map(PackedLinear::new).collect();
        Ok(Self { layers, packed, output: Output::Softmax })
    }

    /// The same network, its outputs read as `output`.
    #[must_use]
    pub fn with_output(self, output: Output) -> Self {
        Self { output, ..self }
    }

    /// How the outputs become a policy.
    pub fn output(&self) -> Output {
        self.output
    }

    /// The layers, first to last.
    pub fn layers(&self) -> &[Linear] {
        &self.layers
    }

    /// The layers packed for inference, first to last.
    pub(crate) fn packed(&self) -> &[PackedLinear] {
        &self.packed
    }

    /// Width of the input: the first layer's inputs.
    pub fn input_size(&self) -> usize {
        self.layers[0].num_inputs()
    }

    /// Number of logits: the last layer's outputs.
    pub fn output_size(&self) -> usize {
        self.layers[self.layers.len() - 1].num_outputs()
    }

    /// The widths from input to output: `[d, h₁, …, hₙ, A]`.
    pub fn sizes(&self) -> Vec<usize> {
        std::iter::once(self.input_size()).chain(self.layers.iter().map(Linear::num_outputs)).collect()
    }

    /// Number of weights and biases.
    pub fn num_parameters(&self) -> usize {
        self.layers.iter().map(|l| l.weight.len() + l.bias.len()).sum()
    }

    /// Check that the network reads tensors of `input_size` values (the game's
    /// [`TensorShape::size`](metagame_games::TensorShape::size), flattened) and answers
    /// `num_actions` logits (the game's distinct actions).
    ///
    /// # Errors
    ///
    /// [`Error::DoesNotFit`] naming both shapes.
    pub fn check_fits(&self, input_size: usize, num_actions: usize) -> Result<()> {
        if self.input_size() != input_size || self.output_size() != num_actions {
            return Err(Error::DoesNotFit {
                network_inputs: self.input_size(),
                network_outputs: self.output_size(),
                game_inputs: input_size,
                game_actions: num_actions,
            });
        }
        Ok(())
    }

    /// [`Mlp::check_fits`] against a game's tensor shape and distinct actions.
    ///
    /// # Errors
    ///
    /// [`Error::NoTensor`] for a game that gives no tensor; [`Error::DoesNotFit`].
    pub fn check_fits_game<G: Game>(&self, game: &G) -> Result<()> {
        let shape = game.tensor_shape().ok_or_else(|| Error::NoTensor(game.name()))?;
        self.check_fits(shape.size(), game.num_distinct_actions())
    }
}

/// The first NaN or infinity of a tensor, named by its key.
pub(crate) fn check_finite<'a>(key: &str, values: impl Iterator<Item = &'a f32>) -> Result<()> {
    match values.enumerate().find(|(_, v)| !v.is_finite()) {
        Some((index, &value)) => Err(Error::NonFinite { key: key.into(), index, value }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array1, Array2, array};

    use super::*;

    fn layer(outputs: usize, inputs: usize) -> Linear {
        Linear::new(Array2::zeros((outputs, inputs)), Array1::zeros(outputs))
    }

    #[test]
    fn sizes_and_parameters() {
        let mlp = Mlp::new(vec![layer(16, 30), layer(16, 16), layer(3, 16)]).unwrap();
        assert_eq!(mlp.sizes(), vec![30, 16, 16, 3]);
        assert_eq!((mlp.input_size(), mlp.output_size()), (30, 3));
        assert_eq!(mlp.num_parameters(), 30 * 16 + 16 + 16 * 16 + 16 + 16 * 3 + 3);
    }

    #[test]
    fn an_empty_network_is_refused() {
        assert!(matches!(Mlp::new(vec![]), Err(Error::NoLayers)));
    }

    #[test]
    fn shapes_that_do_not_chain_name_both_weights() {
        let err = Mlp::new(vec![layer(16, 30), layer(3, 17)]).unwrap_err();
        assert!(matches!(&err, Error::ShapesDontChain { outputs: 16, inputs: 17, .. }));
        assert_eq!(err.to_string(), "`0.weight` gives 16 outputs but `2.weight` takes 17 inputs");
    }

    #[test]
    fn a_bias_of_the_wrong_length_is_named() {
        let bad = Linear::new(Array2::zeros((3, 4)), Array1::zeros(2));
        let err = Mlp::new(vec![layer(4, 2), bad]).unwrap_err();
        assert_eq!(err.to_string(), "`2.bias` has shape [2], not [3] as its weight's 3 outputs need");
    }

    #[test]
    fn an_empty_weight_is_not_a_matrix() {
        let err = Mlp::new(vec![layer(0, 4)]).unwrap_err();
        assert!(matches!(err, Error::NotMatrix { ref key, .. } if key == "0.weight"), "{err}");
    }

    #[test]
    fn non_finite_weights_are_named_with_their_tensor() {
        let mut bad = layer(3, 4);
        bad.weight[[1, 2]] = f32::NAN;
        let err = Mlp::new(vec![layer(4, 2), bad]).unwrap_err();
        assert_eq!(err.to_string(), "`2.weight` holds a non-finite value NaN at element 6");
        let mut bad = layer(4, 2);
        bad.bias[3] = f32::NEG_INFINITY;
        let err = Mlp::new(vec![bad]).unwrap_err();
        assert_eq!(err.to_string(), "`0.bias` holds a non-finite value -inf at element 3");
    }

    #[test]
    fn fits_names_both_shapes() {
        let mlp = Mlp::new(vec![layer(3, 30)]).unwrap();
        mlp.check_fits(30, 3).unwrap();
        let err = mlp.check_fits(126, 7).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a network of 30 inputs and 3 outputs does not fit a game of tensor size 126 and 7 actions"
        );
        assert!(mlp.check_fits(30, 4).is_err() && mlp.check_fits(31, 3).is_err());
    }

    /// Leduc with the information-state tensor OpenSpiel gives it (30 values).
    struct LeducWithTensor(metagame_games::AnyGame);

    impl Game for LeducWithTensor {
        type State = metagame_games::AnyState;
        fn name(&self) -> String {
            self.0.name()
        }
        fn num_players(&self) -> usize {
            self.0.num_players()
        }
        fn num_distinct_actions(&self) -> usize {
            self.0.num_distinct_actions()
        }
        fn new_initial_state(&self) -> Self::State {
            self.0.new_initial_state()
        }
        fn utility_sum(&self) -> Option<f64> {
            self.0.utility_sum()
        }
        fn tensor_shape(&self) -> Option<metagame_games::TensorShape> {
            Some(metagame_games::TensorShape::new(metagame_games::TensorKind::InformationState, vec![30]))
        }
    }

    #[test]
    fn fits_a_game_by_its_tensor_and_actions() {
        let leduc = metagame_games::registry::load("leduc_poker").unwrap();
        let mlp = Mlp::new(vec![layer(8, 30), layer(3, 8)]).unwrap();
        if leduc.tensor_shape().is_none() {
            let err = mlp.check_fits_game(&leduc).unwrap_err();
            assert_eq!(err.to_string(), "game `leduc_poker` gives no tensor for a network to read");
        }
        let leduc = LeducWithTensor(leduc);
        mlp.check_fits_game(&leduc).unwrap();
        let err = Mlp::new(vec![layer(2, 30)]).unwrap().check_fits_game(&leduc).unwrap_err();
        assert!(matches!(err, Error::DoesNotFit { game_inputs: 30, game_actions: 3, .. }), "{err}");
    }

    #[test]
    fn layouts_are_made_standard() {
        let weight = array![[1.0_f32, 2.0], [3.0, 4.0]].reversed_axes();
        let mlp = Mlp::new(vec![Linear::new(weight.clone(), array![0.0, 0.0])]).unwrap();
        assert!(mlp.layers()[0].weight.is_standard_layout());
        assert_eq!(mlp.layers()[0].weight, weight);
    }
}
