//! The exact two-player (bimatrix) solvers and the helpers they share.
//!
//! - [`lemke_howson`]: one equilibrium by complementary pivoting;
//! - [`vertex_enumeration`]: every extreme equilibrium, degenerate games included;
//! - [`support_enumeration`]: every equilibrium of a nondegenerate game, and
//!   [`equilibrium_on_support`](support_enumeration::equilibrium_on_support).
//!
//! Their shared parts sit below them, so the imports form a tree with no cycle:
//! `tableau` (the lexicographic simplex tableau), `certificate` (when a profile counts as an
//! equilibrium) and `face` (the equilibrium on given supports, by phase-one programs on the
//! tableau). Lemke–Howson uses those three; vertex enumeration also falls back on
//! Lemke–Howson; support enumeration uses all of the above.

mod certificate;
mod face;
pub mod lemke_howson;
pub mod support_enumeration;
mod tableau;
pub mod vertex_enumeration;
