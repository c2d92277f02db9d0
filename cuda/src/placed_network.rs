//! Networks placed on a [`Backend`]: [`PlacedNetwork`] answers as a [`Policy`] with the
//! backend's forward pass and the network's own [`Output`](metagame_networks::Output) rule,
//! and [`Placer`] is the [`Device`] that places every [`Mlp`] among a match's policies
//! ([`Policy::on_device`]). On the GPU's backend they are [`GpuNetwork`] and
//! [`GpuNetworks`]; on the host's, [`HostNetwork`] and [`HostNetworks`], the CPU twins the
//! tests hold to the networks themselves.

use std::sync::{Arc, Mutex};

use metagame_games::{
    Arena, Decisions, Device, MatchEvaluator, MatchTotals, Matchup, Policy, RolloutEvaluator,
};
use metagame_networks::Mlp;
use ndarray::ArrayViewMut2;

use crate::cublas_backend::Cublas;
use crate::network_gemm::{Backend, HeldNetwork, Host};

/// A frozen network on the GPU (cuBLAS).
pub type GpuNetwork = PlacedNetwork<Cublas>;
/// Where networks are placed on the GPU.
pub type GpuNetworks = Placer<Cublas>;
/// The GPU's calls made on the host: [`GpuNetwork`]'s twin.
pub type HostNetwork = PlacedNetwork<Host>;
/// [`GpuNetworks`]' twin.
pub type HostNetworks = Placer<Host>;

/// Places [`Mlp`]s on a backend: a [`Device`].
pub struct Placer<B> {
    backend: Arc<B>,
    /// One forward pass at a time: the backend's stream and handle are shared.
    turn: Arc<Mutex<()>>,
}

impl<B: Backend> Placer<B> {
    /// Placing on `backend`.
    pub fn new(backend: B) -> Self {
        Placer { backend: Arc::new(backend), turn: Arc::new(Mutex::new(())) }
    }

    /// `mlp`'s weights held by the backend, answering as a policy there.
    ///
    /// # Errors
    ///
    /// The backend's, when a buffer cannot be made.
    pub fn place_network(&self, mlp: &Mlp) -> Result<PlacedNetwork<B>, B::Error> {
        let held = HeldNetwork::new(self.backend.as_ref(), mlp)?;
        Ok(PlacedNetwork { backend: self.backend.clone(), turn: self.turn.clone(), held })
    }
}

impl HostNetworks {
    /// Placing on the host.
    pub fn host() -> Self {
        Placer::new(Host)
    }
}

impl<B: Backend> Device for Placer<B>
where
    B::Buffer: Send + Sync,
{
    /// An [`Mlp`] placed; anything else, or a network the backend cannot hold, stays where
    /// it is.
    fn place(&self, policy: &dyn std::any::Any) -> Option<Arc<dyn Policy>> {
        let mlp = policy.downcast_ref::<Mlp>()?;
        self.place_network(mlp).ok().map(|placed| Arc::new(placed) as Arc<dyn Policy>)
    }
}

/// A network held by a backend, answering as a policy.
pub struct PlacedNetwork<B: Backend> {
    backend: Arc<B>,
    turn: Arc<Mutex<()>>,
    held: HeldNetwork<B>,
}

impl<B: Backend> PlacedNetwork<B> {
    /// The logits of `rows` row-major inputs, `rows ×` the output size.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`](metagame_games::Error::Shape) for an input of the wrong length; the
    /// backend's errors.
    pub fn logits(&self, input: &[f32], rows: usize) -> metagame_games::Result<Vec<f32>> {
        if input.len() != rows * self.held.input_size() {
            return Err(metagame_games::Error::Shape(format!(
                "{} floats for {rows} inputs of width {}",
                input.len(),
                self.held.input_size()
            )));
        }
        let _turn = self.turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.held.forward(self.backend.as_ref(), input, rows).map_err(B::games_error)
    }
}

impl<B: Backend> Policy for PlacedNetwork<B>
where
    B::Buffer: Send + Sync,
{
    /// As [`Mlp`]'s: the logits (from the backend), then the network's output rule.
    fn probabilities(
        &self,
        decisions: &Decisions<'_>,
        mut out: ArrayViewMut2<'_, f32>,
    ) -> metagame_games::Result<()> {
        let legal = decisions.legal;
        let rows = legal.nrows();
        let (inputs, actions) = (self.held.input_size(), self.held.output_size());
        if legal.ncols() != actions || out.dim() != legal.dim() || decisions.tensors.dim() != (rows, inputs) {
            return Err(metagame_games::Error::Shape(format!(
                "a batch of {:?} tensors and {:?} legal masks answered into {:?} by a network of {inputs} inputs and {actions} outputs",
                decisions.tensors.dim(),
                legal.dim(),
                out.dim(),
            )));
        }
        if rows == 0 {
            return Ok(());
        }
        let tensors = decisions.tensors.as_standard_layout();
        // INVARIANT: standard layout is contiguous.
        let logits = self.logits(tensors.as_slice().expect("standard layout"), rows)?;
        for (mut row, logits) in out.rows_mut().into_iter().zip(logits.chunks_exact(actions)) {
            row.iter_mut().zip(logits).for_each(|(o, &z)| *o = z);
        }
        self.held.output().logits_to_probabilities(legal, out)
    }

    fn kind(&self) -> &str {
        "mlp"
    }
}

/// Episodes each CPU thread plays at once when networks answer on a device: one forward
/// pass answers up to this many decisions, enough rows for an SGEMM to fill a GPU.
pub const DEVICE_LANES: usize = 4096;

/// [`RolloutEvaluator`]'s matches with every policy that `device` runs placed there
/// ([`Policy::on_device`]) and the rest as they are, [`DEVICE_LANES`] episodes at once per
/// thread. The draws are the CPU's; a placed network's probabilities are within float
/// rounding of its own, so an episode whose draw falls within that rounding of a
/// probability's edge may take another action: totals agree in distribution, and bit for
/// bit where no draw is that close.
///
/// # Errors
///
/// As [`RolloutEvaluator::evaluate`]; a placed network's backend errors as policy errors.
pub fn roll_out_on(
    device: &dyn Device,
    arena: Arena<'_>,
    policies: &[&dyn Policy],
    matchups: &[Matchup],
    episodes: u64,
    seed: u64,
) -> metagame_games::Result<Vec<MatchTotals>> {
    let placed: Vec<Option<Arc<dyn Policy>>> = policies.iter().map(|p| p.on_device(device)).collect();
    let playing: Vec<&dyn Policy> =
        placed.iter().zip(policies).map(|(placed, &own)| placed.as_deref().unwrap_or(own)).collect();
    RolloutEvaluator::new().with_lanes(DEVICE_LANES).evaluate(arena, &playing, matchups, episodes, seed)
}

/// A [`Device`] that places nothing and notes whether it was offered a network: which
/// policies would need a backend, found through the same [`Policy::on_device`] walk.
#[derive(Default)]
pub(crate) struct NetworkProbe(std::sync::atomic::AtomicBool);

impl NetworkProbe {
    /// Whether an [`Mlp`] was offered.
    pub(crate) fn saw_network(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Device for NetworkProbe {
    fn place(&self, policy: &dyn std::any::Any) -> Option<Arc<dyn Policy>> {
        if policy.is::<Mlp>() {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        None
    }
}
