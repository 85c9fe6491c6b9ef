"""Versions from package releases: real PyPI metadata, real virtual environments, real installs."""

from __future__ import annotations

import sys

import pytest

from regbench.config import load_config
from regbench.errors import ConfigError, VersionError
from regbench.run.campaign import run_campaign
from regbench.run.releases import parse_spec, resolve_releases
from regbench.store import Store

from test_run_campaign import write_config


def _pypi_reachable() -> bool:
    try:
        resolve_releases("six==1.16.0", timeout=10)
    except VersionError:
        return False
    return True


needs_pypi = pytest.mark.skipif(not _pypi_reachable(), reason="the package index (pypi.org) cannot be reached")


def test_specs_are_parsed_and_bad_ones_are_one_line_errors():
    assert parse_spec("six==1.15.0..1.16.0") == ("six", ("1.15.0", "1.16.0"), None)
    assert parse_spec("six == 1.14.0, 1.16.0") == ("six", None, ["1.14.0", "1.16.0"])
    for bad in ("six", "six==", "==1.0", "six==one..two"):
        with pytest.raises(ConfigError, match="--releases"):
            parse_spec(bad)


@needs_pypi
def test_a_range_resolves_to_final_releases_in_upload_order():
    releases = resolve_releases("six==1.14.0..1.16.0")
    assert [r.version for r in releases] == ["1.14.0", "1.15.0", "1.16.0"]
    assert [r.uploaded for r in releases] == sorted(r.uploaded for r in releases)
    assert releases[0].name == "six==1.14.0"
    with pytest.raises(VersionError, match="no release 9.9.9"):
        resolve_releases("six==1.16.0,9.9.9")
    with pytest.raises(VersionError, match="package index answered 404"):
        resolve_releases("no-such-package-regbench-xyz==1.0")


@needs_pypi
def test_each_release_runs_in_its_own_environment(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    # The benchmark fails unless the six it imports is the release being measured.
    (proj / "bench_six.py").write_text(
        "import os\nimport six\n\n"
        "def work():\n"
        "    assert os.environ['REGBENCH_VERSION'] == 'six==' + six.__version__, six.__version__\n"
        "    sum(range(2000))\n")
    cfg = write_config(proj, 'name = "six-across-releases"\n', [
        {"name": "six-import", "python": "bench_six:work", "iterations": 3, "min_time": 0.001, "runs": 2},
        {"name": "cmd", "command": ["python", "-c", "import six; print(float(len(six.__version__)))"], "runs": 1},
    ])
    with Store(tmp_path / "store" / "results.db") as store:
        result = run_campaign(load_config(cfg), store, releases="six==1.15.0..1.16.0", seed=3)
        assert result.versions == ("six==1.15.0", "six==1.16.0")
        assert dict(result.counts)["ok"] == 6, [(r.benchmark, r.status, r.stderr_tail) for r in store.runs()]
        [env] = (tmp_path / "store" / "venvs").glob("six-1.16.0-*")  # one per release and interpreter
        assert (env / ".regbench-installed").exists()
        again = run_campaign(load_config(cfg), store, releases="six==1.15.0..1.16.0", seed=4)
        assert again.trials_skipped == 6  # resumed; the environments are reused
        builds = {b.version: b.status for b in store.builds()}
        assert builds == {"six==1.15.0": "ok", "six==1.16.0": "ok"}


def test_versions_and_releases_do_not_mix(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "b", "command": [sys.executable, "-c", "print(1)"]}])
    with Store(tmp_path / "r.db") as store, pytest.raises(ConfigError, match="not both"):
        run_campaign(load_config(cfg), store, revisions="HEAD", releases="six==1.16.0")


def test_benchmark_requires_is_checked_as_pip_requirements(tmp_path):
    bench = [{"name": "b", "command": [sys.executable, "-c", "print(1)"]}]
    for value, message in (('"pytest"', "must be a list of requirement strings"),
                           ('["pytest", 3]', "must be a list of requirement strings"),
                           ('["pytest", "pytest-benchmark>>4"]', "item 2: not a requirement: 'pytest-benchmark>>4'")):
        cfg = write_config(tmp_path, f'name = "x"\nbenchmark_requires = {value}\n', bench)
        with pytest.raises(ConfigError, match=rf"regbench.toml: \[project\] `benchmark_requires`.*{message}"):
            load_config(cfg)
    cfg = write_config(tmp_path, 'name = "x"\nbenchmark_requires = ["iniconfig>=1", "pytest; python_version > \'3\'"]\n',
                       bench)
    assert load_config(cfg).benchmark_requires == ("iniconfig>=1", "pytest; python_version > '3'")


@needs_pypi
def test_what_the_benchmarks_need_is_installed_beside_each_release(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    # A harness the benchmark imports, which the release does not bring: without
    # benchmark_requires every run fails with "No module named iniconfig".
    command = ["python", "-c", "import iniconfig, six; print(float(len(six.__version__)))"]
    cfg = write_config(proj, 'name = "x"\nbenchmark_requires = ["iniconfig"]\n',
                       [{"name": "cmd", "command": command, "runs": 1}])
    with Store(tmp_path / "store" / "results.db") as store:
        result = run_campaign(load_config(cfg), store, releases="six==1.16.0", seed=1)
        assert dict(result.counts)["ok"] == 1, [r.stderr_tail for r in store.runs()]
    # Another list is another environment; one the release cannot satisfy is a failed build
    # with pip's reason, not a release silently replaced by the one the requirement wants.
    cfg = write_config(proj, 'name = "x"\nbenchmark_requires = ["iniconfig", "six==1.15.0"]\n',
                       [{"name": "cmd", "command": command, "runs": 1}])
    with Store(tmp_path / "store2" / "results.db") as store:
        run_campaign(load_config(cfg), store, releases="six==1.16.0", seed=1)
        [build] = store.builds()
        assert build.status == "failed" and "six" in (build.log_tail or "")
        assert list(store.runs()) == []
