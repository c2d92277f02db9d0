//! The kernel's logic (kernels/episode.cuh compiled for the host) against the CPU evaluator,
//! and the kernel source against NVRTC when it is installed. No GPU needed.

#![allow(missing_docs)]

mod common;

use common::random_policy;
use metagame_cuda::{Error, compile_bias_relu, compile_kernel, is_nvrtc_present, shim};
use metagame_games::flat::{self, FlatTree, fold_block_partials, policy_cum_table};
use metagame_games::philox::philox4x32_10;
use metagame_games::{GameTree, MatchEvaluator, Matchup, SampledEvaluator, TabularPolicy, registry};

fn tree(game: &str) -> GameTree {
    GameTree::build(&registry::load(game).unwrap()).unwrap()
}

/// A policy that puts zero weight on some legal actions (exercises the "2.0" tails).
fn sparse_policy(tree: &GameTree) -> TabularPolicy {
    TabularPolicy::from_fn(tree, |id| {
        let n = tree.legal_actions(id).len();
        let mut row = vec![0.0; n];
        if n == 1 {
            row[0] = 1.0;
        } else {
            row[n - 1] = 0.75;
            row[n / 2 - 1] += 0.25;
        }
        row
    })
    .unwrap()
}

const GAMES: [&str; 5] =
    ["kuhn_poker", "leduc_poker", "matrix_rps", "matrix_shapleys_game", "kuhn_poker(players=3)"];

#[test]
fn philox_in_the_kernel_source_matches_the_known_answers() {
    for (ctr, key) in [
        ([0, 0, 0, 0], [0, 0]),
        ([u32::MAX; 4], [u32::MAX; 2]),
        ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
        ([5, 1, 2, 3], [0xdead_beef, 7]),
    ] {
        assert_eq!(shim::philox4x32_10(ctr, key), philox4x32_10(ctr, key));
    }
    assert_eq!(shim::philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
}

#[test]
fn kernel_logic_draws_the_cpu_outcomes_episode_for_episode() {
    for game in GAMES {
        let tree = tree(game);
        let flat = FlatTree::new(&tree);
        let pols = [TabularPolicy::uniform(&tree), random_policy(&tree, 1), sparse_policy(&tree)];
        let refs: Vec<&TabularPolicy> = pols.iter().collect();
        let matchups: Vec<Matchup> = (0..3)
            .map(|i| Matchup { seats: (0..tree.num_players()).map(|p| (i + p) % 3).collect() })
            .collect();
        let table = policy_cum_table(&tree, &refs, &matchups).unwrap();
        let s = flat.num_sequences();
        let mut distinct = std::collections::HashSet::new();
        for (m, row) in table.chunks_exact(s).enumerate() {
            for e in 0..4000u64 {
                let episode = e.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20; // spread over the 64-bit range
                let cpu = flat.play_episode(row, 99, m as u32, episode);
                let gpu_logic = shim::play_episode(&flat, row, 99, m as u32, episode);
                assert_eq!(cpu, gpu_logic, "{game} matchup {m} episode {episode}");
                distinct.insert(cpu);
            }
        }
        assert!(distinct.len() > 3, "{game}: only {} distinct terminals", distinct.len());
    }
}

#[test]
fn kernel_blocks_sum_exactly_like_the_cpu_evaluator() {
    for game in GAMES {
        let tree = tree(game);
        let flat = FlatTree::new(&tree);
        let pols = [random_policy(&tree, 2), random_policy(&tree, 3)];
        let refs: Vec<&TabularPolicy> = pols.iter().collect();
        let matchups = vec![
            Matchup { seats: vec![0; tree.num_players()] },
            Matchup { seats: (0..tree.num_players()).map(|p| p % 2).collect() },
        ];
        // Two full blocks and a ragged third.
        let episodes = 2 * flat::EPISODES_PER_BLOCK + 1001;
        let cpu = SampledEvaluator::new().evaluate_tables(&tree, &refs, &matchups, episodes, 5).unwrap();
        let table = policy_cum_table(&tree, &refs, &matchups).unwrap();
        let s = flat.num_sequences();
        for (m, row) in table.chunks_exact(s).enumerate() {
            let mut partials = Vec::new();
            for b in 0..FlatTree::num_blocks(episodes) {
                let shim_block = shim::block_partial(&flat, row, 5, m as u32, b, episodes);
                let mut cpu_block = vec![0.0; 2 * tree.num_players()];
                flat.block_partial(row, 5, m as u32, b, episodes, &mut cpu_block);
                assert_eq!(shim_block, cpu_block, "{game} matchup {m} block {b}");
                partials.extend(shim_block);
            }
            let totals = fold_block_partials(&partials, tree.num_players(), episodes);
            assert_eq!(totals, cpu[m], "{game} matchup {m}");
        }
    }
}

#[test]
fn nvrtc_compiles_the_kernel_when_installed() {
    if !is_nvrtc_present() {
        // scripts/nvrtc-check.sh sets this under CI=true, after installing NVRTC: there the
        // check must run. (`cargo test --workspace` runs without NVRTC's folder on
        // LD_LIBRARY_PATH, so CI=true alone does not require it.)
        if std::env::var("METAGAME_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!(
                "METAGAME_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (scripts/nvrtc-check.sh installs it)"
            );
        }
        eprintln!(
            "note: libnvrtc not found, kernel compilation not checked \
             (pip install nvidia-cuda-nvrtc-cu12 and add its lib folder to LD_LIBRARY_PATH)"
        );
        assert!(matches!(compile_kernel(None), Err(Error::NoNvrtc { .. })));
        assert!(matches!(compile_bias_relu(None), Err(Error::NoNvrtc { .. })));
        return;
    }
    for arch in [None, Some("compute_80"), Some("compute_90")] {
        let ptx = compile_kernel(arch).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
        let text = ptx.to_src();
        assert!(text.contains(".entry mg_evaluate"), "{arch:?}: no entry point in the PTX");
        // --fmad=false and __dmul_rn: no fused multiply-add on doubles.
        assert!(!text.contains("fma.rn.f64"), "{arch:?}: the PTX fuses a multiply-add");
        assert!(text.contains("mul.rn.f64"), "{arch:?}: the squared returns are missing");
        let ptx = compile_bias_relu(arch).unwrap_or_else(|e| panic!("bias kernel, {arch:?}: {e}"));
        assert!(ptx.to_src().contains(".entry mg_bias_relu"), "{arch:?}: no bias kernel entry point");
    }
}
