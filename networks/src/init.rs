//! A seeded random network with PyTorch's default `nn.Linear` initialisation, drawn from
//! the counter-based Philox stream so the same seed gives the same weights on any machine.

use metagame_games::philox::{philox4x32_10, seed_key, uniform_f64};
use ndarray::{Array1, Array2};

use crate::error::{Error, Result};
use crate::mlp::{Linear, Mlp, weight_key};

/// The most parameters [`Mlp::random`] allocates: 2²⁶ (256 MiB of `f32`, the same as
/// [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES)), far past any member a population trains.
pub const MAX_PARAMETERS: u64 = 1 << 26;

impl Mlp {
    /// A network of widths `sizes = [d, h₁, …, hₙ, A]` (ReLUs between the layers), every
    /// weight and bias of a layer with `in` inputs drawn uniformly from
    /// `[−1/√in, 1/√in)`: PyTorch's default `nn.Linear` initialisation
    /// (`kaiming_uniform_(a=√5)` on the weight, whose bound `√(6/((1+a²)·in))` is `1/√in`,
    /// and the same bound on the bias).
    ///
    /// # The stream
    ///
    /// Element `j` (row-major) of Linear layer `k`'s weight (`t = 0`) or bias (`t = 1`) is
    /// `(2u − 1)/√in` rounded to `f32`, where `u` is
    /// [`uniform_f64`](metagame_games::philox::uniform_f64) of word `j mod 4` of
    /// Philox4x32-10 block counter `[j / 4, k, t, 1]` under key
    /// [`seed_key(seed)`](metagame_games::philox::seed_key). The last counter word is 1
    /// where episodes of the match evaluators use the episode's high word (0 for every
    /// episode below 2³²), so weights and those episodes never share a block.
    ///
    /// # Errors
    ///
    /// [`Error::NoLayers`] for fewer than two sizes; [`Error::NotMatrix`] for a width of 0;
    /// [`Error::TooLarge`] past [`MAX_PARAMETERS`] (or a layer of 2³⁴ elements or more,
    /// which the counter cannot address).
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_networks::Mlp;
    ///
    /// let mlp = Mlp::random(&[30, 128, 128, 3], 7)?;
    /// assert_eq!(mlp.sizes(), vec![30, 128, 128, 3]);
    /// assert_eq!(mlp, Mlp::random(&[30, 128, 128, 3], 7)?);
    /// let bound = 1.0 / 30f32.sqrt();
    /// assert!(mlp.layers()[0].weight.iter().all(|w| w.abs() <= bound));
    /// # Ok::<(), metagame_networks::Error>(())
    /// ```
    pub fn random(sizes: &[usize], seed: u64) -> Result<Self> {
        if sizes.len() < 2 {
            return Err(Error::NoLayers);
        }
        let mut total: u64 = 0;
        for (k, pair) in sizes.windows(2).enumerate() {
            let (inputs, outputs) = (pair[0], pair[1]);
            if inputs == 0 || outputs == 0 {
                return Err(Error::NotMatrix { key: weight_key(k), shape: vec![outputs, inputs] });
            }
            let layer = (inputs as u64).saturating_add(1).saturating_mul(outputs as u64);
            total = total.saturating_add(layer);
        }
        if total > MAX_PARAMETERS {
            return Err(Error::TooLarge {
                what: format!("a random network of widths {sizes:?} ({total} parameters)"),
                limit: MAX_PARAMETERS,
                unit: "parameters",
            });
        }
        let key = seed_key(seed);
        let layers = sizes
            .windows(2)
            .enumerate()
            .map(|(k, pair)| {
                let (inputs, outputs) = (pair[0], pair[1]);
                let bound = 1.0 / (inputs as f64).sqrt();
                let draw = |t: u32, len: usize| uniforms(key, k as u32, t, len, bound);
                Linear {
                    // INVARIANT: `draw` returns exactly `outputs * inputs` values.
                    weight: Array2::from_shape_vec((outputs, inputs), draw(0, outputs * inputs))
                        .expect("the weight's draws fill its shape"),
                    bias: Array1::from(draw(1, outputs)),
                }
            })
            .collect();
        Mlp::new(layers)
    }
}

/// `len` values uniform in `[−bound, bound)` from the blocks of layer `layer`, tensor `t`.
fn uniforms(key: [u32; 2], layer: u32, t: u32, len: usize, bound: f64) -> Vec<f32> {
    let mut out = Vec::with_capacity(len);
    let mut block = [0u32; 4];
    for j in 0..len {
        if j % 4 == 0 {
            // `j / 4` fits: a layer has at most MAX_PARAMETERS elements.
            block = philox4x32_10([(j / 4) as u32, layer, t, 1], key);
        }
        out.push(((2.0 * uniform_f64(block[j % 4]) - 1.0) * bound) as f32);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_documented_one() {
        let mlp = Mlp::random(&[5, 3, 2], 0xdead_beef_cafe).unwrap();
        let key = seed_key(0xdead_beef_cafe);
        let block = philox4x32_10([1, 1, 0, 1], key);
        let want = ((2.0 * uniform_f64(block[1]) - 1.0) / 3f64.sqrt()) as f32;
        // Element 5 of layer 1's weight [2 × 3] is row 1, column 2.
        assert_eq!(mlp.layers()[1].weight[[1, 2]].to_bits(), want.to_bits());
        let block = philox4x32_10([0, 0, 1, 1], key);
        let want = ((2.0 * uniform_f64(block[2]) - 1.0) / 5f64.sqrt()) as f32;
        assert_eq!(mlp.layers()[0].bias[2].to_bits(), want.to_bits());
    }

    #[test]
    fn draws_fill_the_bounds_and_differ_by_seed() {
        let mlp = Mlp::random(&[64, 256, 4], 1).unwrap();
        let w = &mlp.layers()[0].weight;
        let bound = 1.0 / 8.0;
        assert!(w.iter().all(|x| x.abs() <= bound));
        let mean = w.iter().map(|&x| f64::from(x)).sum::<f64>() / w.len() as f64;
        // Uniform on [−1/8, 1/8): sd 0.072, so the mean of 16384 draws is within 0.003.
        assert!(mean.abs() < 3e-3, "mean {mean}");
        assert!(w.iter().any(|&x| x > 0.12) && w.iter().any(|&x| x < -0.12));
        assert_ne!(mlp, Mlp::random(&[64, 256, 4], 2).unwrap());
        // The bias draws from its own blocks, not the weight's first ones.
        let (bias, weight) = (&mlp.layers()[0].bias, &mlp.layers()[0].weight);
        assert_ne!(bias.to_vec()[..4], weight.row(0).to_vec()[..4]);
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(matches!(Mlp::random(&[4], 0), Err(Error::NoLayers)));
        assert!(matches!(Mlp::random(&[4, 0, 2], 0), Err(Error::NotMatrix { .. })));
        let err = Mlp::random(&[1 << 20, 1 << 20], 0).unwrap_err();
        assert!(matches!(err, Error::TooLarge { unit: "parameters", .. }), "{err}");
        assert!(Mlp::random(&[usize::MAX, usize::MAX, 2], 0).is_err());
    }
}
