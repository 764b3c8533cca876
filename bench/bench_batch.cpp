// SPDX-License-Identifier: MIT
// K chains in one call (include/sgmcmc/batch/batch.hpp) against K separate sampler.step calls on
// the same streams: ns per K-chain step, thread CPU time, both loops in the same run (half of the
// separate steps before the batch, half after). The chains of both loops must end bit-identical,
// which the bench checks (a row fails otherwise). docs/chains.md shows the table.

// GCC 12 with -march=native on AVX-512 warns inside its own intrinsic headers when Eigen uses
// _mm512_undefined_* (GCC bug 105593, a false positive); with -Werror that fails the build.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include <time.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "sgmcmc/batch/batch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/parallel/chains.hpp"
#include "sgmcmc/sgmcmc.hpp"
#if SGMCMC_BENCH_TBB
#include "sgmcmc/parallel/tbb.hpp"
#endif

namespace {

/// CPU time of the calling thread in ns (time descheduled on a shared machine left out).
std::int64_t thread_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// U = θᵀθ/2, g = θ (bench_step's model): the sampler's own work is what is timed.
struct Quadratic {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    g = theta;
  }
};
/// The same with the batch hook: every chain's gradient in one call (the K × d view).
struct QuadraticBatched : Quadratic {
  template <class Theta, class Grad>
  void batch_gradient(const Theta& theta, Grad& g) const noexcept {
    g = theta;
  }
};

template <class S, int K, class Model>
[[gnu::noinline, gnu::flatten]] std::int64_t run_batch(const sgmcmc::Batch<S, K>& batch,
                                                       typename sgmcmc::Batch<S, K>::State& z,
                                                       const Model& model,
                                                       std::array<sgmcmc::host::Rng, K>& rngs,
                                                       std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  std::int64_t failures = 0;
  for (std::int64_t i = 0; i < count; ++i) failures += batch.step(z, model, rngs).failures();
  return failures;
}

template <class S, int K>
[[gnu::noinline, gnu::flatten]] std::int64_t run_separate(const S& sampler, typename S::State* z,
                                                          std::array<sgmcmc::host::Rng, K>& rngs,
                                                          std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  const Quadratic model;
  std::int64_t failures = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    for (int k = 0; k < K; ++k) failures += sampler.step(z[k], model, rngs[k]) ? 0 : 1;
  }
  return failures;
}

template <class F>
std::int64_t timed(F&& f) {
  const std::int64_t t0 = thread_ns();
  f();
  return thread_ns() - t0;
}

/// K chains of S: the batch (Hooked: with the model's batch_gradient) against K separate steps.
/// Counters per K-chain step: batch_ns, separate_ns, ratio = batch/separate.
template <class S, int K, bool Hooked, bool Cold = false>
void BM_Batch(benchmark::State& state) {
  using Scalar = typename S::Scalar;
  using Model = std::conditional_t<Hooked, QuadraticBatched, Quadratic>;
  constexpr int d = S::dim;
  S sampler{};
  // Cold: T = 0, no normals drawn (what the step costs without its noise).
  if (Cold && !sampler.set_temperature(Scalar(0))) {
    state.SkipWithError("set_temperature");
    return;
  }
  const sgmcmc::Batch<S, K> batch(sampler);
  auto z = std::make_unique<typename sgmcmc::Batch<S, K>::State>();
  auto single = std::make_unique<typename S::State[]>(K);
  const sgmcmc::Vector<Scalar, d> theta0 = sgmcmc::Vector<Scalar, d>::Constant(Scalar(0.5));
  static_cast<void>(batch.start(*z, theta0));
  for (int k = 0; k < K; ++k) static_cast<void>(sampler.start(single[k], theta0));
  auto rngs = sgmcmc::host::chain_streams<K>(20240611u);
  auto rngs_separate = rngs;
  const Model model;

  const std::int64_t first = state.max_iterations / 2;
  std::int64_t separate_time =
      timed([&] { run_separate<S, K>(sampler, single.get(), rngs_separate, first); });
  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(16)) failures += run_batch<S, K>(batch, *z, model, rngs, 16);
  const std::int64_t batch_time = thread_ns() - t0;
  const auto iters = static_cast<std::int64_t>(state.iterations());
  separate_time +=
      timed([&] { run_separate<S, K>(sampler, single.get(), rngs_separate, iters - first); });

  bool identical = failures == 0;
  for (int k = 0; k < K; ++k) {
    typename S::State c;
    z->get(k, c);
    identical = identical && c == single[k];
  }
  if (!identical) {
    state.SkipWithError("the batch and the separate chains differ");
    return;
  }
  const auto units = static_cast<double>(iters);
  state.counters["batch_ns"] = static_cast<double>(batch_time) / units;
  state.counters["separate_ns"] = static_cast<double>(separate_time) / units;
  state.counters["ratio"] = static_cast<double>(batch_time) / static_cast<double>(separate_time);
  state.counters["interleaved"] = batch.fused() ? 1 : 0;
}

#define SGMCMC_BENCH_BATCH(S, T, D, K)                                                   \
  BENCHMARK(BM_Batch<sgmcmc::S<T, D>, K, true>)->Name(#S "/" #T "/" #D "/K" #K "/hook"); \
  BENCHMARK(BM_Batch<sgmcmc::S<T, D>, K, false>)->Name(#S "/" #T "/" #D "/K" #K "/chain")

SGMCMC_BENCH_BATCH(SGHMC, float, 2, 8);
SGMCMC_BENCH_BATCH(SGHMC, float, 8, 8);
SGMCMC_BENCH_BATCH(SGHMC, float, 32, 8);
SGMCMC_BENCH_BATCH(SGHMC, double, 2, 8);
SGMCMC_BENCH_BATCH(SGHMC, double, 8, 8);
SGMCMC_BENCH_BATCH(SGHMC, double, 32, 8);
SGMCMC_BENCH_BATCH(SGLD, float, 2, 8);
SGMCMC_BENCH_BATCH(SGLD, float, 8, 8);
SGMCMC_BENCH_BATCH(SGHMC, float, 2, 4);
SGMCMC_BENCH_BATCH(SGHMC, float, 2, 16);
SGMCMC_BENCH_BATCH(SGNHT, float, 2, 8);
BENCHMARK(BM_Batch<sgmcmc::SGHMC<float, 2>, 8, true, true>)->Name("SGHMC/float/2/K8/hook/T0");
BENCHMARK(BM_Batch<sgmcmc::SGHMC<float, 8>, 8, true, true>)->Name("SGHMC/float/8/K8/hook/T0");

// ---------------------------------------------------------------- chains across threads
// Four chains of SGHMC double on a logistic regression (N = 2000 rows, d = 8: the size of the LR
// experiment's data sets), 200 burn-in + 2000 draws each, by Chains::run on OpenMP and by the
// oneTBB executor, 1 and 2 threads. Wall time (the threads run concurrently); speed-up = the
// 1-thread row over the 2-thread row of the same executor. The chains' results are the same in
// every row (test_parallel); the bench checks that the run finished.

constexpr int kLrRows = 2000;
constexpr int kLrDim = 8;
using LrModel = sgmcmc::LogisticRegression<double, kLrDim>;
using LrSampler = sgmcmc::SGHMC<double, kLrDim>;
using LrChains = sgmcmc::Chains<LrSampler, 4, sgmcmc::host::Rng>;

/// Synthetic data: x_i ~ N(0, I) with an intercept column, y_i ~ Bernoulli(σ(x_iᵀβ*)).
const LrModel& lr_model() {
  static double x[kLrRows * kLrDim];
  static int y[kLrRows];
  static const bool filled = [] {
    sgmcmc::host::Rng rng(7, 0);
    for (int i = 0; i < kLrRows; ++i) {
      double eta = 0;
      for (int j = 0; j < kLrDim; ++j) {
        double v = 1.0;
        if (j > 0) sgmcmc::fill_normal(rng, &v, 1);
        x[i * kLrDim + j] = v;
        eta += v * (j % 2 == 0 ? 0.5 : -0.25);
      }
      const double u = double(rng() >> 11) * 0x1.0p-53;
      y[i] = u < sgmcmc::sigmoid(eta) ? 1 : 0;
    }
    return true;
  }();
  static_cast<void>(filled);
  static const LrModel model(x, y, kLrRows);
  return model;
}

template <bool Tbb>
void BM_Threads(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  LrSampler::Params p;
  p.step_size = 0.002;
  p.friction = 10.0;
  const LrSampler sampler(p);
  auto run = std::make_unique<LrChains>(sgmcmc::host::chain_streams<4>(20261125u));
  bool ok = true;
  for (auto _ : state) {
    state.PauseTiming();
    run->rng = sgmcmc::host::chain_streams<4>(20261125u);
    static_cast<void>(run->start(sampler, sgmcmc::Vector<double, kLrDim>::Zero()));
    state.ResumeTiming();
    if constexpr (Tbb) {
#if SGMCMC_BENCH_TBB
      run->run_with(sgmcmc::TbbExecutor{threads}, sampler, lr_model(), 200, 2000);
#endif
    } else {
      run->run(sampler, lr_model(), 200, 2000, threads);
    }
    for (int k = 0; k < 4; ++k) ok = ok && run->status[k];
  }
  if (!ok) state.SkipWithError("a chain failed");
  state.counters["rhat_max"] = run->summary().rhat.maxCoeff();
}
#if defined(_OPENMP)
BENCHMARK(BM_Threads<false>)
    ->Name("Threads/LR/K4/openmp")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
#endif
#if SGMCMC_BENCH_TBB
BENCHMARK(BM_Threads<true>)
    ->Name("Threads/LR/K4/tbb")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace

int main(int argc, char** argv) {
#if defined(__SSE__) || defined(__x86_64__)
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ, as bench_step
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
