"""Streaming reader of one large JSON object whose bulk is one array of small objects.

Google Benchmark and hyperfine write ``{"context": {...}, "benchmarks": [ {...}, {...}, ... ]}``:
a 100 MB file is almost all array elements.  :func:`iter_top_level` walks the top-level keys and
hands every element of the arrays named in ``arrays`` to the caller one at a time, together with
the line it starts on, so that the caller can keep compact numbers instead of a whole tree of
Python objects, and every error carries ``FILE:LINE``.  Each element is decoded by the stdlib's
C decoder (:meth:`json.JSONDecoder.raw_decode`) from a buffer read in 1 MiB chunks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError, shown
from . import jsonsafe

_WS = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20


def skip_blanks(text: str, pos: int) -> int:
    """Index of the first character of ``text`` at or after ``pos`` that is not JSON white space."""
    m = _WS.match(text, pos)
    return pos if m is None else m.end()  # the pattern matches the empty string: never None


class _Reader:
    def __init__(self, fh, where: str):
        self.fh = fh
        self.where = where
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._line = 1  # the line of buf[_counted]
        self._counted = 0

    def fill(self) -> None:
        # Read at least as much as is buffered: a value that keeps failing to decode (a corrupt
        # one, or a long one) doubles the buffer each time, so copying stays linear in the file.
        try:
            chunk = self.fh.read(max(_CHUNK, len(self.buf) - self.pos))
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason})", path=self.where) from None
        if not chunk:
            self.eof = True
            return
        # Drop what is consumed, keeping the line count of what is dropped.
        self.line(self.pos)
        self.buf = self.buf[self.pos:] + chunk
        self._counted -= self.pos
        self.pos = 0

    def line(self, i: int) -> int:
        """Line of buf[i]; ``i`` never goes back before an earlier call's."""
        if i > self._counted:
            self._line += self.buf.count("\n", self._counted, i)
            self._counted = i
        return self._line

    def error(self, message: str, i: int | None = None) -> InputError:
        return InputError(message, path=self.where, line=self.line(self.pos if i is None else i))

    def peek(self) -> str:
        """Next non-blank character ('' at the end of the file), not consumed."""
        ch = self.buf[self.pos:self.pos + 1]
        if ch and ch not in " \t\n\r":
            return ch
        while True:
            self.pos = skip_blanks(self.buf, self.pos)
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos:self.pos + 1]
            self.fill()

    def expect(self, chars: str, what: str) -> str:
        ch = self.peek()
        if not ch or ch not in chars:
            found = "the end of the file" if not ch else repr(ch)
            raise self.error(f"invalid JSON: expected {what}, found {found}"
                             + (" (the file is truncated)" if not ch else ""))
        self.pos += 1
        return ch

    def value(self, *, peeked: bool = False) -> Any:
        if not peeked:
            self.peek()
        while True:
            try:
                obj, end = jsonsafe.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self.eof:  # maybe only cut by the chunk boundary
                    self.fill()
                    continue
                reason = exc.msg + (" (the file is truncated)" if exc.pos >= len(self.buf) - 1 else "")
                raise self.error(f"invalid JSON: {reason}", exc.pos) from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            self.pos = end
            return obj


def iter_top_level(path: Path, arrays: tuple[str, ...]) -> Iterator[tuple[str, int, Any, bool]]:
    """Yield ``(key, line, value, is_element)`` for the file's top-level object.

    For a key in ``arrays`` whose value is an array, each element is yielded on its own (with the
    line it starts on, ``is_element`` true); any other key is yielded once with its whole value.  Raises
    :class:`InputError` ``FILE:LINE: ...`` on anything that is not one well-formed JSON object.
    """
    where = str(path)
    try:
        fh = open(path, encoding="utf-8", newline="")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=where) from None
    with fh:
        r = _Reader(fh, where)
        if not r.peek():  # nothing at all (a tool that wrote nothing): said so, not "truncated"
            raise InputError("empty output (expected a JSON object)", path=where, line=1)
        r.expect("{", "'{' (a JSON object)")
        if r.peek() == "}":
            r.pos += 1
        else:
            while True:
                key_pos = r.pos
                key = r.value()
                if not isinstance(key, str):
                    raise r.error("invalid JSON: expected a key", key_pos)
                r.expect(":", "':'")
                if key in arrays and r.peek() == "[":
                    r.pos += 1
                    if r.peek() == "]":
                        r.pos += 1
                    else:
                        while True:
                            r.peek()
                            line = r.line(r.pos)
                            yield key, line, r.value(peeked=True), True
                            if r.expect(",]", "',' or ']'") == "]":
                                break
                else:
                    r.peek()
                    line = r.line(r.pos)
                    yield key, line, r.value(), False
                if r.expect(",}", "',' or '}'") == "}":
                    break
        if r.peek():
            raise r.error("invalid JSON: extra data after the top-level object")


def number(obj: dict, key: str, error: Callable[[str], InputError], *, required: bool = True) -> float | None:
    """``obj[key]`` as a float: a JSON number (not a boolean), else an error naming the key."""
    if key not in obj:
        if required:
            raise error(f"`{key}` is missing")
        return None
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"`{key}` is not a number: {shown(value)}")
    if not jsonsafe.finite_number(value):
        raise error(f"`{key}` is not finite: {shown(value)}")
    return float(value)
