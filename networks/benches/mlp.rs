//! Forward passes of the 2×128 ReLU network per second, as decisions (rows) per second:
//! Leduc's shapes (30 → 128 → 128 → 3) and connect four's (126 → 128 → 128 → 7), at batches
//! of 1, 64, 1024 and 4096.
//!
//! `logits` is the GEMMs, bias and ReLU alone; `probabilities` is the whole `Policy` call
//! (masking and softmax too).
//!
//! ```text
//! cargo bench -p metagame-networks --bench mlp
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame_games::{Decisions, PlayerId, Policy};
use metagame_networks::Mlp;
use ndarray::Array2;

const BATCHES: [usize; 4] = [1, 64, 1024, 4096];

fn forward(c: &mut Criterion) {
    for (game, sizes) in [("leduc", [30, 128, 128, 3]), ("connect_four", [126, 128, 128, 7])] {
        let mlp = Mlp::random(&sizes, 1).expect("a valid network");
        let (d, actions) = (sizes[0], sizes[3]);
        let mut group = c.benchmark_group(format!("mlp/{game}"));
        group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        for batch in BATCHES {
            // Tensors of 0/1 as games write them; two thirds of the actions legal.
            let tensors = Array2::from_shape_fn((batch, d), |(r, c)| ((r * 7 + c * 3) % 5 == 0) as u8 as f32);
            let legal =
                Array2::from_shape_fn((batch, actions), |(r, a)| a == r % actions || (r + a) % 3 != 0);
            let mut out = Array2::<f32>::zeros((batch, actions));
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_with_input(BenchmarkId::new("logits", batch), &batch, |b, _| {
                b.iter(|| mlp.logits_into(black_box(tensors.view()), out.view_mut()).expect("shapes fit"))
            });
            let decisions = Decisions {
                player: PlayerId(0),
                tensors: tensors.view(),
                legal: legal.view(),
                infosets: None,
            };
            group.bench_with_input(BenchmarkId::new("probabilities", batch), &batch, |b, _| {
                b.iter(|| mlp.probabilities(black_box(&decisions), out.view_mut()).expect("shapes fit"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, forward);
criterion_main!(benches);
