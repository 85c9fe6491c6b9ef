"""Optional parts (extras): a missing one is a one-line error naming how to install it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from regbench.errors import MissingDependency, RegbenchError
from regbench.extras import PROVIDERS, install_hint, require


def test_require_imports_what_is_there():
    assert require("statsmodels.tsa.stattools", what="x").acf is not None


@pytest.mark.parametrize("module", sorted(PROVIDERS))
def test_a_missing_extra_says_what_needs_it_and_how_to_install_it(module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # what Python does for a package that is not there
    with pytest.raises(MissingDependency) as err:
        require(module, what="the thing")
    message = str(err.value)
    assert isinstance(err.value, RegbenchError) and "\n" not in message
    assert message.startswith("the thing needs ") and message.endswith(install_hint(module))
    assert "pip install 'regbench[" in message


def test_diagnose_without_statsmodels_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    from regbench.cli.main import main
    from regbench.model import RunRecord
    from regbench.store import Store

    rng = np.random.default_rng(0)
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", "v1", k, rng.normal(1, 0.01, 20)) for k in range(5)])
    monkeypatch.setitem(sys.modules, "statsmodels", None)
    assert main(["--store", str(tmp_path / "r.db"), "diagnose", "b", "--no-plots"]) == 3
    err = capsys.readouterr().err.strip()
    assert err == ("error: regbench diagnose (its auto-dependence test) needs statsmodels, which is not installed: "
                   "pip install 'regbench[diagnose]'")
