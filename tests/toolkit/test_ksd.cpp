// IMQ kernel Stein discrepancy (diagnostics/ksd.hpp): the Stein kernel against finite differences
// of the IMQ kernel in long double, the estimator against a direct long-double double loop and a
// hand-computed two-point case, its expectation against closed forms for Gaussian samples, the
// separation of a right sample from wrong ones at a stated threshold, streaming = batch, no heap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "alloc_counter.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/diagnostics/ksd.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;

/// k(x, y) = (c² + ‖x − y‖²)^(−1/2), straight from the definition.
LD imq(const LD* x, const LD* y, int d, LD c) {
  LD r2 = 0;
  for (int k = 0; k < d; ++k) r2 += (x[k] - y[k]) * (x[k] - y[k]);
  return 1 / std::sqrt(c * c + r2);
}

/// k_p(x, y) = s(x)ᵀs(y) k + s(x)ᵀ∇_y k + s(y)ᵀ∇_x k + tr ∇_x∇_y k with every derivative of k by
/// central finite differences (step e): an independent check of the closed-form Stein kernel.
/// Truncation ~e² k⁽⁴⁾ (k's fourth derivative, 9/c⁵ at x = y: 288 for c = 0.5), rounding
/// ~1e-19/e² (the mixed difference). Over 2·10⁵ random pairs at c = 0.5, d = 1 (2026-12-02) the
/// largest error against the closed form, relative to 1 + |k_p|, was 9.1e-9 with e = 1e-5
/// and 9.0e-7 with e = 1e-4, the step until then, at |x − y| = 0.012: above the check's 1e-7 for
/// close pairs.
LD stein_kernel_fd(const LD* x, const LD* sx, const LD* y, const LD* sy, int d, LD c) {
  const LD e = 1e-5L;
  LD xp[8], xm[8], yp[8], ym[8];
  LD out = 0;
  LD ss = 0;
  for (int k = 0; k < d; ++k) ss += sx[k] * sy[k];
  out += ss * imq(x, y, d, c);
  for (int i = 0; i < d; ++i) {
    for (int k = 0; k < d; ++k) {
      xp[k] = xm[k] = x[k];
      yp[k] = ym[k] = y[k];
    }
    xp[i] += e;
    xm[i] -= e;
    yp[i] += e;
    ym[i] -= e;
    const LD dxk = (imq(xp, y, d, c) - imq(xm, y, d, c)) / (2 * e);
    const LD dyk = (imq(x, yp, d, c) - imq(x, ym, d, c)) / (2 * e);
    const LD dxy = (imq(xp, yp, d, c) - imq(xp, ym, d, c) - imq(xm, yp, d, c) + imq(xm, ym, d, c)) /
                   (4 * e * e);
    out += sx[i] * dyk + sy[i] * dxk + dxy;
  }
  return out;
}

/// The V- and U-statistics by a plain double loop over all pairs, in long double.
void direct(const std::vector<double>& x, const std::vector<double>& s, std::size_t n, int d, LD c,
            LD& v, LD& u) {
  LD all = 0;
  LD off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      LD r2 = 0, ss = 0, dsr = 0;
      for (int k = 0; k < d; ++k) {
        const LD r = LD(x[i * d + k]) - LD(x[j * d + k]);
        r2 += r * r;
        ss += LD(s[i * d + k]) * LD(s[j * d + k]);
        dsr += (LD(s[i * d + k]) - LD(s[j * d + k])) * r;
      }
      const LD uu = c * c + r2;
      const LD kp =
          ss / std::sqrt(uu) + (dsr + d) / std::pow(uu, 1.5L) - 3 * r2 / std::pow(uu, 2.5L);
      all += kp;
      if (i != j) off += kp;
    }
  }
  v = all / (LD(n) * LD(n));
  u = off / (LD(n) * LD(n - 1));
}

/// n draws of N(μ, σ² I_d) (sample-major) and their scores under the target N(0, I): s = −x.
void gaussian_sample(sgmcmc::host::Rng& rng, std::size_t n, int d, double mu0, double sigma,
                     std::vector<double>& x, std::vector<double>& s) {
  x.resize(n * d);
  s.resize(n * d);
  sgmcmc::fill_normal(rng, x.data(), static_cast<sgmcmc::Index>(n * d));
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) {
      double& v = x[i * d + k];
      v = sigma * v + (k == 0 ? mu0 : 0.0);
      s[i * d + k] = -v;
    }
  }
}

/// For R ~ Exponential(mean m): E[(1 + R)^(−1/2)] = √(π/m) e^{1/m} erfc(1/√m) and
/// E[(1 + R)^(1/2)] = 1 + (√(πm)/2) e^{1/m} erfc(1/√m) (incomplete gamma functions). In d = 2,
/// ‖x − y‖² for x, y i.i.d. N(·, σ²I) is such an R with m = 4σ².
LD e_inv_sqrt(LD m) {
  return std::sqrt(kPi / m) * std::exp(1 / m) * std::erfc(1 / std::sqrt(m));
}
LD e_sqrt(LD m) {
  return 1 + std::sqrt(kPi * m) / 2 * std::exp(1 / m) * std::erfc(1 / std::sqrt(m));
}

/// Exact E[V-statistic] of n i.i.d. draws of q = N(μ e₁, σ²I₂) against p = N(0, I₂), c = 1:
///   E V = E_q k_p(x, x)/n + (1 − 1/n) KSD²(q, p),  E_q k_p(x, x) = E‖x‖² + d = 2σ² + μ² + 2,
///   KSD² = E[δ(x)ᵀδ(y) k(x, y)], δ = s_p − s_q (Liu, Lee & Jordan 2016):
///   shift (σ = 1): δ = −μ e₁, KSD² = μ² E k;  scale (μ = 0): δ = −(1 − 1/σ²)x and with
///   a = x + y, b = x − y independent, E[xᵀy k] = (E‖a‖² E k(b) − E[‖b‖² k(b)])/4.
LD expected_v(LD mu, LD sigma, std::size_t n) {
  const LD m = 4 * sigma * sigma;
  const LD ek = e_inv_sqrt(m);
  LD ksd2 = 0;
  if (sigma == 1) {
    ksd2 = mu * mu * ek;
  } else {
    const LD erk = e_sqrt(m) - ek;  // E[R (1 + R)^(−1/2)]
    const LD w = 1 - 1 / (sigma * sigma);
    ksd2 = w * w * (4 * sigma * sigma * ek - erk) / 4;
  }
  const LD diag = 2 * sigma * sigma + mu * mu + 2;
  return diag / LD(n) + (1 - 1 / LD(n)) * ksd2;
}

}  // namespace

TEST_CASE("the IMQ Stein kernel equals its definition with finite-difference derivatives") {
  sgmcmc::host::Rng rng(31);
  for (int d : {1, 2, 3, 5}) {
    for (double c : {0.5, 1.0, 2.0}) {
      double x[8], y[8], sx[8], sy[8];
      LD xl[8], yl[8], sxl[8], syl[8];
      for (int rep = 0; rep < 20; ++rep) {
        sgmcmc::fill_normal(rng, x, d);
        sgmcmc::fill_normal(rng, y, d);
        sgmcmc::fill_normal(rng, sx, d);
        sgmcmc::fill_normal(rng, sy, d);
        for (int k = 0; k < d; ++k) {
          xl[k] = x[k];
          yl[k] = y[k];
          sxl[k] = sx[k];
          syl[k] = sy[k];
        }
        const LD fd = stein_kernel_fd(xl, sxl, yl, syl, d, c);
        const double lib = sgmcmc::imq_stein_kernel<double>(x, sx, y, sy, d, c * c);
        CAPTURE(d);
        CAPTURE(c);
        // Finite differences of step 1e-5 in long double: error below ~1e-8 (stein_kernel_fd).
        CHECK(std::fabs(lib - fd) <= 1e-7L * (1 + std::fabs(fd)));
      }
    }
  }
}

TEST_CASE("KSD: one and two points by hand") {
  // n = 1, d = 1: V = k_p(x, x) = s²/c + d/c³.
  const double x1[1] = {0.3}, s1[1] = {-0.3};
  auto one = sgmcmc::ksd_imq(x1, s1, 1, 1, 2.0);
  CHECK(one.v_statistic == doctest::Approx(0.09 / 2 + 1.0 / 8).epsilon(1e-15));
  CHECK(std::isnan(one.u_statistic));
  // n = 2, d = 1, c = 1: x = (0, 1), scores of N(0, 1): s = (0, −1). k_p(1,1) = 1, k_p(2,2) = 2,
  // k_p(1,2): r = −1, u = 2: 0 + 2^{−3/2}((0 + 1)(−1) + 1) − 3 · 2^{−5/2} = −3/(4√2).
  const double x2[2] = {0.0, 1.0}, s2[2] = {0.0, -1.0};
  auto two = sgmcmc::ksd_imq(x2, s2, 2, 1, 1.0);
  const double k12 = -3.0 / (4.0 * std::sqrt(2.0));
  CHECK(two.v_statistic == doctest::Approx((1 + 2 + 2 * k12) / 4).epsilon(1e-15));
  CHECK(two.u_statistic == doctest::Approx(k12).epsilon(1e-15));
  CHECK(two.n == 2);
  CHECK(two.ksd() == doctest::Approx(std::sqrt((1 + 2 + 2 * k12) / 4)).epsilon(1e-15));
}

TEST_CASE("KSD equals a direct long-double double loop") {
  sgmcmc::host::Rng rng(5);
  std::vector<double> x, s;
  for (int d : {1, 3, 7}) {
    for (std::size_t n : {std::size_t(2), std::size_t(17), std::size_t(150)}) {
      gaussian_sample(rng, n, d, 0.4, 1.3, x, s);
      for (double c : {0.7, 1.0}) {
        LD v, u;
        direct(x, s, n, d, c, v, u);
        const auto r = sgmcmc::ksd_imq(x.data(), s.data(), n, d, c);
        CAPTURE(d);
        CAPTURE(n);
        CHECK(std::fabs(r.v_statistic - v) <= 1e-12L * std::fabs(v));
        CHECK(std::fabs(r.u_statistic - u) <= 1e-12L * (std::fabs(u) + std::fabs(v)));
        // float samples, double sums: agree to float rounding of the inputs.
        std::vector<float> xf(x.begin(), x.end()), sf(s.begin(), s.end());
        const auto rf = sgmcmc::ksd_imq(xf.data(), sf.data(), n, d, float(c));
        CHECK(std::fabs(rf.v_statistic - v) <= 1e-5L * std::fabs(v));
      }
    }
  }
}

// The estimator's mean over 400 independent samples of n = 200 points (d = 2, c = 1) against
// the closed forms of expected_v: right sample, shifted, too wide, too narrow. Tolerance 4
// standard errors of the replicate mean.
TEST_CASE("KSD's expectation matches closed forms for Gaussian samples") {
  struct Case {
    double mu, sigma;
  };
  const Case cases[] = {{0, 1}, {1, 1}, {0.5, 1}, {0, 2}, {0, 0.5}};
  const std::size_t n = 200;
  const int reps = 400;
  sgmcmc::host::Rng rng(77);
  std::vector<double> x, s;
  for (const auto& cs : cases) {
    double sum = 0, sum2 = 0, usum = 0, usum2 = 0;
    for (int r = 0; r < reps; ++r) {
      gaussian_sample(rng, n, 2, cs.mu, cs.sigma, x, s);
      const auto e = sgmcmc::ksd_imq(x.data(), s.data(), n, 2, 1.0);
      sum += e.v_statistic;
      sum2 += e.v_statistic * e.v_statistic;
      usum += e.u_statistic;
      usum2 += e.u_statistic * e.u_statistic;
    }
    const double mean = sum / reps;
    const double se = std::sqrt((sum2 / reps - mean * mean) / (reps - 1));
    const double umean = usum / reps;
    const double use = std::sqrt((usum2 / reps - umean * umean) / (reps - 1));
    const double expected = static_cast<double>(expected_v(cs.mu, cs.sigma, n));
    const double ksd2 = (expected - (2 * cs.sigma * cs.sigma + cs.mu * cs.mu + 2) / n) /
                        (1 - 1.0 / n);  // the population KSD²
    CAPTURE(cs.mu);
    CAPTURE(cs.sigma);
    MESSAGE("mu=", cs.mu, " sigma=", cs.sigma, ": E V = ", expected, ", mean V = ", mean, " +- ",
            se, "; KSD² = ", ksd2, ", mean U = ", umean, " +- ", use);
    CHECK(std::fabs(mean - expected) <= 4 * se);
    CHECK(std::fabs(umean - ksd2) <= 4 * use);  // the U-statistic is unbiased for KSD²
  }
}

// Separation at a stated threshold. Under the target (i.i.d. N(0, I_d), c = 1) the V-statistic
// is ≥ 0 with mean 2d/n exactly, so by Markov's inequality P(V ≥ 20 · 2d/n) ≤ 5% whatever the
// null distribution: threshold τ = 40d/n (= 0.08 for d = 2, n = 1000). Wrong samples have V near
// their population KSD² (closed forms above): shift by e₁ 0.546, σ = 2 0.291, σ = 0.5 0.308, all
// more than 3.5τ. Ten seeds each; all right samples below τ, all wrong ones above.
TEST_CASE("KSD separates a right sample from shifted and scaled ones") {
  const std::size_t n = 1000;
  const int d = 2;
  const double tau = 40.0 * d / n;
  std::vector<double> x, s;
  double worst_right = 0, best_wrong = 1e300;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    sgmcmc::host::Rng rng(seed);
    gaussian_sample(rng, n, d, 0, 1, x, s);
    const double right = sgmcmc::ksd_imq(x.data(), s.data(), n, d, 1.0).v_statistic;
    CHECK(right < tau);
    worst_right = std::max(worst_right, right);
    struct Wrong {
      double mu, sigma;
    };
    const Wrong wrongs[] = {{1, 1}, {0, 2}, {0, 0.5}};
    for (const auto& w : wrongs) {
      gaussian_sample(rng, n, d, w.mu, w.sigma, x, s);
      const double wrong = sgmcmc::ksd_imq(x.data(), s.data(), n, d, 1.0).v_statistic;
      CAPTURE(w.mu);
      CAPTURE(w.sigma);
      CHECK(wrong > tau);
      best_wrong = std::min(best_wrong, wrong);
    }
  }
  MESSAGE("threshold ", tau, ": largest right V ", worst_right, ", smallest wrong V ", best_wrong);
}

TEST_CASE("KSDAccumulator: streaming equals batch, capacity and validity, no heap") {
  const std::size_t cap = 64;
  const int d = 3;
  std::vector<double> xb(cap * d), sb(cap * d);
  sgmcmc::KSDAccumulator<double> acc(xb.data(), sb.data(), cap, d, 1.0);
  REQUIRE(acc.valid());
  CHECK(std::isnan(acc.estimate().v_statistic));
  sgmcmc::host::Rng rng(8);
  std::vector<double> x, s;
  gaussian_sample(rng, cap + 1, d, 0.2, 1.1, x, s);
  long allocations = 0;
  {
    sgmcmc_test::AllocationScope scope;
    for (std::size_t i = 0; i < cap; ++i) REQUIRE(acc.push(&x[i * d], &s[i * d]));
    CHECK_FALSE(acc.push(&x[cap * d], &s[cap * d]));  // full: refused
    const auto batch = sgmcmc::ksd_imq(x.data(), s.data(), cap, d, 1.0);
    const auto stream = acc.estimate();
    CHECK(stream.v_statistic == batch.v_statistic);  // same sums, same order: bit for bit
    CHECK(stream.u_statistic == batch.u_statistic);
    CHECK(stream.n == cap);
    allocations = scope.count();
  }
  CHECK(allocations == 0);
  // Eigen vectors push too; reset forgets.
  acc.reset();
  CHECK(acc.count() == 0);
  const Eigen::Vector3d ex(0.1, 0.2, 0.3), es(-0.1, -0.2, -0.3);
  CHECK(acc.push(ex, es));
  CHECK(acc.estimate().v_statistic ==
        doctest::Approx(ex.squaredNorm() + 3.0).epsilon(1e-15));  // ‖s‖²/c + d/c³
  // Invalid: width ≤ 0 or not finite, no buffers, d = 0; and the batch function's invalid inputs.
  CHECK_FALSE(sgmcmc::KSDAccumulator<double>(xb.data(), sb.data(), cap, d, 0.0).valid());
  CHECK_FALSE(sgmcmc::KSDAccumulator<double>(xb.data(), sb.data(), cap, d,
                                             std::numeric_limits<double>::infinity())
                  .valid());
  CHECK_FALSE(sgmcmc::KSDAccumulator<double>(nullptr, sb.data(), cap, d).valid());
  CHECK_FALSE(sgmcmc::KSDAccumulator<double>(xb.data(), sb.data(), cap, 0).valid());
  sgmcmc::KSDAccumulator<double> bad(xb.data(), sb.data(), cap, d, -1.0);
  CHECK_FALSE(bad.push(&x[0], &s[0]));
  CHECK(bad.count() == 0);
  CHECK(std::isnan(sgmcmc::ksd_imq(x.data(), s.data(), 10, d, -1.0).v_statistic));
  CHECK(std::isnan(sgmcmc::ksd_imq(x.data(), s.data(), 0, d).v_statistic));
  CHECK(std::isnan(sgmcmc::ksd_imq<double, double>(nullptr, s.data(), 10, d).v_statistic));
  CHECK(std::isnan(sgmcmc::ksd_imq(x.data(), s.data(), 10, 0).v_statistic));
}
