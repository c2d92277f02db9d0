//! The parameters of a multilayer perceptron as the neural learners train them: plain
//! vectors in PyTorch's layout (so that they save to JSON, turn into the frozen
//! [`Mlp`] member and back, and update without a framework), made into candle variables
//! for each gradient.
//!
//! candle computes the gradients; the update ([`Adam`]) is the learners' own, because
//! candle-nn's optimisers keep their moments private and a checkpoint must hold them.

use candle_core::{DType, Device, Tensor, Var};
use metagame_networks::{Linear, Mlp};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A candle failure as a learners error (a shape the learner built wrong, or a NaN).
pub(crate) fn candle(e: candle_core::Error) -> Error {
    Error::Diverged(format!("gradient computation failed: {e}"))
}

/// Weights and biases of `Linear, ReLU, …, Linear`, layer by layer: the weight `[out × in]`
/// row-major, then the bias `[out]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Params {
    /// Input size, the hidden sizes, the output size.
    pub sizes: Vec<usize>,
    /// `2 × layers` vectors: weight, bias, weight, bias, …
    pub tensors: Vec<Vec<f32>>,
}

impl Params {
    /// PyTorch's default initialisation of `nn.Linear` from `seed` ([`Mlp::random`]).
    pub fn random(sizes: &[usize], seed: u64) -> Result<Self> {
        Ok(Self::of(&Mlp::random(sizes, seed)?))
    }

    /// The parameters of a network.
    pub fn of(mlp: &Mlp) -> Self {
        let mut tensors = Vec::with_capacity(2 * mlp.layers().len());
        for layer in mlp.layers() {
            tensors.push(layer.weight.iter().copied().collect());
            tensors.push(layer.bias.to_vec());
        }
        Self { sizes: mlp.sizes(), tensors }
    }

    /// The frozen network (checked finite: a diverged learner is one line, not a member).
    pub fn to_mlp(&self) -> Result<Mlp> {
        let layers = self
            .sizes
            .windows(2)
            .zip(self.tensors.chunks_exact(2))
            .map(|(io, wb)| {
                let weight = Array2::from_shape_vec((io[1], io[0]), wb[0].clone())
                    .map_err(|e| Error::Diverged(format!("a weight of the wrong size: {e}")))?;
                Ok(Linear::new(weight, Array1::from(wb[1].clone())))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Mlp::new(layers)?)
    }

    /// The parameters as candle variables, in [`Params::tensors`]' order.
    pub fn vars(&self) -> Result<Vec<Var>> {
        let mut vars = Vec::with_capacity(self.tensors.len());
        for (io, wb) in self.sizes.windows(2).zip(self.tensors.chunks_exact(2)) {
            let w = Tensor::from_slice(&wb[0], (io[1], io[0]), &Device::Cpu).map_err(candle)?;
            let b = Tensor::from_slice(&wb[1], io[1], &Device::Cpu).map_err(candle)?;
            vars.push(Var::from_tensor(&w).map_err(candle)?);
            vars.push(Var::from_tensor(&b).map_err(candle)?);
        }
        Ok(vars)
    }
}

/// `x` `[B × in]` through the network whose variables are `vars` (ReLU between layers).
pub(crate) fn forward(vars: &[Var], x: &Tensor) -> Result<Tensor> {
    let layers = vars.len() / 2;
    let mut h = x.clone();
    for (i, wb) in vars.chunks_exact(2).enumerate() {
        h = h.matmul(&wb[0].as_tensor().t().map_err(candle)?).map_err(candle)?;
        h = h.broadcast_add(wb[1].as_tensor()).map_err(candle)?;
        if i + 1 < layers {
            h = h.relu().map_err(candle)?;
        }
    }
    Ok(h)
}

/// The tensors of `seat`'s information sets of `tree` as one `[infosets × d]` matrix, with
/// the range of their ids (what a network's values are read on).
pub(crate) fn seat_tensors(
    tree: &metagame_games::GameTree,
    seat: usize,
) -> Result<(std::ops::Range<usize>, Tensor)> {
    let range = tree.infosets_of(metagame_games::PlayerId(seat));
    let d = tree.tensor_shape().map_or(0, metagame_games::TensorShape::size);
    let all = tree.infoset_tensors().unwrap_or_default();
    let x = matrix(&all[range.start * d..range.end * d], range.len(), d)?;
    Ok((range, x))
}

/// A `[rows × cols]` tensor of `values`.
pub(crate) fn matrix(values: &[f32], rows: usize, cols: usize) -> Result<Tensor> {
    Tensor::from_slice(values, (rows, cols), &Device::Cpu).map_err(candle)
}

/// A vector tensor of `values`.
pub(crate) fn vector(values: &[f32]) -> Result<Tensor> {
    Tensor::from_slice(values, values.len(), &Device::Cpu).map_err(candle)
}

/// The values of a tensor, flattened.
pub(crate) fn values(t: &Tensor) -> Result<Vec<f32>> {
    t.to_dtype(DType::F32).and_then(|t| t.flatten_all()).and_then(|t| t.to_vec1::<f32>()).map_err(candle)
}

/// Adam (Kingma and Ba 2015) over plain vectors, with the global gradient-norm clip that
/// PPO implementations apply before it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Adam {
    /// First moments, one vector per parameter tensor.
    pub m: Vec<Vec<f32>>,
    /// Second moments.
    pub v: Vec<Vec<f32>>,
    /// Steps taken.
    pub t: u64,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
}

impl Adam {
    /// Zero moments for parameters shaped as `params`.
    pub fn new(params: &Params, eps: f32) -> Self {
        let zeros: Vec<Vec<f32>> = params.tensors.iter().map(|t| vec![0.0; t.len()]).collect();
        Self { m: zeros.clone(), v: zeros, t: 0, beta1: 0.9, beta2: 0.999, eps }
    }

    /// One step of size `lr` along `grads` (one vector per tensor of `params`).
    pub fn step(&mut self, params: &mut Params, grads: &[Vec<f32>], lr: f32) {
        self.t += 1;
        let t = i32::try_from(self.t).unwrap_or(i32::MAX);
        let c1 = 1.0 - self.beta1.powi(t);
        let c2 = 1.0 - self.beta2.powi(t);
        for (((p, g), m), v) in params.tensors.iter_mut().zip(grads).zip(&mut self.m).zip(&mut self.v) {
            for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                *m = self.beta1 * *m + (1.0 - self.beta1) * g;
                *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
                let (mh, vh) = (*m / c1, *v / c2);
                *p -= lr * mh / (vh.sqrt() + self.eps);
            }
        }
    }
}

/// Scale every gradient so that their joint Euclidean norm is at most `max_norm`; the norm
/// before scaling.
pub(crate) fn clip_grad_norm(grads: &mut [Vec<f32>], max_norm: f32) -> f32 {
    let norm = grads.iter().flatten().map(|&g| f64::from(g) * f64::from(g)).sum::<f64>().sqrt() as f32;
    if norm > max_norm && norm.is_finite() {
        let scale = max_norm / (norm + 1e-6);
        grads.iter_mut().flatten().for_each(|g| *g *= scale);
    }
    norm
}

/// The gradients of `vars` in `grads`, as vectors (zeros for a variable the loss does not
/// reach).
pub(crate) fn gradients(vars: &[Var], grads: &candle_core::backprop::GradStore) -> Result<Vec<Vec<f32>>> {
    vars.iter()
        .map(|v| match grads.get(v.as_tensor()) {
            Some(g) => values(g),
            None => Ok(vec![0.0; v.as_tensor().elem_count()]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_round_trip_through_the_frozen_network() {
        let p = Params::random(&[5, 8, 3], 1).unwrap();
        let back = Params::of(&p.to_mlp().unwrap());
        assert_eq!(back, p);
        assert_eq!(p.tensors.iter().map(Vec::len).sum::<usize>(), 5 * 8 + 8 + 8 * 3 + 3);
    }

    /// candle's forward pass through the variables equals the frozen network's logits.
    #[test]
    fn the_trained_forward_pass_is_the_members() {
        let p = Params::random(&[4, 16, 16, 3], 2).unwrap();
        let x: Vec<f32> = (0..20).map(|i| (i as f32 * 0.37).sin()).collect();
        let ours = values(&forward(&p.vars().unwrap(), &matrix(&x, 5, 4).unwrap()).unwrap()).unwrap();
        let member =
            p.to_mlp().unwrap().logits(ndarray::ArrayView2::from_shape((5, 4), &x).unwrap()).unwrap();
        for (a, b) in ours.iter().zip(member.iter()) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    /// Adam on a quadratic moves towards its minimum; the clip bounds the norm.
    #[test]
    fn adam_descends_and_the_clip_bounds_the_norm() {
        let mut p = Params { sizes: vec![1, 1], tensors: vec![vec![3.0], vec![-2.0]] };
        let mut adam = Adam::new(&p, 1e-8);
        for _ in 0..2000 {
            let grads = vec![vec![2.0 * p.tensors[0][0]], vec![2.0 * p.tensors[1][0]]];
            adam.step(&mut p, &grads, 0.01);
        }
        assert!(p.tensors[0][0].abs() < 0.05 && p.tensors[1][0].abs() < 0.05, "{p:?}");
        let mut g = vec![vec![3.0, 4.0]];
        assert_eq!(clip_grad_norm(&mut g, 1.0), 5.0);
        let n: f32 = g[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-5);
    }
}
