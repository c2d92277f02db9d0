/*
 * evaluate.cu: the game-agnostic match kernel. Compiled by NVRTC at run time with
 * episode.cuh prepended (metagame_cuda::kernel_source), so it has no #include.
 *
 * Grid: x = reduction blocks [block_offset, block_offset + gridDim.x) of each matchup,
 *       y = matchups [matchup_offset, matchup_offset + gridDim.y).
 * Block: MG_LANES_PER_BLOCK threads, one lane each; dynamic shared memory
 *        2 * num_players * MG_LANES_PER_BLOCK doubles.
 * Output: partials[(blockIdx.y * gridDim.x + blockIdx.x) * 2 * num_players + q], the block's
 *         sums (q < num_players) and sums of squares; the host adds them in block order.
 */
extern "C" __global__ void mg_evaluate(const mg_u32 *nodes, const double *chance_cum,
                                       const double *policy_cum, const double *utilities,
                                       mg_u32 num_players, mg_u32 num_sequences, mg_u64 seed,
                                       mg_u32 matchup_offset, mg_u64 episodes, mg_u64 block_offset,
                                       double *partials) {
    extern __shared__ double sh[];
    const mg_u32 lane = threadIdx.x;
    const mg_u32 matchup = matchup_offset + blockIdx.y;
    const mg_u64 block = block_offset + blockIdx.x;
    const mg_u32 quantities = 2u * num_players;

    double acc[2u * MG_MAX_PLAYERS];
    for (mg_u32 q = 0u; q < quantities; ++q) acc[q] = 0.0;
    mg_lane_sums(nodes, chance_cum, policy_cum + (mg_u64)matchup * num_sequences, utilities,
                 num_players, seed, matchup, episodes, block, lane, acc);
    for (mg_u32 q = 0u; q < quantities; ++q) sh[q * MG_LANES_PER_BLOCK + lane] = acc[q];
    __syncthreads();
    for (mg_u32 stride = MG_LANES_PER_BLOCK / 2u; stride > 0u; stride >>= 1) {
        mg_reduce_step(sh, quantities, lane, stride);
        __syncthreads();
    }
    if (lane < quantities) {
        mg_u64 out = ((mg_u64)blockIdx.y * gridDim.x + blockIdx.x) * quantities + lane;
        partials[out] = sh[lane * MG_LANES_PER_BLOCK];
    }
}
