"""How measurements look to a person: times in the unit that suits each benchmark (ns, us, ms or
s, as pyperf shows them), an interval with the precision its half-width carries, and counts as
integers with thousands separators.

Only what is printed is scaled; stored values and JSON output keep the benchmark's own unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

#: Time units by size, and their length in seconds.
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: Rates (Google Benchmark's ``bytes_per_second`` and ``items_per_second``) by size, with the
#: prefixes the library's own console uses: bytes in powers of 1024 (its ``G/s`` of bytes is
#: GiB/s), items in powers of 1000.
RATE_UNITS = {
    "B/s": (1024.0, ("B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s")),
    "items/s": (1000.0, ("items/s", "k items/s", "M items/s", "G items/s", "T items/s")),
}


@dataclass(frozen=True)
class DisplayUnit:
    """The unit values are shown in: ``shown = value * factor``."""

    name: str
    factor: float = 1.0


def display_unit(values: Iterable[float], unit: str) -> DisplayUnit:
    """The unit to show a benchmark's ``values`` (in ``unit``) in: for times, and times per
    something (``ns/op``), the largest of s, ms, us and ns in which their median is at least 1 (ns
    below that); bytes and items per second (:data:`RATE_UNITS`) the largest prefixed unit in
    which it is at least 1; other units unchanged.

    One unit per benchmark, chosen from all the values shown for it, so that its versions can be
    read against one another.
    """
    if unit in RATE_UNITS:
        return _rate_unit(values, unit)
    # A time per something (Go's and JMH's "ns/op", "us/op") is scaled by its time, "/op" kept.
    time, per, rest = unit.partition("/")
    if time not in _SECONDS:
        return DisplayUnit(unit)
    finite = sorted(abs(v) * _SECONDS[time] for v in values if v is not None and math.isfinite(v) and v != 0)
    if not finite:
        return DisplayUnit(unit)
    median = finite[len(finite) // 2]
    name, length = next(((n, s) for n, s in TIME_UNITS if median >= s), TIME_UNITS[-1])
    return DisplayUnit(name + per + rest, _SECONDS[time] / length)


def _rate_unit(values: Iterable[float], unit: str) -> DisplayUnit:
    """A rate in the largest of its prefixed units in which the median is at least 1."""
    base, names = RATE_UNITS[unit]
    finite = sorted(abs(v) for v in values if v is not None and math.isfinite(v) and v != 0)
    if not finite:
        return DisplayUnit(unit)
    median = finite[len(finite) // 2]
    k = 0
    while k + 1 < len(names) and median >= base ** (k + 1):
        k += 1
    return DisplayUnit(names[k], 1.0 / base ** k)


def decimals_for(half_width: float) -> int:
    """Decimals that show ``half_width`` to two significant digits (none at 10 or more)."""
    if not math.isfinite(half_width) or half_width <= 0:
        return 0
    return max(0, min(9, 1 - math.floor(math.log10(half_width))))


def fmt_interval(mean: float | None, half_width: float | None, unit: DisplayUnit) -> str:
    """``mean ± half_width unit`` with the mean rounded where the half-width says its digits stop
    (``263.8 ± 6.0 us``); without a half-width, the mean to 4 significant digits and ``± —``."""
    suffix = f" {unit.name}" if unit.name else ""
    if mean is None or not math.isfinite(mean):
        return "—"
    m = mean * unit.factor
    if half_width is None or not math.isfinite(half_width):
        return f"{m:.4g} ± —{suffix}"
    h = half_width * unit.factor
    d = decimals_for(h)
    return f"{m:,.{d}f} ± {h:,.{d}f}{suffix}"


def fmt_scaled(x: float | None, unit: DisplayUnit) -> str:
    """A value in ``unit`` (:func:`display_unit`) to 4 significant digits, as the value of an
    interval without one is shown (``263.8 us``), from 10,000 up with thousands separators
    (``15,370 ops/ms``); ``—`` for none."""
    if x is None or not math.isfinite(x):
        return "—"
    v = float(f"{x * unit.factor:.4g}")
    # A large value (a throughput, 15,370 ops/ms) with thousands separators, as `summary` shows
    # it, not in exponent notation (1.537e+04).
    text = f"{v:,.0f}" if 1e4 <= abs(v) < 1e16 else f"{v:.4g}"
    return text + (f" {unit.name}" if unit.name else "")


def fmt_count(x: float | None) -> str:
    """A count as an integer with thousands separators (``171,200``); ``∞`` and ``—`` as such."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞"
    return f"{round(x):,}"


def fmt_repetitions(x: float | None) -> str:
    """A number of repetitions to make (``n_opt``, iterations per run) from the real optimum a
    formula gives: rounded up, and at least 1 (rounded to the nearest, an optimum of 0.4 read as
    0 iterations, no advice at all);
    ``∞`` and ``—`` as :func:`fmt_count`."""
    if x is None or not math.isfinite(x):
        return fmt_count(x)
    # Rounded to 9 decimals first: an optimum of exactly 3 computed as 3.0000000000000004 is 3.
    return fmt_count(max(1, math.ceil(round(x, 9))))
