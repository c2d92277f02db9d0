//! What a meta-solver carries from one solve to the next, as a training loop's checkpoint
//! stores it: plain data, so that the solvers and the trait that hands it out both depend
//! on this file and not on each other.

use crate::linalg::Normalization;

/// What a meta-solver carries between solves ([`crate::MetaSolver::memory`]), as a checkpoint
/// stores it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SolverMemory {
    /// The zero-sum LP's remembered subgame and tableau ([`crate::lp::LpNash::memory`]).
    Lp(LpMemory),
}

/// What a checkpoint keeps of an [`crate::lp::LpNash`]'s memory (see
/// [`crate::lp::LpNash::memory`]): the remembered subgame and its tableau, bit for bit. The
/// remembered game is not kept: it is the leading block of the game the memory is restored
/// with (a PSRO meta-game keeps its old entries as it grows).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LpMemory {
    /// The remembered game's strategies per player.
    pub(crate) shape: (usize, usize),
    pub(crate) map: Normalization,
    pub(crate) rows: Vec<usize>,
    pub(crate) cols: Vec<usize>,
    pub(crate) tableau: TableauState,
}

/// Everything of the LP's simplex tableau but its matrix (which the caller keeps) and its
/// buffers: what a checkpoint stores of a remembered tableau, so that a resumed run pivots on
/// the same bits.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TableauState {
    pub(crate) t: Vec<f64>,
    pub(crate) rhs: Vec<f64>,
    pub(crate) cost: Vec<f64>,
    pub(crate) norms: Vec<f64>,
    pub(crate) basic: Vec<usize>,
    pub(crate) nonbasic: Vec<usize>,
    pub(crate) pivots: usize,
    pub(crate) since_refactor: usize,
    /// Price, feasibility, relative and absolute pivot tolerances of the last pass.
    pub(crate) tolerances: [f64; 4],
    pub(crate) dual_feasible_only: bool,
}
