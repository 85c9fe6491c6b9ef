"""Versions from package releases: a dependency benchmarked across its releases on PyPI.

``regbench run --releases "simplejson==3.17.0..3.19.3"`` benchmarks the project's benchmarks once
per release of a package, each release installed into its own cached virtual environment, the
way asv's environment matrix does.  A spec is ``PACKAGE==A..B`` (every final release from A to B
inclusive, in PEP 440 order) or ``PACKAGE==A,B,C`` (those releases).  Releases are versions named
``PACKAGE==X``, ordered by their upload time on the index (history order, DESIGN.md).  Release
metadata comes from the index's JSON API (``https://pypi.org/pypi/PACKAGE/json``, or
``REGBENCH_INDEX_URL``); installing is pip's job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ConfigError, VersionError

INDEX = "https://pypi.org/pypi"
MARKER = ".regbench-installed"


@dataclass(frozen=True)
class Release:
    """One release of a package: ``name`` is the version name regbench stores (``pkg==X``)."""

    package: str
    version: str
    uploaded: datetime

    @property
    def name(self) -> str:
        return f"{self.package}=={self.version}"


def parse_spec(text: str) -> tuple[str, tuple[str, str] | None, list[str] | None]:
    """``(package, (low, high) or None, [versions] or None)`` of a ``--releases`` spec."""
    from packaging.version import InvalidVersion, Version

    package, sep, rest = text.partition("==")
    package = package.strip()
    if not sep or not package or not rest.strip():
        raise ConfigError(f"--releases {text!r}: expected PACKAGE==A..B or PACKAGE==A,B,C")
    try:
        if ".." in rest:
            low, high = (part.strip() for part in rest.split("..", 1))
            Version(low), Version(high)
            return package, (low, high), None
        versions = [v.strip() for v in rest.split(",") if v.strip()]
        for v in versions:
            Version(v)
        return package, None, versions
    except InvalidVersion as exc:
        raise ConfigError(f"--releases {text!r}: {exc}") from None


def resolve_releases(text: str, *, index: str | None = None, timeout: float = 30.0) -> list[Release]:
    """The releases a spec names, oldest upload first (yanked and pre-releases left out of ranges)."""
    from packaging.version import Version

    package, bounds, listed = parse_spec(text)
    base = (index or os.environ.get("REGBENCH_INDEX_URL") or INDEX).rstrip("/")
    url = f"{base}/{package}/json"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - a configured index
            data = json.load(resp)
    except urllib.error.HTTPError as exc:
        raise VersionError(f"{package}: the package index answered {exc.code} for {url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise VersionError(f"{package}: cannot reach the package index at {url} ({exc})") from None
    except ValueError:
        raise VersionError(f"{package}: the package index sent something that is not JSON ({url})") from None
    found: list[Release] = []
    for version, files in (data.get("releases") or {}).items():
        files = [f for f in files if not f.get("yanked")]
        if not files:
            continue
        try:
            v = Version(version)
        except ValueError:
            continue
        if listed is not None:
            if not any(Version(x) == v for x in listed):
                continue
        elif bounds is None or v.is_prerelease or not (Version(bounds[0]) <= v <= Version(bounds[1])):
            continue
        stamp = min(f["upload_time_iso_8601"] for f in files)
        found.append(Release(package, version, datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)))
    if listed is not None:
        missing = [x for x in listed if not any(Version(x) == Version(r.version) for r in found)]
        if missing:
            raise VersionError(f"{package}: no release {missing[0]} on the package index")
    if not found:
        raise VersionError(f"{package}: no release in {text!r} on the package index")
    return sorted(found, key=lambda r: (r.uploaded, Version(r.version)))


def release_environment(release: Release, cache_dir: Path, *, python: str | None = None,
                        requires: Sequence[str] = (), timeout: float = 600.0) -> tuple[Path | None, str]:
    """A virtual environment with the release installed (made once, then reused).

    ``requires`` are what the benchmarks need besides the release (``[project]
    benchmark_requires``: a harness such as pytest-benchmark), installed by the same pip command
    so that pip's resolver keeps the release at its version or fails.

    Returns the environment's folder, or None and pip's output tail when installing failed (a
    release that does not install is a failed build, recorded, and the campaign goes on).
    """
    py = python or sys.executable
    # One environment per release, interpreter and requirements: another `python` in
    # regbench.toml, or another list of requirements, is another environment.
    import hashlib

    key = str(Path(py).resolve()) + "".join(f"\n{r}" for r in requires)
    tag = hashlib.sha256(key.encode()).hexdigest()[:10]
    env = Path(cache_dir) / f"{release.package}-{release.version}-{tag}"
    if (env / MARKER).exists():
        return env, ""
    if env.exists():
        shutil.rmtree(env)  # a half-made environment from an interrupted install
    steps = [[py, "-m", "venv", str(env)],
             [str(_bin(env) / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              f"{release.package}=={release.version}", *requires]]
    for argv in steps:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(env, ignore_errors=True)
            return None, str(exc)
        if out.returncode != 0:
            shutil.rmtree(env, ignore_errors=True)
            return None, (out.stdout + out.stderr)[-2000:]
    (env / MARKER).write_text(release.name + "\n")
    return env, ""


def _bin(env: Path) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin")


def environment_variables(env: Path) -> dict[str, str]:
    """What a command benchmark gets to run inside the release's environment."""
    return {"VIRTUAL_ENV": str(env), "PATH": f"{_bin(env)}{os.pathsep}{os.environ.get('PATH', '')}"}


def interpreter(env: Path) -> str:
    return str(_bin(env) / "python")
