// SPDX-License-Identifier: MIT
// The online V̂ estimate for large d (data/gradient_noise.hpp): GradientNoiseEstimatorMap equals
// the by-value estimator; the sub-batch form is unbiased for the exact minibatch covariance
// (Monte Carlo tolerance, negative controls); and at the network's size (d = 79 510, memory in
// static storage) it hands SGHMC a V̂ by reference, clipped to the limit, without heap.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "alloc_counter.hpp"
#include "local_rng.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "stats.hpp"

using sgmcmc::GradientNoiseEstimator;
using sgmcmc::GradientNoiseEstimatorMap;
using sgmcmc::Vector;
using sgmcmc_test::LocalRng;

namespace {

/// A model with zero gradient: a step moves only by friction and injected noise.
struct Flat {
  template <class Theta, class Grad>
  void gradient(const Theta&, Grad& g) const noexcept {
    g.setZero();
  }
};

}  // namespace

TEST_CASE("GradientNoiseEstimatorMap equals the by-value estimator, apply included") {
  constexpr int D = 4;
  GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.25;
  GradientNoiseEstimator<double, D> owned(p);
  alignas(sgmcmc::kAlignBytes) double memory[GradientNoiseEstimatorMap<double, D>::storage_size];
  GradientNoiseEstimatorMap<double, D> mapped(memory, p);
  LocalRng rng(1);
  for (int batch = 0; batch < 7; ++batch) {
    owned.begin_batch();
    mapped.begin_batch();
    for (int i = 0; i < 5; ++i) {
      Vector<double, D> a;
      sgmcmc::fill_normal(rng, a.data(), D);
      a *= double(batch + 1);
      owned.add(a);
      mapped.add(a);
    }
    const bool sub = batch % 2 == 1;
    CHECK((sub ? owned.end_subbatches(100, 3) : owned.end_batch(100)) ==
          (sub ? mapped.end_subbatches(100, 3) : mapped.end_batch(100)));
    for (int i = 0; i < D; ++i) {
      CHECK(owned.estimate()[i] == mapped.estimate()[i]);
      CHECK(owned.last_batch()[i] == mapped.last_batch()[i]);
    }
  }
  CHECK(owned.batches() == mapped.batches());

  sgmcmc::SGHMC<double, D>::Params sp;
  sp.step_size = 0.5;
  sp.friction = 2.0;
  sgmcmc::SGHMC<double, D> a(sp), b(sp);
  const double limit = sgmcmc::momentum_noise_limit(0.5, 2.0);  // just under 2C/h = 8
  REQUIRE(owned.apply(a, Vector<double, D>::Constant(limit)));
  REQUIRE(mapped.apply(b, limit));
  for (int i = 0; i < D; ++i) {
    CHECK(a.gradient_noise()[i] == b.gradient_noise()[i]);
    CHECK(mapped.applied_values()[i] == b.gradient_noise()[i]);
    CHECK(b.gradient_noise()[i] <= limit);
  }
  CHECK(owned.limited_coordinates() == mapped.limited_coordinates());
  CHECK(mapped.limited_coordinates() > 0);
  // The sampler reads the hand-over vector by reference.
  CHECK(b.gradient_noise().data() == mapped.applied_values().data());
}

TEST_CASE("end_subbatches is unbiased for the exact minibatch covariance (negative controls)") {
  // A finite population of N = 40 per-example gradients a_i ∈ R³ (fixed: the gradient at one θ)
  // and a prior gradient. A batch of n = 12 rows without replacement is split into K = 4
  // sub-batches of m = 3; each sub-batch gradient is g_k = (N/m) Σ_{i∈k} a_i + prior. The batch
  // gradient (their mean) has the exact diagonal covariance V = N(N − n)/n · S² (MATH.md §5.3(b)).
  // Each batch's estimate (1 − n/N)/K · s²(g) is unbiased, so over B = 40000 batches (running
  // mean, λ = 0) |V̂_j − V_j| < 5 sd_j/√B (sd_j: the sample sd of the per-batch estimates).
  // Negative controls that must fail the same check: (a) no finite-population correction (the
  // factor 1/K · s², 1/(1 − n/N) = 1.43 too large); (b) end_batch's per-example formula applied
  // to the sub-batch gradients.
  constexpr int D = 3;
  constexpr int N = 40, n = 12, K = 4, m = 3;
  LocalRng rng(7);
  std::vector<Vector<double, D>> a(N);
  Vector<double, D> mean = Vector<double, D>::Zero();
  for (auto& x : a) {
    sgmcmc::fill_normal(rng, x.data(), D);
    x = x.cwiseProduct(Vector<double, D>(1.0, 3.0, 0.2));
    mean += x / N;
  }
  Vector<double, D> s2 = Vector<double, D>::Zero();
  for (const auto& x : a) s2 += (x - mean).cwiseAbs2() / (N - 1);
  const Vector<double, D> exact = double(N) * (N - n) / n * s2;
  const Vector<double, D> prior(0.5, -1.0, 2.0);

  GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.0;
  GradientNoiseEstimator<double, D> est(p), per_example(p);
  const int batches = 40000;
  std::vector<sgmcmc::test::RunningMoments> spread(D), uncorrected(D);
  std::vector<std::uint32_t> order(N);
  for (int i = 0; i < N; ++i) order[i] = std::uint32_t(i);
  for (int b = 0; b < batches; ++b) {
    for (int k = 0; k < n; ++k) {  // a uniformly random n-subset, in random order
      std::uint32_t u = 0;
      REQUIRE(sgmcmc::uniform_below(rng, std::uint32_t(N - k), u) == sgmcmc::StatusCode::Ok);
      std::swap(order[k], order[k + int(u)]);
    }
    est.begin_batch();
    per_example.begin_batch();
    for (int k = 0; k < K; ++k) {
      Vector<double, D> g = Vector<double, D>::Zero();
      for (int i = 0; i < m; ++i) g += a[order[k * m + i]];
      g = double(N) / m * g + prior;
      est.add(g);
      per_example.add(g);
    }
    REQUIRE(est.end_subbatches(N, m));
    REQUIRE(per_example.end_batch(N));
    for (int j = 0; j < D; ++j) {
      spread[j].add(est.last_batch()[j]);
      uncorrected[j].add(est.last_batch()[j] / (1.0 - double(n) / N));
    }
  }
  for (int j = 0; j < D; ++j) {
    const double tol = 5 * std::sqrt(spread[j].variance() / batches);
    CHECK(std::fabs(est.estimate()[j] - exact[j]) < tol);
    CHECK(std::fabs(spread[j].mean() - exact[j]) < tol);
    CHECK_FALSE(std::fabs(uncorrected[j].mean() - exact[j]) < tol);
    CHECK_FALSE(std::fabs(per_example.estimate()[j] - exact[j]) < tol);
  }
  // Refusals leave V̂ unchanged: one sub-batch, rows_per_subbatch 0, N below n, non-finite.
  const Vector<double, D> kept = est.estimate();
  est.begin_batch();
  est.add(prior);
  CHECK_FALSE(est.end_subbatches(N, m));
  est.add(prior);
  est.add(prior);
  CHECK_FALSE(est.end_subbatches(N, 0));
  est.add(prior);
  est.add(prior);
  CHECK_FALSE(est.end_subbatches(5, m));
  est.add(prior);
  est.add(Vector<double, D>::Constant(std::numeric_limits<double>::infinity()));
  CHECK_FALSE(est.end_subbatches(N, m));
  CHECK(est.estimate() == kept);
}

namespace {
constexpr int kNet = 79510;  // the 784-100-10 network's weights
alignas(sgmcmc::kAlignBytes) float g_noise[GradientNoiseEstimatorMap<float, kNet>::storage_size];
alignas(sgmcmc::kAlignBytes) float g_state[sgmcmc::SGHMC<float, kNet>::StateMap::storage_size];
alignas(sgmcmc::kAlignBytes) float g_sub[kNet];
}  // namespace

TEST_CASE("At d = 79 510: V̂ in static memory, clipped to 2C/h, read by SGHMC, no heap") {
  using S = sgmcmc::SGHMC<float, kNet>;
  S sampler(sgmcmc::SGHMCParams<float>::from_momentum_sgd(2e-6f, 0.01f));  // limit 2C/h = 1e4
  const float limit = sgmcmc::momentum_noise_limit(sampler.step_size(), sampler.params().friction);
  CHECK(limit == doctest::Approx(1e4).epsilon(1e-5));
  GradientNoiseEstimatorMap<float, kNet> est(g_noise);
  // Every vector the estimator views through an aligned map starts on an alignment boundary
  // (79 510 floats is not a whole number of alignment units: packed vectors would not).
  for (const float* p :
       {est.estimate().data(), est.last_batch().data(), est.applied_values().data()}) {
    CHECK(reinterpret_cast<std::uintptr_t>(p) % std::uintptr_t(sgmcmc::kAlignBytes) == 0);
  }
  S::StateMap z(g_state);
  REQUIRE(sampler.start(z, sgmcmc::ConstVectorMap<float, kNet>(g_sub)));  // θ₀ = 0 (static)
  LocalRng rng(3);
  sgmcmc::VectorMap<float, kNet> sub(g_sub);
  sgmcmc_test::AllocationScope scope;
  // Sub-batch gradients ±s_i around a common value: s²(g) = s_i² · K/(K − 1) over K = 2, so
  // V_batch = (1 − n/N)/2 · 2 s_i² = (1 − n/N) s_i²; s_i grows with i so the tail is clipped.
  for (int rep = 0; rep < 3; ++rep) {
    est.begin_batch();
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < kNet; ++i) sub[i] = 1.0f + (k == 0 ? 1.0f : -1.0f) * 0.002f * float(i);
      est.add(sub);
    }
    REQUIRE(est.end_subbatches(60000, 250));
    REQUIRE(est.apply(sampler, limit));
    REQUIRE(sampler.step(z, Flat{}, rng));
  }
  CHECK(scope.count() == 0);
  const double fpc = 1.0 - 500.0 / 60000.0;
  const auto v = est.estimate();
  CHECK(v[1000] == doctest::Approx(fpc * 4.0).epsilon(1e-4));  // (0.002 · 1000)² = 4
  CHECK(v[kNet - 1] > limit);
  const auto applied = est.applied_values();
  CHECK(applied[1000] == v[1000]);
  CHECK(applied[kNet - 1] == limit);
  CHECK(est.limited_steps() == 3);
  // Coordinates with 0.002 i sqrt(fpc) > 100 are clipped: i ≥ 50 210.
  CHECK(est.limited_coordinates() == 3u * std::uint64_t(kNet - 50210));
  CHECK(z.all_finite());
}
