"""`python = "module:Class.method"` with an ordinary (instance) method, as asv-style benchmark
classes have them: the class is made once with no arguments and its method timed (a first-user
probe: every run failed with "missing 1 required positional argument: 'self'")."""

from __future__ import annotations

from regbench.cli.main import main
from regbench.store import Store

BENCH = '''
class Suite:
    def __init__(self):
        self.data = list(range(2000))

    def time_sum(self):
        return sum(self.data)

    @staticmethod
    def time_static():
        return sum(range(2000))
'''


def test_an_instance_method_is_timed_on_an_instance(tmp_path, monkeypatch, capsys):
    (tmp_path / "bm.py").write_text(BENCH)
    (tmp_path / "regbench.toml").write_text(
        '[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
        '[[benchmark]]\nname = "sum"\npython = "bm:Suite.time_sum"\nmin_time = 0.001\n'
        '[[benchmark]]\nname = "static"\npython = "bm:Suite.time_static"\nmin_time = 0.001\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 0, capsys.readouterr().err
    with Store(tmp_path / ".regbench" / "results.db") as store:
        runs = store.runs()
        assert {(r.benchmark, r.status) for r in runs} == {("sum", "ok"), ("static", "ok")}
        assert all(r.n_samples == 3 for r in runs)
        assert all((s.runs[0][0] > 0).all() for s in store.load_series())
