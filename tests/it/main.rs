//! Integration tests: one binary, one module per area.

mod cli;
mod games_known_values;
mod matches;
mod nfg_files;
mod openspiel_fixtures;
mod psro;
mod run_cli;
mod solvers_exact;
mod solvers_iterative;
