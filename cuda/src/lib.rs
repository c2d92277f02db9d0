//! # metagame-cuda
//!
//! Batched match evaluation on an NVIDIA GPU: [`GpuEvaluator`] implements
//! [`MatchEvaluator`] and draws exactly the outcomes that the CPU's
//! [`SampledEvaluator`](metagame_games::SampledEvaluator) draws for the same seed.
//!
//! - One game-agnostic kernel (`kernels/evaluate.cu` + `kernels/episode.cuh`, CUDA C) walks
//!   the flattened game tree ([`FlatTree`], uploaded once per tree) with the policies as
//!   cumulative probability tables. Chance and action sampling use the Philox4x32-10 stream
//!   and the integer-to-float conversion of [`metagame_games::philox`]; per-block partial
//!   sums are reduced in the fixed order of [`metagame_games::flat`], so totals are
//!   bit-identical to the CPU's.
//! - The CUDA driver and NVRTC are loaded at run time (cudarc's `dynamic-loading`): the crate
//!   builds and its host tests pass on machines without CUDA, and [`GpuEvaluator::new`]
//!   returns [`Error::NoDevice`] there instead of panicking.
//! - [`shim`]: the kernel's episode logic compiled for the host (by `build.rs`, with the `cc`
//!   crate), which the tests check outcome for outcome against the CPU evaluator.
//! - Games without a built tree (connect four): the matches are the CPU's batched rollouts
//!   ([`RolloutEvaluator`]), with every network among the policies placed on the GPU
//!   ([`GpuNetworks`], [`Policy::on_device`]): its forward passes through cuBLAS's SGEMM,
//!   loaded at run time too. [`network_gemm`] writes that forward pass once over a backend,
//!   and the host backend ([`HostNetworks`]) is the CPU twin the tests hold to
//!   [`Mlp::logits`](metagame_networks::Mlp::logits) and to the CPU's rollouts.
//!
//! This is the only crate of the workspace with `unsafe` (FFI); each block says why it is
//! sound.
//!
//! # Example
//!
//! ```
//! use metagame_cuda::{Error, GpuEvaluator};
//! use metagame_games::{registry, GameTree, MatchEvaluator, Matchup, TabularPolicy};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! match GpuEvaluator::new() {
//!     Ok(gpu) => {
//!         let totals = gpu.evaluate_tables(&tree, &[&uniform], &[Matchup { seats: vec![0, 0] }], 100_000, 7)?;
//!         assert_eq!(totals[0].episodes, 100_000);
//!     }
//!     Err(Error::NoDevice { .. }) => {} // no GPU here: nothing panics
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use metagame_games::flat::{self, FlatTree, fold_block_partials, policy_cum_table};
use metagame_games::{
    Arena, GameTree, MatchEvaluator, MatchTotals, Matchup, Policy, RolloutEvaluator, TabularPolicy,
    check_matchups,
};

mod cublas_backend;
mod error;
pub mod network_gemm;
mod nvrtc;
mod placed_network;
pub mod shim;

pub use cublas_backend::{Cublas, is_cublas_present};
use error::driver_err;
pub use error::{Error, Result};
pub use nvrtc::{
    EPISODE_SOURCE, KERNEL_NAME, KERNEL_SOURCE, compile_bias_relu, compile_kernel, is_nvrtc_present,
    kernel_source,
};
pub use placed_network::{
    DEVICE_LANES, GpuNetwork, GpuNetworks, HostNetwork, HostNetworks, PlacedNetwork, Placer, roll_out_on,
};

/// The most players the kernel handles (its per-thread accumulators are fixed-size).
pub const MAX_PLAYERS: usize = 8;
/// Most thread blocks in one launch (bounds the partial-sum buffer at 64 MiB for 8 players).
const MAX_BLOCKS_PER_LAUNCH: u64 = 1 << 19;
/// Most matchups in one launch (the grid's y dimension).
const MAX_MATCHUPS_PER_LAUNCH: u64 = 65_535;

/// True when the CUDA driver library (`libcuda.so`) can be loaded. Checked before any other
/// CUDA call, because cudarc panics when the library is missing.
pub fn is_driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by its usual names and closes it
    // again; no CUDA function is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

struct DeviceTree {
    host: FlatTree,
    nodes: CudaSlice<u32>,
    chance_cum: CudaSlice<f64>,
    utilities: CudaSlice<f64>,
}

/// Sampled match evaluation on a CUDA device, outcome for outcome identical to
/// [`SampledEvaluator`](metagame_games::SampledEvaluator).
///
/// The flattened tree stays on the device between calls while the same tree is evaluated;
/// calls from several threads are serialised.
pub struct GpuEvaluator {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    function: CudaFunction,
    tree: Mutex<Option<DeviceTree>>,
    /// Where networks run, or why they cannot (no cuBLAS): tables do not need it.
    networks: std::result::Result<GpuNetworks, String>,
}

impl std::fmt::Debug for GpuEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuEvaluator").field("device", &self.device_name()).finish()
    }
}

impl GpuEvaluator {
    /// Use device 0.
    ///
    /// # Errors
    ///
    /// [`Error::NoDevice`] without a driver or device (never a panic); [`Error::NoNvrtc`],
    /// [`Error::Compile`] or [`Error::Driver`] when the kernel cannot be built or loaded.
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// Use device `ordinal`.
    ///
    /// # Errors
    ///
    /// As [`GpuEvaluator::new`].
    pub fn with_device(ordinal: usize) -> Result<Self> {
        if !is_driver_present() {
            return Err(Error::NoDevice { reason: "the CUDA driver (libcuda) is not installed".into() });
        }
        cudarc::driver::result::init()
            .map_err(|e| Error::NoDevice { reason: format!("the CUDA driver did not start: {e}") })?;
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoDevice { reason: format!("cannot count devices: {e}") })?;
        if usize::try_from(count).map_or(true, |c| ordinal >= c) {
            return Err(Error::NoDevice { reason: format!("device {ordinal} asked for, {count} present") });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        let (major, minor) = ctx.compute_capability().map_err(driver_err)?;
        let arch = format!("compute_{major}{minor}");
        let ptx = compile_kernel(Some(&arch))?;
        let module = ctx.load_module(ptx).map_err(driver_err)?;
        let function = module.load_function(KERNEL_NAME).map_err(driver_err)?;
        let stream = ctx.default_stream();
        let networks = Cublas::new(stream.clone(), &arch).map(GpuNetworks::new).map_err(|e| e.to_string());
        Ok(Self { ctx, stream, function, tree: Mutex::new(None), networks })
    }

    /// Where networks are placed on this device.
    ///
    /// # Errors
    ///
    /// [`Error::NoCublas`] (with its reason) when cuBLAS could not be loaded.
    pub fn networks(&self) -> Result<&GpuNetworks> {
        self.networks.as_ref().map_err(|reason| Error::NoCublas { reason: reason.clone() })
    }

    /// Matches on a game without a built tree: [`RolloutEvaluator`]'s batched rollouts on the
    /// CPU's threads ([`roll_out_on`]), every network among
    /// the policies answering on the GPU. Within float rounding of the CPU's networks: an
    /// episode whose draw falls within that rounding of a probability's edge may take
    /// another action than on the CPU, so totals agree in distribution, not bit for bit.
    ///
    /// # Errors
    ///
    /// Bad input as the rollouts report it; [`Error::NoCublas`] when a policy is a network
    /// and cuBLAS is missing; [`Error::Driver`] as a policy's error when a CUDA call fails.
    pub fn roll_out(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        match &self.networks {
            Ok(networks) => Ok(roll_out_on(networks, arena, policies, matchups, episodes, seed)?),
            Err(reason) => {
                let probe = placed_network::NetworkProbe::default();
                if policies.iter().any(|p| p.on_device(&probe).is_some() || probe.saw_network()) {
                    return Err(Error::NoCublas {
                        reason: format!("{reason}; the networks among the policies need it"),
                    });
                }
                Ok(RolloutEvaluator::new().evaluate(arena, policies, matchups, episodes, seed)?)
            }
        }
    }

    /// The device's name.
    pub fn device_name(&self) -> String {
        self.ctx.name().unwrap_or_else(|e| format!("unknown device ({e})"))
    }

    /// Evaluate matchups (see [`MatchEvaluator::evaluate`]) with this crate's error type.
    ///
    /// # Errors
    ///
    /// [`Error::Games`] for bad input (shapes, policies that are not distributions, more than
    /// [`MAX_PLAYERS`] players); [`Error::Driver`] when a CUDA call fails.
    pub fn evaluate_on_device(
        &self,
        tree: &GameTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        check_matchups(tree, policies, matchups)?;
        let np = tree.num_players();
        if np > MAX_PLAYERS {
            return Err(metagame_games::Error::Unsupported(format!(
                "the GPU evaluator handles at most {MAX_PLAYERS} players, {} has {np}",
                tree.name()
            ))
            .into());
        }
        if u32::try_from(matchups.len()).is_err() {
            return Err(metagame_games::Error::Shape(format!(
                "{} matchups, at most {}",
                matchups.len(),
                u32::MAX
            ))
            .into());
        }
        let blocks = FlatTree::num_blocks(episodes);
        if blocks > u64::from(u32::MAX) {
            return Err(
                metagame_games::Error::Shape(format!("{episodes} episodes per matchup is too many")).into()
            );
        }
        let table = policy_cum_table(tree, policies, matchups)?;
        let flat_tree = FlatTree::new(tree);
        let q = 2 * np;
        let mut partials: Vec<Vec<f64>> = vec![Vec::with_capacity(blocks as usize * q); matchups.len()];

        let mut guard = self.tree.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.as_ref().is_none_or(|d| d.host != flat_tree) {
            *guard = None;
            let s = &self.stream;
            *guard = Some(DeviceTree {
                nodes: s.clone_htod(flat_tree.nodes()).map_err(driver_err)?,
                chance_cum: s.clone_htod(&nonempty(flat_tree.chance_cum())).map_err(driver_err)?,
                utilities: s.clone_htod(flat_tree.utilities()).map_err(driver_err)?,
                host: flat_tree,
            });
        }
        // INVARIANT: set just above.
        let dev = guard.as_ref().expect("device tree uploaded");
        if blocks > 0 && !matchups.is_empty() {
            let table_dev = self.stream.clone_htod(&nonempty(&table)).map_err(driver_err)?;
            let num_players = np as u32;
            let num_sequences = dev.host.num_sequences() as u32;
            let m_total = matchups.len() as u64;
            let mut m0 = 0u64;
            while m0 < m_total {
                let gy = (m_total - m0).min(MAX_MATCHUPS_PER_LAUNCH);
                let bx_max = (MAX_BLOCKS_PER_LAUNCH / gy).max(1);
                let mut b0 = 0u64;
                while b0 < blocks {
                    let gx = (blocks - b0).min(bx_max);
                    let mut out =
                        self.stream.alloc_zeros::<f64>((gx * gy) as usize * q).map_err(driver_err)?;
                    let cfg = LaunchConfig {
                        grid_dim: (gx as u32, gy as u32, 1),
                        block_dim: (flat::LANES_PER_BLOCK as u32, 1, 1),
                        shared_mem_bytes: (q * flat::LANES_PER_BLOCK * std::mem::size_of::<f64>()) as u32,
                    };
                    let matchup_offset = m0 as u32;
                    let mut launch = self.stream.launch_builder(&self.function);
                    launch
                        .arg(&dev.nodes)
                        .arg(&dev.chance_cum)
                        .arg(&table_dev)
                        .arg(&dev.utilities)
                        .arg(&num_players)
                        .arg(&num_sequences)
                        .arg(&seed)
                        .arg(&matchup_offset)
                        .arg(&episodes)
                        .arg(&b0)
                        .arg(&mut out);
                    // SAFETY: the arguments match `mg_evaluate`'s parameters in order and type
                    // (three `const` device arrays and the table, u32, u32, u64, u32, u64, u64,
                    // and the output). The kernel reads nodes/chance_cum/utilities through
                    // indices that `FlatTree::new` derived from a valid tree, reads the policy
                    // table rows `matchup_offset + y < matchups.len()` of `num_sequences`
                    // values, and writes `gx * gy * q` doubles, the size of `out`; the dynamic
                    // shared memory holds `q * LANES_PER_BLOCK` doubles as it expects.
                    unsafe { launch.launch(cfg) }.map_err(driver_err)?;
                    let host = self.stream.clone_dtoh(&out).map_err(driver_err)?;
                    for (y, rows) in host.chunks_exact(gx as usize * q).enumerate() {
                        partials[m0 as usize + y].extend_from_slice(rows);
                    }
                    b0 += gx;
                }
                m0 += gy;
            }
        }
        Ok(partials.iter().map(|p| fold_block_partials(p, np, episodes)).collect())
    }
}

/// Device buffers must not be empty; pad an empty array with one unused zero.
fn nonempty(values: &[f64]) -> Vec<f64> {
    if values.is_empty() { vec![0.0] } else { values.to_vec() }
}

impl MatchEvaluator for GpuEvaluator {
    fn name(&self) -> &'static str {
        "gpu"
    }

    /// # Errors
    ///
    /// Bad input as the games crate reports it; a CUDA failure as
    /// [`metagame_games::Error::Backend`] with this crate's [`Error`] as its source. With a
    /// built tree the kernel walks it, policies that are not tables tabulated first; without
    /// one, [`GpuEvaluator::roll_out`].
    fn evaluate(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame_games::Result<Vec<MatchTotals>> {
        let games_error = |e: Error| match e {
            Error::Games(e) => e,
            other => metagame_games::Error::Backend { backend: "gpu", source: Box::new(other) },
        };
        let Some(tree) = arena.game_tree() else {
            return self.roll_out(arena, policies, matchups, episodes, seed).map_err(games_error);
        };
        let tables = metagame_games::tables(tree, policies)?;
        let policies: Vec<&TabularPolicy> = tables.iter().map(|t| t.as_ref()).collect();
        self.evaluate_on_device(tree, &policies, matchups, episodes, seed).map_err(games_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_device_new_is_an_error_not_a_panic() {
        match GpuEvaluator::new() {
            Ok(gpu) => assert_eq!(gpu.name(), "gpu"),
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains('\n'), "{text}");
                if !is_driver_present() {
                    assert!(matches!(e, Error::NoDevice { .. }), "{e:?}");
                    assert!(text.starts_with("no CUDA device"), "{text}");
                }
            }
        }
    }

    #[test]
    fn kernel_source_has_the_entry_point_and_no_includes() {
        let src = kernel_source();
        assert!(src.contains(&format!("__global__ void {KERNEL_NAME}(")));
        assert!(!src.lines().any(|l| l.trim_start().starts_with("#include")));
        assert!(src.contains(&format!("#define MG_MAX_PLAYERS {MAX_PLAYERS}u")));
        assert!(src.contains(&format!("#define MG_LANES_PER_BLOCK {}u", flat::LANES_PER_BLOCK)));
        assert!(src.contains(&format!("#define MG_EPISODES_PER_LANE {}u", flat::EPISODES_PER_LANE)));
    }
}
