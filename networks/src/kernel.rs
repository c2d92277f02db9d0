//! The GEMM behind every layer: `y = x Wᵀ + b` (ReLU optional) for a batch of rows, on
//! weights packed once when the network is built, in the widest SIMD the CPU has (`pulp`'s
//! run-time dispatch: AVX2+FMA, AVX-512, NEON, or scalar).
//!
//! # Why our own kernel
//!
//! `matrixmultiply` (ndarray's GEMM) repacks the weights on every call and allocates its
//! packing buffer each time, which dominates at small batches (a 30 → 128 → 128 → 3
//! forward pass of one row took 11–17 µs of CPU through it, 1.5 µs here) and costs a third
//! at large ones; faer's `gemm` is 10–25% faster than this kernel at large batches but takes
//! another path for a single row, whose sums round differently, so a row's logits changed
//! with the batch around it (and it is called through `unsafe`, which this workspace
//! forbids). The figures are in `benches/mlp.rs`.
//!
//! # The shape of the computation, and why it is deterministic
//!
//! The weight `[n × k]` is stored as panels of [`NR`] = 16 output columns, each panel
//! `[k × 16]` contiguous (columns past `n` are zero). Rows of `x` are taken [`MR`] = 6 at a
//! time (fewer at the end of a batch), copied into a `[k × rows]` strip, and each tile of
//! rows × panels keeps its sums in registers: for `kk = 0, 1, …, k − 1`, in that order,
//! `acc = fma(x[r][kk], w[kk][c], acc)`, starting from +0. Then `acc + b[c]`, then the
//! ReLU. Every output element takes exactly this sequence of roundings, whatever the tile's
//! height (6, or 1 to 5 for the last rows), however many panels a tile holds (up to 4 for
//! short tiles, to keep the FMA pipes busy), and whatever the batch: so a row's answer
//! never depends on the rows beside it. `mul_add_f32s` is fused on every `pulp` backend
//! (the scalar one calls `fma`), so the answer is also the same on every CPU.
//!
//! The same sums in the same order are what `matrixmultiply`'s FMA kernel computes, and a
//! test holds the two to agree bit for bit.

use pulp::{Simd, WithSimd};

use crate::linear::Linear;

/// Output columns per panel.
pub(crate) const NR: usize = 16;
/// Rows per full tile.
pub(crate) const MR: usize = 6;
/// Rows per block: the strip of packed rows reused across all panels of a layer.
const MC: usize = 96;

/// A layer's weight in panels and its bias, both padded to whole panels.
#[derive(Clone, Debug)]
pub(crate) struct PackedLinear {
    /// Inputs (`k`).
    inputs: usize,
    /// Outputs rounded up to a multiple of [`NR`].
    padded_outputs: usize,
    /// `[padded_outputs / NR]` panels of `[inputs × NR]`.
    panels: Vec<f32>,
    /// `[padded_outputs]`.
    bias: Vec<f32>,
}

impl PackedLinear {
    /// Pack a layer.
    pub(crate) fn new(layer: &Linear) -> Self {
        let (outputs, inputs) = layer.weight.dim();
        let padded_outputs = outputs.div_ceil(NR) * NR;
        let mut panels = vec![0.0; padded_outputs * inputs];
        for ((j, kk), &w) in layer.weight.indexed_iter() {
            panels[(j / NR) * inputs * NR + kk * NR + j % NR] = w;
        }
        let mut bias = layer.bias.to_vec();
        bias.resize(padded_outputs, 0.0);
        Self { inputs, padded_outputs, panels, bias }
    }

    /// Outputs rounded up to whole panels: the row stride of what [`apply`] writes.
    pub(crate) fn padded_outputs(&self) -> usize {
        self.padded_outputs
    }
}

/// `y[r] = x[r] Wᵀ + b` (ReLU'd when `relu`) for `rows` rows: row `r` of `x` is
/// `x[r * x_stride..][..k]`, row `r` of `y` is `y[r * padded_outputs..][..padded_outputs]`;
/// `strip` is scratch.
pub(crate) struct Apply<'a> {
    pub(crate) layer: &'a PackedLinear,
    pub(crate) x: &'a [f32],
    pub(crate) x_stride: usize,
    pub(crate) rows: usize,
    pub(crate) relu: bool,
    pub(crate) y: &'a mut [f32],
    pub(crate) strip: &'a mut Vec<f32>,
}

impl WithSimd for Apply<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Apply { layer, x, x_stride, rows, relu, y, strip } = self;
        let k = layer.inputs;
        let num_panels = layer.padded_outputs / NR;
        let mut start = 0;
        while start < rows {
            let block = (rows - start).min(MC);
            pack_rows(&x[start * x_stride..], x_stride, k, block, strip);
            let mut tile_start = 0;
            while tile_start < block {
                let height = (block - tile_start).min(MR);
                let tile = Tile {
                    strip: &strip[tile_start * k..(tile_start + height) * k],
                    layer,
                    relu,
                    first_row: start + tile_start,
                };
                // Short tiles take several panels at once, so that enough independent sums
                // are in flight to hide the FMA latency (a lone row has 2 per panel).
                match height {
                    6 => tile.run::<S, 6, 1>(simd, num_panels, y),
                    5 => tile.run::<S, 5, 1>(simd, num_panels, y),
                    4 => tile.run::<S, 4, 1>(simd, num_panels, y),
                    3 => tile.run::<S, 3, 2>(simd, num_panels, y),
                    2 => tile.run::<S, 2, 3>(simd, num_panels, y),
                    _ => tile.run::<S, 1, 4>(simd, num_panels, y),
                }
                tile_start += height;
            }
            start += block;
        }
    }
}

/// Copy `block` rows of `x` into `strip` as consecutive tiles of [`MR`] rows (fewer for the
/// last), each tile `[k × height]`: the order the kernel reads them in.
#[inline(always)]
fn pack_rows(x: &[f32], x_stride: usize, k: usize, block: usize, strip: &mut Vec<f32>) {
    strip.resize(block * k, 0.0);
    let mut tile_start = 0;
    while tile_start < block {
        let height = (block - tile_start).min(MR);
        let tile = &mut strip[tile_start * k..(tile_start + height) * k];
        for i in 0..height {
            let row = &x[(tile_start + i) * x_stride..][..k];
            for (slot, &value) in tile[i..].iter_mut().step_by(height).zip(row) {
                *slot = value;
            }
        }
        tile_start += height;
    }
}

/// One tile of packed rows against a layer.
struct Tile<'a> {
    strip: &'a [f32],
    layer: &'a PackedLinear,
    relu: bool,
    first_row: usize,
}

impl Tile<'_> {
    /// All panels, `P` at a time (then one at a time for the rest).
    #[inline(always)]
    fn run<S: Simd, const M: usize, const P: usize>(&self, simd: S, num_panels: usize, y: &mut [f32]) {
        let mut panel = 0;
        while panel + P <= num_panels {
            self.panels::<S, M, P>(simd, panel, y);
            panel += P;
        }
        while panel < num_panels {
            self.panels::<S, M, 1>(simd, panel, y);
            panel += 1;
        }
    }

    /// `M` rows × panels `first..first + P`.
    #[inline(always)]
    fn panels<S: Simd, const M: usize, const P: usize>(&self, simd: S, first: usize, y: &mut [f32]) {
        let k = self.layer.inputs;
        let vectors = NR / (size_of::<S::f32s>() / size_of::<f32>());
        let zero = simd.splat_f32s(0.0);
        // Room for NR vectors (the scalar backend's); a SIMD backend uses the first few.
        let mut sums = [[[zero; NR]; P]; M];
        let weights: [&[S::f32s]; P] = std::array::from_fn(|j| {
            S::as_simd_f32s(&self.layer.panels[(first + j) * k * NR..(first + j + 1) * k * NR]).0
        });
        for (kk, xs) in self.strip.chunks_exact(M).enumerate() {
            for j in 0..P {
                let w = &weights[j][kk * vectors..(kk + 1) * vectors];
                for i in 0..M {
                    let xv = simd.splat_f32s(xs[i]);
                    for v in 0..vectors {
                        sums[i][j][v] = simd.mul_add_f32s(xv, w[v], sums[i][j][v]);
                    }
                }
            }
        }
        let stride = self.layer.padded_outputs;
        for (i, sums) in sums.iter().enumerate() {
            for (j, sums) in sums.iter().enumerate() {
                let column = (first + j) * NR;
                let bias = S::as_simd_f32s(&self.layer.bias[column..column + NR]).0;
                let out = S::as_mut_simd_f32s(&mut y[(self.first_row + i) * stride + column..][..NR]).0;
                for v in 0..vectors {
                    let z = simd.add_f32s(sums[v], bias[v]);
                    // A select, not a max, so that a NaN passes through as PyTorch's ReLU lets it.
                    out[v] =
                        if self.relu { simd.select_f32s(simd.less_than_f32s(z, zero), zero, z) } else { z };
                }
            }
        }
    }
}
