"""A screen on a Dask cluster whose workers are all one machine stores its runs under that
machine, where they are made, as `regbench run` does (before: under the client's host name, a
machine that made none of them); on workers of several machines, under the client's, as
documented (docs/screening.md: the study is not blocked by machine), the machines in the plan.
Real `dask scheduler` and `dask worker` processes on loopback."""

from __future__ import annotations

import pytest

from regbench.cli.main import main
from regbench.run.fingerprint import default_machine_name
from regbench.store import Store

from test_screening_campaign import project

distributed = pytest.importorskip("distributed")

from test_dask_runs_per_machine import machines as start_machines  # noqa: E402


def screen(cfg, db, address: str, capsys) -> None:
    capsys.readouterr()
    rc = main(["--config", str(cfg), "--store", str(db), "screen", "--generator", "D = ABC", "--runs", "1",
               "--seed", "1", "--executor", "dask", "--scheduler", address])
    assert rc == 0, capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("machines", [("bench-1",), ("bench-1", "bench-2")])
def test_a_screen_is_stored_under_the_one_machine_of_its_workers(tmp_path, capsys, machines):
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    cluster = start_machines(tmp_path, *machines)
    try:
        screen(cfg, db, cluster.address, capsys)
    finally:
        cluster.close()
    expected = machines[0] if len(machines) == 1 else default_machine_name()
    with Store(db) as store:
        runs = store.runs()
        (campaign,) = store.campaigns()
    assert len(runs) == 8 and {r.machine for r in runs} == {expected}
    assert campaign.machine == expected
    assert sorted(campaign.plan["machines"]) == sorted(machines)
