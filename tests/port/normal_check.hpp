// SPDX-License-Identifier: MIT
// Statistical checks that a sample is i.i.d. N(0, 1), as bool functions so that negative
// controls can CHECK_FALSE them. Test-only code: it allocates and sorts.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace sgmcmc::test {

// Tolerances, from the Monte Carlo error of each statistic for n i.i.d. N(0, 1) draws.
//
// Raw moments about the known mean 0: m_k = (1/n) sum x_i^k is an average of n i.i.d. terms
// with E x^k = 0, 1, 0, 3 and Var x^k = E x^2k - (E x^k)^2 = 1, 2, 15, 96 for k = 1..4
// (E x^2 = 1, E x^4 = 3, E x^6 = 15, E x^8 = 105). So sd(m_k) = sqrt(Var x^k / n), and we accept
// |m_k - E x^k| <= 6 sd: a two-sided normal tail of 2e-9 per statistic.
//
// Independence at lag L: x_i x_{i+L} has mean 0 and variance 1, and x_i^2 x_{i+L}^2 has mean 1
// and variance E x^4 E x^4 - 1 = 8, when the two are independent. The n - L terms are
// L-dependent but uncorrelated, so sd = sqrt(1 / n) and sqrt(8 / n); we accept 6 sd.
//
// Kolmogorov-Smirnov: by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant,
// P(sup |F_n - Phi| > eps) <= 2 exp(-2 n eps^2) for every n. Setting that to alpha = 1e-6 gives
// eps = sqrt(ln(2 / alpha) / (2 n)) = 2.694 / sqrt(n); for n = 10^6, eps = 2.7e-3.
//
// Tail mass: the count beyond |z| > c is Binomial(n, p) with p = 2 (1 - Phi(c)); we accept
// |count / n - p| <= 6 sqrt(p (1 - p) / n).
inline constexpr double kSigmas = 6.0;
inline constexpr double kKsAlpha = 1e-6;

/// Standard normal CDF.
inline double phi_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

/// Summary of a sample, computed once and judged by the *_ok functions below.
struct NormalSummary {
  double n = 0;
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;  // raw moments
  double ks = 0;                          // sup |F_n - Phi|
};

/// Moments and KS distance of x (x is sorted on return).
inline NormalSummary summarise(std::vector<double>& x) {
  NormalSummary s;
  s.n = static_cast<double>(x.size());
  for (const double v : x) {
    const double v2 = v * v;
    s.m1 += v;
    s.m2 += v2;
    s.m3 += v2 * v;
    s.m4 += v2 * v2;
  }
  s.m1 /= s.n;
  s.m2 /= s.n;
  s.m3 /= s.n;
  s.m4 /= s.n;
  std::sort(x.begin(), x.end());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = phi_cdf(x[i]);
    const double lo = static_cast<double>(i) / s.n;
    const double hi = static_cast<double>(i + 1) / s.n;
    s.ks = std::max(s.ks, std::max(f - lo, hi - f));
  }
  return s;
}

/// First four raw moments within kSigmas Monte Carlo standard deviations of 0, 1, 0, 3.
inline bool moments_ok(const NormalSummary& s) {
  const double k = kSigmas;
  return std::abs(s.m1) <= k * std::sqrt(1.0 / s.n) &&
         std::abs(s.m2 - 1.0) <= k * std::sqrt(2.0 / s.n) &&
         std::abs(s.m3) <= k * std::sqrt(15.0 / s.n) &&
         std::abs(s.m4 - 3.0) <= k * std::sqrt(96.0 / s.n);
}

/// KS distance to Phi below the DKW bound at level kKsAlpha.
inline bool ks_ok(const NormalSummary& s) {
  return s.ks <= std::sqrt(std::log(2.0 / kKsAlpha) / (2.0 * s.n));
}

/// No linear or squared dependence between x_i and x_{i+lag} (x in draw order).
inline bool independent_at_lag(const std::vector<double>& x, std::size_t lag) {
  const std::size_t m = x.size() - lag;
  double p = 0, q = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double a = x[i] * x[i + lag];
    p += a;
    q += a * a;
  }
  const double n = static_cast<double>(m);
  return std::abs(p / n) <= kSigmas * std::sqrt(1.0 / n) &&
         std::abs(q / n - 1.0) <= kSigmas * std::sqrt(8.0 / n);
}

/// Lags that cover neighbours, SIMD lanes and Box-Muller partners of the host fill.
inline bool independent(const std::vector<double>& x) {
  for (const std::size_t lag : {1, 2, 8, 16, 32}) {
    if (!independent_at_lag(x, lag)) return false;
  }
  return true;
}

/// The full check: moments, KS and independence (x in draw order; copied for sorting).
inline bool looks_standard_normal(const std::vector<double>& x) {
  if (!independent(x)) return false;
  std::vector<double> sorted = x;
  const NormalSummary s = summarise(sorted);
  return moments_ok(s) && ks_ok(s);
}

/// Fraction of |x| > c within kSigmas binomial standard deviations of 2 (1 - Phi(c)).
inline bool tail_ok(const std::vector<double>& x, double c) {
  std::size_t count = 0;
  for (const double v : x) count += std::abs(v) > c ? 1 : 0;
  const double n = static_cast<double>(x.size());
  const double p = std::erfc(c / std::sqrt(2.0));
  return std::abs(static_cast<double>(count) / n - p) <= kSigmas * std::sqrt(p * (1 - p) / n);
}

}  // namespace sgmcmc::test
