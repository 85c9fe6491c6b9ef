"""`regbench detect --executor dask`: series spread over a real LocalCluster's workers, which read
the shared store (SQLite here; PostgreSQL with --store-url), give the changes --jobs gives, and
alerts are recorded once, by the client."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.detect.driver import detect_changes
from regbench.errors import ConfigError, ExitStatus
from regbench.store import Store
from regbench.store import schema

from test_detect_store import fill

distributed = pytest.importorskip("distributed")

from regbench.run.dask_executor import DaskBatchPool  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as c:
        yield c


def stepped_levels(n: int = 40, versions: int = 30) -> dict[str, list[float]]:
    rng = np.random.default_rng(3)
    levels = {}
    for b in range(n):
        lv = [1.0] * versions
        if b % 5 == 0:
            lv = [1.0] * 15 + [1.0 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.2)] * (versions - 15)
        levels[f"bench{b:02d}"] = lv
    return levels


def detect_json(capsys, url: str, *args: str) -> list[dict]:
    capsys.readouterr()
    rc = main(["--store", url, "detect", "--format", "json", *args])
    out = capsys.readouterr().out
    assert rc == ExitStatus.OK, out
    return json.loads(out[out.index("["):])


@pytest.mark.store
def test_dask_detection_gives_the_changes_of_local_detection_and_alerts_once(store_url, cluster, capsys):
    with Store(store_url) as s:
        fill(s, stepped_levels(), runs=4, iters=5)
    local = detect_json(capsys, store_url, "--dry-run", "--jobs", "2")
    spread = detect_json(capsys, store_url, "--dry-run", "--executor", "dask", "--scheduler",
                         cluster.scheduler_address)
    assert local == spread
    assert {c["benchmark"] for c in local} == {f"bench{b:02d}" for b in range(0, 40, 5)}

    # Recorded: the alerts of Dask detection are those local detection records, once.
    detect_json(capsys, store_url, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert alert_count(store_url) == len(local)
    detect_json(capsys, store_url, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert alert_count(store_url) == len(local)


def alert_count(url: str) -> int:
    with Store(url) as s, s.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(schema.alert)).scalar_one()


def test_the_driver_gives_identical_results_with_a_pool_in_small_batches(tmp_path, cluster):
    path = tmp_path / "many.db"
    with Store(path) as s:
        fill(s, stepped_levels(25, 20), runs=3, iters=5)
        local = detect_changes(s, jobs=1, batch=3)
        with DaskBatchPool(cluster.scheduler_address) as pool:
            spread = detect_changes(s, batch=3, pool=pool)
    assert [c.to_json() for c in local.changes] == [c.to_json() for c in spread.changes]
    assert (local.n_series, local.n_tests, local.states) == (spread.n_series, spread.n_tests, spread.states)


def test_bad_dask_detection_input_is_a_one_line_error(tmp_path, cluster, capsys, dask_connect_timeout_1s):
    with Store(tmp_path / "r.db") as s:
        fill(s, {"a": [1.0] * 10}, runs=3, iters=5)
    args = ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"]
    assert main(["--store", str(tmp_path / "r.db"), "detect", *args]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err and err.strip().count("\n") == 0, err
    # Options that do not go together are a usage error (tests/test_cli_usage_exits.py).
    assert main(["--store", str(tmp_path / "r.db"), "detect", "--scheduler", cluster.scheduler_address]) \
        == ExitStatus.USAGE
    assert "Error: --scheduler is for --executor dask" in capsys.readouterr().err
    jobs = ["--executor", "dask", "--scheduler", cluster.scheduler_address, "--jobs", "2"]
    assert main(["--store", str(tmp_path / "r.db"), "detect", *jobs]) == ExitStatus.USAGE
    assert "Error: --jobs is for --executor local" in capsys.readouterr().err
    with Store("sqlite://") as memory, DaskBatchPool(cluster.scheduler_address) as pool:
        fill(memory, {"a": [1.0] * 10}, runs=3, iters=5)
        with pytest.raises(ConfigError, match="cannot be opened by other processes"):
            detect_changes(memory, pool=pool)
