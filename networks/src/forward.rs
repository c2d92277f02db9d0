//! Batched float32 inference: the batch in passes of up to 192 rows, each pass through all
//! the layers with the [`kernel`](crate::kernel) (GEMM, bias and ReLU fused), the
//! activations in a per-thread scratch.
//!
//! A row's logits are bit-identical whatever batch it is in and wherever in it: every
//! output is one sequence of fused multiply-adds in a fixed order (the kernel module says
//! why); `tests/mlp.rs` (module `determinism`) holds the crate to it.

use std::cell::RefCell;

use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis, ShapeBuilder, Slice};

use crate::error::{Error, Result};
use crate::kernel::Apply;
use crate::mlp::Mlp;

/// A thread's scratch: the activations of two consecutive layers and the kernel's strip.
#[derive(Default)]
struct Scratch {
    activations: Vec<f32>,
    strip: Vec<f32>,
}

thread_local! {
    /// Each thread's scratch, kept between calls: a frozen network shares nothing mutable,
    /// so threads answering one network never contend, and a rollout's many small batches
    /// do not allocate.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Rows taken through all the layers at once: enough to fill the kernel's row blocks, few
/// enough that two layers' activations (2 × 192 × 128 floats for the 2×128 network, 192 KiB)
/// stay in a core's L2 cache rather than streaming through memory. It bounds the scratch
/// too, whatever the batch.
const ROWS_PER_PASS: usize = 192;

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

    /// [`Mlp::logits`] written into `out` (`[B × A]`, any layout). The input may have any
    /// layout too (one that is not row-major is copied first).
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
        if batch == 0 {
            return Ok(());
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.forward(input, out, &mut scratch),
            // Only a call made from within a forward pass finds it taken; none is today.
            Err(_) => self.forward(input, out, &mut Scratch::default()),
        });
        Ok(())
    }

    /// The forward pass on checked shapes, [`ROWS_PER_PASS`] rows at a time through all
    /// the layers.
    fn forward(&self, input: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, scratch: &mut Scratch) {
        let batch = input.nrows();
        let input = input.as_standard_layout();
        // INVARIANT: `as_standard_layout` gives a row-major contiguous array.
        let input = input.as_slice().expect("a standard-layout array is a slice");
        let layers = self.packed();
        let widest = layers.iter().map(|l| l.padded_outputs()).max().unwrap_or(0);
        let rows = batch.min(ROWS_PER_PASS);
        scratch.activations.resize(2 * rows * widest, 0.0);
        let arch = pulp::Arch::new();
        let (d, actions) = (self.input_size(), self.output_size());
        for start in (0..batch).step_by(ROWS_PER_PASS) {
            let rows = (batch - start).min(ROWS_PER_PASS);
            let (mut front, mut back) = scratch.activations.split_at_mut(rows * widest);
            let mut x_stride = d;
            for (k, layer) in layers.iter().enumerate() {
                let x: &[f32] = if k == 0 { &input[start * d..(start + rows) * d] } else { front };
                let y = &mut back[..rows * layer.padded_outputs()];
                let relu = k + 1 < layers.len();
                arch.dispatch(Apply { layer, x, x_stride, rows, relu, y, strip: &mut scratch.strip });
                x_stride = layer.padded_outputs();
                std::mem::swap(&mut front, &mut back);
            }
            // The last layer's padded rows, now in `front`, cut to the actions.
            // INVARIANT: `front` holds `rows` rows of `x_stride ≥ actions` floats.
            let logits = ArrayView2::from_shape((rows, actions).strides((x_stride, 1)), front)
                .expect("the last layer's rows are in scratch");
            out.slice_axis_mut(Axis(0), Slice::from(start..start + rows)).assign(&logits);
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, ShapeBuilder};

    use super::*;

    #[test]
    fn any_input_layout_gives_the_same_logits() {
        let mlp = Mlp::random(&[5, 20, 3], 1).unwrap();
        let input = Array2::from_shape_fn((9, 5), |(r, c)| (r as f32 - 4.0) * 0.3 + c as f32 * 0.1);
        let want = mlp.logits(input.view()).unwrap();
        let mut column_major = Array2::zeros((9, 5).f());
        column_major.assign(&input);
        assert_eq!(mlp.logits(column_major.view()).unwrap(), want);
        let mut out = Array2::from_elem((3, 9), f32::NAN);
        mlp.logits_into(input.view(), out.view_mut().reversed_axes()).unwrap();
        assert_eq!(out.t(), want);
        assert_eq!(mlp.logits(Array2::zeros((0, 5)).view()).unwrap().dim(), (0, 3));
    }

    #[test]
    fn a_wrong_output_shape_is_an_error() {
        let mlp = Mlp::random(&[5, 3], 1).unwrap();
        let mut out = Array2::zeros((2, 4));
        let err = mlp.logits_into(Array2::zeros((2, 5)).view(), out.view_mut()).unwrap_err();
        assert_eq!(err.to_string(), "shape mismatch: logits of 2 inputs and 3 actions written into (2, 4)");
    }
}

#[cfg(test)]
mod kernel_tests {
    use ndarray::linalg::general_mat_mul;
    use ndarray::{Array1, Array2};

    use crate::Mlp;
    use crate::linear::Linear;

    /// Values in [−1, 1) of no particular pattern.
    fn values(rows: usize, cols: usize, salt: usize) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(r, c)| {
            let h = (r * 7919 + c * 104_729 + salt * 15_485_863) % 1_000_003;
            h as f32 / 500_001.5 - 1.0
        })
    }

    // The kernel's arithmetic, through the forward pass.

    /// The same sums as `matrixmultiply`'s FMA kernel (ndarray's GEMM), so the same bits,
    /// up to its 256-deep blocks (past them it adds block sums, another order).
    #[test]
    fn agrees_with_matrixmultiply_bit_for_bit() {
        // matrixmultiply fuses only where the CPU has FMA (NEON always does).
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("fma") {
            return;
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        return;
        for (rows, k, n) in
            [(1, 30, 128), (7, 128, 128), (64, 126, 7), (13, 256, 3), (200, 17, 33), (5, 1, 1)]
        {
            let weight = values(n, k, 1);
            let bias = Array1::from_iter(values(1, n, 2));
            let x = values(rows, k, 3);
            let mlp = Mlp::new(vec![Linear::new(weight.clone(), bias.clone())]).unwrap();
            let mut want = Array2::zeros((rows, n));
            general_mat_mul(1.0, &x, &weight.t(), 0.0, &mut want);
            want += &bias;
            let got = mlp.logits(x.view()).unwrap();
            let bits = |a: &Array2<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{rows} x {k} -> {n}");
        }
    }

    #[test]
    fn relu_between_layers_only_and_nan_passes_through() {
        let first = Linear::new(Array2::from_shape_vec((2, 1), vec![1.0, -1.0]).unwrap(), Array1::zeros(2));
        let last = Linear::new(
            Array2::from_shape_vec((2, 2), vec![1.0, 1.0, -1.0, -1.0]).unwrap(),
            Array1::zeros(2),
        );
        let mlp = Mlp::new(vec![first, last]).unwrap();
        let logits =
            mlp.logits(Array2::from_shape_vec((3, 1), vec![2.0, -3.0, f32::NAN]).unwrap().view()).unwrap();
        // relu(±x) sums to |x|; the last layer's negative output is kept.
        assert_eq!(logits.row(0).to_vec(), vec![2.0, -2.0]);
        assert_eq!(logits.row(1).to_vec(), vec![3.0, -3.0]);
        assert!(logits.row(2).iter().all(|v| v.is_nan()));
    }
}
