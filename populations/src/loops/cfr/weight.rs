//! How one CFR iteration's reach-weighted policy adds to the average policy, shared by the
//! history walk (`cfr.rs`) and the lane walk (`lanes.rs`).

/// How iteration `t`'s contribution to the average policy is weighted, in OpenSpiel's order
/// of multiplication (so that results agree to the last bits): `w·(π·σ)`'s rounding differs
/// from `(w·π)·σ`'s.
#[derive(Clone, Copy)]
pub(super) enum AverageWeight {
    /// `π·σ` (vanilla CFR).
    One,
    /// `(w·π)·σ` (C++ `CFRPlusSolver`: `iteration_ * self_reach_prob * policy`).
    Before(f64),
    /// `(π·σ)·w` (Python `discounted_cfr`: `reach_prob * action_prob * t**gamma`).
    After(f64),
}

impl AverageWeight {
    /// Iteration `t`'s addition to the average policy of an action taken with probability
    /// `p` at a reach `reach`, in the variant's order of multiplication.
    #[inline]
    pub(super) fn weigh(self, reach: f64, p: f64) -> f64 {
        match self {
            AverageWeight::One => reach * p,
            AverageWeight::Before(w) => w * reach * p,
            AverageWeight::After(w) => reach * p * w,
        }
    }
}
