// SPDX-License-Identifier: MIT
// Standard-normal fill speed, in one binary: host::Rng::fill_normal on every kernel this CPU runs
// (the run-time choice, and each forced), the bench's own floor generator (floor.c),
// std::normal_distribution with std::mt19937_64, and the core's portable Box-Muller, for float
// and double. scripts/bench prints the table of ns per normal and speed-ups.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

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

}  // namespace

#define SGMCMC_BENCH_NORMAL(Scalar, N)                                                     \
  BENCHMARK_TEMPLATE(BM_host, Scalar, N)->Arg(-1)->Arg(0)->Arg(1)->Arg(2);                 \
  BENCHMARK_TEMPLATE(BM_floor, Scalar, N);                                                 \
  BENCHMARK_TEMPLATE(BM_std, Scalar, N);                                                   \
  BENCHMARK_TEMPLATE(BM_portable, Scalar, N)

SGMCMC_BENCH_NORMAL(float, 8);
SGMCMC_BENCH_NORMAL(float, 32);
SGMCMC_BENCH_NORMAL(float, 128);
SGMCMC_BENCH_NORMAL(float, 1024);
SGMCMC_BENCH_NORMAL(double, 8);
SGMCMC_BENCH_NORMAL(double, 32);
SGMCMC_BENCH_NORMAL(double, 128);
SGMCMC_BENCH_NORMAL(double, 1024);
BENCHMARK(BM_construct);

BENCHMARK_MAIN();
