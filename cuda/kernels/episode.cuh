/*
 * episode.cuh: one sampled episode on a flattened game tree, and the fixed-order lane sums
 * and pairwise block reduction of metagame's match evaluators.
 *
 * Written in the subset shared by CUDA (NVRTC) and host C++: no headers, no std types.
 * Under NVRTC/nvcc the functions are `__device__`; under a host compiler (the test shim,
 * cuda/kernels/shim.cpp, built by cuda/build.rs) they are plain `static inline` functions,
 * so the host tests run exactly this code.
 *
 * Must match games/src/philox.rs and games/src/flat.rs bit for bit:
 *   key     = [seed lo, seed hi]
 *   counter = [draw / 4, matchup, episode lo, episode hi]
 *   uniform = Philox4x32-10(counter, key)[draw % 4] * 2^-32        (exact in f64)
 *   child   = number of i < num_children - 1 with cum[i] <= uniform
 *   lane    = episodes [block * 4096 + lane * 16, +16) summed in order from 0,
 *             return and return^2 per player (products never fused into FMAs)
 *   block   = lanes added pairwise: lane[t] += lane[t + s], s = 128, 64, ..., 1
 */
#ifndef METAGAME_EPISODE_CUH
#define METAGAME_EPISODE_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define MG_FN __device__ __forceinline__
/* Round-to-nearest multiply that the compiler may not contract into an FMA. */
#define MG_MUL(a, b) __dmul_rn((a), (b))
#else
#define MG_FN static inline
#define MG_MUL(a, b) ((a) * (b))
#endif

typedef unsigned int mg_u32;
typedef unsigned long long mg_u64;

#define MG_LANES_PER_BLOCK 256u
#define MG_EPISODES_PER_LANE 16u
#define MG_EPISODES_PER_BLOCK (MG_LANES_PER_BLOCK * MG_EPISODES_PER_LANE)
#define MG_MAX_PLAYERS 8u

#define MG_KIND_DECISION 0u
#define MG_KIND_CHANCE 1u
#define MG_KIND_TERMINAL 2u

#define MG_PHILOX_M0 0xD2511F53u
#define MG_PHILOX_M1 0xCD9E8D57u
#define MG_PHILOX_W0 0x9E3779B9u
#define MG_PHILOX_W1 0xBB67AE85u

MG_FN void mg_philox_round(mg_u32 ctr[4], const mg_u32 key[2]) {
    mg_u64 p0 = (mg_u64)MG_PHILOX_M0 * (mg_u64)ctr[0];
    mg_u64 p1 = (mg_u64)MG_PHILOX_M1 * (mg_u64)ctr[2];
    mg_u32 hi0 = (mg_u32)(p0 >> 32), lo0 = (mg_u32)p0;
    mg_u32 hi1 = (mg_u32)(p1 >> 32), lo1 = (mg_u32)p1;
    mg_u32 c1 = ctr[1], c3 = ctr[3];
    ctr[0] = hi1 ^ c1 ^ key[0];
    ctr[1] = lo1;
    ctr[2] = hi0 ^ c3 ^ key[1];
    ctr[3] = lo0;
}

/* Philox4x32-10: out = philox(counter, key). */
MG_FN void mg_philox4x32_10(const mg_u32 counter[4], const mg_u32 key_in[2], mg_u32 out[4]) {
    mg_u32 key[2] = {key_in[0], key_in[1]};
    for (int i = 0; i < 4; ++i) out[i] = counter[i];
    mg_philox_round(out, key);
    for (int r = 1; r < 10; ++r) {
        key[0] += MG_PHILOX_W0;
        key[1] += MG_PHILOX_W1;
        mg_philox_round(out, key);
    }
}

/* The one integer-to-float conversion: x * 2^-32, exact. */
MG_FN double mg_uniform(mg_u32 x) { return (double)x * (1.0 / 4294967296.0); }

typedef struct {
    mg_u32 key[2];
    mg_u32 counter[4];
    mg_u32 block[4];
    mg_u32 draw;
} mg_stream;

MG_FN void mg_stream_init(mg_stream *s, mg_u64 seed, mg_u32 matchup, mg_u64 episode) {
    s->key[0] = (mg_u32)seed;
    s->key[1] = (mg_u32)(seed >> 32);
    s->counter[0] = 0u;
    s->counter[1] = matchup;
    s->counter[2] = (mg_u32)episode;
    s->counter[3] = (mg_u32)(episode >> 32);
    s->draw = 0u;
}

MG_FN double mg_next_uniform(mg_stream *s) {
    mg_u32 d = s->draw++;
    if ((d & 3u) == 0u) {
        s->counter[0] = d >> 2;
        mg_philox4x32_10(s->counter, s->key, s->block);
    }
    return mg_uniform(s->block[d & 3u]);
}

/*
 * Play one episode; returns the terminal node.
 * nodes: 4 words per node [first_child, num_children, kind, slot];
 * chance_cum: cumulative chance rows; policy_cum: this matchup's cumulative policy rows.
 */
MG_FN mg_u32 mg_play_episode(const mg_u32 *nodes, const double *chance_cum, const double *policy_cum,
                             mg_u64 seed, mg_u32 matchup, mg_u64 episode) {
    mg_stream s;
    mg_stream_init(&s, seed, matchup, episode);
    mg_u32 node = 0u;
    for (;;) {
        const mg_u32 *n = nodes + 4u * (mg_u64)node;
        mg_u32 first = n[0], count = n[1], kind = n[2], slot = n[3];
        if (kind == MG_KIND_TERMINAL) return node;
        const double *cum = (kind == MG_KIND_CHANCE ? chance_cum : policy_cum) + slot;
        double u = mg_next_uniform(&s);
        mg_u32 k = 0u;
        for (mg_u32 i = 0u; i + 1u < count; ++i) k += (cum[i] <= u) ? 1u : 0u;
        node = first + k;
    }
}

/*
 * Lane `lane` of reduction block `block`: adds the returns (acc[p]) and squared returns
 * (acc[num_players + p]) of its episodes, in episode order. `acc` starts at zero.
 */
MG_FN void mg_lane_sums(const mg_u32 *nodes, const double *chance_cum, const double *policy_cum,
                        const double *utilities, mg_u32 num_players, mg_u64 seed, mg_u32 matchup,
                        mg_u64 episodes, mg_u64 block, mg_u32 lane, double *acc) {
    mg_u64 start = block * (mg_u64)MG_EPISODES_PER_BLOCK + (mg_u64)lane * MG_EPISODES_PER_LANE;
    mg_u64 end = start + MG_EPISODES_PER_LANE;
    if (end > episodes) end = episodes;
    for (mg_u64 e = start; e < end; ++e) {
        mg_u32 node = mg_play_episode(nodes, chance_cum, policy_cum, seed, matchup, e);
        const double *u = utilities + (mg_u64)nodes[4u * (mg_u64)node + 3u] * num_players;
        for (mg_u32 p = 0u; p < num_players; ++p) {
            double x = u[p];
            acc[p] += x;
            acc[num_players + p] += MG_MUL(x, x);
        }
    }
}

/*
 * One step of the pairwise block reduction over `quantities` rows of MG_LANES_PER_BLOCK
 * lanes (row-major: sh[q * MG_LANES_PER_BLOCK + lane]).
 */
MG_FN void mg_reduce_step(double *sh, mg_u32 quantities, mg_u32 lane, mg_u32 stride) {
    if (lane < stride) {
        for (mg_u32 q = 0u; q < quantities; ++q) {
            sh[q * MG_LANES_PER_BLOCK + lane] += sh[q * MG_LANES_PER_BLOCK + lane + stride];
        }
    }
}

#endif /* METAGAME_EPISODE_CUH */
