// SPDX-License-Identifier: MIT
// The control-variate gradient (include/sgmcmc/data/control_variate.hpp): exact at the reference
// and on a full batch, unbiased on minibatches, its variance far below the plain minibatch
// gradient's near the mode (negative control: a reference far from the mode), its own noise
// estimate against the exact covariance, the optional difference hook, and its failure statuses.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Dense>

#include "../logreg/fixtures.hpp"
#include "local_rng.hpp"
#include "sgmcmc/data/control_variate.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

using sgmcmc::ControlVariateGradient;
using sgmcmc::GradientNoiseEstimator;
using sgmcmc::Matrix;
using sgmcmc::OwnedControlVariateGradient;
using sgmcmc::StatusCode;
using sgmcmc::Vector;
using sgmcmc_test::LocalRng;
using sgmcmc_test::SyntheticLR;

namespace {

constexpr int D = 4;
using Vec = Vector<double, D>;
using LR = sgmcmc::LogisticRegression<double, D>;

/// The posterior mode by Newton's method (H = Σ σ(1 − σ) x xᵀ + I/s²), and the Laplace
/// standard deviations √diag(H⁻¹) there.
struct Mode {
  Vec map;
  Vec sd;
};
Mode find_mode(const SyntheticLR<D>& data, double prior_sd = 10.0) {
  const LR m = data.model(prior_sd);
  Vec beta = Vec::Zero();
  Matrix<double, D, D> h;
  for (int it = 0; it < 50; ++it) {
    Vec g = Vec::Zero();
    h = Matrix<double, D, D>::Identity() / (prior_sd * prior_sd);
    for (std::size_t i = 0; i < data.rows; ++i) {
      const Eigen::Map<const Vec> x(data.x.data() + i * D);
      const double p = sgmcmc::sigmoid(x.dot(beta));
      m.add_gradient(std::uint32_t(i), beta, g);
      h += p * (1.0 - p) * x * x.transpose();
    }
    g += beta / (prior_sd * prior_sd);
    beta -= h.ldlt().solve(g);
  }
  return {beta, h.inverse().diagonal().cwiseSqrt()};
}

/// Exact diagonal covariance of the batch-of-n estimate (N/n) Σ_{i∈S} d_i without replacement,
/// N(N − n)/n · S²_d (MATH.md §5.3(b)), for d_i = a_i(θ) − a_i(θ̂) (CV) or d_i = a_i(θ)
/// (plain: θ̂ = none).
Vec exact_variance(const SyntheticLR<D>& data, const Vec& theta, const Vec* ref, std::size_t n) {
  const LR m = data.model();
  const std::size_t big_n = data.rows;
  std::vector<Vec> d(big_n);
  Vec mean = Vec::Zero();
  for (std::size_t i = 0; i < big_n; ++i) {
    d[i].setZero();
    m.add_gradient(std::uint32_t(i), theta, d[i]);
    if (ref != nullptr) {
      Vec r = Vec::Zero();
      m.add_gradient(std::uint32_t(i), *ref, r);
      d[i] -= r;
    }
    mean += d[i];
  }
  mean /= double(big_n);
  Vec s2 = Vec::Zero();
  for (const Vec& di : d) s2 += (di - mean).cwiseAbs2();
  s2 /= double(big_n - 1);
  return double(big_n) * double(big_n - n) / double(n) * s2;
}

/// LogisticRegression without its difference and cache hooks: the adaptor's two-gradient path.
struct PlainLR {
  LR inner;
  template <class B, class A>
  void add_gradient(std::uint32_t i, const Eigen::MatrixBase<B>& beta,
                    Eigen::MatrixBase<A>& acc) const noexcept {
    inner.add_gradient(i, beta, acc);
  }
  template <class B, class A>
  void add_prior_gradient(const Eigen::MatrixBase<B>& beta,
                          Eigen::MatrixBase<A>& acc) const noexcept {
    inner.add_prior_gradient(beta, acc);
  }
};

/// The per-example model with the optional difference hook (counts its calls).
struct WithHook : PlainLR {
  mutable int hook_calls = 0;
  template <class B, class R, class A>
  void add_gradient_difference(std::uint32_t i, const B& beta, const R& ref,
                               A& acc) const noexcept {
    ++hook_calls;
    Vec a = Vec::Zero();
    inner.add_gradient(i, beta, a);
    Vec b = Vec::Zero();
    inner.add_gradient(i, ref, b);
    acc += a - b;
  }
};

double max_rel_diff(const Vec& a, const Vec& b) {
  return (a - b).cwiseAbs().maxCoeff() / (1.0 + b.cwiseAbs().maxCoeff());
}

}  // namespace

TEST_CASE("CV gradient: exact at the reference and on a full batch") {
  // Deterministic identities (rounding only, tolerance 1e-12 relative): at θ = θ̂ every batch
  // gives ĝ + ∇(−log p)(θ̂), the full gradient; a batch of all N rows gives the full gradient at
  // any θ (the differences telescope).
  constexpr int kCap = 64;
  const SyntheticLR<D> data(64, 5);
  const LR model = data.model();
  const Mode mode = find_mode(data);
  OwnedControlVariateGradient<LR, kCap, double, D> cv(model, data.rows);
  REQUIRE(cv.set_reference(mode.map));
  CHECK(cv.has_reference());
  CHECK(max_rel_diff(Vec(cv.reference()), mode.map) == 0.0);

  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> small(order.data(), data.rows, 8);
  LocalRng rng(3);
  Vec g, full;
  static_cast<void>(model.potential_and_gradient(mode.map, full));
  for (int t = 0; t < 20; ++t) {
    small.next(rng, cv.batch());
    cv.gradient(mode.map, g);
    CHECK(max_rel_diff(g, full) < 1e-12);
  }
  cv.batch().size = data.rows;
  for (std::size_t i = 0; i < data.rows; ++i) cv.batch().index[i] = std::uint32_t(i);
  const Vec theta = mode.map + Vec(0.7, -1.1, 0.4, 2.0);
  static_cast<void>(model.potential_and_gradient(theta, full));
  cv.gradient(theta, g);
  CHECK(max_rel_diff(g, full) < 1e-12);
}

TEST_CASE(
    "CV gradient: unbiased on minibatches, its variance far below the plain one near the mode") {
  // N = 500, n = 10, K = 20000 batches at θ = θ̂ + one Laplace sd in every coordinate (alternating
  // signs): a typical posterior draw. Unbiasedness: |mean_K − ∇U(θ)|_j < 5 sd_j/√K per coordinate
  // (p ≈ 6e-7 each, fixed seed). Negative control for that check: the same batches without the
  // N/n factor on the difference term (a biased estimator) must fail it.
  // Variance (exact, no Monte Carlo): every coordinate's CV variance is below 5 % of the plain
  // minibatch variance; the ratio is about (leverage · posterior scale)², ≈ 1/300 here. Negative
  // control: with the reference at θ̂ = 0, far from the mode (the coefficients are of order one),
  // the CV variance is not below 5 % of the plain one in every coordinate.
  constexpr int kCap = 16;
  const SyntheticLR<D> data(500, 11);
  const LR model = data.model();
  const Mode mode = find_mode(data);
  const std::size_t n = 10;
  const Vec theta = mode.map + mode.sd.cwiseProduct(Vec(1.0, -1.0, 1.0, -1.0));

  OwnedControlVariateGradient<LR, kCap, double, D> cv(model, data.rows);
  REQUIRE(cv.set_reference(mode.map));
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, n);
  LocalRng rng(41);
  const int k = 20000;
  sgmcmc::Welford<double, D> grads, biased;
  Vec g, full, prior = Vec::Zero();
  static_cast<void>(model.potential_and_gradient(theta, full));
  model.add_prior_gradient(theta, prior);
  const Vec g_hat = cv.reference_gradient();
  for (int t = 0; t < k; ++t) {
    batches.next(rng, cv.batch());
    cv.gradient(theta, g);
    grads.push(g);
    biased.push(Vec(g_hat + prior + double(n) / double(data.rows) * (g - g_hat - prior)));
  }
  auto unbiased = [&](const sgmcmc::Welford<double, D>& w) {
    const Vec tol = 5.0 * w.variance().cwiseSqrt() / std::sqrt(double(k));
    return ((w.mean() - full).cwiseAbs().array() < tol.array()).all();
  };
  CHECK(unbiased(grads));
  CHECK_FALSE(unbiased(biased));
  // The Monte Carlo variance agrees with the exact one (20 % covers the sampling error of a
  // variance from 20000 heavy-tailed draws).
  const Vec v_cv = exact_variance(data, theta, &mode.map, n);
  CHECK(((grads.variance() - v_cv).cwiseAbs().array() < 0.2 * v_cv.array()).all());

  const Vec v_plain = exact_variance(data, theta, nullptr, n);
  MESSAGE("CV / plain variance: " << (v_cv.array() / v_plain.array()).transpose());
  CHECK((v_cv.array() < 0.05 * v_plain.array()).all());
  const Vec zero = Vec::Zero();
  const Vec v_far = exact_variance(data, theta, &zero, n);
  MESSAGE("CV (reference 0) / plain variance: " << (v_far.array() / v_plain.array()).transpose());
  CHECK_FALSE((v_far.array() < 0.05 * v_plain.array()).all());
}

TEST_CASE("CV gradient: its own noise estimate matches the exact CV covariance") {
  // The GradientNoiseEstimator fed by the adaptor (running mean, λ = 0) over K = 20000 batches:
  // |V̂_j − V_j| < 5 sd_j/√K, V_j the exact CV covariance, sd_j the sample sd of the per-batch
  // estimates (unbiased each, MATH.md §5.3(b)). Negative control: the estimate a plain
  // NoiseTrackingGradient makes on the same batches (the minibatch noise the samplers would
  // otherwise be told about) fails the same check by orders of magnitude.
  constexpr int kCap = 16;
  const SyntheticLR<D> data(500, 11);
  const LR model = data.model();
  const Mode mode = find_mode(data);
  const std::size_t n = 10;
  const Vec theta = mode.map + mode.sd.cwiseProduct(Vec(-1.0, 1.0, 1.0, -1.0));
  typename GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.0;
  GradientNoiseEstimator<double, D> est(p), est_plain(p);
  REQUIRE(est.valid());
  OwnedControlVariateGradient<LR, kCap, double, D> cv(model, data.rows);
  REQUIRE(cv.set_reference(mode.map));
  cv.set_noise_estimator(&est);
  sgmcmc::NoiseTrackingGradient<LR, kCap, double, D> plain(model, data.rows, &est_plain);
  OwnedControlVariateGradient<LR, kCap, double, D> untracked(model, data.rows);
  REQUIRE(untracked.set_reference(mode.map));

  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, n);
  LocalRng rng(43);
  const int k = 20000;
  sgmcmc::Welford<double, D> per_batch, per_batch_plain;
  Vec g, g2;
  for (int t = 0; t < k; ++t) {
    batches.next(rng, cv.batch());
    plain.batch() = cv.batch();
    untracked.batch() = cv.batch();
    cv.gradient(theta, g);
    untracked.gradient(theta, g2);
    // The tracking path sums the same differences in another order: equal to rounding.
    CHECK(max_rel_diff(g, g2) < 1e-12);
    per_batch.push(est.last_batch());
    plain.gradient(theta, g2);
    per_batch_plain.push(est_plain.last_batch());
  }
  const Vec exact = exact_variance(data, theta, &mode.map, n);
  auto matches = [&](const Vec& estimate, const sgmcmc::Welford<double, D>& w) {
    const Vec tol = 5.0 * w.variance().cwiseSqrt() / std::sqrt(double(k));
    return ((estimate - exact).cwiseAbs().array() < tol.array()).all();
  };
  INFO("V̂ = " << est.estimate().transpose() << ", exact " << exact.transpose());
  CHECK(matches(est.estimate(), per_batch));
  CHECK_FALSE(matches(est_plain.estimate(), per_batch_plain));
}

TEST_CASE("CV gradient: the difference hook is used when present and gives the same gradient") {
  constexpr int kCap = 16;
  const SyntheticLR<D> data(200, 7);
  const Mode mode = find_mode(data);
  const WithHook hooked{{data.model()}};
  OwnedControlVariateGradient<WithHook, kCap, double, D> a(hooked, data.rows);
  OwnedControlVariateGradient<LR, kCap, double, D> b(data.model(), data.rows);
  REQUIRE(a.set_reference(mode.map));
  REQUIRE(b.set_reference(mode.map));
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, 8);
  LocalRng rng(9);
  const Vec theta = mode.map + Vec(0.1, 0.2, -0.3, 0.05);
  Vec ga, gb;
  for (int t = 0; t < 10; ++t) {
    batches.next(rng, a.batch());
    b.batch() = a.batch();
    a.gradient(theta, ga);
    b.gradient(theta, gb);
    CHECK(max_rel_diff(ga, gb) < 1e-12);
  }
  CHECK(a.model().hook_calls == 10 * 8);  // on the adaptor's own copy of the model
  CHECK(hooked.hook_calls == 0);
}

TEST_CASE(
    "CV gradient: LogisticRegression's hooks and the row cache give the two-gradient path's "
    "gradient") {
  // Three adaptors on the same batches: the plain two-gradient path (PlainLR), LogisticRegression's
  // difference hook (no cache) and its row cache; equal to rounding (1e-12 relative), with and
  // without a noise estimator (whose V̂ must agree too). A re-reference refills the cache: the
  // gradients still agree after set_reference moves θ̂. Negative control: a cache holding the
  // terms of another θ̂ (filled before the move, the adaptor told nothing) gives a gradient that
  // differs.
  constexpr int kCap = 16;
  const SyntheticLR<D> data(300, 13);
  const Mode mode = find_mode(data);
  OwnedControlVariateGradient<PlainLR, kCap, double, D> plain(PlainLR{data.model()}, data.rows);
  OwnedControlVariateGradient<LR, kCap, double, D> hooked(data.model(), data.rows);
  OwnedControlVariateGradient<LR, kCap, double, D> cached(data.model(), data.rows);
  std::vector<double> cache(cached.row_cache_size());
  CHECK(cache.size() == data.rows);
  CHECK_FALSE(cached.row_cache_ready());
  REQUIRE(cached.set_row_cache(cache.data(), cache.size()));
  CHECK_FALSE(cached.row_cache_ready());  // no reference yet
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, 8);
  LocalRng rng(17);
  typename GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.0;
  GradientNoiseEstimator<double, D> est_plain(p), est_cached(p);
  const Vec theta = mode.map + Vec(0.2, -0.1, 0.3, -0.25);
  for (const Vec& ref : {Vec(mode.map), Vec(mode.map + Vec(0.05, 0.1, -0.1, 0.0))}) {
    REQUIRE(plain.set_reference(ref));
    REQUIRE(hooked.set_reference(ref));
    REQUIRE(cached.set_reference(ref));
    CHECK(cached.row_cache_ready());
    for (int t = 0; t < 20; ++t) {
      batches.next(rng, plain.batch());
      hooked.batch() = plain.batch();
      cached.batch() = plain.batch();
      Vec a, b, c;
      plain.gradient(theta, a);
      hooked.gradient(theta, b);
      cached.gradient(theta, c);
      CHECK(max_rel_diff(b, a) < 1e-12);
      CHECK(max_rel_diff(c, a) < 1e-12);
      plain.set_noise_estimator(&est_plain);
      cached.set_noise_estimator(&est_cached);
      plain.gradient(theta, a);
      cached.gradient(theta, c);
      CHECK(max_rel_diff(c, a) < 1e-12);
      plain.set_noise_estimator(nullptr);
      cached.set_noise_estimator(nullptr);
    }
  }
  CHECK(max_rel_diff(est_cached.estimate(), est_plain.estimate()) < 1e-10);
  // A cache given after the reference is filled at once.
  OwnedControlVariateGradient<LR, kCap, double, D> late(data.model(), data.rows);
  REQUIRE(late.set_reference(mode.map));
  std::vector<double> late_cache(data.rows);
  REQUIRE(late.set_row_cache(late_cache.data(), late_cache.size()));
  CHECK(late.row_cache_ready());
  // Negative control: stale terms (those of θ̂ = mode.map while the reference has moved).
  std::vector<double> stale(data.rows);
  OwnedControlVariateGradient<LR, kCap, double, D> wrong(data.model(), data.rows);
  REQUIRE(wrong.set_row_cache(stale.data(), stale.size()));
  REQUIRE(wrong.set_reference(mode.map + Vec(0.05, 0.1, -0.1, 0.0)));
  for (std::size_t i = 0; i < data.rows; ++i) {
    stale[i] = data.model().reference_term(std::uint32_t(i), mode.map);
  }
  batches.next(rng, plain.batch());
  wrong.batch() = plain.batch();
  Vec a, w;
  plain.gradient(theta, a);
  wrong.gradient(theta, w);
  CHECK_FALSE(max_rel_diff(w, a) < 1e-6);
}

namespace {

/// A logistic model whose reference term is NaN for row 5 when θ̂_0 > 1.
struct Failing : PlainLR {
  template <class R>
  double reference_term(std::uint32_t i, const Eigen::MatrixBase<R>& ref) const noexcept {
    return i == 5 && ref[0] > 1.0 ? std::numeric_limits<double>::quiet_NaN()
                                  : inner.reference_term(i, ref);
  }
  template <class B, class A>
  void add_cached_difference(std::uint32_t i, const Eigen::MatrixBase<B>& beta, double term,
                             Eigen::MatrixBase<A>& acc) const noexcept {
    inner.add_cached_difference(i, beta, term, acc);
  }
};

}  // namespace

TEST_CASE("CV gradient: row cache failures") {
  // Null memory or too small a size: InvalidParameter, the cache not used. A reference whose
  // terms are not finite (an infinite entry of the design matrix: ĝ is then not finite either,
  // refused before the cache is touched) keeps the previous reference and its cache. A model
  // whose terms fail after ĝ passed (a reference_term returning NaN for one row) keeps the
  // previous reference, served without the cache, with the same gradients.
  constexpr int kCap = 16;
  const SyntheticLR<D> data(60, 4);
  const Mode mode = find_mode(data);
  OwnedControlVariateGradient<LR, kCap, double, D> cv(data.model(), data.rows);
  std::vector<double> cache(data.rows);
  CHECK(cv.set_row_cache(nullptr, data.rows) == StatusCode::InvalidParameter);
  CHECK(cv.set_row_cache(cache.data(), data.rows - 1) == StatusCode::InvalidParameter);
  REQUIRE(cv.set_reference(mode.map));
  CHECK_FALSE(cv.row_cache_ready());
  REQUIRE(cv.set_row_cache(cache.data(), cache.size()));
  CHECK(cv.row_cache_ready());
  const std::vector<double> filled = cache;
  Vec bad = mode.map;
  bad[1] = std::numeric_limits<double>::infinity();
  CHECK(cv.set_reference(bad) == StatusCode::NonFiniteState);
  CHECK(cv.row_cache_ready());
  CHECK(cache == filled);

  OwnedControlVariateGradient<Failing, kCap, double, D> f(Failing{{data.model()}}, data.rows);
  OwnedControlVariateGradient<PlainLR, kCap, double, D> ref_path(PlainLR{data.model()}, data.rows);
  std::vector<double> fcache(data.rows);
  REQUIRE(f.set_row_cache(fcache.data(), fcache.size()));
  Vec start = mode.map;
  start[0] = 0.5;
  REQUIRE(f.set_reference(start));
  REQUIRE(ref_path.set_reference(start));
  CHECK(f.row_cache_ready());
  Vec moved = start;
  moved[0] = 1.5;
  CHECK(f.set_reference(moved) == StatusCode::NonFiniteGradient);
  CHECK_FALSE(f.row_cache_ready());
  CHECK(max_rel_diff(Vec(f.reference()), start) == 0.0);
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, 6);
  LocalRng rng(23);
  batches.next(rng, f.batch());
  ref_path.batch() = f.batch();
  Vec a, b;
  f.gradient(mode.map, a);
  ref_path.gradient(mode.map, b);
  CHECK(max_rel_diff(a, b) < 1e-12);
}

TEST_CASE("CV gradient: failures leave the adaptor unchanged") {
  constexpr int kCap = 16;
  const SyntheticLR<D> data(50, 2);
  const LR model = data.model();
  OwnedControlVariateGradient<LR, kCap, double, D> cv(model, data.rows);
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, 5);
  LocalRng rng(1);
  batches.next(rng, cv.batch());
  Vec g;
  // No reference yet: NaN, which every sampler refuses.
  CHECK_FALSE(cv.has_reference());
  cv.gradient(Vec::Zero(), g);
  CHECK(g.array().isNaN().all());

  const Vec ref(0.1, 0.2, 0.3, 0.4);
  REQUIRE(cv.set_reference(ref));
  const Vec g_hat = cv.reference_gradient();
  Vec bad = ref;
  bad[2] = std::numeric_limits<double>::quiet_NaN();
  CHECK(cv.set_reference(bad) == StatusCode::NonFiniteState);
  CHECK(max_rel_diff(Vec(cv.reference()), ref) == 0.0);
  CHECK(max_rel_diff(Vec(cv.reference_gradient()), g_hat) == 0.0);
  // A design matrix with an infinite entry: ĝ is not finite.
  std::vector<double> x = data.x;
  x[3 * D + 1] = std::numeric_limits<double>::infinity();
  const LR inf_model(x.data(), data.y.data(), data.rows, 10.0);
  OwnedControlVariateGradient<LR, kCap, double, D> cv_inf(inf_model, data.rows);
  CHECK(cv_inf.set_reference(ref) == StatusCode::NonFiniteGradient);
  CHECK_FALSE(cv_inf.has_reference());

  OwnedControlVariateGradient<LR, kCap, double, D> empty(model, 0);
  CHECK(empty.set_reference(ref) == StatusCode::InvalidParameter);
  CHECK_FALSE(empty.has_reference());
  // An empty batch: NaN.
  cv.batch().size = 0;
  cv.gradient(ref, g);
  CHECK(g.array().isNaN().all());
}

TEST_CASE("CV gradient with a census: exact over all batches, and less noise from outlying rows") {
  // N = 14 rows, three of them outlying (features × 20), the census; batches of n = 3 from the
  // other 11. Over all C(11, 3) = 165 batches the mean gradient must equal the full gradient
  // (an identity: rounding only, tolerance 1e-12 relative), on each of the adaptor's paths (row
  // cache, difference hook, two gradients, noise estimator). Negative control: the same batches
  // without set_census (the census rows then missing and the scale N/n) miss it.
  // Variance: the enumeration's covariance diagonal equals (N − k)(N − k − n)/n · S²_d over the
  // non-census rows (the §5.3(b) formula for the sampled stratum), and is below the plain CV
  // gradient's (batches from all 14 rows) in every coordinate: the outliers carry the noise.
  constexpr int kCap = 8;
  SyntheticLR<D> data(14, 17);
  const std::array<std::uint32_t, 3> census{2, 5, 11};
  for (const std::uint32_t r : census) {
    for (int j = 1; j < D; ++j) data.x[r * D + std::size_t(j)] *= 20.0;
  }
  const LR model = data.model();
  const Mode mode = find_mode(data);
  const Vec theta = mode.map + 0.5 * mode.sd.cwiseProduct(Vec(1.0, -1.0, 1.0, -1.0));
  Vec full;
  static_cast<void>(model.potential_and_gradient(theta, full));
  std::vector<std::uint32_t> others;
  for (std::uint32_t i = 0; i < 14; ++i) {
    if (i != 2 && i != 5 && i != 11) others.push_back(i);
  }
  // Mean and covariance diagonal of cv.gradient(theta) over every n-subset of `pool`.
  auto enumerate = [&](auto& cv, const std::vector<std::uint32_t>& pool, Vec& mean, Vec& var) {
    std::vector<Vec> g;
    const std::size_t m = pool.size();
    for (std::uint32_t mask = 0; mask < (1u << m); ++mask) {
      if (__builtin_popcount(mask) != 3) continue;
      cv.batch().size = 0;
      for (std::size_t b = 0; b < m; ++b) {
        if (mask & (1u << b)) cv.batch().index[cv.batch().size++] = pool[b];
      }
      Vec out;
      cv.gradient(theta, out);
      g.push_back(out);
    }
    mean.setZero();
    for (const Vec& v : g) mean += v;
    mean /= double(g.size());
    var.setZero();
    for (const Vec& v : g) var += (v - mean).cwiseAbs2();
    var /= double(g.size());
  };
  Vec mean, var;
  // Row cache (the model's cached difference).
  OwnedControlVariateGradient<LR, kCap, double, D> cached(model, data.rows);
  std::vector<double> cache(data.rows);
  REQUIRE(cached.set_reference(mode.map));
  REQUIRE(cached.set_row_cache(cache.data(), cache.size()));
  REQUIRE(cached.set_census(census.data(), census.size()));
  CHECK(cached.census_count() == 3);
  CHECK(cached.sampled_rows() == 11);
  enumerate(cached, others, mean, var);
  CHECK(max_rel_diff(mean, full) < 1e-12);
  // The stratum's exact variance: (N − k)(N − k − n)/n · S²_d over the 11 sampled rows.
  Vec dbar = Vec::Zero(), s2 = Vec::Zero();
  std::vector<Vec> d;
  for (const std::uint32_t i : others) {
    Vec a = Vec::Zero(), r = Vec::Zero();
    model.add_gradient(i, theta, a);
    model.add_gradient(i, mode.map, r);
    d.push_back(a - r);
    dbar += a - r;
  }
  dbar /= 11.0;
  for (const Vec& v : d) s2 += (v - dbar).cwiseAbs2();
  s2 /= 10.0;
  const Vec v_stratum = 11.0 * 8.0 / 3.0 * s2;
  CHECK(max_rel_diff(var, v_stratum) < 1e-9);
  const Vec v_plain = exact_variance(data, theta, &mode.map, 3);
  MESSAGE("census / plain CV variance: " << (var.array() / v_plain.array()).transpose());
  CHECK((var.array() < v_plain.array()).all());
  // The difference hook and the two-gradient path give the same gradients.
  OwnedControlVariateGradient<WithHook, kCap, double, D> hook(WithHook{{model}}, data.rows);
  OwnedControlVariateGradient<PlainLR, kCap, double, D> plain(PlainLR{model}, data.rows);
  REQUIRE(plain.set_reference(mode.map));
  REQUIRE(plain.set_census(census.data(), census.size()));
  REQUIRE(hook.set_reference(mode.map));
  REQUIRE(hook.set_census(census.data(), census.size()));
  Vec mean_hook, var_hook, mean_plain, var_plain;
  enumerate(hook, others, mean_hook, var_hook);
  enumerate(plain, others, mean_plain, var_plain);
  CHECK(max_rel_diff(mean_hook, full) < 1e-12);
  CHECK(max_rel_diff(mean_plain, full) < 1e-12);
  CHECK(max_rel_diff(var_hook, var) < 1e-9);
  CHECK(max_rel_diff(var_plain, var) < 1e-9);
  // With a noise estimator attached (the per-row loop that feeds it).
  const typename GradientNoiseEstimator<double, D>::Params params;
  GradientNoiseEstimator<double, D> est(params);
  cached.set_noise_estimator(&est);
  Vec mean_est, var_est;
  enumerate(cached, others, mean_est, var_est);
  CHECK(max_rel_diff(mean_est, full) < 1e-12);
  cached.set_noise_estimator(nullptr);
  // Negative control: the stratum's batches without the census.
  OwnedControlVariateGradient<LR, kCap, double, D> forgot(model, data.rows);
  REQUIRE(forgot.set_reference(mode.map));
  Vec mean_forgot, var_forgot;
  enumerate(forgot, others, mean_forgot, var_forgot);
  CHECK_FALSE(max_rel_diff(mean_forgot, full) < 1e-12);
  // Refusals keep the census: unsorted, repeated, out of range, all rows, null with a count.
  const std::array<std::uint32_t, 3> unsorted{5, 2, 11}, repeated{2, 2, 11}, outside{2, 5, 14};
  CHECK(cached.set_census(unsorted.data(), 3) == StatusCode::InvalidParameter);
  CHECK(cached.set_census(repeated.data(), 3) == StatusCode::InvalidParameter);
  CHECK(cached.set_census(outside.data(), 3) == StatusCode::InvalidParameter);
  std::array<std::uint32_t, 14> every{};
  for (std::uint32_t i = 0; i < 14; ++i) every[i] = i;
  CHECK(cached.set_census(every.data(), 14) == StatusCode::InvalidParameter);
  CHECK(cached.set_census(nullptr, 2) == StatusCode::InvalidParameter);
  CHECK(cached.census() == census.data());
  CHECK(cached.census_count() == 3);
  REQUIRE(cached.set_census(nullptr, 0));
  CHECK(cached.sampled_rows() == 14);
}
