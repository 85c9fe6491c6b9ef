"""regbench: regression benchmarking.

Runs a project's benchmarks across its versions, keeps every measurement, and decides with sound
statistics which differences are real performance changes (see ``docs/`` and the papers cited in
the docstrings of :mod:`regbench.stats`).
"""

__version__ = "0.1.0"
