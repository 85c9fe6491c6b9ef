//! Two tiny libtest benchmarks (nightly-only `test` crate).
#![feature(test)]
extern crate test;

use regbench_golden_cargo_bench::sum;
use test::{black_box, Bencher};

#[bench]
fn sum_10(b: &mut Bencher) {
    b.iter(|| sum(black_box(10)));
}

#[bench]
fn sum_1000(b: &mut Bencher) {
    b.iter(|| sum(black_box(1000)));
}

mod nested {
    use super::*;

    #[bench]
    fn sum_100_000(b: &mut Bencher) {
        b.iter(|| sum(black_box(100_000)));
    }
}
