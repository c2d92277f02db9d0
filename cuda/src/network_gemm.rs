//! A network's forward pass as the calls a GPU makes: each layer one column-major SGEMM
//! (cuBLAS's [`LayerGemm`]) and one bias-and-ReLU kernel, written once over a [`Backend`],
//! so that the host backend ([`Host`], placed as [`HostNetwork`](crate::HostNetwork)) runs the very sequence of calls — shapes,
//! transposes, leading dimensions, buffers — that the GPU's runs, and is tested here on the
//! CPU against [`Mlp::logits`].
//!
//! # The layout
//!
//! cuBLAS reads matrices column-major; the network's weights are PyTorch's row-major
//! `W [out × in]` and a batch is row-major `X [rows × in]`. Read column-major, those bytes
//! are `Wᵀ [in × out]` and `Xᵀ [in × rows]`, and the row-major answer `Y = X Wᵀ
//! [rows × out]` is the column-major `Yᵀ = W Xᵀ [out × rows]`: one SGEMM with the first
//! operand transposed, `m = out`, `n = rows`, `k = in`, `lda = ldb = in`, `ldc = out`. No
//! copy of either operand is made, and each layer's output is the next layer's input as it
//! lies.

use metagame_networks::{Mlp, Output};

/// Whether an SGEMM operand is read as it lies or transposed (cuBLAS's `CUBLAS_OP_N` and
/// `CUBLAS_OP_T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As it lies.
    N,
    /// Transposed.
    T,
}

/// One SGEMM in BLAS's column-major terms, `C [m × n] = op(A) op(B)` (α = 1, β = 0):
/// the call one layer makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerGemm {
    /// How `A` is read.
    pub transa: Op,
    /// How `B` is read.
    pub transb: Op,
    /// Rows of `C` and of `op(A)`.
    pub m: usize,
    /// Columns of `C` and of `op(B)`.
    pub n: usize,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: usize,
    /// `A`'s leading dimension.
    pub lda: usize,
    /// `B`'s leading dimension.
    pub ldb: usize,
    /// `C`'s leading dimension.
    pub ldc: usize,
}

impl LayerGemm {
    /// The call for a layer of `inputs → outputs` on `rows` rows (the module docs say why):
    /// `A` the weight as PyTorch lays it out, `B` the batch, `C` the outputs, all row-major.
    pub fn for_layer(inputs: usize, outputs: usize, rows: usize) -> Self {
        LayerGemm {
            transa: Op::T,
            transb: Op::N,
            m: outputs,
            n: rows,
            k: inputs,
            lda: inputs,
            ldb: inputs,
            ldc: outputs,
        }
    }

    /// The floats of `A`, `B` and `C` the call reads or writes: each buffer must hold at
    /// least these (the GPU's calls are checked against them before they are made).
    pub fn extents(&self) -> [usize; 3] {
        let extent = |op: Op, rows: usize, cols: usize, ld: usize| match op {
            // op(X) is rows × cols: X itself is rows × cols (N) or cols × rows (T), column-major.
            Op::N => (cols.max(1) - 1) * ld + rows,
            Op::T => (rows.max(1) - 1) * ld + cols,
        };
        [
            extent(self.transa, self.m, self.k, self.lda),
            extent(self.transb, self.k, self.n, self.ldb),
            (self.n.max(1) - 1) * self.ldc + self.m,
        ]
    }

    /// The call on the host, as BLAS defines it: `C[i + j·ldc] = Σₗ op(A)[i, l] op(B)[l, j]`,
    /// summed over `l` in order.
    ///
    /// # Panics
    ///
    /// When a buffer is shorter than its [`extents`](LayerGemm::extents) (a bug in the
    /// caller, as an out-of-bounds cuBLAS call would be).
    pub fn host(&self, a: &[f32], b: &[f32], c: &mut [f32]) {
        let at = |i: usize, l: usize| match self.transa {
            Op::N => a[i + l * self.lda],
            Op::T => a[l + i * self.lda],
        };
        let bt = |l: usize, j: usize| match self.transb {
            Op::N => b[l + j * self.ldb],
            Op::T => b[j + l * self.ldb],
        };
        for j in 0..self.n {
            for i in 0..self.m {
                let mut sum = 0.0f32;
                for l in 0..self.k {
                    sum += at(i, l) * bt(l, j);
                }
                c[i + j * self.ldc] = sum;
            }
        }
    }
}

/// The bias and ReLU after a layer's SGEMM, on the host: what the GPU's `mg_bias_relu`
/// kernel ([`BIAS_RELU_SOURCE`]) does, element for element. `y` is `rows × outputs`
/// row-major; a negative sum becomes 0 when `relu`, and a NaN passes through, as on the
/// CPU's kernel.
pub fn bias_relu_host(y: &mut [f32], bias: &[f32], relu: bool) {
    for row in y.chunks_exact_mut(bias.len()) {
        for (v, &b) in row.iter_mut().zip(bias) {
            let z = *v + b;
            *v = if relu && z < 0.0 { 0.0 } else { z };
        }
    }
}

/// The bias-and-ReLU kernel (CUDA C, compiled by NVRTC at run time).
pub const BIAS_RELU_SOURCE: &str = include_str!("../kernels/bias_relu.cu");
/// Its entry point.
pub const BIAS_RELU_NAME: &str = "mg_bias_relu";

/// Where a network's layers run: buffers of floats, an SGEMM and the bias-and-ReLU.
pub trait Backend: Send + Sync + 'static {
    /// A buffer of floats.
    type Buffer;
    /// The backend's error.
    type Error;
    /// A buffer holding `values`.
    fn upload(&self, values: &[f32]) -> Result<Self::Buffer, Self::Error>;
    /// A buffer of `len` zeros.
    fn zeros(&self, len: usize) -> Result<Self::Buffer, Self::Error>;
    /// [`LayerGemm`] on buffers at least as long as its extents.
    fn gemm(
        &self,
        call: &LayerGemm,
        a: &Self::Buffer,
        b: &Self::Buffer,
        c: &mut Self::Buffer,
    ) -> Result<(), Self::Error>;
    /// [`bias_relu_host`]'s work on `y` (`rows × bias`'s length floats).
    fn bias_relu(
        &self,
        y: &mut Self::Buffer,
        bias: &Self::Buffer,
        outputs: usize,
        rows: usize,
        relu: bool,
    ) -> Result<(), Self::Error>;
    /// The buffer's floats.
    fn download(&self, buffer: &Self::Buffer) -> Result<Vec<f32>, Self::Error>;
    /// The backend's error as the games crate reports a policy's.
    fn games_error(error: Self::Error) -> metagame_games::Error;
}

/// One layer held by a backend.
struct HeldLayer<B> {
    weight: B,
    bias: B,
    inputs: usize,
    outputs: usize,
}

/// A network's weights held by a backend, and its forward pass there.
pub struct HeldNetwork<B: Backend> {
    layers: Vec<HeldLayer<B::Buffer>>,
    output: Output,
}

impl<B: Backend> HeldNetwork<B> {
    /// `mlp`'s weights on `backend` (each weight as PyTorch lays it out, row-major).
    ///
    /// # Errors
    ///
    /// The backend's, when a buffer cannot be made.
    pub fn new(backend: &B, mlp: &Mlp) -> Result<Self, B::Error> {
        let layers = mlp
            .layers()
            .iter()
            .map(|layer| {
                let (outputs, inputs) = layer.weight.dim();
                let weight = layer.weight.as_standard_layout();
                // INVARIANT: a standard-layout array is one contiguous slice.
                let weight = backend.upload(weight.as_slice().expect("standard layout"))?;
                let bias = backend.upload(&layer.bias.to_vec())?;
                Ok(HeldLayer { weight, bias, inputs, outputs })
            })
            .collect::<Result<_, _>>()?;
        Ok(HeldNetwork { layers, output: mlp.output() })
    }

    /// How the outputs become a policy.
    pub fn output(&self) -> Output {
        self.output
    }

    /// Inputs per row.
    pub fn input_size(&self) -> usize {
        self.layers.first().map_or(0, |l| l.inputs)
    }

    /// Logits per row.
    pub fn output_size(&self) -> usize {
        self.layers.last().map_or(0, |l| l.outputs)
    }

    /// The logits `[rows × A]` of `rows` inputs given row-major (`input.len() = rows ×`
    /// [`input_size`](HeldNetwork::input_size)): per layer one [`LayerGemm`] and one
    /// bias-and-ReLU (none after the last layer).
    ///
    /// # Errors
    ///
    /// The backend's.
    ///
    /// # Panics
    ///
    /// When `input` is not `rows` rows of the input size (callers check the shapes).
    pub fn forward(&self, backend: &B, input: &[f32], rows: usize) -> Result<Vec<f32>, B::Error> {
        assert_eq!(input.len(), rows * self.input_size(), "a batch of {rows} rows");
        let mut x = backend.upload(input)?;
        for (k, layer) in self.layers.iter().enumerate() {
            let call = LayerGemm::for_layer(layer.inputs, layer.outputs, rows);
            let mut y = backend.zeros(rows * layer.outputs)?;
            backend.gemm(&call, &layer.weight, &x, &mut y)?;
            backend.bias_relu(&mut y, &layer.bias, layer.outputs, rows, k + 1 < self.layers.len())?;
            x = y;
        }
        backend.download(&x)
    }
}

/// The host backend: plain buffers, [`LayerGemm::host`] and [`bias_relu_host`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Host;

impl Backend for Host {
    type Buffer = Vec<f32>;
    type Error = std::convert::Infallible;
    fn upload(&self, values: &[f32]) -> Result<Vec<f32>, Self::Error> {
        Ok(values.to_vec())
    }
    fn zeros(&self, len: usize) -> Result<Vec<f32>, Self::Error> {
        Ok(vec![0.0; len])
    }
    fn gemm(
        &self,
        call: &LayerGemm,
        a: &Vec<f32>,
        b: &Vec<f32>,
        c: &mut Vec<f32>,
    ) -> Result<(), Self::Error> {
        call.host(a, b, c);
        Ok(())
    }
    fn bias_relu(
        &self,
        y: &mut Vec<f32>,
        bias: &Vec<f32>,
        _outputs: usize,
        _rows: usize,
        relu: bool,
    ) -> Result<(), Self::Error> {
        bias_relu_host(y, bias, relu);
        Ok(())
    }
    fn download(&self, buffer: &Vec<f32>) -> Result<Vec<f32>, Self::Error> {
        Ok(buffer.clone())
    }
    fn games_error(error: Self::Error) -> metagame_games::Error {
        match error {}
    }
}

#[cfg(test)]
mod tests {
    use metagame_networks::Linear;
    use ndarray::array;

    use ndarray::{Array2, ArrayView2};

    use super::*;

    /// The twin's logits: the GPU's calls on the host.
    fn twin(mlp: &Mlp, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let held = HeldNetwork::new(&Host, mlp).unwrap();
        let x = x.as_standard_layout();
        let logits = held.forward(&Host, x.as_slice().unwrap(), x.nrows()).unwrap();
        Array2::from_shape_vec((x.nrows(), mlp.output_size()), logits).unwrap()
    }

    /// Values in [−1, 1) of no particular pattern.
    fn values(rows: usize, cols: usize, salt: usize) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(r, c)| {
            let h = (r * 7919 + c * 104_729 + salt * 15_485_863) % 1_000_003;
            h as f32 / 500_001.5 - 1.0
        })
    }

    /// The twin's logits are the network's within float rounding, for shapes of the games'
    /// networks (Kuhn's, Leduc's, connect four's) and batches from 1 row up.
    #[test]
    fn the_gpu_calls_on_the_host_give_the_networks_logits() {
        for (sizes, rows, seed) in [
            (&[11usize, 64, 2][..], 1usize, 1u64),
            (&[30, 128, 128, 3], 7, 2),
            (&[126, 64, 64, 7], 333, 3),
            (&[126, 256, 7], 64, 4),
            (&[5, 3], 2, 5),
        ] {
            let mlp = Mlp::random(sizes, seed).unwrap();
            let x = values(rows, sizes[0], seed as usize);
            let want = mlp.logits(x.view()).unwrap();
            let got = twin(&mlp, x.view());
            assert_eq!(got.dim(), want.dim());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{sizes:?} × {rows}: {g} vs {w}");
            }
        }
    }

    /// The layout by hand: a transposed weight against a batch, the ReLU between layers only.
    #[test]
    fn the_layout_is_pytorchs_row_major() {
        let mlp = Mlp::new(vec![
            Linear::new(array![[1.0, 0.0], [0.0, -1.0], [2.0, 1.0]], array![0.0, 0.0, -10.0]),
            Linear::new(array![[1.0, 1.0, 1.0], [0.0, 0.0, -1.0]], array![0.5, 0.0]),
        ])
        .unwrap();
        let logits = twin(&mlp, array![[2.0f32, 3.0], [-1.0, -2.0]].view());
        // Row 0: hidden relu([2, −3, −3]) = [2, 0, 0]; row 1: relu([−1, 2, −14]) = [0, 2, 0].
        assert_eq!(logits, array![[2.5, 0.0], [2.5, 0.0]]);
        assert_eq!(logits, mlp.logits(array![[2.0f32, 3.0], [-1.0, -2.0]].view()).unwrap());
        // A NaN input passes through the ReLU, as on the CPU, for the softmax to name.
        let nan = twin(&mlp, array![[f32::NAN, 1.0]].view());
        assert!(nan.iter().all(|v| v.is_nan()), "{nan}");
    }

    /// The extents cover every index the host call touches, and no more, for both operand
    /// orders.
    #[test]
    fn extents_are_the_last_index_touched_plus_one() {
        let call = LayerGemm::for_layer(5, 3, 4);
        assert_eq!(call.extents(), [15, 20, 12]);
        let plain = LayerGemm { transa: Op::N, transb: Op::T, m: 2, n: 3, k: 4, lda: 2, ldb: 3, ldc: 2 };
        assert_eq!(plain.extents(), [8, 12, 6]);
        // A = [[1, 2], [3, 4], …] column-major 2 × 4, B read transposed from 3 × 4.
        let a: Vec<f32> = (1..=8).map(|v| v as f32).collect();
        let b: Vec<f32> = (1..=12).map(|v| v as f32).collect();
        let mut c = vec![0.0; 6];
        plain.host(&a, &b, &mut c);
        let want = |i: usize, j: usize| (0..4).map(|l| a[i + 2 * l] * b[j + 3 * l]).sum::<f32>();
        assert_eq!(c, vec![want(0, 0), want(1, 0), want(0, 1), want(1, 1), want(0, 2), want(1, 2)]);
    }
}
