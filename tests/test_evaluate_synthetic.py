"""regbench.evaluate.synthetic.make_series: structure, reproducibility, the noise it says, validation."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.evaluate import make_series


def test_structure_and_known_truth():
    s = make_series([1.0, 1.0, 2.0], n_runs=3, n_iterations=4, runs_at={1: 0}, failed_at={1: 3}, benchmark="b",
                    direction="higher")
    assert [v.name for v in s.versions] == ["v0", "v1", "v2"] and [v.id for v in s.versions] == [1, 2, 3]
    assert [len(r) for r in s.runs] == [3, 0, 3] and s.failed == [0, 3, 0] and s.warmup == [0, 0, 0]
    assert all(r.shape == (4,) for runs in s.runs for r in runs)
    assert (s.benchmark, s.config, s.machine, s.unit, s.direction) == ("b", "default", "m1", "s", "higher")
    exact = make_series([1.0, 2.0], run_sd=0, iteration_sd=0)
    assert all(np.all(r == level) for runs, level in zip(exact.runs, [1.0, 2.0], strict=True) for r in runs)


def test_the_same_seed_gives_the_same_series_and_another_seed_another():
    a, b, c = make_series([1.0] * 5, rng=4), make_series([1.0] * 5, rng=4), make_series([1.0] * 5, rng=5)
    assert all(np.array_equal(x, y) for ra, rb in zip(a.runs, b.runs, strict=True) for x, y in zip(ra, rb, strict=True))
    assert not np.array_equal(a.runs[0][0], c.runs[0][0])
    gen = np.random.default_rng(4)
    assert np.array_equal(make_series([1.0], rng=gen).runs[0][0], a.runs[0][0])


def test_run_and_iteration_noise_have_the_sizes_asked_for():
    s = make_series([1.0] * 400, n_runs=10, n_iterations=50, run_sd=0.01, iteration_sd=0.02, rng=1)
    x = np.array(s.runs)  # versions x runs x iterations
    within = x.std(axis=2, ddof=1) / x.mean(axis=2)
    assert np.median(within) == pytest.approx(0.02, rel=0.05)
    # a run mean carries the run effect and the mean of its iterations' noise
    assert x.mean(axis=2).std(axis=1, ddof=1).mean() == pytest.approx(np.sqrt(0.01**2 + 0.02**2 / 50), rel=0.05)


def test_a_version_effect_moves_every_run_of_the_version_together():
    s = make_series([1.0] * 300, n_runs=4, run_sd=0.0, iteration_sd=0.0, version_sd=0.05, rng=2)
    per_version = np.array([[r[0] for r in runs] for runs in s.runs])
    assert np.all(per_version == per_version[:, :1])
    assert per_version[:, 0].std(ddof=1) == pytest.approx(0.05, rel=0.15)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_runs": 0}, "`n_runs` must be a positive integer"),
    ({"n_iterations": 2.0}, "`n_iterations` must be a positive integer"),
    ({"run_sd": -0.1}, "`run_sd` must be a non-negative number"),
    ({"version_sd": -1}, "`version_sd` must be a non-negative number"),
    ({"direction": "up"}, "`direction` must be one of lower, higher"),
    ({"runs_at": {0: -1}}, "`runs_at` must map versions to non-negative integers"),
    ({"failed_at": {0: 1.5}}, "`failed_at` must map versions to non-negative integers"),
])
def test_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_series([1.0], **kwargs)
    with pytest.raises(ValueError, match="`levels` must be finite numbers"):
        make_series([1.0, float("nan")])
