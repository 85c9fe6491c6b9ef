"""The ``hyperfine`` adapter against ``--export-json`` files written by the real hyperfine (Debian's
1.15).

Golden files: tests/golden/adapters/hyperfine/ (regenerate with its make_golden.sh).  The numbers
below were read by hand from those files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters.hyperfine import HyperfineAdapter
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
HF = GOLDEN / "hyperfine"
ADAPTER = HyperfineAdapter()


def by_name(runs):
    out = {r.benchmark: r for r in runs}
    assert len(out) == len(runs)
    return out


def raises_at(path: Path, line: int, match: str):
    return pytest.raises(InputError, match=f"^{path}:{line}: .*{match}")


def test_times_are_the_samples():
    runs = ADAPTER.parse(HF / "two-commands.json")
    assert [r.benchmark for r in runs] == ["sleep 0.01", "true"]
    r = by_name(runs)
    # two-commands.json lines 13-17: the five timed runs (the warm-up run is not in the file).
    np.testing.assert_array_equal(r["sleep 0.01"].samples, [
        0.012020132000000001, 0.012047302000000001, 0.013054852, 0.011614395000000001, 0.014191038000000001])
    assert r["true"].samples.size == 5
    for x in runs:
        assert (x.unit, x.direction, x.run, x.warmup) == ("s", "lower", 0, 0)
    p = r["sleep 0.01"].params
    assert p["mean"] == 0.012585543800000001 and p["median"] == 0.012047302000000001
    assert p["mean"] == pytest.approx(r["sleep 0.01"].samples.mean(), rel=1e-12)
    assert p["user"] == 0.0013744 and p["system"] == 0.0  # one number each in hyperfine 1.15
    assert "exit_codes" not in p  # all 0


def test_parameter_scan_keeps_parameters():
    r = by_name(ADAPTER.parse(HF / "scan.json"))
    assert set(r) == {"sleep 0.001", "sleep 0.002"}
    assert r["sleep 0.001"].params["parameters"] == {"n": "1"}
    assert r["sleep 0.002"].params["parameters"] == {"n": "2"}
    assert all(x.samples.size == 3 for x in r.values())


def test_failing_command_keeps_exit_codes():
    (run,) = ADAPTER.parse(HF / "failure.json")
    assert run.benchmark == "false" and run.params["exit_codes"] == [1, 1, 1]
    np.testing.assert_array_equal(run.samples, [0.00194662, 0.00104249, 0.000990035])


# --- synthetic variations -------------------------------------------------------------------


def golden() -> dict:
    return json.loads((HF / "two-commands.json").read_text())


def dump(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "out.json"
    p.write_text(json.dumps(doc, indent=2))
    return p


def test_per_run_user_and_system_arrays(tmp_path):
    doc = golden()
    res = doc["results"][0]
    res["user"] = [0.001, 0.002, 0.001, 0.001, 0.003]
    res["system"] = [0.0, 0.0, 0.001, 0.0, 0.0]
    res["memory_usage_byte"] = [4096, 4096, 8192, 4096, 4096]
    r = by_name(ADAPTER.parse(dump(tmp_path, doc)))
    assert set(r) == {"sleep 0.01", "sleep 0.01 [user]", "sleep 0.01 [system]",
                      "sleep 0.01 [memory_usage_byte]", "true"}
    assert list(r["sleep 0.01 [user]"].samples) == res["user"]
    assert (r["sleep 0.01 [system]"].unit, r["sleep 0.01 [memory_usage_byte]"].unit) == ("s", "B")
    assert "user" not in r["sleep 0.01"].params


def test_same_command_twice_is_two_runs(tmp_path):
    doc = golden()
    doc["results"][1] = dict(doc["results"][0], times=[1.0, 2.0])
    runs = ADAPTER.parse(dump(tmp_path, doc))
    assert [(r.benchmark, r.run, r.samples.size) for r in runs] == [("sleep 0.01", 0, 5), ("sleep 0.01", 1, 2)]


def result_line(p: Path, k: int) -> int:
    lines = p.read_text().splitlines()
    return [i + 1 for i, line in enumerate(lines) if line == "    {"][k]


@pytest.mark.parametrize(("change", "match"), [
    ({"times": None}, "`times` of 'true' is missing"),
    ({"times": []}, "`times` of 'true' is empty"),
    ({"times": [0.1, "x"]}, "`times` of 'true' is not a list of numbers"),
    ({"times": [0.1, float("nan")]}, "not finite"),
    ({"command": 3}, "`command` is missing"),
    ({"user": [0.1]}, "`user` of 'true' has 1 values, `times` 5"),
    ({"exit_codes": ["0"]}, "`exit_codes` of 'true' is not a list of integers"),
    ({"mean": "slow"}, "`mean` is not a number"),
])
def test_bad_result_names_its_line(tmp_path, change, match):
    doc = golden()
    res = doc["results"][1]
    res.update(change)
    if change.get("times", ()) is None:
        del res["times"]
    p = dump(tmp_path, doc)
    with raises_at(p, result_line(p, 1), match):
        ADAPTER.parse(p)


def test_truncated_file_names_the_line(tmp_path):
    lines = (HF / "two-commands.json").read_text().splitlines(keepends=True)
    assert lines[14].strip() == "0.013054852,"  # line 15
    p = tmp_path / "cut.json"
    p.write_text("".join(lines[:14]) + "        0.0130")
    with raises_at(p, 15, "invalid JSON.*truncated"):
        ADAPTER.parse(p)


@pytest.mark.parametrize(("text", "line", "match"), [
    ('{"results": {}}', 1, "`results` is not an array"),
    ('{"results": [\n[]]}', 2, "expected an object, found list"),
    ('{"results": [\n{"command": "x", "times": [1]}\n,,]}', 3, "invalid JSON"),
])
def test_not_hyperfine_json(tmp_path, text, line, match):
    p = tmp_path / "x.json"
    p.write_text(text)
    with raises_at(p, line, match):
        ADAPTER.parse(p)


def test_no_results(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"results": []}')
    with pytest.raises(InputError, match=f"^{p}: no results"):
        ADAPTER.parse(p)


# --- sniffing -------------------------------------------------------------------------------


def head_of(path: Path) -> str:
    return path.read_bytes()[:64 * 1024].decode("utf-8", errors="replace")


def test_sniff_claims_its_golden_files():
    for name in ("two-commands.json", "scan.json", "failure.json"):
        assert ADAPTER.sniff(head_of(HF / name), HF / name)


def test_sniff_rejects_canonical_and_other_tools(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("benchmark,version,run,iteration,value\nsleep 0.01,v1,0,0,1.5\n")
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"benchmark": "sleep", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n')
    others = [csv, jsonl] + sorted(p for p in GOLDEN.glob("*/*") if p.is_file() and p.parent.name != HF.name
                                   and p.suffix in (".json", ".txt", ".csv", ".jsonl", ".log", ".out"))
    assert {"go", "google-benchmark"} <= {p.parent.name for p in others}
    for p in others:
        assert not ADAPTER.sniff(head_of(p), p), p


# --- the real tool --------------------------------------------------------------------------


def test_live_hyperfine(tmp_path):
    exe = shutil.which("hyperfine")
    if exe is None:
        pytest.skip("hyperfine not installed")
    p = tmp_path / "out.json"
    subprocess.run([exe, "-N", "--style", "none", "--runs", "3", "--export-json", str(p), "true", "sleep 0.001"],
                   check=True, capture_output=True, timeout=60)
    assert ADAPTER.sniff(head_of(p), p)
    r = by_name(ADAPTER.parse(p))
    assert set(r) == {"true", "sleep 0.001"}
    assert all(x.samples.size == 3 and (x.samples > 0).all() and x.unit == "s" for x in r.values())
