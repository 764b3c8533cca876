// SPDX-License-Identifier: MIT
// NUTS (MATH.md §4.3 A): conformance, tree limits, U-turn bookkeeping, exactness at large steps
// (unadjusted leapfrog as the negative control), ESS per gradient against fixed-length HMC.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "mg_support.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/hmc.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "stats.hpp"
#include "targets.hpp"
#include "test_models.hpp"

using namespace sgmcmc;
using sgmcmc_test::bit_identical;

template class sgmcmc::NUTS<float, 3>;
template class sgmcmc::NUTS<double, 2, 6>;

// Tolerances: moments within 4 Monte-Carlo standard errors (Geyer ESS, stats.hpp; two-sided level
// 6e-5 per check), KS with √ESS · D < 1.95 (level 1e-3; mg_support.hpp). Fixed seeds.

namespace {

constexpr double kZ = 4.0;
constexpr double kKsCritical = 1.95;

template <class Scalar>
struct NanPotential {
  void gradient(const Vector<Scalar, 3>& th, Vector<Scalar, 3>& g) const { g = th; }
  Scalar potential(const Vector<Scalar, 3>&) const {
    return std::numeric_limits<Scalar>::quiet_NaN();
  }
};

/// Flat in θ₀ and θ₁ (a tiny quadratic), so no U-turn happens within a few doublings.
template <class Scalar>
struct NearlyFlat {
  void gradient(const Vector<Scalar, 3>& th, Vector<Scalar, 3>& g) const { g = Scalar(1e-6) * th; }
  Scalar potential(const Vector<Scalar, 3>& th) const { return Scalar(5e-7) * th.squaredNorm(); }
};

/// A chain of positions (double), with gradient counts.
struct Draws {
  std::vector<double> x0, x1;
  long gradients = 0;
  int divergent = 0;
};

template <class Sampler, class Model>
Draws run_nuts(const Sampler& s, const Model& model, int n, std::uint64_t seed) {
  host::Rng rng(seed);
  auto z = s.start(Vector<double, 2>(0.1, -0.5));
  Draws d;
  for (int i = 0; i < n; ++i) {
    typename Sampler::Info info;
    REQUIRE(s.step(z, model, rng, &info));
    d.gradients += info.leapfrog_steps;
    d.divergent += info.divergent;
    d.x0.push_back(z.position()[0]);
    d.x1.push_back(z.position()[1]);
  }
  return d;
}

template <class Model>
Draws run_hmc(const HMC<double, 2>& s, const Model& model, int n, std::uint64_t seed) {
  host::Rng rng(seed);
  auto z = s.start(Vector<double, 2>(0.1, -0.5));
  Draws d;
  for (int i = 0; i < n; ++i) {
    const Status st = s.step(z, model, rng);
    if (!st) break;
    d.gradients += s.params().steps;
    d.x0.push_back(z.position()[0]);
    d.x1.push_back(z.position()[1]);
  }
  return d;
}

/// Correlated Gaussian check: Var θ₁, Var θ₂, Cov within 4 se, and KS of θ₁ against N(0, 1).
bool gaussian_ok(const Draws& d, double rho, const char* what) {
  if (d.x0.size() < 100 || !std::isfinite(d.x0.back())) return false;
  const auto v0 = mgtest::z_score(test::centred_product(d.x0, 0, d.x0, 0), 1.0);
  const auto v1 = mgtest::z_score(test::centred_product(d.x1, 0, d.x1, 0), 1.0);
  const auto cv = mgtest::z_score(test::centred_product(d.x0, 0, d.x1, 0), rho);
  const std::vector<double> q = {-1.2816, -0.6745, 0.0, 0.6745, 1.2816};
  const auto ks = mgtest::chain_ks(d.x0, q, [](double x) { return test::normal_cdf(x); });
  MESSAGE(doctest::String(what) << ": Var " << v0.mean << " " << v1.mean << " Cov " << cv.mean
                                << " (z " << v0.z << " " << v1.z << " " << cv.z << ", ESS "
                                << v0.ess << "), KS sqrt(ESS) D " << ks.scaled);
  return v0.z < kZ && v1.z < kZ && cv.z < kZ && ks.scaled < kKsCritical;
}

/// Banana check (MATH.md §5.1 oracles): E θ₁², E θ₂, E r² = 1/16 for r = θ₂ − θ₁²/4 + 1.2 (the
/// stiff direction, r ~ N(0, 1/16) independently of θ₁), within 4 se; KS of θ₁ against
/// ∝ exp(−θ₁⁴/10) and of r against N(0, 1/16).
bool banana_ok(const Draws& d, const char* what) {
  if (d.x0.size() < 100) return false;
  for (double v : d.x0)
    if (!std::isfinite(v)) return false;
  static const test::GridDensity law1([](double x) { return test::Banana<double>::u1(x); }, -8, 8,
                                      100000);
  std::vector<double> sq(d.x0.size()), r(d.x0.size()), r2(d.x0.size());
  for (std::size_t i = 0; i < sq.size(); ++i) {
    sq[i] = d.x0[i] * d.x0[i];
    r[i] = d.x1[i] - d.x0[i] * d.x0[i] / 4 + 1.2;
    r2[i] = r[i] * r[i];
  }
  const auto a = mgtest::z_score(sq, test::Banana<double>::theta1_second);
  const auto b = mgtest::z_score(d.x1, test::Banana<double>::theta2_mean);
  const auto c = mgtest::z_score(r2, 1.0 / 16);
  const auto ks1 =
      mgtest::chain_ks(d.x0, mgtest::check_quantiles(law1), [&](double x) { return law1.cdf(x); });
  const std::vector<double> qr = {-0.3204, -0.1686, 0.0, 0.1686, 0.3204};
  const auto ksr = mgtest::chain_ks(r, qr, [](double x) { return test::normal_cdf(4 * x); });
  MESSAGE(doctest::String(what) << ": E th1^2 " << a.mean << " (z " << a.z << "), E th2 " << b.mean
                                << " (z " << b.z << "), E r^2 " << c.mean << " (z " << c.z
                                << "), KS th1 " << ks1.scaled << ", KS r " << ksr.scaled << ", ESS "
                                << a.ess);
  return a.z < kZ && b.z < kZ && c.z < kZ && ks1.scaled < kKsCritical && ksr.scaled < kKsCritical;
}

}  // namespace

TEST_CASE_TEMPLATE("NUTS: bad input returns a Status and leaves the state unchanged", Scalar, float,
                   double) {
  using S = NUTS<Scalar, 3>;
  const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  typename S::StateType z0;
  z0.position() << Scalar(0.3), Scalar(-0.2), Scalar(1.0);
  z0.momentum() << Scalar(1), Scalar(2), Scalar(3);
  auto expect = [&](const S& s, const auto& m, const typename S::StateType& zin, StatusCode code) {
    host::Rng rng(1);
    auto z = zin;
    CHECK(s.step(z, m, rng) == code);
    CHECK(bit_identical(z, zin));
  };
  auto make = [](Scalar h, Scalar mass, Scalar emax) {
    typename S::Params p;
    p.step_size = h;
    p.mass = mass;
    p.max_energy_error = emax;
    return S(p);
  };
  CHECK(make(Scalar(0.1), Scalar(1), Scalar(1000)).status());
  for (Scalar h : {Scalar(0), Scalar(-1), nan}) {
    CHECK(make(h, Scalar(1), Scalar(1000)).status() == StatusCode::InvalidStepSize);
    expect(make(h, Scalar(1), Scalar(1000)), model, z0, StatusCode::InvalidStepSize);
  }
  for (Scalar m : {Scalar(0), Scalar(-1), nan}) {
    expect(make(Scalar(0.1), m, Scalar(1000)), model, z0, StatusCode::InvalidParameter);
  }
  for (Scalar e : {Scalar(0), Scalar(-5), nan}) {
    expect(make(Scalar(0.1), Scalar(1), e), model, z0, StatusCode::InvalidParameter);
  }
  const S s = make(Scalar(0.1), Scalar(1), Scalar(1000));
  auto zbad = z0;
  zbad.position()[1] = std::numeric_limits<Scalar>::infinity();
  expect(s, model, zbad, StatusCode::NonFiniteState);
  sgmcmc_test::BadGradientModel<Scalar, 3> badg;
  expect(s, badg, z0, StatusCode::NonFiniteGradient);
  expect(s, NanPotential<Scalar>{}, z0, StatusCode::NonFinitePotential);
}

TEST_CASE_TEMPLATE("NUTS: determinism, tree-size limits, divergences", Scalar, float, double) {
  const sgmcmc_test::QuarticModel<Scalar, 3> model;
  typename NUTS<Scalar, 3>::Params p;
  p.step_size = Scalar(0.2);
  const NUTS<Scalar, 3> s(p);
  auto run = [&](std::uint64_t seed) {
    host::Rng rng(seed);
    auto z = s.start(Vector<Scalar, 3>::Constant(Scalar(0.5)));
    for (int i = 0; i < 300; ++i) REQUIRE(s.step(z, model, rng));
    return z;
  };
  CHECK(bit_identical(run(8), run(8)));
  CHECK_FALSE(bit_identical(run(8), run(9)));
  // MaxDepth = 3 on a nearly flat target: no U-turn, so exactly 2^3 − 1 = 7 leapfrog steps.
  typename NUTS<Scalar, 3, 3>::Params q;
  q.step_size = Scalar(0.5);
  const NUTS<Scalar, 3, 3> shallow(q);
  host::Rng rng(4);
  auto z = shallow.start(Vector<Scalar, 3>::Zero());
  for (int i = 0; i < 20; ++i) {
    typename NUTS<Scalar, 3, 3>::Info info;
    REQUIRE(shallow.step(z, NearlyFlat<Scalar>{}, rng, &info));
    CHECK(info.leapfrog_steps == 7);
    CHECK(info.depth == 3);
    CHECK(info.max_depth);
    CHECK_FALSE(info.divergent);
  }
  // On the quartic target the default tree stops well before 2^10 − 1 steps, by a U-turn.
  typename NUTS<Scalar, 3>::Info info;
  auto zq = s.start(Vector<Scalar, 3>::Constant(Scalar(0.5)));
  REQUIRE(s.step(zq, model, rng, &info));
  CHECK(info.leapfrog_steps <= 1023);
  CHECK_FALSE(info.max_depth);
  CHECK(info.accept_stat > Scalar(0));
  CHECK(info.accept_stat <= Scalar(1));
  // A step size far beyond stability: divergences are reported, never a failure, and the state
  // stays finite (the start's own weight keeps it selectable).
  typename NUTS<Scalar, 3>::Params big;
  big.step_size = Scalar(5);
  const NUTS<Scalar, 3> wild(big);
  int divergent = 0;
  auto w = wild.start(Vector<Scalar, 3>::Constant(Scalar(0.5)));
  for (int i = 0; i < 20; ++i) {
    typename NUTS<Scalar, 3>::Info wi;
    REQUIRE(wild.step(w, model, rng, &wi));
    divergent += wi.divergent;
    CHECK(w.all_finite());
  }
  CHECK(divergent > 10);
}

TEST_CASE(
    "NUTS is exact on a correlated Gaussian at a large step size; unadjusted leapfrog is not") {
  // ρ = 0.9: the stiff direction has σ = 0.32, leapfrog is stable for h < 0.63; at h = 0.5 its
  // modified energy inflates that variance by 1/(1 − (hω)²/4) ≈ 2.7 without a Metropolis test.
  // NUTS: 20000 iterations (ESS ≈ 1e4); unadjusted HMC, L = 5, the same number of iterations.
  const test::CorrelatedGaussian2<double> target;
  NUTS<double, 2>::Params p;
  p.step_size = 0.5;
  const Draws d = run_nuts(NUTS<double, 2>(p), target, 20000, 31);
  CHECK(gaussian_ok(d, 0.9, "NUTS h=0.5"));
  HMC<double, 2>::Params hp;
  hp.step_size = 0.5;
  hp.steps = 5;
  hp.metropolis = false;
  CHECK_FALSE(gaussian_ok(run_hmc(HMC<double, 2>(hp), target, 20000, 31), 0.9,
                          "unadjusted leapfrog h=0.5 (control)"));
}

TEST_CASE_TEMPLATE("NUTS is exact on the banana at large step sizes; unadjusted leapfrog is not",
                   Scalar, float, double) {
  // h = 0.2 and 0.4 (the latter with frequent divergences: the stiff direction has ω = 4, so the
  // leapfrog is unstable there beyond h = 0.5 and badly inaccurate before). 30000 iterations.
  // Control: unadjusted leapfrog, h = 0.2, L = 8: E r² inflated by ≈ 1/(1 − (0.2·4)²/4) = 1.19.
  const test::Banana<Scalar> banana;
  for (double h : {0.2, 0.4}) {
    typename NUTS<Scalar, 2>::Params p;
    p.step_size = Scalar(h);
    const NUTS<Scalar, 2> s(p);
    host::Rng rng(77);
    auto z = s.start(Vector<Scalar, 2>(Scalar(0.1), Scalar(-0.5)));
    Draws d;
    for (int i = 0; i < 30000; ++i) {
      typename NUTS<Scalar, 2>::Info info;
      REQUIRE(s.step(z, banana, rng, &info));
      d.divergent += info.divergent;
      d.x0.push_back(double(z.position()[0]));
      d.x1.push_back(double(z.position()[1]));
    }
    CAPTURE(h);
    MESSAGE("NUTS banana h=" << h << ": divergent iterations " << d.divergent);
    CHECK(banana_ok(d, "NUTS banana"));
  }
  HMC<double, 2>::Params hp;
  hp.step_size = 0.2;
  hp.steps = 8;
  hp.metropolis = false;
  CHECK_FALSE(banana_ok(run_hmc(HMC<double, 2>(hp), test::Banana<double>{}, 30000, 77),
                        "unadjusted leapfrog h=0.2 (control)"));
}

TEST_CASE("NUTS: the iterative U-turn checks equal the recursive definition") {
  // Reference: for every leaf n and every aligned block of 2^k leaves ending at n, the three
  // checks of current Stan computed from scratch (sums over the raw momenta), no checkpoints.
  // Momenta: noisy rotations at several frequencies, so that turns happen at every depth.
  using V = Vector<double, 2>;
  auto reference_first_turn = [](const std::vector<V>& r) -> long {
    auto sum = [&](std::size_t lo, std::size_t len) {
      V s = V::Zero();
      for (std::size_t i = lo; i < lo + len; ++i) s += r[i];
      return s;
    };
    for (std::size_t n = 0; n < r.size(); ++n) {
      for (std::size_t len = 2; len <= r.size() && (n + 1) % len == 0; len *= 2) {
        const std::size_t lo = n + 1 - len, half = len / 2;
        const V rl = sum(lo, half), rr = sum(lo + half, half);
        const bool ok = detail::no_u_turn(r[lo], r[n], V(rl + rr)) &&
                        detail::no_u_turn(r[lo], r[lo + half], V(rl + r[lo + half])) &&
                        detail::no_u_turn(r[lo + half - 1], r[n], V(rr + r[lo + half - 1]));
        if (!ok) return static_cast<long>(n);
      }
    }
    return -1;
  };
  host::Rng rng(12);
  int turned = 0, total = 0;
  for (int depth = 0; depth <= 9; ++depth) {
    for (int trial = 0; trial < 40; ++trial) {
      const double omega = 0.02 + 0.05 * trial / (1 + depth);
      const double noise = 0.3 * (trial % 4);
      std::vector<V> r(std::size_t(1) << depth);
      for (std::size_t i = 0; i < r.size(); ++i) {
        V z;
        fill_normal(rng, z);
        r[i] = V(std::cos(omega * double(i)), std::sin(omega * double(i))) + noise * z;
      }
      detail::UTurnTracker<double, 2, 10> tracker;
      tracker.reset(depth);
      long first = -1;
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (!tracker.add(r[i])) {
          first = static_cast<long>(i);
          break;
        }
      }
      CAPTURE(depth);
      CAPTURE(trial);
      CHECK(first == reference_first_turn(r));
      turned += first >= 0;
      ++total;
    }
  }
  CHECK(turned > total / 4);  // both outcomes are exercised
  CHECK(turned < total * 3 / 4);
}

namespace {
/// N(0, diag σ²) in d = 10 with σ_i from 1 to 5: HMC with a fixed L must trade the stiff and the
/// wide directions; NUTS picks a length per iteration.
struct WideGaussian {
  static double sigma(int i) { return 1.0 + 4.0 * i / 9.0; }
  void gradient(const Vector<double, 10>& th, Vector<double, 10>& g) const {
    for (int i = 0; i < 10; ++i) g[i] = th[i] / (sigma(i) * sigma(i));
  }
  double potential(const Vector<double, 10>& th) const {
    double u = 0;
    for (int i = 0; i < 10; ++i) u += th[i] * th[i] / (2 * sigma(i) * sigma(i));
    return u;
  }
};

/// min over the widest coordinate θ₉ and θ₉² of the Geyer ESS, per gradient evaluation.
template <class Step>
double wide_ess_per_gradient(Step&& step, int n, long* grads_out) {
  std::vector<double> x, sq;
  long grads = 0;
  for (int i = 0; i < n; ++i) {
    double w9 = 0;
    grads += step(w9);
    x.push_back(w9 / WideGaussian::sigma(9));
    sq.push_back(x.back() * x.back());
  }
  *grads_out = grads;
  const double e = std::min(test::mc_estimate(x, 20000).ess, test::mc_estimate(sq, 20000).ess);
  return e / double(grads);
}
}  // namespace

TEST_CASE("NUTS: ESS per gradient against fixed-length HMC (d = 10, scales 1 to 5)") {
  // All at h = 0.6 (stable for the stiffest direction, σ = 1). HMC with Metropolis:
  // "tuned" L = 13 (L·h ≈ (π/2)·5, a quarter period of the widest direction) and "badly tuned"
  // L = 1 (MALA-like random walk). Assertion: NUTS beats the badly tuned HMC by ≥ 3× (measured
  // margin far larger); every figure is reported.
  const WideGaussian target;
  const double h = 0.6;
  NUTS<double, 10>::Params p;
  p.step_size = h;
  const NUTS<double, 10> nuts(p);
  host::Rng r1(51), r2(52), r3(53);
  auto zn = nuts.start(Vector<double, 10>::Zero());
  long gn = 0, gt = 0, gb = 0;
  const double e_nuts = wide_ess_per_gradient(
      [&](double& out) {
        NUTS<double, 10>::Info info;
        REQUIRE(nuts.step(zn, target, r1, &info));
        out = zn.position()[9];
        return info.leapfrog_steps;
      },
      5000, &gn);
  auto hmc_run = [&](int steps, host::Rng& rng, int n, long* g) {
    HMC<double, 10>::Params hp;
    hp.step_size = h;
    hp.steps = steps;
    const HMC<double, 10> hmc(hp);
    auto z = hmc.start(Vector<double, 10>::Zero());
    return wide_ess_per_gradient(
        [&](double& out) {
          REQUIRE(hmc.step(z, target, rng));
          out = z.position()[9];
          return steps;
        },
        n, g);
  };
  const double e_tuned = hmc_run(13, r2, 5000, &gt);
  const double e_bad = hmc_run(1, r3, 50000, &gb);
  MESSAGE("ESS per gradient (widest coordinate, min of theta and theta^2): NUTS "
          << e_nuts << " (" << double(gn) / 5000 << " gradients/iteration), HMC L=13 " << e_tuned
          << ", HMC L=1 " << e_bad);
  CHECK(e_nuts > 3 * e_bad);
}
