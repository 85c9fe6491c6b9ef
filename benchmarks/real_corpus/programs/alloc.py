"""Allocation-heavy Python: build and drop many small objects, so the allocator and the cyclic
garbage collector do most of the work.  Noise: the collector's timing, memory layout, the
interpreter's own start."""
import os
import time

iterations = int(os.environ.get("REGBENCH_ITERATIONS", "20"))
n = int(20000 * float(os.environ.get("WORK", "1")))
for _ in range(iterations):
    t0 = time.perf_counter()
    objects = [{"key": k, "pair": (k, str(k)), "list": [k, k + 1]} for k in range(n)]
    index = {}
    for o in objects:
        index[o["key"] % 997] = o
    del objects, index
    print(repr(time.perf_counter() - t0))
