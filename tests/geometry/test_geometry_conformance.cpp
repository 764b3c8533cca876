// SPDX-License-Identifier: MIT
// Conformance of the geometry samplers (float and double): the zero-noise rule of MATH.md §2.2
// written by hand, fixed-seed determinism, and every bad input returning its Status with the
// state bit-identical (non-PSD and non-finite metrics included).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "conformance_cases.hpp"
#include "geometry_models.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/naive.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"
#include "test_models.hpp"

using namespace sgmcmc;
using sgmcmc_test::bit_identical;

namespace {

template <class Scalar>
Scalar tol() {
  return std::is_same_v<Scalar, float> ? Scalar(2e-5) : Scalar(1e-13);
}

template <class T>
T quiet_nan() {
  return T(std::numeric_limits<float>::quiet_NaN());
}
template <class T>
T infinity() {
  return T(std::numeric_limits<float>::infinity());
}

/// A metric that can be made bad: mode 0 good, 1 not PSD, 2 NaN, 3 +Inf.
struct SwitchDiag {
  int mode = 0;
  template <class T, int D>
  Vector<T, D> operator()(const Vector<T, D>& th) const {
    Vector<T, D> g = geo::SeparableDiagInverse{}(th);
    if (mode == 1) g[0] = T(-0.5);
    if (mode == 2) g[D - 1] = quiet_nan<T>();
    if (mode == 3) g[0] = infinity<T>();
    return g;
  }
};
struct SwitchDense {
  int mode = 0;
  template <class T, int D>
  Matrix<T, D, D> operator()(const Vector<T, D>& th) const {
    Matrix<T, D, D> g = geo::DenseInverse{}(th);
    if (mode == 1) g(0, 0) -= T(5);  // e₀ᵀ G⁻¹ e₀ < 0: indefinite
    if (mode == 2) g(1, 0) = g(0, 1) = quiet_nan<T>();
    if (mode == 3) g(1, 1) = infinity<T>();
    return g;
  }
};
struct SwitchG {  // G form: mode 1 makes G indefinite (its Cholesky fails)
  int mode = 0;
  template <class T, int D>
  Matrix<T, D, D> operator()(const Vector<T, D>& th) const {
    Matrix<T, D, D> g = geo::DenseMetricG{}(th);
    if (mode == 1) g(0, 0) = T(-1);
    if (mode == 2) g(0, 0) = quiet_nan<T>();
    return g;
  }
};

template <class T>
struct Tag {
  using type = T;
};

/// A model whose potential value is NaN (its gradient is fine).
template <class Scalar>
struct NanPotentialModel : geo::MinibatchModel<geo::GaussianTarget, Scalar, 2> {
  template <class T>
  T potential(const Vector<T, 2>&) const {
    return quiet_nan<T>();
  }
};

template <class S>
auto random_state(const S& s, std::uint64_t seed) {
  using Scalar = typename S::Scalar;
  auto z = s.start(Vector<Scalar, S::dim>::Zero());
  sgmcmc_test::TinyRng rng(seed);
  auto flat = z.flat();
  for (int i = 0; i < flat.size(); ++i) flat[i] = Scalar(0.5) * normal<Scalar>(rng);
  z.set_flat(flat);
  return z;
}

}  // namespace

TEST_CASE_TEMPLATE("zero noise reduces to the hand-written rules of MATH.md §2.2", Scalar, float,
                   double) {
  constexpr int D = 3;
  const Scalar h = Scalar(0.05);
  sgmcmc_test::QuarticModel<Scalar, D> model;
  using M = InverseMetric<DiagonalShape, geo::SeparableDiagInverse, true>;
  auto ginv = [](const Vector<Scalar, D>& t) { return geo::SeparableDiagInverse{}(t); };
  auto s_of = [&](const Vector<Scalar, D>& t) { return Vector<Scalar, D>(ginv(t).cwiseSqrt()); };
  auto check_close = [](const auto& got, const auto& expected) {
    const Scalar scale = Scalar(1) + expected.flat().cwiseAbs().maxCoeff();
    CHECK((got.flat() - expected.flat()).cwiseAbs().maxCoeff() <= tol<Scalar>() * scale);
  };
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SUBCASE("SGRLD: θ ← θ − hG⁻¹g + hΓ") {
      SGRLD<Scalar, D, M> s({h, {}, {}});
      auto z = random_state(s, seed);
      auto expected = z;
      Vector<Scalar, D> g;
      model.gradient(z.position(), g);
      const Vector<Scalar, D> th = z.position();
      expected.position() =
          th - h * ginv(th).cwiseProduct(g) + h * geo::SeparableDiagInverseDivergence{}(th);
      REQUIRE(s.step_with_noise(z, model, decltype(s)::NoiseVector::Zero()));
      check_close(z, expected);
    }
    SUBCASE("SGRHMC, Algorithm 1 and kick–drift; naive SGRHMC without ∇·S") {
      SGRHMC<Scalar, D, M, AutoGamma, ExplicitEuler> e({h, {}, {}});
      SGRHMC<Scalar, D, M, AutoGamma, KickDrift> k({h, {}, {}});
      NaiveSGRHMC<Scalar, D, M, ExplicitEuler> n({h, {}});
      const auto z0 = random_state(e, seed);
      const Vector<Scalar, D> th = z0.position(), r = z0.momentum();
      Vector<Scalar, D> g;
      model.gradient(th, g);
      const Vector<Scalar, D> s = s_of(th), divs = geo::SeparableDiagSqrtDivergence{}(th);
      auto ze = z0, zk = z0, zn = z0;
      auto ee = z0, ek = z0, en = z0;
      ee.position() = th + h * s.cwiseProduct(r);
      ee.momentum() = r - h * s.cwiseProduct(g) - h * ginv(th).cwiseProduct(r) + h * divs;
      ek.momentum() = ee.momentum();
      ek.position() = th + h * s.cwiseProduct(ek.momentum());
      en.position() = ee.position();
      en.momentum() = ee.momentum() - h * divs;
      const auto zero = decltype(e)::NoiseVector::Zero();
      REQUIRE(e.step_with_noise(ze, model, zero));
      REQUIRE(k.step_with_noise(zk, model, zero));
      REQUIRE(n.step_with_noise(zn, model, zero));
      check_close(ze, ee);
      check_close(zk, ek);
      check_close(zn, en);
    }
  }
}

TEST_CASE_TEMPLATE("a fixed seed gives a bit-identical chain; other streams differ", Scalar, float,
                   double) {
  constexpr int D = 2;
  sgmcmc_test::QuarticModel<Scalar, D> model;
  geo::MinibatchModel<geo::BananaTarget, Scalar, D> banana;
  using MD = InverseMetric<DenseShape, geo::DenseInverse>;
  SGRLD<Scalar, D, MD> rld({Scalar(0.02), {}, {}});
  SGRHMC<Scalar, D, MD> rhmc({Scalar(0.02), {}, {}});
  GSGRHMC<Scalar, D> gs({Scalar(0.01), {}});
  auto run = [&](const auto& s, const auto& m, std::uint64_t seed, std::uint64_t stream) {
    host::Rng rng(seed, stream);
    auto z = random_state(s, 7);
    for (int i = 0; i < 60; ++i) REQUIRE(s.step(z, m, rng));
    return z;
  };
  auto check = [&](const auto& s, const auto& m) {
    const auto a = run(s, m, 42, 0), b = run(s, m, 42, 0), c = run(s, m, 42, 1);
    CHECK(bit_identical(a, b));
    CHECK_FALSE(bit_identical(a, c));
  };
  check(rld, model);
  check(rhmc, model);
  check(gs, banana);
}

TEST_CASE_TEMPLATE("bad input returns its Status and leaves the state bit-identical", Scalar, float,
                   double) {
  constexpr int D = 3;
  sgmcmc_test::QuarticModel<Scalar, D> model;
  host::Rng rng(9);
  using MDiag = InverseMetric<DiagonalShape, SwitchDiag, true>;
  using MDense = InverseMetric<DenseShape, SwitchDense>;
  using MG = Metric<DenseShape, SwitchG>;

  // Runs one step from a random state and checks the status and that nothing moved.
  auto expect = [&](const auto& s, const auto& m, StatusCode code, std::uint64_t seed) {
    const auto z0 = random_state(s, seed);
    auto z = z0;
    const Status st = s.step(z, m, rng);
    CHECK(st == code);
    if (code != StatusCode::Ok) CHECK(bit_identical(z, z0));
  };
  auto metric_cases = [&](auto tag) {
    using S = typename decltype(tag)::type;
    using P = typename S::Params;
    auto make = [](auto metric_fn) {
      P p;
      p.step_size = Scalar(0.05);
      p.metric.fn = metric_fn;
      return S(p);
    };
    using Fn = std::decay_t<decltype(P{}.metric.fn)>;
    expect(make(Fn{0}), model, StatusCode::Ok, 1);
    if constexpr (!std::is_same_v<Fn, SwitchG>) {
      expect(make(Fn{1}), model, StatusCode::NoiseNotPSD, 2);  // G⁻¹ not PSD
      expect(make(Fn{3}), model, StatusCode::NonFiniteMetric, 4);
    } else {
      expect(make(Fn{1}), model, StatusCode::NonFiniteMetric, 2);  // G not PD: no inverse
    }
    expect(make(Fn{2}), model, StatusCode::NonFiniteMetric, 3);
    // NaN and Inf gradients
    for (Scalar bad : {quiet_nan<Scalar>(), infinity<Scalar>(), -infinity<Scalar>()}) {
      expect(make(Fn{0}), sgmcmc_test::BadGradientModel<Scalar, D>{bad},
             StatusCode::NonFiniteGradient, 5);
    }
    // invalid step sizes
    for (Scalar h : {Scalar(0), Scalar(-0.1), quiet_nan<Scalar>(), infinity<Scalar>()}) {
      P p;
      p.step_size = h;
      const S s(p);
      CHECK(s.status() == StatusCode::InvalidStepSize);
      expect(s, model, StatusCode::InvalidStepSize, 6);
    }
    // V̂ so large that 2G⁻¹ − hB̂ is not PSD: only the step can tell (the metric varies)
    {
      S s = make(Fn{0});
      CHECK(s.set_gradient_noise(Scalar(1e6)));
      expect(s, model, StatusCode::NoiseNotPSD, 7);
      CHECK(s.set_gradient_noise(Scalar(-1)) == StatusCode::InvalidParameter);
    }
    // a non-finite state
    {
      const S s = make(Fn{0});
      auto z = random_state(s, 8);
      z.position()[0] = quiet_nan<Scalar>();
      const auto before = z;
      const Status st = s.step(z, model, rng);
      CHECK(!st);
      CHECK(bit_identical(z, before));
    }
  };
  SUBCASE("SGRLD, diagonal") {
    metric_cases(Tag<SGRLD<Scalar, D, MDiag>>{});
  }
  SUBCASE("SGRLD, dense") {
    metric_cases(Tag<SGRLD<Scalar, D, MDense>>{});
  }
  SUBCASE("SGRLD, dense G form") {
    metric_cases(Tag<SGRLD<Scalar, D, MG>>{});
  }
  SUBCASE("SGRHMC, diagonal") {
    metric_cases(Tag<SGRHMC<Scalar, D, MDiag>>{});
  }
  SUBCASE("SGRHMC, dense, Algorithm 1") {
    metric_cases(Tag<SGRHMC<Scalar, D, MDense, AutoGamma, ExplicitEuler>>{});
  }
  SUBCASE("SGRHMC, dense G form") {
    metric_cases(Tag<SGRHMC<Scalar, D, MG>>{});
  }

  SUBCASE("gSGRHMC: a non-finite potential value makes a non-finite metric") {
    using NanPotential = NanPotentialModel<Scalar>;
    GSGRHMC<Scalar, 2> an({Scalar(0.01), {}});
    GSGRHMC<Scalar, 2, AutoGamma> ad({Scalar(0.01), {}});
    expect(an, NanPotential{}, StatusCode::NonFiniteMetric, 9);
    expect(ad, NanPotential{}, StatusCode::NonFiniteMetric, 10);
    expect(an, geo::MinibatchModel<geo::GaussianTarget, Scalar, 2>{}, StatusCode::Ok, 11);
  }

  SUBCASE("gSGRHMC: an invalid metric (D ≤ 0, floor ≤ 0, non-finite C) is refused up front") {
    const geo::MinibatchModel<geo::GaussianTarget, Scalar, 2> gauss{};
    for (int which = 0; which < 5; ++which) {
      typename GSGRHMC<Scalar, 2>::Params p;
      p.step_size = Scalar(0.01);
      if (which == 0) p.metric.scale = Scalar(-1.5);
      if (which == 1) p.metric.scale = Scalar(0);
      if (which == 2) p.metric.floor = Scalar(0);
      if (which == 3) p.metric.shift = quiet_nan<Scalar>();
      if (which == 4) p.metric.floor = infinity<Scalar>();
      const GSGRHMC<Scalar, 2> an(p);
      const GSGRHMC<Scalar, 2, AutoGamma> ad({p.step_size, p.metric});
      CHECK(an.status() == StatusCode::InvalidParameter);
      CHECK(ad.status() == StatusCode::InvalidParameter);
      expect(an, gauss, StatusCode::InvalidParameter, 12);
      expect(ad, gauss, StatusCode::InvalidParameter, 13);
      auto z = random_state(an, 14);
      const auto before = z;
      typename GSGRHMC<Scalar, 2>::NoiseVector zeta = GSGRHMC<Scalar, 2>::NoiseVector::Zero();
      CHECK(an.step_with_noise(z, gauss, zeta) == StatusCode::InvalidParameter);
      CHECK(bit_identical(z, before));
    }
  }
}

TEST_CASE_TEMPLATE("the conformance cases for tests/core hold: zero-noise rule, invalid()", Case,
                   geo::SGRLDCase<float, 3>, geo::SGRLDCase<double, 5>, geo::SGRHMCCase<float, 2>,
                   geo::SGRHMCCase<double, 4>, geo::SGRHMCCase<double, 3, ExplicitEuler>,
                   geo::GSGRHMCCase<float, 2>, geo::GSGRHMCCase<double, 3>) {
  using Scalar = typename Case::Scalar;
  constexpr int Dim = Case::Dim;
  const Scalar h = Scalar(0.05);
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  const auto s = Case::make(h);
  REQUIRE(s.status());
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto z = random_state(s, seed);
    auto expected = z;
    Vector<Scalar, Dim> g;
    model.gradient(z.position(), g);
    REQUIRE(s.step_with_noise(z, model, Case::Sampler::NoiseVector::Zero()));
    Case::deterministic(expected, g, h);
    const Scalar scale = Scalar(1) + expected.flat().cwiseAbs().maxCoeff();
    CHECK((z.flat() - expected.flat()).cwiseAbs().maxCoeff() <= tol<Scalar>() * scale);
  }
  const auto bad = Case::invalid();
  auto z = random_state(bad, 4);
  const auto z0 = z;
  host::Rng rng(3);
  const Status st = bad.step(z, model, rng);
  CHECK((st == StatusCode::InvalidParameter || st == StatusCode::InvalidStepSize));
  CHECK(bit_identical(z, z0));
}
