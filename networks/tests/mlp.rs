//! The network against PyTorch's layout as Python writes it, and the determinism the rollout
//! engine relies on (a row's answer independent of its batch and of threads).

use metagame_games::philox::{philox4x32_10, uniform_f64};
use metagame_games::{Decisions, PlayerId, Policy, check_probabilities};
use metagame_networks::Mlp;
use ndarray::{Array2, ArrayView2, Axis, Slice};

/// A `rows × cols` batch of values in `[−2, 2)`, from Philox so tests need no RNG crate.
fn batch(rows: usize, cols: usize, seed: u32) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let j = (r * cols + c) as u32;
        let block = philox4x32_10([j / 4, seed, 0, 0], [1, 2]);
        (4.0 * uniform_f64(block[(j % 4) as usize]) - 2.0) as f32
    })
}

/// Legal masks with every action legal except a pattern that leaves one at least.
fn legal(rows: usize, actions: usize) -> Array2<bool> {
    Array2::from_shape_fn((rows, actions), |(r, a)| a == r % actions || (r * 7 + a * 3) % 5 != 0)
}

fn probabilities(mlp: &Mlp, tensors: ArrayView2<'_, f32>, legal: ArrayView2<'_, bool>) -> Array2<f32> {
    let decisions = Decisions { player: PlayerId(0), tensors, legal, infosets: None };
    let mut out = Array2::zeros(legal.dim());
    mlp.probabilities(&decisions, out.view_mut()).unwrap();
    out
}

mod pytorch_layout {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

    /// Absolute tolerance against numpy's float32 answers: numpy's matmul sums in another
    /// order, and each of the ~60 roundings on a path (30 + 16 + 16 products and sums) is at
    /// most half an ulp (6e-8 relative) of values below 1 here; the worst seen is 9e-8 (one
    /// ulp of a logit near 0.4).
    const TOLERANCE: f32 = 1e-6;

    fn matrix(value: &serde_json::Value) -> Vec<Vec<f64>> {
        serde_json::from_value(value.clone()).unwrap()
    }

    fn array<T: Clone>(rows: Vec<Vec<T>>) -> Array2<T> {
        let cols = rows[0].len();
        Array2::from_shape_vec((rows.len(), cols), rows.concat()).unwrap()
    }

    #[test]
    fn numpy_logits_and_probabilities_within_float32_tolerance() {
        let mlp = Mlp::read(format!("{FIXTURES}/mlp_30_16_16_3.safetensors")).unwrap();
        assert_eq!(mlp.sizes(), vec![30, 16, 16, 3]);
        let text = std::fs::read_to_string(format!("{FIXTURES}/mlp_30_16_16_3.json")).unwrap();
        let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
        let f32s = |key: &str| array(matrix(&fixture[key])).mapv(|x| x as f32);
        let inputs = f32s("inputs");
        let legal_masks: Array2<bool> = array(serde_json::from_value(fixture["legal"].clone()).unwrap());

        let logits = mlp.logits(inputs.view()).unwrap();
        let worst = |got: &Array2<f32>, want: &Array2<f32>| {
            got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max)
        };
        let want = f32s("logits");
        assert!(worst(&logits, &want) <= TOLERANCE, "logits {logits} vs numpy {want}");

        let probs = probabilities(&mlp, inputs.view(), legal_masks.view());
        let want = f32s("probabilities");
        assert!(worst(&probs, &want) <= TOLERANCE, "probabilities {probs} vs numpy {want}");
        check_probabilities(legal_masks.view(), probs.view()).unwrap();
        // The row with one legal action: exactly 1, as numpy gives.
        assert_eq!(probs.row(4).to_vec(), vec![0.0, 1.0, 0.0]);
    }

    #[test]
    fn writing_then_reading_gives_the_same_weights_bit_for_bit() {
        let fixture = std::fs::read(format!("{FIXTURES}/mlp_30_16_16_3.safetensors")).unwrap();
        let mlp = Mlp::from_bytes(&fixture).unwrap();
        let dir = std::env::temp_dir().join(format!("metagame-networks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("member.safetensors");
        for original in [mlp, Mlp::random(&[126, 128, 128, 7], 9).unwrap()] {
            original.write(&path).unwrap();
            let back = Mlp::read(&path).unwrap();
            for (a, b) in original.layers().iter().zip(back.layers()) {
                let bits = |x: &f32| x.to_bits();
                assert!(a.weight.iter().map(bits).eq(b.weight.iter().map(bits)));
                assert!(a.bias.iter().map(bits).eq(b.bias.iter().map(bits)));
            }
            assert_eq!(Mlp::from_bytes(&original.to_bytes().unwrap()).unwrap(), back);
        }
        // What we write is what numpy's `save_file` wrote, byte for byte: same header
        // (keys sorted, the "pt" metadata, 8-byte padding) and data.
        assert_eq!(Mlp::from_bytes(&fixture).unwrap().to_bytes().unwrap(), fixture);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

mod determinism {
    use super::*;

    /// The probe rows sit at these positions of these batch sizes; every copy must answer
    /// the bits the probe gets alone.
    const PLACEMENTS: [(usize, &[usize]); 7] = [
        (1, &[0]),
        (3, &[0, 1, 2]),
        (7, &[6]),
        (64, &[0, 5, 31, 63]),
        (65, &[64]),
        (1000, &[0, 1, 8, 17, 499, 998, 999]),
        (4099, &[4098, 2048]),
    ];

    fn check_network(sizes: &[usize]) {
        let mlp = Mlp::random(sizes, 5).unwrap();
        let (d, actions) = (mlp.input_size(), mlp.output_size());
        let probes = batch(4, d, 77);
        let probe_legal = legal(4, actions);
        let alone: Vec<(Array2<f32>, Array2<f32>)> = (0..4)
            .map(|p| {
                let x = probes.slice_axis(Axis(0), Slice::from(p..p + 1));
                let l = probe_legal.slice_axis(Axis(0), Slice::from(p..p + 1));
                (mlp.logits(x).unwrap(), probabilities(&mlp, x, l))
            })
            .collect();
        for (size, positions) in PLACEMENTS {
            let mut tensors = batch(size, d, size as u32);
            let mut masks = legal(size, actions);
            for (i, &pos) in positions.iter().enumerate() {
                tensors.row_mut(pos).assign(&probes.row(i % 4));
                masks.row_mut(pos).assign(&probe_legal.row(i % 4));
            }
            let logits = mlp.logits(tensors.view()).unwrap();
            let probs = probabilities(&mlp, tensors.view(), masks.view());
            for (i, &pos) in positions.iter().enumerate() {
                let (want_logits, want_probs) = &alone[i % 4];
                let bits =
                    |a: ndarray::ArrayView1<'_, f32>| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(logits.row(pos)),
                    bits(want_logits.row(0)),
                    "{sizes:?}: logits at {pos} of {size}"
                );
                assert_eq!(
                    bits(probs.row(pos)),
                    bits(want_probs.row(0)),
                    "{sizes:?}: probabilities at {pos} of {size}"
                );
            }
        }
    }

    #[test]
    fn leduc_shapes() {
        check_network(&[30, 128, 128, 3]);
    }

    #[test]
    fn connect_four_shapes() {
        check_network(&[126, 128, 128, 7]);
    }

    /// Inner dimensions past the GEMM's 256-deep blocks, and widths past its panels.
    #[test]
    fn wide_layers() {
        check_network(&[300, 520, 9, 5]);
    }

    #[test]
    fn any_number_of_threads_gets_the_same_bits() {
        let mlp = Mlp::random(&[30, 128, 128, 3], 11).unwrap();
        let tensors = batch(257, 30, 3);
        let masks = legal(257, 3);
        let want = probabilities(&mlp, tensors.view(), masks.view());
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    let (mlp, tensors, masks) = (&mlp, &tensors, &masks);
                    // Each thread answers its own slice of rows, in a different grouping.
                    scope.spawn(move || {
                        let step = t + 1;
                        let mut got = Array2::zeros((257, 3));
                        let mut start = 0;
                        while start < 257 {
                            let end = (start + step).min(257);
                            let rows = Slice::from(start..end);
                            got.slice_axis_mut(Axis(0), rows).assign(&probabilities(
                                mlp,
                                tensors.slice_axis(Axis(0), rows),
                                masks.slice_axis(Axis(0), rows),
                            ));
                            start = end;
                        }
                        got
                    })
                })
                .collect();
            for handle in handles {
                let got = handle.join().unwrap();
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        });
    }
}
