//! Games with duplicate strategies: the map from an expanded game's strategies to the
//! distinct strategies (members) they copy, and the moves between the two games (expand a
//! game, split a mixture over the copies, fold it back).
//!
//! PSRO's meta-game has one strategy per response, and a response that repeats an earlier
//! member is a copy of it. The iterative solvers solve the collapsed game (one strategy per
//! member, each weighted by its multiplicity) and follow the same trajectory as on the
//! expanded game ([`crate::MetaSolver::solve_collapsed`]).

use std::borrow::Cow;

use metagame_games::NormalFormGame;
use ndarray::{ArrayD, IxDyn};

use crate::{Result, SolveError};

/// Which member each strategy of an expanded game copies: strategy `c` of player `p` in the
/// expanded game is member `of(p)[c]` of the collapsed game. Every member has at least one copy.
///
/// # Examples
///
/// ```
/// use metagame_solvers::Copies;
///
/// // Player 0's members 0 and 1, member 0 twice; player 1 has one member, once.
/// let copies = Copies::new(&[2, 1], vec![vec![0, 1, 0], vec![0]])?;
/// assert_eq!(copies.multiplicities(0), &[2, 1]);
/// assert_eq!(copies.expanded_shape(), vec![3, 1]);
/// assert_eq!(copies.split(&[vec![0.5, 0.5], vec![1.0]]), vec![vec![0.25, 0.5, 0.25], vec![1.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Copies {
    of: Vec<Vec<usize>>,
    multiplicities: Vec<Vec<usize>>,
    /// The multiplicities as floats, the weights of the collapsed solvers.
    weights: Vec<Vec<f64>>,
    /// Each player's members ordered by the index of their first copy.
    by_first_copy: Vec<Vec<usize>>,
}

impl Copies {
    /// The copies of a game whose players have `shape[p]` members: `of[p][c]` is the member
    /// that strategy `c` of player `p` copies in the expanded game.
    ///
    /// # Errors
    ///
    /// [`SolveError::InvalidConfig`] when `of` does not have one list per player, names a
    /// member outside `0..shape[p]`, or leaves a member without a copy.
    pub fn new(shape: &[usize], of: Vec<Vec<usize>>) -> Result<Self> {
        if of.len() != shape.len() {
            return Err(invalid(format!("{} copy lists for {} players", of.len(), shape.len())));
        }
        let mut multiplicities = Vec::with_capacity(shape.len());
        let mut by_first_copy = Vec::with_capacity(shape.len());
        for (p, (list, &k)) in of.iter().zip(shape).enumerate() {
            let mut count = vec![0usize; k];
            let mut order = Vec::with_capacity(k);
            for &m in list {
                let Some(c) = count.get_mut(m) else {
                    return Err(invalid(format!("player {p} has {k} members, a copy names member {m}")));
                };
                if *c == 0 {
                    order.push(m);
                }
                *c += 1;
            }
            if let Some(m) = count.iter().position(|&c| c == 0) {
                return Err(invalid(format!("member {m} of player {p} has no copy")));
            }
            multiplicities.push(count);
            by_first_copy.push(order);
        }
        let weights = multiplicities.iter().map(|c| c.iter().map(|&c| c as f64).collect()).collect();
        Ok(Self { of, multiplicities, weights, by_first_copy })
    }

    /// Every member once, in order: the expanded game is the game itself.
    pub fn identity(shape: &[usize]) -> Self {
        let of: Vec<Vec<usize>> = shape.iter().map(|&k| (0..k).collect()).collect();
        Self {
            multiplicities: shape.iter().map(|&k| vec![1; k]).collect(),
            weights: shape.iter().map(|&k| vec![1.0; k]).collect(),
            by_first_copy: of.clone(),
            of,
        }
    }

    /// The copies of a game whose member `m` of player `p` has `multiplicities[p][m]` copies,
    /// placed side by side (member 0's copies first).
    ///
    /// # Errors
    ///
    /// [`SolveError::InvalidConfig`] when a multiplicity is 0.
    pub fn from_multiplicities(multiplicities: &[Vec<usize>]) -> Result<Self> {
        let shape: Vec<usize> = multiplicities.iter().map(Vec::len).collect();
        let of = multiplicities
            .iter()
            .map(|counts| counts.iter().enumerate().flat_map(|(m, &c)| std::iter::repeat_n(m, c)).collect())
            .collect();
        Self::new(&shape, of)
    }

    /// The member each of player `p`'s expanded strategies copies.
    pub fn of(&self, p: usize) -> &[usize] {
        &self.of[p]
    }

    /// How many copies each of player `p`'s members has.
    pub fn multiplicities(&self, p: usize) -> &[usize] {
        &self.multiplicities[p]
    }

    /// Members per player (the collapsed game's shape).
    pub fn shape(&self) -> Vec<usize> {
        self.multiplicities.iter().map(Vec::len).collect()
    }

    /// Strategies per player in the expanded game.
    pub fn expanded_shape(&self) -> Vec<usize> {
        self.of.iter().map(Vec::len).collect()
    }

    /// True when every member has one copy, in order (the expanded game is the game).
    pub fn is_identity(&self) -> bool {
        self.of.iter().all(|of| of.iter().enumerate().all(|(c, &m)| c == m))
    }

    /// The multiplicities as weights (crate solvers).
    pub(crate) fn weights(&self, p: usize) -> &[f64] {
        &self.weights[p]
    }

    /// Player `p`'s members in the order of their first copies (crate solvers: ties between
    /// best responses go to the member whose first copy comes first, as in the expanded game).
    pub(crate) fn by_first_copy(&self, p: usize) -> &[usize] {
        &self.by_first_copy[p]
    }

    /// Checks that `game` is the collapsed game of these copies (`solver` names the caller).
    ///
    /// # Errors
    ///
    /// [`SolveError::InvalidConfig`] when the shapes differ.
    pub(crate) fn check(&self, solver: &'static str, game: &NormalFormGame) -> Result<()> {
        if self.shape() != game.shape() {
            return Err(SolveError::InvalidConfig {
                solver,
                reason: format!("copies of a {:?} game given with a {:?} game", self.shape(), game.shape()),
            });
        }
        Ok(())
    }

    /// The expanded game: player `p`'s strategy `c` has member `of(p)[c]`'s payoffs (the
    /// game itself, borrowed, when [`Copies::is_identity`]).
    ///
    /// # Errors
    ///
    /// [`SolveError::InvalidConfig`] when `game` does not have the collapsed shape.
    ///
    /// # Complexity
    ///
    /// O(n · Π expanded shape): one copy per expanded payoff entry.
    pub fn expand<'g>(&self, game: &'g NormalFormGame) -> Result<Cow<'g, NormalFormGame>> {
        self.check("copies", game)?;
        if self.is_identity() {
            return Ok(Cow::Borrowed(game));
        }
        let payoffs =
            (0..game.num_players()).map(|p| self.expand_tensor(game.payoffs(p))).collect::<Vec<_>>();
        Ok(Cow::Owned(NormalFormGame::new(payoffs)?))
    }

    /// A tensor over member profiles as one over expanded profiles, in one row-major pass
    /// that moves the source offset by the copies' strides.
    fn expand_tensor(&self, source: &ArrayD<f64>) -> ArrayD<f64> {
        let shape = self.expanded_shape();
        let n = shape.len();
        // Row-major offsets of each copy's member along each axis of the source.
        let mut stride = 1;
        let mut offsets = vec![Vec::new(); n];
        for q in (0..n).rev() {
            offsets[q] = self.of[q].iter().map(|&m| m * stride).collect::<Vec<_>>();
            stride *= source.shape()[q];
        }
        let source = source.as_standard_layout();
        let total: usize = shape.iter().product();
        let mut out = Vec::with_capacity(total);
        let mut idx = vec![0; n];
        let mut at: usize = offsets.iter().map(|o| o.first().copied().unwrap_or(0)).sum();
        // INVARIANT: a standard-layout array is one contiguous slice.
        let flat = source.as_slice().expect("standard layout");
        for _ in 0..total {
            out.push(flat[at]);
            // The next profile in row-major order, and its offset.
            for q in (0..n).rev() {
                at -= offsets[q][idx[q]];
                idx[q] += 1;
                if idx[q] < shape[q] {
                    at += offsets[q][idx[q]];
                    break;
                }
                idx[q] = 0;
                at += offsets[q][0];
            }
        }
        // INVARIANT: `out` has one entry per expanded profile.
        ArrayD::from_shape_vec(IxDyn(&shape), out).expect("one entry per profile")
    }

    /// A tensor over expanded profiles summed over the copies into one over member profiles.
    pub(crate) fn fold_tensor(&self, source: &ArrayD<f64>) -> ArrayD<f64> {
        let mut out = ArrayD::zeros(IxDyn(&self.shape()));
        let mut at = vec![0; self.of.len()];
        for (index, &x) in source.indexed_iter() {
            for (q, a) in at.iter_mut().enumerate() {
                *a = self.of[q][index[q]];
            }
            out[IxDyn(&at)] += x;
        }
        out
    }

    /// Mixtures over members as mixtures over the expanded strategies: each member's weight
    /// split evenly over its copies.
    ///
    /// # Panics
    ///
    /// If `mixtures` does not have one vector per player of the collapsed shape (a caller bug).
    #[track_caller]
    pub fn split(&self, mixtures: &[Vec<f64>]) -> Vec<Vec<f64>> {
        assert_eq!(mixtures.len(), self.of.len(), "one mixture per player");
        mixtures
            .iter()
            .zip(&self.of)
            .zip(&self.multiplicities)
            .map(|((x, of), count)| {
                assert_eq!(x.len(), count.len(), "a mixture over the members");
                of.iter().map(|&m| if count[m] == 1 { x[m] } else { x[m] / count[m] as f64 }).collect()
            })
            .collect()
    }

    /// Mixtures over the expanded strategies as mixtures over members: the copies' weights
    /// summed.
    ///
    /// # Panics
    ///
    /// If `mixtures` does not have one vector per player of the expanded shape (a caller bug).
    #[track_caller]
    pub fn fold(&self, mixtures: &[Vec<f64>]) -> Vec<Vec<f64>> {
        assert_eq!(mixtures.len(), self.of.len(), "one mixture per player");
        mixtures
            .iter()
            .zip(&self.of)
            .zip(&self.multiplicities)
            .map(|((x, of), count)| {
                assert_eq!(x.len(), of.len(), "a mixture over the expanded strategies");
                let mut folded = vec![0.0; count.len()];
                for (&x, &m) in x.iter().zip(of) {
                    folded[m] += x;
                }
                folded
            })
            .collect()
    }
}

fn invalid(reason: String) -> SolveError {
    SolveError::InvalidConfig { solver: "copies", reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn rejects_bad_maps() {
        assert!(Copies::new(&[2], vec![vec![0, 0]]).is_err(), "member 1 has no copy");
        assert!(Copies::new(&[2], vec![vec![0, 1, 2]]).is_err(), "no member 2");
        assert!(Copies::new(&[2, 1], vec![vec![0, 1]]).is_err(), "one list for two players");
        assert!(Copies::from_multiplicities(&[vec![1, 0]]).is_err());
    }

    #[test]
    fn expands_folds_and_splits() {
        let game = NormalFormGame::bimatrix(array![[1., 2.], [3., 4.]], array![[5., 6.], [7., 8.]]).unwrap();
        let copies = Copies::new(&[2, 2], vec![vec![1, 0, 1], vec![0, 1]]).unwrap();
        let expanded = copies.expand(&game).unwrap();
        assert_eq!(expanded.matrix(0).unwrap(), array![[3., 4.], [1., 2.], [3., 4.]]);
        assert_eq!(expanded.matrix(1).unwrap(), array![[7., 8.], [5., 6.], [7., 8.]]);
        assert_eq!(copies.by_first_copy(0), &[1, 0]);
        let split = copies.split(&[vec![0.2, 0.8], vec![0.5, 0.5]]);
        assert_eq!(split, vec![vec![0.4, 0.2, 0.4], vec![0.5, 0.5]]);
        assert_eq!(copies.fold(&split), vec![vec![0.2, 0.8], vec![0.5, 0.5]]);
        assert!(matches!(copies.expand(&game), Ok(Cow::Owned(_))));
        assert!(matches!(Copies::identity(&[2, 2]).expand(&game), Ok(Cow::Borrowed(_))));
        let joint = ArrayD::from_shape_fn(IxDyn(&[3, 2]), |i| (i[0] * 2 + i[1]) as f64);
        assert_eq!(copies.fold_tensor(&joint), array![[2., 3.], [4., 6.]].into_dyn());
    }
}
