// SPDX-License-Identifier: MIT
// Monomial-gamma kinetics (MATH.md §3.1–3.2): closed forms, finite differences, stability, the
// p = 0 guard for a = 2, Gamma variates and exact draws from exp(−K) and exp(−K_c) (KS tests).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "mg_support.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/host/rng.hpp"
#include "stats.hpp"
#include "targets.hpp"

using namespace sgmcmc;
using sgmcmc::test::ks_critical;
using sgmcmc::test::ks_statistic;

namespace {

using LD = long double;

LD sigmoid(LD x) {
  return 1.0L / (1.0L + std::exp(-x));
}

/// The §3.2 closed forms, written naively in long double (valid for moderate |p|).
struct ClosedForm {
  int a;
  LD m, c;
  LD energy(LD p) const {
    if (a == 1) return (2 / c) * std::log(2 * std::cosh(c * p / (2 * m)));
    const LD u = std::sqrt(std::fabs(p)) / m;
    return u + 4 / (c * (1 + std::exp(c * u)));
  }
  LD gradient(LD p) const {
    if (a == 1) return std::tanh(c * p / (2 * m)) / m;
    const LD q = std::fabs(p);
    const LD psi = std::tanh(c * std::sqrt(q) / m / 2);
    return (p > 0 ? 1 : -1) * psi * psi / (2 * m * std::sqrt(q));
  }
  /// a = 1: 2cσ(1 − σ)/m²; a = 2: ψψ′/(2m²|p|) − ψ²/(4m|p|^{3/2}), ψ′ = 2cσ(cu)(1 − σ(cu)).
  LD curvature(LD p) const {
    if (a == 1) {
      const LD s = sigmoid(c * p / m);
      return 2 * c * s * (1 - s) / (m * m);
    }
    const LD q = std::fabs(p);
    const LD u = std::sqrt(q) / m;
    const LD psi = 2 * sigmoid(c * u) - 1;
    const LD dpsi = 2 * c * sigmoid(c * u) * (1 - sigmoid(c * u));
    return psi * dpsi / (2 * m * m * q) - psi * psi / (4 * m * std::pow(q, 1.5L));
  }
};

template <class Scalar>
double rel_tol() {
  return std::is_same_v<Scalar, float> ? 2e-5 : 1e-12;
}

bool close(double got, LD want, double tol) {
  return std::fabs(got - static_cast<double>(want)) <= tol * (1.0 + std::fabs(double(want)));
}

}  // namespace

TEST_CASE_TEMPLATE("soft MG kinetic matches the MATH.md §3.2 closed forms", Scalar, float, double) {
  for (int a : {1, 2}) {
    for (const double m : {0.6, 1.0, 1.7}) {
      for (const double c : {1.0, 3.0, 5.0}) {
        const SoftMonomialGammaKinetic<Scalar> k{a, Scalar(m), Scalar(c)};
        REQUIRE(k.valid());
        const ClosedForm cf{a, m, c};
        for (const double p : {-7.3, -2.0, -0.41, -0.05, 0.013, 0.3, 1.0, 2.9, 6.5}) {
          const Scalar ps = Scalar(p);
          const LD pl = static_cast<LD>(ps);
          CAPTURE(a);
          CAPTURE(m);
          CAPTURE(c);
          CAPTURE(p);
          CHECK(close(k.energy1(ps), cf.energy(pl), rel_tol<Scalar>()));
          CHECK(close(k.gradient1(ps), cf.gradient(pl), rel_tol<Scalar>()));
          CHECK(close(k.curvature1(ps), cf.curvature(pl), 5 * rel_tol<Scalar>()));
          const Scalar g = k.gradient1(ps);
          CHECK(close(k.thermostat_force1(ps), LD(g) * LD(g) - cf.curvature(pl),
                      5 * rel_tol<Scalar>()));
        }
      }
    }
  }
}

TEST_CASE("soft MG kinetic: gradient and Hessian diagonal against central differences") {
  // Central differences in double with step e = 1e-5 (1 + |p|): truncation O(e²) ~ 1e-10,
  // rounding ~ 1e-16 / e ~ 1e-11, so 1e-7 relative is a safe bound.
  for (int a : {1, 2}) {
    const SoftMonomialGammaKinetic<double> k{a, 1.3, a == 1 ? 5.0 : 3.0};
    for (double p = -9.0; p <= 9.0; p += 0.173) {
      if (a == 2 && std::fabs(p) < 0.02) continue;  // the a = 2 Hessian is floored at p ≈ 0
      const double e = 1e-5 * (1.0 + std::fabs(p));
      const double fd_g = (k.energy1(p + e) - k.energy1(p - e)) / (2 * e);
      const double fd_h = (k.gradient1(p + e) - k.gradient1(p - e)) / (2 * e);
      CAPTURE(a);
      CAPTURE(p);
      CHECK(std::fabs(k.gradient1(p) - fd_g) <= 1e-7 * (1 + std::fabs(fd_g)));
      CHECK(std::fabs(k.curvature1(p) - fd_h) <= 1e-6 * (1 + std::fabs(fd_h)));
    }
  }
}

TEST_CASE("soft MG kinetic: softening bounds, values at 0, symmetry") {
  for (int a : {1, 2}) {
    for (const double c : {0.5, 3.0, 5.0, 40.0}) {
      const SoftMonomialGammaKinetic<double> k{a, 0.8, c};
      const MonomialGammaKinetic<double> k0 = k.unsoftened();
      const double bound = a == 1 ? 2 * std::log(2.0) / c : 2 / c;  // MATH.md §3.2
      CHECK(k.energy1(0.0) == doctest::Approx(bound).epsilon(1e-14));
      CHECK(k.gradient1(0.0) == 0.0);
      for (double p = -30; p <= 30; p += 0.37) {
        const double gap = k.energy1(p) - k0.energy1(p);
        // > 0 in exact arithmetic; once it falls below K's rounding (far tails) it reads 0.
        CHECK(gap >= 0.0);
        if (std::fabs(p) * c / 0.8 < 20) CHECK(gap > 0.0);
        CHECK(gap <= bound * (1 + 1e-14));
        CHECK(k.energy1(-p) == k.energy1(p));
        CHECK(k.gradient1(-p) == -k.gradient1(p));
        CHECK(k.curvature1(-p) == k.curvature1(p));
      }
    }
  }
}

TEST_CASE_TEMPLATE("soft MG kinetic is finite for every finite p (stable evaluation)", Scalar,
                   float, double) {
  const Scalar big = std::numeric_limits<Scalar>::max() / Scalar(4);
  for (int a : {1, 2}) {
    const SoftMonomialGammaKinetic<Scalar> k{a, Scalar(0.5), Scalar(50)};
    for (const Scalar p : {-big, Scalar(-1e30), Scalar(-1e6), Scalar(-1e-30), Scalar(0),
                           std::numeric_limits<Scalar>::denorm_min(), Scalar(1e-20), Scalar(1e4),
                           Scalar(1e30), big}) {
      CAPTURE(a);
      CAPTURE(p);
      CHECK(std::isfinite(k.energy1(p)));
      CHECK(std::isfinite(k.gradient1(p)));
      CHECK(std::isfinite(k.curvature1(p)));
      CHECK(std::isfinite(k.thermostat_force1(p)));
    }
    // Far tails: the unsoftened limits.
    const Scalar p = Scalar(1e6);
    if (a == 1) {
      CHECK(k.gradient1(p) == doctest::Approx(2.0));  // 1/m
      CHECK(k.curvature1(p) == 0);
    } else {
      CHECK(k.gradient1(p) == doctest::Approx(1.0 / (2 * 0.5 * 1e3)).epsilon(1e-5));
    }
  }
}

TEST_CASE("a = 2: the p = 0 guard (gradient exact, Hessian diagonal capped and documented)") {
  const double m = 1.2, c = 3.0;
  const SoftMonomialGammaKinetic<double> k{2, m, c};
  // Gradient near 0: c² sign(p) √|p| / (8 m³) (MATH.md §3.2), continuous through 0.
  for (const double p : {1e-300, 1e-40, 1e-16, 1e-10}) {
    const double want = c * c * std::sqrt(p) / (8 * m * m * m);
    CHECK(k.gradient1(p) == doctest::Approx(want).epsilon(1e-6));
    CHECK(k.gradient1(-p) == doctest::Approx(-want).epsilon(1e-6));
  }
  CHECK(k.gradient1(0.0) == 0.0);
  CHECK(k.gradient1(-0.0) == 0.0);
  // Hessian diagonal: finite at 0, equal to its value at the floor x = 1e-3, i.e. at
  // |p| = (2 m x / c)², and ≈ c²/(16 m³ √|p|) just above the floor.
  const double x0 = SoftMonomialGammaKinetic<double>::kCurvatureFloor;
  const double p0 = std::pow(2 * m * x0 / c, 2);
  // Below the floor x is clamped to it exactly, so the value is the same bits; at p0 itself x is
  // the floor only up to the rounding of c√p0 / (2m) (one ulp above it on AArch64).
  const double cap = k.curvature1(0.0);
  CHECK(std::isfinite(cap));
  CHECK(k.curvature1(1e-300) == cap);
  CHECK(k.curvature1(0.5 * p0) == cap);
  CHECK(k.curvature1(p0) == doctest::Approx(cap).epsilon(1e-12));
  CHECK(cap == doctest::Approx(c * c / (16 * m * m * m * std::sqrt(p0))).epsilon(1e-5));
  CHECK(k.curvature1(4 * p0) < cap);  // above the floor the true, decreasing curve
  CHECK(k.curvature1(4 * p0) == doctest::Approx(cap / 2).epsilon(1e-5));
  // The floor's effect on E_π ∂²K_c is ≈ 1e-3 relative (class comment): quadrature of
  // ∂²K_c e^{−K_c} with and without the cap (the uncapped near-zero part integrated exactly:
  // ∫_0^{p0} c²/(16 m³ √p) dp = c² √p0 / (8 m³)).
  const auto density = [&](double p) { return std::exp(-k.energy1(p)); };
  double capped = 0.0, z = 0.0;
  const double lo = 0.0, hi = 3600.0 * m * m;
  const int n = 400000;
  const double dx = (hi - lo) / n;
  for (int i = 0; i < n; ++i) {  // midpoint rule on (0, hi): both sides symmetric
    const double p = lo + (i + 0.5) * dx;
    capped += k.curvature1(p) * density(p) * dx;
    z += density(p) * dx;
  }
  const double in_floor = cap * p0 * density(0.0);
  const double exact_floor = c * c * std::sqrt(p0) / (8 * m * m * m) * density(0.0);
  const double rel = std::fabs(in_floor - exact_floor) / capped;
  MESSAGE("a = 2 curvature floor: relative change of E ∂²K_c = " << rel);
  CHECK(rel < 3e-3);
  (void)z;
}

TEST_CASE("MG kinetics: parameter validation") {
  CHECK(SoftMonomialGammaKinetic<double>{1, 1.0, 5.0}.valid());
  CHECK(SoftMonomialGammaKinetic<double>{2, 1.0, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{3, 1.0, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{0, 1.0, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{1, 0.0, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{1, -1.0, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{1, NAN, 3.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{1, 1.0, 0.0}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<double>{1, 1.0, INFINITY}.valid());
  CHECK_FALSE(SoftMonomialGammaKinetic<float>{2, 1.0f, -2.0f}.valid());
  CHECK(MonomialGammaKinetic<double>{0.5, 2.0}.valid());
  CHECK_FALSE(MonomialGammaKinetic<double>{0.0, 2.0}.valid());
  CHECK_FALSE(MonomialGammaKinetic<double>{1.0, 0.0}.valid());
  host::Rng rng(1);
  CHECK(std::isnan(gamma_variate<double>(rng, 0.0, 1.0)));
  CHECK(std::isnan(gamma_variate<double>(rng, 1.0, -1.0)));
  CHECK(std::isnan(gamma_variate<float>(rng, NAN, 1.0f)));
}

TEST_CASE("a = 1 normaliser: quadrature equals (2m/c) 2^{-2/c} B(1/c, 1/2)") {
  // exp(−K_c) with t = σ(cp/m) is Beta(1/c, 1/c) (derived for this test), which gives the closed
  // form; c → ∞ recovers the Laplace normaliser 2m.
  for (const double c : {0.7, 2.0, 5.0, 30.0}) {
    const double m = 1.4;
    const SoftMonomialGammaKinetic<double> k{1, m, c};
    const test::GridDensity grid([&](double p) { return k.energy1(p); }, -80 * m, 80 * m, 200000);
    const double beta = std::exp(std::lgamma(1 / c) + std::lgamma(0.5) - std::lgamma(1 / c + 0.5));
    const double closed = (2 * m / c) * std::pow(2.0, -2 / c) * beta;
    CAPTURE(c);
    CHECK(grid.normaliser() == doctest::Approx(closed).epsilon(1e-9));
  }
}

// ------------------------------------------------------------------------------------ draws

TEST_CASE_TEMPLATE("Gamma variates: KS against the exact CDF, with a negative control", Scalar,
                   float, double) {
  // n i.i.d. draws: the KS check at level 1e-3 has critical value 1.95/√n (stats.hpp). The
  // negative control compares the same draws with a wrong shape's CDF and must fail it.
  const int n = 40000;
  const double scale = 1.7;
  const auto p2 = [](double x) { return 1 - std::exp(-x) * (1 + x); };
  struct Case {
    double shape;
    double (*cdf)(double);
  };
  const Case cases[] = {
      {1.0, [](double x) { return 1 - std::exp(-x); }},
      {2.0, [](double x) { return 1 - std::exp(-x) * (1 + x); }},
      {0.5, [](double x) { return std::erf(std::sqrt(x)); }},
      {3.0, [](double x) { return 1 - std::exp(-x) * (1 + x + x * x / 2); }},
  };
  host::Rng rng(20240601);
  for (const Case& cs : cases) {
    std::vector<double> draws(n);
    for (double& d : draws) d = gamma_variate<Scalar>(rng, Scalar(cs.shape), Scalar(scale));
    const double ks = ks_statistic(draws, [&](double x) { return cs.cdf(x / scale); });
    CAPTURE(cs.shape);
    CHECK(ks < ks_critical(n, 1e-3));
    if (cs.shape != 2.0) {
      const double wrong = ks_statistic(draws, [&](double x) { return p2(x / scale); });
      CHECK(wrong > ks_critical(n, 1e-3));
    }
  }
}

TEST_CASE("exact draws from exp(−K) (unsoftened MG): KS against the closed-form CDF") {
  // P(|p|^{1/a}/m ≤ x) = P(a, x) (regularised incomplete gamma; a = 1, 2 in closed form).
  const int n = 40000;
  host::Rng rng(7);
  for (const double a : {1.0, 2.0}) {
    const MonomialGammaKinetic<double> k{a, 0.9};
    std::vector<double> draws(n);
    for (double& d : draws) d = k.sample1(rng);
    const auto cdf = [&](double p) {
      const double x = std::pow(std::fabs(p), 1 / a) / k.mass;
      const double pg = a == 1.0 ? 1 - std::exp(-x) : 1 - std::exp(-x) * (1 + x);
      return p < 0 ? 0.5 * (1 - pg) : 0.5 * (1 + pg);
    };
    CAPTURE(a);
    CHECK(ks_statistic(draws, cdf) < ks_critical(n, 1e-3));
  }
}

TEST_CASE_TEMPLATE("exact draws from exp(−K_c) (§3.2 accept step): KS against quadrature", Scalar,
                   float, double) {
  // n = 1e5 i.i.d. draws against the CDF of exp(−K_c) by Simpson quadrature (error < 1e-6).
  // Negative control: the SGMGT code's draw (the unsoftened MG, no accept step; MATH.md §3.5)
  // must fail the same check: the two laws differ by D ≈ 0.015 (a = 1, c = 5) and ≈ 0.018
  // (a = 2, c = 3), against a critical value 1.95/√n = 0.0062.
  const int n = 100000;
  host::Rng rng(99);
  for (int a : {1, 2}) {
    const SoftMonomialGammaKinetic<Scalar> k{a, Scalar(1), Scalar(a == 1 ? 5 : 3)};
    const double range = a == 1 ? 60.0 : 3600.0;
    const test::GridDensity grid([&](double p) { return double(k.energy1(Scalar(p))); }, -range,
                                 range, 400000);
    std::vector<double> draws(n), proposals(n);
    bool exhausted = false;
    for (double& d : draws) d = k.sample1(rng, &exhausted);
    const auto k0 = k.unsoftened();
    for (double& d : proposals) d = k0.sample1(rng);
    const double crit = ks_critical(n, 1e-3);
    const double ks = ks_statistic(draws, [&](double p) { return grid.cdf(p); });
    const double ks_control = ks_statistic(proposals, [&](double p) { return grid.cdf(p); });
    CAPTURE(a);
    MESSAGE("exp(-K_c) draws a=" << a << ": KS " << ks << ", control " << ks_control
                                 << ", critical " << crit);
    CHECK_FALSE(exhausted);
    CHECK(ks < crit);
    CHECK(ks_control > crit);
  }
}

// ------------------------------------------------------------------------- rejection caps

namespace {

// A failed RNG: cycles through a fixed list of words, counting how many it gave.
struct CyclingRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  std::vector<std::uint64_t> words;
  long calls = 0;
  result_type operator()() noexcept {
    return words[static_cast<std::size_t>(calls++) % words.size()];
  }
};

}  // namespace

TEST_CASE_TEMPLATE("MG draws report a reached rejection cap after a bounded number of words",
                   Scalar, float, double) {
  for (int a : {1, 2}) {
    CAPTURE(a);
    const SoftMonomialGammaKinetic<Scalar> k{a, Scalar(1), Scalar(5)};
    // All-ones words give uniforms of almost 1, so the accept step rejects every proposal.
    CyclingRng ones{{~std::uint64_t(0)}};
    bool exhausted = false;
    (void)k.sample1(ones, &exhausted);
    CHECK(exhausted);
    CHECK(ones.calls <= 4L * kMaxRejectionTries);
    // The cap is the caller's: 3 proposals, at most 4 words each.
    ones.calls = 0;
    exhausted = false;
    (void)k.sample1(ones, &exhausted, 3);
    CHECK(exhausted);
    CHECK(ones.calls <= 12);
    exhausted = false;
    CHECK(std::isnan(k.sample1(ones, &exhausted, 0)));
    CHECK(exhausted);
    // A vector draw says so and stops at the first failed coordinate.
    ones.calls = 0;
    Vector<Scalar, 3> v = Vector<Scalar, 3>::Zero();
    CHECK_FALSE(k.sample(ones, v));
    CHECK(ones.calls <= 4L * kMaxRejectionTries);
    // An invalid mass is refused before any word is drawn (it used to burn the whole cap).
    CyclingRng counted{{1, 2, 3}};
    const SoftMonomialGammaKinetic<Scalar> bad{a, Scalar(-1), Scalar(5)};
    exhausted = false;
    CHECK(std::isnan(bad.sample1(counted, &exhausted)));
    CHECK(exhausted);
    CHECK(counted.calls == 0);
  }
  // Marsaglia–Tsang: words 0 and 2^63 alternate, so every normal is ≈ −8.6 (double) or −5.9
  // (float) and 1 + x/√(9d) ≤ 0 for shape 3 (−1/c = −4.9): every proposal is rejected. It used
  // to return the mode d with no report.
  CyclingRng tail{{0, std::uint64_t(1) << 63}};
  bool exhausted = false;
  CHECK(std::isnan(gamma_variate<Scalar>(tail, Scalar(3), Scalar(1), &exhausted)));
  CHECK(exhausted);
  CHECK(tail.calls == 2L * kMaxRejectionTries);
  tail.calls = 0;
  exhausted = false;
  CHECK(std::isnan(gamma_variate<Scalar>(tail, Scalar(3), Scalar(1), &exhausted, 5)));
  CHECK(exhausted);
  CHECK(tail.calls == 10);
  const MonomialGammaKinetic<Scalar> mg{Scalar(3), Scalar(1)};
  Vector<Scalar, 2> q = Vector<Scalar, 2>::Zero();
  CHECK_FALSE(mg.sample(tail, q));
  CHECK(std::isnan(q[0]));
  exhausted = false;
  CHECK(std::isnan(mg.sample1(tail, &exhausted, 7)));
  CHECK(exhausted);
  tail.calls = 0;
  CHECK_FALSE(MonomialGammaKinetic<Scalar>{Scalar(3), Scalar(-1)}.sample(tail, q));
  CHECK(tail.calls == 0);
  // Invalid parameters: NaN without a word, and not reported as a reached cap.
  tail.calls = 0;
  exhausted = false;
  CHECK(std::isnan(gamma_variate<Scalar>(tail, Scalar(0), Scalar(1), &exhausted)));
  CHECK(std::isnan(gamma_variate<Scalar>(tail, Scalar(3), Scalar(1), &exhausted, 0)));
  CHECK_FALSE(exhausted);
  CHECK(tail.calls == 0);
}

TEST_CASE("with a good RNG the caps hold as documented, and a too-small cap is reported") {
  // One proposal per draw (max_tries = 1) measures the per-proposal accept rate q. The documented
  // bounds: q ≥ 0.95 for Marsaglia–Tsang, q ≥ accept_floor() for the exp(−K_c) accept step. With
  // n = 40000 the rate's standard error is ≤ 0.0025; the margin of 4 of them keeps a true q on the
  // bound from failing by chance (p ≈ 3e−5).
  const int n = 40000;
  host::Rng rng(31);
  for (const double shape : {0.3, 1.001, 1.5, 3.0, 10.0}) {
    int accepted = 0;
    for (int i = 0; i < n; ++i) {
      bool exhausted = false;
      (void)gamma_variate<double>(rng, shape, 1.0, &exhausted, 1);
      accepted += exhausted ? 0 : 1;
    }
    const double q = double(accepted) / n;
    CAPTURE(shape);
    CHECK(q > 0.95 - 4 * std::sqrt(0.05 * 0.95 / n));
    CHECK(q < 1.0);  // a proposal can be rejected: the cap is reachable
  }
  for (const auto& kc : {std::pair<int, double>{1, 0.7}, {1, 5.0}, {2, 0.7}, {2, 3.0}}) {
    const SoftMonomialGammaKinetic<double> k{kc.first, 1.3, kc.second};
    int accepted = 0;
    for (int i = 0; i < n; ++i) {
      bool exhausted = false;
      (void)k.sample1(rng, &exhausted, 1);
      accepted += exhausted ? 0 : 1;
    }
    const double q = double(accepted) / n;
    const double floor = k.accept_floor();
    CAPTURE(kc.first);
    CAPTURE(kc.second);
    CHECK(q > floor - 4 * std::sqrt(floor * (1 - floor) / n));
    // With the default cap, no draw fails (each fails with probability < 2^-64 here).
    bool exhausted = false;
    for (int i = 0; i < 2000; ++i) (void)k.sample1(rng, &exhausted);
    CHECK_FALSE(exhausted);
  }
  // A very soft K_c (c = 0.05, a = 2: q ≈ e^{−40}) with 8 proposals fails on a good RNG, and says
  // so; the KS tests above cover the accepted draws' law.
  const SoftMonomialGammaKinetic<double> soft{2, 1.0, 0.05};
  bool exhausted = false;
  (void)soft.sample1(rng, &exhausted, 8);
  CHECK(exhausted);
}
