//! Philox4x32-10, the counter-based random number generator shared by the CPU and GPU
//! match evaluators, and the one integer-to-float conversion both sides use.
//!
//! A counter-based generator is a pure function `(counter, key) -> 128 random bits`, so any
//! draw of any episode can be computed without touching any other: sampling does not depend
//! on scheduling, thread count, or whether the CPU or the GPU plays the episode.
//!
//! # The keying scheme (identical in `cuda/kernels/episode.cuh`)
//!
//! Episode `e` (`u64`) of matchup `m` (`u32`, the index into the matchup list passed to
//! [`MatchEvaluator::evaluate`](crate::MatchEvaluator::evaluate)) under seed `s` (`u64`)
//! draws its `d`-th uniform (`d = 0, 1, 2, …`, one per chance or decision node visited, in
//! the order visited, single-child nodes included) from Philox4x32-10 block
//!
//! ```text
//! key     = [s as u32, (s >> 32) as u32]
//! counter = [d / 4,    m,  e as u32,  (e >> 32) as u32]
//! out     = philox4x32_10(counter, key)                   // 4 × u32
//! ```
//!
//! taking word `out[d % 4]`, turned into an `f64` by [`uniform_f64`]: the word times 2⁻³²,
//! a value in `[0, 1)` that every IEEE-754 machine computes exactly (the integer converts
//! exactly and the scale is a power of two), so CPU and GPU draw the same `f64`. (32 bits
//! per draw: an action of probability `p` is drawn with probability within 2⁻³² of `p`,
//! as with cuRAND's `curand_uniform`; four draws per Philox call keep the walk cheap.)
//!
//! Sampling compares that uniform with precomputed cumulative probabilities (see
//! [`crate::flat`]), so no floating-point arithmetic on the sampling path can differ
//! between the two sides.
//!
//! # References
//!
//! J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as
//! 1, 2, 3", SC 2011, <https://doi.org/10.1145/2063384.2063405>; known-answer vectors from
//! Random123's `tests/kat_vectors`.

/// First Philox multiplier (applied to counter word 0).
pub const PHILOX_M0: u32 = 0xD251_1F53;
/// Second Philox multiplier (applied to counter word 2).
pub const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Weyl increment of key word 0 between rounds (golden ratio).
pub const PHILOX_W0: u32 = 0x9E37_79B9;
/// Weyl increment of key word 1 between rounds (√3 − 1).
pub const PHILOX_W1: u32 = 0xBB67_AE85;

/// 2⁻³², the scale of [`uniform_f64`].
const TWO_POW_MINUS_32: f64 = 1.0 / 4_294_967_296.0;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

#[inline(always)]
fn round(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
    let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// Philox4x32 with 10 rounds: 128 random bits for a counter and a key.
///
/// # Examples
///
/// ```
/// use metagame_games::philox::philox4x32_10;
/// // Random123 known-answer vector: counter 0, key 0.
/// assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut ctr = counter;
    let mut key = key;
    ctr = round(ctr, key);
    for _ in 1..10 {
        key = [key[0].wrapping_add(PHILOX_W0), key[1].wrapping_add(PHILOX_W1)];
        ctr = round(ctr, key);
    }
    ctr
}

/// The conversion both evaluators use: a 32-bit word times 2⁻³².
///
/// The result is in `[0, 1)`, a multiple of 2⁻³², and computed exactly on any IEEE-754
/// machine (CUDA included).
#[inline(always)]
pub fn uniform_f64(x: u32) -> f64 {
    f64::from(x) * TWO_POW_MINUS_32
}

/// The Philox key of a seed: `[low word, high word]`.
#[inline(always)]
pub fn seed_key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// A sub-seed for one purpose of a run and its indices: the keys by which a loop gives each of
/// its streams (an iteration's payoff entries, a response request, a learner) a seed of its
/// own, computed from the run's seed with the counter-based generator instead of mixing bits
/// by hand.
///
/// `purpose` names the stream (each caller's named constant, four ASCII letters read as a
/// big-endian word: `u32::from_be_bytes(*b"resp")`); `indices` say which one of it (the
/// iteration, the request, the agent and seat, …), each keying the next Philox call:
///
/// ```text
/// block_0     = philox4x32_10([purpose, 0,     0,             0                    ], seed_key(seed))
/// block_(k+1) = philox4x32_10([purpose, k + 1, i_k as u32,    (i_k >> 32) as u32   ], [block_k[0], block_k[1]])
/// sub-seed    = block_n[0] | block_n[1] << 32          (n = indices.len())
/// ```
///
/// Different purposes or indices give unrelated sub-seeds, and a sub-seed keys its own
/// streams ([`EpisodeStream`]), never the run seed's. A purpose of 2³⁰ or more (any four
/// letters are) keeps `block_0` off every episode stream of the run seed, whose counter word
/// 0 is a draw index / 4 < 2³⁰.
///
/// # Examples
///
/// ```
/// use metagame_games::philox::{derive_seed, philox4x32_10, seed_key};
/// const RESPONSES: u32 = u32::from_be_bytes(*b"resp");
/// let block = philox4x32_10([RESPONSES, 0, 0, 0], seed_key(7));
/// assert_eq!(derive_seed(7, RESPONSES, &[]), u64::from(block[0]) | u64::from(block[1]) << 32);
/// assert_ne!(derive_seed(7, RESPONSES, &[3, 0]), derive_seed(7, RESPONSES, &[3, 1]));
/// ```
pub fn derive_seed(seed: u64, purpose: u32, indices: &[u64]) -> u64 {
    let mut block = philox4x32_10([purpose, 0, 0, 0], seed_key(seed));
    for (k, &i) in indices.iter().enumerate() {
        block = philox4x32_10([purpose, k as u32 + 1, i as u32, (i >> 32) as u32], [block[0], block[1]]);
    }
    u64::from(block[0]) | (u64::from(block[1]) << 32)
}

/// The uniforms of one episode, in draw order (see the module docs for the keying).
///
/// # Examples
///
/// ```
/// use metagame_games::philox::{EpisodeStream, philox4x32_10, seed_key, uniform_f64};
/// let mut s = EpisodeStream::new(7, 3, 11);
/// let block = philox4x32_10([0, 3, 11, 0], seed_key(7));
/// assert_eq!(s.next_uniform(), uniform_f64(block[0]));
/// assert_eq!(s.next_uniform(), uniform_f64(block[1]));
/// ```
#[derive(Clone, Debug)]
pub struct EpisodeStream {
    key: [u32; 2],
    counter: [u32; 4],
    block: [u32; 4],
    /// Index of the next draw.
    draw: u32,
}

impl EpisodeStream {
    /// The stream of episode `episode` of matchup `matchup` under `seed`.
    #[inline]
    pub fn new(seed: u64, matchup: u32, episode: u64) -> Self {
        Self {
            key: seed_key(seed),
            counter: [0, matchup, episode as u32, (episode >> 32) as u32],
            block: [0; 4],
            draw: 0,
        }
    }

    /// The next uniform in `[0, 1)`.
    #[inline(always)]
    pub fn next_uniform(&mut self) -> f64 {
        let d = self.draw;
        self.draw = d.wrapping_add(1);
        if d & 3 == 0 {
            self.counter[0] = d >> 2;
            self.block = philox4x32_10(self.counter, self.key);
        }
        uniform_f64(self.block[(d & 3) as usize])
    }

    /// Number of uniforms drawn so far.
    pub fn draws(&self) -> u32 {
        self.draw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Random123 `tests/kat_vectors` (https://github.com/DEShawResearch/random123), the three
    // "philox4x32 10" lines: counter (4 words), key (2 words), expected output (4 words).
    const KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        ([0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
        (
            [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
            [0xffffffff, 0xffffffff],
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
        ),
        (
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
        ),
    ];

    #[test]
    fn known_answer_vectors() {
        for (ctr, key, want) in KAT {
            assert_eq!(philox4x32_10(ctr, key), want, "counter {ctr:08x?} key {key:08x?}");
        }
    }

    #[test]
    fn uniform_bounds_and_exactness() {
        assert_eq!(uniform_f64(0), 0.0);
        let top = uniform_f64(u32::MAX);
        assert!(top < 1.0);
        assert_eq!(top, 1.0 - TWO_POW_MINUS_32);
        assert_eq!(uniform_f64(0x8000_0000), 0.5);
        assert_eq!(uniform_f64(1), TWO_POW_MINUS_32);
    }

    #[test]
    fn stream_follows_the_documented_keying() {
        let seed = 0x0123_4567_89ab_cdef_u64;
        let (m, e) = (5u32, 0x1_0000_0002_u64);
        let mut s = EpisodeStream::new(seed, m, e);
        for d in 0..9u32 {
            let out = philox4x32_10([d / 4, m, e as u32, (e >> 32) as u32], [0x89ab_cdef, 0x0123_4567]);
            assert_eq!(s.next_uniform(), uniform_f64(out[d as usize % 4]));
        }
        assert_eq!(s.draws(), 9);
    }

    #[test]
    fn derived_seeds_follow_the_documented_keying() {
        let (seed, purpose) = (0x0123_4567_89ab_cdef_u64, u32::from_be_bytes(*b"test"));
        let words = |b: [u32; 4]| u64::from(b[0]) | (u64::from(b[1]) << 32);
        let b0 = philox4x32_10([purpose, 0, 0, 0], [0x89ab_cdef, 0x0123_4567]);
        assert_eq!(derive_seed(seed, purpose, &[]), words(b0));
        let i = 0x5_0000_0009_u64;
        let b1 = philox4x32_10([purpose, 1, 9, 5], [b0[0], b0[1]]);
        assert_eq!(derive_seed(seed, purpose, &[i]), words(b1));
        let b2 = philox4x32_10([purpose, 2, 4, 0], [b1[0], b1[1]]);
        assert_eq!(derive_seed(seed, purpose, &[i, 4]), words(b2));
    }

    #[test]
    fn derived_seeds_differ_by_purpose_index_and_position() {
        let mut seen = std::collections::HashSet::new();
        for purpose in [u32::from_be_bytes(*b"aaaa"), u32::from_be_bytes(*b"aaab")] {
            for seed in 0..4 {
                assert!(seen.insert(derive_seed(seed, purpose, &[])));
                for a in 0..8 {
                    assert!(seen.insert(derive_seed(seed, purpose, &[a])));
                    for b in 0..8 {
                        assert!(seen.insert(derive_seed(seed, purpose, &[a, b])));
                    }
                }
            }
        }
    }

    #[test]
    fn uniforms_look_uniform() {
        let mut sum = 0.0;
        let n = 100_000;
        for e in 0..n / 2 {
            let mut s = EpisodeStream::new(1, 0, e);
            sum += s.next_uniform() + s.next_uniform();
        }
        let mean = sum / n as f64;
        // Standard error of the mean of U(0,1) is 1/sqrt(12 n) ≈ 9e-4.
        assert!((mean - 0.5).abs() < 5e-3, "mean {mean}");
    }
}
