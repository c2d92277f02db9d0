//! Forward passes of the 2×128 ReLU network, as decisions (rows) per second: Leduc's shapes
//! (30 → 128 → 128 → 3) and connect four's (126 → 128 → 128 → 7), at batches of 1, 64, 1024
//! and 4096.
//!
//! - `logits`: [`Mlp::logits_into`], the crate's kernel (GEMM, bias and ReLU fused).
//! - `probabilities`: the whole [`Policy`] call (logits, masking, softmax).
//! - `matrixmultiply`: the same forward pass through `ndarray`'s GEMM (`matrixmultiply`'s
//!   `sgemm`), then bias and ReLU: the baseline the kernel replaced.
//!
//! Times are the benchmark thread's CPU time (the `cpu-time` crate's `ThreadTime`), so that
//! other processes on a shared machine do not count; `MLP_BENCH_CLOCK=wall` asks for wall
//! time.
//!
//! ```text
//! cargo bench -p metagame-networks --bench mlp
//! ```
//!
//! # Figures
//!
//! Millions of decisions per second (thread CPU time, criterion's median), the range over
//! two runs on an AMD EPYC (Zen 3, AVX2+FMA, 2 vCPUs) shared with other builds (load 4–8),
//! which moves single runs by ±25%:
//!
//! | shapes | batch | `logits` | `probabilities` | `matrixmultiply` |
//! |---|---:|---:|---:|---:|
//! | Leduc 30→128→128→3 | 1 | 0.46–0.63 (1.6–2.2 µs) | 0.45–0.65 | 0.086 (11.5 µs) |
//! | | 64 | 0.99–1.13 | 1.20 | 0.90–0.92 |
//! | | 1024 | 1.04–1.26 | 1.18–1.26 | 0.81–0.94 |
//! | | 4096 | 0.90–1.21 | 0.84–1.24 | 0.61–0.63 |
//! | connect four 126→128→128→7 | 1 | 0.30–0.36 (2.8–3.3 µs) | 0.34–0.38 | 0.04–0.05 (19–24 µs) |
//! | | 64 | 0.86–0.88 | 0.78–0.84 | 0.40–0.52 |
//! | | 1024 | 0.68–0.79 | 0.74–0.75 | 0.43–0.49 |
//! | | 4096 | 0.64–0.80 | 0.59–0.81 | 0.63 |
//!
//! faer's `gemm` 0.19 (single-threaded), measured outside this bench since it is called
//! through `unsafe` (min of 7 interleaved rounds, thread CPU time, Leduc's shapes): 1.7–1.8
//! µs for one row, 1.46–1.63 / 1.67–1.72 / 1.32–1.59 M decisions/s at 64 / 1024 / 4096,
//! against this kernel's 1.4 µs and 1.34–1.39 / 1.33–1.38 / 1.23–1.36 M/s in the same
//! rounds; but a row alone (its GEMV path) got other bits than the same row in a batch of 3
//! or more, which the rollouts cannot have.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame_games::{Decisions, PlayerId, Policy};
use metagame_networks::Mlp;
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2};

const BATCHES: [usize; 4] = [1, 64, 1024, 4096];

/// The thread's time on a CPU (`CLOCK_THREAD_CPUTIME_ID`), or wall time where the
/// platform has no such clock or `MLP_BENCH_CLOCK=wall` asks for it.
struct ThreadCpuTime {
    cpu: bool,
    wall: WallTime,
}

impl ThreadCpuTime {
    fn new() -> Self {
        let wall_asked = std::env::var("MLP_BENCH_CLOCK").is_ok_and(|v| v == "wall");
        Self { cpu: !wall_asked && ThreadTime::try_now().is_ok(), wall: WallTime }
    }
}

/// Where a measurement started, on the clock chosen.
enum Start {
    Cpu(ThreadTime),
    Wall(Instant),
}

impl Measurement for ThreadCpuTime {
    type Intermediate = Start;
    type Value = Duration;
    fn start(&self) -> Start {
        if self.cpu { Start::Cpu(ThreadTime::now()) } else { Start::Wall(Instant::now()) }
    }
    fn end(&self, start: Start) -> Duration {
        match start {
            Start::Cpu(t) => t.elapsed(),
            Start::Wall(t) => t.elapsed(),
        }
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, as wall time counts them.
        self.wall.formatter()
    }
}

/// The forward pass through `ndarray`'s GEMM, for comparison: each layer's output in
/// `outputs[k]` (allocated once by the caller, as the crate keeps its scratch).
fn matrixmultiply_logits(mlp: &Mlp, input: ArrayView2<'_, f32>, outputs: &mut [Array2<f32>]) {
    for (k, layer) in mlp.layers().iter().enumerate() {
        let (done, rest) = outputs.split_at_mut(k);
        let y = &mut rest[0];
        match done.last() {
            None => general_mat_mul(1.0, &input, &layer.weight.t(), 0.0, y),
            Some(x) => general_mat_mul(1.0, x, &layer.weight.t(), 0.0, y),
        }
        let relu = k + 1 < mlp.layers().len();
        for mut row in y.rows_mut() {
            for (v, &b) in row.iter_mut().zip(&layer.bias) {
                let z = *v + b;
                *v = if relu && z < 0.0 { 0.0 } else { z };
            }
        }
    }
}

fn forward(c: &mut Criterion<ThreadCpuTime>) {
    for (game, sizes) in [("leduc", [30, 128, 128, 3]), ("connect_four", [126, 128, 128, 7])] {
        let mlp = Mlp::random(&sizes, 1).expect("a valid network");
        let (d, actions) = (sizes[0], sizes[3]);
        let mut group = c.benchmark_group(format!("mlp/{game}"));
        group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
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
            let mut outputs: Vec<Array2<f32>> =
                sizes[1..].iter().map(|&width| Array2::zeros((batch, width))).collect();
            group.bench_with_input(BenchmarkId::new("matrixmultiply", batch), &batch, |b, _| {
                b.iter(|| matrixmultiply_logits(&mlp, black_box(tensors.view()), &mut outputs))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime::new());
    targets = forward
}
criterion_main!(benches);
