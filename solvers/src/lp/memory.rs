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

use super::candidate::{
    BinaryScale, Candidate, FINE_PIVOT_TOLERANCE, oracle_round, polish, submatrix, tableau_candidate_within,
};
use super::simplex::{Simplex, SimplexEnd};
use crate::linalg::Normalization;
use crate::solver_memory::LpMemory;

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
        let raw_sub = submatrix(a, &rows, &cols, |x| x);
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
        if m2 < m || n2 < n {
            return false;
        }
        // Row by row as bytes (a memcmp), stopping at the first row that differs.
        self.raw.outer_iter().zip(a.outer_iter()).all(|(old, new)| match (old.as_slice(), new.as_slice()) {
            (Some(old), Some(new)) => {
                bytemuck::cast_slice::<f64, u8>(old) == bytemuck::cast_slice::<f64, u8>(&new[..n])
            }
            _ => old.iter().zip(new.iter()).all(|(x, y)| x.to_bits() == y.to_bits()),
        })
    }

    /// The double oracle on `a` (which extends the remembered game) from the remembered
    /// subgame, its answers certified on `a` scaled by `exact` (a power of two): the best
    /// answer seen, whether it certified within `aim`, and the pivots spent.
    fn solve(
        &mut self,
        a: ArrayView2<'_, f64>,
        exact: BinaryScale,
        aim: f64,
        cap: usize,
    ) -> (Option<Candidate>, bool, usize) {
        let mut best: Option<Candidate> = None;
        let mut pivots = 0;
        let mut certified = false;
        for _ in 0..ROUNDS {
            let sub = submatrix(a, &self.rows, &self.cols, |x| exact.apply(x));
            // Polishing (two LU solves on the supports) waits for the last round.
            let local = tableau_candidate_within(sub.view(), &self.lp, exact.apply(aim));
            let (candidate, new_rows, new_cols) = oracle_round(a, &self.rows, &self.cols, &local.strategies);
            certified = candidate.gap <= aim;
            best = Some(candidate.or(best));
            if certified {
                // The polished profile, when it is better on the subgame, may be on the game.
                let polished = polish(sub.view(), &self.lp.supports())
                    .map(|p| Candidate::new(sub.view(), p))
                    .filter(|p| p.gap < local.gap);
                if let Some(polished) = polished {
                    let (candidate, _, _) = oracle_round(a, &self.rows, &self.cols, &polished.strategies);
                    best = Some(candidate.or(best));
                }
                break;
            }
            if (new_rows.is_empty() && new_cols.is_empty()) || !self.join(a, &new_rows, &new_cols) {
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
        // Into the old buffer: a fresh one of this size would be fresh pages, faulted in.
        let mut raw = std::mem::take(&mut self.raw).into_raw_vec_and_offset().0;
        raw.clear();
        match a.as_slice() {
            Some(entries) => raw.extend_from_slice(entries),
            None => raw.extend(a.iter()),
        }
        // INVARIANT: `a.len()` entries in `a`'s (row-major) order.
        self.raw = Array2::from_shape_vec(a.dim(), raw).expect("a's entries");
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
        let mut entries = Vec::with_capacity(rows.len() * cols.len());
        for (p, &i) in rows.iter().enumerate() {
            let row = a.row(i);
            // The old block as the tableau has it; the new entries mapped afresh.
            let known = if p < k { l } else { 0 };
            if p < k {
                entries.extend(old.row(p).iter());
            }
            for &j in &cols[known..] {
                let x = map.apply(row[j]);
                fits &= (SCALE_RANGE.0..=SCALE_RANGE.1).contains(&x);
                entries.push(x);
            }
        }
        // INVARIANT: one entry per pair of `rows × cols`.
        let grown = Array2::from_shape_vec((rows.len(), cols.len()), entries).expect("rows × cols entries");
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
        exact: BinaryScale,
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

impl WarmMemory {
    /// What is remembered, if anything (`None` as well while another thread solves).
    pub(super) fn snapshot(&self) -> Option<LpMemory> {
        let slot = self.0.try_lock().ok()?;
        let r = slot.as_ref()?;
        Some(LpMemory {
            shape: r.raw.dim(),
            map: r.map,
            rows: r.rows.clone(),
            cols: r.cols.clone(),
            tableau: r.lp.state(),
        })
    }

    /// Remember `memory` of the game whose leading block it names in `a`; an error line when
    /// it does not fit `a` (the memory is then left empty).
    pub(super) fn restore(&self, a: ArrayView2<'_, f64>, memory: &LpMemory) -> Result<(), String> {
        let mut slot = self.0.lock().map_err(|_| "the memory's lock is poisoned".to_string())?;
        *slot = None;
        let LpMemory { shape: (m, n), map, rows, cols, tableau } = memory.clone();
        let (m2, n2) = a.dim();
        let distinct = |v: &[usize], k: usize| {
            let mut seen = vec![false; k];
            v.iter().all(|&i| i < k && !std::mem::replace(&mut seen[i], true))
        };
        if m > m2 || n > n2 || !distinct(&rows, m) || !distinct(&cols, n) {
            return Err(format!(
                "a remembered subgame of a {m} × {n} game ({} × {} strategies) does not fit a {m2} × {n2} game",
                rows.len(),
                cols.len()
            ));
        }
        let raw = Array2::from_shape_fn((m, n), |(i, j)| a[[i, j]]);
        let matrix = submatrix(raw.view(), &rows, &cols, |x| map.apply(x));
        let lp =
            Simplex::from_state(matrix, tableau).ok_or("the remembered tableau does not fit its subgame")?;
        *slot = Some(Remembered { raw, map, rows, cols, lp });
        Ok(())
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
