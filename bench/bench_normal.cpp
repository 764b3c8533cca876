// SPDX-License-Identifier: MIT
// Standard-normal fill speed: host::Rng::fill_normal against std::normal_distribution with
// std::mt19937_64 and the core's portable Box-Muller, for float and double vectors.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

// Every benchmark fills one fixed-size vector per iteration; items = normals, so the reported
// items_per_second inverts to ns per normal.
template <class Scalar, int N>
void BM_host(benchmark::State& state) {
  sgmcmc::host::Rng rng(1);
  Eigen::Matrix<Scalar, N, 1> v;
  for (auto _ : state) {
    rng.fill_normal(v);
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

template <class Scalar, int N>
void BM_std(benchmark::State& state) {
  std::mt19937_64 gen(1);
  std::normal_distribution<Scalar> dist;
  Eigen::Matrix<Scalar, N, 1> v;
  for (auto _ : state) {
    for (int i = 0; i < N; ++i) v[i] = dist(gen);
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

template <class Scalar, int N>
void BM_portable(benchmark::State& state) {
  sgmcmc::host::Rng rng(1);
  Eigen::Matrix<Scalar, N, 1> v;
  for (auto _ : state) {
    sgmcmc::fill_normal_portable(rng, v);
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * N);
}

void BM_construct(benchmark::State& state) {
  std::uint64_t seed = 0;
  for (auto _ : state) {
    sgmcmc::host::Rng rng(++seed);
    benchmark::DoNotOptimize(&rng);
  }
}

}  // namespace

#define SGMCMC_BENCH_NORMAL(Scalar, N)    \
  BENCHMARK_TEMPLATE(BM_host, Scalar, N); \
  BENCHMARK_TEMPLATE(BM_std, Scalar, N);  \
  BENCHMARK_TEMPLATE(BM_portable, Scalar, N)

SGMCMC_BENCH_NORMAL(float, 2);
SGMCMC_BENCH_NORMAL(float, 8);
SGMCMC_BENCH_NORMAL(float, 32);
SGMCMC_BENCH_NORMAL(float, 100);
SGMCMC_BENCH_NORMAL(float, 128);
SGMCMC_BENCH_NORMAL(float, 1024);
SGMCMC_BENCH_NORMAL(double, 2);
SGMCMC_BENCH_NORMAL(double, 8);
SGMCMC_BENCH_NORMAL(double, 32);
SGMCMC_BENCH_NORMAL(double, 100);
SGMCMC_BENCH_NORMAL(double, 128);
SGMCMC_BENCH_NORMAL(double, 1024);
BENCHMARK(BM_construct);

BENCHMARK_MAIN();
