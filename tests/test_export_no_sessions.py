"""`export` leaves out the runs of sessions (`compare --run`, `bisect`, `detect --confirm`), which
a history's analyses leave out: a re-import then reads as the history did (first-user probes: a
bisect's runs came back as history runs and moved a detected change; with `--no-sessions` the
default then, a second probe's re-import found two false changes at a bisection's versions).
`--sessions` exports them too, and a session asked for by `--campaign` is exported."""

from __future__ import annotations

import numpy as np

from regbench.cli.main import main
from regbench.model import SESSION_SCHEDULE, RunRecord
from regbench.store import Store


def test_a_reimport_without_sessions_holds_only_the_history_runs(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store(db) as store:
        history = store.start_campaign(seed=1, machine="m", fingerprint={}, command="run", plan={"schedule": "rmit"})
        store.add_runs([RunRecord("b", v, r, np.full(3, 1.0 + 0.5 * (v == "v2")), machine="m", campaign_id=history)
                        for v in ("v1", "v2") for r in range(3)])
        store.finish_campaign(history, "finished")
        session = store.start_campaign(seed=2, machine="m", fingerprint={}, command="compare --run",
                                       plan={"schedule": SESSION_SCHEDULE})
        store.add_runs([RunRecord("b", "v2", r, np.full(3, 9.0), machine="m", campaign_id=session)
                        for r in range(3, 8)])
        store.finish_campaign(session, "finished")
    for k, (flag, expected) in enumerate((([], 6), (["--no-sessions"], 6), (["--sessions"], 11),
                                          (["--campaign", str(session)], 5))):
        out = tmp_path / f"x{k}.csv"
        capsys.readouterr()
        assert main(["--store", str(db), "export", "-o", str(out), *flag]) == 0
        said = capsys.readouterr().err
        assert ("5 runs of sessions left out" in said) == (k < 2)
        again = tmp_path / f"again{k}.db"
        assert main(["--store", str(again), "import", str(out)]) == 0
        with Store(again) as store:
            runs = store.runs()
            assert len(runs) == expected
            values = {float(r[0]) for s in store.load_series("b") for runs in s.runs for r in runs}
            assert (9.0 in values) == (k >= 2)
