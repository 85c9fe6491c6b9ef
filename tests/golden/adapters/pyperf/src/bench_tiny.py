"""Tiny pyperf benchmarks for regbench's golden files (see ../make_golden.sh)."""

import pyperf


def sum_range(loops):
    t0 = pyperf.perf_counter()
    for _ in range(loops):
        sum(range(200))
    return pyperf.perf_counter() - t0


runner = pyperf.Runner()
runner.metadata["description"] = "regbench golden file"
runner.bench_time_func("sum_range", sum_range)
runner.bench_func("sorted_1000", sorted, list(range(1000, 0, -1)), metadata={"n": 1000})
