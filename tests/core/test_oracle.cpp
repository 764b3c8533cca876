// Recipe oracle: one explicit-Euler step of every named sampler equals an independent dense
// implementation of MATH.md §1.2 built from §2.1's table (H, D, Q, B̂; Γ by finite differences).
#include <doctest/doctest.h>

#include <random>

#include "reference_recipe.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "test_models.hpp"

using namespace sgmcmc;
using sgmcmc_test::DMat;
using sgmcmc_test::DVec;

namespace {

constexpr int d = 3;
using Model = sgmcmc_test::QuarticModel<double, d>;

DVec grad_u(const DVec& z) {
  Vector<double, d> th = z.head<d>(), g;
  Model{}.gradient(th, g);
  return g;
}

DVec random_vector(std::mt19937_64& gen, Eigen::Index n, double scale = 1.0) {
  std::normal_distribution<double> nd(0.0, scale);
  DVec v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = nd(gen);
  return v;
}

template <class Engine>
double engine_error(const Engine& engine, const sgmcmc_test::DenseSpec& spec, double h,
                    std::uint64_t seed) {
  using StateT = typename Engine::StateType;
  std::mt19937_64 gen(seed);
  StateT z;
  const DVec z0 = random_vector(gen, StateT::size, 0.8);
  z.set_flat(z0);
  typename Engine::NoiseVector zeta;
  const DVec zeta_d = random_vector(gen, zeta.size());
  zeta = zeta_d;
  const auto st = engine.step_with_noise(z, Model{}, zeta);
  REQUIRE(st);
  const DVec ref = sgmcmc_test::reference_step(spec, z0, h, zeta_d);
  return (DVec(z.flat()) - ref).cwiseAbs().maxCoeff();
}

const DVec vhat = (DVec(d) << 0.5, 1.5, 0.25).finished();

}  // namespace

TEST_CASE("SGLD equals the dense recipe for scaled, diagonal and dense D0, with and without V̂") {
  const double h = 0.05;
  for (bool with_v : {false, true}) {
    // Scaled D0 = 0.8 I.
    {
      SGLD<double, d>::Params p;
      p.step_size = h;
      p.diffusion.value = 0.8;
      SGLD<double, d> s(p);
      if (with_v) REQUIRE(s.set_gradient_noise(Vector<double, d>(vhat)));
      const DMat d0 = 0.8 * DMat::Identity(d, d);
      sgmcmc_test::DenseSpec spec{grad_u,
                                  [&](const DVec&) { return d0; },
                                  [&](const DVec&) { return DMat::Zero(d, d).eval(); },
                                  [&](const DVec&) {
                                    return with_v ? (d0 * vhat.asDiagonal() * d0).eval()
                                                  : DMat::Zero(d, d).eval();
                                  },
                                  {0, 1, 2}};
      CHECK(engine_error(s, spec, h, 11) < 1e-12);
    }
    // Diagonal D0.
    {
      SGLD<double, d, Diagonal<double, d>>::Params p;
      p.step_size = h;
      p.diffusion.value << 0.5, 1.0, 2.0;
      SGLD<double, d, Diagonal<double, d>> s(p);
      if (with_v) REQUIRE(s.set_gradient_noise(Vector<double, d>(vhat)));
      const DMat d0 = DVec(p.diffusion.value).asDiagonal();
      sgmcmc_test::DenseSpec spec{grad_u,
                                  [&](const DVec&) { return d0; },
                                  [&](const DVec&) { return DMat::Zero(d, d).eval(); },
                                  [&](const DVec&) {
                                    return with_v ? (d0 * vhat.asDiagonal() * d0).eval()
                                                  : DMat::Zero(d, d).eval();
                                  },
                                  {0, 1, 2}};
      CHECK(engine_error(s, spec, h, 12) < 1e-12);
    }
    // Dense SPD D0.
    {
      SGLD<double, d, Dense<double, d, d>>::Params p;
      p.step_size = h;
      p.diffusion.value << 1.0, 0.3, 0.1, 0.3, 0.8, -0.2, 0.1, -0.2, 1.2;
      SGLD<double, d, Dense<double, d, d>> s(p);
      if (with_v) REQUIRE(s.set_gradient_noise(Vector<double, d>(vhat)));
      const DMat d0 = p.diffusion.value;
      sgmcmc_test::DenseSpec spec{grad_u,
                                  [&](const DVec&) { return d0; },
                                  [&](const DVec&) { return DMat::Zero(d, d).eval(); },
                                  [&](const DVec&) {
                                    return with_v ? (d0 * vhat.asDiagonal() * d0).eval()
                                                  : DMat::Zero(d, d).eval();
                                  },
                                  {0, 1, 2}};
      CHECK(engine_error(s, spec, h, 13) < 1e-12);
    }
  }
}

namespace {
/// MATH.md §2.1 SGHMC row: H = U + rᵀr/(2m), D = diag(0, C), Q = [[0,-I],[I,0]], B̂ = diag(0, V̂).
sgmcmc_test::DenseSpec sghmc_spec(double c, double m, bool with_v) {
  constexpr int n = 2 * d;
  DMat dd = DMat::Zero(n, n), q = DMat::Zero(n, n), b = DMat::Zero(n, n);
  dd.bottomRightCorner(d, d) = c * DMat::Identity(d, d);
  q.topRightCorner(d, d) = -DMat::Identity(d, d);
  q.bottomLeftCorner(d, d) = DMat::Identity(d, d);
  if (with_v) b.bottomRightCorner(d, d) = vhat.asDiagonal();
  return {[m](const DVec& z) {
            DVec g(2 * d);
            g << grad_u(z), z.tail(d) / m;
            return g;
          },
          [dd](const DVec&) { return dd; },
          [q](const DVec&) { return q; },
          [b](const DVec&) { return b; },
          {3, 4, 5}};
}

/// MATH.md §2.1 SGNHT row: H = U + rᵀr/2 + (d/2)(ξ − A)², D = diag(0, A I, 0),
/// Q = [[0,−I,0],[I,0,r/d],[0,−rᵀ/d,0]], B̂ = diag(0, V̂, 0).
sgmcmc_test::DenseSpec sgnht_spec(double a, bool with_v) {
  constexpr int n = 2 * d + 1;
  DMat dd = DMat::Zero(n, n), b = DMat::Zero(n, n);
  dd.block(d, d, d, d) = a * DMat::Identity(d, d);
  if (with_v) b.block(d, d, d, d) = vhat.asDiagonal();
  return {[a](const DVec& z) {
            DVec g(2 * d + 1);
            g << grad_u(z), z.segment(d, d), d * (z[2 * d] - a);
            return g;
          },
          [dd](const DVec&) { return dd; },
          [](const DVec& z) {
            DMat q = DMat::Zero(n, n);
            q.block(0, d, d, d) = -DMat::Identity(d, d);
            q.block(d, 0, d, d) = DMat::Identity(d, d);
            q.block(d, 2 * d, d, 1) = z.segment(d, d) / d;
            q.block(2 * d, d, 1, d) = -z.segment(d, d).transpose() / d;
            return q;
          },
          [b](const DVec&) { return b; },
          {3, 4, 5}};
}
}  // namespace

TEST_CASE("SGHMC (explicit Euler) equals the dense recipe") {
  for (bool with_v : {false, true}) {
    SGHMC<double, d, ExplicitEuler>::Params p;
    p.step_size = 0.07;
    p.friction = 2.5;
    p.mass = 1.7;
    SGHMC<double, d, ExplicitEuler> s(p);
    if (with_v) REQUIRE(s.set_gradient_noise(Vector<double, d>(vhat)));
    CHECK(engine_error(s, sghmc_spec(2.5, 1.7, with_v), 0.07, 21) < 1e-12);
  }
}

TEST_CASE("SGNHT (explicit Euler) equals the dense recipe, with analytic and with AD Γ") {
  for (bool with_v : {false, true}) {
    SGNHT<double, d, ExplicitEuler> analytic({0.06, 1.3});
    // The same recipe with Γ by automatic differentiation of the column r/d.
    auto ad = SGNHT<double, d, ExplicitEuler>::make_recipe<AutoGamma>({0.06, 1.3});
    if (with_v) {
      REQUIRE(analytic.set_gradient_noise(Vector<double, d>(vhat)));
      REQUIRE(ad.set_gradient_noise(Vector<double, d>(vhat)));
    }
    // Γ by finite differences of the linear column r/d: exact up to rounding / 1e-5.
    CHECK(engine_error(analytic, sgnht_spec(1.3, with_v), 0.06, 31) < 1e-9);
    CHECK(engine_error(ad, sgnht_spec(1.3, with_v), 0.06, 31) < 1e-9);
  }
}

namespace {
/// MATH.md §1.4 row 1 as a recipe: SGNHT with Γ's sign flipped (Γ_ξ = +1). Per coordinate: the
/// column's Γ pieces are ∂(r_i/d)/∂ξ = 0 (rows) and, flipped, −∂(r_i/d)/∂r_i = −1/d (columns).
template <class Scalar, int Dim>
struct FlippedGamma {
  template <class X>
  Scalar rows(const X&) const {
    return Scalar(0);
  }
  template <class X>
  Scalar cols(const X&) const {
    return -Scalar(1) / Scalar(Dim);
  }
};
}  // namespace

TEST_CASE("negative control: a wrong-sign Γ (MATH.md §1.4 row 1) fails the oracle") {
  const auto wrong =
      SGNHT<double, d, ExplicitEuler>::make_recipe<FlippedGamma<double, d>>({0.06, 1.3});
  // Drifts differ by 2hΓ = 0.12 in ξ: far above the 1e-9 tolerance.
  CHECK(engine_error(wrong, sgnht_spec(1.3, false), 0.06, 31) > 0.1);
}

TEST_CASE("the kick–drift sweep differs from explicit Euler by O(h²) per step (MATH.md §1.3)") {
  // With zero noise the one-step difference is h² f_r/m in θ: halving h divides it by 4.
  auto diff = [](double h) {
    SGHMC<double, d>::Params p;
    p.step_size = h;
    p.friction = 1.0;
    SGHMC<double, d> kd(p);
    SGHMC<double, d, ExplicitEuler> ee(p);
    auto z1 = kd.start(Vector<double, d>(0.3, -0.5, 0.9));
    z1.momentum() << 0.2, 0.4, -0.7;
    auto z2 = z1;
    typename SGHMC<double, d>::NoiseVector zero = SGHMC<double, d>::NoiseVector::Zero();
    REQUIRE(kd.step_with_noise(z1, Model{}, zero));
    REQUIRE(ee.step_with_noise(z2, Model{}, zero));
    return (z1.flat() - z2.flat()).norm();
  };
  const double r1 = diff(0.02) / diff(0.01);
  const double r2 = diff(0.01) / diff(0.005);
  CHECK(r1 == doctest::Approx(4.0).epsilon(0.05));
  CHECK(r2 == doctest::Approx(4.0).epsilon(0.05));
}
