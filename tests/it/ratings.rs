//! Issue 12 items 2 and 3: ratings (Elo, batch Elo, mElo, Nash averaging, Brier scores) and
//! matchmaking (PFSP weightings, Elo bands, keyed determinism), with statistical checks on
//! fixed Philox seeds.

use metagame::games::philox::EpisodeStream;
use metagame::populations::matchmaking::{
    EloMatchmaker, MatchRequest, Matchmaker, MatchmakingConfig, MatchmakingRng, Pfsp, PfspWeighting,
    UniformMatchmaker,
};
use metagame::populations::rating::{
    BatchElo, BatchEloConfig, Elo, EloConfig, MElo, MEloConfig, MatchResult, OnlineRating, Rating,
    brier_score, expected_score, nash_averaging,
};
use metagame::populations::{WinRates, WinRatesConfig};
use metagame::solvers::Status;
use ndarray::{Array2, array};

/// `count` matches between uniformly drawn distinct pairs of `n` members, outcomes drawn
/// from `p[i][j]` = P(i beats j); Philox stream `stream` of `seed`.
fn sample_matches(p: &Array2<f64>, count: usize, seed: u64, stream: u32) -> Vec<MatchResult> {
    let n = p.nrows();
    (0..count)
        .map(|m| {
            let mut u = EpisodeStream::new(seed, stream, m as u64);
            let first = (u.next_uniform() * n as f64) as usize;
            let second = (first + 1 + (u.next_uniform() * (n - 1) as f64) as usize) % n;
            if u.next_uniform() < p[[first, second]] {
                MatchResult::win(first, second)
            } else {
                MatchResult::loss(first, second)
            }
        })
        .collect()
}

/// Rock–paper–scissors-like members: `i` beats `i + 1 (mod 3)` with probability `edge`.
fn cyclic(edge: f64) -> Array2<f64> {
    Array2::from_shape_fn((3, 3), |(i, j)| match (j + 3 - i) % 3 {
        0 => 0.5,
        1 => edge,
        _ => 1.0 - edge,
    })
}

/// The true probabilities as a rating (Brier's floor).
struct Truth(Array2<f64>);

impl Rating for Truth {
    fn name(&self) -> &'static str {
        "truth"
    }
    fn num_members(&self) -> usize {
        self.0.nrows()
    }
    fn predict(&self, i: usize, j: usize) -> f64 {
        self.0[[i, j]]
    }
}

#[test]
fn elo_expected_score_is_symmetric_and_updates_conserve_the_sum() {
    for (a, b) in [(1000.0, 1000.0), (1500.0, 1100.0), (-30.0, 870.5)] {
        assert!((expected_score(a, b, 400.0) + expected_score(b, a, 400.0) - 1.0).abs() < 1e-12);
    }
    let truth = cyclic(0.8);
    let mut elo = Elo::new(EloConfig::default(), 3);
    for m in sample_matches(&truth, 500, 1, 0) {
        elo.update(&m);
    }
    assert!((elo.ratings().iter().sum::<f64>() - 3000.0).abs() < 1e-9);
}

/// Batch Elo recovers the strengths behind synthetic Bradley–Terry data.
#[test]
fn batch_elo_recovers_bradley_terry_strengths() {
    let truth = [0.0, 100.0, 200.0, 350.0, 500.0];
    let n = truth.len();
    let p = Array2::from_shape_fn((n, n), |(i, j)| expected_score(truth[i], truth[j], 400.0));
    let mut wins = Array2::zeros((n, n));
    for m in sample_matches(&p, 40_000, 2024, 0) {
        wins[[m.first(), m.second()]] += m.score();
        wins[[m.second(), m.first()]] += 1.0 - m.score();
    }
    let fit = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).unwrap();
    assert_eq!(fit.status(), Status::Solved);
    let errors: Vec<f64> =
        (0..n).map(|i| (fit.ratings()[i] - fit.ratings()[0]) - (truth[i] - truth[0])).collect();
    eprintln!("batch Elo: ratings {:?}, errors {errors:?}, {} iterations", fit.ratings(), fit.iterations());
    assert!(errors.iter().all(|e| e.abs() < 25.0), "{errors:?}");
    assert_eq!(fit.ratings()[0], 0.0);

    // Its predictions on held-out matches are as good as the truth's, and online Elo's
    // (fitted on the same matches) nearly so.
    let held_out = sample_matches(&p, 5_000, 2024, 1);
    let mut elo = Elo::new(EloConfig::builder().k_factor(8.0).build().unwrap(), n);
    for m in sample_matches(&p, 40_000, 2024, 0) {
        elo.update(&m);
    }
    let best = brier_score(&Truth(p.clone()), &held_out).unwrap();
    let batch = brier_score(&fit, &held_out).unwrap();
    let online = brier_score(&elo, &held_out).unwrap();
    eprintln!("Bradley–Terry held out: Brier truth {best:.4}, batch Elo {batch:.4}, online Elo {online:.4}");
    assert!(batch < best + 0.002 && online < best + 0.01);
}

/// OpenSpiel's known win matrix (Meeple Pentathlon): rating₀ = rating₂ > rating₁.
#[test]
fn batch_elo_openspiel_known_matrix() {
    let wins = array![[0., 4., 2.], [1., 0., 2.], [3., 3., 0.]];
    let fit = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).unwrap();
    let r = fit.ratings();
    assert!((r[0] - r[2]).abs() < 1e-6 && r[1] < r[0], "{r:?}");
    // A draw between 0 and 1 tips it to r₂ > r₀ (OpenSpiel's Python test).
    let draws = array![[0., 1., 0.], [1., 0., 0.], [0., 0., 0.]];
    let r = BatchElo::fit(&BatchEloConfig::default(), wins.view(), Some(draws.view()))
        .unwrap()
        .ratings()
        .to_vec();
    assert!(r[2] > r[0], "{r:?}");
}

/// On a cycle Elo predicts ½ everywhere and mElo (k = 1) learns the cycle: its Brier score on
/// held-out matches is near the truth's, Elo's near ¼.
#[test]
fn melo_predicts_the_cycle_elo_cannot() {
    let truth = cyclic(0.8);
    let train = sample_matches(&truth, 30_000, 7, 0);
    let held_out = sample_matches(&truth, 6_000, 7, 1);
    let mut elo = Elo::new(EloConfig::default(), 3);
    let mut melo = MElo::new(MEloConfig::builder().vector_rate(0.02).build().unwrap(), 3);
    let mut defaults = MElo::new(MEloConfig::default(), 3);
    let mut table = WinRates::new(WinRatesConfig::default(), 3);
    let mut wins = Array2::zeros((3, 3));
    for m in &train {
        elo.update(m);
        melo.update(m);
        defaults.update(m);
        table.record(m);
        wins[[m.first(), m.second()]] += m.score();
        wins[[m.second(), m.first()]] += 1.0 - m.score();
    }
    let batch = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).unwrap();
    let brier = |r: &dyn Rating| brier_score(r, &held_out).unwrap();
    let (b_truth, b_elo, b_batch, b_melo, b_table) =
        (brier(&Truth(truth.clone())), brier(&elo), brier(&batch), brier(&melo), brier(&table));
    eprintln!(
        "RPS (edge 0.8) held out: Brier truth {b_truth:.4}, Elo {b_elo:.4}, batch Elo {b_batch:.4}, \
         mElo {b_melo:.4}, win rates {b_table:.4}"
    );
    eprintln!("  mElo with the default rates (η_r = 16, η_c = 1): Brier {:.4}", brier(&defaults));
    for i in 0..3 {
        let j = (i + 1) % 3;
        eprintln!("  P({i} beats {j}): Elo {:.3}, mElo {:.3}", elo.predict(i, j), melo.predict(i, j));
        assert!((melo.predict(i, j) - 0.8).abs() < 0.06, "mElo {}", melo.predict(i, j));
        assert!((batch.predict(i, j) - 0.5).abs() < 0.03);
    }
    assert!(b_elo > 0.24 && b_batch > 0.24, "Elo {b_elo}, batch {b_batch}");
    assert!(b_melo < b_truth + 0.01, "mElo {b_melo} vs truth {b_truth}");
    assert!(b_melo < b_elo - 0.07);
}

/// Nash averaging of rock–paper–scissors win rates (from a table) is uniform, skills 0.
#[test]
fn nash_averaging_of_rps_is_uniform() {
    let mut table = WinRates::new(WinRatesConfig::builder().decay(1.0).build().unwrap(), 3);
    for i in 0..3 {
        table.record(&MatchResult::win(i, (i + 1) % 3));
    }
    let result = nash_averaging(table.matrix().view()).unwrap();
    assert!(result.maxent_nash.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-6), "{:?}", result.maxent_nash);
    assert!(result.skill.iter().all(|s| s.abs() < 1e-6));
    // A fourth member that loses to everyone gets no mass.
    let rps = table.matrix();
    let w = Array2::from_shape_fn((4, 4), |(i, j)| match (i, j) {
        (3, 3) => 0.5,
        (3, _) => 0.0,
        (_, 3) => 1.0,
        _ => rps[[i, j]],
    });
    let result = nash_averaging(w.view()).unwrap();
    assert!(result.maxent_nash[3] < 1e-6 && result.skill[3] < -0.4, "{result:?}");
}

#[test]
fn brier_of_perfect_predictions_is_zero() {
    let certain = Truth(array![[0.5, 1.0], [0.0, 0.5]]);
    let matches = [MatchResult::win(0, 1), MatchResult::loss(1, 0), MatchResult::win(0, 1)];
    assert_eq!(brier_score(&certain, &matches), Some(0.0));
}

/// The learner's win rates against five candidates (exact: no decay).
fn league(rates: &[f64]) -> WinRates {
    let mut table = WinRates::new(WinRatesConfig::builder().decay(1.0).build().unwrap(), rates.len() + 1);
    for (c, &x) in rates.iter().enumerate() {
        table.record(&MatchResult::new(0, c + 1, x).unwrap());
    }
    table
}

/// Empirical frequencies of `draws` choices, per candidate.
fn frequencies(matchmaker: &dyn Matchmaker, request: &MatchRequest<'_>, seed: u64, draws: usize) -> Vec<f64> {
    let mut rng = MatchmakingRng::new(seed, 0, 0);
    let mut counts = vec![0.0; request.candidates().len()];
    for chosen in matchmaker.choose(request, &mut rng, draws) {
        counts[request.candidates().iter().position(|&c| c == chosen).unwrap()] += 1.0;
    }
    counts.iter().map(|c| c / draws as f64).collect()
}

/// PFSP-squared prefers the opponents the learner loses to: over 100 000 draws each
/// candidate's frequency is its normalised weight within 0.01 (≥ 6 standard errors).
#[test]
fn pfsp_frequencies_match_the_weights() {
    let rates = [0.1, 0.3, 0.5, 0.8, 1.0];
    let table = league(&rates);
    let candidates = [1, 2, 3, 4, 5];
    let request = MatchRequest::new(0, &candidates, &table);
    for weighting in
        [PfspWeighting::Squared, PfspWeighting::Linear, PfspWeighting::LinearCapped, PfspWeighting::Variance]
    {
        let pfsp = Pfsp::new(weighting);
        let expected: Vec<f64> = {
            let w: Vec<f64> = rates.iter().map(|&x| weighting.weight(x)).collect();
            let total: f64 = w.iter().sum();
            w.iter().map(|x| x / total).collect()
        };
        let p = pfsp.probabilities(&request);
        assert!(p.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-12));
        let f = frequencies(&pfsp, &request, 11, 100_000);
        eprintln!("{}: expected {expected:.3?}, drawn {f:.3?}", pfsp.name());
        assert!(f.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 0.01), "{f:?} vs {expected:?}");
        if weighting == PfspWeighting::Squared {
            // Ordered by how often we lose; never the opponent we always beat.
            assert!(f.windows(2).all(|w| w[0] > w[1]) && f[4] == 0.0);
        }
    }
    // Variance peaks at ½.
    let v = Pfsp::new(PfspWeighting::Variance).probabilities(&request);
    assert!((0..5).all(|c| c == 2 || v[c] < v[2]), "{v:?}");
}

/// Elo matchmaking only picks opponents whose predicted win probability is in the band.
#[test]
fn elo_band_sampling_picks_only_in_band() {
    // Ratings 1000 (the learner), 600, 900, 1050, 1150, 1500: predicted 0.91, 0.64, 0.43,
    // 0.30 (just below 0.3), 0.05.
    let elo: Elo = serde_json::from_str(
        r#"{"config": {"k_factor": 32.0}, "ratings": [1000.0, 600.0, 900.0, 1050.0, 1150.0, 1500.0]}"#,
    )
    .unwrap();
    let table = WinRates::new(WinRatesConfig::default(), 6);
    let candidates = [1, 2, 3, 4, 5];
    let request = MatchRequest::new(0, &candidates, &table).with_ratings(&elo);
    let band = EloMatchmaker::default();
    let predicted = request.predicted_win_probabilities();
    let in_band: Vec<bool> = predicted.iter().map(|p| (0.3..=0.7).contains(p)).collect();
    assert!(in_band.iter().any(|&b| b) && !in_band.iter().all(|&b| b), "{predicted:?}");
    let mut rng = MatchmakingRng::new(5, 3, 0);
    let chosen = band.choose(&request, &mut rng, 5_000);
    for c in &chosen {
        let k = candidates.iter().position(|x| x == c).unwrap();
        assert!(in_band[k], "picked {c} with predicted {}", predicted[k]);
    }
    // Every in-band candidate is picked, about equally.
    let f = frequencies(&band, &request, 5, 30_000);
    let share = 1.0 / in_band.iter().filter(|&&b| b).count() as f64;
    assert!(
        f.iter().zip(&in_band).all(|(x, &b)| if b { (x - share).abs() < 0.02 } else { *x == 0.0 }),
        "{f:?}"
    );
}

/// The same seed, round and agent give the same opponents; other keys give others.
#[test]
fn matchmaking_is_deterministic_per_key() {
    let table = league(&[0.2, 0.4, 0.6, 0.8, 0.5]);
    let candidates = [1, 2, 3, 4, 5];
    let request = MatchRequest::new(0, &candidates, &table);
    let configs: [MatchmakingConfig; 3] = [
        toml::from_str("kind = \"pfsp\"\nweighting = \"variance\"").unwrap(),
        toml::from_str("kind = \"elo\"\ntarget_min = 0.2\ntarget_max = 0.8").unwrap(),
        toml::from_str("kind = \"uniform\"").unwrap(),
    ];
    assert!(toml::from_str::<MatchmakingConfig>("kind = \"pfsp\"\nweighting = \"cubic\"").is_err());
    let draw = |m: &dyn Matchmaker, seed, round, agent| {
        m.choose(&request, &mut MatchmakingRng::new(seed, round, agent), 64)
    };
    for config in configs {
        let m = config.matchmaker();
        assert_eq!(draw(&*m, 42, 7, 3), draw(&*m, 42, 7, 3), "{}", m.name());
        for (seed, round, agent) in [(43, 7, 3), (42, 8, 3), (42, 7, 4)] {
            assert_ne!(draw(&*m, 42, 7, 3), draw(&*m, seed, round, agent), "{}", m.name());
        }
    }
    assert_eq!(UniformMatchmaker.probabilities(&request), vec![0.2; 5]);
}
