/* System-call and file-I/O bound: small pwrite/pread pairs on a file in the temporary folder
 * (the page cache, no fsync).  Noise: the kernel's entry and exit costs, the file system's
 * locks, and other processes' I/O. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    const char *it = getenv("REGBENCH_ITERATIONS"), *work = getenv("WORK"), *tmp = getenv("TMPDIR");
    int iterations = it ? atoi(it) : 20;
    long n = (long)(9.0e3 * (work ? atof(work) : 1.0));
    char path[4096];
    snprintf(path, sizeof path, "%s/regbench-syscalls-XXXXXX", tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return 2;
    unlink(path);
    char block[512], back[512];
    memset(block, 'x', sizeof block);
    long total = 0;
    for (int i = 0; i < iterations; i++) {
        double t0 = now();
        for (long k = 0; k < n; k++) {
            off_t at = (off_t)(k % 64) * (off_t)sizeof block;
            total += pwrite(fd, block, sizeof block, at);
            total += pread(fd, back, sizeof back, at);
        }
        double t1 = now();
        printf("%.9g\n", t1 - t0);
    }
    close(fd);
    return total == 42 ? 1 : 0;
}
