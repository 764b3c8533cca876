// SPDX-License-Identifier: MIT
// The online gradient-noise estimate V̂ (include/sgmcmc/data/gradient_noise.hpp): against the exact
// minibatch covariance on a small data set (Monte Carlo tolerance, negative controls), its
// weighting, and the PSD-safety policy (clip, shrink, fallback) with SGHMC, SGNHT and SGLD.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "fixtures.hpp"
#include "local_rng.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

using sgmcmc::GradientNoiseEstimator;
using sgmcmc::NoiseLimitPolicy;
using sgmcmc::Vector;
using sgmcmc_test::LocalRng;
using sgmcmc_test::SyntheticLR;

namespace {

/// A model with zero gradient: a step then moves only by friction and injected noise.
template <int D>
struct Flat {
  void gradient(const Vector<double, D>&, Vector<double, D>& g) const noexcept { g.setZero(); }
};

/// Feeds one batch of two examples a and b (N = 4, n = 2): V_batch = 4·2/(2·1) · (a − b)²/2 =
/// 2(a − b)², so a − b = sqrt(v / 2) gives V_batch = v exactly.
template <int D>
void feed(GradientNoiseEstimator<double, D>& est, const Vector<double, D>& v) {
  est.begin_batch();
  est.add(Vector<double, D>::Zero());
  est.add((v / 2.0).cwiseSqrt());
  REQUIRE(est.end_batch(4));
}

}  // namespace

TEST_CASE("V̂ matches the exact minibatch covariance (Monte Carlo tolerance, negative controls)") {
  // N = 40, n = 8, K = 20000 batches at a fixed θ, running mean (λ = 0). Each batch's estimate
  // N(N − n)/n · s² is unbiased for the exact diagonal V_j = N(N − n)/n · S² (MATH.md §5.3(b));
  // V̂ is their mean, so |V̂_j − V_j| < 5 sd_j / √K, sd_j the sample sd of the batch estimates
  // (p ≈ 6e-7 per coordinate, fixed seed). Negative controls that must fail the same check:
  // (a) no finite-population correction, N²/n · s² (factor N/(N − n) = 1.25);
  // (b) the biased variance (n denominator instead of n − 1, factor 7/8).
  constexpr int D = 4;
  constexpr int kCap = 16;
  const SyntheticLR<D> data(40, 17);
  const auto model = data.model();
  const std::size_t n = 8;
  const Vector<double, D> theta(0.3, -0.2, 0.5, 0.1);
  const auto exact = sgmcmc_test::exact_moments(data, theta, n);

  typename GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.0;
  GradientNoiseEstimator<double, D> est(p);
  REQUIRE(est.valid());
  using Tracking =
      sgmcmc::NoiseTrackingGradient<sgmcmc::LogisticRegression<double, D>, kCap, double, D>;
  Tracking adaptor(model, data.rows, &est);
  sgmcmc::MinibatchGradient<sgmcmc::LogisticRegression<double, D>, kCap> plain(model, data.rows);
  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, n);
  LocalRng rng(99);
  const int k = 20000;
  sgmcmc::Welford<double, D> per_batch;  // the batch estimates
  sgmcmc::Welford<double, D> grads;      // the minibatch gradients themselves
  Vector<double, D> g, g_plain;
  for (int t = 0; t < k; ++t) {
    batches.next(rng, adaptor.batch());
    plain.batch() = adaptor.batch();
    adaptor.gradient(theta, g);
    plain.gradient(theta, g_plain);
    CHECK((g - g_plain).cwiseAbs().maxCoeff() <= 1e-12 * (1.0 + g_plain.cwiseAbs().maxCoeff()));
    per_batch.push(est.last_batch());
    grads.push(g);
  }
  REQUIRE(est.batches() == std::uint64_t(k));
  const Vector<double, D> vhat = est.estimate();
  // V̂ is exactly the running mean of the batch estimates (to rounding).
  CHECK((vhat - per_batch.mean()).cwiseAbs().maxCoeff() <= 1e-9 * vhat.maxCoeff());
  const Vector<double, D> tol = 5.0 * (per_batch.variance() / double(k)).cwiseSqrt();
  const double fpc = double(data.rows) / double(data.rows - n);
  const double biased = double(n - 1) / double(n);
  int fail_fpc = 0, fail_biased = 0;
  for (int j = 0; j < D; ++j) {
    INFO("coordinate ", j, ": V̂ ", vhat[j], ", exact ", exact.variance[j], ", tol ", tol[j]);
    CHECK(std::abs(vhat[j] - exact.variance[j]) < tol[j]);
    fail_fpc += std::abs(fpc * vhat[j] - exact.variance[j]) >= tol[j] ? 1 : 0;
    fail_biased += std::abs(biased * vhat[j] - exact.variance[j]) >= tol[j] ? 1 : 0;
    // And the exact V is what the minibatch gradients really scatter with: relative SE of a
    // sample variance over K draws is about sqrt(2/K) (near-Gaussian sums), 5 SE allowed.
    CHECK(grads.variance()[j] ==
          doctest::Approx(exact.variance[j]).epsilon(5 * std::sqrt(2.0 / k)));
  }
  CHECK(fail_fpc == D);
  CHECK(fail_biased == D);
}

TEST_CASE("weights: running mean for the first 1/λ batches, then exponential forgetting") {
  constexpr int D = 2;
  typename GradientNoiseEstimator<double, D>::Params p;
  p.smoothing = 0.25;
  GradientNoiseEstimator<double, D> est(p);
  CHECK(est.estimate().isZero());
  feed(est, Vector<double, D>(1.0, 8.0));
  CHECK(est.estimate()[0] == doctest::Approx(1.0));
  CHECK(est.last_batch()[1] == doctest::Approx(8.0));
  feed(est, Vector<double, D>(3.0, 0.0));
  CHECK(est.estimate()[0] == doctest::Approx(2.0));  // mean of 1, 3
  feed(est, Vector<double, D>(5.0, 0.0));
  feed(est, Vector<double, D>(7.0, 0.0));
  CHECK(est.estimate()[0] == doctest::Approx(4.0));  // mean of 1, 3, 5, 7 (weight 1/4 = λ)
  feed(est, Vector<double, D>(8.0, 0.0));
  CHECK(est.estimate()[0] == doctest::Approx(0.75 * 4.0 + 0.25 * 8.0));  // now λ = 0.25
  // Batches that cannot give an estimate leave V̂ alone.
  const Vector<double, D> before = est.estimate();
  est.begin_batch();
  est.add(Vector<double, D>::Ones());
  CHECK_FALSE(est.end_batch(10));  // one example
  est.add(Vector<double, D>::Ones());
  est.add(Vector<double, D>::Zero());
  CHECK_FALSE(est.end_batch(1));  // N below the batch size
  est.add(Vector<double, D>::Ones());
  est.add(Vector<double, D>(std::nan(""), 0.0));
  CHECK_FALSE(est.end_batch(10));  // not finite
  CHECK(est.estimate() == before);
  // n = N: the minibatch gradient is exact, V = 0.
  est.reset();
  est.add(Vector<double, D>::Ones());
  est.add(Vector<double, D>::Zero());
  CHECK(est.end_batch(2));
  CHECK(est.estimate().isZero());
  // Invalid parameters never update.
  typename GradientNoiseEstimator<double, D>::Params bad;
  bad.smoothing = 1.5;
  GradientNoiseEstimator<double, D> invalid(bad);
  CHECK_FALSE(invalid.valid());
  invalid.add(Vector<double, D>::Ones());
  invalid.add(Vector<double, D>::Zero());
  CHECK_FALSE(invalid.end_batch(10));
}

TEST_CASE("PSD policy, clip: V̂ above 2C/h is clipped, the step is valid and counted") {
  constexpr int D = 3;
  sgmcmc::SGHMC<double, D>::Params sp;
  sp.step_size = 0.1;
  sp.friction = 1.0;  // limit 2C/h = 20
  sgmcmc::SGHMC<double, D> s(sp);
  const Vector<double, D> limit = sgmcmc::gradient_noise_limit(s);
  CHECK(limit[0] == doctest::Approx(20.0).epsilon(1e-12));
  CHECK(limit[0] < 20.0);  // the 8-ulp margin

  GradientNoiseEstimator<double, D> est;
  const Vector<double, D> v(5.0, 30.0, 100.0);
  feed(est, v);
  REQUIRE(est.estimate()[2] == doctest::Approx(100.0));

  // Negative control: handing V̂ over raw makes the sampler refuse, and then every step fails
  // with the state unchanged.
  {
    sgmcmc::SGHMC<double, D> raw(sp);
    CHECK(raw.set_gradient_noise(est.estimate()) == sgmcmc::StatusCode::NoiseNotPSD);
    auto z = raw.start(Vector<double, D>::Ones());
    const auto z0 = z;
    LocalRng rng(1);
    CHECK(raw.step(z, Flat<D>{}, rng) == sgmcmc::StatusCode::NoiseNotPSD);
    CHECK(z == z0);
  }

  REQUIRE(est.apply(s, limit));
  CHECK(s.status());
  CHECK(s.gradient_noise()[0] == doctest::Approx(5.0).epsilon(1e-14));
  CHECK(s.gradient_noise()[1] == limit[1]);
  CHECK(s.gradient_noise()[2] == limit[2]);
  CHECK(est.applied() == 1);
  CHECK(est.limited_steps() == 1);
  CHECK(est.limited_coordinates() == 2);
  CHECK(est.fallbacks() == 0);

  // The injected momentum noise is N(0, h(2C − hV̂_i)): with zero gradient, r = 0 and ζ = 1 the
  // new momentum is exactly that standard deviation (≈ 0 on the clipped coordinates).
  auto z = s.start(Vector<double, D>::Zero());
  const typename sgmcmc::SGHMC<double, D>::NoiseVector ones =
      sgmcmc::SGHMC<double, D>::NoiseVector::Ones();
  REQUIRE(s.step_with_noise(z, Flat<D>{}, ones));
  CHECK(z.momentum()[0] == doctest::Approx(std::sqrt(0.1 * (2.0 - 0.1 * 5.0))));
  CHECK(z.momentum()[1] == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(z.momentum()[2] == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(z.momentum()[1] >= 0.0);

  // Below the limit nothing is clipped and the counters say so.
  est.reset();
  feed(est, Vector<double, D>(Vector<double, D>::Constant(1.0)));
  REQUIRE(est.apply(s, limit));
  CHECK((s.gradient_noise().array() - 1.0).abs().maxCoeff() < 1e-14);
  CHECK(est.limited_steps() == 0);
}

TEST_CASE("PSD policy, shrink: one factor for all coordinates; SGNHT and SGLD limits") {
  constexpr int D = 3;
  sgmcmc::SGNHT<double, D>::Params np;
  np.step_size = 0.05;
  np.diffusion = 2.0;  // limit 2A/h = 80
  sgmcmc::SGNHT<double, D> s(np);
  const Vector<double, D> limit = sgmcmc::gradient_noise_limit(s);
  CHECK(limit[1] == doctest::Approx(80.0).epsilon(1e-12));
  typename GradientNoiseEstimator<double, D>::Params p;
  p.policy = NoiseLimitPolicy::Shrink;
  p.limit_fraction = 0.5;  // cap at 40
  GradientNoiseEstimator<double, D> est(p);
  feed(est, Vector<double, D>(10.0, 160.0, 20.0));
  REQUIRE(est.apply(s, limit));
  const double rho = 0.5 * limit[1] / 160.0;
  CHECK(s.gradient_noise()[0] == doctest::Approx(10.0 * rho));
  CHECK(s.gradient_noise()[1] == doctest::Approx(160.0 * rho));
  CHECK(s.gradient_noise()[2] == doctest::Approx(20.0 * rho));
  CHECK(est.limited_coordinates() == 1);
  auto z = s.start(Vector<double, D>::Ones());
  LocalRng rng(3);
  CHECK(s.step(z, Flat<D>{}, rng));

  sgmcmc::SGLD<double, D>::Params lp;
  lp.step_size = 0.01;
  lp.diffusion = sgmcmc::Scaled<double>{0.5};  // limit 2/(h s) = 400
  sgmcmc::SGLD<double, D> sgld(lp);
  const Vector<double, D> ll = sgmcmc::gradient_noise_limit(sgld);
  CHECK(ll[0] == doctest::Approx(400.0).epsilon(1e-12));
  CHECK(sgld.set_gradient_noise(ll));
  CHECK(sgld.set_gradient_noise(Vector<double, D>::Constant(401.0)) ==
        sgmcmc::StatusCode::NoiseNotPSD);
}

TEST_CASE("PSD policy, fallback: a limit the sampler does not accept ends in a valid V̂") {
  constexpr int D = 2;
  sgmcmc::SGHMC<double, D>::Params sp;
  sp.step_size = 0.1;
  sp.friction = 1.0;  // true limit 20
  sgmcmc::SGHMC<double, D> s(sp);
  GradientNoiseEstimator<double, D> est;
  feed(est, Vector<double, D>(150.0, 1.0));
  // A wrong limit of 100: the clipped V̂ (100, 1) is still refused; apply() halves it until the
  // sampler accepts (100 → 50 → 25 → 12.5) and counts the fallback.
  REQUIRE(est.apply(s, Vector<double, D>::Constant(100.0)));
  CHECK(est.fallbacks() == 1);
  CHECK(s.status());
  CHECK(s.gradient_noise()[0] == doctest::Approx(12.5));
  CHECK(s.gradient_noise()[1] == doctest::Approx(0.125));
  // An estimator with nothing yet hands over V̂ = 0.
  GradientNoiseEstimator<double, D> empty;
  REQUIRE(empty.apply(s, sgmcmc::gradient_noise_limit(s)));
  CHECK(s.gradient_noise().isZero());
}
