//! Batched float32 inference: each layer one GEMM of the batch against the layer's weight,
//! then bias and ReLU in one pass.
//!
//! # Determinism
//!
//! A row's logits are bit-identical whatever the batch holds around it. The GEMM is
//! `matrixmultiply`'s `sgemm` (through `ndarray`'s `general_mat_mul`), whose micro-kernel
//! computes each output as one sequence of fused multiply-adds over the inner dimension in
//! order, in 256-deep blocks, whatever the tile (partial tiles run the same kernel into a
//! buffer), and whose kernel is chosen by the CPU's features, never by the matrix sizes.
//! The bias is added after the GEMM (`β = 0`, so no product depends on what the output
//! held). `tests/mlp.rs` (module `determinism`) holds the crate to it.

use std::cell::RefCell;

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use crate::error::{Error, Result};
use crate::mlp::Mlp;

thread_local! {
    /// Each thread's hidden activations, kept between calls: a frozen network shares
    /// nothing mutable, so threads answering one network never contend.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Past this many floats (16 MiB) a thread does not keep its scratch after the call.
const MAX_KEPT_SCRATCH: usize = 1 << 22;

impl Mlp {
    /// The logits `[B × A]` of a batch of inputs `[B × d]`.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when the input's width is not the network's
    /// [`input_size`](Mlp::input_size).
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_networks::Mlp;
    /// use ndarray::Array2;
    ///
    /// let mlp = Mlp::random(&[30, 128, 128, 3], 7)?;
    /// let batch = Array2::<f32>::ones((64, 30));
    /// let logits = mlp.logits(batch.view())?;
    /// assert_eq!(logits.dim(), (64, 3));
    /// assert!(mlp.logits(Array2::<f32>::ones((1, 29)).view()).is_err());
    /// # Ok::<(), metagame_networks::Error>(())
    /// ```
    pub fn logits(&self, input: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        let mut out = Array2::zeros((input.nrows(), self.output_size()));
        self.logits_into(input, out.view_mut())?;
        Ok(out)
    }

    /// [`Mlp::logits`] written into `out` (`[B × A]`, any layout).
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when the input's width is not the network's
    /// [`input_size`](Mlp::input_size) or `out` is not `[B × A]`.
    pub fn logits_into(&self, input: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>) -> Result<()> {
        let batch = input.nrows();
        if input.ncols() != self.input_size() {
            return Err(Error::Shape(format!(
                "inputs of width {} for a network of {} inputs",
                input.ncols(),
                self.input_size()
            )));
        }
        if out.dim() != (batch, self.output_size()) {
            return Err(Error::Shape(format!(
                "logits of {batch} inputs and {} actions written into {:?}",
                self.output_size(),
                out.dim()
            )));
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                self.forward(input, out, &mut scratch);
                if scratch.capacity() > MAX_KEPT_SCRATCH {
                    *scratch = Vec::new();
                }
            }
            // Only a re-entrant call (from within a forward pass) finds it borrowed.
            Err(_) => self.forward(input, out, &mut Vec::new()),
        });
        Ok(())
    }

    /// The forward pass on checked shapes, hidden activations in `scratch`.
    fn forward(&self, input: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, scratch: &mut Vec<f32>) {
        let batch = input.nrows();
        let layers = self.layers();
        let widest = layers[..layers.len() - 1].iter().map(|l| l.num_outputs()).max().unwrap_or(0);
        scratch.resize(2 * batch * widest, 0.0);
        let (mut front, mut back) = scratch.split_at_mut(batch * widest);
        for (k, layer) in layers.iter().enumerate() {
            let width = layer.num_outputs();
            let last = k + 1 == layers.len();
            // INVARIANT: each half holds `batch × widest` floats and `width ≤ widest`.
            let source = if k == 0 {
                input.view()
            } else {
                ArrayView2::from_shape((batch, layer.num_inputs()), &front[..batch * layer.num_inputs()])
                    .expect("scratch holds the previous layer")
            };
            let mut target = if last {
                out.view_mut()
            } else {
                ArrayViewMut2::from_shape((batch, width), &mut back[..batch * width])
                    .expect("scratch holds this layer")
            };
            general_mat_mul(1.0, &source, &layer.weight.t(), 0.0, &mut target);
            for mut row in target.rows_mut() {
                for (v, &b) in row.iter_mut().zip(&layer.bias) {
                    let x = *v + b;
                    // ReLU that lets a NaN through, as PyTorch's does.
                    *v = if !last && x < 0.0 { 0.0 } else { x };
                }
            }
            std::mem::swap(&mut front, &mut back);
        }
    }
}
