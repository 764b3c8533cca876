// SPDX-License-Identifier: MIT
// Standard-normal fill speed, in one binary: host::Rng::fill_normal on every kernel this CPU runs
// (the run-time choice, and each forced), the bench's own floor generator (floor.c),
// std::normal_distribution with std::mt19937_64, and the core's portable Box-Muller, for float
// and double. Ends with one markdown table of ns per normal and the speed-up over std.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "floor.h"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

using sgmcmc::host::Isa;
using sgmcmc::host::Rng;

// Every benchmark fills N normals per iteration; items = normals, so items_per_second inverts to
// ns per normal. Arg: -1 the run-time choice, else an Isa (skipped when the CPU lacks it).
template <class Scalar, int N>
void BM_host(benchmark::State& state) {
  Rng rng(1);
  if (state.range(0) >= 0 && !rng.set_isa(static_cast<Isa>(state.range(0)))) {
    state.SkipWithError("kernel not supported on this CPU");
    return;
  }
  alignas(64) Scalar v[N];
  for (auto _ : state) {
    rng.fill_normal(v, static_cast<std::size_t>(N));
    benchmark::DoNotOptimize(v);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

template <class Scalar, int N>
void BM_floor(benchmark::State& state) {
  FloorRng rng;
  floor_rng_init(&rng, 1);
  alignas(64) Scalar v[N];
  for (auto _ : state) {
    if constexpr (sizeof(Scalar) == 4) {
      floor_normals_f(&rng, v, N);
    } else {
      floor_normals_d(&rng, v, N);
    }
    benchmark::DoNotOptimize(v);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

template <class Scalar, int N>
void BM_std(benchmark::State& state) {
  std::mt19937_64 gen(1);
  std::normal_distribution<Scalar> dist;
  Scalar v[N];
  for (auto _ : state) {
    for (int i = 0; i < N; ++i) v[i] = dist(gen);
    benchmark::DoNotOptimize(v);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

template <class Scalar, int N>
void BM_portable(benchmark::State& state) {
  Rng rng(1);
  Scalar v[N];
  for (auto _ : state) {
    sgmcmc::fill_normal_portable(rng, v, N);
    benchmark::DoNotOptimize(v);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

void BM_construct(benchmark::State& state) {
  std::uint64_t seed = 0;
  for (auto _ : state) {
    Rng rng(++seed);
    benchmark::DoNotOptimize(&rng);
  }
}

/// Console output as usual, then one markdown table: a row per (scalar, N), a column per generator,
/// in ns per normal, from the per-row medians (or the single runs).
class TableReporter : public benchmark::ConsoleReporter {
 public:
  TableReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.error_occurred || !(single || median)) continue;
      const auto it = r.counters.find("items_per_second");
      if (it == r.counters.end() || static_cast<double>(it->second) <= 0) continue;
      // Names are generator/scalar/N.
      const std::string& name = r.run_name.function_name;
      const std::size_t a = name.find('/');
      const std::size_t b = name.rfind('/');
      if (a == std::string::npos || b == a) continue;
      const std::string column = name.substr(0, a);
      const std::string row = name.substr(a + 1);
      if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(row);
      ns_[row + "|" + column] = 1e9 / static_cast<double>(it->second);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    if (rows_.empty()) return;
    static const char* const columns[] = {"run-time", "base", "avx2",    "avx512",
                                          "floor",    "std",  "portable"};
    std::FILE* out = stdout;
    std::fflush(out);
    std::fprintf(out,
                 "\n| scalar / N | host::Rng (run-time choice) | base kernel | AVX2 kernel | "
                 "AVX-512 kernel | bench floor | std::normal_distribution | core portable | "
                 "speed-up vs std |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string& row : rows_) {
      std::fprintf(out, "| %s |", row.c_str());
      for (const char* column : columns) {
        const double v = get(row, column);
        if (v > 0) {
          std::fprintf(out, " %.3f |", v);
        } else {
          std::fprintf(out, " |");
        }
      }
      const double host = get(row, "run-time");
      const double std_ns = get(row, "std");
      if (host > 0 && std_ns > 0) {
        std::fprintf(out, " %.1fx |\n", std_ns / host);
      } else {
        std::fprintf(out, " |\n");
      }
    }
    std::fflush(out);
  }

 private:
  double get(const std::string& row, const char* column) const {
    const auto it = ns_.find(row + "|" + column);
    return it == ns_.end() ? 0.0 : it->second;
  }
  std::vector<std::string> rows_;
  std::map<std::string, double> ns_;
};

}  // namespace

#define SGMCMC_BENCH_CAT2(a, b) a##b
#define SGMCMC_BENCH_CAT(a, b) SGMCMC_BENCH_CAT2(a, b)
#define SGMCMC_BENCH_ROW(Column, Function, Scalar, N)                                   \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__) \
      BENCHMARK_UNUSED =                                                                \
          ::benchmark::RegisterBenchmark(Column "/" #Scalar "/" #N, &Function<Scalar, N>)
/// host::Rng with the run-time choice (-1) and each kernel forced (an Isa; skipped when the CPU
/// lacks it), then the floor, std and the portable generator.
#define SGMCMC_BENCH_NORMAL(Scalar, N)                       \
  SGMCMC_BENCH_ROW("run-time", BM_host, Scalar, N)->Arg(-1); \
  SGMCMC_BENCH_ROW("base", BM_host, Scalar, N)->Arg(0);      \
  SGMCMC_BENCH_ROW("avx2", BM_host, Scalar, N)->Arg(1);      \
  SGMCMC_BENCH_ROW("avx512", BM_host, Scalar, N)->Arg(2);    \
  SGMCMC_BENCH_ROW("floor", BM_floor, Scalar, N);            \
  SGMCMC_BENCH_ROW("std", BM_std, Scalar, N);                \
  SGMCMC_BENCH_ROW("portable", BM_portable, Scalar, N)

SGMCMC_BENCH_NORMAL(float, 8);
SGMCMC_BENCH_NORMAL(float, 32);
SGMCMC_BENCH_NORMAL(float, 128);
SGMCMC_BENCH_NORMAL(float, 1024);
SGMCMC_BENCH_NORMAL(double, 8);
SGMCMC_BENCH_NORMAL(double, 32);
SGMCMC_BENCH_NORMAL(double, 128);
SGMCMC_BENCH_NORMAL(double, 1024);
BENCHMARK(BM_construct);

int main(int argc, char** argv) {
  std::printf("host::Rng kernel: %s\n", sgmcmc::host::to_string(sgmcmc::host::Rng::best_isa()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
