// JIT and garbage collection: a map of short-lived arrays, rebuilt every iteration.  Noise: the
// JIT compiles the loop during the first iterations (warm-up), and the collector runs when
// the young generation fills, at different iterations in different runs.
import java.util.HashMap;

public class Gc {
    public static void main(String[] args) {
        int iterations = Integer.parseInt(System.getenv().getOrDefault("REGBENCH_ITERATIONS", "20"));
        int n = (int) (1500000 * Double.parseDouble(System.getenv().getOrDefault("WORK", "1")));
        long sink = 0;
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            HashMap<Integer, int[]> map = new HashMap<>();
            for (int k = 0; k < n; k++) {
                int[] value = new int[8];
                value[k & 7] = k;
                map.put(k & 0x3fff, value);
            }
            sink += map.size();
            long t1 = System.nanoTime();
            System.out.println((t1 - t0) * 1e-9);
        }
        if (sink == 42) System.out.println();
    }
}
