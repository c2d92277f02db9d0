//! alpha-Rank on the meta-games long PSRO runs make (issue 9): hundreds of strategies per
//! player, many near-duplicates, payoff differences near 1e-15. Every large case runs on a
//! thread with a 256 KiB stack, so a search whose recursion grows with the number of
//! profiles (a recursive Tarjan went ~90 000 frames deep on a 301×301 meta-game and
//! overflowed even the 8 MiB main stack) fails here instead of in a user's run. A dense,
//! independent computation of the documented chain checks the sparse solver's answer. A
//! 50 000-move game does the same for the game-tree code.

use metagame_games::flat::FlatTree;
use metagame_games::{
    ActionId, Game, GameTree, NormalFormGame, PlayerId, State, TabularPolicy, Turn, aggregate,
    expected_returns, nash_conv,
};
use metagame_solvers::alpha_rank::{Alpha, AlphaRank, Populations};
use metagame_solvers::{MetaSolver, Solution, Status};
use ndarray::{Array2, ArrayD, IxDyn};

/// Far below the 8 MiB of a main thread; deep enough for the solver's own frames.
const SMALL_STACK: usize = 256 * 1024;

/// Run `f` on a thread with [`SMALL_STACK`]; a stack overflow aborts the test binary.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the solver thread panicked")
}

/// SplitMix64: a small seeded generator, so the games are the same on every machine.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Roughly standard normal (sum of 4 uniforms, rescaled).
    fn normal(&mut self) -> f64 {
        ((0..4).map(|_| self.uniform()).sum::<f64>() - 2.0) * 3f64.sqrt()
    }
}

/// Latent vectors for `k` PSRO members: half are new, half copy an earlier member exactly,
/// up to 1e-15, or with a small change (a best response that differs at a few infosets).
fn members(rng: &mut Rng, k: usize, dim: usize) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(k);
    for i in 0..k {
        let v = if i > 2 && rng.uniform() < 0.5 {
            let parent = out[rng.below(i)].clone();
            let step = match rng.below(4) {
                0 | 1 => 0.0,
                2 => 1e-15,
                _ => 0.05,
            };
            parent.iter().map(|x| x + step * rng.normal()).collect()
        } else {
            (0..dim).map(|_| rng.normal()).collect()
        };
        out.push(v);
    }
    out
}

/// A zero-sum two-population meta-game shaped like a long PSRO run's: `k × k`, payoffs in
/// [−5, 5], rows and columns full of near-duplicates. Not symmetric, so alpha-Rank uses
/// one population per player and `k²` states.
fn psro_like(k: usize, seed: u64) -> NormalFormGame {
    let mut rng = Rng(seed);
    let dim = 8;
    let weights: Vec<f64> = (0..dim * dim).map(|_| rng.normal()).collect();
    let (rows, cols) = (members(&mut rng, k, dim), members(&mut rng, k, dim));
    let a = Array2::from_shape_fn((k, k), |(r, c)| {
        let mut v = 0.0;
        for i in 0..dim {
            for j in 0..dim {
                v += rows[r][i] * weights[i * dim + j] * cols[c][j];
            }
        }
        v.clamp(-5.0, 5.0)
    });
    NormalFormGame::zero_sum(a).expect("finite payoffs")
}

/// Every stationary distribution is one over all profiles; the marginals are distributions.
fn assert_distributions(game: &NormalFormGame, sol: &Solution) {
    let stationary = sol.stationary().expect("alpha-Rank returns its stationary distributions");
    assert!(!stationary.is_empty());
    for pi in stationary {
        assert_eq!(pi.len(), game.num_profiles());
        assert!(pi.iter().all(|&p| p >= 0.0 && p.is_finite()), "negative or non-finite mass");
        let total: f64 = pi.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "sums to {total}");
    }
    assert!(sol.is_distribution(1e-9), "marginals are not distributions");
}

#[test]
fn psro_meta_game_301_by_301_on_a_small_stack() {
    let game = psro_like(301, 9);
    let (game, sol) = on_small_stack(move || {
        let sol = AlphaRank::default().solve(&game).expect("alpha-rank runs");
        (game, sol)
    });
    assert_distributions(&game, &sol);
    assert_eq!(sol.status, Status::Solved);
    assert_eq!(sol.stationary().unwrap().len(), 1);
}

/// All payoffs equal up to 1e-15: every deviation is neutral, the chain is one class, and
/// the first-neighbour depth-first search walks all `k²` profiles in one path (column by
/// column), the deepest a recursive search could go. π is uniform by symmetry.
#[test]
fn near_duplicate_everything_is_uniform_on_a_small_stack() {
    let k = 120;
    let mut rng = Rng(3);
    let a = Array2::from_shape_fn((k, k), |_| 5.0 + 1e-15 * rng.normal());
    let b = Array2::from_shape_fn((k, k), |_| -5.0 + 1e-15 * rng.normal());
    let game = NormalFormGame::bimatrix(a, b).expect("finite payoffs");
    let (game, sol) = on_small_stack(move || {
        let solver = AlphaRank::default().with_populations(Populations::Multiple);
        let sol = solver.solve(&game).expect("alpha-rank runs");
        (game, sol)
    });
    assert_distributions(&game, &sol);
    assert_eq!(sol.status, Status::Solved);
    let uniform = 1.0 / (k * k) as f64;
    assert!(sol.stationary().unwrap()[0].iter().all(|p| (p - uniform).abs() < 1e-9 * uniform));
}

/// A coordination game (1 on the diagonal, 0 elsewhere): each diagonal profile is a strict
/// equilibrium, so at α = 100 the chain has `k` closed classes, each a point mass there;
/// the off-diagonal profiles tie with each other and form one long-searched transient part.
#[test]
fn many_closed_classes_on_a_small_stack() {
    let k = 150;
    let eye = Array2::from_shape_fn((k, k), |(r, c)| if r == c { 1.0 } else { 0.0 });
    let game = NormalFormGame::bimatrix(eye.clone(), eye).expect("finite payoffs");
    let (game, sol) = on_small_stack(move || {
        let solver = AlphaRank::default().with_populations(Populations::Multiple);
        let sol = solver.solve(&game).expect("alpha-rank runs");
        (game, sol)
    });
    assert_distributions(&game, &sol);
    assert_eq!(sol.status, Status::MultipleStationary);
    assert_eq!(sol.stationary().unwrap().len(), k);
    for (i, pi) in sol.stationary().unwrap().iter().enumerate() {
        assert_eq!(pi[i * k + i], 1.0, "class {i} is not the point mass on ({i}, {i})");
    }
}

/// The documented chain, dense: `C[σ][τ] = η·ρ(α·(f_τ − f_σ))` for profiles differing in one
/// player's strategy, `ρ(u) = (1 − e^{−u})/(1 − e^{−m·u})` (1/m at u = 0), `C[σ][σ] = 1 −
/// Σ`, and π with `πᵀC = πᵀ`, `Σπ = 1`, by Gaussian elimination. Row-major profiles.
// Dense Gaussian elimination reads best with indices.
#[allow(clippy::needless_range_loop)]
fn dense_stationary(game: &NormalFormGame, alpha: f64, m: f64) -> Vec<f64> {
    let shape = game.shape().to_vec();
    let n = game.num_profiles();
    let eta = 1.0 / shape.iter().map(|k| k - 1).sum::<usize>() as f64;
    let rho = |u: f64| if u.abs() < 1e-14 { 1.0 / m } else { (1.0 - (-u).exp()) / (1.0 - (-m * u).exp()) };
    let profile = |mut i: usize| {
        let mut p = vec![0; shape.len()];
        for (axis, &k) in shape.iter().enumerate().rev() {
            p[axis] = i % k;
            i /= k;
        }
        p
    };
    let index = |p: &[usize]| p.iter().zip(&shape).fold(0, |acc, (&s, &k)| acc * k + s);
    // Row σ of C, transposed into the system's column σ: system[τ][σ] = C[σ][τ] − δ.
    let mut system = vec![vec![0.0; n + 1]; n];
    for sigma in 0..n {
        let p = profile(sigma);
        let mut out = 0.0;
        for (player, &k) in shape.iter().enumerate() {
            for s in (0..k).filter(|&s| s != p[player]) {
                let mut q = p.clone();
                q[player] = s;
                let gain = game.payoff(player, &q) - game.payoff(player, &p);
                let rate = eta * rho(alpha * gain);
                system[index(&q)][sigma] += rate;
                out += rate;
            }
        }
        system[sigma][sigma] -= out;
    }
    // Replace the last equation by Σπ = 1.
    system[n - 1] = vec![1.0; n + 1];
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| system[i][col].abs().total_cmp(&system[j][col].abs())).unwrap();
        system.swap(col, pivot);
        for row in 0..n {
            if row != col {
                let f = system[row][col] / system[col][col];
                if f != 0.0 {
                    for c in col..=n {
                        system[row][c] -= f * system[col][c];
                    }
                }
            }
        }
    }
    (0..n).map(|i| system[i][n] / system[i][i]).collect()
}

fn random_game(shape: &[usize], seed: u64) -> NormalFormGame {
    let mut rng = Rng(seed);
    let tensors = (0..shape.len())
        .map(|_| ArrayD::from_shape_fn(IxDyn(shape), |_| 2.0 * rng.uniform() - 1.0))
        .collect();
    NormalFormGame::new(tensors).expect("finite payoffs")
}

/// The sparse chain (implicit neighbours, per-axis copies of π, Gauss–Seidel) against the
/// dense reference on two- and three-player games, where a middle axis has a stride that
/// is neither 1 nor the largest.
#[test]
fn sparse_chain_matches_a_dense_solve() {
    for (shape, seed) in [(vec![5, 7], 1), (vec![3, 4, 2], 2), (vec![2, 3, 2, 3], 3)] {
        let game = random_game(&shape, seed);
        for (alpha, m) in [(0.5, 10), (5.0, 50)] {
            let sol = AlphaRank::default()
                .with_alpha(Alpha::Finite(alpha))
                .with_population_size(m)
                .with_populations(Populations::Multiple)
                .solve(&game)
                .unwrap();
            assert_eq!(sol.status, Status::Solved);
            let reference = dense_stationary(&game, alpha, m as f64);
            for (x, r) in sol.stationary().unwrap()[0].iter().zip(&reference) {
                assert!((x - r).abs() < 1e-9, "{shape:?} α={alpha}: {x} vs {r}");
            }
        }
    }
}

/// A perfect-information game of `length` steps: the player to move (alternating) stops,
/// winning 1 from the other, or goes on; after the last step it is a draw. As deep as it
/// is long, like a user's game with thousands of moves.
#[derive(Clone, Copy)]
struct StopOrGo {
    length: usize,
}

#[derive(Clone)]
struct StopOrGoState {
    length: usize,
    history: Vec<ActionId>,
}

impl StopOrGoState {
    fn stopped(&self) -> bool {
        self.history.last() == Some(&ActionId(0))
    }
}

impl Game for StopOrGo {
    type State = StopOrGoState;
    fn name(&self) -> String {
        format!("stop_or_go(length={})", self.length)
    }
    fn num_players(&self) -> usize {
        2
    }
    fn num_distinct_actions(&self) -> usize {
        2
    }
    fn new_initial_state(&self) -> StopOrGoState {
        StopOrGoState { length: self.length, history: Vec::new() }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
}

impl State for StopOrGoState {
    fn turn(&self) -> Turn {
        if self.stopped() || self.history.len() == self.length {
            Turn::Terminal
        } else {
            Turn::Player(PlayerId(self.history.len() % 2))
        }
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        if self.is_terminal() { Vec::new() } else { vec![ActionId(0), ActionId(1)] }
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        Vec::new()
    }
    fn apply_action(&mut self, action: ActionId) {
        assert!(!self.is_terminal() && action.0 < 2, "illegal action");
        self.history.push(action);
    }
    fn returns(&self) -> Vec<f64> {
        if !self.stopped() {
            return vec![0.0, 0.0];
        }
        // The stopper is the player who moved last.
        let stopper = (self.history.len() - 1) % 2;
        if stopper == 0 { vec![1.0, -1.0] } else { vec![-1.0, 1.0] }
    }
    fn information_state_string(&self, _player: PlayerId) -> String {
        // Perfect information, and the only live history of each length is all "go".
        format!("step {}", self.history.len())
    }
    fn history(&self) -> &[ActionId] {
        &self.history
    }
}

/// The game-tree code never recursed (the builder is breadth-first, the exact passes walk
/// node arrays); this keeps it so. A 50 000-move game, built and evaluated on a small
/// stack. Uniform play: player 0 stops first with probability 1/2, so its value is
/// Σ_t (−1)^t 2^{−(t+1)} = 1/3; best responses stop at once (player 0 gains 2/3, player 1,
/// whose first move is reached half the time, gains 1/3), so NashConv is 1.
#[test]
fn a_long_game_builds_and_evaluates_on_a_small_stack() {
    let length = 50_000;
    let (value, nash_conv, num_nodes) = on_small_stack(move || {
        let tree = GameTree::build(&StopOrGo { length }).expect("tree builds");
        let uniform = TabularPolicy::uniform(&tree);
        let value = expected_returns(&tree, &[&uniform, &uniform]).expect("evaluates")[0];
        let nash_conv = nash_conv(&tree, &[&uniform, &uniform]).expect("nash conv");
        // Pure policies, whose own-reach probabilities are 0 or 1 at every depth.
        let go = TabularPolicy::from_fn(&tree, |_| vec![0.0, 1.0]).expect("a policy");
        let stop = TabularPolicy::from_fn(&tree, |_| vec![1.0, 0.0]).expect("a policy");
        let mixed = aggregate(&tree, &[&go, &stop], &[0.5, 0.5]).expect("aggregates");
        mixed.validate(&tree).expect("a valid policy");
        let deep = tree.infoset_by_key(&format!("step {}", length - 1)).expect("the last step");
        assert_eq!(mixed.row(deep), &[0.0, 1.0]);
        // Uniform play mixed with itself: own-reach probabilities underflow to 0 past step
        // ~2 100, and every row must still be a distribution (the uniform one).
        let mixed = aggregate(&tree, &[&uniform, &uniform], &[0.5, 0.5]).expect("aggregates");
        mixed.validate(&tree).expect("a valid policy after underflow");
        assert_eq!(mixed.row(deep), &[0.5, 0.5]);
        let _ = FlatTree::new(&tree);
        (value, nash_conv, tree.num_nodes())
    });
    assert_eq!(num_nodes, 2 * length + 1);
    assert!((value - 1.0 / 3.0).abs() < 1e-12, "value {value}");
    assert!((nash_conv - 1.0).abs() < 1e-12, "nash conv {nash_conv}");
}

/// The Gauss–Seidel stopping tolerance is the solver's to choose: a looser one stops a chain
/// too large to solve directly in fewer sweeps, with an answer near the default's; one that
/// is not positive and finite is a config error.
#[test]
fn a_looser_tolerance_stops_sooner_and_a_bad_one_is_refused() {
    let game = psro_like(48, 5);
    let tight = AlphaRank::default().solve(&game).unwrap();
    let loose = AlphaRank::default().with_tolerance(1e-6).solve(&game).unwrap();
    assert_eq!((tight.status, loose.status), (Status::Solved, Status::Solved));
    assert!(tight.iterations > 0, "the chain is solved by sweeps, not directly");
    assert!(loose.iterations < tight.iterations, "{} vs {} sweeps", loose.iterations, tight.iterations);
    for (a, b) in loose.strategies.iter().flatten().zip(tight.strategies.iter().flatten()) {
        assert!((a - b).abs() < 1e-3, "{a} vs {b}");
    }
    for bad in [0.0, -1e-9, f64::NAN, f64::INFINITY] {
        let err = AlphaRank::default().with_tolerance(bad).solve(&game).unwrap_err();
        assert!(matches!(err, metagame_solvers::SolveError::InvalidConfig { .. }), "{bad}: {err}");
    }
}
