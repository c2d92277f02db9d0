//! `Linear`: one `nn.Linear` layer of a network, in PyTorch's shapes.

use ndarray::{Array1, Array2};

/// One `nn.Linear` layer: `y = x Wᵀ + b`, with PyTorch's shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    /// `[out × in]`, as `nn.Linear.weight` (row `j` holds output `j`'s input weights).
    pub weight: Array2<f32>,
    /// `[out]`, as `nn.Linear.bias`.
    pub bias: Array1<f32>,
}

impl Linear {
    /// A layer from its weight `[out × in]` and bias `[out]` (checked by [`Mlp::new`](crate::Mlp::new)).
    pub fn new(weight: Array2<f32>, bias: Array1<f32>) -> Self {
        Self { weight, bias }
    }
    /// Number of inputs (`in`).
    pub fn num_inputs(&self) -> usize {
        self.weight.ncols()
    }
    /// Number of outputs (`out`).
    pub fn num_outputs(&self) -> usize {
        self.weight.nrows()
    }
}
