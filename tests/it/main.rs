//! Integration tests: one binary, one module per area.

mod alpha_rank_large;
mod cli;
mod cli_behaviour;
mod fxp;
mod games_known_values;
mod hostile_input;
mod league;
mod learned_oracles;
mod learners;
mod lemke_howson_robust;
mod lp_robust;
mod matches;
mod meta_game_corpus;
mod nfg_files;
mod nplayer_nash;
mod openspiel_fixtures;
mod psro;
mod psro_long;
mod ratings;
mod readme;
mod report_html_render;
mod run_cli;
mod solvers_exact;
mod solvers_iterative;
mod training_loops;
mod warm_start;
