// SPDX-License-Identifier: MIT
// Recipe oracle for SGRLD, SGRHMC/gSGRHMC and the naive controls: one step against an independent
// dense implementation of MATH.md §2.1's table (D, Q as matrices, Γ by central differences).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include "geometry_models.hpp"
#include "sgmcmc/samplers/naive.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"
#include "test_models.hpp"

using namespace sgmcmc;

namespace {

using DVec = Eigen::VectorXd;
using DMat = Eigen::MatrixXd;

// ------------------------------------------------------------------------------ the reference
// Written from MATH.md §2.1 alone: the sampler is (∇H, D(z), Q(z), B̂(z)) on the full state, with
// Γ_i = Σ_j ∂(D_ij + Q_ij)/∂z_j by central differences and the noise N(0, h(2D − hB̂)) on the
// diffusive coordinates through a plain Cholesky factor of that block.

struct Spec {
  std::function<DVec(const DVec&)> grad_h;  // ∇H̃(z)
  std::function<DMat(const DVec&)> d;       // D(z)
  std::function<DMat(const DVec&)> q;       // Q(z)
  std::function<DMat(const DVec&)> bhat;    // B̂(z)
  int first_diffusive = 0;                  // diffusive coordinates: [first, N)
  bool with_gamma = true;                   // false: the naive controls (Γ dropped)
};

DVec gamma_fd(const Spec& s, const DVec& z) {
  const double eps = 1e-5;
  DVec g = DVec::Zero(z.size());
  if (!s.with_gamma) return g;
  for (Eigen::Index j = 0; j < z.size(); ++j) {
    DVec zp = z, zm = z;
    zp[j] += eps;
    zm[j] -= eps;
    g += ((s.d(zp) + s.q(zp)).col(j) - (s.d(zm) + s.q(zm)).col(j)) / (2 * eps);
  }
  return g;
}

DVec drift(const Spec& s, const DVec& z) {
  return -(s.d(z) + s.q(z)) * s.grad_h(z) + gamma_fd(s, z);
}

DVec noise(const Spec& s, const DVec& z, double h, const DVec& zeta) {
  const Eigen::Index n = z.size() - s.first_diffusive;
  const DMat cov = (h * (2 * s.d(z) - h * s.bhat(z))).bottomRightCorner(n, n);
  const DMat l = cov.llt().matrixL();
  DVec out = DVec::Zero(z.size());
  out.tail(n) = l * zeta.head(n);
  return out;
}

/// Explicit Euler, MATH.md §1.2.
DVec euler_step(const Spec& s, const DVec& z, double h, const DVec& zeta) {
  return z + h * drift(s, z) + noise(s, z, h, zeta);
}

/// Kick–drift on z = (θ, r) (MATH.md §1.3): r from z_t, then θ from (θ_t, r').
DVec kick_drift_step(const Spec& s, const DVec& z, double h, const DVec& zeta, int d) {
  DVec out = z;
  out.tail(d) = (z + h * drift(s, z) + noise(s, z, h, zeta)).tail(d);
  out.head(d) = z.head(d) + h * drift(s, out).head(d);
  return out;
}

DMat sqrtm(const DMat& a) {
  return a.sqrt();
}  // Eigen's MatrixFunctions: Schur-based

/// SGRLD's table row: z = θ, D = G⁻¹(θ), Q = 0, B̂ = G⁻¹V̂G⁻¹.
Spec sgrld_spec(std::function<DMat(const DVec&)> ginv, std::function<DVec(const DVec&)> grad_u,
                const DVec& vhat, bool with_gamma = true) {
  Spec s;
  s.grad_h = grad_u;
  s.d = ginv;
  s.q = [](const DVec& z) { return DMat::Zero(z.size(), z.size()).eval(); };
  s.bhat = [ginv, vhat](const DVec& z) {
    const DMat g = ginv(z);
    return (g * vhat.asDiagonal() * g).eval();
  };
  s.with_gamma = with_gamma;
  return s;
}

/// SGRHMC's table row: z = (θ, r), H = U + rᵀr/2, D = diag(0, G⁻¹), Q = [[0, −S], [S, 0]],
/// B̂ = diag(0, S V̂ S), S = G^{-1/2} (principal square root).
Spec sgrhmc_spec(std::function<DMat(const DVec&)> ginv, std::function<DVec(const DVec&)> grad_u,
                 const DVec& vhat, int d, bool with_gamma = true) {
  Spec s;
  s.grad_h = [grad_u, d](const DVec& z) {
    DVec g(2 * d);
    g.head(d) = grad_u(z.head(d));
    g.tail(d) = z.tail(d);
    return g;
  };
  s.d = [ginv, d](const DVec& z) {
    DMat m = DMat::Zero(2 * d, 2 * d);
    m.bottomRightCorner(d, d) = ginv(z.head(d));
    return m;
  };
  s.q = [ginv, d](const DVec& z) {
    const DMat sq = sqrtm(ginv(z.head(d)));
    DMat m = DMat::Zero(2 * d, 2 * d);
    m.topRightCorner(d, d) = -sq;
    m.bottomLeftCorner(d, d) = sq;
    return m;
  };
  s.bhat = [ginv, vhat, d](const DVec& z) {
    const DMat sq = sqrtm(ginv(z.head(d)));
    DMat m = DMat::Zero(2 * d, 2 * d);
    m.bottomRightCorner(d, d) = sq * vhat.asDiagonal() * sq;
    return m;
  };
  s.first_diffusive = d;
  s.with_gamma = with_gamma;
  return s;
}

template <class Scalar>
double tol() {
  return std::is_same_v<Scalar, float> ? 5e-5 : 1e-9;
}

/// Compares sampler.step_with_noise against ref(z, zeta) for a few random states; V̂ set on both.
template <class Sampler, class Model, class Ref>
void check_against(const Sampler& sampler, const Model& model, Ref&& ref, std::uint64_t seed,
                   double scale_r = 0.7) {
  using Scalar = typename Sampler::Scalar;
  REQUIRE(sampler.status());
  sgmcmc_test::TinyRng rng(seed);
  for (int rep = 0; rep < 4; ++rep) {
    typename Sampler::StateType z;
    auto flat = z.flat();
    for (int i = 0; i < flat.size(); ++i) flat[i] = Scalar(scale_r) * normal<Scalar>(rng);
    z.set_flat(flat);
    typename Sampler::NoiseVector zeta;
    fill_normal(rng, zeta);
    const DVec z0 = z.flat().template cast<double>();
    const DVec expected = ref(z0, DVec(zeta.template cast<double>()));
    const Status st = sampler.step_with_noise(z, model, zeta);
    REQUIRE(st);
    const DVec got = z.flat().template cast<double>();
    // Scalar loops, not Eigen reductions over these dynamic vectors: GCC 12 for AArch64 reports a
    // (false) -Warray-bounds on the unrolled NEON reduction of a two-element VectorXd.
    double err = 0.0, scale = 1.0;
    for (Eigen::Index i = 0; i < got.size(); ++i) {
      err = std::max(err, std::fabs(got[i] - expected[i]));
      scale = std::max(scale, 1.0 + std::fabs(expected[i]));
    }
    INFO("state " << z0.transpose() << "\n expected " << expected.transpose() << "\n got "
                  << got.transpose());
    CHECK(err <= tol<Scalar>() * scale);
  }
}

template <class F, int D>
std::function<DMat(const DVec&)> diag_fn(F f) {
  return [f](const DVec& th) {
    const Vector<double, D> t = th;
    return DMat(f(t).asDiagonal());
  };
}
template <class F, int D>
std::function<DMat(const DVec&)> dense_fn(F f) {
  return [f](const DVec& th) {
    const Vector<double, D> t = th;
    return DMat(f(t));
  };
}

}  // namespace

TEST_CASE_TEMPLATE("SGRLD one step equals the dense recipe (diagonal, dense, G form, AD Γ)", Scalar,
                   float, double) {
  constexpr int D = 3;
  const double h = 0.05;
  geo::MinibatchModel<geo::GaussianTarget, Scalar, D> model;  // gradient θ + n, n fixed
  model.n << Scalar(0.3), Scalar(-0.2), Scalar(0.1);
  const DVec n = model.n.template cast<double>();
  auto grad_u = [n](const DVec& th) { return DVec(th + n); };
  DVec vhat(D);
  vhat << 0.4, 0.0, 1.1;

  SUBCASE("diagonal G⁻¹, coupled entries") {
    using M = InverseMetric<DiagonalShape, geo::CoupledDiagInverse>;
    SGRLD<Scalar, D, M> s({Scalar(h), {}, {}});
    REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
    const Spec spec = sgrld_spec(diag_fn<geo::CoupledDiagInverse, D>({}), grad_u, vhat);
    check_against(
        s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 1);
  }
  SUBCASE("separable diagonal G⁻¹ (one AD direction)") {
    using M = InverseMetric<DiagonalShape, geo::SeparableDiagInverse, true>;
    SGRLD<Scalar, D, M> s({Scalar(h), {}, {}});
    REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
    const Spec spec = sgrld_spec(diag_fn<geo::SeparableDiagInverse, D>({}), grad_u, vhat);
    check_against(
        s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 2);
  }
  SUBCASE("dense G⁻¹") {
    using M = InverseMetric<DenseShape, geo::DenseInverse>;
    SGRLD<Scalar, D, M> s({Scalar(h), {}, {}});
    REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
    const Spec spec = sgrld_spec(dense_fn<geo::DenseInverse, D>({}), grad_u, vhat);
    check_against(
        s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 3);
  }
  SUBCASE("dense G, inverted by the sampler's fixed-size Cholesky") {
    using M = Metric<DenseShape, geo::DenseMetricG>;
    SGRLD<Scalar, D, M> s({Scalar(h), {}, {}});
    REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
    auto ginv = [](const DVec& th) {
      const Vector<double, D> t = th;
      return DMat(geo::DenseMetricG{}(t).inverse());
    };
    const Spec spec = sgrld_spec(ginv, grad_u, vhat);
    check_against(
        s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 4);
  }
  SUBCASE("naive SGRLD = the same table with Γ dropped") {
    using M = InverseMetric<DiagonalShape, geo::CoupledDiagInverse>;
    NaiveSGRLD<Scalar, D, M> s({Scalar(h), {}});
    REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
    const Spec spec = sgrld_spec(diag_fn<geo::CoupledDiagInverse, D>({}), grad_u, vhat, false);
    check_against(
        s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 5);
  }
}

TEST_CASE_TEMPLATE("SGRLD with the potential metric and analytic Γ equals the dense recipe", Scalar,
                   float, double) {
  const double h = 0.02;
  geo::MinibatchModel<geo::BananaTarget, Scalar, 2> model;
  model.n << Scalar(0.4), Scalar(-0.3);
  const Vector<double, 2> n = model.n.template cast<double>();
  const PotentialMetric<double> pm;  // D = 1.5, C = 0.5, floor 0.01
  auto ginv = [n, pm](const DVec& th) {
    const Vector<double, 2> t = th;
    const double u = geo::BananaTarget::u(t) + n.dot(t);
    return DMat(pm.scale * std::sqrt(std::max(std::abs(u + pm.shift), pm.floor)) *
                DMat::Identity(2, 2));
  };
  auto grad_u = [n](const DVec& th) {
    Vector<double, 2> t = th, g;
    geo::BananaTarget::grad(t, g);
    return DVec(g + n);
  };
  DVec vhat(2);
  vhat << 0.5, 0.5;
  const Spec spec = sgrld_spec(ginv, grad_u, vhat);
  using M = InverseMetric<ScalarShape, PotentialMetric<Scalar>>;
  SGRLD<Scalar, 2, M, PotentialMetricDivergence<Scalar>> s({Scalar(h), {}, {}});
  REQUIRE(s.set_gradient_noise(vhat.template cast<Scalar>()));
  check_against(
      s, model, [&](const DVec& z, const DVec& e) { return euler_step(spec, z, h, e); }, 6, 0.5);
}

TEST_CASE_TEMPLATE("SGRHMC one step equals the dense recipe (Euler and kick–drift)", Scalar, float,
                   double) {
  constexpr int D = 3;
  const double h = 0.05;
  geo::MinibatchModel<geo::GaussianTarget, Scalar, D> model;
  model.n << Scalar(-0.1), Scalar(0.25), Scalar(0.05);
  const DVec n = model.n.template cast<double>();
  auto grad_u = [n](const DVec& th) { return DVec(th + n); };
  DVec vhat(D);
  vhat << 0.3, 0.8, 0.0;

  SUBCASE("diagonal G⁻¹, coupled entries") {
    using M = InverseMetric<DiagonalShape, geo::CoupledDiagInverse>;
    const Spec spec = sgrhmc_spec(diag_fn<geo::CoupledDiagInverse, D>({}), grad_u, vhat, D);
    SGRHMC<Scalar, D, M, AutoGamma, ExplicitEuler> e({Scalar(h), {}, {}});
    REQUIRE(e.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        e, model, [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); }, 11);
    SGRHMC<Scalar, D, M, AutoGamma, KickDrift> k({Scalar(h), {}, {}});
    REQUIRE(k.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        k, model, [&](const DVec& z, const DVec& x) { return kick_drift_step(spec, z, h, x, D); },
        12);
  }
  SUBCASE("dense G⁻¹: S by the fixed-size eigen-decomposition, Γ by Daleckii–Krein") {
    using M = InverseMetric<DenseShape, geo::DenseInverse>;
    const Spec spec = sgrhmc_spec(dense_fn<geo::DenseInverse, D>({}), grad_u, vhat, D);
    SGRHMC<Scalar, D, M, AutoGamma, ExplicitEuler> e({Scalar(h), {}, {}});
    REQUIRE(e.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        e, model, [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); }, 13);
    SGRHMC<Scalar, D, M, AutoGamma, KickDrift> k({Scalar(h), {}, {}});
    REQUIRE(k.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        k, model, [&](const DVec& z, const DVec& x) { return kick_drift_step(spec, z, h, x, D); },
        14);
  }
  SUBCASE("dense G (metric form)") {
    using M = Metric<DenseShape, geo::DenseMetricG>;
    auto ginv = [](const DVec& th) {
      const Vector<double, D> t = th;
      return DMat(geo::DenseMetricG{}(t).inverse());
    };
    const Spec spec = sgrhmc_spec(ginv, grad_u, vhat, D);
    SGRHMC<Scalar, D, M, AutoGamma, ExplicitEuler> e({Scalar(h), {}, {}});
    REQUIRE(e.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        e, model, [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); }, 15);
  }
  SUBCASE("scalar G⁻¹ = g(θ) I") {
    using M = InverseMetric<ScalarShape, geo::ScalarInverse>;
    auto ginv = [](const DVec& th) {
      const Vector<double, D> t = th;
      return DMat(geo::ScalarInverse{}(t)*DMat::Identity(D, D));
    };
    const Spec spec = sgrhmc_spec(ginv, grad_u, vhat, D);
    SGRHMC<Scalar, D, M, AutoGamma, ExplicitEuler> e({Scalar(h), {}, {}});
    REQUIRE(e.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        e, model, [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); }, 16);
  }
  SUBCASE("naive SGRHMC (Eq. 27) = the same table with Γ dropped") {
    using M = InverseMetric<DenseShape, geo::DenseInverse>;
    const Spec spec = sgrhmc_spec(dense_fn<geo::DenseInverse, D>({}), grad_u, vhat, D, false);
    NaiveSGRHMC<Scalar, D, M, ExplicitEuler> e({Scalar(h), {}});
    REQUIRE(e.set_gradient_noise(vhat.template cast<Scalar>()));
    check_against(
        e, model, [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); }, 17);
  }
}

TEST_CASE_TEMPLATE("gSGRHMC (Algorithm 1 and kick–drift) equals the dense recipe", Scalar, float,
                   double) {
  const double h = 0.03;
  const PotentialMetric<double> pm;
  DVec vhat(2);
  vhat << 1.0, 0.5;
  geo::MinibatchModel<geo::BananaTarget, Scalar, 2> model;
  model.n << Scalar(0.2), Scalar(-0.6);
  const Vector<double, 2> n = model.n.template cast<double>();
  auto ginv = [n, pm](const DVec& th) {
    const Vector<double, 2> t = th;
    const double u = geo::BananaTarget::u(t) + n.dot(t);
    return DMat(pm.scale * std::sqrt(std::max(std::abs(u + pm.shift), pm.floor)) *
                DMat::Identity(2, 2));
  };
  auto grad_u = [n](const DVec& th) {
    Vector<double, 2> t = th, g;
    geo::BananaTarget::grad(t, g);
    return DVec(g + n);
  };
  const Spec spec = sgrhmc_spec(ginv, grad_u, vhat, 2);
  const Spec naive = sgrhmc_spec(ginv, grad_u, vhat, 2, false);
  auto euler = [&](const DVec& z, const DVec& x) { return euler_step(spec, z, h, x); };
  auto kd = [&](const DVec& z, const DVec& x) { return kick_drift_step(spec, z, h, x, 2); };

  GSGRHMC<Scalar, 2> analytic({Scalar(h), {}});
  REQUIRE(analytic.set_gradient_noise(vhat.template cast<Scalar>()));
  check_against(analytic, model, euler, 21, 0.5);
  GSGRHMC<Scalar, 2, AutoGamma> ad({Scalar(h), {}});
  REQUIRE(ad.set_gradient_noise(vhat.template cast<Scalar>()));
  check_against(ad, model, euler, 22, 0.5);
  GSGRHMC<Scalar, 2, PotentialMetricSqrtDivergence<Scalar>, KickDrift> kick({Scalar(h), {}});
  REQUIRE(kick.set_gradient_noise(vhat.template cast<Scalar>()));
  check_against(kick, model, kd, 23, 0.5);
  NaiveGSGRHMC<Scalar, 2> nv({Scalar(h), {}});
  REQUIRE(nv.set_gradient_noise(vhat.template cast<Scalar>()));
  check_against(
      nv, model, [&](const DVec& z, const DVec& x) { return euler_step(naive, z, h, x); }, 24, 0.5);

  SUBCASE("negative control: the oracle sees a dropped Γ") {
    // gSGRHMC against the naive table must differ (Γ is not negligible at these states).
    sgmcmc_test::TinyRng rng(25);
    auto z = analytic.start(Vector<Scalar, 2>(Scalar(0.3), Scalar(-0.8)));
    z.momentum() << Scalar(0.5), Scalar(-0.2);
    typename GSGRHMC<Scalar, 2>::NoiseVector zeta;
    fill_normal(rng, zeta);
    const DVec expected =
        euler_step(naive, z.flat().template cast<double>(), h, zeta.template cast<double>());
    REQUIRE(analytic.step_with_noise(z, model, zeta));
    CHECK((z.flat().template cast<double>() - expected).cwiseAbs().maxCoeff() > 1e-3);
  }
}
