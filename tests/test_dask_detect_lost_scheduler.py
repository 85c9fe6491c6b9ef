"""`regbench detect --executor dask` whose scheduler is lost in the middle of the pass: one line on
stderr naming the scheduler and what to do, exit status 3, and nothing of the pass written (no
alert, no detection state), as `regbench run --executor dask` does (docs/dask.md s.4).

A probe: ``kill -9`` of the ``dask scheduler`` while the workers analysed the batches ended the
command with Dask's ``FutureCancelledError`` traceback (exit status 1).  Real ``dask scheduler``
and ``dask worker`` processes on loopback.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.errors import ExitStatus
from regbench.store import Store
from regbench.store import schema

from test_detect_store import fill

distributed = pytest.importorskip("distributed")

from test_probe_screen_fixes import PY, Scheduler  # noqa: E402

#: What a pass writes: alerts (with their machines, events, deliveries, confirmations) and the
#: states of incremental detection.
WRITTEN = (schema.alert, schema.alert_machine, schema.alert_event, schema.alert_delivery, schema.confirmation,
           schema.detect_state)


def written(db: Path) -> dict[str, list[tuple]]:
    """Every row of the tables a detection pass writes, table by table, in a stable order."""
    with Store(db) as store, store.engine.connect() as conn:
        return {t.name: sorted((tuple(map(repr, row)) for row in conn.execute(sa.select(t))), key=str)
                for t in WRITTEN}


def batches(dask_scheduler) -> tuple[int, int]:
    """On the scheduler: (detection batches done, detection batches submitted)."""
    tasks = [ts for key, ts in dask_scheduler.tasks.items() if str(key).startswith("_shared_call")]
    return sum(ts.state == "memory" for ts in tasks), len(tasks)


@pytest.mark.slow
def test_a_scheduler_lost_mid_pass_is_one_line_exit_3_and_writes_nothing(tmp_path):
    db = tmp_path / "results.db"
    # 300 series of 40 versions, every seventh with a step: six batches of 50, a few seconds on
    # one worker.
    with Store(db) as store:
        fill(store, {f"b{k:03d}": [1.0] * 20 + [1.1 if k % 7 == 0 else 1.0] * 20 for k in range(300)},
             runs=3, iters=5)
    # A pass before, of one benchmark: an alert and detection states the lost pass must leave
    # as they are.
    assert main(["--store", str(db), "detect", "--benchmark", "b000"]) == ExitStatus.OK
    before = written(db)
    assert before["alert"] and before["detect_state"]

    cluster = Scheduler(tmp_path, "lost")
    try:
        client = distributed.Client(cluster.address, timeout=30, set_as_default=False)
        try:
            client.wait_for_workers(1, timeout=60)
            detect = subprocess.Popen([PY, "-m", "regbench.cli.main", "--store", str(db), "detect", "--incremental",
                                       "--executor", "dask", "--scheduler", cluster.address],
                                      env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            done, total = 0, 0
            while not done:  # polling the scheduler until the worker has sent back a first batch
                assert detect.poll() is None, detect.communicate()
                assert time.monotonic() < deadline, "no detection batch done within 60 s"
                time.sleep(0.02)
                done, total = client.run_on_scheduler(batches)
        finally:
            client.close()
        assert done < total, (done, total)  # in the middle of the pass
        cluster.kill_scheduler()
        out, err = detect.communicate(timeout=60)
    finally:
        cluster.kill()

    assert detect.returncode == ExitStatus.ERROR, (out, err)
    assert "Traceback" not in err, err
    (line,) = err.splitlines()
    assert line.startswith(f"error: lost the connection to the Dask scheduler at {cluster.address} with "), line
    assert line.endswith(" detection batches not back (the pass did not finish: no alert recorded, no detection "
                         "state saved): start the scheduler and its workers again, then run the same command"), line
    assert written(db) == before
