/*
 * shim.cpp: the kernel's per-episode and per-block logic (episode.cuh, the very source NVRTC
 * compiles) built for the host by cuda/build.rs, so parity with the CPU evaluator is tested
 * on machines without a GPU. Built with -ffp-contract=off: no fused multiply-adds, as on the
 * device (MG_MUL / --fmad=false).
 */
#include "episode.cuh"

extern "C" mg_u32 mg_shim_play_episode(const mg_u32 *nodes, const double *chance_cum,
                                       const double *policy_cum, mg_u64 seed, mg_u32 matchup,
                                       mg_u64 episode) {
    return mg_play_episode(nodes, chance_cum, policy_cum, seed, matchup, episode);
}

/*
 * One thread block of mg_evaluate, emulated lane by lane: `policy_cum` is this matchup's
 * row, `sh` scratch of 2 * num_players * MG_LANES_PER_BLOCK doubles, `out` the block's
 * 2 * num_players partials. Within one reduction step the lanes touch disjoint elements,
 * so running them one after another equals running them in parallel.
 */
extern "C" void mg_shim_block_partial(const mg_u32 *nodes, const double *chance_cum,
                                      const double *policy_cum, const double *utilities,
                                      mg_u32 num_players, mg_u64 seed, mg_u32 matchup,
                                      mg_u64 episodes, mg_u64 block, double *sh, double *out) {
    const mg_u32 quantities = 2u * num_players;
    for (mg_u32 lane = 0u; lane < MG_LANES_PER_BLOCK; ++lane) {
        double acc[2u * MG_MAX_PLAYERS];
        for (mg_u32 q = 0u; q < quantities; ++q) acc[q] = 0.0;
        mg_lane_sums(nodes, chance_cum, policy_cum, utilities, num_players, seed, matchup, episodes,
                     block, lane, acc);
        for (mg_u32 q = 0u; q < quantities; ++q) sh[q * MG_LANES_PER_BLOCK + lane] = acc[q];
    }
    for (mg_u32 stride = MG_LANES_PER_BLOCK / 2u; stride > 0u; stride >>= 1) {
        for (mg_u32 lane = 0u; lane < MG_LANES_PER_BLOCK; ++lane) {
            mg_reduce_step(sh, quantities, lane, stride);
        }
    }
    for (mg_u32 q = 0u; q < quantities; ++q) out[q] = sh[q * MG_LANES_PER_BLOCK];
}

/* Philox4x32-10 as the kernel computes it (for the known-answer test). */
extern "C" void mg_shim_philox(const mg_u32 *counter, const mg_u32 *key, mg_u32 *out) {
    mg_philox4x32_10(counter, key, out);
}
