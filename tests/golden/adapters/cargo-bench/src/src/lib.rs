//! Something to benchmark: see benches/sum.rs.

/// A sum the optimiser cannot turn into a closed form (so the time grows with `n`).
pub fn sum(n: u64) -> u64 {
    (0..n).map(|i| std::hint::black_box(i) * 31 + 7).sum()
}
