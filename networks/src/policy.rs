//! An [`Mlp`] as a [`Policy`]: one forward pass per batch, illegal actions masked, softmax.

use metagame_games::{Decisions, Policy, PolicyFile};
use ndarray::{ArrayView2, ArrayViewMut2};

use crate::error::Error;
use crate::mlp::{Mlp, Output};

impl Policy for Mlp {
    /// The logits turned into probabilities by the network's [`Output`]
    /// ([`Output::logits_to_probabilities`]): by default the softmax over each row's legal
    /// actions.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`](metagame_games::Error::Shape) for tensors whose width is not the
    /// network's input, legal masks that are not as wide as its output, or an `out` not of
    /// the masks' shape; [`Error::BadProbabilities`](metagame_games::Error::BadProbabilities)
    /// naming the row whose legal logits are not finite (a NaN in the input).
    fn probabilities(
        &self,
        decisions: &Decisions<'_>,
        mut out: ArrayViewMut2<'_, f32>,
    ) -> metagame_games::Result<()> {
        let legal = decisions.legal;
        if legal.ncols() != self.output_size()
            || out.dim() != legal.dim()
            || decisions.tensors.nrows() != legal.nrows()
        {
            return Err(Error::Shape(format!(
                "a batch of {} tensors and {:?} legal masks answered into {:?} by a network of {} outputs",
                decisions.tensors.nrows(),
                legal.dim(),
                out.dim(),
                self.output_size()
            ))
            .into());
        }
        self.logits_into(decisions.tensors, out.view_mut())?;
        self.output().logits_to_probabilities(legal, out)
    }

    fn kind(&self) -> &str {
        "mlp"
    }

    /// The network in PyTorch's safetensors layout ([`Mlp::to_bytes`]).
    fn to_file(&self) -> metagame_games::Result<Option<PolicyFile>> {
        Ok(Some(PolicyFile { kind: "mlp".into(), extension: "safetensors".into(), bytes: self.to_bytes()? }))
    }

    /// The network itself, so that a [`Device`](metagame_games::Device) can place it.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl Output {
    /// Each row's logits (or action values) in `out` turned in place into the row's action
    /// probabilities under `legal`: for [`Output::Softmax`] illegal actions get 0 and the
    /// legal ones `exp(zₐ − m) / Σ exp(z_b − m)`, `m` the largest legal logit (so no
    /// exponential overflows, and a row with one legal action gets exactly 1); for
    /// [`Output::Greedy`] all on the lowest legal action of the largest value. A row with no
    /// legal action (a terminal) gets all zeros, as [`Uniform`](metagame_games::Uniform)
    /// gives. Wherever the logits were computed (a GPU's copy of the network answers
    /// through this too).
    ///
    /// # Errors
    ///
    /// [`Error::Shape`](metagame_games::Error::Shape) when `out` is not `legal`'s shape;
    /// [`Error::BadProbabilities`](metagame_games::Error::BadProbabilities) naming the row
    /// whose legal logits are not finite.
    pub fn logits_to_probabilities(
        self,
        legal: ArrayView2<'_, bool>,
        mut out: ArrayViewMut2<'_, f32>,
    ) -> metagame_games::Result<()> {
        if out.dim() != legal.dim() {
            return Err(
                Error::Shape(format!("logits {:?} for legal masks {:?}", out.dim(), legal.dim())).into()
            );
        }
        for (row, (mut probs, legal)) in out.rows_mut().into_iter().zip(legal.rows()).enumerate() {
            let mut max = f32::NEG_INFINITY;
            let mut any = false;
            for (&z, &l) in probs.iter().zip(&legal) {
                if l {
                    if !z.is_finite() {
                        return Err(Error::NonFiniteLogits { row, value: z }.into());
                    }
                    max = max.max(z);
                    any = true;
                }
            }
            if !any {
                probs.fill(0.0);
                continue;
            }
            if self == Output::Greedy {
                // INVARIANT: `any` found a legal action whose value is the maximum.
                let best =
                    probs.iter().zip(&legal).position(|(&z, &l)| l && z == max).expect("a legal maximum");
                probs.fill(0.0);
                probs[best] = 1.0;
                continue;
            }
            let mut sum = 0.0f32;
            for (p, &l) in probs.iter_mut().zip(&legal) {
                *p = if l { (*p - max).exp() } else { 0.0 };
                sum += *p;
            }
            // sum ≥ 1: the largest legal logit contributes exp(0) = 1.
            for p in probs.iter_mut() {
                *p /= sum;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use metagame_games::{PlayerId, check_probabilities};
    use ndarray::{Array2, array};

    use super::*;
    use crate::mlp::Linear;

    /// A network whose logits are its inputs (one identity layer).
    fn identity(width: usize) -> Mlp {
        Mlp::new(vec![Linear::new(Array2::eye(width), ndarray::Array1::zeros(width))]).unwrap()
    }

    fn answer(mlp: &Mlp, tensors: Array2<f32>, legal: Array2<bool>) -> metagame_games::Result<Array2<f32>> {
        let batch =
            Decisions { player: PlayerId(0), tensors: tensors.view(), legal: legal.view(), infosets: None };
        let mut out = Array2::from_elem(legal.dim(), f32::NAN);
        mlp.probabilities(&batch, out.view_mut()).map(|()| out)
    }

    #[test]
    fn masked_softmax_of_the_logits() {
        let probs = answer(
            &identity(3),
            array![[0.0, 1.0, 2.0], [1000.0, -1000.0, 5.0], [3.0, 7.0, -2.0], [1.0, 2.0, 3.0]],
            array![[true, true, true], [true, true, false], [false, true, false], [false; 3]],
        )
        .unwrap();
        let e = [1.0f32, 1f32.exp(), 2f32.exp()];
        let s = e.iter().sum::<f32>();
        for a in 0..3 {
            assert!((probs[[0, a]] - e[a] / s).abs() < 1e-7);
        }
        // Subtracting the max keeps exp(2000) from overflowing.
        assert_eq!(probs.row(1).to_vec(), vec![1.0, 0.0, 0.0]);
        // One legal action: exactly 1.
        assert_eq!(probs.row(2).to_vec(), vec![0.0, 1.0, 0.0]);
        assert_eq!(probs.row(3).to_vec(), vec![0.0; 3]);
        check_probabilities(
            array![[true; 3], [true, true, false], [false, true, false]].view(),
            probs.view().split_at(ndarray::Axis(0), 3).0,
        )
        .unwrap();
        assert_eq!(identity(2).kind(), "mlp");
    }

    #[test]
    fn wrong_shapes_are_errors_not_panics() {
        let mlp = identity(3);
        let shape =
            |r: metagame_games::Result<Array2<f32>>| matches!(r, Err(metagame_games::Error::Shape(_)));
        assert!(shape(answer(&mlp, Array2::zeros((2, 4)), Array2::from_elem((2, 3), true))));
        assert!(shape(answer(&mlp, Array2::zeros((2, 3)), Array2::from_elem((2, 4), true))));
        assert!(shape(answer(&mlp, Array2::zeros((3, 3)), Array2::from_elem((2, 3), true))));
        let err = answer(&mlp, Array2::zeros((1, 2)), Array2::from_elem((1, 3), true)).unwrap_err();
        assert_eq!(err.to_string(), "shape mismatch: inputs of width 2 for a network of 3 inputs");
    }

    #[test]
    fn non_finite_logits_name_their_row() {
        let err = answer(&identity(2), array![[0.0, 1.0], [f32::NAN, 0.0]], Array2::from_elem((2, 2), true))
            .unwrap_err();
        assert!(matches!(err, metagame_games::Error::BadProbabilities { row: 1, .. }), "{err}");
        // An overflow to infinity on an illegal action is masked away.
        let overflow =
            Mlp::new(vec![Linear::new(array![[3e38, 0.0], [0.0, 1.0]], ndarray::Array1::zeros(2))]).unwrap();
        let probs = answer(&overflow, array![[10.0, 1.0]], array![[false, true]]).unwrap();
        assert_eq!(probs.row(0).to_vec(), vec![0.0, 1.0]);
        let err = answer(&overflow, array![[10.0, 1.0]], array![[true, true]]).unwrap_err();
        assert!(err.to_string().contains("inf"), "{err}");
    }

    /// A greedy network plays its largest legal value, the lowest action on ties, and keeps
    /// its head through its file.
    #[test]
    fn a_greedy_network_plays_its_largest_legal_value() {
        use metagame_games::{Decisions, PlayerId};
        use ndarray::{Array2, array};
        let mlp = crate::Mlp::new(vec![crate::Linear::new(
            array![[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]],
            array![0.0, 0.0, 0.0],
        )])
        .unwrap()
        .with_output(Output::Greedy);
        let tensors = array![[2.0f32, 5.0], [2.0, 5.0], [3.0, 1.0]];
        let legal = array![[true, true, true], [true, false, true], [true, true, true]];
        let batch =
            Decisions { player: PlayerId(0), tensors: tensors.view(), legal: legal.view(), infosets: None };
        let mut out = Array2::<f32>::zeros((3, 3));
        mlp.probabilities(&batch, out.view_mut()).unwrap();
        assert_eq!(out, array![[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
        let back = crate::Mlp::from_bytes(&mlp.to_bytes().unwrap()).unwrap();
        assert_eq!(back.output(), Output::Greedy);
        assert_eq!(back, mlp);
        let soft =
            crate::Mlp::from_bytes(&mlp.clone().with_output(Output::Softmax).to_bytes().unwrap()).unwrap();
        assert_eq!(soft.output(), Output::Softmax);
    }
}
