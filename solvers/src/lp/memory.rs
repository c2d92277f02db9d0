//! What [`super::LpNash`] remembers between warm solves: the last equilibrium's subgame and
//! its optimal tableau.
//!
//! PSRO's meta-game grows by a row and a column per iteration, keeps its old entries, and
//! its equilibrium's support stays a fraction of it (53 of 236 strategies on Leduc). A warm
//! solve of a game that holds the remembered game as its leading block, bit for bit, is a
//! double oracle on the remembered subgame (McMahan, Gordon and Blum 2003): every strategy
//! of the whole game that beats the subgame's answer joins it, the subgame's tableau grows
//! by those rows and columns ([`Simplex::grow`]) and is resumed, until the answer certifies
//! on the whole game. Each pivot costs the subgame's size, not the game's. Any other game
//! starts from the subgame of the caller's start's supports; when the double oracle does
//! not certify, the game is solved cold and the subgame of its answer's supports is
//! remembered.

use std::sync::Mutex;

use ndarray::{Array2, ArrayView2};

use super::simplex::{Simplex, SimplexEnd};
use super::{Candidate, FINE_PIVOT_TOLERANCE, oracle_round, tableau_candidate};
use crate::linalg::Normalization;

/// Joined entries must map into this range under the remembered normalisation; a game
/// whose payoffs outgrow it is solved cold (and normalised afresh).
const SCALE_RANGE: (f64, f64) = (0.25, 4.0);

/// Rounds of joining at most before a warm solve gives up and the game is solved cold.
const ROUNDS: usize = 32;

/// Pivots a resumed subgame may take, beyond four per joined strategy.
const RESUME_PIVOTS: usize = 150;

/// A remembered subgame larger than this many times its answer's supports (plus
/// [`SLACK`]) is rebuilt from the supports, so that it cannot grow to the whole game.
const GROWTH: usize = 2;
/// See [`GROWTH`].
const SLACK: usize = 32;

/// The remembered game, its subgame (in the tableau's order) and the subgame's tableau.
pub(super) struct Remembered {
    /// The row player's matrix as the caller gave it.
    raw: Array2<f64>,
    map: Normalization,
    rows: Vec<usize>,
    cols: Vec<usize>,
    lp: Simplex,
}

impl Remembered {
    /// The subgame of `answer`'s supports in `a`, solved cold; `None` when its simplex does
    /// not end optimal.
    pub(super) fn of_supports(a: ArrayView2<'_, f64>, answer: &[Vec<f64>], cap: usize) -> Option<Self> {
        let support = |s: &[f64]| -> Vec<usize> { (0..s.len()).filter(|&i| s[i] > 0.0).collect() };
        let (rows, cols) = (support(&answer[0]), support(&answer[1]));
        let raw_sub = Array2::from_shape_fn((rows.len(), cols.len()), |(p, q)| a[[rows[p], cols[q]]]);
        // The game's range, so that the strategies that join later fit it.
        let map = Normalization::of(a);
        let mut lp = Simplex::new(raw_sub.mapv(|x| map.apply(x)));
        (lp.solve(cap, FINE_PIVOT_TOLERANCE, |_| {}) == SimplexEnd::Optimal).then(|| Self {
            raw: a.to_owned(),
            map,
            rows,
            cols,
            lp,
        })
    }

    /// True when `a` holds the remembered game as its leading block, bit for bit.
    fn is_extended_by(&self, a: ArrayView2<'_, f64>) -> bool {
        let (m, n) = self.raw.dim();
        let (m2, n2) = a.dim();
        m2 >= m && n2 >= n && self.raw.indexed_iter().all(|((i, j), &x)| a[[i, j]].to_bits() == x.to_bits())
    }

    /// The double oracle on `a` (which extends the remembered game) from the remembered
    /// subgame, `exact` being `a` scaled by a power of two: the best answer seen, whether it
    /// certified within `aim`, and the pivots spent.
    fn solve(
        &mut self,
        a: ArrayView2<'_, f64>,
        exact: ArrayView2<'_, f64>,
        aim: f64,
        cap: usize,
    ) -> (Option<Candidate>, bool, usize) {
        let mut best: Option<Candidate> = None;
        let mut pivots = 0;
        let mut certified = false;
        for _ in 0..ROUNDS {
            let sub = Array2::from_shape_fn((self.rows.len(), self.cols.len()), |(p, q)| {
                exact[[self.rows[p], self.cols[q]]]
            });
            let local = tableau_candidate(sub.view(), &self.lp).strategies;
            let (candidate, new_rows, new_cols) = oracle_round(a, &self.rows, &self.cols, &local);
            certified = candidate.gap <= aim;
            best = Some(candidate.or(best));
            if certified
                || (new_rows.is_empty() && new_cols.is_empty())
                || !self.join(a, &new_rows, &new_cols)
            {
                break;
            }
            let budget = RESUME_PIVOTS + 4 * (new_rows.len() + new_cols.len());
            let before = self.lp.pivots;
            let end = self.lp.resume(budget, FINE_PIVOT_TOLERANCE);
            pivots += self.lp.pivots - before;
            if end != SimplexEnd::Optimal {
                // The subgame solved cold instead: still a fraction of the game.
                self.lp = Simplex::new(self.lp.matrix().clone());
                let end = self.lp.solve(cap, FINE_PIVOT_TOLERANCE, |_| {});
                pivots += self.lp.pivots;
                if end != SimplexEnd::Optimal {
                    break;
                }
            }
        }
        self.raw = a.to_owned();
        (best, certified, pivots)
    }

    /// Grow the subgame by `new_rows` and `new_cols` of `a`; false (unchanged) when their
    /// entries do not fit the remembered normalisation.
    fn join(&mut self, a: ArrayView2<'_, f64>, new_rows: &[usize], new_cols: &[usize]) -> bool {
        let (k, l) = (self.rows.len(), self.cols.len());
        let rows: Vec<usize> = self.rows.iter().chain(new_rows).copied().collect();
        let cols: Vec<usize> = self.cols.iter().chain(new_cols).copied().collect();
        let old = self.lp.matrix();
        let map = self.map;
        let mut fits = true;
        let grown = Array2::from_shape_fn((rows.len(), cols.len()), |(p, q)| {
            if p < k && q < l {
                return old[[p, q]];
            }
            let x = map.apply(a[[rows[p], cols[q]]]);
            fits &= (SCALE_RANGE.0..=SCALE_RANGE.1).contains(&x);
            x
        });
        if fits {
            self.lp.grow(grown);
            (self.rows, self.cols) = (rows, cols);
        }
        fits
    }

    /// True when the subgame has outgrown `answer`'s supports (see [`GROWTH`]).
    fn outgrown(&self, answer: &[Vec<f64>]) -> bool {
        let support: usize = answer.iter().map(|s| s.iter().filter(|&&v| v > 0.0).count()).sum();
        self.rows.len() + self.cols.len() > GROWTH * support + SLACK
    }
}

/// One solver's memory (empty in a clone: a copy of a solver starts afresh). Shared
/// between threads behind a lock; a solve that finds it taken solves cold.
#[derive(Default)]
pub(crate) struct WarmMemory(Mutex<Option<Remembered>>);

/// A warm solve from memory: its best answer, whether it certified, and its pivots.
pub(super) struct Recalled {
    pub(super) best: Option<Candidate>,
    pub(super) certified: bool,
    pub(super) pivots: usize,
}

impl WarmMemory {
    /// The double oracle from the remembered subgame when `a` extends the remembered game,
    /// else from the subgame of `start`'s supports (see [`Remembered::solve`]); `None` when
    /// the memory is in use or the start's subgame does not solve. A certified answer keeps
    /// the subgame (rebuilt from the answer's supports when it has outgrown them); otherwise
    /// the memory is emptied.
    pub(super) fn recall(
        &self,
        a: ArrayView2<'_, f64>,
        exact: ArrayView2<'_, f64>,
        start: &[Vec<f64>],
        aim: f64,
        cap: usize,
    ) -> Option<Recalled> {
        let mut slot = self.0.try_lock().ok()?;
        let mut remembered = match slot.take().filter(|r| r.is_extended_by(a)) {
            Some(remembered) => remembered,
            None => Remembered::of_supports(a, start, cap)?,
        };
        let (best, certified, pivots) = remembered.solve(a, exact, aim, cap);
        if certified {
            // INVARIANT: a certified solve has an answer.
            let answer = &best.as_ref().expect("certified").strategies;
            *slot = if remembered.outgrown(answer) {
                Remembered::of_supports(a, answer, cap)
            } else {
                Some(remembered)
            };
        }
        Some(Recalled { best, certified, pivots })
    }

    /// Remember the subgame of `answer`'s supports in `a` (see [`Remembered::of_supports`]).
    pub(super) fn remember(&self, a: ArrayView2<'_, f64>, answer: &[Vec<f64>], cap: usize) {
        if let Ok(mut slot) = self.0.try_lock() {
            *slot = Remembered::of_supports(a, answer, cap);
        }
    }
}

impl Clone for WarmMemory {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Memories do not make solvers differ.
impl PartialEq for WarmMemory {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for WarmMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held =
            self.0.try_lock().ok().and_then(|slot| slot.as_ref().map(|r| (r.rows.len(), r.cols.len())));
        f.debug_tuple("WarmMemory").field(&held).finish()
    }
}
