"""The check that a change of a benchmark whose runs stay in one mode shows in its modes
(``regbench.stats.moderuns``) applies only where the runs of some version land in two modes."""

from __future__ import annotations

import numpy as np

from regbench.detect.driver import detect_changes
from regbench.model import Series, VersionInfo

#: Real measurements (ns, a Criterion benchmark of the `hex` crate's `encode` of 64 bytes, 2026-11-29):
#: three releases, then a commit making it about 3x slower; 3 runs of 10 samples each.
RUNS = [
    [[338.8, 338.0, 343.0, 339.1, 343.2, 341.8, 348.3, 349.8, 337.3, 339.4],
     [338.6, 340.8, 340.3, 338.2, 340.2, 339.8, 340.4, 343.2, 339.9, 340.3],
     [337.8, 339.7, 340.7, 340.2, 338.9, 338.2, 338.8, 340.2, 339.0, 339.2]],
    [[336.8, 336.9, 336.8, 338.0, 339.3, 339.8, 339.4, 338.8, 337.7, 341.3],
     [337.6, 337.5, 337.8, 337.7, 340.4, 341.5, 340.9, 337.6, 337.8, 338.5],
     [337.4, 337.7, 338.5, 339.2, 337.4, 337.1, 337.3, 337.3, 337.5, 337.3]],
    [[340.9, 342.1, 340.0, 340.3, 341.3, 338.4, 339.3, 340.6, 339.3, 340.4],
     [342.2, 340.9, 341.4, 342.7, 342.0, 342.2, 343.1, 341.0, 339.4, 340.1],
     [340.8, 338.7, 338.5, 339.1, 339.4, 339.3, 338.9, 339.9, 338.7, 339.0]],
    [[958.5, 959.4, 961.0, 959.9, 975.3, 969.9, 998.9, 1073.6, 1014.3, 999.4],
     [972.4, 971.3, 972.1, 971.4, 976.0, 981.2, 980.5, 977.5, 973.2, 977.0],
     [1007.7, 1006.7, 1008.0, 1006.5, 1007.6, 1008.5, 1007.5, 991.7, 959.5, 959.3]],
]


def test_a_step_into_a_level_no_run_held_before_is_not_vetoed_as_mode_noise():
    names = ["v0.4.0", "v0.4.2", "v0.4.3", "planted"]
    s = Series("crit/encode/hex/64", "default", "local", "ns", "lower",
               [VersionInfo(n, id=k + 1) for k, n in enumerate(names)],
               [[np.asarray(r) for r in runs] for runs in RUNS], [0] * 4, [0] * 4)
    (c,) = detect_changes([s]).changes
    assert c.version == "planted" and c.kind == "regression" and 1.7 < c.change < 2.0
    # The "modes" are the step's two levels, which no version's runs share: not held to them.
    assert "stay in one mode" not in (c.estimator or "")
