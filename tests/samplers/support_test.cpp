// SPDX-License-Identifier: MIT
// Self-tests of the statistical helpers and test targets (tests/support/{stats,targets}.hpp) that
// the stationarity suites rely on: estimators on processes with known answers, oracles, models.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "sgmcmc/host/rng.hpp"
#include "stationarity.hpp"

namespace {

using namespace sgmcmc;
using namespace sgmcmc::test;

/// n steps of the AR(1) process x' = ρx + sqrt(1 − ρ²) ζ started in stationarity (Var x = 1).
std::vector<double> ar1(double rho, std::size_t n, std::uint64_t seed) {
  host::Rng rng(seed);
  std::vector<double> x(n);
  Vector<double, 1> z;
  rng.fill_normal(z);
  double v = z[0];
  const double s = std::sqrt(1 - rho * rho);
  for (auto& xi : x) {
    rng.fill_normal(z);
    v = rho * v + s * z[0];
    xi = v;
  }
  return x;
}

/// Central finite difference of a model's potential, coordinate i.
template <class Model, int D>
double fd_gradient(const Model& m, Vector<double, D> th, int i) {
  const double e = 1e-6;
  th[i] += e;
  const double up = m.potential(th);
  th[i] -= 2 * e;
  const double down = m.potential(th);
  return (up - down) / (2 * e);
}

}  // namespace

TEST_CASE("Gaussian tails: quantiles, and kZ covers a Bonferroni family of 200 checks") {
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963984540054).epsilon(1e-12));
  CHECK(normal_quantile(1e-10) == doctest::Approx(-6.361340902404056).epsilon(1e-10));
  CHECK(normal_quantile(0.5) == doctest::Approx(0.0).scale(1.0).epsilon(1e-15));
  CHECK(normal_upper_tail(normal_quantile(1 - 1e-6)) == doctest::Approx(1e-6).epsilon(1e-8));
  const double z200 = bonferroni_z(0.002, 200);
  log_line("bonferroni_z(0.002, 200) = %.4f, kZ = %.2f", z200, kZ);
  CHECK(z200 <= kZ);
}

TEST_CASE("IACT estimators recover the AR(1) value (1 + ρ)/(1 − ρ)") {
  // ρ = 0.9: τ = 19. Geyer's estimate on n = 10⁶ has relative SD ≈ sqrt(2(2K+1)/n)·... ≈ 2%;
  // batch means with 100 batches ≈ sqrt(2/99) = 14%. Tolerances 8% and 40%.
  const auto x = ar1(0.9, 1000000, 11);
  const IactEstimate g = iact_geyer(x);
  const double bm = iact_batch_means(x, 100);
  log_line("AR(1) ρ = 0.9: Geyer τ %.3f (lags %zu), batch means %.3f, exact 19", g.tau, g.lags, bm);
  CHECK(g.converged);
  CHECK(g.tau == doctest::Approx(19.0).epsilon(0.08));
  CHECK(bm == doctest::Approx(19.0).epsilon(0.4));
  // ESS and SE of the mean.
  const McEstimate m = mc_estimate(x);
  CHECK(m.ess == doctest::Approx(1e6 / 19).epsilon(0.08));
  CHECK(std::abs(m.mean) < kZ * m.se);
  // Independent draws: τ ≈ 1.
  CHECK(iact_geyer(ar1(0.0, 100000, 12)).tau == doctest::Approx(1.0).epsilon(0.05));
}

TEST_CASE("streaming moments agree with two-pass moments") {
  const auto x = ar1(0.5, 10000, 13);
  const auto y = ar1(0.5, 10000, 14);
  RunningMoments rm;
  RunningCovariance<2> rc;
  for (std::size_t i = 0; i < x.size(); ++i) {
    rm.add(x[i]);
    rc.add(Eigen::Vector2d(x[i], y[i]));
  }
  const double n = static_cast<double>(x.size());
  CHECK(rm.mean() == doctest::Approx(mean_of(x)).epsilon(1e-12));
  CHECK(rm.variance() == doctest::Approx(variance_of(x) * n / (n - 1)).epsilon(1e-12));
  const double cxy = mean_of(centred_product(x, mean_of(x), y, mean_of(y))) * n / (n - 1);
  CHECK(rc.covariance()(0, 1) == doctest::Approx(cxy).epsilon(1e-10));
  CHECK(rc.mean()[1] == doctest::Approx(mean_of(y)).epsilon(1e-12));
}

TEST_CASE("KL floor matches the chi-square approximation; KS separates a shifted sample") {
  // Uniform law on K = 60 equal bins: 2n·KL ≈ χ²_{K−1}, mean (K−1)/(2n), sd sqrt(2(K−1))/(2n).
  const int k = 60;
  const std::int64_t n = 10000;
  const std::vector<double> p(k, 1.0 / k);
  host::Rng rng(15);
  const Histogram like(0.0, 1.0, k);
  const KlFloor f = kl_iid_floor(p, like, n, 100, [&] {
    return (static_cast<double>(rng() >> 11) + 0.5) * 1.1102230246251565e-16;
  });
  const double mean = (k - 1) / (2.0 * n);
  const double sd = std::sqrt(2.0 * (k - 1)) / (2.0 * n);
  log_line("KL floor: mean %.3g (χ² %.3g), sd %.3g (χ² %.3g)", f.mean, mean, f.sd, sd);
  CHECK(f.mean == doctest::Approx(mean).epsilon(0.1));
  CHECK(f.sd == doctest::Approx(sd).epsilon(0.3));

  // KS: 10⁴ exact N(0,1) draws against Φ pass at level 1e-3; the same draws shifted by 0.1 fail.
  std::vector<double> z(10000);
  std::vector<double> shifted(z.size());
  Vector<double, 1> v;
  for (std::size_t i = 0; i < z.size(); ++i) {
    rng.fill_normal(v);
    z[i] = v[0];
    shifted[i] = v[0] + 0.1;
  }
  const double crit = ks_critical(static_cast<double>(z.size()), 1e-3);
  CHECK(ks_statistic(z, normal_cdf) < crit);
  CHECK(ks_statistic(shifted, normal_cdf) > crit);
}

TEST_CASE("linear-chain oracles reproduce MATH.md §1.3 and shared/math/check_discrete.py") {
  Eigen::Matrix<double, 1, 1> one = Eigen::Matrix<double, 1, 1>::Identity();
  const double h = 0.3;
  const double c = 1.5;
  const double v = 2.0;
  CHECK(sgld_chain<1>(one, h, 1, v, v).stationary()(0, 0) ==
        doctest::Approx(2 / (2 - h)).epsilon(1e-13));
  CHECK(sgld_chain<1>(one, h, 1, v, 0).stationary()(0, 0) ==
        doctest::Approx((2 + h * v) / (2 - h)).epsilon(1e-13));
  CHECK(sgld_chain<1>(one, h, 1, v, 0, true).stationary()(0, 0) ==
        doctest::Approx(h * v / (2 - h)).epsilon(1e-13));
  for (Order o : {Order::KickDrift, Order::DriftKick}) {
    const auto s = sghmc_chain<1>(one, h, c, 1.0, v, v, o).stationary();
    CHECK(s(0, 0) == doctest::Approx(2 * (2 - c * h) / (4 - 2 * c * h - h * h)).epsilon(1e-12));
  }
  const auto kd = sghmc_chain<1>(one, h, c, 1.0, v, v, Order::KickDrift).stationary();
  CHECK(kd(1, 1) == doctest::Approx(4 / (4 - 2 * c * h - h * h)).epsilon(1e-12));
  // Excess Var θ without the correction is hV/(2c) + O(h²) for every ordering.
  for (Order o : {Order::KickDrift, Order::DriftKick, Order::ExplicitEuler}) {
    const double small = 1e-4;
    const double hot = sghmc_chain<1>(one, small, c, 1.0, v, 0, o).stationary()(0, 0);
    const double ok = sghmc_chain<1>(one, small, c, 1.0, v, v, o).stationary()(0, 0);
    CHECK((hot - ok) / small == doctest::Approx(v / (2 * c)).epsilon(1e-3));
  }
  // Naive SGHMC (c = 0) has no stationary covariance.
  const auto naive = sghmc_chain<1>(one, 0.1, 0.0, 1.0, 4.0, 0.0, Order::KickDrift);
  CHECK_FALSE(naive.stationary().allFinite());
  // Exact IACT of an AR(1): (1 + ρ)/(1 − ρ) for θ and (1 + ρ²)/(1 − ρ²) for θ².
  const auto ar = sgld_chain<1>(one, 0.1, 1, 0, 0);
  CHECK(ar.iact_linear(0) == doctest::Approx(1.9 / 0.1).epsilon(1e-9));
  CHECK(ar.iact_product(0, 0) == doctest::Approx(1.81 / 0.19).epsilon(1e-9));
  // Unadjusted HMC with L = 1 and r refreshed: θ' = (1 − h²/2)θ + hζ.
  const double a1 = 1 - 0.5 * 0.5 / 2;
  CHECK(unadjusted_hmc_variance(0.5, 1) == doctest::Approx(0.25 / (1 - a1 * a1)).epsilon(1e-12));
}

TEST_CASE(
    "targets: gradients match finite differences of the potentials; banana and double-well "
    "oracles") {
  Vector<double, 2> th(0.7, -0.4);
  Vector<double, 2> g;
  CorrelatedGaussian2<double> cg;
  cg.gradient(th, g);
  CHECK(g[0] ==
        doctest::Approx(fd_gradient<CorrelatedGaussian2<double>, 2>(cg, th, 0)).epsilon(1e-7));
  CHECK(g[1] ==
        doctest::Approx(fd_gradient<CorrelatedGaussian2<double>, 2>(cg, th, 1)).epsilon(1e-7));
  CHECK((cg.precision() * cg.covariance() - Eigen::Matrix2d::Identity()).norm() < 1e-12);
  Banana<double> banana;
  banana.gradient(th, g);
  CHECK(g[0] == doctest::Approx(fd_gradient<Banana<double>, 2>(banana, th, 0)).epsilon(1e-7));
  CHECK(g[1] == doctest::Approx(fd_gradient<Banana<double>, 2>(banana, th, 1)).epsilon(1e-7));
  StandardNormal<double, 2> sn;
  sn.gradient(th, g);
  CHECK(g[1] ==
        doctest::Approx(fd_gradient<StandardNormal<double, 2>, 2>(sn, th, 1)).epsilon(1e-7));
  DoubleWell<double> dw;
  Vector<double, 1> x(1.3);
  Vector<double, 1> gx;
  dw.gradient(x, gx);
  CHECK(gx[0] == doctest::Approx(fd_gradient<DoubleWell<double>, 1>(dw, x, 0)).epsilon(1e-7));

  // Banana: ∫ exp(−θ₁⁴/10) = 2Γ(5/4)10^{1/4}; Z = that · √(2π)/4 (MATH.md §5.1). Exact draws
  // (θ₁ by inverse CDF, θ₂ | θ₁ ~ N(θ₁²/4 − 1.2, 1/16)) reproduce E θ₁² and E θ₂.
  const GridDensity g1(&Banana<double>::u1, -8.0, 8.0, 160000);
  CHECK(g1.normaliser() * std::sqrt(2 * 3.14159265358979323846) / 4 ==
        doctest::Approx(Banana<double>::normaliser).epsilon(1e-9));
  host::Rng rng(16);
  RunningMoments t1sq;
  RunningMoments t2;
  Vector<double, 1> z;
  for (int i = 0; i < 200000; ++i) {
    const double a = g1.draw(rng);
    rng.fill_normal(z);
    t1sq.add(a * a);
    t2.add(a * a / 4 - 1.2 + z[0] / 4);
  }
  // SEs: sd(θ₁²) ≈ 1.1, sd(θ₂) ≈ 0.6, n = 2·10⁵: 0.0025 and 0.0014.
  CHECK(within("banana E θ₁² (exact draws)", t1sq.mean(), Banana<double>::theta1_second,
               kZ * 0.0025));
  CHECK(within("banana E θ₂ (exact draws)", t2.mean(), Banana<double>::theta2_mean, kZ * 0.0014));
  // Double well: grid normaliser and E θ² of exact draws.
  const GridDensity gd(&DoubleWell<double>::u, -3.5, 3.5, 70000);
  CHECK(gd.normaliser() == doctest::Approx(DoubleWell<double>::normaliser).epsilon(1e-10));
  RunningMoments d2;
  for (int i = 0; i < 200000; ++i) {
    const double a = gd.draw(rng);
    d2.add(a * a);
  }
  // sd(θ²) = sqrt(E θ⁴ − (E θ²)²) = 0.624: SE = 0.0014.
  CHECK(within("double well E θ² (exact draws)", d2.mean(), DoubleWell<double>::second_moment,
               kZ * 0.0014));
}

TEST_CASE("NoisyGradient adds N(0, V) to the exact gradient, from its own stream") {
  const NoisyGradient<StandardNormal<double, 2>, double, 2> noisy({}, Vector<double, 2>(4.0, 0.25),
                                                                  17);
  Vector<double, 2> th(0.5, -1.0);
  Vector<double, 2> g;
  RunningCovariance<2> rc;
  for (int i = 0; i < 100000; ++i) {
    noisy.gradient(th, g);
    rc.add(g);
  }
  // SE of the means: sqrt(V/n) = 0.0063, 0.0016; of the variances: V sqrt(2/n) = 0.018, 0.0011.
  CHECK(within("noise mean 0", rc.mean()[0], 0.5, kZ * 0.0063));
  CHECK(within("noise mean 1", rc.mean()[1], -1.0, kZ * 0.0016));
  CHECK(within("noise var 0", rc.covariance()(0, 0), 4.0, kZ * 0.018));
  CHECK(within("noise var 1", rc.covariance()(1, 1), 0.25, kZ * 0.0011));
  CHECK(std::abs(rc.covariance()(0, 1)) < kZ * std::sqrt(1.0 / 100000));
  CHECK(noisy.potential(th) == doctest::Approx(0.625));
}
