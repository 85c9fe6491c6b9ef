"""Runs of one sample each (a command timed once a process): the interval rests on the run
means, the replicates, as `compare` has it (a first-user probe: `summary` showed no interval for
five such runs); what needs the within-run variance stays undefined."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from regbench.cli.main import main
from regbench.stats.hierarchical import hierarchical_summary


def test_the_interval_of_one_sample_runs_is_students_over_the_runs():
    values = np.array([1.01, 0.98, 1.03, 0.99, 1.02])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        s = hierarchical_summary([np.array([v]) for v in values], confidence_level=0.99)
    lo, hi = stats.t.interval(0.99, df=4, loc=values.mean(), scale=stats.sem(values))
    assert s.half_width == pytest.approx((hi - lo) / 2, rel=1e-12)
    assert np.isnan(s.impact_factor) and np.isnan(s.s2_sigma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(hierarchical_summary([np.array([1.0])]).half_width)  # one run: nothing to go on


def test_summary_shows_it(tmp_path, capsys):
    csv = tmp_path / "one.csv"
    csv.write_text("benchmark,version,run,iteration,value\n"
                   + "".join(f"b,v1,{r},0,{v}\n" for r, v in enumerate((1.01, 0.98, 1.03, 0.99, 1.02))))
    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(csv)]) == 0
    capsys.readouterr()
    assert main(["--store", db, "summary"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("b ")][0]
    assert "1.006 ± 0.043 s" in row  # t(0.995, 4) x the standard error of the five run means
