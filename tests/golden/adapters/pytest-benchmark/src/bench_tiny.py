"""Tiny benchmarks for regbench's pytest-benchmark golden files (see ../make_golden.sh)."""

import pytest


def test_sum_range(benchmark):
    benchmark.pedantic(sum, args=(range(200),), rounds=8, iterations=20, warmup_rounds=2)


@pytest.mark.parametrize("n", [10, 1000])
def test_sorted(benchmark, n):
    data = list(range(n, 0, -1))
    benchmark.pedantic(sorted, args=(data,), rounds=6, iterations=10)


def test_join(benchmark):
    benchmark(",".join, map(str, range(50)))
