package regbench.golden;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** A tiny parametrised benchmark whose only job is to make JMH write its JSON. */
@State(Scope.Benchmark)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class SumBench {

    @Param({"10", "100"})
    public int size;

    private int[] data;

    @Setup
    public void setup() {
        data = new int[size];
        for (int i = 0; i < size; i++) {
            data[i] = i * 31 + 7;
        }
    }

    @Benchmark
    public long sum() {
        long s = 0;
        for (int v : data) {
            s += v;
        }
        return s;
    }
}
