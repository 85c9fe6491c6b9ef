/* Multi-threaded: each iteration starts two threads that split the work and meet on a shared
 * atomic counter, then joins them.  Noise: thread start-up and scheduling on two cores that
 * other processes also want, and the contended cache line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_long shared;
static long per_thread;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *worker(void *arg) {
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1;
    for (long k = 0; k < per_thread; k++) {
        for (int j = 0; j < 32; j++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        }
        if ((k & 15) == 0) atomic_fetch_add(&shared, (long)(x & 1));
    }
    return (void *)(uintptr_t)x;
}

int main(void) {
    const char *it = getenv("REGBENCH_ITERATIONS"), *work = getenv("WORK");
    int iterations = it ? atoi(it) : 20;
    per_thread = (long)(8.0e4 * (work ? atof(work) : 1.0));
    for (int i = 0; i < iterations; i++) {
        pthread_t a, b;
        double t0 = now();
        pthread_create(&a, NULL, worker, (void *)1);
        pthread_create(&b, NULL, worker, (void *)2);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        double t1 = now();
        printf("%.9g\n", t1 - t0);
    }
    return atomic_load(&shared) == 42 ? 1 : 0;
}
