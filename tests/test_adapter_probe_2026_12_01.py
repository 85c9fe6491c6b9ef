"""What a probe of the harness adapters found (2026-12-01): hyperfine results of one command name
and different parameters were merged into runs of one benchmark, and Google Benchmark's
complexity rows (``->Complexity()``: ``NAME_BigO``, ``NAME_RMS``) made a whole output refused."""

from __future__ import annotations

import json

import numpy as np

from regbench.adapters.base import get_adapter


def hyperfine_file(tmp_path, results):
    path = tmp_path / "hf.json"
    path.write_text(json.dumps({"results": results}))
    return path


def result(command, times, parameters=None):
    out = {"command": command, "mean": float(np.mean(times)), "times": times, "exit_codes": [0] * len(times)}
    if parameters is not None:
        out["parameters"] = parameters
    return out


def test_hyperfine_results_of_one_name_and_different_parameters_are_told_apart(tmp_path):
    runs = get_adapter("hyperfine").parse(hyperfine_file(tmp_path, [
        result("sleeper", [0.001, 0.0011, 0.0012], {"n": "1"}),
        result("sleeper", [0.002, 0.0021, 0.0022], {"n": "2"}),
        result("sleeper", [0.003, 0.0031, 0.0032], {"n": "3"}),
    ]))
    assert [(r.benchmark, r.run, float(r.samples[0])) for r in runs] == [
        ("sleeper (n=1)", 0, 0.001), ("sleeper (n=2)", 0, 0.002), ("sleeper (n=3)", 0, 0.003)]


def test_hyperfine_names_without_a_clash_and_repeated_commands_are_as_before(tmp_path):
    runs = get_adapter("hyperfine").parse(hyperfine_file(tmp_path, [
        result("sleep 0.001", [0.001, 0.0011], {"n": "1"}),  # -P without -n: the names differ already
        result("sleep 0.002", [0.002, 0.0021], {"n": "2"}),
        result("true", [0.0001]), result("true", [0.0002]),  # the same command twice: two runs of one
    ]))
    assert [(r.benchmark, r.run) for r in runs] == [("sleep 0.001", 0), ("sleep 0.002", 0), ("true", 0), ("true", 1)]


def test_google_benchmark_complexity_rows_are_left_aside_and_the_instances_kept(tmp_path):
    # `BENCHMARK(BM_N)->RangeMultiplier(2)->Range(8, 16)->Complexity()` with the library's own
    # entries: the fits are named after the family, whose instances are BM_N/8 and BM_N/16.
    def instance(n, t):
        return {"name": f"BM_N/{n}", "family_index": 0, "run_name": f"BM_N/{n}", "run_type": "iteration",
                "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1000,
                "real_time": t, "cpu_time": t, "time_unit": "ns"}

    fits = [{"name": "BM_N_BigO", "family_index": 0, "run_name": "BM_N", "run_type": "aggregate", "repetitions": 1,
             "threads": 1, "aggregate_name": "BigO", "aggregate_unit": "time", "cpu_coefficient": 6.9,
             "real_coefficient": 18.1, "big_o": "lgN", "time_unit": "ns"},
            {"name": "BM_N_RMS", "family_index": 0, "run_name": "BM_N", "run_type": "aggregate", "repetitions": 1,
             "threads": 1, "aggregate_name": "RMS", "aggregate_unit": "percentage", "rms": 0.12}]
    path = tmp_path / "gb.json"
    path.write_text(json.dumps({"context": {"date": "2026-12-01"}, "benchmarks": [instance(8, 17.0), instance(16, 22.3),
                                                                                   *fits]}))
    runs = get_adapter("google-benchmark").parse(path)
    assert sorted((r.benchmark, float(r.samples[0])) for r in runs if "[" not in r.benchmark) == [
        ("BM_N/16", 22.3), ("BM_N/8", 17.0)]
