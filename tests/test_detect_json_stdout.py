"""``regbench detect --format json`` writes one JSON document to standard output, also when it
notifies sinks (``--notify``): what each sink did goes to standard error, where it does not spoil
the document for a reader such as ``jq``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from regbench.model import RunRecord, VersionInfo
from regbench.store import Store


def test_detect_notify_json_stdout_is_one_document_and_the_sinks_report_goes_to_stderr(tmp_path):
    rng = np.random.default_rng(0)
    levels = [1.0] * 12 + [1.12] * 12
    with Store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        store.add_runs([RunRecord("parse", f"v{k:02d}", r, level * np.exp(rng.normal(0, 0.005, 10)))
                        for k, level in enumerate(levels) for r in range(5)],
                       versions=[VersionInfo(f"v{k:02d}") for k in range(len(levels))])
    (tmp_path / "regbench.toml").write_text('[[notify]]\ntype = "json"\npath = "out/alerts.json"\n')
    out = subprocess.run([sys.executable, "-m", "regbench", "--store", str(tmp_path / "r.db"), "--config",
                          str(tmp_path / "regbench.toml"), "detect", "--notify", "--format", "json"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    changes = json.loads(out.stdout)  # the whole of it: nothing after the document
    assert [(c["version"], c["kind"]) for c in changes] == [("v12", "regression")]
    assert "1 sent" in out.stderr and (tmp_path / "out" / "alerts.json").exists()
