"""An adaptive campaign resumed with ramdisk = true keeps the experiments whose pilot is stored."""

from __future__ import annotations

import json
import sys

import pytest

from regbench.config import NoiseControl, load_config
from regbench.run import ramdisk
from regbench.run.campaign import run_campaign
from regbench.store import Store

PY = sys.executable
PROGRAM = ("import os, random\n"
           "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
           "run = r.lognormvariate(0, 0.01)\n"
           "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
           "    print(0.01 * run * r.lognormvariate(0, 0.05))\n")


def project(tmp_path, target):
    (tmp_path / "b.py").write_text(PROGRAM)
    (tmp_path / "regbench.toml").write_text(
        f'[project]\nname = "p"\n[defaults]\niterations = 5\nwarmup = 0\n'
        f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "b.py"])}\n'
        f'plan = "adaptive"\ntarget = {target}\n')
    return load_config(tmp_path / "regbench.toml")


@pytest.mark.skipif(ramdisk.find_tmpfs() is None, reason="needs a tmpfs")
@pytest.mark.parametrize("ramdisk", [False, True])
def test_resumed_adaptive_campaign_keeps_its_experiments(tmp_path, ramdisk):
    store = Store(tmp_path / "r.db")
    # First campaign: a loose target, met after the pilot (stands for a campaign interrupted
    # after its pilot runs).
    first = run_campaign(project(tmp_path, 0.2), store, seed=1, noise=NoiseControl(ramdisk=ramdisk))
    assert len(first.adaptive) == 1
    # Same command again with the real target: the pilot (run indices 0-2) is stored, so no
    # trial is in the RMIT order; the adaptive rounds must still run.
    again = run_campaign(project(tmp_path, 0.02), store, seed=1, noise=NoiseControl(ramdisk=ramdisk))
    assert len(again.adaptive) == 1, "the experiment was silently dropped"
    assert again.adaptive[0].status == "met" and again.adaptive[0].runs > first.adaptive[0].runs
