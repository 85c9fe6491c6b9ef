"""compare --run calls a change a "regression" (exit status 1) only when the whole confidence
sequence is beyond the threshold, so a real change below it is rarely a failed gate: the point
estimate at the stopping time is biased away from 0 and must not decide it."""

from __future__ import annotations

import numpy as np

from regbench.run.sequential import Settled
from regbench.stats.sequential import _decide, _path, sequential_decision


def test_a_true_change_below_the_threshold_is_rarely_called_a_regression():
    gen = np.random.default_rng(0)
    alpha, threshold, sigma, effect, max_n, n_sim = 0.05, 0.03, 0.03, 0.02, 100, 2000
    x = np.log1p(effect) + sigma * gen.standard_normal((n_sim, max_n))
    low, high, _ = _path(x, alpha, 1.0)
    n = np.arange(1, max_n + 1)
    changed, no_change = _decide(low, high, n, band=np.log1p(threshold), min_n=3)
    decided = changed | no_change
    big = 0
    for i in range(n_sim):
        if not decided[i].any():
            continue
        k = int(np.argmax(decided[i])) + 1
        d = sequential_decision(x[i, :k], threshold=threshold, alpha=alpha)
        s = Settled("b", "A", "B", "lower", d, "settled", k, 0, 0.0)
        big += s.verdict == "regression"
    # The true change (+2%) is below the 3% threshold: "regression" (exit status 1 of
    # `compare --run`) is wrong every time.  With the point estimate deciding, it happened in
    # about 17% of comparisons.
    assert big / n_sim <= alpha, f"'regression' for a +2% change in {big / n_sim:.1%} of comparisons"


def _settled(x, threshold, direction="lower", stopped="settled"):
    d = sequential_decision(np.asarray(x), threshold=threshold, alpha=0.05)
    return Settled("b", "A", "B", direction, d, stopped, len(x), 0, 0.0)


def test_verdict_labels_follow_where_the_sequence_lies():
    gen = np.random.default_rng(1)
    noise = 0.002 * gen.standard_normal(400)
    assert _settled(np.log(1.10) + noise[:50], 0.03).verdict == "regression"
    assert _settled(np.log(1.10) + noise[:50], 0.03, direction="higher").verdict == "improvement"
    assert _settled(np.log(1.01) + noise[:400], 0.03).verdict == "small regression"
    assert _settled(np.log(0.99) + noise[:400], 0.03).verdict == "small improvement"
    assert _settled(noise[:400], 0.03).verdict == "no change"
    # Certain to be a change, not whether it reaches 3%: the budget ran out.
    straddle = _settled(np.log(1.03) + 10 * noise[:12], 0.03, stopped="budget")
    assert straddle.decision.decision == "changed" and straddle.verdict == "regression (size uncertain)"
    # The gate fails for a regression unless it is shown to be below the threshold.
    assert straddle.gates and _settled(np.log(1.10) + noise[:50], 0.03).gates
    assert not _settled(np.log(1.01) + noise[:400], 0.03).gates
    assert not _settled(np.log(1.10) + noise[:50], 0.03, direction="higher").gates
    assert _settled(noise[:2], 0.03, stopped="budget").verdict == "inconclusive"


def test_a_throughputs_floor_is_its_fast_side():
    # `--location low` takes the floor that interference hardly moves: for times their 10%
    # quantile, for throughputs (direction "higher") their 90% one, the 10% quantile of the times
    # they invert; a throughput's own 10% quantile is its slow tail, which moves with interference.
    from datetime import datetime

    from regbench.config import BenchmarkSpec
    from regbench.run.execute import RunOutcome
    from regbench.run.sequential import run_value

    rates = np.concatenate([np.full(16, 100.0), [50.0, 40.0, 60.0, 45.0]])  # four slowed by interference
    outcome = RunOutcome("ok", rates, 0, "", 1.0, datetime(2026, 1, 1))
    higher = BenchmarkSpec(name="t", kind="command", direction="higher")
    lower = BenchmarkSpec(name="t", kind="command")
    assert run_value(higher, outcome, "low") == 100.0
    assert run_value(lower, outcome, "low") == np.quantile(rates, 0.1) < 60
    assert 1 / run_value(higher, outcome, "low") == np.quantile(1 / rates, 0.1)
    assert run_value(higher, outcome, "median") == run_value(lower, outcome, "median") == 100.0
    settled = Settled("t", "A", "B", "higher", None, "settled", 3, 0, 0.0, location="low")
    assert "90% quantiles" in settled.compared_by
    assert "10% quantiles" in Settled("t", "A", "B", "lower", None, "settled", 3, 0, 0.0, location="low").compared_by


def test_what_a_throughputs_comparison_says_it_compared():
    # By mode, the upper mode of a throughput is its faster one; a bisection by `low` names the
    # 90% quantile as the comparison does.
    from regbench.report.sequential import _bisected_by
    from regbench.stats.modepairs import ModeMatch

    for direction, word, q in (("lower", "slower", "10%"), ("higher", "faster", "90%")):
        low = Settled("t", "A", "B", direction, None, "settled", 3, 0, 0.0, location="low")
        assert f"{q} quantiles" in _bisected_by(low)
        m = ModeMatch(np.zeros(3), 2, 0.0, 0.0, 0.3, 0.4, 0, np.arange(3))
        by_mode = Settled("t", "A", "B", direction, None, "settled", 3, 0, 0.0, modes=m)
        assert f"the {word} mode holds" in by_mode.compared_by
