//! # metagame-solvers
//!
//! Equilibrium solvers for normal-form games (the meta-games of PSRO and leagues). Every
//! [`MetaSolver`] returns a [`Solution`] whose [`Certificate`] is computed from the game
//! itself, independently of the solver, so an answer can be trusted without trusting the
//! method.

mod bimatrix;
mod conic;
mod copies;
mod dynamics;
mod error;
mod linalg;
mod settings;
mod solution;
mod solver_memory;

pub mod alpha_rank;
pub mod correlated;
pub mod fictitious_play;
pub mod hedge;
pub mod logit;
pub mod lp;
pub mod nash;
pub mod nash_averaging;
pub mod regret_matching;
pub mod replicator;
pub mod sequence_form_lp;
pub mod uniform;

pub use bimatrix::{lemke_howson, support_enumeration, vertex_enumeration};
pub use copies::Copies;
pub use error::{Result, SolveError};
pub use solution::{Certificate, Extras, MetaSolver, Solution, Status};
pub use solver_memory::SolverMemory;
