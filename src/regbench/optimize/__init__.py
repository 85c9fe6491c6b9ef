"""Optimized plans: the least repetition per benchmark from an earlier full campaign.

``algorithm`` is Algorithm 1 of Japke et al. 2025 (muOpTime) on arrays; ``plans`` reads a full
campaign from the store, runs it for every benchmark and stores the plans that
``regbench run --plan optimized`` then uses (docs/optimize.md).
"""
