// SPDX-License-Identifier: MIT
// ns/step of the toolkit's samplers against their nearest relatives (issue 12 item 4):
// constant-metric SGRHMC against SGRHMC given the same constant metric as a callable (automatic
// differentiation finds Γ = 0 on the general path), pSGLD with and without Γ against SGLD with a
// diagonal D₀, and the IMQ KSD per kernel evaluation. U = θᵀθ/2 (g = θ, Hessian diagonal 1), so
// that the timing is the sampler's own work. docs/samplers/constant-metric.md and psgld.md quote
// it.

// GCC 12 with -march=native warns inside its own intrinsic headers (bug 105593), as in bench_step.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <new>
#include <vector>

#include "sgmcmc/diagnostics/ksd.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/psgld.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrhmc_constant.hpp"

namespace {

/// U = θᵀθ/2: g = θ, ∂²U/∂θ_i² = 1.
struct Quadratic {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    g = theta;
  }
  template <class Theta, class Out>
  void hessian_diagonal(const Theta&, Out& h) const noexcept {
    h.setOnes();
  }
};

/// G⁻¹ = diag(0.5 + i mod 7 / 10) as a callable of θ that ignores θ: SGRHMC's way of saying it.
struct ConstInverse {
  template <class T, int N>
  sgmcmc::Vector<T, N> operator()(const sgmcmc::Vector<T, N>&) const noexcept {
    sgmcmc::Vector<T, N> v;
    for (int i = 0; i < N; ++i) v[i] = T(0.5 + 0.1 * (i % 7));
    return v;
  }
};

/// A dense symmetric positive definite G⁻¹ = 0.3 I + BBᵀ/N (B fixed) as a callable of θ that
/// ignores θ.
struct ConstDenseInverse {
  template <class T, int N>
  sgmcmc::Matrix<T, N, N> operator()(const sgmcmc::Vector<T, N>&) const noexcept {
    sgmcmc::Matrix<double, N, N> b;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) b(i, j) = std::sin(1.0 + i + 2.0 * j);
    }
    const sgmcmc::Matrix<double, N, N> a =
        b * b.transpose() / N + 0.3 * sgmcmc::Matrix<double, N, N>::Identity();
    return a.template cast<T>();
  }
};

/// Aligned storage allocated before timing (a state for large d lives here, viewed by a StateMap).
template <class T>
struct Buffer {
  explicit Buffer(std::size_t n)
      : p(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t(64)))) {
    for (std::size_t i = 0; i < n; ++i) p[i] = T(0);
  }
  ~Buffer() { ::operator delete[](p, std::align_val_t(64)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* p;
};

/// Times sampler.step on a StateMap over a Buffer, started at θ = 0.5.
template <class Sampler>
void run_steps(benchmark::State& state, const Sampler& sampler) {
  using S = typename Sampler::Scalar;
  constexpr int d = Sampler::dim;
  Buffer<S> memory(Sampler::StateMap::storage_size);
  Buffer<S> theta0(d);
  for (int i = 0; i < d; ++i) theta0.p[i] = S(0.5);
  typename Sampler::StateMap z(memory.p);
  if (!sampler.start(z, sgmcmc::ConstVectorMap<S, d>(theta0.p))) {
    state.SkipWithError("start failed");
    return;
  }
  sgmcmc::host::Rng rng(1);
  const Quadratic model;
  for (auto _ : state) {
    const sgmcmc::Status s = sampler.step(z, model, rng);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(memory.p);
  }
  state.counters["ns/coord"] = benchmark::Counter(
      double(state.iterations()) * d, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ------------------------------------------------------------------ constant-metric SGRHMC
template <class S, int D>
void BM_SGRHMC_callable_metric(benchmark::State& state) {
  using Metric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, ConstInverse, true>;
  run_steps(state, sgmcmc::SGRHMC<S, D, Metric>({S(0.05), Metric{}, {}}));
}
template <class S, int D>
void BM_ConstantMetricSGRHMC_diagonal(benchmark::State& state) {
  sgmcmc::Diagonal<S, D> ginv;
  ginv.value = ConstInverse{}(sgmcmc::Vector<S, D>::Zero().eval());
  run_steps(state, sgmcmc::ConstantMetricSGRHMC<S, D>({S(0.05), ginv}));
}
template <class S, int D>
void BM_ConstantMetricSGRHMC_map(benchmark::State& state) {
  static std::vector<S> values(D);
  for (int i = 0; i < D; ++i) values[std::size_t(i)] = S(0.5 + 0.1 * (i % 7));
  run_steps(state, sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::DiagonalMap<S, D>>(
                       {S(0.05), sgmcmc::DiagonalMap<S, D>{values.data()}}));
}
template <class S, int D>
void BM_SGRHMC_callable_dense_metric(benchmark::State& state) {
  using Metric = sgmcmc::InverseMetric<sgmcmc::DenseShape, ConstDenseInverse>;
  run_steps(state, sgmcmc::SGRHMC<S, D, Metric>({S(0.02), Metric{}, {}}));
}
template <class S, int D>
void BM_ConstantMetricSGRHMC_dense(benchmark::State& state) {
  sgmcmc::Dense<S, D, D> ginv;
  ginv.value = ConstDenseInverse{}(sgmcmc::Vector<S, D>::Zero().eval());
  run_steps(state, sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Dense<S, D, D>>({S(0.02), ginv}));
}
BENCHMARK_TEMPLATE(BM_SGRHMC_callable_metric, double, 5);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_diagonal, double, 5);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_map, double, 5);
BENCHMARK_TEMPLATE(BM_SGRHMC_callable_metric, double, 50);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_diagonal, double, 50);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_map, double, 50);
BENCHMARK_TEMPLATE(BM_SGRHMC_callable_metric, double, 500);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_diagonal, double, 500);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_map, double, 500);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_map, float, 100000);
BENCHMARK_TEMPLATE(BM_SGRHMC_callable_dense_metric, double, 5);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_dense, double, 5);
BENCHMARK_TEMPLATE(BM_SGRHMC_callable_dense_metric, double, 20);
BENCHMARK_TEMPLATE(BM_ConstantMetricSGRHMC_dense, double, 20);

// ------------------------------------------------------------------ pSGLD
template <class S, int D>
void BM_SGLD_diagonal_map(benchmark::State& state) {
  static std::vector<S> values(D, S(0.7));
  run_steps(state, sgmcmc::SGLD<S, D, sgmcmc::DiagonalMap<S, D>>(
                       {S(1e-3), sgmcmc::DiagonalMap<S, D>{values.data()}}));
}
template <class S, int D>
void BM_PSGLD(benchmark::State& state) {
  run_steps(state, sgmcmc::PSGLD<S, D>({S(1e-3), S(0.99), S(1e-5)}));
}
template <class S, int D>
void BM_NaivePSGLD(benchmark::State& state) {
  run_steps(state, sgmcmc::NaivePSGLD<S, D>({S(1e-3), S(0.99), S(1e-5)}));
}
BENCHMARK_TEMPLATE(BM_SGLD_diagonal_map, double, 5);
BENCHMARK_TEMPLATE(BM_NaivePSGLD, double, 5);
BENCHMARK_TEMPLATE(BM_PSGLD, double, 5);
BENCHMARK_TEMPLATE(BM_SGLD_diagonal_map, float, 1000);
BENCHMARK_TEMPLATE(BM_NaivePSGLD, float, 1000);
BENCHMARK_TEMPLATE(BM_PSGLD, float, 1000);
BENCHMARK_TEMPLATE(BM_SGLD_diagonal_map, float, 100000);
BENCHMARK_TEMPLATE(BM_NaivePSGLD, float, 100000);
BENCHMARK_TEMPLATE(BM_PSGLD, float, 100000);

// ------------------------------------------------------------------ KSD
/// Time of ksd_imq over n samples of dimension d, reported per kernel evaluation (n(n+1)/2).
void BM_KSD_imq(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  std::vector<double> x(n * d), s(n * d);
  sgmcmc::host::Rng rng(3);
  sgmcmc::fill_normal(rng, x.data(), static_cast<sgmcmc::Index>(n * d));
  for (std::size_t i = 0; i < n * d; ++i) s[i] = -x[i];
  for (auto _ : state) {
    const auto e = sgmcmc::ksd_imq(x.data(), s.data(), n, d);
    benchmark::DoNotOptimize(e);
  }
  state.counters["ns/pair"] =
      benchmark::Counter(double(state.iterations()) * double(n) * double(n + 1) / 2,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_KSD_imq)->Args({1000, 2})->Args({1000, 10})->Args({2000, 100});

}  // namespace

BENCHMARK_MAIN();
