"""simplejson benchmarks for regbench's real-world check: encode and decode a realistic document."""

import random

import simplejson

_rng = random.Random(42)
DOC = {
    "users": [
        {"id": i, "name": f"user{i}", "email": f"user{i}@example.org", "active": _rng.random() < 0.8,
         "score": _rng.random() * 100, "tags": [f"t{_rng.randrange(50)}" for _ in range(5)],
         "address": {"city": "Prague", "zip": f"{_rng.randrange(10000, 99999)}", "note": "caf\u00e9 \u2603"}}
        for i in range(300)
    ],
    "meta": {"version": 3, "generated": "2026-11-22T00:00:00Z"},
}
TEXT = simplejson.dumps(DOC)


def dumps():
    simplejson.dumps(DOC)


def loads():
    simplejson.loads(TEXT)


def dumps_sorted_indent():
    simplejson.dumps(DOC, sort_keys=True, indent=2)
