/* CPU-bound: a dependent chain of xorshift steps, no memory traffic.  Noise: a floor set by the
 * core's clock, plus whatever else the machine runs (right-skewed interference). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    const char *it = getenv("REGBENCH_ITERATIONS"), *work = getenv("WORK");
    int iterations = it ? atoi(it) : 20;
    long n = (long)(5.5e6 * (work ? atof(work) : 1.0));
    uint64_t x = 88172645463325252ULL, sink = 0;
    for (int i = 0; i < iterations; i++) {
        double t0 = now();
        for (long k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        double t1 = now();
        sink += x;
        printf("%.9g\n", t1 - t0);
    }
    return sink == 42 ? 1 : 0;
}
