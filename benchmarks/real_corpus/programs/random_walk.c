/* Cache- and memory-bound: a chain of dependent loads at pseudo-random places of a 64 MiB
 * table (twice the last-level cache here), so nearly every step misses the caches and the TLB.
 * Noise: where the kernel placed the pages (it differs from process to process: random
 * initial conditions, seed 000 s.2), and what shares the memory bus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1u << 24) /* 16 Mi entries of 4 bytes */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    const char *it = getenv("REGBENCH_ITERATIONS"), *work = getenv("WORK");
    int iterations = it ? atoi(it) : 20;
    long n = (long)(9.0e4 * (work ? atof(work) : 1.0));
    uint32_t *table = malloc(sizeof(uint32_t) * N);
    if (!table) return 2;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (uint32_t k = 0; k < N; k++) { /* the same table in every run */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        table[k] = (uint32_t)x;
    }
    uint32_t idx = 12345;
    for (int i = 0; i < iterations; i++) {
        double t0 = now();
        for (long k = 0; k < n; k++) /* the step count enters too: no short cycle to settle in */
            idx = (table[idx] ^ ((uint32_t)k * 2654435761u)) & (N - 1);
        double t1 = now();
        printf("%.9g\n", t1 - t0);
    }
    free(table);
    return idx == 42 ? 1 : 0;
}
