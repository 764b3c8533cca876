// SPDX-License-Identifier: MIT
// SGHMCLearnedRefresh (MATH.md §4.3 C): conformance, SGHMC plus a state-independent refresh,
// warm-up learning, stationarity; an online-U-turn refresh is the negative control.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "mg_support.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
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

template <class Scalar>
SGHMCLearnedRefreshParams<Scalar> params(Scalar h, Scalar c) {
  SGHMCLearnedRefreshParams<Scalar> p;
  p.step_size = h;
  p.friction = c;
  p.mass = Scalar(1);
  p.max_length = 1000;
  return p;
}

/// The plain SGHMC sampler with the same h, C, m (the reference of every step).
template <class Scalar, int Dim>
SGHMC<Scalar, Dim> plain_sghmc(const SGHMCLearnedRefreshParams<Scalar>& p) {
  return SGHMC<Scalar, Dim>({p.step_size, p.friction, p.mass});
}

/// A full set of lengths: the given values repeated up to the capacity.
template <class Lengths>
Lengths full_lengths(std::initializer_list<std::uint32_t> values) {
  Lengths l;
  while (!l.full()) {
    for (std::uint32_t v : values) l.add(v);
  }
  return l;
}

/// Warm-up from theta0: steps while the state's lengths are not full; returns the state after it.
template <class Sampler, class Model>
typename Sampler::State learn(const Sampler& s, const Model& model,
                              const Vector<typename Sampler::Scalar, Sampler::dim>& theta0,
                              host::Rng& rng) {
  auto z = s.start(theta0);
  long guard = 0;
  while (!z.extra().lengths.full() && guard++ < 10000000) REQUIRE(s.step(z, model, rng));
  return z;
}

/// Same position and momentum, bit for bit (states of different samplers).
template <class A, class B>
bool same_values(const A& a, const B& b) {
  const auto pa = a.position().eval(), pb = b.position().eval();
  const auto ra = a.momentum().eval(), rb = b.momentum().eval();
  return std::memcmp(pa.data(), pb.data(), sizeof(pa)) == 0 &&
         std::memcmp(ra.data(), rb.data(), sizeof(ra)) == 0;
}

}  // namespace

TEST_CASE_TEMPLATE("SGHMCLearnedRefresh: bad input returns a Status; nothing changes", Scalar,
                   float, double) {
  using S = SGHMCLearnedRefresh<Scalar, 3, 4>;
  const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  typename S::State z0;
  z0.position() << Scalar(0.3), Scalar(-0.2), Scalar(1.0);
  z0.momentum() << Scalar(1), Scalar(2), Scalar(3);
  // Two bookkeeping phases: warm-up measuring a trajectory (2 of 4 lengths learned, 3 steps into
  // the third) and sampling with 2 steps before the next refresh.
  auto warm = z0;
  {
    typename S::Extra e;
    e.lengths.add(4);
    e.lengths.add(6);
    e.steps = 3;
    e.running = true;
    warm.set_extra(e);
  }
  auto sampling = z0;
  {
    typename S::Extra e;
    e.lengths = full_lengths<typename S::Lengths>({4, 7});
    e.remaining = 2;
    sampling.set_extra(e);
  }
  auto expect = [&](const S& s, StatusCode code) {
    CHECK(s.status() == code);
    for (const auto& zin : {warm, sampling}) {
      host::Rng rng(1);
      auto z = zin;
      CHECK(s.step(z, model, rng) == code);
      CHECK(z == zin);  // values and bookkeeping
    }
  };
  for (Scalar h : {Scalar(0), Scalar(-1), nan})
    expect(S(params<Scalar>(h, Scalar(1))), StatusCode::InvalidStepSize);
  expect(S(params<Scalar>(Scalar(0.1), Scalar(-1))), StatusCode::InvalidParameter);
  auto p = params<Scalar>(Scalar(0.1), Scalar(1));
  p.mass = Scalar(0);
  expect(S(p), StatusCode::InvalidParameter);
  p = params<Scalar>(Scalar(0.1), Scalar(1));
  p.max_length = 0;
  expect(S(p), StatusCode::InvalidParameter);
  const S s(params<Scalar>(Scalar(0.1), Scalar(1)));
  REQUIRE(s.status());
  {  // set_lengths refuses an empty or invalid set and leaves z alone
    auto z = sampling;
    const typename S::Lengths none;
    CHECK(s.set_lengths(z, none) == StatusCode::InvalidParameter);
    typename S::Lengths zero_length;
    zero_length.values[0] = 0;
    zero_length.count = 1;
    CHECK(s.set_lengths(z, zero_length) == StatusCode::InvalidParameter);
    CHECK(z == sampling);
  }
  {  // bookkeeping that breaks the lengths' invariant (count beyond the capacity)
    auto zin = z0;
    typename S::Extra e;
    e.lengths.count = 5;
    zin.set_extra(e);
    host::Rng rng(1);
    auto z = zin;
    CHECK(s.step(z, model, rng) == StatusCode::InvalidParameter);
    CHECK(z == zin);
  }
  {  // non-finite gradient, with and without a refresh due: state and bookkeeping unchanged (a
     // refreshed momentum is put back)
    sgmcmc_test::BadGradientModel<Scalar, 3> bad;
    auto warm_refresh = warm;
    auto e = warm_refresh.extra();
    e.running = false;
    warm_refresh.set_extra(e);
    auto sampling_refresh = sampling;
    e = sampling_refresh.extra();
    e.remaining = 0;
    sampling_refresh.set_extra(e);
    for (const auto& zin : {warm, sampling, warm_refresh, sampling_refresh}) {
      host::Rng rng(1);
      auto z = zin;
      CHECK(s.step(z, bad, rng) == StatusCode::NonFiniteGradient);
      CHECK(z == zin);
    }
  }
  {  // non-finite state (no refresh due, which would replace the bad momentum)
    for (auto zin : {warm, sampling}) {
      zin.momentum()[0] = nan;
      host::Rng rng(1);
      auto z = zin;
      CHECK_FALSE(s.step(z, model, rng));
      CHECK(z == zin);
    }
  }
}

TEST_CASE_TEMPLATE("SGHMCLearnedRefresh: a step is SGHMC's, after a state-independent refresh",
                   Scalar, float, double) {
  using S = SGHMCLearnedRefresh<Scalar, 3, 3>;
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  const auto prm = params<Scalar>(Scalar(0.05), Scalar(0.7));
  const S s(prm);
  const auto sghmc = plain_sghmc<Scalar, 3>(prm);
  typename S::Lengths lengths;
  for (std::uint32_t l : {3U, 5U, 9U}) lengths.add(l);
  REQUIRE(lengths.full());
  typename S::State z0;
  z0.position() << Scalar(0.3), Scalar(-0.2), Scalar(1.0);
  z0.momentum() << Scalar(1), Scalar(2), Scalar(3);
  REQUIRE(s.set_lengths(z0, lengths));
  CHECK(z0.extra().remaining == 0);
  auto reference = [&]() {
    auto w = sghmc.start(z0.position());
    w.momentum() = z0.momentum();
    return w;
  };
  auto with_remaining = [&](std::uint32_t n) {
    auto z = z0;
    auto e = z.extra();
    e.remaining = n;
    z.set_extra(e);
    return z;
  };
  // Sampling, countdown > 0: exactly one SGHMC step, countdown − 1.
  {
    host::Rng r1(3), r2(3);
    auto z = with_remaining(4);
    auto w = reference();
    REQUIRE(s.step(z, model, r1));
    REQUIRE(sghmc.step(w, model, r2));
    CHECK(same_values(z, w));
    CHECK(z.extra().remaining == 3);
    CHECK(z.extra().lengths.values == lengths.values);
    CHECK(mgtest::same_stream_position(r1, r2));
  }
  // Sampling, countdown = 0: r ~ N(0, mI), L ~ Uniform(lengths), one SGHMC step.
  {
    host::Rng r1(3), r2(3);
    auto z = with_remaining(0);
    auto w = reference();
    REQUIRE(s.step(z, model, r1));
    REQUIRE(sghmc.refresh_momentum(w, r2));
    const std::uint32_t l = lengths.draw(r2);
    REQUIRE(sghmc.step(w, model, r2));
    CHECK(same_values(z, w));
    CHECK(z.extra().remaining == l - 1);
    CHECK(mgtest::same_stream_position(r1, r2));
  }
  // Warm-up: the first step refreshes r and starts a measured trajectory; later steps are plain
  // SGHMC steps until the U-turn (θ − θ₀)·r < 0, whose step count is stored.
  {
    host::Rng r1(3), r2(3);
    const Vector<Scalar, 3> theta0 = z0.position();
    auto zl = s.start(theta0);
    auto w = sghmc.start(theta0);
    REQUIRE(sghmc.refresh_momentum(w, r2));
    const Vector<Scalar, 3> origin = w.position();
    std::uint32_t steps = 0;
    bool turned = false;
    while (!turned && steps < 1000) {
      REQUIRE(s.step(zl, model, r1));
      REQUIRE(sghmc.step(w, model, r2));
      ++steps;
      REQUIRE(same_values(zl, w));
      turned = (w.position() - origin).dot(w.momentum()) < Scalar(0);
      CHECK(zl.extra().running == !turned);
    }
    REQUIRE(turned);
    CHECK(zl.extra().lengths.count == 1);
    CHECK(zl.extra().lengths.values[0] == steps);
    CHECK(steps > 1);  // a real trajectory, not a trivial one
  }
  // Zero-noise limit (C = 0, no refresh due): the deterministic kick–drift update.
  {
    const S cold(params<Scalar>(Scalar(0.05), Scalar(0)));
    host::Rng rng(3);
    auto z = with_remaining(10);
    Vector<Scalar, 3> g;
    model.gradient(z0.position(), g);
    const Vector<Scalar, 3> r1 = z0.momentum() - Scalar(0.05) * g;
    const Vector<Scalar, 3> th1 = z0.position() + Scalar(0.05) * r1;
    REQUIRE(cold.step(z, model, rng));
    CHECK((z.momentum() - r1).cwiseAbs().maxCoeff() < Scalar(1e-6));
    CHECK((z.position() - th1).cwiseAbs().maxCoeff() < Scalar(1e-6));
  }
  // Determinism with a fixed seed.
  auto run = [&](std::uint64_t seed) {
    host::Rng rng(seed);
    auto z = z0;
    for (int i = 0; i < 200; ++i) REQUIRE(s.step(z, model, rng));
    return z;
  };
  CHECK(run(5) == run(5));
  CHECK_FALSE(bit_identical(run(5), run(6)));
}

TEST_CASE("SGHMCLearnedRefresh: the refresh schedule does not depend on the chain's state") {
  // Two chains on different targets from different starts, same seed: the refresh times and the
  // drawn lengths coincide (the RNG use per step is fixed, so L_k depends on the seed only).
  using S = SGHMCLearnedRefresh<double, 2, 4>;
  const S s(params<double>(0.05, 0.5));
  S::Lengths lengths;
  for (std::uint32_t l : {2U, 7U, 11U, 30U}) lengths.add(l);
  const test::CorrelatedGaussian2<double> a;
  const test::Banana<double> b;
  host::Rng r1(77), r2(77);
  auto za = s.start(Vector<double, 2>(0.0, 0.0));
  auto zb = s.start(Vector<double, 2>(2.0, -1.0));
  REQUIRE(s.set_lengths(za, lengths));
  REQUIRE(s.set_lengths(zb, lengths));
  int refreshes = 0;
  for (int i = 0; i < 2000; ++i) {
    refreshes += za.extra().remaining == 0;
    REQUIRE(s.step(za, a, r1));
    REQUIRE(s.step(zb, b, r2));
    REQUIRE(za.extra().remaining == zb.extra().remaining);
  }
  CHECK(refreshes > 2000 / 30);
  CHECK_FALSE(bit_identical(za, zb));
}

TEST_CASE("SGHMCLearnedRefresh: warm-up fills the fixed array with U-turn lengths") {
  using S = SGHMCLearnedRefresh<double, 1, 16>;
  const test::StandardNormal<double, 1> target;
  // h = 0.05, C = 0.05: nearly Hamiltonian; from (θ₀, r₀) the first U-turn of (θ − θ₀)·r comes
  // before half a period (π ≈ 63 steps): every length lies in [1, 63] plus slack for the noise.
  {
    const S s(params<double>(0.05, 0.05));
    host::Rng rng(9);
    auto z = learn(s, target, Vector<double, 1>(0.5), rng);
    const S::Lengths learned = z.extra().lengths;
    CHECK(learned.full());
    CHECK(learned.count == 16);
    for (int i = 0; i < 16; ++i) {
      CHECK(learned.values[std::size_t(i)] >= 1);
      CHECK(learned.values[std::size_t(i)] <= 80);
    }
    MESSAGE("learned lengths on N(0,1), h=0.05: mean " << learned.mean() << " steps");
    CHECK(learned.mean() * 0.05 > 0.5);
    CHECK(learned.mean() * 0.05 < 3.2);
    // Once full, the lengths are frozen: later steps sample with them.
    for (int i = 0; i < 100; ++i) REQUIRE(s.step(z, target, rng));
    CHECK(z.extra().lengths.values == learned.values);
    CHECK(z.extra().lengths.count == 16);
    // Lengths learned by one chain serve another: set_lengths ends its warm-up.
    auto other = s.start(Vector<double, 1>(-1.0));
    REQUIRE(s.set_lengths(other, learned));
    REQUIRE(s.step(other, target, rng));
    CHECK(other.extra().lengths.values == learned.values);
    CHECK_FALSE(other.extra().running);
    // Its first step refreshed and drew L from the learned set: L − 1 steps remain.
    const std::uint32_t drawn = other.extra().remaining + 1;
    CHECK(std::find(learned.values.begin(), learned.values.end(), drawn) != learned.values.end());
  }
  // The cap.
  {
    auto p = params<double>(0.05, 0.05);
    p.max_length = 5;
    const S s(p);
    host::Rng rng(9);
    const auto z = learn(s, target, Vector<double, 1>(0.5), rng);
    int capped = 0;
    for (int i = 0; i < 16; ++i) {
      CHECK(z.extra().lengths.values[std::size_t(i)] <= 5);
      capped += z.extra().lengths.values[std::size_t(i)] == 5;
    }
    CHECK(capped > 0);  // the cap bites (most U-turns come after ~30 steps)
  }
}

TEST_CASE("SGHMCLearnedRefresh is stationary on the double well; online U-turn refresh is not") {
  // h = 0.02, C = 0.05, 2e6 steps thinned by 10 (ESS of θ² ≈ 5e4). The control runs the same
  // SGHMC steps but refreshes whenever (θ − θ_refresh)·r < 0, the state-dependent stopping rule
  // MATH.md §4.3 warns against: E θ² comes out near 1.5 instead of 0.83.
  using S = SGHMCLearnedRefresh<double, 1>;
  const test::DoubleWell<double> dw;
  const auto prm = params<double>(0.02, 0.05);
  const S s(prm);
  host::Rng rng(1);
  auto z = learn(s, dw, Vector<double, 1>(0.3), rng);
  auto check = [](const std::vector<double>& sq, const char* what) {
    const auto zs = mgtest::z_score(sq, test::DoubleWell<double>::second_moment);
    MESSAGE(doctest::String(what) << ": E theta^2 = " << zs.mean << " vs "
                                  << test::DoubleWell<double>::second_moment << ", z = " << zs.z
                                  << " (ESS " << zs.ess << ")");
    return zs.z < kZ;
  };
  const long n = 2000000;
  std::vector<double> sq;
  for (long i = 0; i < n; ++i) {
    REQUIRE(s.step(z, dw, rng));
    if (i % 10 == 0) sq.push_back(z.position()[0] * z.position()[0]);
  }
  CHECK(check(sq, "learned refresh"));
  sq.clear();
  const auto sghmc = plain_sghmc<double, 1>(prm);
  auto w = sghmc.start(Vector<double, 1>(z.position()));
  REQUIRE(sghmc.refresh_momentum(w, rng));
  Vector<double, 1> origin = w.position();
  for (long i = 0; i < n; ++i) {
    REQUIRE(sghmc.step(w, dw, rng));
    if ((w.position() - origin).dot(w.momentum()) < 0) {
      REQUIRE(sghmc.refresh_momentum(w, rng));
      origin = w.position();
    }
    if (i % 10 == 0) sq.push_back(w.position()[0] * w.position()[0]);
  }
  CHECK_FALSE(check(sq, "online U-turn refresh (control)"));
}

TEST_CASE("SGHMCLearnedRefresh on the correlated Gaussian with gradient noise and V̂") {
  // ρ = 0.9, g = ∇U + N(0, 0.5 I), V̂ = 0.5 (2C − hV̂ > 0), h = 0.01, C = 1, 2e6 steps thinned
  // by 10. Kick–drift's exact bias at this h is O(h²) on θ (MATH.md §1.3): far inside 4 se.
  using S = SGHMCLearnedRefresh<double, 2>;
  const test::NoisyGradient<test::CorrelatedGaussian2<double>, double, 2> model(
      test::CorrelatedGaussian2<double>{}, 0.5, 2024);
  S s(params<double>(0.01, 1.0));
  REQUIRE(s.set_gradient_noise(0.5));
  host::Rng rng(4);
  auto z = learn(s, model, Vector<double, 2>(0.3, 0.1), rng);
  std::vector<double> x0, x1;
  for (long i = 0; i < 2000000; ++i) {
    REQUIRE(s.step(z, model, rng));
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
          << cv.z << ", ESS " << v0.ess << "), mean length " << z.extra().lengths.mean());
  CHECK(v0.z < kZ);
  CHECK(v1.z < kZ);
  CHECK(cv.z < kZ);
}
