//! `metagame._metagame`: the native module of the `metagame` Python package.
//!
//! Each file wraps one part of the library: games and policies, exact evaluation, OpenSpiel
//! games walked through pyspiel, normal-form games and their solvers, the sequence-form LP, ratings, and the
//! training loops with Python oracles. Errors become `ValueError` with the CLI's one-line
//! message (see `errors.rs`); long calls release the GIL and honour Ctrl-C.

use pyo3::prelude::*;

mod approximate;
mod callable_policy;
mod convert;
mod distributed;
mod errors;
mod exact;
mod experiment;
mod game;
mod matches;
mod native_policy;
mod normal_form;
mod observation_buffer;
mod played;
mod policy;
mod pyspiel;
mod ratings;
mod sequence_form;
mod vec_env;

#[pymodule]
fn _metagame(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MetagameError", m.py().get_type::<errors::MetagameError>())?;
    game::register(m)?;
    policy::register(m)?;
    exact::register(m)?;
    matches::register(m)?;
    pyspiel::register(m)?;
    normal_form::register(m)?;
    sequence_form::register(m)?;
    ratings::register(m)?;
    experiment::register(m)?;
    distributed::register(m)?;
    vec_env::register(m)?;
    played::register(m)?;
    approximate::register(m)?;
    native_policy::register(m)?;
    // Runs whose members are Python callables resume from their files: pickled (where the
    // run allows it), or the state files metagame.torch and metagame.jax policies write.
    metagame::registry::register_policy_file_kind(
        callable_policy::KIND,
        callable_policy::CallablePolicy::from_file,
    );
    metagame::registry::register_policy_file_kind("torch", |bytes| {
        callable_policy::CallablePolicy::from_self_written("torch", bytes)
    });
    metagame::registry::register_policy_file_kind("jax", |bytes| {
        callable_policy::CallablePolicy::from_self_written("jax", bytes)
    });
    Ok(())
}
