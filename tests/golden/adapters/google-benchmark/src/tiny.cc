// Two tiny Google Benchmark benchmarks whose JSON output is regbench's golden file.
#include <benchmark/benchmark.h>

#include <numeric>
#include <string>
#include <vector>

static void BM_Accumulate(benchmark::State& state) {
  std::vector<int> v(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) {
    int s = std::accumulate(v.begin(), v.end(), 0);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["elements"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Accumulate)->Arg(64)->Arg(512);

static void BM_StringCopy(benchmark::State& state) {
  std::string src(256, 'x');
  for (auto _ : state) {
    std::string copy(src);
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
  state.counters["rate"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StringCopy)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
