// SPDX-License-Identifier: MIT
// SGHMCLearnedRefresh (MATH.md §4.3 C): conformance, SGHMC plus a state-independent refresh,
// warm-up learning, stationarity; an online-U-turn refresh is the negative control.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "mg_support.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/sghmc_learned.hpp"
#include "stats.hpp"
#include "targets.hpp"
#include "test_models.hpp"

using namespace sgmcmc;
using sgmcmc_test::bit_identical;

template class sgmcmc::SGHMCLearnedRefresh<float, 3>;
template class sgmcmc::SGHMCLearnedRefresh<double, 2, 8>;

// Tolerance of the moment checks: 4 Monte-Carlo standard errors (Geyer ESS of the thinned
// series; two-sided level 6e-5 per check). Fixed seeds.

namespace {

constexpr double kZ = 4.0;

template <class Scalar, int Dim>
typename SGHMCLearnedRefresh<Scalar, Dim>::Params params(Scalar h, Scalar c) {
  typename SGHMCLearnedRefresh<Scalar, Dim>::Params p;
  p.step_size = h;
  p.friction = c;
  p.mass = Scalar(1);
  p.max_length = 1000;
  return p;
}

/// Learns the lengths on model from theta0; returns the chain state after warm-up.
template <class Sampler, class Model>
typename Sampler::StateType learn(const Sampler& s, const Model& model,
                                  const typename Sampler::PositionVector& theta0, host::Rng& rng,
                                  typename Sampler::Learner& learner) {
  auto z = s.start(theta0);
  long guard = 0;
  while (!learner.lengths.full() && guard++ < 10000000)
    REQUIRE(s.warmup_step(z, model, rng, learner));
  return z;
}

}  // namespace

TEST_CASE_TEMPLATE("SGHMCLearnedRefresh: bad input returns a Status; nothing changes", Scalar,
                   float, double) {
  using S = SGHMCLearnedRefresh<Scalar, 3>;
  const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  typename S::StateType z0;
  z0.position() << Scalar(0.3), Scalar(-0.2), Scalar(1.0);
  z0.momentum() << Scalar(1), Scalar(2), Scalar(3);
  typename S::Lengths lengths;
  lengths.add(4);
  auto expect = [&](const S& s, StatusCode code) {
    CHECK(s.status() == code);
    host::Rng rng(1);
    auto z = z0;
    RefreshCountdown cd{2};
    typename S::Learner learner;
    CHECK(s.step(z, model, rng, lengths, cd) == code);
    CHECK(s.warmup_step(z, model, rng, learner) == code);
    CHECK(bit_identical(z, z0));
    CHECK(cd.remaining == 2);
    CHECK(learner.lengths.count == 0);
    CHECK_FALSE(learner.running);
  };
  for (Scalar h : {Scalar(0), Scalar(-1), nan})
    expect(S(params<Scalar, 3>(h, Scalar(1))), StatusCode::InvalidStepSize);
  expect(S(params<Scalar, 3>(Scalar(0.1), Scalar(-1))), StatusCode::InvalidParameter);
  auto p = params<Scalar, 3>(Scalar(0.1), Scalar(1));
  p.mass = Scalar(0);
  expect(S(p), StatusCode::InvalidParameter);
  p = params<Scalar, 3>(Scalar(0.1), Scalar(1));
  p.max_length = 0;
  expect(S(p), StatusCode::InvalidParameter);
  const S s(params<Scalar, 3>(Scalar(0.1), Scalar(1)));
  REQUIRE(s.status());
  {  // no learned lengths yet
    host::Rng rng(1);
    auto z = z0;
    RefreshCountdown cd;
    const typename S::Lengths none;
    CHECK(s.step(z, model, rng, none, cd) == StatusCode::InvalidParameter);
    CHECK(bit_identical(z, z0));
    CHECK(cd.remaining == 0);
  }
  {  // non-finite gradient: state, countdown and learner unchanged
    sgmcmc_test::BadGradientModel<Scalar, 3> bad;
    host::Rng rng(1);
    auto z = z0;
    RefreshCountdown cd;
    typename S::Learner learner;
    CHECK(s.step(z, bad, rng, lengths, cd) == StatusCode::NonFiniteGradient);
    CHECK(s.warmup_step(z, bad, rng, learner) == StatusCode::NonFiniteGradient);
    CHECK(bit_identical(z, z0));
    CHECK(cd.remaining == 0);
    CHECK_FALSE(learner.running);
  }
  {  // non-finite state
    host::Rng rng(1);
    auto z = z0;
    z.momentum()[0] = nan;
    const auto zb = z;
    RefreshCountdown cd{3};
    CHECK_FALSE(s.step(z, model, rng, lengths, cd));
    CHECK(bit_identical(z, zb));
    CHECK(cd.remaining == 3);
  }
}

TEST_CASE_TEMPLATE("SGHMCLearnedRefresh: a step is SGHMC's, after a state-independent refresh",
                   Scalar, float, double) {
  using S = SGHMCLearnedRefresh<Scalar, 3>;
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  const S s(params<Scalar, 3>(Scalar(0.05), Scalar(0.7)));
  typename S::Lengths lengths;
  for (std::uint32_t l : {3U, 5U, 9U}) lengths.add(l);
  typename S::StateType z0;
  z0.position() << Scalar(0.3), Scalar(-0.2), Scalar(1.0);
  z0.momentum() << Scalar(1), Scalar(2), Scalar(3);
  // countdown > 0: exactly one SGHMC step, countdown − 1.
  {
    host::Rng r1(3), r2(3);
    auto z = z0, w = z0;
    RefreshCountdown cd{4};
    REQUIRE(s.step(z, model, r1, lengths, cd));
    REQUIRE(s.sghmc().step(w, model, r2));
    CHECK(bit_identical(z, w));
    CHECK(cd.remaining == 3);
  }
  // countdown = 0: r ~ N(0, mI), L ~ Uniform(lengths), one SGHMC step.
  {
    host::Rng r1(3), r2(3);
    auto z = z0, w = z0;
    RefreshCountdown cd{0};
    REQUIRE(s.step(z, model, r1, lengths, cd));
    s.sghmc().refresh_momentum(w, r2);
    const std::uint32_t l = lengths.draw(r2);
    REQUIRE(s.sghmc().step(w, model, r2));
    CHECK(bit_identical(z, w));
    CHECK(cd.remaining == l - 1);
  }
  // Zero-noise limit (C = 0, no refresh due): the deterministic kick–drift update.
  {
    const S cold(params<Scalar, 3>(Scalar(0.05), Scalar(0)));
    host::Rng rng(3);
    auto z = z0;
    RefreshCountdown cd{10};
    Vector<Scalar, 3> g;
    model.gradient(z0.position(), g);
    const Vector<Scalar, 3> r1 = z0.momentum() - Scalar(0.05) * g;
    const Vector<Scalar, 3> th1 = z0.position() + Scalar(0.05) * r1;
    REQUIRE(cold.step(z, model, rng, lengths, cd));
    CHECK((z.momentum() - r1).cwiseAbs().maxCoeff() < Scalar(1e-6));
    CHECK((z.position() - th1).cwiseAbs().maxCoeff() < Scalar(1e-6));
  }
  // Determinism with a fixed seed.
  auto run = [&](std::uint64_t seed) {
    host::Rng rng(seed);
    auto z = z0;
    RefreshCountdown cd;
    for (int i = 0; i < 200; ++i) REQUIRE(s.step(z, model, rng, lengths, cd));
    return z;
  };
  CHECK(bit_identical(run(5), run(5)));
  CHECK_FALSE(bit_identical(run(5), run(6)));
}

TEST_CASE("SGHMCLearnedRefresh: the refresh schedule does not depend on the chain's state") {
  // Two chains on different targets from different starts, same seed: the refresh times and the
  // drawn lengths coincide (the RNG use per step is fixed, so L_k depends on the seed only).
  using S = SGHMCLearnedRefresh<double, 2>;
  const S s(params<double, 2>(0.05, 0.5));
  S::Lengths lengths;
  for (std::uint32_t l : {2U, 7U, 11U, 30U}) lengths.add(l);
  const test::CorrelatedGaussian2<double> a;
  const test::Banana<double> b;
  host::Rng r1(77), r2(77);
  auto za = s.start(Vector<double, 2>(0.0, 0.0));
  auto zb = s.start(Vector<double, 2>(2.0, -1.0));
  RefreshCountdown ca, cb;
  int refreshes = 0;
  for (int i = 0; i < 2000; ++i) {
    refreshes += ca.remaining == 0;
    REQUIRE(s.step(za, a, r1, lengths, ca));
    REQUIRE(s.step(zb, b, r2, lengths, cb));
    REQUIRE(ca.remaining == cb.remaining);
  }
  CHECK(refreshes > 2000 / 30);
}

TEST_CASE("SGHMCLearnedRefresh: warm-up fills the fixed array with U-turn lengths") {
  using S = SGHMCLearnedRefresh<double, 1, 16>;
  const test::StandardNormal<double, 1> target;
  // h = 0.05, C = 0.05: nearly Hamiltonian; from (θ₀, r₀) the first U-turn of (θ − θ₀)·r comes
  // before half a period (π ≈ 63 steps): every length lies in [1, 63] plus slack for the noise.
  {
    const S s(params<double, 1>(0.05, 0.05));
    host::Rng rng(9);
    S::Learner learner;
    learn(s, target, Vector<double, 1>(0.5), rng, learner);
    CHECK(learner.lengths.full());
    CHECK(learner.lengths.count == 16);
    for (int i = 0; i < 16; ++i) {
      CHECK(learner.lengths.values[std::size_t(i)] >= 1);
      CHECK(learner.lengths.values[std::size_t(i)] <= 80);
    }
    MESSAGE("learned lengths on N(0,1), h=0.05: mean " << learner.lengths.mean() << " steps");
    CHECK(learner.lengths.mean() * 0.05 > 0.5);
    CHECK(learner.lengths.mean() * 0.05 < 3.2);
    // Once full, warm-up only steps.
    auto z = s.start(Vector<double, 1>(0.5));
    const auto before = learner.lengths.values;
    for (int i = 0; i < 100; ++i) REQUIRE(s.warmup_step(z, target, rng, learner));
    CHECK(learner.lengths.values == before);
  }
  // The cap.
  {
    auto p = params<double, 1>(0.05, 0.05);
    p.max_length = 5;
    const S s(p);
    host::Rng rng(9);
    S::Learner learner;
    learn(s, target, Vector<double, 1>(0.5), rng, learner);
    for (int i = 0; i < 16; ++i) CHECK(learner.lengths.values[std::size_t(i)] <= 5);
  }
}

TEST_CASE("SGHMCLearnedRefresh is stationary on the double well; online U-turn refresh is not") {
  // h = 0.02, C = 0.05, 2e6 steps thinned by 10 (ESS of θ² ≈ 5e4). The control runs the same
  // SGHMC steps but refreshes whenever (θ − θ_refresh)·r < 0, the state-dependent stopping rule
  // MATH.md §4.3 warns against: E θ² comes out near 1.5 instead of 0.83.
  using S = SGHMCLearnedRefresh<double, 1>;
  const test::DoubleWell<double> dw;
  const S s(params<double, 1>(0.02, 0.05));
  host::Rng rng(1);
  S::Learner learner;
  auto z = learn(s, dw, Vector<double, 1>(0.3), rng, learner);
  auto check = [](const std::vector<double>& sq, const char* what) {
    const auto zs = mgtest::z_score(sq, test::DoubleWell<double>::second_moment);
    MESSAGE(doctest::String(what) << ": E theta^2 = " << zs.mean << " vs "
                                  << test::DoubleWell<double>::second_moment << ", z = " << zs.z
                                  << " (ESS " << zs.ess << ")");
    return zs.z < kZ;
  };
  const long n = 2000000;
  RefreshCountdown cd;
  std::vector<double> sq;
  for (long i = 0; i < n; ++i) {
    REQUIRE(s.step(z, dw, rng, learner.lengths, cd));
    if (i % 10 == 0) sq.push_back(z.position()[0] * z.position()[0]);
  }
  CHECK(check(sq, "learned refresh"));
  sq.clear();
  s.sghmc().refresh_momentum(z, rng);
  Vector<double, 1> origin = z.position();
  for (long i = 0; i < n; ++i) {
    REQUIRE(s.sghmc().step(z, dw, rng));
    if ((z.position() - origin).dot(z.momentum()) < 0) {
      s.sghmc().refresh_momentum(z, rng);
      origin = z.position();
    }
    if (i % 10 == 0) sq.push_back(z.position()[0] * z.position()[0]);
  }
  CHECK_FALSE(check(sq, "online U-turn refresh (control)"));
}

TEST_CASE("SGHMCLearnedRefresh on the correlated Gaussian with gradient noise and V̂") {
  // ρ = 0.9, g = ∇U + N(0, 0.5 I), V̂ = 0.5 (2C − hV̂ > 0), h = 0.01, C = 1, 2e6 steps thinned
  // by 10. Kick–drift's exact bias at this h is O(h²) on θ (MATH.md §1.3): far inside 4 se.
  using S = SGHMCLearnedRefresh<double, 2>;
  const test::NoisyGradient<test::CorrelatedGaussian2<double>, double, 2> model(
      test::CorrelatedGaussian2<double>{}, 0.5, 2024);
  S s(params<double, 2>(0.01, 1.0));
  REQUIRE(s.set_gradient_noise(0.5));
  host::Rng rng(4);
  S::Learner learner;
  auto z = learn(s, model, Vector<double, 2>(0.3, 0.1), rng, learner);
  RefreshCountdown cd;
  std::vector<double> x0, x1;
  for (long i = 0; i < 2000000; ++i) {
    REQUIRE(s.step(z, model, rng, learner.lengths, cd));
    if (i % 10 == 0) {
      x0.push_back(z.position()[0]);
      x1.push_back(z.position()[1]);
    }
  }
  const auto v0 = mgtest::z_score(test::centred_product(x0, 0, x0, 0), 1.0);
  const auto v1 = mgtest::z_score(test::centred_product(x1, 0, x1, 0), 1.0);
  const auto cv = mgtest::z_score(test::centred_product(x0, 0, x1, 0), 0.9);
  MESSAGE("learned refresh, rho=0.9: Var "
          << v0.mean << " " << v1.mean << " Cov " << cv.mean << " (z " << v0.z << " " << v1.z << " "
          << cv.z << ", ESS " << v0.ess << "), mean length " << learner.lengths.mean());
  CHECK(v0.z < kZ);
  CHECK(v1.z < kZ);
  CHECK(cv.z < kZ);
}
