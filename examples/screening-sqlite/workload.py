"""An insert-and-query workload on SQLite through Python's sqlite3, its PRAGMAs set from the
environment (one variable per [[screen.option]] of regbench.toml).  Prints one time in seconds
per iteration (REGBENCH_ITERATIONS of them), each on a fresh database file."""

import os
import random
import sqlite3
import tempfile
import time

PRAGMAS = ("page_size", "auto_vacuum", "journal_mode", "synchronous", "cache_size", "temp_store",
           "locking_mode", "mmap_size", "foreign_keys", "secure_delete")
ROWS = int(os.environ.get("WORKLOAD_ROWS", "1000"))
BATCH = 100


def once(folder: str, seed: int) -> float:
    rng = random.Random(seed)
    path = os.path.join(folder, f"db-{seed}.sqlite")
    start = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    # page_size and auto_vacuum take effect only before the first table is created
    for name in PRAGMAS:
        value = os.environ.get("PRAGMA_" + name.upper())
        if value is not None:
            conn.execute(f"PRAGMA {name} = {value}")
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id), "
                 "score REAL, body TEXT)")
    conn.execute("CREATE INDEX item_parent ON item(parent)")
    conn.executemany("INSERT INTO parent VALUES (?, ?)", [(i, f"p{i}") for i in range(50)])
    for b in range(ROWS // BATCH):  # one transaction per batch: commits make synchronous matter
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO item (parent, score, body) VALUES (?, ?, ?)",
                         [(rng.randrange(50), rng.random(), "x" * rng.randrange(50, 400)) for _ in range(BATCH)])
        conn.execute("COMMIT")
    for _ in range(20):  # sorts on an unindexed column: temp_store and cache_size matter
        conn.execute("SELECT parent, body FROM item WHERE score > ? ORDER BY score LIMIT 200",
                     (rng.random(),)).fetchall()
    conn.execute("DELETE FROM item WHERE score < 0.5")  # secure_delete and auto_vacuum matter
    conn.close()
    elapsed = time.perf_counter() - start
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return elapsed


def main() -> None:
    n = int(os.environ.get("REGBENCH_ITERATIONS", "3"))
    with tempfile.TemporaryDirectory(prefix="sqlite-screen-") as folder:
        for i in range(n):
            print(once(folder, i))


if __name__ == "__main__":
    main()
