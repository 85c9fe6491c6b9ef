"""``--option NAME=VALUE``: a detector's own options on the command line (``regbench detect``,
``regbench diagnose``)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import NoReturn

import click

#: Detector keyword arguments that have options of their own.
_COMMON = {"confidence_level": "--confidence", "min_change": "--min-change"}


def parse_detector_options(method: str, pairs: Sequence[str], *, common: bool = False) -> dict[str, object]:
    """``--option NAME=VALUE`` pairs as keyword arguments of ``method``'s detector.

    Each value is read as the type of the option's default (an integer, a number, true or false,
    or text; without a default, as whichever of those it looks like), then the detector is built
    with them, so that its own validation speaks; a ValueError becomes a one-line usage error
    that names the option (the one refused on its own, or all of them when only their
    combination is refused).  What is wrong is known from the command line alone, so it is said
    with exit status 2, before the configuration is read or the store opened.

    Raises
    ------
    click.UsageError
        A pair without ``=``, an option given twice, one the method does not have (or one with an
        option of this command: ``--confidence``, ``--min-change``, unless ``common``: a command
        without those options takes them here), a value of the wrong type, or one the detector
        refuses.
    """
    from ..detect import get_detector

    if not pairs:
        return {}
    cls = type(get_detector(method))
    params = {name: p for name, p in inspect.signature(cls).parameters.items() if p.kind is p.KEYWORD_ONLY}
    own = [name for name in params if common or name not in _COMMON]
    parsed: dict[str, object] = {}
    given: dict[str, str] = {}  # as typed, for the messages
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            _fail(f"--option {pair!r}: expected NAME=VALUE")
        if name in _COMMON and not common:
            _fail(f"--option {name}: use {_COMMON[name]}")
        if name not in params:
            known = ", ".join(own) or "none"
            _fail(f"--option {name}: {method} has no such option (its options: {known})")
        if name in parsed:
            _fail(f"--option {name}: given twice")
        parsed[name] = _option_value(name, text, params[name].default)
        given[name] = text
    problem = _refusal(cls, parsed)
    if problem is not None:
        # Name the option the detector refuses on its own, if one is; else all of them together.
        alone = [name for name in parsed if _refusal(cls, {name: parsed[name]}) == problem]
        named = alone[:1] or list(parsed)
        _fail(" ".join(f"--option {k}={given[k]}" for k in named) + f": {problem}")
    return parsed


def _fail(message: str) -> NoReturn:
    """A usage error of the command running (exit status 2, with its ``Usage:`` line)."""
    raise click.UsageError(message, ctx=click.get_current_context(silent=True))


def _option_value(name: str, text: str, default: object) -> object:
    """``text`` read as the type of ``default``."""
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    word = text.strip().lower()
    if isinstance(default, bool):
        if word not in words:
            _fail(f"--option {name}={text}: expected true or false")
        return words[word]
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            pass
        _fail(f"--option {name}={text}: expected an integer")
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            pass
        _fail(f"--option {name}={text}: expected a number")
    if isinstance(default, str):
        return text
    if word in ("true", "false"):
        return words[word]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _refusal(cls: type, options: dict[str, object]) -> str | None:
    """The detector's message when it refuses ``options``; None when it takes them."""
    try:
        cls(**options)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return None
