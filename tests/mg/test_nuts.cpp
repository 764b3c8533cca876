// SPDX-License-Identifier: MIT
// NUTS (MATH.md §4.3 A): conformance, tree limits, transitions against a naive oracle (U-turn
// bookkeeping), exactness at large steps (unadjusted leapfrog as the negative control), ESS per
// gradient against fixed-length HMC.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
    REQUIRE(s.step(z, model, rng));
    const typename Sampler::Info info = z.extra();
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
  {  // the bookkeeping of an earlier transition, which a failed step must keep too
    typename S::Info last;
    last.depth = 2;
    last.leapfrog_steps = 3;
    last.accept_stat = Scalar(0.5);
    z0.set_extra(last);
  }
  auto expect = [&](const S& s, const auto& m, const typename S::StateType& zin, StatusCode code) {
    host::Rng rng(1);
    auto z = zin;
    CHECK(s.step(z, m, rng) == code);
    CHECK(z == zin);  // values and bookkeeping, bit for bit
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

/// The quartic model counting its gradient evaluations, its U scaled by `scale` (so that a test
/// can change the model between steps).
template <class Scalar>
struct CountingQuartic {
  long* gradients;
  Scalar scale = Scalar(1);
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    ++*gradients;
    sgmcmc_test::QuarticModel<Scalar, 3>{}.gradient(th, g);
    g *= scale;
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    return scale * sgmcmc_test::QuarticModel<Scalar, 3>{}.potential(th);
  }
};

TEST_CASE_TEMPLATE(
    "NUTS: StartGradient::Keep gives the same chain with one gradient fewer per step", Scalar,
    float, double) {
  using S = NUTS<Scalar, 3>;
  using K = NUTS<Scalar, 3, 10, StartGradient::Keep>;
  typename S::Params p;
  p.step_size = Scalar(0.2);
  const S plain(p);
  const K reusing(p);
  long g_plain = 0, g_reuse = 0;
  CountingQuartic<Scalar> m_plain{&g_plain}, m_reuse{&g_reuse};
  host::Rng r_plain(21), r_reuse(21);
  const Vector<Scalar, 3> theta0 = Vector<Scalar, 3>::Constant(Scalar(0.5));
  auto a = plain.start(theta0);
  auto b = reusing.start(theta0);
  // The same position, momentum and tree, bit for bit, at every step; the reused gradient is
  // exactly the one the plain chain recomputes.
  auto same = [&](int step, bool reused) {
    const typename S::Info ia = a.extra();
    const typename K::Info ib = b.extra();
    CHECK_FALSE(ia.reused_gradient);
    CHECK(ib.reused_gradient == reused);
    CHECK(ia.leapfrog_steps == ib.leapfrog_steps);
    CHECK(ia.depth == ib.depth);
    const bool values =
        std::memcmp(a.position().data(), b.position().data(), 3 * sizeof(Scalar)) == 0 &&
        std::memcmp(a.momentum().data(), b.momentum().data(), 3 * sizeof(Scalar)) == 0;
    if (!values) MESSAGE("the chains part at step " << step);
    return values;
  };
  long leapfrogs = 0;
  bool all_same = true;
  constexpr int n = 400;
  for (int i = 0; i < n; ++i) {
    if (i == 150) {  // the user moves the position: the kept gradient is not taken there
      a.position()[1] = Scalar(-0.25);
      b.position()[1] = Scalar(-0.25);
    }
    if (i == 250) {  // the user writes the same bits back: still the kept position
      const Scalar x = b.position()[2];
      a.position()[2] = x;
      b.position()[2] = x;
    }
    REQUIRE(plain.step(a, m_plain, r_plain));
    REQUIRE(reusing.step(b, m_reuse, r_reuse));
    leapfrogs += b.extra().leapfrog_steps;
    all_same = all_same && same(i, i != 0 && i != 150);
  }
  CHECK(all_same);
  CHECK(g_plain == leapfrogs + n);  // every start evaluates ∇U
  CHECK(g_reuse == leapfrogs + 2);  // at the start only at the first and the moved one
  // start() at exactly the current position: a new state, so the first step evaluates ∇U.
  const Vector<Scalar, 3> here = b.position();
  REQUIRE(reusing.start(b, here));
  REQUIRE(reusing.step(b, m_reuse, r_reuse));
  CHECK_FALSE(b.extra().reused_gradient);
  // The same through a StateMap over caller memory.
  alignas(kAlignBytes) Scalar memory[K::StateMap::storage_size] = {};
  typename K::StateMap zm(memory);
  REQUIRE(reusing.start(zm, theta0));
  REQUIRE(reusing.step(zm, m_reuse, r_reuse));
  REQUIRE(reusing.step(zm, m_reuse, r_reuse));
  CHECK(zm.extra().reused_gradient);

  // Negative control: the model changes between steps (its U scaled), against the contract. The
  // reusing chain starts that step from the old model's gradient, so the chains part: the check
  // above sees which gradient a transition starts from.
  host::Rng r1(5), r2(5);
  auto c = plain.start(theta0);
  auto e = reusing.start(theta0);
  CountingQuartic<Scalar> mc{&g_plain}, me{&g_reuse};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(plain.step(c, mc, r1));
    REQUIRE(reusing.step(e, me, r2));
  }
  CHECK(std::memcmp(c.position().data(), e.position().data(), 3 * sizeof(Scalar)) == 0);
  mc.scale = me.scale = Scalar(2);
  REQUIRE(plain.step(c, mc, r1));
  REQUIRE(reusing.step(e, me, r2));
  CHECK(e.extra().reused_gradient);
  // Another trajectory: its mean acceptance differs even where both kept the start.
  const typename S::Info ic = c.extra();
  const typename K::Info ie = e.extra();
  CHECK_FALSE(detail::same_bits_of(ic.accept_stat, ie.accept_stat));
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
  CHECK(run(8) == run(8));  // values and the last transition's Info
  CHECK_FALSE(bit_identical(run(8), run(9)));
  // MaxDepth = 3 on a nearly flat target: no U-turn, so exactly 2^3 − 1 = 7 leapfrog steps.
  typename NUTS<Scalar, 3, 3>::Params q;
  q.step_size = Scalar(0.5);
  const NUTS<Scalar, 3, 3> shallow(q);
  host::Rng rng(4);
  auto z = shallow.start(Vector<Scalar, 3>::Zero());
  for (int i = 0; i < 20; ++i) {
    REQUIRE(shallow.step(z, NearlyFlat<Scalar>{}, rng));
    const typename NUTS<Scalar, 3, 3>::Info info = z.extra();
    CHECK(info.leapfrog_steps == 7);
    CHECK(info.depth == 3);
    CHECK(info.max_depth);
    CHECK_FALSE(info.divergent);
  }
  // On the quartic target the default tree stops well before 2^10 − 1 steps, by a U-turn.
  auto zq = s.start(Vector<Scalar, 3>::Constant(Scalar(0.5)));
  CHECK(zq.extra().leapfrog_steps == 0);  // start: no transition yet
  REQUIRE(s.step(zq, model, rng));
  const typename NUTS<Scalar, 3>::Info info = zq.extra();
  CHECK(info.leapfrog_steps >= 1);
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
    REQUIRE(wild.step(w, model, rng));
    divergent += w.extra().divergent;
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
      REQUIRE(s.step(z, banana, rng));
      d.divergent += z.extra().divergent;
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
        REQUIRE(nuts.step(zn, target, r1));
        out = zn.position()[9];
        return zn.extra().leapfrog_steps;
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

namespace {

/// A naive NUTS transition written from the algorithm's description (Betancourt 2017; nuts.hpp's
/// class comment) in double, as the oracle of the iterative implementation: its own leapfrog,
/// the whole trajectory's momenta stored in a std::vector, and every U-turn check recomputed from
/// scratch (sums over the raw momenta, no checkpoints) as current Stan defines them: for every
/// aligned block of 2^k leaves of a subtree the whole block, its left half extended by the right
/// half's first state and its right half extended by the left half's last state; the same three
/// on the whole tree after each doubling. It makes the same random draws in the same order:
/// r ~ N(0, mI); per doubling one uniform for the direction; per leaf after a subtree's first one
/// uniform (streaming multinomial choice); per kept subtree one uniform unless it outweighs the
/// tree (biased progressive sampling).
template <int Dim>
struct ReferenceNUTS {
  using V = Vector<double, Dim>;
  double h = 0.1, mass = 1.0, max_error = 1000.0;
  int max_depth = 10;

  struct Leaf {
    V theta, r, g;
    double u = 0;
  };
  struct Result {
    V theta, r;
    int depth = 0, leapfrog_steps = 0;
    bool divergent = false, max_depth = true;
    double accept_stat = 0;
    bool subtree_turn = false, tree_turn = false;  // where the trajectory stopped
  };

  static bool no_turn(const V& a, const V& b, const V& rho) {
    return a.dot(rho) > 0 && b.dot(rho) > 0;
  }
  /// The three checks on r[lo, lo + len) split in halves (from scratch).
  static bool block_ok(const std::vector<V>& r, std::size_t lo, std::size_t len) {
    const std::size_t half = len / 2, hi = lo + len - 1, mid = lo + half;
    V left = V::Zero(), right = V::Zero();
    for (std::size_t i = lo; i < mid; ++i) left += r[i];
    for (std::size_t i = mid; i <= hi; ++i) right += r[i];
    return no_turn(r[lo], r[hi], V(left + right)) && no_turn(r[lo], r[mid], V(left + r[mid])) &&
           no_turn(r[mid - 1], r[hi], V(right + r[mid - 1]));
  }
  static double log_add(double a, double b) {
    if (a < b) std::swap(a, b);
    if (b == -INFINITY) return a;
    return a + std::log1p(b - a < -708 ? 0.0 : std::exp(b - a));
  }
  double kinetic(const V& r) const { return r.squaredNorm() / (2 * mass); }

  template <class Model>
  bool leapfrog(Leaf& x, double step, const Model& model) const {
    x.r -= 0.5 * step * x.g;
    x.theta += step * x.r / mass;
    model.gradient(x.theta, x.g);
    x.r -= 0.5 * step * x.g;
    x.u = model.potential(x.theta);
    return x.theta.allFinite() && x.r.allFinite() && x.g.allFinite() && std::isfinite(x.u);
  }

  template <class Model>
  Result transition(const V& theta0, const Model& model, host::Rng& rng) const {
    Leaf start;
    start.theta = theta0;
    model.gradient(theta0, start.g);
    start.u = model.potential(theta0);
    fill_normal(rng, start.r);
    start.r *= std::sqrt(mass);
    const double h0 = start.u + kinetic(start.r);
    std::vector<Leaf> tree = {start};  // spatial order, left to right
    Result out;
    out.theta = start.theta;
    out.r = start.r;
    double log_w = 0, accept_sum = 0;
    for (int depth = 0; depth < max_depth; ++depth) {
      const bool forward = uniform_open01<double>(rng) < 0.5;
      Leaf edge = forward ? tree.back() : tree.front();
      std::vector<Leaf> sub;  // generation order, outward
      std::vector<V> sub_r;
      double sub_log_w = -INFINITY;
      Leaf pick = edge;  // replaced by the first leaf
      bool valid = true;
      for (std::size_t n = 0; n < (std::size_t(1) << depth); ++n) {
        ++out.leapfrog_steps;
        const double delta =
            leapfrog(edge, forward ? h : -h, model) ? edge.u + kinetic(edge.r) - h0 : NAN;
        if (!(delta <= max_error)) {
          valid = false;
          out.divergent = true;
          break;
        }
        accept_sum += delta > 0 ? (delta > 708 ? 0.0 : std::exp(-delta)) : 1.0;
        sub_log_w = log_add(sub_log_w, -delta);
        if (n == 0 || std::log(uniform_open01<double>(rng)) < -delta - sub_log_w) pick = edge;
        sub.push_back(edge);
        sub_r.push_back(edge.r);
        for (std::size_t len = 2; len <= n + 1 && (n + 1) % len == 0; len *= 2) {
          if (!block_ok(sub_r, n + 1 - len, len)) valid = false;
        }
        if (!valid) {
          out.subtree_turn = true;
          break;
        }
      }
      if (!valid) {
        out.max_depth = false;
        break;
      }
      out.depth = depth + 1;
      if (sub_log_w > log_w || std::log(uniform_open01<double>(rng)) < sub_log_w - log_w) {
        out.theta = pick.theta;
        out.r = pick.r;
      }
      log_w = log_add(log_w, sub_log_w);
      if (forward) {
        tree.insert(tree.end(), sub.begin(), sub.end());
      } else {
        tree.insert(tree.begin(), sub.rbegin(), sub.rend());
      }
      std::vector<V> r;
      for (const Leaf& x : tree) r.push_back(x.r);
      if (!block_ok(r, 0, r.size())) {
        out.max_depth = false;
        out.tree_turn = true;
        break;
      }
    }
    out.accept_stat = out.leapfrog_steps > 0 ? accept_sum / out.leapfrog_steps : 0.0;
    return out;
  }
};

/// What the comparisons exercised.
struct Coverage {
  int transitions = 0, subtree_turns = 0, tree_turns = 0, divergent = 0, max_depth = 0;
  int deepest = 0;
};

/// n transitions of NUTS<double, Dim, MaxDepth> at step size h, each compared with the reference
/// from the same state and RNG position: the same leapfrog count, depth, flags, draws (the RNG
/// ends at the same point), and the same selected state up to the rounding of two leapfrog
/// codes (1e-9 relative). The chain continues from the implementation's state.
template <int Dim, int MaxDepth, class Model>
void compare_with_reference(const Model& model, double h, const Vector<double, Dim>& theta0, int n,
                            std::uint64_t seed, Coverage& cov) {
  typename NUTS<double, Dim, MaxDepth>::Params p;
  p.step_size = h;
  const NUTS<double, Dim, MaxDepth> s(p);
  ReferenceNUTS<Dim> ref;
  ref.h = h;
  ref.max_depth = MaxDepth;
  host::Rng rng(seed);
  auto z = s.start(theta0);
  for (int i = 0; i < n; ++i) {
    const Vector<double, Dim> from = z.position();
    host::Rng rng_ref = rng;
    const auto want = ref.transition(from, model, rng_ref);
    REQUIRE(s.step(z, model, rng));
    const auto got = z.extra();
    CAPTURE(i);
    CAPTURE(h);
    REQUIRE(got.leapfrog_steps == want.leapfrog_steps);
    REQUIRE(got.depth == want.depth);
    REQUIRE(got.divergent == want.divergent);
    REQUIRE(got.max_depth == want.max_depth);
    REQUIRE(std::fabs(got.accept_stat - want.accept_stat) <= 1e-9);
    REQUIRE(
        ((z.position() - want.theta).array().abs() <= 1e-9 * (1 + want.theta.array().abs())).all());
    REQUIRE(((z.momentum() - want.r).array().abs() <= 1e-9 * (1 + want.r.array().abs())).all());
    REQUIRE(mgtest::same_stream_position(rng, rng_ref));
    ++cov.transitions;
    cov.subtree_turns += want.subtree_turn;
    cov.tree_turns += want.tree_turn;
    cov.divergent += want.divergent;
    cov.max_depth += want.max_depth;
    cov.deepest = std::max(cov.deepest, want.depth);
  }
}

}  // namespace

TEST_CASE("NUTS transitions equal a naive NUTS with every U-turn check computed from scratch") {
  // The iterative tree (one checkpoint per level, U-turns tested leaf by leaf) against the
  // reference above on targets and step sizes that end trajectories in every way: U-turns inside
  // subtrees and of the whole tree at many depths, divergences (banana at h = 0.4, ω = 4), and
  // the depth limit (MaxDepth = 4 on the wide Gaussian).
  Coverage cov;
  compare_with_reference<2, 10>(test::CorrelatedGaussian2<double>{}, 0.5,
                                Vector<double, 2>(0.1, -0.5), 400, 61, cov);
  compare_with_reference<2, 10>(test::CorrelatedGaussian2<double>{}, 0.05,
                                Vector<double, 2>(0.1, -0.5), 200, 62, cov);
  compare_with_reference<2, 10>(test::Banana<double>{}, 0.2, Vector<double, 2>(0.1, -0.5), 400, 63,
                                cov);
  compare_with_reference<2, 10>(test::Banana<double>{}, 0.4, Vector<double, 2>(0.1, -0.5), 2000, 64,
                                cov);
  compare_with_reference<3, 10>(sgmcmc_test::QuarticModel<double, 3>{}, 0.2,
                                Vector<double, 3>::Constant(0.5), 400, 65, cov);
  compare_with_reference<10, 10>(WideGaussian{}, 0.3, Vector<double, 10>::Zero(), 200, 66, cov);
  compare_with_reference<10, 4>(WideGaussian{}, 0.1, Vector<double, 10>::Zero(), 100, 67, cov);
  MESSAGE("compared " << cov.transitions << " transitions: " << cov.subtree_turns
                      << " ended by a U-turn inside a subtree, " << cov.tree_turns
                      << " by a U-turn of the whole tree, " << cov.divergent << " by a divergence, "
                      << cov.max_depth << " at the depth limit; deepest tree " << cov.deepest);
  CHECK(cov.subtree_turns > cov.transitions / 20);  // every way of ending is exercised
  CHECK(cov.tree_turns > cov.transitions / 20);
  CHECK(cov.divergent > 10);
  CHECK(cov.max_depth > 10);
  CHECK(cov.deepest >= 6);
}
