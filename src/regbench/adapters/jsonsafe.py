"""Decoding JSON from files regbench did not write, with bounded nesting.

The stdlib's C decoder is fast and exact, but a hostile file can make it, or whatever handles
its result afterwards, fail with something other than :class:`json.JSONDecodeError`:

* an array nested about a thousand levels deep raises :class:`RecursionError` in the decoder,
  and a shallower one (900 levels) decodes, then breaks ``repr``, ``str`` or ``json.dumps``
  later, wherever the value goes;
* an integer of more than 4300 digits raises a plain :class:`ValueError` (Python's limit on
  int-string conversion).

:func:`loads` and :func:`raw_decode` turn every one of these into a
:class:`json.JSONDecodeError` (which each parser already reports as ``FILE:LINE: ...``), and refuse
values nested more than :data:`MAX_DEPTH` containers deep, which no benchmark tool writes (the
deepest, asv's result rows, nest four).  The depth is measured without recursion, skipping
containers that hold no container in one C-level pass (``map(type, ...)``), so that a file of
long arrays of numbers costs little more than decoding it.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

#: Containers nested deeper than this in one JSON value are refused.
MAX_DEPTH = 100

_DECODER = json.JSONDecoder()
_CONTAINERS = frozenset({list, dict})
_FLOAT_MAX = int(sys.float_info.max)


def loads(text: str) -> Any:
    """``json.loads(text)``; anything wrong is a :class:`json.JSONDecodeError`."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    obj, end = raw_decode(text, 0, skip_blanks=True)
    rest = text[end:].strip(" \t\n\r")
    if rest:
        raise json.JSONDecodeError("Extra data", text, len(text) - len(text[end:].lstrip(" \t\n\r")))
    return obj


def raw_decode(text: str, pos: int = 0, *, skip_blanks: bool = False) -> tuple[Any, int]:
    """``JSONDecoder().raw_decode(text, pos)``; anything wrong is a :class:`json.JSONDecodeError`."""
    if skip_blanks:
        while pos < len(text) and text[pos] in " \t\n\r":
            pos += 1
    try:
        obj, end = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep", text, pos) from None
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise json.JSONDecodeError(f"a number too long to read ({exc})".split(";")[0], text, pos) from None
    if not depth_at_most(obj, MAX_DEPTH):
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep", text, pos)
    return obj, end


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (not a boolean) that is a finite float (an integer of
    more than 308 digits is not: it has no float)."""
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is int:
        return -_FLOAT_MAX <= value <= _FLOAT_MAX
    return False


def depth_at_most(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` lists and dicts (a scalar nests none)."""
    if type(value) not in _CONTAINERS:
        return True
    stack = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > limit:
            return False
        children = container.values() if type(container) is dict else container
        if _CONTAINERS.isdisjoint(map(type, children)):
            continue
        stack.extend((c, depth + 1) for c in children if type(c) in _CONTAINERS)
    return True
