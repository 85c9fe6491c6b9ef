//! A tiny Criterion benchmark whose only job is to make Criterion write its JSON files.
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

fn sum(n: u64) -> u64 {
    (0..n).map(|i| i * 31 + 7).sum()
}

fn bench(c: &mut Criterion) {
    c.bench_function("sum_plain", |b| b.iter(|| sum(black_box(100))));
    let mut group = c.benchmark_group("sum_group");
    for n in [10u64, 1000] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| b.iter(|| sum(black_box(n))));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(200))
        .without_plots();
    targets = bench
}
criterion_main!(benches);
