"""Optimized plans: the least repetition per benchmark from an earlier full campaign.

``algorithm`` is Algorithm 1 of Japke et al. 2025 (muOpTime) on arrays; ``plans`` reads a full
campaign from the store, runs it for every benchmark and stores the plans that
``regbench run --plan optimized`` then uses; ``costs`` prices a tool's runs from what the tool
said of them and the measured start of its invocations, and estimates the suite's time under the
plans (docs/optimize.md).
"""
