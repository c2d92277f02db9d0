//! Exact equilibria of two-player zero-sum extensive-form games by the sequence-form LP
//! (Koller, Megiddo & von Stengel 1996; von Stengel 1996).
//!
//! With `x` the first player's realisation plan (`E x = e`, `x ≥ 0`), `y` the second's
//! (`F y = f`, `y ≥ 0`) and `A[σ, τ]` the sum, over the terminals where the first player's last
//! sequence is `σ` and the second's `τ`, of chance's reach times the first player's utility,
//! the first player's maxmin problem is one LP over `x` and the dual values `v` of the second
//! player's information sets (von Stengel 1996, eq. (5.3)):
//!
//! ```text
//! maximise v₀  subject to  Fᵀ v ≤ Aᵀ x,  E x = e,  x ≥ 0
//! ```
//!
//! whose multipliers on `Fᵀ v ≤ Aᵀ x` are the second player's minmax plan `y`. It has one
//! variable per sequence of the first player and per infoset of the second, and `A` has at
//! most one entry per terminal, so it is solved sparse: by interior points (clarabel through
//! the solvers' conic layer, `conic.rs`); the project's simplex ([`crate::lp`]) is dense and made for
//! matrix games. The answer is never taken from the method's own bookkeeping: each plan
//! becomes a behaviour policy (`π(h, a) = x(h·a) / Σ_b x(h·b)`, uniform where the player's
//! plan never reaches `h`), and the certificate (NashConv) and the value (the first
//! player's expected return) are recomputed from the tree.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use metagame_games::{GameTree, InfosetId, NodeKind, PlayerId, TabularPolicy, expected_returns, nash_conv};

use crate::conic::solve_conic;
use crate::{Result, SolveError, Status};

/// The name errors carry.
const NAME: &str = "sequence-form-lp";

/// The sequence-form LP for two-player zero-sum (constant-sum) games on their [`GameTree`].
///
/// # Complexity
///
/// An interior-point solve of an LP with `S₁ + I₂ + 2` variables and `S₁ + S₂ + I₁ + 2`
/// constraints (`S` sequences, `I` infosets of each player) and at most one payoff entry per
/// terminal: a few dozen sparse factorisations. The certificate costs two tree walks.
///
/// # References
///
/// - D. Koller, N. Megiddo, B. von Stengel (1996), "Efficient computation of equilibria for
///   extensive two-person games", Games and Economic Behavior 14.
/// - B. von Stengel (1996), "Efficient computation of behavior strategies", Games and
///   Economic Behavior 14.
///
/// # Examples
///
/// ```
/// use metagame_games::{GameTree, registry};
/// use metagame_solvers::sequence_form_lp::SequenceFormLp;
///
/// let kuhn = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let solved = SequenceFormLp::default().solve(&kuhn)?;
/// assert!((solved.value + 1.0 / 18.0).abs() < 1e-12);
/// assert!(solved.nash_conv < 1e-9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SequenceFormLp {}

/// The equilibrium the sequence-form LP finds, with its certificate.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SequenceFormSolution {
    /// One behaviour policy per player; policy `p` is meaningful on player `p`'s rows only
    /// (the other rows are uniform), as a profile for [`metagame_games::nash_conv`] takes it.
    pub policies: Vec<TabularPolicy>,
    /// The first player's expected return under the two policies, from the tree.
    pub value: f64,
    /// NashConv of the two policies from the tree (twice their exploitability).
    pub nash_conv: f64,
    /// [`Status::Solved`] when `nash_conv` is within
    /// [`SequenceFormLp::CERTIFICATE_TOLERANCE`] times the payoff range, else
    /// [`Status::MaxIterations`] (the interior-point method stopped short).
    pub status: Status,
    /// Interior-point iterations.
    pub iterations: usize,
}

impl SequenceFormSolution {
    /// Both policies as one table: each player's rows from its own policy, as a policy file
    /// holds a profile.
    pub fn profile(&self, tree: &GameTree) -> TabularPolicy {
        let mut joint = self.policies[0].clone();
        joint.copy_player_rows(tree, PlayerId(1), &self.policies[1]);
        joint
    }
}

impl SequenceFormLp {
    /// An answer is [`Status::Solved`] when its NashConv is at most this times the first
    /// player's payoff range.
    pub const CERTIFICATE_TOLERANCE: f64 = 1e-9;

    /// Solve the game of `tree` for an equilibrium and its value.
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players, constant-sum
    /// utilities and perfect recall; [`SolveError::Numerical`] when the interior-point method fails outright.
    pub fn solve(&self, tree: &GameTree) -> Result<SequenceFormSolution> {
        let unsupported = |reason: String| SolveError::Unsupported { solver: NAME, reason };
        if tree.num_players() != 2 {
            return Err(unsupported(format!("{} has {} players, not 2", tree.name(), tree.num_players())));
        }
        if tree.utility_sum().is_none() {
            return Err(unsupported(format!("{} is not zero-sum (nor constant-sum)", tree.name())));
        }
        if !tree.has_perfect_recall() {
            return Err(unsupported(format!(
                "{} has imperfect recall ({} information states reached with different own histories), and the sequence form needs perfect recall",
                tree.name(),
                tree.num_imperfect_recall_infosets()
            )));
        }
        let lp = SequenceForm::of(tree);
        let (plans, iterations) = lp.solve()?;
        let policies = [0, 1].map(|p| behaviour(tree, PlayerId(p), &lp.sequences[p], &plans[p]));
        let profile = [&policies[0], &policies[1]];
        let value = expected_returns(tree, &profile)?[0];
        let nash_conv = nash_conv(tree, &profile)?;
        let (lo, hi) = tree.utility_range(PlayerId(0));
        let tolerance = Self::CERTIFICATE_TOLERANCE * (hi - lo).max(f64::MIN_POSITIVE);
        let status = if nash_conv <= tolerance { Status::Solved } else { Status::MaxIterations };
        Ok(SequenceFormSolution { policies: policies.into(), value, nash_conv, status, iterations })
    }
}

/// One player's sequences numbered from 0: 0 is the empty sequence, `1 + k` the `k`-th of
/// the player's infoset-action pairs.
struct Sequences {
    /// The first global sequence id of the player's infoset-action pairs.
    first: usize,
    /// The player's empty sequence's global id.
    empty: usize,
    len: usize,
}

impl Sequences {
    fn of(tree: &GameTree, player: PlayerId) -> Self {
        let range = tree.player_sequences(player);
        Self { first: range.start, empty: tree.empty_sequence(player).0, len: range.len() + 1 }
    }

    fn local(&self, global: usize) -> usize {
        if global == self.empty { 0 } else { global - self.first + 1 }
    }
}

/// The LP's data: both players' sequences and the payoff matrix `A` as triplets.
struct SequenceForm<'t> {
    tree: &'t GameTree,
    sequences: [Sequences; 2],
    /// `(σ, τ, A[σ, τ])`, one per pair of last sequences that some terminal has.
    payoffs: Vec<(usize, usize, f64)>,
}

impl<'t> SequenceForm<'t> {
    fn of(tree: &'t GameTree) -> Self {
        let sequences = [0, 1].map(|p| Sequences::of(tree, PlayerId(p)));
        // Chance's reach of every node: parents come before their children.
        let mut chance_reach = vec![1.0; tree.num_nodes()];
        let mut payoffs = Vec::with_capacity(tree.num_terminals());
        for node in 0..tree.num_nodes() {
            let reach = chance_reach[node];
            match tree.node_kind(node) {
                NodeKind::Terminal => {
                    let [s, t] =
                        [0, 1].map(|p| sequences[p].local(tree.terminal_sequence(node, PlayerId(p)).0));
                    payoffs.push((s, t, reach * tree.terminal_utilities(node)[0]));
                }
                _ => {
                    for child in tree.children(node) {
                        chance_reach[child] = reach * tree.chance_prob(child);
                    }
                }
            }
        }
        payoffs.sort_unstable_by_key(|&(s, t, _)| (t, s));
        payoffs.dedup_by(|next, kept| {
            let same = (next.0, next.1) == (kept.0, kept.1);
            if same {
                kept.2 += next.2;
            }
            same
        });
        Self { tree, sequences, payoffs }
    }

    /// Both players' realisation plans (numbered as [`Sequences`]) and the iterations taken.
    ///
    /// Variables: `x` (the first player's sequences), then `v` (the second player's root
    /// value, then one per infoset). Rows: `E x = e` (zero cone), `Fᵀ v − Aᵀ x ≤ 0` (one per
    /// sequence of the second player, whose multipliers are `y`), `−x ≤ 0`.
    fn solve(&self) -> Result<([Vec<f64>; 2], usize)> {
        let tree = self.tree;
        let [first, second] = [0, 1].map(|p| tree.infosets_of(PlayerId(p)));
        let (n0, n1) = (self.sequences[0].len, self.sequences[1].len);
        let num_values = second.len() + 1;
        let num_equalities = first.len() + 1;
        let num_rows = num_equalities + n1 + n0;
        let mut triplets: Vec<(usize, usize, f64)> = Vec::with_capacity(4 * (n0 + n1) + self.payoffs.len());
        // E x = e: x(∅) = 1 and, per infoset h, Σ_a x(h·a) − x(parent(h)) = 0.
        triplets.push((0, 0, 1.0));
        for (k, h) in first.clone().enumerate() {
            let h = InfosetId(h);
            triplets.push((1 + k, self.sequences[0].local(tree.parent_sequence(h).0), -1.0));
            for s in tree.sequences_of(h) {
                triplets.push((1 + k, self.sequences[0].local(s), 1.0));
            }
        }
        // Fᵀ v − Aᵀ x ≤ 0, the row of τ: v(h) for τ's infoset h (v₀ for ∅) minus the values of
        // the infosets τ leads to.
        let row_of = |tau: usize| num_equalities + tau;
        let value_of = |k: usize| n0 + k;
        triplets.push((row_of(0), value_of(0), 1.0));
        for (k, h) in second.clone().enumerate() {
            let h = InfosetId(h);
            let parent = self.sequences[1].local(tree.parent_sequence(h).0);
            triplets.push((row_of(parent), value_of(1 + k), -1.0));
            for s in tree.sequences_of(h) {
                triplets.push((row_of(self.sequences[1].local(s)), value_of(1 + k), 1.0));
            }
        }
        for &(s, t, a) in &self.payoffs {
            triplets.push((row_of(t), s, -a));
        }
        // x ≥ 0.
        for s in 0..n0 {
            triplets.push((num_equalities + n1 + s, s, -1.0));
        }
        let constraints = csc(num_rows, n0 + num_values, triplets);
        let mut b = vec![0.0; num_rows];
        b[0] = 1.0;
        let mut q = vec![0.0; n0 + num_values];
        q[value_of(0)] = -1.0;
        let p = CscMatrix::zeros((n0 + num_values, n0 + num_values));
        let cones = [SupportedConeT::ZeroConeT(num_equalities), SupportedConeT::NonnegativeConeT(n1 + n0)];
        let solution = solve_conic(NAME, &p, &q, &constraints, &b, &cones)?;
        let x = solution.x[..n0].to_vec();
        let y = solution.z[num_equalities..num_equalities + n1].to_vec();
        Ok(([x, y], solution.iterations))
    }
}

/// A sparse matrix from `(row, column, value)` triplets (each position at most once).
fn csc(m: usize, n: usize, mut triplets: Vec<(usize, usize, f64)>) -> CscMatrix<f64> {
    triplets.sort_unstable_by_key(|&(i, j, _)| (j, i));
    let mut colptr = vec![0; n + 1];
    for &(_, j, _) in &triplets {
        colptr[j + 1] += 1;
    }
    for j in 0..n {
        colptr[j + 1] += colptr[j];
    }
    let rowval = triplets.iter().map(|t| t.0).collect();
    let nzval = triplets.iter().map(|t| t.2).collect();
    CscMatrix::new(m, n, colptr, rowval, nzval)
}

/// `player`'s behaviour policy from its realisation plan: at each infoset the plan's values
/// of its sequences (negative rounding clipped to 0) normalised, uniform where they are all
/// 0. The other players' rows are uniform.
fn behaviour(tree: &GameTree, player: PlayerId, sequences: &Sequences, plan: &[f64]) -> TabularPolicy {
    let mut policy = TabularPolicy::uniform(tree);
    for h in tree.infosets_of(player) {
        let h = InfosetId(h);
        let weights: Vec<f64> = tree.sequences_of(h).map(|s| plan[sequences.local(s)].max(0.0)).collect();
        let total: f64 = weights.iter().sum();
        if total > 0.0 {
            let actions = tree.legal_actions(h).to_vec();
            let row = policy.row_mut(h);
            for (a, w) in actions.iter().zip(&weights) {
                row[a.0] = w / total;
            }
        }
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagame_games::registry;

    fn tree(spec: &str) -> GameTree {
        GameTree::build(&registry::load(spec).unwrap()).unwrap()
    }

    #[test]
    fn kuhn_value_is_minus_one_eighteenth() {
        let solved = SequenceFormLp::default().solve(&tree("kuhn_poker")).unwrap();
        assert!((solved.value + 1.0 / 18.0).abs() < 1e-12, "value {}", solved.value);
        assert!(solved.nash_conv < 1e-9, "nash_conv {}", solved.nash_conv);
        assert_eq!(solved.status, Status::Solved);
    }

    #[test]
    fn leduc_value_and_certificate() {
        // OpenSpiel's sequence_form_lp on leduc_poker: −0.0856064240 (docs/src/commands.md).
        let solved = SequenceFormLp::default().solve(&tree("leduc_poker")).unwrap();
        assert!((solved.value + 0.0856064240).abs() < 1e-9, "value {}", solved.value);
        assert!(solved.nash_conv < 1e-9, "nash_conv {}", solved.nash_conv);
        assert_eq!(solved.status, Status::Solved);
    }

    #[test]
    #[cfg_attr(debug_assertions, ignore = "about a minute unoptimised; 3 s in release")]
    fn liars_dice_value_is_certified() {
        // OpenSpiel's sequence_form_lp gave no answer within 900 s (docs/src/commands.md);
        // the certificate is the proof.
        let solved = SequenceFormLp::default().solve(&tree("liars_dice")).unwrap();
        assert!(solved.nash_conv < 1e-9, "nash_conv {}", solved.nash_conv);
        assert!((solved.value + 0.0271317829).abs() < 1e-9, "value {}", solved.value);
        assert_eq!(solved.status, Status::Solved);
    }

    #[test]
    fn other_games_are_refused_with_a_typed_error() {
        for spec in ["kuhn_poker(players=3)", "matrix_pd"] {
            let err = SequenceFormLp::default().solve(&tree(spec)).unwrap_err();
            assert!(matches!(err, SolveError::Unsupported { .. }), "{spec}: {err}");
        }
        // Two players and zero-sum, but its strings forget the order of a player's bids.
        let err = SequenceFormLp::default().solve(&tree("goofspiel(num_cards=4)")).unwrap_err();
        assert!(matches!(err, SolveError::Unsupported { .. }), "{err}");
        assert!(err.to_string().contains("imperfect recall (1056 information states"), "{err}");
    }
}
