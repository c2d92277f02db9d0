//! When a CFR run evaluates the exact NashConv: an evaluation costs a few walks of the tree
//! (two best responses per player), so evaluating after every iteration would cost several
//! times the iterations themselves.

use serde::{Deserialize, Serialize};

/// Which iterations have their exact NashConv evaluated (besides iteration 0, a run's last
/// iteration and the one after which its time budget ran out, which always are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum NashConvSchedule {
    /// Every iteration up to [`NashConvSchedule::DENSE_UNTIL`], then each iteration
    /// `⌈s / 20⌉` after the last one `s` on the schedule (21, 23, 25, …, 1 000, 1 050, …): the
    /// evaluations' count grows with the logarithm of the run's length, and a target
    /// NashConv is seen at most about 5% of the iterations after the scheduled check it was
    /// first below.
    #[default]
    Auto,
    /// Every `k`-th iteration (`k ≥ 1`).
    Every(usize),
}

impl NashConvSchedule {
    /// The iterations that are all evaluated under [`NashConvSchedule::Auto`].
    pub const DENSE_UNTIL: usize = 20;

    /// True when iteration `t` of a run is evaluated: on the schedule, the run's `last`
    /// iteration (where known), or an iteration that ends with the time budget spent
    /// (`cut_off`: the run stops after it).
    pub fn evaluates_in_run(self, t: usize, last: Option<usize>, cut_off: bool) -> bool {
        self.evaluates(t) || last == Some(t) || cut_off
    }

    /// True when iteration `t` is on the schedule.
    pub fn evaluates(self, t: usize) -> bool {
        match self {
            NashConvSchedule::Every(k) => t.is_multiple_of(k.max(1)),
            NashConvSchedule::Auto => {
                let mut s = Self::DENSE_UNTIL;
                if t <= s {
                    return true;
                }
                while s < t {
                    s += s.div_ceil(20);
                }
                s == t
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_dense_then_about_five_percent_apart() {
        let on: Vec<usize> = (1..=60).filter(|&t| NashConvSchedule::Auto.evaluates(t)).collect();
        let mut want: Vec<usize> = (1..=20).collect();
        want.extend([21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 44, 47, 50, 53, 56, 59]);
        assert_eq!(on, want);
        let count = (1..=100_000).filter(|&t| NashConvSchedule::Auto.evaluates(t)).count();
        assert!((150..250).contains(&count), "{count} evaluations in 100 000 iterations");
        let gaps: Vec<usize> = (1..=100_000)
            .filter(|&t| NashConvSchedule::Auto.evaluates(t))
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        assert!(gaps.iter().all(|&g| g >= 1));
    }

    #[test]
    fn every_k() {
        let on: Vec<usize> = (1..=10).filter(|&t| NashConvSchedule::Every(3).evaluates(t)).collect();
        assert_eq!(on, vec![3, 6, 9]);
        assert!((1..=10).all(|t| NashConvSchedule::Every(1).evaluates(t)));
    }
}
