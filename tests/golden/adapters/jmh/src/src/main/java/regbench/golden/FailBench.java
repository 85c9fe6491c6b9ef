package regbench.golden;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Benchmarks that throw, for the console output JMH prints about them: it leaves them out of its
 * JSON file and exits with status 0.  {@code broken} throws in its first iteration for size 2,
 * {@code late} in its second iteration (so JMH printed a unit before the failure).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class FailBench {

    @Param({"1", "2"})
    public int size;

    private int iteration;

    @Setup(Level.Iteration)
    public void nextIteration() {
        iteration++;
    }

    @Benchmark
    public int broken() {
        if (size == 2) {
            throw new IllegalStateException("broken for size " + size);
        }
        return size * 31;
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long late() {
        if (size == 1 && iteration >= 2) {
            throw new UnsupportedOperationException("late failure", new ArithmeticException("root cause"));
        }
        return iteration;
    }
}
