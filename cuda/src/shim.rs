//! The kernel's episode logic run on the host: `kernels/episode.cuh`, the source NVRTC
//! compiles for the GPU, built as C++ by `build.rs` (the `cc` crate) with a small
//! `extern "C"` shim (`kernels/shim.cpp`). Tests compare it with the CPU evaluator outcome
//! for outcome, so the kernel's sampling is checked on machines without a GPU.

use metagame_games::flat::{FlatTree, LANES_PER_BLOCK};

use crate::MAX_PLAYERS;

unsafe extern "C" {
    fn mg_shim_play_episode(
        nodes: *const u32,
        chance_cum: *const f64,
        policy_cum: *const f64,
        seed: u64,
        matchup: u32,
        episode: u64,
    ) -> u32;

    #[allow(clippy::too_many_arguments)]
    fn mg_shim_block_partial(
        nodes: *const u32,
        chance_cum: *const f64,
        policy_cum: *const f64,
        utilities: *const f64,
        num_players: u32,
        seed: u64,
        matchup: u32,
        episodes: u64,
        block: u64,
        sh: *mut f64,
        out: *mut f64,
    );

    fn mg_shim_philox(counter: *const u32, key: *const u32, out: *mut u32);
}

/// Philox4x32-10 as the kernel source computes it.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut out = [0u32; 4];
    // SAFETY: the C function reads 4 and 2 words and writes 4, the sizes of these arrays.
    unsafe { mg_shim_philox(counter.as_ptr(), key.as_ptr(), out.as_mut_ptr()) };
    out
}

/// A chance-cumulative pointer that is valid to pass even when the game has no chance node.
fn chance_ptr(flat: &FlatTree) -> *const f64 {
    const EMPTY: [f64; 1] = [0.0];
    if flat.chance_cum().is_empty() { EMPTY.as_ptr() } else { flat.chance_cum().as_ptr() }
}

/// Play one episode with the kernel's code; returns the terminal node (compare with
/// [`FlatTree::play_episode`]).
///
/// # Panics
///
/// If `policy_cum` is shorter than [`FlatTree::num_sequences`] (a caller bug).
#[track_caller]
pub fn play_episode(flat: &FlatTree, policy_cum: &[f64], seed: u64, matchup: u32, episode: u64) -> u32 {
    assert!(policy_cum.len() >= flat.num_sequences(), "policy table shorter than the tree's sequences");
    // SAFETY: `flat` was built by `FlatTree::new` from a valid tree, so every child index,
    // chance offset and terminal index it holds is in bounds of its own arrays; decision
    // slots are below `num_sequences`, which `policy_cum` covers (checked above). The C code
    // only reads through these pointers.
    unsafe {
        mg_shim_play_episode(
            flat.nodes().as_ptr(),
            chance_ptr(flat),
            policy_cum.as_ptr(),
            seed,
            matchup,
            episode,
        )
    }
}

/// One thread block of the kernel emulated on the host: the block's partial sums
/// `[Σ return per player, Σ return² per player]` (compare with [`FlatTree::block_partial`]).
///
/// # Panics
///
/// If `policy_cum` is shorter than [`FlatTree::num_sequences`] or the game has more than
/// [`MAX_PLAYERS`] players (caller bugs).
#[track_caller]
pub fn block_partial(
    flat: &FlatTree,
    policy_cum: &[f64],
    seed: u64,
    matchup: u32,
    block: u64,
    episodes: u64,
) -> Vec<f64> {
    assert!(policy_cum.len() >= flat.num_sequences(), "policy table shorter than the tree's sequences");
    let np = flat.num_players();
    assert!(np <= MAX_PLAYERS, "the kernel handles at most {MAX_PLAYERS} players");
    let mut sh = vec![0.0; 2 * np * LANES_PER_BLOCK];
    let mut out = vec![0.0; 2 * np];
    // SAFETY: as in `play_episode` for the tree and table; `sh` holds
    // `2 * num_players * LANES_PER_BLOCK` doubles and `out` `2 * num_players`, the sizes the
    // C code writes; `num_players <= MG_MAX_PLAYERS` bounds its on-stack accumulators.
    unsafe {
        mg_shim_block_partial(
            flat.nodes().as_ptr(),
            chance_ptr(flat),
            policy_cum.as_ptr(),
            flat.utilities().as_ptr(),
            np as u32,
            seed,
            matchup,
            episodes,
            block,
            sh.as_mut_ptr(),
            out.as_mut_ptr(),
        )
    };
    out
}
